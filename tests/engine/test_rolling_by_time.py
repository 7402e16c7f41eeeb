"""rolling_mean(volume, n, 'time'): the n rows at a bar's own time of day, one a trading date
("relative volume": a 10:00 bar against the last n days at 10:00, where the plain window at
the open held yesterday's quiet last bars). Checked against pandas over RTH 5m bars built
here from the minute file, with the windows reaching back before the period."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from rth_bars import RTH_START, rth_minutes

from barb import execute
from barb.script.library import library


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


def test_prev_inside_a_time_of_day_window_is_said_with_the_form_leaving_today_out(
    engine_settings, minutes
) -> None:
    """rolling_mean(prev(volume), 5, 'time') for "the same time on the 5 days before": it is
    the mean of each bar's previous bar (09:30's: the day before's 16:55), today's included,
    as pandas computes it. The warning names the form that leaves today out, which equals
    pandas' mean of the 5 days before at the same time, and is then silent."""
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024-02",
        "map": {"avg": "rolling_mean(prev(volume), 5, 'time')"},
        "select": ["timestamp", "volume", "avg"],
    }
    bars = _rth_5m(minutes)
    per_slot = bars.groupby("slot")
    bars["prev_avg"] = (
        bars["volume"].shift().groupby(bars["slot"]).transform(lambda v: v.rolling(5).mean())
    )
    bars["before_avg"] = per_slot["volume"].transform(lambda v: v.shift().rolling(5).mean())
    february = bars[bars["day"].dt.month == 2].reset_index(drop=True)

    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    np.testing.assert_allclose(result.table["avg"], february["prev_avg"])
    assert result.metadata.warnings == [
        "rolling_mean(prev(volume), 5, 'time') is over the last 5 days at this time of day, "
        "today's included, of prev(volume): the bar before (at 09:35 the 09:30 bar, at 09:30 "
        "the day before's last), not this time on the days before. The mean of volume at "
        "this time on the 5 days before today: (rolling_sum(volume, 6, 'time') - volume) / 5."
    ]

    told = {**query, "map": {"avg": "(rolling_sum(volume, 6, 'time') - volume) / 5"}}
    fixed = execute(told, "NQ", settings=engine_settings)
    assert fixed.ok, fixed.to_dict()
    assert not february["before_avg"].isna().any()
    np.testing.assert_allclose(fixed.table["avg"], february["before_avg"])
    assert fixed.metadata.warnings == []


@pytest.mark.parametrize(
    ("mapped", "advice"),
    [
        # Through a map name: the form is still written with volume.
        (
            {"pv": "prev(volume)", "avg": "rolling_sum(pv, 5, 'time')"},
            "The sum of volume at this time on the 5 days before today: "
            "rolling_sum(volume, 6, 'time') - volume.",
        ),
        # No sum to take today out of: daily bars of the bar's window.
        (
            {"avg": "rolling_max(prev(volume), 5, 'time')"},
            'use daily bars of that bar\'s window ("session": "09:30-09:35", "from": "daily")',
        ),
        (
            {"avg": "rolling_mean(prev(volume, 2), 5, 'time')"},
            'use daily bars of that bar\'s window ("session": "09:30-09:35", "from": "daily")',
        ),
    ],
)
def test_the_advice_fits_the_window(engine_settings, mapped, advice) -> None:
    query = {"session": "RTH", "from": "5m", "period": "2024-02", "map": mapped}
    result = execute({**query, "select": "mean(avg)"}, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    [said] = result.metadata.warnings
    assert "the bar before (at 09:35 the 09:30 bar" in said and advice in said


def test_prev_of_a_time_of_day_window_is_the_previous_bars_window(engine_settings, minutes) -> None:
    """prev(rolling_mean(volume, 5, 'time')) for "against the 5 days before at this time"
    (p28d F2) is the previous bar's window, as pandas computes it: the 09:35 bar reads the
    09:30 window, 09:30 the day before's last. Said once (not also as a window reaching the
    day before), with the form that leaves today out."""
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024-02",
        "map": {"avg": "prev(rolling_mean(volume, 5, 'time'))"},
        "select": ["timestamp", "volume", "avg"],
    }
    bars = _rth_5m(minutes)
    window = bars.groupby("slot")["volume"].transform(lambda v: v.rolling(5).mean())
    bars["lagged"] = window.shift()
    february = bars[bars["day"].dt.month == 2].reset_index(drop=True)
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    np.testing.assert_allclose(result.table["avg"], february["lagged"])
    assert result.metadata.warnings == [
        "prev(rolling_mean(volume, 5, 'time')) is the previous bar's rolling_mean(volume, 5, "
        "'time') (at 09:35 the 09:30 bar's, at 09:30 the day before's last), not this time's "
        "on the days before. The mean of volume at this time on the 5 days before today: "
        "(rolling_sum(volume, 6, 'time') - volume) / 5."
    ]


@pytest.mark.parametrize(
    ("timeframe", "call", "plain"),
    [
        ("daily", "rolling_mean(volume, 5, 'time')", "rolling_mean(volume, 5)"),
        ("weekly", "rolling_max(high, 2, 'TIME')", "rolling_max(high, 2)"),
    ],
)
def test_a_time_of_day_window_on_bars_without_one_is_an_error(
    engine_settings, timeframe, call, plain
) -> None:
    """Daily and longer bars have one time each, midnight: by='time' on them ran as the plain
    window, said nowhere, for a question about a time of day."""
    query = {"session": "RTH", "from": timeframe, "map": {"avg": call}, "select": "mean(avg)"}
    result = execute(query, "NQ", settings=engine_settings)
    assert not result.ok
    said = result.to_dict()
    assert said["error_type"] == "ArgumentError" and said["step"] == "map"
    assert said["message"] == (
        f"{call} compares bars at the same time of day, and {timeframe} bars have one time "
        f"each (midnight), so it is the plain window {plain}."
    )
    assert said["hint"].startswith(f"On {timeframe} bars write {plain};")
    assert '"from": "5m"' in said["hint"]


def test_the_plain_window_it_names_is_the_daily_mean(engine_settings, minutes) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024-03",
        "map": {"avg": "rolling_mean(volume, 5)"},
        "select": ["avg"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    daily = rth_minutes(minutes).groupby("day")["volume"].sum()
    expected = daily.rolling(5).mean()
    np.testing.assert_allclose(result.table["avg"], expected[expected.index.month == 3])


def test_the_references_relative_volume_is_against_the_days_before(
    engine_settings, minutes
) -> None:
    """The reference called rolling_mean(volume, n, 'time') relative volume, and its window
    holds today's bar: NQ's 09:45 of 2026-01-07 read 1.008 where the 20 days before give 0.974
    (p35a C). The form it now gives, run as written, is each bar's volume over the mean of the
    20 days before at its time, as pandas computes it."""
    summary = library()["rolling_mean"].summary
    assert "today's too" in summary
    form = re.search(r"relative volume: (.+)\.$", summary)
    assert form is not None, summary
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024-03",
        "map": {"rvol": form.group(1)},
        "select": ["timestamp", "rvol"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    bars = _rth_5m(minutes)
    before = bars.groupby("slot")["volume"].transform(lambda v: v.shift().rolling(20).mean())
    march = (bars["volume"] / before)[bars["day"].dt.month == 3].to_numpy()
    assert not np.isnan(march).any()
    np.testing.assert_allclose(result.table["rvol"], march)
    with_today = execute(
        {**query, "map": {"rvol": "volume / rolling_mean(volume, 20, 'time')"}},
        "NQ",
        settings=engine_settings,
    )
    assert not np.allclose(with_today.table["rvol"], march)  # the case: today moves it
