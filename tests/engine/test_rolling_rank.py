"""rolling_rank(col, n) through a query: each day's range against the n days before it,
history before the period included, checked with a loop over daily bars built here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from barb import execute


def daily_ranges(minutes: pd.DataFrame) -> pd.Series:
    day = minutes["timestamp"].dt.normalize()
    bars = minutes.groupby(day).agg(high=("high", "max"), low=("low", "min"))
    return bars["high"] - bars["low"]


def trailing_rank(values: np.ndarray, n: int) -> np.ndarray:
    out = np.full(len(values), np.nan)
    for i in range(n - 1, len(values)):
        window = values[i - n + 1 : i + 1]
        out[i] = 100 * np.count_nonzero(window <= values[i]) / n
    return out


def test_rolling_rank_in_a_period_reads_the_days_before_it(year_settings, year_minutes) -> None:
    result = execute(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2023-03",
            "map": {"rr": "rolling_rank(range, 40)"},
            "select": ["rr"],
        },
        "NQ",
        settings=year_settings,
    )
    assert result.ok, result.to_dict()
    ranges = daily_ranges(year_minutes)
    expected = pd.Series(trailing_rank(ranges.to_numpy(), 40), index=ranges.index)
    march = expected[expected.index.strftime("%Y-%m") == "2023-03"]
    assert list(result.table["date"]) == list(march.index.strftime("%Y-%m-%d"))
    assert not march.isna().any()  # 40 days back reach into January
    assert result.table["rr"].tolist() == pytest.approx(march.tolist())


def test_rolling_rank_counts_the_low_days_of_a_trailing_window(year_settings, year_minutes):
    """ "Days whose range is in the lowest 10% of the 60 days before": a count, not a rank
    over the whole period (which would read later days)."""
    result = execute(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2023-06:2023-12",
            "where": "rolling_rank(range, 60) <= 10",
            "select": "count()",
        },
        "NQ",
        settings=year_settings,
    )
    assert result.ok, result.to_dict()
    ranges = daily_ranges(year_minutes)
    ranks = pd.Series(trailing_rank(ranges.to_numpy(), 60), index=ranges.index)
    expected = int((ranks[ranges.index >= "2023-06-01"] <= 10).sum())
    assert expected > 0
    assert result.summary.value == expected
