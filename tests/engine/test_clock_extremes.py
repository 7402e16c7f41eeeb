"""max() and min() of times of day: "the latest time the day's high was made in 2024".

They were refused ("max() needs a number or a date for col, got text: t") while first(t)
and last(t) worked. They now take time()'s 'HH:MM' (its column, or a first stage's column
of it) in the session's order: over ETH, whose trading day opens at 18:00, an 18:05 high
is the earliest of the day and 16:59 the latest, where the text order would call 00:30 the
earliest and 23:59 the latest.

Expected values from pandas over the hand-made minute bars (conftest): each trading date
runs 18:00-17:00, its high taken at its first minute.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from barb import execute

OPEN = 18 * 60  # ETH's trading day opens at 18:00
RTH_OPEN, RTH_CLOSE = 9 * 60 + 30, 17 * 60


def clock(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


@pytest.fixture(scope="module")
def high_times(minutes: pd.DataFrame) -> pd.DataFrame:
    """Each trading date's month and the minute of the day of its (first) ETH high."""
    stamps = minutes["timestamp"]
    minute = (stamps.dt.hour * 60 + stamps.dt.minute).to_numpy()
    dates = stamps.dt.normalize() + pd.to_timedelta((minute >= OPEN).astype(int), unit="D")
    frame = minutes.assign(minute=minute, tdate=dates)
    first_high = frame.loc[frame.groupby("tdate")["high"].idxmax()]
    return pd.DataFrame(
        {"month": first_high["tdate"].dt.month.to_numpy(), "minute": first_high["minute"]}
    )


def session_extremes(minutes_of_day: pd.Series) -> tuple[str, str]:
    """The earliest and latest of minutes of the day, in ETH's order from its 18:00 open."""
    since_open = (minutes_of_day - OPEN) % 1440
    return clock(minutes_of_day[since_open.idxmin()]), clock(minutes_of_day[since_open.idxmax()])


def test_latest_and_earliest_high_times_by_month_read_the_session_order(
    engine_settings, high_times
) -> None:
    query = {
        "session": "ETH",
        "from": "1m",
        "group_by": ["month()", "date()"],
        "select": "arg_max(time(), high) as t",
        "then": {"group_by": "month", "select": ["min(t) as earliest", "max(t) as latest"]},
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    expected = {m: session_extremes(g["minute"]) for m, g in high_times.groupby("month")}
    got = {
        int(row.month): (row.earliest, row.latest) for row in result.table.itertuples(index=False)
    }
    assert got == expected
    # The data holds both orders' disagreement: a high after midnight and one before it.
    assert (high_times["minute"] >= OPEN).any() and (high_times["minute"] < 12 * 60).any()
    text_order = {
        m: (clock(g["minute"].min()), clock(g["minute"].max()))
        for m, g in high_times.groupby("month")
    }
    assert got != text_order


def test_max_and_min_of_time_over_all_rows(engine_settings, high_times) -> None:
    """Ungrouped, in a first stage's select and in a second stage's map (over all rows)."""
    earliest, latest = session_extremes(high_times["minute"])
    days = {
        "session": "ETH",
        "from": "1m",
        "group_by": "date()",
        "select": "arg_max(time(), high) as t",
    }
    result = execute(
        {**days, "then": {"select": ["min(t) as earliest", "max(t) as latest"]}},
        "NQ",
        settings=engine_settings,
    )
    assert result.ok, result.to_dict()
    assert result.summary.values == {"earliest": earliest, "latest": latest}
    on_the_latest = execute(
        {**days, "then": {"map": {"latest": "max(t)"}, "where": "t == latest"}},
        "NQ",
        settings=engine_settings,
    )
    assert set(on_the_latest.table["t"].astype(str)) == {latest}
    assert (
        len(on_the_latest.table)
        == (high_times["minute"] == int(latest[:2]) * 60 + int(latest[3:])).sum()
    )
    bars = execute(
        {"session": "ETH", "from": "1m", "select": ["min(time()) as a", "max(time()) as b"]},
        "NQ",
        settings=engine_settings,
    )
    assert bars.summary.values == {"a": "18:00", "b": "16:59"}


def test_a_session_inside_one_day_keeps_the_clock_order(engine_settings, minutes) -> None:
    stamps = minutes["timestamp"]
    minute = pd.Series((stamps.dt.hour * 60 + stamps.dt.minute).to_numpy())
    rth = minutes[((minute >= RTH_OPEN) & (minute < RTH_CLOSE)).to_numpy()]
    lows = rth.loc[rth.groupby(rth["timestamp"].dt.date)["low"].idxmin(), "timestamp"]
    low_minute = lows.dt.hour * 60 + lows.dt.minute
    query = {
        "session": "RTH",
        "from": "1m",
        "group_by": "date()",
        "select": "arg_min(time(), low) as t",
        "then": {"select": ["min(t) as earliest", "max(t) as latest"]},
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    assert result.summary.values == {
        "earliest": clock(int(np.min(low_minute))),
        "latest": clock(int(np.max(low_minute))),
    }
