"""A window session's short last bar, and a window on London's clock grouped by New York's.

'09:45-12:00' on hourly bars ends in 11:45-12:00, a quarter of an hour: grouped by time(),
its 12.04 read as "the quietest hour" beside 30.84 at 09:45 with nothing said, though
named sessions had the warning (p47e M1). '08:00-16:30 London' ends in a half hour there,
and grouped by ET time() its bars land in other ET groups in the weeks the US and the UK
change their clocks apart. Bars are read from the hand-made minute bars with pandas (each
minute's bucket from the window's open), never from the engine's sessions."""

from __future__ import annotations

import pandas as pd
import pytest

from barb import execute
from barb.charts.short_bars import short_bar
from barb.instruments import format_clock

LENGTHS = {15: "15 minutes", 30: "half an hour", 60: "an hour"}


def clock(minute: int) -> str:
    return f"{minute // 60 % 24:02d}:{minute % 60:02d}"


def window_bars(minutes: pd.DataFrame, start: int, end: int, step: int, zone=None):
    """Each minute of the window (on ``zone``'s clock, else New York's) with the start of
    its bar there, its trading date (the calendar date: these windows lie before 17:00) and
    its ET minute of the day."""
    stamps = pd.DatetimeIndex(minutes["timestamp"])
    there = stamps if zone is None else stamps.tz_localize("America/New_York").tz_convert(zone)
    minute = pd.Series(there.hour * 60 + there.minute, index=minutes.index)
    inside = (minute >= start) & (minute < end)
    frame = minutes.loc[inside, ["timestamp", "high", "low"]].copy()
    frame["there"] = minute[inside]
    frame["bucket"] = start + (frame["there"] - start) // step * step
    frame["date"] = stamps[inside.to_numpy()].normalize()
    frame["et"] = stamps[inside.to_numpy()].hour * 60 + stamps[inside.to_numpy()].minute
    return frame


def warnings_with(result, words: str) -> list[str]:
    assert result.ok, result.to_dict()
    return [w for w in result.metadata.warnings if words in w]


def test_a_windows_short_last_bar_is_said_in_groups_by_time(engine_settings, minutes) -> None:
    frame = window_bars(minutes, 585, 720, 60)  # 09:45-12:00
    held = frame.groupby(["date", "bucket"])["there"].count().groupby("bucket").max()
    assert held.to_dict() == {585: 60, 645: 60, 705: 15}
    query = {
        "session": "09:45-12:00",
        "from": "1h",
        "period": "2024",
        "group_by": "time()",
        "select": ["mean(range) as rng", "count()"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    bars = frame.groupby(["date", "bucket"]).agg(high=("high", "max"), low=("low", "min"))
    ranges = (bars["high"] - bars["low"]).groupby("bucket").mean()
    assert ranges.idxmin() == 705  # the short bar's, lowest: the full-length lowest named
    full = ranges.drop(705)
    assert warnings_with(result, " bar is ") == [
        "The 11:45 bar is 15 minutes (11:45-12:00), the others an hour: its sums, counts and "
        "ranges are not comparable with theirs. Its rng is the lowest: the lowest full-length "
        f"one is {format_clock(int(full.idxmin()))} ({full.min():.4g})."
    ]
    table = result.table.set_index("time")["rng"]
    assert table["11:45"] == pytest.approx(ranges[705])
    # The chart marks the same group: 11:45 (15 min).
    found = short_bar(result, result.table, ["time"])
    assert found is not None and result.table["time"].iloc[found.at] == "11:45"
    assert (found.minutes, found.end) == (15, "12:00")


def test_a_windows_short_last_bar_among_listed_bars_is_said(engine_settings, minutes) -> None:
    """The pit session 09:30-16:15 on 30m bars: its 16:00 bar is 16:00-16:15."""
    frame = window_bars(minutes, 570, 975, 30)
    day = frame[frame["date"] == pd.Timestamp("2024-02-06")]
    held = day.groupby("bucket")["there"].count()
    assert held[960] == 15 and (held.drop(960) == 30).all()
    query = {"session": "09:30-16:15", "from": "30m", "period": "2024-02-06"}
    result = execute(query, "NQ", settings=engine_settings)
    assert warnings_with(result, " bar is ") == [
        "The 16:00 bar is 15 minutes (16:00-16:15), the others half an hour: its range, volume "
        "and move cover 15 minutes, not 30. The session's last half an hour, 15:45-16:15: "
        '"from": "daily", "session": "15:45-16:15".'
    ]


def test_whole_bars_of_a_window_say_nothing(engine_settings) -> None:
    query = {"session": "10:00-12:00", "from": "1h", "period": "2024", "group_by": "time()"}
    result = execute({**query, "select": "count()"}, "NQ", settings=engine_settings)
    assert warnings_with(result, " bar is ") == []


def test_a_london_window_grouped_by_its_own_clock_says_its_short_bar(
    engine_settings, minutes
) -> None:
    frame = window_bars(minutes, 480, 990, 60, zone="Europe/London")
    held = frame.groupby(["date", "bucket"])["there"].count().groupby("bucket").max()
    assert held[960] == 30 and (held.drop(960) == 60).all()
    query = {
        "session": "08:00-16:30 London",
        "from": "1h",
        "period": "2024",
        "group_by": "time('London')",
        "select": "count()",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert warnings_with(result, " bar is ") == [
        "The 16:00 bar is half an hour (16:00-16:30 Europe/London), the others an hour: its "
        "sums, counts and ranges are not comparable with theirs."
    ]


def test_a_london_window_grouped_by_et_time_says_the_weeks_its_bars_move(
    engine_settings, minutes
) -> None:
    """The US changed clocks on 2024-03-10, the UK on 03-31: from 03-11 London is ET + 4 h,
    so its 08:00 bar opens at 04:00 ET, in the group of the other weeks' 09:00 bar."""
    frame = window_bars(minutes, 480, 990, 60, zone="Europe/London")
    bars = frame.groupby(["date", "bucket"])["et"].min().reset_index()
    bars["key"] = bars["et"].map(clock)
    shift = (bars["bucket"] - bars["et"]).groupby(bars["date"]).first()
    offsets = shift.value_counts()
    assert offsets.index.tolist() == [300, 240]
    per = bars.groupby(["key", "bucket"])["date"].nunique()
    mixed = per.loc["04:00"].sort_values(ascending=False)
    alone = per.loc["12:00"]
    assert list(alone.index) == [960]
    query = {
        "session": "08:00-16:30 London",
        "from": "1h",
        "period": "2024",
        "group_by": "time()",
        "select": "count()",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert warnings_with(result, "lays the bars") == [
        f"'08:00-16:30 Europe/London' lays the bars on London's clock, ET + 5 h on "
        f"{offsets[300]} of the {len(shift)} dates and ET + 4 h on the other {offsets[240]}, "
        f"so time()'s groups mix its bars: '04:00' is its {clock(mixed.index[0])} bar on "
        f"{mixed.iloc[0]} dates and its {clock(mixed.index[1])} bar on {mixed.iloc[1]}; "
        f"'12:00' holds its 16:00 bar (half an hour) on {alone.iloc[0]} dates only. \"group_by\": "
        "\"time('London')\" names each bar by its start on the window's clock."
    ]
    counts = result.table.set_index("time")["count"]
    assert counts["12:00"] == alone.iloc[0]


def test_a_london_window_in_one_offset_says_nothing_of_moving_bars(engine_settings) -> None:
    query = {
        "session": "08:00-16:30 London",
        "from": "1h",
        "period": "2024-01",
        "group_by": "time()",
        "select": "count()",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert warnings_with(result, "lays the bars") == []
