"""Weeks that hold fewer trading days than a full week, among the weeks a result lists.

A week with a holiday in it trades four days, not five: its volume, and usually its range,
is a four-day week's. Listed beside full weeks it reads as a quiet week: ETH volume fell from
2,198,342 in the week of 2025-12-15 to 1,385,356 and 1,353,679 in the next two (-37%), but
both were four-day weeks (Christmas, New Year), and per trading day the fall was 21%.

A week's trading days are read from the session's own daily bars: a weekday with no bar is
a day the market did not trade (Christmas; Good Friday in RTH, whose overnight hours still
trade). A week the period or the data's ends cut is said by its own warnings, never here.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

from barb.bar_labels import label_column
from barb.caveats.calendar import groups_weeks
from barb.caveats.lookback import marks_new_day
from barb.caveats.short_sessions import listed_sizes
from barb.events.rules import closure_name
from barb.frames import period_start
from barb.lineage import through_map
from barb.planning import Plan, SelectItem, StagePlan
from barb.result import ShortWeek
from barb.script import ast
from barb.short_days import close_clock, day_edges, short_days
from barb.stage_output import StageOutput
from barb.summary_text import listed_text

FULL_WEEK = 5  # Monday to Friday
# Weeks named in the warning; more are counted.
NAMED_WEEKS = 3
# Aggregates over a week's rows that grow with the days they are taken over: a sum, a count
# and the spread from the highest to the lowest (max(high) - min(low)); a mean does not.
GROWING = frozenset({"sum", "count"})
# A week's trading days on intraday bars: each date's first bar, found by the day changing
# from the bar before. count(date() != prev(date())) missed the data's first day, which has
# no bar before (the comparison is unknown there): the week of 2008-01-02 read 2 days of 3.
INTRADAY_DAYS = "count(day() != coalesce(prev(day()), 0)) as days"


@dataclass(frozen=True)
class _Found:
    weeks: list[ShortWeek]
    listed: int
    # Sessions of the short weeks that closed early, as "2025-12-24 closed 13:15".
    early: dict[str, list[str]]
    calendar: str
    # The session asked for, and the weekdays it did not trade on that the futures did
    # (Good Friday on RTH), with the futures' close: "09:15".
    session: str = "ETH"
    futures: dict[dt.date, str] | None = None


def short_weeks_caveat(plan: Plan, output: StageOutput) -> tuple[list[str], list[ShortWeek]]:
    """The warning on listed weeks that hold fewer than five trading days, and those weeks
    (for the chart): weekly bars listed in time order or ranked, or daily or intraday rows
    grouped by week(), whose listed columns grow with the days (volume, range, a sum, a
    count). "ETH volume by week" read the two holiday weeks of 2025-12-22 and 2025-12-29 as
    a 40% fall with nothing said."""
    if plan.then is not None or output.table is None or not len(output.table):
        return [], []
    stage = plan.first
    if plan.timeframe.name == "weekly" and stage.shape == "table":
        sizes = listed_sizes(stage, moves=False)
        if not sizes or output.kept is None or "timestamp" not in output.kept.columns:
            return [], []
        labelled = label_column(output.kept, "weekly")
        if labelled is None:
            return [], []
        starts = output.kept["timestamp"].to_numpy()
        found = _short_weeks(plan, starts, [str(label) for label in labelled[1]])
        hint = _per_day_form(sizes)
    elif not plan.timeframe.calendar and _by_week_alone(stage):
        sizes = _growing_items(stage, plan.timeframe.name == "daily")
        key = stage.group_keys[0][0]
        if not sizes or key not in output.table.columns:
            return [], []
        starts = pd.to_datetime(output.table[key], errors="coerce").to_numpy()
        if np.isnat(starts).any():
            return [], []
        labels = [str(pd.Timestamp(day).date()) for day in starts]
        found = _short_weeks(plan, starts, labels)
        hint = _days_hint(plan, stage, sizes)
    else:
        return [], []
    if not found.weeks:
        return [], []
    return [_text(found, sizes, hint)], found.weeks


def _by_week_alone(stage: StagePlan) -> bool:
    """Whether the stage's one group key is week()."""
    return len(stage.group_keys) == 1 and groups_weeks(stage)


def _growing_items(stage: StagePlan, daily: bool) -> list[str]:
    """The select's aggregates that grow with the days of a week: a sum, a count, the
    spread from a max() to a min(). None when the week's trading days are listed beside
    them (``_counts_days``): the rows say each week's days themselves."""
    mapped = dict(stage.map_exprs)
    items = [item for item in stage.select if item.aggregate]
    if any(_counts_days(item, stage, daily) for item in items):
        return []
    return [item.name for item in items if _grows(through_map(item.expr, mapped))]


def _counts_days(item: SelectItem, stage: StagePlan, daily: bool) -> bool:
    """Whether ``item`` counts the week's trading days: count() of every daily bar, or
    count(day() != coalesce(prev(day()), 0)) (each date's first bar, ``marks_new_day``) of
    every intraday bar."""
    if stage.where is not None or not isinstance(item.expr, ast.Call):
        return False
    call = item.expr
    if call.name != "count" or len(call.args) > 1:
        return False
    if not call.args:
        return daily
    return not daily and marks_new_day(call.args[0], dict(stage.map_exprs) | dict(stage.hoisted))


def _days_hint(plan: Plan, stage: StagePlan, sizes: list[str]) -> str:
    """The select item that lists each week's trading days beside its rows: count() of the
    daily bars, ``INTRADAY_DAYS`` of intraday ones (count() of 5m bars read 139 "days" in a
    five-day week, p43f M3), each over every row of the week, so in a query without the
    where, which keeps rows, not days: 'count() counts the bars the where keeps, not the
    week's trading days: "count(day() != coalesce(prev(day()), 0)) as days" in the select
    lists each week's trading days, in a query without the where (count(range > 40) counts
    the rows it keeps).'"""
    daily = plan.timeframe.name == "daily"
    form = "count() as days" if daily else INTRADAY_DAYS
    hint = f'"{form}" in the select lists each week\'s trading days'
    if stage.where is not None:
        hint += (
            f", in a query without the where (count({stage.where.to_text()}) counts the rows "
            "it keeps)"
        )
    if not any(_counts_rows(item) and item.name in sizes for item in stage.select):
        return f"{hint[0].upper()}{hint[1:]}."
    if stage.where is not None:
        counted = f"the {'days' if daily else 'bars'} the where keeps, not the week's trading days"
    elif not daily:
        counted = f"{plan.timeframe.name} bars, not days"
    else:
        return f"{hint[0].upper()}{hint[1:]}."
    return f"count() counts {counted}: {hint}."


def _counts_rows(item: SelectItem) -> bool:
    """count(): every row kept."""
    return isinstance(item.expr, ast.Call) and item.expr.name == "count" and not item.expr.args


def _grows(expr: ast.Expr) -> bool:
    """sum(volume), count(), max(high) - min(low), and each scaled by a number."""
    while isinstance(expr, ast.Binary) and expr.op in ("*", "/"):
        if ast.literal_value(expr.right) is not None:
            expr = expr.left
        elif expr.op == "*" and ast.literal_value(expr.left) is not None:
            expr = expr.right
        else:
            return False
    if isinstance(expr, ast.Binary) and expr.op == "-":
        return (_call_name(expr.left), _call_name(expr.right)) == ("max", "min")
    return _call_name(expr) in GROWING


def _call_name(expr: ast.Expr) -> str | None:
    return expr.name if isinstance(expr, ast.Call) else None


def _per_day_form(sizes: list[str]) -> str:
    """The query that reads the weeks per trading day, with their days beside."""
    own = [f'"mean({name})"' for name in sizes if name in ("volume", "range")]
    select = ", ".join([*own, '"count() as days"'])
    what = "Per trading day" if own else "With each week's trading days"
    return f'{what}: "from": "daily", "group_by": "week()", "select": [{select}].'


def _short_weeks(plan: Plan, starts: np.ndarray, labels: list[str]) -> _Found:
    """The weeks beginning on ``starts`` (each week's first trading date or Monday) that have
    a weekday with no trading inside the period and the data: a week the period or the
    data's ends cut is left to their warnings."""
    dataset = plan.dataset
    traded = np.asarray(dataset.session_daily(plan.session).index.to_numpy(), dtype="datetime64[D]")
    first = np.datetime64(dataset.first_date, "D")
    last = np.datetime64(dataset.last_date, "D")
    if plan.period.start is not None:
        first = max(first, np.datetime64(plan.period.start, "D"))
    if plan.period.end is not None:
        last = min(last, np.datetime64(plan.period.end, "D"))
    mondays = period_start(np.asarray(starts, dtype="datetime64[ns]"), "weekly")
    weekdays = mondays.astype("datetime64[D]")[:, None] + np.arange(FULL_WEEK)
    open_days = np.isin(weekdays, traded)
    held = open_days.sum(axis=1)
    # Cut by the period or the data's ends: said by their own warnings.
    whole = (weekdays[:, 0] >= first) & (weekdays[:, -1] <= last)
    weeks: list[ShortWeek] = []
    early: dict[str, list[str]] = {}
    futures: dict[dt.date, str] = {}
    for at in np.flatnonzero(whole & (held > 0) & (held < FULL_WEEK)):
        shut = weekdays[at][~open_days[at]]
        closed = [pd.Timestamp(d).date() for d in shut]
        weeks.append(ShortWeek(label=labels[at], days=int(held[at]), closed=closed))
        early[labels[at]] = _early_closes(plan, weekdays[at][open_days[at]])
        if plan.session != "ETH":
            # NQ traded Good Friday 2024 until 09:15: only RTH had no session.
            _, ends = day_edges(dataset, shut)
            futures |= {
                day: close_clock(dataset, int(end))
                for day, end in zip(closed, ends, strict=True)
                if end >= 0
            }
    return _Found(weeks, len(labels), early, dataset.instrument.calendar, plan.session, futures)


def _early_closes(plan: Plan, days: np.ndarray) -> list[str]:
    """The ``days`` the session traded short on, with their close: "2025-12-24 closed 13:15"."""
    short = days[short_days(plan.dataset, plan.session, days)]
    if not len(short):
        return []
    _, closed = day_edges(plan.dataset, short)
    return [
        f"{day} closed {close_clock(plan.dataset, int(end))}"
        for day, end in zip(short, closed, strict=True)
        if end >= 0
    ]


def _text(found: _Found, sizes: list[str], hint: str) -> str:
    """'2 of the 7 weeks listed hold fewer than 5 trading days: 2025-12-22 (4 days: no
    trading on Christmas, 2025-12-25; 2025-12-24 closed 13:15) and 2025-12-29 (4 days: no
    trading on New Year's Day, 2026-01-01), so their volume and range cover fewer days than
    a full week's.', and the form that reads them per day."""
    weeks = found.weeks
    columns = listed_text(sizes)
    cover = "covers" if len(sizes) == 1 else "cover"
    if found.listed == 1:
        week = weeks[0]
        return (
            f"The week {week.label} holds {week.days} trading days ({_detail(week, found)}), "
            f"so its {columns} {cover} fewer days than a full week's. {hint}"
        )
    named = [f"{w.label} ({w.days} days: {_detail(w, found)})" for w in weeks[:NAMED_WEEKS]]
    if len(weeks) > NAMED_WEEKS:
        named.append(f"{len(weeks) - NAMED_WEEKS} more")
    n = len(weeks)
    return (
        f"{n} of the {found.listed} weeks listed {'holds' if n == 1 else 'hold'} fewer than "
        f"{FULL_WEEK} trading days: {listed_text(named)}, so {'its' if n == 1 else 'their'} "
        f"{columns} {cover} fewer days than a full week's. {hint}"
    )


def _detail(week: ShortWeek, found: _Found) -> str:
    """'no trading on Christmas, 2025-12-25; 2025-12-24 closed 13:15'; a day the futures
    traded outside the session asked for, 'no RTH session on Good Friday, 2024-03-29, the
    futures trading until 09:15': "no trading on Good Friday" had been said of NQ's."""
    traded = found.futures or {}
    parts = []
    shut = [_closed_text(day, found.calendar) for day in week.closed if day not in traded]
    if shut:
        parts.append(f"no trading on {listed_text(shut)}")
    session = [
        f"{_closed_text(day, found.calendar)}, the futures trading until {traded[day]}"
        for day in week.closed
        if day in traded
    ]
    if session:
        parts.append(f"no {found.session} session on {listed_text(session)}")
    return "; ".join([*parts, *found.early.get(week.label, [])])


def _closed_text(day: dt.date, calendar: str) -> str:
    """'Christmas, 2025-12-25', or the date alone when the calendar does not name it."""
    name = closure_name(calendar, np.datetime64(day, "D"))
    return f"{name}, {day}" if name else str(day)
