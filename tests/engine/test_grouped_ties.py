"""A grouped arg_max is each group's earliest row at the extreme: the groups where other
rows (with another value of arg) tie with it are counted and the first few named (p32c:
"which day made the week's high" read Wed of a week whose Fri made the same high; counting
the hour of each day's high gave 122 of 4,649 days to the earlier of two hours, silently).
Expected ties are found with pandas over the fixture's RTH minutes (rth_bars)."""

from __future__ import annotations

import pandas as pd
import pytest
from rth_bars import RTH_START, rth_minutes

from barb import execute


def _tied(minutes: pd.DataFrame, slot_minutes: int, label) -> tuple[pd.Series, int]:
    """Per day, the labels of the RTH bars (``slot_minutes`` long, from the open) whose high
    is the day's, in time order: only days where two labels or more reach it; and the number
    of days."""
    rth = rth_minutes(minutes)
    minute = rth["timestamp"].dt.hour * 60 + rth["timestamp"].dt.minute
    rth["start"] = RTH_START + (minute - RTH_START) // slot_minutes * slot_minutes
    bars = rth.groupby(["day", "start"], as_index=False)["high"].max()
    top = bars[bars["high"] == bars.groupby("day")["high"].transform("max")].copy()
    top["label"] = [label(start) for start in top["start"]]
    labels = top.groupby("day")["label"].agg(lambda s: list(dict.fromkeys(s)))
    return labels[labels.map(len) > 1], rth["day"].nunique()


def _clock(start: int) -> str:
    return f"{start // 60:02d}:{start % 60:02d}"


def _ties_said(result) -> list[str]:
    assert result.ok, result.to_dict()
    return [w for w in result.metadata.warnings if "tie for the" in w or "rows share" in w]


@pytest.mark.parametrize(("timeframe", "slot"), [("1h", 60), ("1m", 1)])
def test_the_days_whose_high_two_bars_made_are_counted_and_named(
    timeframe: str, slot: int, engine_settings, minutes
) -> None:
    """The hour (minute) of each day's high, counted per hour by a second stage: the days
    two bars share the high are counted, the first three named with the other bars."""
    tied, days = _tied(minutes, slot, _clock)
    assert len(tied)  # the fixture has such days
    query = {
        "session": "RTH",
        "from": timeframe,
        "group_by": "date()",
        "select": "arg_max(time(), high) as high_time",
        "then": {"group_by": "high_time", "select": "count() as days"},
    }
    result = execute(query, "NQ", settings=engine_settings)
    named = "; ".join(
        f"{day:%Y-%m-%d}: {labels[0]}, also {', '.join(labels[1:3])}"
        + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")
        for day, labels in tied.iloc[:3].items()
    )
    more = f"; and {len(tied) - 3:,} more" if len(tied) > 3 else ""
    assert _ties_said(result) == [
        f"In {len(tied)} of {days} date groups ({len(tied) / days:.1%}), two or more rows tie "
        f"for the largest high: arg_max gives each the earliest of them only ({named}{more})."
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
