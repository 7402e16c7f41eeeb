"""A then stage's statistic in points over trades whose price level changed a lot (p48j
q01: NQ's gap-down longs, 2008-2026, expectancy 2.87 points pooled over a 13x rise, 2025's
trades alone 24.39) is said to blend price levels, as the first stage's is, with its value
over the rows' last 12 months. Hand-made bars: five RTH minutes a weekday over 2023-2024,
the price rising from 500 to 5,000; expected values from pandas over the same bars."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from small_bars import bars_from_closes, write_minutes

from barb.settings import EngineSettings

SAID = "blends price levels"


def _minutes(seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.bdate_range("2023-01-02", "2024-12-31")
    stamps = [pd.date_range(day + pd.Timedelta("09:30:00"), periods=5, freq="1min") for day in days]
    ts = stamps[0].append(stamps[1:])
    level = np.linspace(500, 5000, len(ts))
    noise = np.cumsum(rng.choice([-1.0, 1.0], len(ts))) * 2
    close = np.round((level + noise) * 4) / 4
    return bars_from_closes(ts, close, rng.integers(1, 100, len(ts)))


@pytest.fixture(scope="module")
def bars() -> pd.DataFrame:
    return _minutes()


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, bars: pd.DataFrame) -> EngineSettings:
    data_dir: Path = tmp_path_factory.mktemp("then_levels")
    settings = EngineSettings(data_dir=data_dir)
    write_minutes(bars, "NQ", settings, "five minutes a day, rising 10x")
    return settings


def test_a_then_stage_mean_in_points_over_a_rising_price_is_said(settings, bars) -> None:
    days = bars.assign(day=bars["timestamp"].dt.normalize()).groupby("day")
    daily = pd.DataFrame({"open": days["open"].first(), "close": days["close"].last()})
    pnl = daily["close"] - daily["open"]
    recent = pnl[pnl.index > daily.index[-1] - pd.Timedelta(days=365)]
    yearly = daily["close"].groupby(daily.index.year).mean()
    assert yearly.max() / yearly.min() >= 2  # the case
    query = {
        "map": {"pnl": "close - open"},
        "select": ["date()", "pnl"],
        "then": {
            "map": {"equity": "cumsum(pnl)"},
            "select": ["count(pnl) as trades", "mean(pnl) as exp", "last(equity) as total"],
        },
    }
    result = ask(query, settings, **RTH_DAILY)
    assert result.summary.values["exp"] == pytest.approx(pnl.mean())
    said = warnings_with(result, SAID)
    assert len(said) == 1
    assert said[0].startswith(
        f"exp is in points over days whose price level changed "
        f"{yearly.max() / yearly.min():.1f}x (mean close {yearly.min():,.0f} in 2023, "
        f"{yearly.max():,.0f} in 2024)"
    )
    first, last = recent.index[0], recent.index[-1]
    assert (
        f"over the rows' last 12 months ({first:%Y-%m-%d} — {last:%Y-%m-%d}) exp is "
        f"{recent.mean():,.2f}." in said[0]
    )
    # A percent the first stage selects: nothing to blend.
    query["map"] = {"pnl": "(close - open) / open * 100"}
    assert warnings_with(ask(query, settings, **RTH_DAILY), SAID) == []
