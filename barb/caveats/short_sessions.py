"""Warnings about short sessions among daily bars: a US holiday's (the stock market shut, the
futures closing early) or an early close's, on which the query's own window lost bars
(``barb.short_days``). Their volume, and often their range, is a part day's: they fill the bottom of
a ranking by volume, and pull min() and low percentiles down. So is a window's read by
session_*() on the days an early close cut it (the lunch range session_high('12:00-13:30') -
session_low('12:00-13:30') is a 60- or 75-minute one on them). So are the days a pattern
comparing a bar with the one before keeps against a short session (an inside day after one,
an outside day on one), and the days whose next() reads one as "the next day"."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np
import pandas as pd

from barb.caveats.kept_days import KeptDays
from barb.caveats.lookahead import next_calls
from barb.caveats.read_rows import rows_read
from barb.caveats.sessions import part_of_the_day
from barb.events.rules import us_market_closed
from barb.frames import Dataset, take_rows
from barb.lineage import conjuncts, nodes
from barb.planning import Plan, SelectItem, StagePlan
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate_aggregate
from barb.script.library import lookup
from barb.short_days import close_clock, date_positions, day_edges, short_days, window_edges
from barb.stage_output import query_columns
from barb.summary_text import listed_text, named_text, value_text

# Rows named in the short-session warning; more are counted.
NAMED_SHORT_SESSIONS = 3
LEAVE_OUT = '"where": "not holiday() and not early_close()" leaves them out.'
# The highest percentile read as a low one: the part days sit at the bottom.
LOW_PERCENTILE = 25
# The statistics of a low tail, which the part days fill: min(), arg_min(), a low percentile.
LOW_TAILS = frozenset({"min", "arg_min", "percentile"})
# Short sessions from this share of the days kept make a statistic of range or volume a part
# day's in good part: "the day after Thanksgiving" (all of them), not all days (2.5%).
NOTABLE_SHORT_SHARE = 0.1
# next() reading a part day from this share of the rows kept is said: one of a year's 17
# inside days (6%) moves its share by 6 points; 78 of all history's 2,438 "days after an up
# day" (3%) moved the mean next return from 0.000904 to 0.000882, nothing to tell.
NOTABLE_NEXT_SHARE = 0.05
# Columns that a part day makes small: it trades fewer hours (high and low: its range).
PART_DAY_COLUMNS = frozenset({"volume", "range"})
# The prices a move is read between.
PRICES = frozenset({"open", "high", "low", "close"})
# The furthest back (in sessions) a move's first price may be for the move to be a part
# day's: close / prev(close) is the half day's own return, 13:15 close for a 17:00 one;
# close / session_close('RTH', 2), Wednesday's close to Black Friday's, holds a whole
# session more and is the move asked for, not a part day's (p43a Q22).
PART_DAY_MOVE_BACK = 1
# Named patterns that compare a bar's range with the one before (patterns.yaml): a short
# session's part-day range sits inside the bar before more often, and the bar after it
# engulfs it more often. NQ RTH, all history: 12.3% of the holiday and early-close sessions
# are inside days against 7.9% of other days; 19.8% of the days after one are outside days
# against 8.3%. Engulfing compares bodies, and is not moved that way (3.2% against 3.6%).
MOTHER_BAR_PATTERNS = frozenset({"inside_day", "outside_day"})
# The calendar functions that mark a row's own session, or (in prev()) the one before.
SHORT_MARKS = ("holiday", "early_close")
# The functions that mark the session before a row's (post_holiday) or after it.
BESIDE_HOLIDAY = {"post_holiday": "prev", "pre_holiday": "next"}
# The prices a short session sets after its open, by its early close: a move read to one of
# them (close - open, a same-day fill low <= prev(close)) is a part day's; one read from the
# open and earlier bars (open - prev(close), the gap) is the whole night's.
AFTER_OPEN = frozenset({"high", "low", "close"})
# The price of a window each session_*() call reads: a lagged one an earlier day's.
SESSION_PRICES = {
    "session_open": "open",
    "session_high": "high",
    "session_low": "low",
    "session_close": "close",
}
# What a window read by session_*() holds less of when it is cut: its volume, and its range
# (session_high with session_low).
WINDOW_SIZES = {"session_high": "high", "session_low": "low", "session_volume": "volume"}


def short_sessions_caveat(
    plan: Plan, table: pd.DataFrame | None, shown: np.ndarray | None = None
) -> list[str]:
    """Daily bars listed that are short sessions, each named with its close: in a ranking
    (sorted by a value, not by date), whatever it lists ("the 5 quietest days of 2024" listed
    Thanksgiving and the day after); in time order, when a column listed is one a part day
    makes small (range, volume, high - low, a move to a price set after the open): Thanksgiving
    week's ranges read 215 on the day after, a 13:15 close, against a 336 full-day mean, as a
    quiet full day. Prices alone are not, nor a gap: open - prev(close) on Thanksgiving is the
    whole night's move, as on any day. Over the overnight hours a holiday is no short session
    (only Good Friday's stops at 09:15), and is not named. ``table`` holds the rows the answer
    lists: a then stage's, whose columns are read through the first stage's. ``shown``
    marks the rows the model is shown of a table too long to show whole (its first and last
    five; None: all of them): NQ's 2024 days by range read "10 of the 259 rows listed are
    short sessions: 2024-11-28, 2024-05-27, 2024-12-24 and 7 more" beside the 10 rows shown,
    one of them short. Those shown are counted and named first, the others counted among
    all the rows."""
    stage, before = (plan.then, plan.first) if plan.then is not None else (plan.first, None)
    if plan.timeframe.name != "daily" or stage.shape != "table" or table is None:
        return []
    if "date" not in table.columns or not len(table):
        return []
    # A then stage without a sort lists its rows in the first stage's order.
    sort = stage.sort or (before.sort if before is not None else ())
    ranked = bool(sort) and not ({k.column for k in sort} & {"date", "timestamp", "trading_date"})
    # The day's change to its early close is the whole day's: the market closed for it.
    sizes = listed_sizes(stage, before=before, changes=False)
    if not (ranked or sizes) or _marks_them(stage, before):
        return []
    days = np.asarray(table["date"].to_numpy(), dtype="datetime64[D]")  # ISO dates
    short = short_days(plan.dataset, plan.session, days) & ~_picked_kind(stage, before, days)
    if not short.any():
        return []
    # The rows shown first, then the others, each in the table's order.
    first = np.ones(len(days), dtype=bool) if shown is None else shown
    order = np.concatenate([np.flatnonzero(short & first), np.flatnonzero(short & ~first)])
    listed = short_session_names(plan.dataset, days[order])
    _, closed = day_edges(plan.dataset, days[short])
    n = int(short.sum())
    are = "is a short session" if n == 1 else "are short sessions"
    of = f"{n} of the {len(days)} rows listed {are}"
    if shown is not None:
        seen, showing = int((short & shown).sum()), int(shown.sum())
        if n == 1:
            among = f"{'' if seen else 'not '}among the {showing} shown"
        else:
            among = f"{seen if seen else 'none'} of them among the {showing} shown"
        of = f"{n} of the {len(days)} rows {are} ({among})"
    if ranked:
        what = "range and volume are"
    else:
        what = f"{listed_text(sizes)} {'is' if len(sizes) == 1 else 'are'}"
    joined = _joined_hours(plan, stage, before, days[short], closed)
    # Every row short: leaving them out leaves nothing; the hours they all trade compare.
    other = LEAVE_OUT
    if n == len(days):
        hours = same_hours(plan, plan.session, days[short])
        other = f"Against full days compare the hours both trade, {hours}."
    return [f"{of}: {listed}; their {what} a part day's.{joined} {other}"]


def short_session_names(dataset: Dataset, days: np.ndarray) -> str:
    """The first few short sessions ``days`` (datetime64[D]) by their date, kind and close,
    the others counted: '2024-05-27 (holiday, closed 13:00), 2024-07-03 (early close, closed
    13:15) and 3 more'."""
    shown = days[:NAMED_SHORT_SESSIONS]
    # A holiday's session closes early too: it is named a holiday.
    holiday = us_market_closed(shown)
    _, closed = day_edges(dataset, shown)
    named = [
        f"{day} ({'holiday' if is_holiday else 'early close'}, closed "
        f"{close_clock(dataset, int(end))})"
        for day, is_holiday, end in zip(shown, holiday, closed, strict=True)
    ]
    return named_text(named, len(days))


def mother_bar_caveat(
    plan: Plan, ctx: EvalContext, frame: pd.DataFrame, kept: pd.DataFrame | None
) -> list[str]:
    """Daily rows a where keeps by inside_day() or outside_day() that compare a short
    session (a holiday's, an early close's) with the bar before, or a bar with a short one
    before it: NQ's 22 outside days of 2024 held 2024-02-20, against Presidents' Day's 13:00
    session, and 2024-07-04 (13:00) against July 3's 13:15 close. Said with the rows named
    and the where that leaves them out; not of a side the query marks itself (holiday() for
    the rows' own, prev(holiday()) for the bar before). ``frame`` is the first stage's rows
    with the bars read before the period, so the bar before the period's first row is there."""
    stage = plan.first
    if plan.timeframe.name != "daily" or kept is None or not len(kept):
        return []
    patterns = kept_patterns(stage)
    if not patterns or "trading_date" not in kept.columns:
        return []
    marked = _marked_sides(stage)
    own_marked, before_marked = "own" in marked, "prev" in marked
    if own_marked and before_marked:
        return []
    dates, rows = _kept_rows(frame, kept)
    short = short_days(plan.dataset, plan.session, dates)
    own = np.zeros(len(rows), dtype=bool) if own_marked else short[rows]
    before = np.zeros(len(rows), dtype=bool)
    if not before_marked:
        before[rows > 0] = short[rows[rows > 0] - 1]
    touched = own | before
    n = int(touched.sum())
    if not n:
        return []
    named = []
    for i in np.flatnonzero(touched)[:NAMED_SHORT_SESSIONS]:
        row = rows[i]
        parts = [f"closed {_closed_at(plan.dataset, dates[row])}"] if own[i] else []
        if before[i]:
            parts.append(
                f"the bar before, {dates[row - 1]}, closed "
                f"{_closed_at(plan.dataset, dates[row - 1])}"
            )
        named.append(f"{dates[row]} ({'; '.join(parts)})")
    listed = named_text(named, n)
    form = []
    if own.any():
        form.append("not holiday() and not early_close()")
    if before.any():
        form.append("not prev(holiday()) and not prev(early_close())")
    return [
        f"{n} of the {len(rows)} rows kept read {listed_text(patterns)} against a short "
        f"session (a holiday or early close: a part day's range): {listed}."
        + left_out(stage, ctx, kept, touched, " and ".join(form))
    ]


def short_next_caveat(
    plan: Plan, ctx: EvalContext, frame: pd.DataFrame, kept: pd.DataFrame | None
) -> list[str]:
    """Daily rows kept (``kept``; the rows a limit lists when it picks them) whose next()
    reads a short session, a part day: 17 of NQ's 375 RTH inside days read their "next
    close" from a holiday's or early close's (2008-11-27, Thanksgiving, from the 13:15 close
    of the day after), and ETH's inside day 2024-03-28 from Good Friday's 09:15 one. Said
    with the values without them and the where that leaves them out; not when the query
    reads next(holiday()) or pre_holiday(): it chose about those days. ``frame`` is the first
    stage's rows with the bars read after the period, so next() of its last rows is there."""
    stage = plan.first
    if plan.timeframe.name != "daily" or kept is None or not len(kept):
        return []
    if "trading_date" not in kept.columns:
        return []
    calls = {ahead: texts for ahead, texts in next_calls(stage).items() if ahead > 0}
    if not calls or "next" in _marked_sides(stage):
        return []
    dates, rows = _kept_rows(frame, kept)
    # Past the frame's end (the data's) next() reads nothing.
    short = np.append(short_days(plan.dataset, plan.session, dates), [False] * max(calls))
    touched = np.zeros(len(rows), dtype=bool)
    said, steps, example = [], [], ""
    for ahead, texts in sorted(calls.items()):
        hit = short[rows + ahead]
        if not hit.any():
            continue
        if not steps:  # the nearest: named with an example
            row = rows[hit][0] + ahead
            example = (
                f"{dates[row - ahead]} reads {dates[row]}, closed "
                f"{_closed_at(plan.dataset, dates[row])}"
            )
            verb = "reads" if len(texts) == 1 else "read"
            said.append(
                f"{listed_text(texts)} {verb} a short session (a holiday or early close: a "
                f"part day) for {int(hit.sum()):,} of the {len(rows):,} rows kept"
            )
        else:
            said.append(f"{listed_text(texts)} for {int(hit.sum()):,}")
        touched |= hit
        steps.append(ahead)
    if not steps or touched.mean() < NOTABLE_NEXT_SHARE:
        return []
    form = " and ".join(
        f"not next({mark}(){'' if ahead == 1 else f', {ahead}'})"
        for ahead in steps
        for mark in SHORT_MARKS
    )
    return [
        f"{', '.join(said)} ({'e.g. ' if touched.sum() > 1 else ''}{example})."
        + left_out(stage, ctx, kept, touched, form)
    ]


def _kept_rows(frame: pd.DataFrame, kept: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The trading dates of ``frame`` (datetime64[D]) and where each row ``kept`` is among
    them."""
    dates = frame["trading_date"].to_numpy().astype("datetime64[D]")
    return dates, date_positions(dates, kept["trading_date"].to_numpy().astype("datetime64[D]"))


def left_out(
    stage: StagePlan, ctx: EvalContext, kept: pd.DataFrame, touched: np.ndarray, form: str
) -> str:
    """' Without them count is 20. "where": "… and <form>" leaves them out.': the select's
    statistics over the rows ``kept`` less the ``touched`` ones, and the where that drops
    them."""
    aggregates = [item for item in stage.select if item.aggregate]
    without = without_rows(stage, ctx, kept, touched, aggregates)
    return (f" Without them {without}." if without else "") + (
        f' "where": "… and {form}" leaves them out.'
    )


def _closed_at(dataset: Dataset, day: np.datetime64) -> str:
    """The clock the futures closed at on ``day``: '13:00'."""
    _, closed = day_edges(dataset, np.array([day], dtype="datetime64[D]"))
    return close_clock(dataset, int(closed[0]))


def kept_patterns(stage: StagePlan) -> list[str]:
    """The patterns of MOTHER_BAR_PATTERNS the stage's where keeps rows by (a conjunct of
    it, or of the map column it names): "inside_day() and close > open", not "not
    inside_day()" nor prev(inside_day())."""
    if stage.where is None:
        return []
    mapped = dict(stage.map_exprs)
    found: list[str] = []
    pending, seen = conjuncts(stage.where), set()
    while pending:
        part = pending.pop(0)
        if isinstance(part, ast.Column) and part.name in mapped and part.name not in seen:
            seen.add(part.name)
            pending.extend(conjuncts(mapped[part.name]))
        elif isinstance(part, ast.Call) and part.name in MOTHER_BAR_PATTERNS and not part.args:
            found.append(f"{part.name}()")
    return list(dict.fromkeys(found))


def _marked_sides(stage: StagePlan) -> frozenset[str]:
    """Which bars' holiday() or early_close() the stage reads, by how they stand to each
    row: 'own', 'prev' (prev(holiday()), post_holiday()) and 'next' (next(holiday()),
    pre_holiday()). A query that reads them chose about those days already."""
    mapped = dict(stage.map_exprs)
    lagged: set[int] = set()
    sides: set[str] = set()
    for expr in stage.expressions:
        for node in nodes(expr, mapped):
            if not isinstance(node, ast.Call):
                continue
            if node.name in BESIDE_HOLIDAY:
                sides.add(BESIDE_HOLIDAY[node.name])
            elif node.name in ("prev", "next") and node.args:
                inner = node.args[0]
                if isinstance(inner, ast.Call) and inner.name in SHORT_MARKS:
                    lagged.add(id(inner))  # another bar's (walked after its parent)
                    sides.add(node.name)
            elif node.name in SHORT_MARKS and id(node) not in lagged:
                sides.add("own")
    return frozenset(sides)


def _joined_hours(
    plan: Plan, stage: StagePlan, before: StagePlan | None, days: np.ndarray, closed: np.ndarray
) -> str:
    """A joined market whose window ran to another time on the short ``days`` (ours closed
    at ``closed``, minutes into the day) than ours, with a move of its listed: on 2024-07-03
    NQ's 09:30-16:00 stopped at 13:15 and CL's ran to 16:00, so cl_m is no part day's but
    other hours than nq_m."""
    said = ""
    for joined in plan.instruments:
        sizes = listed_sizes(stage, joined.join.prefix, before=before)
        if not sizes:
            continue
        _, theirs = day_edges(joined.dataset, days)
        _, end = window_edges(joined.dataset, joined.session)
        _, our_end = window_edges(plan.dataset, plan.session)
        ran = np.minimum(theirs, end)
        other = (theirs >= 0) & (ran != np.minimum(closed, our_end))
        if not other.any():
            continue
        said += (
            f" {joined.dataset.instrument.symbol}'s {joined.session} ran "
            f"{_ran_to(joined.dataset, days[other], ran[other], len(days))}, so "
            f"{listed_text(sizes)} cover{'s' if len(sizes) == 1 else ''} other hours there."
        )
    return said


def _ran_to(dataset: Dataset, days: np.ndarray, ends: np.ndarray, listed: int) -> str:
    """'to 16:00 on it', 'to 16:00 on 2024-07-03 and to 14:30 on 2024-07-04', 'to 14:30 on
    6 of them, to 16:00 on 2 and to 13:45 on 1': where a window ran to (``ends``) on ``days`` of the
    ``listed`` short rows, by day when few."""
    clocks = [close_clock(dataset, int(m)) for m in ends]
    if len(set(clocks)) == 1:
        on = "it" if listed == 1 else "them" if len(days) == listed else f"{len(days)} of them"
        return f"to {clocks[0]} on {on}"
    if len(days) <= NAMED_SHORT_SESSIONS:
        return listed_text([f"to {c} on {d}" for c, d in zip(clocks, days, strict=True)])
    parts = [f"to {c} on {k}" for c, k in pd.Series(clocks).value_counts().items()]
    return listed_text([parts[0] + " of them", *parts[1:]])


def listed_sizes(
    stage: StagePlan,
    prefix: str = "",
    *,
    moves: bool = True,
    changes: bool = True,
    before: StagePlan | None = None,
) -> list[str]:
    """The columns a table lists that a part day makes small: range, volume, high - low,
    or (``moves``) a move to a price set after the open (close - open, a return on
    prev(close), a same-day fill low <= prev(close); not the gap open - prev(close)); of a
    joined market's columns with its ``prefix`` ("cl_": cl_close / cl_open - 1). Without
    ``changes``, not a day's change from an earlier close to its own (close / prev(close)):
    on a half day that is the whole day's, as the market closed for the day (ES's +0.717%
    on 2025-12-24, to its 13:15 close; p47b #19). A then stage's columns are read through
    the first stage's (``before``)."""
    mapped = _defined(stage, before)
    exprs = mapped | {item.name: item.expr for item in stage.select}
    listed = [(name, exprs.get(name, ast.Column(name))) for name in _listed(stage, before)]
    return [
        name
        for name, expr in listed
        if reads_part_day(expr, mapped, prefix)
        or (
            moves
            and part_day_move(expr, mapped, prefix)
            and (changes or not day_change(expr, mapped, prefix))
        )
    ]


def _defined(stage: StagePlan, before: StagePlan | None = None) -> dict[str, ast.Expr]:
    """The names a stage's columns are read through: its map's (and the parts of its
    aggregates run per row); over a then stage, also the first stage's (``before``) map and
    select: then's gap_pct is the first stage's (open - pc) / pc * 100."""
    mapped: dict[str, ast.Expr] = {}
    if before is not None:
        mapped |= _defined(before)
        mapped |= {
            item.name: item.expr
            for item in before.select
            if not (isinstance(item.expr, ast.Column) and item.expr.name == item.name)
        }
    return mapped | dict(stage.map_exprs) | dict(stage.hoisted)


def _listed(stage: StagePlan, before: StagePlan | None) -> list[str]:
    """The columns a table's rows are listed with; a then stage without a select lists the
    first stage's columns before the ones its map made."""
    if before is None or stage.select:
        return query_columns(stage)
    made = [*query_columns(before), *(name for name, _ in stage.map_exprs)]
    return list(dict.fromkeys([*made, *(k.column for k in stage.sort)]))


def _picked_kind(stage: StagePlan, before: StagePlan | None, days: np.ndarray) -> np.ndarray:
    """The ``days`` a where picked by their kind: holidays under a where reading holiday(),
    early closes (the other short days) under one reading early_close(). "ES's holiday
    sessions by range" (where holiday()) was told its 5 rows were short sessions, to be
    compared with full days over 18:00-13:00, which nobody asked for (p47g q03)."""
    read: set[str] = set()
    for one in (stage, before):
        if one is not None and one.where is not None:
            mapped = dict(one.map_exprs)
            read |= {
                node.name.lower() for node in nodes(one.where, mapped) if isinstance(node, ast.Call)
            }
    holiday = us_market_closed(days) if {"holiday", "early_close"} & read else None
    if holiday is None:
        return np.zeros(len(days), dtype=bool)
    return (holiday & ("holiday" in read)) | (~holiday & ("early_close" in read))


def _marks_them(stage: StagePlan, before: StagePlan | None = None) -> bool:
    """Whether a column listed reads holiday() or early_close(): the rows say which they are."""
    mapped = _defined(stage, before)
    exprs = mapped | {item.name: item.expr for item in stage.select}
    return any(
        isinstance(node, ast.Call) and node.name.lower() in ("holiday", "early_close")
        for name in _listed(stage, before)
        if name in exprs
        for node in nodes(exprs[name], mapped)
    )


def part_day_move(expr: ast.Expr, mapped: dict[str, ast.Expr], prefix: str = "") -> bool:
    """Whether ``expr`` is a move (two prices or more) to a price the row's own session set
    after its open: close - open and low <= prev(close) are (a half day's stop at 13:15);
    open - prev(close) and open - session_close('RTH', 1) are not (the gap from the last
    close to the open is as long a night on a half day as on any other). Nor is a move to
    a later session's price: next(close) / close - 1 starts at the row's close and is the
    next session's move (2025-12-24's, to 2025-12-26's full day; p48f M3)."""
    read = _prices_read(expr, mapped, prefix)
    return (
        len(read) >= 2
        and any(not lag and name[len(prefix) :] in AFTER_OPEN for name, lag in read)
        and max(lag for _, lag in read) <= PART_DAY_MOVE_BACK
        and min(lag for _, lag in read) >= 0
    )


def day_change(expr: ast.Expr, mapped: dict[str, ast.Expr], prefix: str = "") -> bool:
    """Whether ``expr`` is a change from an earlier session's price to the row's own close
    alone: close - prev(close), close / session_close('RTH', 1) - 1. The day's change, and
    on a half day its whole one."""
    read = _prices_read(expr, mapped, prefix)
    own = {name for name, lag in read if not lag}
    return own == {f"{prefix}close"} and any(lag > 0 for _, lag in read)


def _prices_read(
    expr: ast.Expr, mapped: dict[str, ast.Expr], prefix: str = ""
) -> set[tuple[str, int]]:
    """The prices ``expr`` reads (a joined market's with its ``prefix``), each with how many
    sessions back it is read (prev(), a lagged session_*(); next() counts forward, below
    0): close - prev(close) reads two ((close, 0), (close, 1)), prev(close) one. A window's
    price read by session_*() counts as the bar price it is, a pattern's are its body's
    (gap_filled() reads low, high and prev(close))."""
    found: set[tuple[str, int]] = set()
    seen: set[tuple[str, int]] = set()
    pending: list[tuple[ast.Node, int]] = [(expr, 0)]
    while pending:
        node, lag = pending.pop()
        if isinstance(node, ast.Column):
            if node.name.startswith(prefix) and node.name[len(prefix) :] in PRICES:
                found.add((node.name, lag))
            elif node.name in mapped and (node.name, lag) not in seen:
                seen.add((node.name, lag))
                pending.append((mapped[node.name], lag))
            continue
        if isinstance(node, ast.Call):
            name = node.name.lower()
            if name in ("prev", "next") and node.args:
                # Its first argument is read so far back; the count is no price.
                pending.append((node.args[0], lag + _steps(node)))
                continue
            if name in SESSION_PRICES:
                back = ast.literal_value(node.args[1]) if len(node.args) > 1 else 0
                if not prefix:  # the rows' own market's windows
                    found.add((SESSION_PRICES[name], lag + int(back or 0)))
                continue
            spec = lookup(name)
            if spec is not None and spec.body is not None and not node.args:
                pending.append((spec.body, lag))
        pending.extend((child, lag) for child in node.children())
    return found


def low_tail_caveat(plan: Plan, ctx: EvalContext, kept: pd.DataFrame | None) -> list[str]:
    """min(), arg_min() or a percentile up to the 25th of daily volume or range, over rows
    that hold short sessions which pulled it down: p5 of 2024's daily RTH volume is 163,190
    with its 10 short sessions, 174,862 without. Said with the value without them, and only
    where it is higher: a part day's volume is low, its range often but not always, and the
    high side (max, p95) is set by full days. So too of a window read by session_*() on the
    days an early close cut it (min of session_volume('12:00-13:30'))."""
    stage = plan.first
    if plan.timeframe.name != "daily" or stage.shape == "table" or kept is None:
        return []
    if {"holiday", "early_close"} & stage.calls or not LOW_TAILS & stage.calls:
        return []
    if "trading_date" not in kept.columns:
        return []
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    sources = part_day_sources(plan, stage.select, mapped, low_tail=True)
    if not sources:  # before the dates are read
        return []
    days = kept["trading_date"].to_numpy().astype("datetime64[D]")
    unique, rows = np.unique(days, return_inverse=True)
    said = []
    for window, items in sources.items():
        short_dates = short_days(plan.dataset, window, unique)
        if not short_dates.any():
            continue
        changes = _without_short(stage, ctx, kept, items, short_dates[rows])
        if not changes:
            continue
        n = int(short_dates.sum())
        if window == plan.session:
            are = "is a short session" if n == 1 else "are short sessions"
            what = f"{n} of the {unique.size} days {are} (holidays, early closes: a part day"
        else:
            lengths = cut_lengths(plan, window, unique[short_dates])
            what = (
                f"{_days_windows(n, unique.size, window)} {'was' if n == 1 else 'were'} cut "
                f"short by holidays and early closes ({lengths}: a part window"
            )
        said.append(
            f"{what} trades less volume, often a smaller range): without them "
            f"{'; '.join(changes)}. {LEAVE_OUT}"
        )
    return said


def _without_short(
    stage: StagePlan,
    ctx: EvalContext,
    kept: pd.DataFrame,
    items: list[SelectItem],
    short: np.ndarray,
) -> list[str]:
    """Each item's value without the ``short`` rows, where they pulled it down."""
    by = [name for name, _ in stage.group_keys]
    every = dataclasses.replace(ctx, frame=kept, warnings=[], period=None)
    full = dataclasses.replace(every, frame=kept[~short].reset_index(drop=True))
    changes = []
    for item in items:
        with_them = evaluate_aggregate(item.expr, every, by or None)
        without = evaluate_aggregate(item.expr, full, by or None)
        change = _pulled_down(item.name, with_them, without)
        if change:
            changes.append(change)
    return changes


def part_day_share_caveat(
    plan: Plan,
    ctx: EvalContext,
    kept: pd.DataFrame | None,
    *,
    own_said: bool = False,
    kept_days: KeptDays | None = None,
) -> list[str]:
    """Statistics of range or volume over daily rows a notable share of which are short
    sessions: "the day after Thanksgiving" is 18 of 18 early closes (RTH to 13:15), and its
    mean range of 1.42% was read against full days' 1.85% with nothing said. Said with the
    share, and the value without them when full days remain (min and low percentiles are
    the low-tail warning's). So too of a window read by session_*() that an early close cut
    on a notable share of the days: session_high('12:00-13:30') - session_low('12:00-13:30')
    on RTH rows is a 60- or 75-minute range on the holidays and early closes. Groups made
    mostly of them are named by ``barb.caveats.short_session_groups``, said in this one's
    place. ``own_said``: the rows' own short sessions are said already, as a where's picks
    (``barb.caveats.part_day_picks``). ``kept_days``: ``kept``'s dates and short sessions as
    the run read them once."""
    stage = plan.first
    if plan.timeframe.name != "daily" or stage.shape == "table" or kept is None:
        return []
    if {"holiday", "early_close"} & stage.calls or "trading_date" not in kept.columns:
        return []
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    aggregates = [item for item in stage.select if item.aggregate]
    sources = part_day_sources(plan, aggregates, mapped, low_tail=False)
    if not sources:  # before the dates are read
        return []
    read = kept_days if kept_days is not None and kept_days.of(kept) else None
    read = read or KeptDays(plan.dataset, kept)
    days = read.days  # one row per date
    said = []
    for window, items in sources.items():
        if window == plan.session and (own_said or kept_patterns(stage)):
            continue  # mother_bar_caveat or the where's picks name them, with the values
        short = read.short(window)
        n = int(short.sum())
        if not n or n < NOTABLE_SHORT_SHARE * days.size:
            continue
        if window == plan.session:
            text, both = _short_session_share(plan, days, short)
        else:
            text, both = _cut_window_share(plan, window, days, short)
        if n == days.size:
            said.append(f"{text}: against full days compare the hours both trade, {both}.")
            continue
        if not stage.group_keys:
            # Of the columns the statistics read only: a copy of every column cost more.
            rows = rows_read(kept, ~short, [item.expr for item in items], None)
            full = dataclasses.replace(ctx, frame=rows, warnings=[], period=None)
            values = [(item.name, evaluate_aggregate(item.expr, full, None)) for item in items]
            found = [
                f"{name} is {value_text(v)}"
                for name, v in values
                if v is not None and not pd.isna(v)
            ]
            if found:
                text += f": without them {', '.join(found)}"
        said.append(f"{text}. {LEAVE_OUT}")
    return said


def after_window_close_caveat(plan: Plan, ctx: EvalContext, kept: pd.DataFrame | None) -> list[str]:
    """The rows' close read against the close of a window that ends before their session
    does (close - session_close('CASH') on RTH: the post-cash hour's move), over days the
    session closed by the window's end: there it is 0, no trading after the window, not a
    flat hour. "How often does NQ's 16:00-17:00 hour reverse the cash session" read 46.5%
    and a mean abs move of 10.68 over 4,649 days; 151 of them (holidays, early closes) have
    no 16:00-17:00 bar, and over the 4,498 that do it is 48.0% and 11.04. Said with the
    values without them and the form that is n/a on those days."""
    stage = plan.first
    if plan.timeframe.name != "daily" or kept is None or not len(kept):
        return []
    if "trading_date" not in kept.columns or "session_close" not in stage.calls:
        return []
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    windows = _closes_against_close(plan, mapped)
    if not windows:  # before the dates are read
        return []
    dataset = plan.dataset
    start, end = window_edges(dataset, plan.session)
    dates = kept["trading_date"].to_numpy().astype("datetime64[D]")
    said = []
    for window, items in windows.items():
        window_start, window_end = window_edges(dataset, window)
        if not start <= window_start < window_end < end:
            continue
        opened, closed = day_edges(dataset, dates)
        ended = (opened >= 0) & (closed > window_start) & (closed <= window_end)
        n = int(ended.sum())
        if not n:
            continue
        closes = sorted({close_clock(dataset, int(m)) for m in closed[ended]})
        after = f"{close_clock(dataset, window_end)}-{close_clock(dataset, end)}"
        after = dataset.instrument.session_key(after)
        text = (
            f"On {n:,} of the {len(dates):,} days {plan.session} ended by {window}'s "
            f"{close_clock(dataset, window_end)} close (holidays, early closes: the futures "
            f"closed at {', '.join(closes[:-1])}{' or ' if len(closes) > 1 else ''}"
            f"{closes[-1]}, e.g. {dates[ended][0]}), so close - session_close('{window}') is 0 "
            "there: no trading after it, not a flat move"
        )
        aggregates = [item for item in items if item.aggregate]
        if n < len(dates) and aggregates:
            without = without_rows(stage, ctx, kept, ended, aggregates)
            if without:
                text += f"; without them {without}"
        said.append(
            f"{text}. session_close('{after}') - session_close('{window}') is n/a on those days."
        )
    return said


def _closes_against_close(plan: Plan, mapped: dict[str, ast.Expr]) -> dict[str, list[SelectItem]]:
    """The windows whose close (session_close('CASH'), not a lagged one) a select item reads
    together with the rows' own close, with those items."""
    instrument = plan.dataset.instrument
    own = instrument.session_key(plan.session)
    found: dict[str, list[SelectItem]] = {}
    for item in plan.first.select:
        read = list(nodes(item.expr, mapped))
        if not any(isinstance(node, ast.Column) and node.name == "close" for node in read):
            continue
        windows = set()
        for node in read:
            if not isinstance(node, ast.Call) or node.name.lower() != "session_close":
                continue
            if not node.args or not isinstance(node.args[0], ast.String):
                continue
            if len(node.args) > 1 and ast.literal_value(node.args[1]) != 0:
                continue
            if instrument.session_key(node.args[0].value) != own:
                windows.add(node.args[0].value)
        for window in sorted(windows):
            found.setdefault(window, []).append(item)
    return found


def without_rows(
    stage: StagePlan,
    ctx: EvalContext,
    kept: pd.DataFrame,
    drop: np.ndarray,
    items: list[SelectItem],
) -> str:
    """The select ``items``' aggregates over the rows kept but ``drop``, as 'mean_abs_gap is
    1.194, max_abs_gap is 6.5': of one row of numbers only, not a table's nor per group."""
    if stage.shape == "table" or stage.group_keys or not items or drop.all():
        return ""
    rest = dataclasses.replace(ctx, frame=take_rows(kept, ~drop), warnings=[], period=None)
    found = []
    for item in items:
        value = evaluate_aggregate(item.expr, rest, None)
        if value is not None and not pd.isna(value):
            found.append(f"{item.name} is {value_text(value)}")
    return ", ".join(found)


def _short_session_share(plan: Plan, days: np.ndarray, short: np.ndarray) -> tuple[str, str]:
    """The rows' own short sessions, and the hours every day trades (when all are short)."""
    n = int(short.sum())
    _, closed = day_edges(plan.dataset, days[short])
    closes = [close_clock(plan.dataset, int(m)) for m in sorted(set(closed[closed >= 0]))]
    text = (
        f"{'All' if n == days.size else n} of the {days.size} days "
        f"{'are short sessions' if n > 1 else 'is a short session'} (holidays, early "
        f"closes: the exchange closed at {' or '.join(closes)}), so their range and volume "
        "are a part day's"
    )
    if part_of_the_day(plan) is not None:  # a window: how long it ran on them
        text += f" ({plan.session} ran {cut_lengths(plan, plan.session, days[short])})"
    return text, same_hours(plan, plan.session, days[short])


def _cut_window_share(
    plan: Plan, window: str, days: np.ndarray, short: np.ndarray
) -> tuple[str, str]:
    """A window read by session_*() that holidays and early closes cut, with how long it
    ran on them, and the window every day trades (when all are cut)."""
    n = int(short.sum())
    cut = days[short]
    text = (
        f"{_days_windows(n if n < days.size else 0, days.size, window)} "
        f"{'was' if n == 1 else 'were'} cut short by holidays and early closes "
        f"({cut_lengths(plan, window, cut)}), so their range and volume are a part window's"
    )
    return text, same_hours(plan, window, cut)


def same_hours(plan: Plan, window: str, cut: np.ndarray) -> str:
    """The form that reads only the hours the short days ``cut`` traded, on every day: the
    query's own session to their earliest close, '"session": "09:30-13:15", over every
    day'; a window read by session_*(), "'12:00-13:00' in place of '12:00-13:30'"."""
    opened, closed = day_edges(plan.dataset, cut)
    if window == plan.session:
        start = plan.dataset.instrument.session(window).start
        end = close_clock(plan.dataset, int(closed[closed >= 0].min()))
        return f'"session": "{start}-{end}", over every day'
    start, end = window_edges(plan.dataset, window)
    both = max(start, int(opened.max())), min(end, int(closed.min()))
    hours = "-".join(close_clock(plan.dataset, m) for m in both)
    return f"'{hours}' in place of '{window}'"


def _days_windows(n: int, total: int, window: str) -> str:
    """ "113 of the 4611 days' 12:00-13:30 windows" (n 0: all of them)."""
    return f"{n if n else 'All'} of the {total} days' {window} windows"


def cut_lengths(plan: Plan, window: str, cut: np.ndarray) -> str:
    """How long a window ran on the days it was cut: "60 of its 90 minutes on 74 days, 75
    on 39" (the most usual first)."""
    opened, closed = day_edges(plan.dataset, cut)
    start, end = window_edges(plan.dataset, window)
    ran = np.minimum(closed, end) - np.maximum(opened, start)
    lengths, counts = np.unique(ran, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    full = f"{lengths[order[0]]} of its {end - start} minutes"
    if len(lengths) == 1:
        return full
    said = [f"{full} on {counts[order[0]]} days"]
    said += [f"{lengths[i]} on {counts[i]}" for i in order[1:]]
    return ", ".join(said)


def part_day_sources(
    plan: Plan, items: Iterable[SelectItem], mapped: dict[str, ast.Expr], *, low_tail: bool
) -> dict[str, list[SelectItem]]:
    """The select items whose size a short session makes small, by the session whose short
    days they are: the rows' own (range, volume) and each window read by session_*().
    ``low_tail``: only min(), arg_min() and low percentiles; else only the others."""
    found: dict[str, list[SelectItem]] = {}
    for item in items:
        if isinstance(item.expr, ast.Call) and item.expr.name == "count":
            continue  # count(lunch): how many rows, no size
        values = _low_tail_values(item)
        if low_tail:
            read = values
        elif values:  # the low-tail warning's
            continue
        else:
            read = [item.expr]
        sources = set()
        for value in read:
            if reads_part_day(value, mapped):
                sources.add(plan.session)
            sources |= _window_sizes(plan, value, mapped)
        for source in sorted(sources):
            found.setdefault(source, []).append(item)
    return found


def _window_sizes(plan: Plan, expr: ast.Expr, mapped: dict[str, ast.Expr]) -> set[str]:
    """The sessions other than the rows' own whose size ``expr`` reads on the row's date:
    session_high('12:00-13:30') with session_low('12:00-13:30') (its range), or
    session_volume('12:00-13:30'). Not a lagged one (session_high('RTH', 1)): its days are
    the dates before."""
    instrument = plan.dataset.instrument
    own = instrument.session_key(plan.session)
    fields: dict[str, set[str]] = {}
    for node in nodes(expr, mapped):
        if not isinstance(node, ast.Call) or node.name.lower() not in WINDOW_SIZES:
            continue
        if not node.args or not isinstance(node.args[0], ast.String):
            continue
        if len(node.args) > 1 and ast.literal_value(node.args[1]) != 0:
            continue
        key = instrument.session_key(node.args[0].value)
        if key != own:
            fields.setdefault(key, set()).add(WINDOW_SIZES[node.name.lower()])
    return {key for key, read in fields.items() if "volume" in read or {"high", "low"} <= read}


def reads_part_day(expr: ast.Expr, mapped: dict[str, ast.Expr], prefix: str = "") -> bool:
    """Whether ``expr`` reads a column a part day makes small (range, volume, high - low),
    or a joined market's with its ``prefix`` (cl_volume), of the row's own session: not
    prev(range) / prev(open), the full Wednesday before a Thanksgiving row (p43a Q13)."""
    read = _own_columns(expr, mapped)
    read = {name[len(prefix) :] for name in read if name.startswith(prefix)}
    return bool(read & PART_DAY_COLUMNS) or {"high", "low"} <= read


def sizes_read(expr: ast.Expr, mapped: dict[str, ast.Expr]) -> set[str]:
    """Which of a bar's sizes (``PART_DAY_COLUMNS``: volume, range) ``expr`` reads of the
    row's own bar, through the map: {"range"} for range / open * 100 or high - low."""
    read = _own_columns(expr, mapped)
    return (read & PART_DAY_COLUMNS) | ({"range"} if {"high", "low"} <= read else set())


def _own_columns(expr: ast.Expr, mapped: dict[str, ast.Expr]) -> set[str]:
    """The columns ``expr`` reads of the row's own bar, through the map: not those read
    through prev() or next() (volume / prev(volume) reads volume; prev(range) none)."""
    found: set[str] = set()
    seen: set[str] = set()
    pending: list[ast.Node] = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Column):
            found.add(node.name)
            if node.name in mapped and node.name not in seen:
                seen.add(node.name)
                pending.append(mapped[node.name])
            continue
        if (
            isinstance(node, ast.Call)
            and node.name.lower() in ("prev", "next")
            and node.args
            and _steps(node)
        ):
            continue  # another session's bar (prev(x, 0) is the row's own)
        pending.extend(node.children())
    return found


def _steps(call: ast.Call) -> int:
    """How many sessions back prev(x, n) reads (1 without n); next() forward, below 0."""
    n = ast.literal_value(call.args[1]) if len(call.args) > 1 else 1
    steps = int(n) if isinstance(n, int | float) and not isinstance(n, bool) else 1
    return steps if call.name.lower() == "prev" else -steps


def _low_tail_values(item: SelectItem) -> list[ast.Expr]:
    """What the select item takes min(), arg_min() or a low percentile of."""
    values = []
    for node in ast.walk(item.expr):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        if node.name == "min" or (node.name == "arg_min" and len(node.args) == 2):
            values.append(node.args[-1])
        elif node.name == "percentile" and len(node.args) == 2:
            p = node.args[1]
            if isinstance(p, ast.Number) and p.value <= LOW_PERCENTILE:
                values.append(node.args[0])
    return values


def _pulled_down(name: str, with_them: object, without: object) -> str | None:
    """``name``'s value without the short sessions where they lowered it (arg_min: where it
    named one of them): of one number, or of the group they lowered most, with how many
    groups they lowered."""
    if not isinstance(with_them, pd.Series):
        with_them, without = pd.Series([with_them]), pd.Series([without])
    assert isinstance(without, pd.Series)
    without = without.reindex(with_them.index)
    if pd.api.types.is_numeric_dtype(with_them) and not pd.api.types.is_bool_dtype(with_them):
        before, after = with_them.astype(float), without.astype(float)
        lowered = (after > before).to_numpy()
        rise = np.where(lowered, (after / before.where(before > 0)).to_numpy(), np.nan)
    else:  # dates, names: the answer was one of them
        lowered = (with_them.astype(str) != without.astype(str)).to_numpy()
        rise = np.where(lowered, 1.0, np.nan)
    if not lowered.any():
        return None
    worst = int(np.nanargmax(rise)) if np.isfinite(rise).any() else int(np.argmax(lowered))
    was, now = value_text(with_them.iloc[worst]), value_text(without.iloc[worst])
    if len(lowered) == 1:
        return f"{name} is {now}, not {was}"
    key = with_them.index[worst]
    label = ", ".join(value_text(k) for k in key) if isinstance(key, tuple) else value_text(key)
    return (
        f"{name} differs in {int(lowered.sum())} of the {len(lowered)} groups ({label}: "
        f"{now}, not {was})"
    )
