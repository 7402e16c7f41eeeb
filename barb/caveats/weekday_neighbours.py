"""prev() and next() of daily rows picked by their weekday, where the weekday before (after)
had no session: the row they read is an earlier (later) day than the one the question names.

"Monday after a down Friday" as prev(close) < prev(close, 2) on RTH Mondays kept 850 days; on
26 of them prev() read a Thursday, as the Friday had no RTH bar (Good Friday 18, Christmas and
New Year's Day on a Friday 8), with no word: 403 "down-Friday" Mondays averaged +0.090%, and
the 390 after a real Friday +0.063%. Said with the count, the first dates and the where that
keeps the rows whose previous row is the weekday before: prev(dayname()) == 'Fri'.

A query reads its neighbour as a day when it picks rows by weekday (dayname() or dayofweek()
in its where or group_by) and reads any prev() but prev(close) (the Thursday's high, the
Friday's return), or any next(). prev(close) alone is the base of the row's own change: a
Monday's return is measured from the last close whatever day it fell on, as any return
series is, and the plain "return by weekday" is not warned of. A query that already looks at
the day it reads (prev(dayname()), next(date()), post_holiday()) is not either.

The day read is the farthest one the query names on each side: next(close, 3) / close - 1
from 2012-04-05 reads 2012-04-11 when Good Friday had no session (not the next row,
2012-04-09), and is warned of whenever a weekday within those three had none. prev(close, n)
is the base of the change of the row n - 1 back (prev(close) < prev(close, 2) names the
Friday's change on a Monday), so it counts as n - 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import numpy as np
import pandas as pd

from barb.caveats.calendar import NAMED_WEEKDAYS, STEPPING_FUNCTIONS
from barb.caveats.data_start import is_prev_close
from barb.events.rules import closure_name
from barb.lineage import nodes
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.script.builtins import DAY_NAMES
from barb.script.calendar_names import WEEKDAYS
from barb.script.library import lookup
from barb.summary_text import named_text

# Calls that tell which day a prev() (next()) reads, or whether a closure lies between: a
# query holding one of them on that side has told its rows apart already.
_DAY_READS = frozenset({"dayname", "dayofweek", "date"})
_TOLD_BY = {"post_holiday": "prev", "pre_holiday": "next"}
# Rows named by their date and the day they read.
NAMED_ROWS = 3


def weekday_neighbour_caveat(plan: Plan, frame: pd.DataFrame, passed: np.ndarray) -> list[str]:
    """For each side (prev, next) a daily query picking rows by weekday reads as a day: the
    rows kept (``passed``, a mask over ``frame``, the first stage's rows with the history
    around them) whose row before (after) is not the weekday before (after)."""
    stage = plan.first
    if plan.timeframe.name != "daily" or not stage.calls & NAMED_WEEKDAYS:
        return []
    if not stage.reading_other_bars or "trading_date" not in frame.columns:
        return []
    if not _picks_weekdays(stage):
        return []
    sides = _neighbour_sides(stage)
    if not sides:
        return []
    days = frame["trading_date"].to_numpy().astype("datetime64[D]")
    kept = np.flatnonzero(passed)
    said = []
    for side in ("prev", "next"):
        if side in sides:
            said += _side_text(plan, side, sides[side], days, kept)
    return said


def _picks_weekdays(stage: StagePlan) -> bool:
    """Whether the stage's where or a group key reads dayname() or dayofweek(), through the
    map."""
    mapped = dict(stage.map_exprs)
    exprs = [e for _, e in stage.group_keys]
    if stage.where is not None:
        exprs.append(stage.where)
    return any(
        isinstance(node, ast.Call) and node.name.lower() in NAMED_WEEKDAYS
        for expr in exprs
        for node in nodes(expr, mapped)
    )


def _neighbour_sides(stage: StagePlan) -> dict[str, int]:
    """How many rows back (forward) the stage reads a day: {'prev': 1} for a prev() other than
    prev(close), {'next': 3} for next(close, 3); neither side whose day the stage already
    looks at."""
    sides: dict[str, int] = {}
    told: set[str] = set()
    for call in _calls(stage):
        name = call.name.lower()
        if name in _TOLD_BY:
            told.add(_TOLD_BY[name])
        elif name in STEPPING_FUNCTIONS and call.args:
            if any(
                isinstance(node, ast.Call) and node.name.lower() in _DAY_READS
                for node in ast.walk(call.args[0])
            ):
                told.add(name)
            elif not is_prev_close(call):
                sides[name] = max(sides.get(name, 0), _rows_read(call))
    return {side: rows for side, rows in sides.items() if side not in told and rows > 0}


def _rows_read(call: ast.Call) -> int:
    """How many rows from its own the day prev(x, n) (next(x, n)) names: n (1 without it, or
    when n is no whole number), and n - 1 for prev(close, n), the base of that row's change."""
    n = ast.literal_value(call.args[1]) if len(call.args) > 1 else 1
    rows = int(n) if isinstance(n, int | float) and not isinstance(n, bool) and n > 0 else 1
    if call.name.lower() == "prev" and call.args[0] == ast.Column("close"):
        return rows - 1
    return rows


def _calls(stage: StagePlan) -> Iterator[ast.Call]:
    """Every call of the stage, through its map's names and into the named patterns it
    calls (inside_day() reads prev(high))."""
    mapped = dict(stage.map_exprs)
    pending: list[ast.Node] = list(stage.expressions)
    expanded: set[str] = set()
    while pending:
        for node in nodes(pending.pop(), mapped):
            if not isinstance(node, ast.Call):
                continue
            yield node
            spec = lookup(node.name)
            if spec is not None and spec.body is not None and node.name not in expanded:
                expanded.add(node.name)
                pending.append(spec.body)


def _side_text(plan: Plan, side: str, steps: int, days: np.ndarray, kept: np.ndarray) -> list[str]:
    """ "26 of the 850 rows kept are Mondays whose prev() reads no Friday…" for the rows kept
    whose row ``steps`` away on ``side`` (in ``days``, every row's date) is not that many
    weekdays away; nothing when every one is. The data's first (last) rows have none to
    read."""
    step = -steps if side == "prev" else steps
    at = kept[(kept + step >= 0) & (kept + step < len(days))]
    own, read = days[at], days[at + step]
    expected = np.busday_offset(own, step, roll="forward")
    off = read != expected
    if not off.any():
        return []
    own, read, expected = own[off], read[off], expected[off]
    n, rows = len(own), f"of the {len(kept):,} row{'' if len(kept) == 1 else 's'} kept"
    pairs = [f"{a} reads {b}" for a, b in zip(own[:NAMED_ROWS], read[:NAMED_ROWS], strict=True)]
    named = named_text(pairs, n)
    skipped = expected if steps == 1 else _skipped(own, read, days)
    missing = f"had no {plan.session} bar{_closures(plan, skipped)}"
    before, after = ("before", "after") if side == "prev" else ("after", "before")
    call = f"{side}()" if steps == 1 else f"{side}(…, {steps})"
    weekdays, reads = np.unique(_weekday(own)), np.unique(_weekday(read))
    if len(weekdays) == 1:
        day, neighbour = _long(weekdays[0]), _long((weekdays[0] + step) % 5)
        what = f"the {_long(reads[0])}" if len(reads) == 1 else f"a day {before} it"
        dayname = "dayname()" if steps == 1 else f"dayname(), {steps}"
        form = f"{side}({dayname}) == '{DAY_NAMES[(weekdays[0] + step) % 5]}'"
        are = f"is a {day}" if n == 1 else f"are {day}s"
        if steps == 1:
            why, keeps = f"the {neighbour} {before}", f"keeps only the {day}s {after} a {neighbour}"
        else:
            why = f"a weekday in the {steps} {before}"
            keeps = f"keeps only the {day}s whose {call} is the {neighbour} {before}"
        head = (
            f"{n:,} {rows} {are} whose {call} reads no {neighbour}: {why} {missing}, "
            f"so {call} reads {what} ({named})."
        )
    else:
        shift = (4 if side == "prev" else 1) if steps == 1 else step % 5
        dayofweek = "dayofweek()" if steps == 1 else f"dayofweek(), {steps}"
        form = f"{side}({dayofweek}) == (dayofweek() + {shift}) % 5"
        weekday = f"the weekday {before}" if steps == 1 else f"{steps} weekdays {before}"
        that = "that weekday" if steps == 1 else "a weekday between"
        head = (
            f"{n:,} {rows} read{'s' if n == 1 else ''} through {call} a day that is not "
            f"{weekday}: {that} {missing}; {named}."
        )
        keeps = f"keeps only the rows whose {call} is {weekday}"
    clause = f"… and {form}" if plan.first.where is not None else form
    return [f'{head} "where": "{clause}" {keeps}.']


def _skipped(own: np.ndarray, read: np.ndarray, days: np.ndarray) -> np.ndarray:
    """The weekdays strictly between each row's date and the one it reads that have no row
    (in ``days``): one entry a row and day, as a closure is counted once a row it moves."""
    start, end = np.minimum(own, read), np.maximum(own, read)
    between = [
        np.arange(a + np.timedelta64(1, "D"), b, dtype="datetime64[D]")
        for a, b in zip(start, end, strict=True)
    ]
    spanned = np.concatenate(between) if between else np.array([], dtype="datetime64[D]")
    return spanned[np.is_busday(spanned) & ~np.isin(spanned, days)]


def _weekday(days: np.ndarray) -> np.ndarray:
    """0 = Monday … 6 = Sunday of each date (1970-01-01 was a Thursday)."""
    return (days.astype("datetime64[D]").astype(np.int64) + 3) % 7


def _long(weekday: int) -> str:
    """ "Monday" for 0 (not calendar.day_name, which follows the process's locale)."""
    return WEEKDAYS[int(weekday)]


def _closures(plan: Plan, skipped: np.ndarray) -> str:
    """ " (Good Friday 18 times, Christmas 5, New Years Day 3)": the exchange's names for
    the weekdays skipped, most often first; " (Good Friday)" for one name; nothing when it
    names none."""
    exchange = plan.dataset.instrument.calendar
    names = Counter(closure_name(exchange, day) for day in skipped)
    names.pop(None, None)
    if len(names) < 2:
        return "".join(f" ({name})" for name in names)
    counted = [f"{name} {count}" for name, count in names.most_common()]
    listed = ", ".join([f"{counted[0]} times", *counted[1:]])
    return f" ({listed})"
