"""CL's prices are cents: a question's thresholds in cents count the days a trader counts.

The independent side works in integer cents from the raw minute bars, where 67.26 - 67.46
is exactly -20 and no binary fraction can put a day on the wrong side of "at least 20 cents".
"""

from __future__ import annotations

import pandas as pd
import pytest

from barb.data.store import data_path
from barb.interpreter import execute

CL_RTH = (540, 870)  # 09:00-14:30, CL's RTH (the pit session)


def _cl_days_in_cents(settings) -> pd.DataFrame:
    bars = pd.read_parquet(data_path("CL", settings))
    rth = bars[(bars["minute"] >= CL_RTH[0]) & (bars["minute"] < CL_RTH[1])]
    day = rth.groupby("trading_date").agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )
    return (day * 100).round().astype("int64")


@pytest.mark.slow
def test_gaps_and_ranges_in_cents_count_every_day_on_the_line(sample_settings) -> None:
    cents = _cl_days_in_cents(sample_settings)
    gap = cents["open"] - cents["close"].shift()
    in_2025 = cents.index.year == 2025
    wide_gaps = int((gap[in_2025].abs() >= 20).sum())
    on_the_line = int((gap[in_2025].abs() == 20).sum())
    wide_days = int(((cents["high"] - cents["low"]) >= 150).sum())
    assert on_the_line > 0  # the days that float arithmetic put below 20 cents

    result = execute(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2025",
            "map": {"gap": "open - prev(close)"},
            "where": "abs(gap) >= 0.20",
            "select": ["count() as days", "count(abs(gap) == 0.2) as exactly_20"],
        },
        "CL",
        settings=sample_settings,
    )
    assert result.ok, result.to_dict()
    assert result.summary.values["days"] == wide_gaps
    assert result.summary.values["exactly_20"] == on_the_line

    ranges = execute(
        {"session": "RTH", "from": "daily", "select": "count(range >= 1.5) as wide"},
        "CL",
        settings=sample_settings,
    )
    assert ranges.ok, ranges.to_dict()
    assert ranges.summary.value == wide_days
