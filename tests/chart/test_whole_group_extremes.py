"""Highest and lowest of groups that hold part of their period leave those out, in the
model's summary and in the chart's title alike.

p40e Q13: up days by year and weekday named "lowest up_days: year=2026, wd=Tue, up_days=0,
days=1", a group of 1 day (2026 had begun 4 days before the data ends), and the title read
"▼ 0 days (tie: 2026 · Tue, 2026 · Wed)"; among whole years the lowest is 17 up days, a tie
of 2012's Wednesdays, 2015's Thursdays and 2017's Fridays. The chart left the unfinished year
out only when it was one group. Expected values are DuckDB's daily bars, counted in pandas.
"""

from __future__ import annotations

import pandas as pd
import pytest
from engine_results import run

from barb.charts import chart_headline
from barb.charts.many_groups import MAX_TIED_NAMED
from barb.summary_text import render_summary

pytestmark = pytest.mark.slow

WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri"]
QUERY = {
    "session": "RTH",
    "from": "daily",
    "map": {"wd": "dayname()"},
    "group_by": ["year()", "wd"],
    "select": ["count(close > open) as up_days", "count() as days"],
}


def test_the_unfinished_year_s_groups_are_no_highest_or_lowest(sample_settings, days) -> None:
    index = pd.DatetimeIndex(days.index)
    frame = pd.DataFrame(
        {"year": index.year, "wd": index.dayofweek, "up": days["close"] > days["open"]}
    )
    groups = frame.groupby(["year", "wd"]).agg(up_days=("up", "sum"), days=("up", "size"))
    last = index[-1].year
    whole = groups[groups.index.get_level_values("year") < last]
    assert groups["up_days"].min() < whole["up_days"].min()  # the premise: a part group lowest
    lowest = whole[whole["up_days"] == whole["up_days"].min()]
    highest = whole[whole["up_days"] == whole["up_days"].max()]

    result = run(QUERY, sample_settings)
    text = render_summary(result)
    (year, wd), first = lowest.index[0], lowest.iloc[0]
    assert (
        f"lowest up_days: year={year}, wd={WEEKDAYS[wd]}, up_days={first['up_days']}, "
        f"days={first['days']}"
    ) in text
    (year, wd), top = highest.index[0], highest.iloc[0]
    assert f"highest up_days: year={year}, wd={WEEKDAYS[wd]}, up_days={top['up_days']}," in text
    part = groups[groups.index.get_level_values("year") == last]["up_days"]
    span = f"{part.min()} to {part.max()}" if part.min() != part.max() else f"{part.min()}"
    assert f"leaving out {last}'s {len(part)} groups (part of their year; up_days {span})" in text
    ties = len(lowest) - 1, len(highest) - 1
    low_at = f"{lowest.index[0][0]}, {WEEKDAYS[lowest.index[0][1]]}"
    high_at = f"{highest.index[0][0]}, {WEEKDAYS[highest.index[0][1]]}"
    low_at += f" and {ties[0]} more" if ties[0] else ""
    high_at += f" and {ties[1]} more" if ties[1] else ""
    assert (
        f"up_days across groups: min={whole['up_days'].min()} ({low_at}), "
        f"max={whole['up_days'].max()} ({high_at})"
    ) in text

    def named(found: pd.DataFrame) -> str:
        labels = [f"{y}\u00a0·\u00a0{WEEKDAYS[w]}" for y, w in found.index]  # held in a line
        value = f"{found['up_days'].iloc[0]} days"
        if len(labels) == 1:
            return f"{labels[0]} {value}"
        if len(labels) <= MAX_TIED_NAMED:
            return f"{value} (tie: {', '.join(labels)})"
        return f"{value} ({len(labels)} tied)"

    expected = f"up_days: most often {named(highest)}, least often {named(lowest)}"
    assert chart_headline(result) == expected
