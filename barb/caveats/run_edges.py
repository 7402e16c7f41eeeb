"""A streak record the period's end cuts (the run still going on its last row), and one
whose run counts a US holiday session among its days.

A streak counts the run's rows before the period (said by streak() itself), and stops at the
period's last row though the run may go on: NQ's longest losing streak of 2024 read 6, a tie
of four runs, one of them 2024-12-19 to 12-31, which went on to 7 on 2025-01-02, with nothing
said (p46f Q17). When the answer's longest run is the one holding the period's last row and
the data goes on past it, the streak's condition is read on over the bars after the
period (with the history it reads, not the whole first stage from the data's start) until
that run ends, and its whole length and last row are said.

A record's run can also hold a US holiday session, a short day of the futures with the stock
market shut: CL's longest winning streak, 16 days on ETH and one of three 11s on RTH, ends
2008-05-26, Memorial Day, closed 13:00, with no settlement; on the stock market's days alone
it is 15 (ending 2008-05-23) and the RTH tie is 2012-10-15 and 2019-11-21's (p46f Q18). Rows
listed after such a day are said (``holiday_closes``); a record read by max() or arg_max()
names the holiday sessions in its run and the form that leaves them out
(``holiday_run_caveat``). A stock index's every holiday session is said, as the stock
market's days are its question; another instrument's short ones only, as its own holiday
sessions in full are days like any other (``calendar``'s CL).
"""

from __future__ import annotations

import datetime as dt
import operator
from dataclasses import replace
from functools import partial

import numpy as np
import pandas as pd

from barb.bar_labels import row_label
from barb.caveats.calendar import NAMED_DAYS
from barb.events.rules import OPTIONS_CALENDAR, closure_name, us_market_closed
from barb.lineage import through_map
from barb.period_rows import Scope, bars_in_scope
from barb.planning import Plan
from barb.result import CutRun
from barb.script import ast
from barb.script.columns_read import columns_read
from barb.script.conditions import as_known
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate
from barb.script.reach import map_reach, reach
from barb.short_days import close_clock, day_edges, short_days
from barb.stage_output import StageOutput

# Calendar days the period is carried on by at first (doubled while the run goes on).
_FIRST_STEP = 14


def run_past_period_caveat(
    plan: Plan,
    ctx: EvalContext,
    scope: Scope,
    frame: pd.DataFrame,
    first: StageOutput,
) -> list[str]:
    """Said of a streak the first stage maps (streak(cond) without a restart unit) whose
    highest value over the rows kept is on the period's last row, where the data goes on
    after it: "The run ending 2024-12-31 (6) is still going on the period's last row: it
    went on to 7 on 2025-01-02; a period reaching 2025-01-02 counts it whole." Its chart's
    form is kept in ``ctx.cut_runs``. ``frame``: the first stage's bars with its columns.
    Not of a streak the answer reads only against a number ("where": "run == 3", count(run
    >= 3)): a row's count up to it is the same whatever the run went on to, and "NQ up 3
    days in a row in 2025", 16, had been told a period reaching 2026-01-05 counts the run
    ending 2025-12-31 whole (p48d C3)."""
    period = plan.period
    if plan.then is not None or period.end is None or period.bars is not None:
        return []
    streaks = [name for name in _streak_columns(plan) if name in frame.columns]
    if not streaks:  # before the period's rows are found: a scan of every bar (1m: 6.4M)
        return []
    inside = np.flatnonzero(scope.in_period)
    last_date = pd.Timestamp(plan.dataset.last_date).date()
    if not len(inside) or int(inside[-1]) != len(frame) - 1 or period.end >= last_date:
        return []
    last = int(inside[-1])
    kept = first.passed if first.passed is not None else scope.in_period
    for name in streaks:
        if not kept[last]:
            continue
        if plan.first.number_comparisons(partial(operator.eq, ast.Column(name))) is not None:
            continue  # each row's count against a number: the run's length is not read
        values = frame[name].to_numpy(dtype="float64")
        held = values[kept & scope.in_period]
        if not values[last] > 0 or values[last] < np.nanmax(held):
            continue
        went_on = _run_after(plan, ctx, frame, name, last, last_date)
        if went_on is None:
            return []
        length, ended, still = went_on
        said = row_label(frame, last, plan.timeframe.name)
        later = (
            f"it is {length} at the data's end ({ended}) and still going"
            if still
            else f"it went on to {length} on {ended}"
        )
        text = (
            f"The run ending {said} ({int(values[last])}) is still going on the period's last "
            f"row: {later}; a period reaching {ended} counts it whole."
        )
        ctx.cut_runs[text] = CutRun(
            length=int(values[last]), ended=said, whole=length, whole_end=ended, still=still
        )
        return [text]
    return []


def holiday_run_caveat(
    plan: Plan, ctx: EvalContext, in_period: np.ndarray, frame: pd.DataFrame, first: StageOutput
) -> list[str]:
    """Said of the longest runs of a daily streak the first stage reads by max() or arg_max()
    that hold a US holiday session: "The longest run (16, ending 2008-05-26) counts a US
    holiday session among its days: 2008-05-26 (Memorial Day: the stock market shut, the
    futures closed 13:00). On the stock market's days alone the longest run is 15, ending
    2008-05-23: "where": "not holiday()" with the streak in a then stage leaves it out." And
    of a longer run on the stock market's days that a holiday session broke: NQ's longest
    red RTH body streak read 8, its note implying the stock market's days hold no more; there
    it is 11, to 2010-12-02, Thanksgiving's up session of 2010-11-25 between (p46w #4). Not
    when the query names holiday() itself. ``frame``: the first stage's bars with its
    columns; ``in_period``: the period's rows."""
    stage = plan.first
    if plan.then is not None or plan.timeframe.name != "daily" or "holiday" in stage.calls:
        return []
    names = [name for name in _record_columns(plan) if name in frame.columns]
    if not names:
        return []
    kept = in_period if first.passed is None else in_period & first.passed
    days = frame["trading_date"].to_numpy().astype("datetime64[D]")
    holiday = _holiday_sessions(plan, days)
    if not holiday.any():
        return []
    for name in names:
        values = frame[name].to_numpy(dtype="float64")
        best = np.nanmax(values[kept], initial=0)
        if not best > 0:
            continue
        ends = np.flatnonzero(kept & (values == best))
        found = []
        for end in ends:
            start = _run_start(values, int(end))
            counted = start + np.flatnonzero(
                holiday[start : end + 1] & (values[start : end + 1] > 0)
            )
            if len(counted):
                found.append((int(end), days[counted]))
        stock = _stock_days_record(plan, ctx, frame, name, days, kept)
        if found:
            return [_holiday_run_text(plan, frame, int(best), len(ends), found, stock)]
        if stock is None or stock[0] <= best:
            continue
        _, start, end = stock
        broke = start + np.flatnonzero(holiday[start:end] & ~(values[start:end] > 0))
        if len(broke):
            return [_broken_run_text(plan, frame, int(best), stock, days[broke])]
    return []


def _run_start(values: np.ndarray, end: int) -> int:
    """The first row of the run ending at row ``end`` of a streak's ``values``."""
    stops = np.flatnonzero(values[:end] == 0)
    return int(stops[-1]) + 1 if len(stops) else 0


def _stock_days_record(
    plan: Plan,
    ctx: EvalContext,
    frame: pd.DataFrame,
    name: str,
    days: np.ndarray,
    kept: np.ndarray,
) -> tuple[int, int, int] | None:
    """The longest run of the streak ``name`` over the stock market's days alone, as
    "where": "not holiday()" with the streak in a then stage counts it (its prev() reading
    the stock market's day before): its length and its first and last rows in ``frame``;
    None when no kept row has one."""
    mapped = dict(plan.first.map_exprs) | dict(plan.first.hoisted)
    streak = through_map(ast.Column(name), mapped)
    open_days = ~us_market_closed(days)
    rows = frame.loc[open_days].reset_index(drop=True)
    aside = replace(
        ctx,
        frame=rows,
        period=kept[open_days],
        warnings=[],
        row_warnings=[],
        history_beyond=[],
    )
    counted = evaluate(streak, aside)
    if not isinstance(counted, pd.Series):
        return None
    values = counted.to_numpy(dtype="float64", na_value=np.nan)
    best = np.nanmax(values[kept[open_days]], initial=0)
    if not best > 0:
        return None
    end = int(np.flatnonzero(kept[open_days] & (values == best))[0])
    positions = np.flatnonzero(open_days)
    return int(best), int(positions[_run_start(values, end)]), int(positions[end])


def _named_sessions(plan: Plan, sessions: np.ndarray) -> list[str]:
    """Each of the first ``NAMED_DAYS`` holiday ``sessions`` with its name and close:
    "2008-05-26 (Memorial Day: the stock market shut, the futures closed 13:00)"."""
    shown = sessions[:NAMED_DAYS]
    _, closed = day_edges(plan.dataset, shown)
    short = short_days(plan.dataset, plan.session, shown)
    named = []
    for day, end, cut in zip(shown, closed, short, strict=True):
        holiday = closure_name(OPTIONS_CALENDAR, day)
        futures = f", the futures closed {close_clock(plan.dataset, int(end))}" if cut else ""
        named.append(f"{day} ({f'{holiday}: ' if holiday else ''}the stock market shut{futures})")
    if len(sessions) > NAMED_DAYS:
        named.append(f"and {len(sessions) - NAMED_DAYS} more")
    return named


def _holiday_run_text(
    plan: Plan,
    frame: pd.DataFrame,
    length: int,
    records: int,
    found: list[tuple[int, np.ndarray]],
    stock: tuple[int, int, int] | None,
) -> str:
    """The sentence for the longest runs (``records`` of them, ``length`` long) of which
    ``found`` hold holiday sessions: each run's last row and those sessions' dates, and the
    longest run on the stock market's days alone (``stock``)."""
    ended = [row_label(frame, end, plan.timeframe.name) for end, _ in found]
    sessions = np.concatenate([held for _, held in found])
    n = len(sessions)
    counts = f"{'a US holiday session' if n == 1 else f'{n} US holiday sessions'} among"
    if records == 1:
        lead = f"The longest run ({length}, ending {ended[0]}) counts {counts} its days"
    elif len(found) == 1:
        lead = (
            f"Of the {records} longest runs ({length}), the one ending {ended[0]} counts "
            f"{counts} its days"
        )
    else:
        lead = (
            f"Of the {records} longest runs ({length}), those ending {', '.join(ended)} count "
            f"{counts} their days"
        )
    alone = "On the stock market's days alone, "
    if stock is not None:
        longest, _, end = stock
        alone = (
            f"On the stock market's days alone the longest run is {longest}, ending "
            f"{row_label(frame, end, plan.timeframe.name)}: "
        )
    it = "it" if n == 1 else "them"
    return (
        f"{lead}: {'; '.join(_named_sessions(plan, sessions))}. {alone}"
        f'"where": "not holiday()" with the streak in a then stage leaves {it} out.'
    )


def _broken_run_text(
    plan: Plan, frame: pd.DataFrame, length: int, stock: tuple[int, int, int], broke: np.ndarray
) -> str:
    """The sentence for a longer run on the stock market's days that the holiday sessions
    ``broke`` ended on all of the futures' days: "The longest run is 8 on all of the
    futures' days; on the stock market's days alone it is 11, ending 2010-12-02: the session
    of 2010-11-25 (Thanksgiving Day: the stock market shut, the futures closed 13:00) broke
    it. "where": "not holiday()" with the streak in a then stage counts it whole." """
    longer, _, end = stock
    sessions = "the session of" if len(broke) == 1 else "the sessions of"
    return (
        f"The longest run is {length} on all of the futures' days; on the stock market's days "
        f"alone it is {longer}, ending {row_label(frame, end, plan.timeframe.name)}: "
        f"{sessions} {'; '.join(_named_sessions(plan, broke))} broke it. "
        '"where": "not holiday()" with the streak in a then stage counts it whole.'
    )


def _holiday_sessions(plan: Plan, days: np.ndarray) -> np.ndarray:
    """Which of ``days`` are the US holiday sessions a streak record is told of: all of a
    stock index's, another instrument's short ones (its full ones are days like any other)."""
    holiday = us_market_closed(days)
    if holiday.any() and not plan.dataset.instrument.stock_index:
        holiday[holiday] = short_days(plan.dataset, plan.session, days[holiday])
    return holiday


def _record_columns(plan: Plan) -> list[str]:
    """The first stage's streak columns (mapped, or hoisted from an aggregate's argument)
    that its select reads the longest run of: max(run), arg_max(date(), run)."""
    mapped = dict(plan.first.map_exprs) | dict(plan.first.hoisted)
    found = []
    for item in plan.first.select:
        expr = item.expr
        if not isinstance(expr, ast.Call) or not expr.args:
            continue
        read = {"max": expr.args[0], "arg_max": expr.args[-1]}.get(expr.name.lower())
        if not isinstance(read, ast.Column) or read.name in found:
            continue
        call = through_map(read, mapped)
        if isinstance(call, ast.Call) and call.name.lower() == "streak":
            found.append(read.name)
    return found


def _streak_columns(plan: Plan) -> list[str]:
    """The first stage's map columns that are streak(cond) without a restart unit."""
    mapped = dict(plan.first.map_exprs)
    return [
        name
        for name, expr in plan.first.map_exprs
        if isinstance(call := through_map(expr, mapped), ast.Call)
        and call.name.lower() == "streak"
        and len(call.args) == 1
    ]


def _run_after(
    plan: Plan,
    ctx: EvalContext,
    frame: pd.DataFrame,
    name: str,
    last: int,
    data_end: dt.date,
) -> tuple[int, str, bool] | None:
    """The whole length of the run holding row ``last`` (the period's last), the label of
    its last row and whether it holds the data's last; None when the run does not go on
    past the period. Only the streak's condition is read (its count up to ``last`` is the
    streak's own), over stretches of the bars after the period, ``_FIRST_STEP`` days and
    then each twice the last, each with the history that condition reads
    (``barb.script.reach``), until the run ends. The whole first stage run again from the
    data's start over ever longer periods had taken NQ's ETH minute bars of 2008-02 from 2.1
    s and 255 MB to 10 s and 1.24 GB (p46w #7)."""
    assert plan.period.end is not None
    cond, needed = _condition(plan, name)
    reads = reach(cond, map_reach(needed))
    first = replace(plan.first, map_exprs=needed, where=None, hoisted=())
    # A condition reading a running total from the period's start (or all history) reads
    # from there each time, as the query did; any other only its look-back before a stretch.
    fixed = plan.period.start if reads.back is None or reads.in_period else None
    stamp = frame["timestamp"].iloc[last].to_datetime64()
    length, label = int(frame[name].iloc[last]), None
    done, step = plan.period.end, _FIRST_STEP
    while done < data_end:
        end = min(done + dt.timedelta(days=step), data_end)
        start = fixed if fixed is not None else done + dt.timedelta(days=1)
        period = replace(plan.period, start=start, end=end, count=None, unit=None)
        wide = bars_in_scope(replace(plan, period=period, first=first, reach=reads))
        rows = wide.frame.copy(deep=False)
        aside = replace(
            ctx, frame=rows, period=wide.in_period, warnings=[], row_warnings=[], history_beyond=[]
        )
        for column, expr in needed:
            rows[column] = evaluate(expr, aside)
        values = evaluate(cond, aside)
        if not isinstance(values, pd.Series):
            return None
        at = np.flatnonzero(wide.in_period & (rows["timestamp"].to_numpy() > stamp))
        known = ~values.isna().to_numpy()[at]
        true = as_known(values).to_numpy(dtype=bool)[at]
        ends = np.flatnonzero(known & ~true)
        grew = np.flatnonzero(true[: int(ends[0]) if len(ends) else len(true)])
        if len(grew):
            length += len(grew)
            label = row_label(rows, int(at[grew[-1]]), plan.timeframe.name)
            stamp = rows["timestamp"].iloc[int(at[grew[-1]])].to_datetime64()
        if len(ends):
            break
        if len(at):
            # Unknown rows after the last true one neither grow nor end the run.
            stamp = max(stamp, rows["timestamp"].iloc[int(at[-1])].to_datetime64())
        done, step = end, step * 2
    else:
        return (length, label, True) if label is not None else None
    return (length, label, False) if label is not None else None


def _condition(plan: Plan, name: str) -> tuple[ast.Expr, tuple[tuple[str, ast.Expr], ...]]:
    """The condition of the streak the map column ``name`` is, and the map's columns it
    reads (in map order): streak(close > sma) needs sma, not the rest of the map."""
    mapped = dict(plan.first.map_exprs)
    call = through_map(mapped[name], mapped)
    assert isinstance(call, ast.Call)
    cond = call.args[0]
    wanted, pending = set(), [cond]
    while pending:
        for column in columns_read(pending.pop()):
            if column in mapped and column not in wanted:
                wanted.add(column)
                pending.append(mapped[column])
    return cond, tuple((n, e) for n, e in plan.first.map_exprs if n in wanted)
