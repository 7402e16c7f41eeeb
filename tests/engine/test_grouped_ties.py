"""A grouped arg_max is each group's earliest row at the extreme: the groups where other
rows (with another value of arg) tie with it are counted and the first few named (p32c:
"which day made the week's high" read Wed of a week whose Fri made the same high; counting
the hour of each day's high gave 122 of 4,649 days to the earlier of two hours, silently).
Expected ties are found with pandas over the fixture's RTH minutes (rth_bars)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from rth_bars import RTH_START, rth_minutes

from barb import execute


def _tied(
    minutes: pd.DataFrame, slot_minutes: int, label, step: float | None = None
) -> tuple[pd.Series, int]:
    """Per day, the labels of the RTH bars (``slot_minutes`` long, from the open) whose high
    (or floor(high / ``step``)) is the day's, in time order: only days where two labels or
    more reach it; and the number of days."""
    rth = rth_minutes(minutes)
    minute = rth["timestamp"].dt.hour * 60 + rth["timestamp"].dt.minute
    rth["start"] = RTH_START + (minute - RTH_START) // slot_minutes * slot_minutes
    bars = rth.groupby(["day", "start"], as_index=False)["high"].max()
    if step is not None:
        bars["high"] = np.floor(bars["high"] / step)
    top = bars[bars["high"] == bars.groupby("day")["high"].transform("max")].copy()
    top["label"] = [label(start) for start in top["start"]]
    labels = top.groupby("day")["label"].agg(lambda s: list(dict.fromkeys(s)))
    return labels[labels.map(len) > 1], rth["day"].nunique()


def _named(tied: pd.Series) -> str:
    """The tied days as the warning names them: every one, with up to five other labels,
    when there are 20 or fewer (p40e Q09: 9 tied years of 19, 3 named, left the model unable
    to say which months); else the first three, with two, and how many more."""
    every = len(tied) <= 20
    limit = 5 if every else 2
    named = "; ".join(
        f"{day:%Y-%m-%d}: {labels[0]}, also {', '.join(labels[1 : limit + 1])}"
        + (f" and {len(labels) - 1 - limit} more" if len(labels) > limit + 1 else "")
        for day, labels in (tied if every else tied.iloc[:3]).items()
    )
    return named if every else f"{named}; and {len(tied) - 3:,} more"


def _clock(start: int) -> str:
    return f"{start // 60:02d}:{start % 60:02d}"


def _ties_said(result) -> list[str]:
    assert result.ok, result.to_dict()
    return [w for w in result.metadata.warnings if re.search(r" ties? for the |rows share", w)]


@pytest.mark.parametrize(
    ("timeframe", "slot", "step"), [("1h", 60, None), ("1m", 1, None), ("1m", 1, 4.0)]
)
def test_the_days_whose_high_two_bars_made_are_counted_and_named(
    timeframe: str, slot: int, step: float | None, engine_settings, minutes
) -> None:
    """The hour (minute) of each day's high, counted per hour by a second stage: the days
    two bars share the high are counted and named with the other bars (with ``step``, the
    high in steps of 4 points, which more days tie in than the warning names)."""
    tied, days = _tied(minutes, slot, _clock, step)
    assert len(tied) <= 20 if step is None else len(tied) > 20  # both ways of naming
    level = "high" if step is None else "level"
    query = {
        "session": "RTH",
        "from": timeframe,
        "map": {"level": "high" if step is None else f"floor(high / {step})"},
        "group_by": "date()",
        "select": f"arg_max(time(), {level}) as high_time",
        "then": {"group_by": "high_time", "select": "count() as days"},
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert _ties_said(result) == [
        f"In {len(tied)} of {days} date groups ({len(tied) / days:.1%}), two or more rows tie "
        f"for the largest {level}: arg_max gives each the earliest of them only "
        f"({_named(tied)})."
    ]


def test_one_groups_tie_is_said_with_the_level_and_every_row(engine_settings, minutes) -> None:
    """One group, as the week of 2024-08-26 was: its tie is said as an ungrouped one is."""
    tied, _ = _tied(minutes, 1, _clock)
    day, labels = next(iter(tied.items()))
    rth = rth_minutes(minutes)
    high = rth.loc[rth["day"] == day, "high"].max()
    query = {
        "session": "RTH",
        "from": "1m",
        "period": f"{day:%Y-%m-%d}",
        "group_by": "date()",
        "select": ["arg_max(time(), high) as t", "max(high) as h"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.table["t"].tolist() == [labels[0]]
    assert _ties_said(result) == [
        f"In date {day:%Y-%m-%d}, {len(labels)} rows share the largest high ({high:g}): "
        f"{labels[0]} is shown (the earliest); also {', '.join(labels[1:])}."
    ]


def test_rows_tied_at_one_value_of_arg_are_no_tie(engine_settings, minutes) -> None:
    """Two minutes of one hour at the day's high are one answer of arg_max(hour(), high):
    only the days whose high minutes fall in two clock hours are counted."""
    by_minute, days = _tied(minutes, 1, _clock)
    by_hour = by_minute[by_minute.map(lambda ts: len({t[:2] for t in ts}) > 1)]
    assert len(by_hour) < len(by_minute)  # the data tells them apart
    query = {
        "session": "RTH",
        "from": "1m",
        "group_by": "date()",
        "select": "arg_max(hour(), high) as h",
    }
    said = _ties_said(execute(query, "NQ", settings=engine_settings))
    if not len(by_hour):
        assert said == []
        return
    assert len(said) == 1
    assert said[0].startswith(
        f"In {len(by_hour)} of {days} date groups ({len(by_hour) / days:.1%}), two or more rows "
        "tie for the largest high: arg_max gives each the earliest of them only "
        f"({by_hour.index[0]:%Y-%m-%d}: {int(by_hour.iloc[0][0][:2])}, also "
    )


def test_a_grouped_arg_max_without_ties_says_nothing(engine_settings, minutes) -> None:
    """Each day's largest range among its hours: no two hours share one to the tick on
    most days; where none does, nothing is said."""
    rth = rth_minutes(minutes)
    days = rth.groupby("day")["high"].max() - rth.groupby("day")["low"].min()
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "month()",
        "select": "arg_max(date(), range) as widest",
    }
    ranges = pd.DataFrame({"r": days, "m": days.index.month})
    ties = ranges.groupby("m")["r"].agg(lambda r: int((r == r.max()).sum()))
    assert (ties == 1).all()  # no month of the fixture has two days of its widest range
    assert _ties_said(execute(query, "NQ", settings=engine_settings)) == []


def _never_broke(minutes: pd.DataFrame, level: float) -> tuple[pd.DataFrame, pd.Series]:
    """The fixture's RTH minutes, and per day whether no bar's high passed ``level``."""
    rth = rth_minutes(minutes)
    return rth, ~(rth["high"] > level).groupby(rth["day"]).any()


def test_groups_whose_every_row_ties_at_a_stand_in_are_said_to_mark_no_minimum(
    engine_settings, minutes
) -> None:
    """p38a #27: the first minute above a level as arg_min(time(), th), th = if(high >
    level, t, 9999): a day that never got there ties every bar at 9999 and read 09:30, its
    first bar, with only "also 09:31, 09:32 and 447 more" said. Now the days are counted and
    named as ties of every row, with the where form that leaves them out."""
    rth, never = _never_broke(minutes, 0)
    level = float(rth.groupby("day")["high"].max().median())
    rth, never = _never_broke(minutes, level)
    days = never[never].index
    assert 3 < len(days) < len(never)  # both kinds of day, more than the three named
    first = rth.groupby("day")["timestamp"].first().dt.strftime("%H:%M")
    broke = rth[rth["high"] > level].groupby("day")["timestamp"].first().dt.strftime("%H:%M")
    query = {
        "session": "RTH",
        "from": "1m",
        "map": {"t": "hour() * 60 + minute()", "th": f"if(high > {level}, t, 9999)"},
        "group_by": "date()",
        "select": "arg_min(time(), th) as first_break",
    }
    result = execute(query, "NQ", settings=engine_settings)
    expected = first.where(never, broke)
    assert result.table["first_break"].tolist() == expected.tolist()
    named = ", ".join(f"{d:%Y-%m-%d}" for d in days[:3])
    assert _ties_said(result) == [
        f"In {len(days)} of {len(never)} date groups ({named} and {len(days) - 3} more) every "
        f"row ties for the smallest th, at 9999: arg_min gives each its first row "
        f"({first[days[0]]}), which marks no minimum. To leave such groups out, keep only the "
        "rows that count with a where, then select first(time())."
    ]


def test_a_period_whose_every_row_ties_is_said_to_be_its_first_row(
    engine_settings, minutes
) -> None:
    """The same over one day that never passed the level, ungrouped: all its bars tie."""
    rth, never = _never_broke(minutes, 0)
    level = float(rth.groupby("day")["high"].max().median())
    rth, never = _never_broke(minutes, level)
    day = never[never].index[0]
    bars = rth[rth["day"] == day]
    query = {
        "session": "RTH",
        "from": "1m",
        "period": f"{day:%Y-%m-%d}",
        "map": {"th": f"if(high > {level}, hour() * 60 + minute(), 9999)"},
        "select": "arg_min(time(), th) as first_break",
    }
    result = execute(query, "NQ", settings=engine_settings)
    opened = f"{bars['timestamp'].iloc[0]:%H:%M}"
    assert _ties_said(result) == [
        f"All {len(bars)} rows tie for the smallest th, at 9999: arg_min gives the first row "
        f"({opened}), which marks no minimum. To leave such rows out, keep only the rows that "
        "count with a where, then select first(time())."
    ]


@pytest.mark.parametrize(
    "clock",
    [
        "hour() * 60 + minute()",
        # ETH's evening counted before midnight, as minutes from 18:00 read -360.
        "if(hour() >= 18, hour() * 60 + minute() - 1440, hour() * 60 + minute())",
    ],
)
@pytest.mark.parametrize("in_place", [False, True])
def test_ties_of_a_clock_as_a_number_are_named_as_times(
    clock: str, in_place: bool, engine_settings, minutes
) -> None:
    """ "The average time of each day's high" as arg_max(t, high) over a clock written as
    minutes: its ties were named by the raw numbers ("2024-01-08: -360, also -359"), no
    time a person reads; they are the bars' times, as pandas finds them. Written in place,
    arg_max(hour() * 60 + minute(), high), they still read "2008-01-09: 622, also 623"."""
    tied, days = _tied(minutes, 1, _clock)
    assert 0 < len(tied) <= 20
    query = {
        "session": "RTH",
        "from": "1m",
        "map": {"t": clock},
        "group_by": "date()",
        "select": "arg_max(t, high) as hi_t",
        "then": {"select": "mean(hi_t) as m"},
    }
    if in_place:
        query = {**query, "map": {}, "select": f"arg_max({clock}, high) as hi_t"}
    result = execute(query, "NQ", settings=engine_settings)
    assert _ties_said(result) == [
        f"In {len(tied)} of {days} date groups ({len(tied) / days:.1%}), two or more rows tie "
        f"for the largest high: arg_max gives each the earliest of them only ({_named(tied)})."
    ]
