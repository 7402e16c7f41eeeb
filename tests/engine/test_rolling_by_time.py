"""rolling_mean(volume, n, 'time'): the n rows at a bar's own time of day, one a trading date
("relative volume": a 10:00 bar against the last n days at 10:00, where the plain window at
the open held yesterday's quiet last bars). Checked against pandas over RTH 5m bars built
here from the minute file, with the windows reaching back before the period."""

from __future__ import annotations

import numpy as np
import pandas as pd
from rth_bars import RTH_START, rth_minutes

from barb import execute


def _rth_5m(minutes: pd.DataFrame) -> pd.DataFrame:
    rth = rth_minutes(minutes)
    stamps = rth["timestamp"]
    rth["slot"] = (stamps.dt.hour * 60 + stamps.dt.minute - RTH_START) // 5
    bars = rth.groupby(["day", "slot"]).agg(volume=("volume", "sum"), high=("high", "max"))
    return bars.reset_index()


def test_a_window_over_the_same_time_of_day(engine_settings, minutes) -> None:
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024-03",
        "map": {
            "avg": "rolling_mean(volume, 5, 'time')",
            "top": "rolling_max(high, 3, 'time')",
            "rvol": "volume / avg",
        },
        "select": ["timestamp", "avg", "top", "rvol"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    bars = _rth_5m(minutes)
    per_slot = bars.groupby("slot")
    bars["avg"] = per_slot["volume"].transform(lambda v: v.rolling(5, min_periods=5).mean())
    bars["top"] = per_slot["high"].transform(lambda v: v.rolling(3, min_periods=3).max())
    march = bars[bars["day"].dt.month == 3].reset_index(drop=True)
    assert len(result.table) == len(march)
    # The period's first days read February's bars at the same time: nothing is missing.
    assert not march["avg"].isna().any()
    np.testing.assert_allclose(result.table["avg"], march["avg"])
    np.testing.assert_allclose(result.table["top"], march["top"])
    np.testing.assert_allclose(result.table["rvol"], march["volume"] / march["avg"])
    # It reads earlier dates at the same time by design: no warning that it crosses days.
    assert not [w for w in result.metadata.warnings if "earlier trading date" in w]


def test_time_is_the_only_grouping_it_takes(engine_settings) -> None:
    result = execute(
        {"session": "RTH", "from": "5m", "map": {"x": "rolling_mean(volume, 5, 'day')"}},
        "NQ",
        settings=engine_settings,
    )
    assert not result.ok and "time" in result.error.message
