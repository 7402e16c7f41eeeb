"""Intraday bars left out of every group because their key has no value, said as the days
they are (p43b Q22): "after a red day, does the high or the low come first" grouped 1m bars
by the previous day's colour; the data's first day has none, and "450 rows with no value for
prev_day (n/a) left out", in an answer about days, read as 450 days. It is one day's bars:
"The 450 bars of 2008-01-02 (the data's first day)".

Expected values from pandas over the hand-made minute bars (conftest): trading dates start at
18:00, RTH is 09:30-17:00.
"""

from __future__ import annotations

import pandas as pd
import pytest

from barb import execute

RTH_OPEN, RTH_CLOSE, ETH_OPEN = 9 * 60 + 30, 17 * 60, 18 * 60


@pytest.fixture(scope="module")
def rth(minutes: pd.DataFrame) -> pd.DataFrame:
    """The RTH minute bars with their trading dates."""
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    dates = stamps.dt.normalize() + pd.to_timedelta((minute >= ETH_OPEN).astype(int), unit="D")
    frame = minutes.assign(tdate=dates)
    return frame[(minute >= RTH_OPEN) & (minute < RTH_CLOSE)].reset_index(drop=True)


def keyless(result) -> list[str]:
    assert result.ok, result.to_dict()
    return [w for w in result.metadata.warnings if "no value" in w]


def test_the_first_day_s_bars_without_a_previous_day_are_said_as_that_day(
    engine_settings, rth
) -> None:
    query = {
        "session": "RTH",
        "from": "1m",
        "map": {"prev_day": "if(session_close('RTH', 1) < session_open('RTH', 1), 'red', 'green')"},
        "group_by": ["date()", "prev_day"],
        "select": "count() as bars",
        "then": {"group_by": "prev_day", "select": "count() as days"},
    }
    result = execute(query, "NQ", settings=engine_settings)
    first = rth["tdate"].min()
    on_first = int((rth["tdate"] == first).sum())
    assert sum(result.table["days"]) == rth["tdate"].nunique() - 1
    assert keyless(result) == [
        f"The {on_first:,} bars of {first:%Y-%m-%d} (the data's first day) have no value for "
        "prev_day (n/a) and are left out: they are in no group."
    ]


def test_bars_that_are_not_whole_days_stay_rows(engine_settings, rth) -> None:
    """prev(close) has no value on the data's first bar only: one row, not a day."""
    query = {
        "session": "RTH",
        "from": "1m",
        "map": {"dir": "if(close > prev(close), 'up', 'down')"},
        "group_by": "dir",
        "select": "count()",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert sum(result.table["count"]) == len(rth) - 1
    assert keyless(result) == ["1 row with no value for dir (n/a) left out: they are in no group."]


def test_daily_bars_left_out_are_named_by_their_dates(engine_settings, rth) -> None:
    """On daily bars "1 row with no value for up (n/a) left out" named no date, where the
    intraday form names the day (p43f C3). The days pandas finds without a key are named,
    up to 3, with how many more."""
    days = rth.groupby("tdate")["close"].last()
    base = {"session": "RTH", "from": "daily", "select": "count()"}
    up = base | {"map": {"up": "prev(close) < close"}, "group_by": "up"}
    result = execute(up, "NQ", settings=engine_settings)
    assert int(sum(result.table["count"])) == len(days) - 1
    assert keyless(result) == [
        f"The day {days.index[0]:%Y-%m-%d} (the data's first day) has no value for up (n/a) "
        "and is left out: it is in no group."
    ]
    n = 6
    averaged = days.rolling(n).mean()
    empty = averaged.index[averaged.isna()]
    assert len(empty) == n - 1  # the case: more days than are named
    above = base | {"map": {"above": f"close > rolling_mean(close, {n})"}, "group_by": "above"}
    result = execute(above, "NQ", settings=engine_settings)
    assert int(sum(result.table["count"])) == len(days) - len(empty)
    named = ", ".join(f"{day:%Y-%m-%d}" for day in empty[1:3])
    assert keyless(result) == [
        f"{len(empty)} days, {empty[0]:%Y-%m-%d} (the data's first day), {named} and "
        f"{len(empty) - 3} more, have no value for above (n/a) and are left out: they are in "
        "no group."
    ]
