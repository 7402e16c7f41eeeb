"""Short sessions a where or a ranking picks out of proportion, said of the numbers made of
the rows it picked.

A holiday's or early close's range and volume are a part day's, so a where that keeps
small days ("how many days of 2024 had an RTH range below 200") or a ranking by them ("the
average range of the 10 quietest days") keeps those sessions beyond their share of the
period: 2 of 2024's 10 quietest NQ RTH days against 10 of its 259 days. A table of such rows
names them (``short_sessions_caveat``); a count or mean of them said nothing, and the count
of "quiet days" held half days nobody asked for.

Said when the selection reads a size a part day makes small (range, volume, high and low, a
move to a price set after the open), and the rows it kept hold at least ``MIN_PICKED`` short
sessions that are at least ``MIN_PICKED_SHARE`` of them and ``OVER_SHARE`` times their share
of the period's rows. A where that is not about size holds them by chance, and a count of
its rows is no part day's: NQ's 9 MACD crosses of a half year held 1 (against 4 of its 130
days), and nothing is said. Nor of a plain yearly average (10 of 259, 3.9%), which picks
nothing. Read from the
rows' trading dates (``barb.short_days``, a binary search in the data's few short dates); the
values without them only for a single row of numbers, over the rows already kept.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.caveats.short_sessions import (
    SHORT_MARKS,
    kept_patterns,
    left_out,
    part_day_move,
    reads_part_day,
    short_session_names,
)
from barb.lineage import nodes
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.library import lookup
from barb.short_days import short_days
from barb.stage_output import StageOutput

# At least this many short sessions among the rows picked, this share of them and this many
# times their share of the period's rows: one half day among 9 signals is no pattern, and
# 1.5 times the base share is within what a where on anything picks by chance.
MIN_PICKED = 2
MIN_PICKED_SHARE = 0.05
OVER_SHARE = 2.0
# The form that leaves them out of the first stage.
LEAVE_OUT = "not holiday() and not early_close()"


def picked_short_caveat(
    plan: Plan,
    ctx: EvalContext,
    frame: pd.DataFrame,
    period: np.ndarray,
    first: StageOutput,
    then: StageOutput | None = None,
) -> list[str]:
    """The short sessions among the daily rows a first stage's where picked by size (its
    rows ``first.kept``), or among those a then stage reads that the first stage's where or
    ranking picked (its table, with ``then``'s where); ``period`` marks the period's rows
    of ``frame`` they were picked from. Named with their share against the period's, the
    numbers without them (a single row of them) and the where that leaves them out."""
    stage = plan.first
    if plan.timeframe.name != "daily" or set(SHORT_MARKS) & stage.calls:
        return []
    if (plan.then is None) != (then is None) or kept_patterns(stage):
        return []  # a then stage's rows are said once it has run; inside days: mother bars
    if then is None:
        by = _size_read(stage, stage.where) if stage.shape != "table" else []
        kept = first.kept
        if not by or kept is None or "trading_date" not in kept.columns:
            return []
        days = kept["trading_date"].to_numpy().astype("datetime64[D]")
    else:
        assert plan.then is not None
        by = _picked_by(stage) if plan.then.shape != "table" else []
        table = first.table
        if not by or table is None or "date" not in table.columns:
            return []
        rows = then.passed if then.passed is not None else np.ones(len(table), dtype=bool)
        days = np.asarray(table["date"].to_numpy()[rows], dtype="datetime64[D]")
    short = short_days(plan.dataset, plan.session, days)
    k, n = int(short.sum()), len(days)
    if k < MIN_PICKED or k < MIN_PICKED_SHARE * n:
        return []
    dates = frame["trading_date"].to_numpy()[period].astype("datetime64[D]")
    base = int(short_days(plan.dataset, plan.session, dates).sum())
    if k * len(dates) < OVER_SHARE * base * n:
        return []
    names = short_session_names(plan.dataset, np.sort(days[short]))
    text = (
        f"{k} of the {n} days {by} picked are short sessions (holidays, early closes: a part "
        f"day's range and volume), {_percent(k, n)} of them against "
        f"{_percent(base, len(dates))} of the period's {len(dates):,} days: {names}."
    )
    if then is None:
        assert first.kept is not None
        return [text + left_out(stage, ctx, first.kept, short, LEAVE_OUT)]
    where = f"… and {LEAVE_OUT}" if stage.where is not None else LEAVE_OUT
    return [f'{text} The first stage\'s "where": "{where}" leaves them out.']


def _picked_by(stage: StagePlan) -> str:
    """What a first stage under a then stage picked its rows by: its where, or its sort when
    a limit keeps the top rows ("the 10 quietest days"); "" when neither reads a size."""
    said = _size_read(stage, stage.where)
    if stage.sort and stage.limit is not None:
        made = dict(stage.map_exprs) | {item.name: item.expr for item in stage.select}
        keys = [made.get(key.column, ast.Column(key.column)) for key in stage.sort]
        ranked = [_size_read(stage, key, "the sort by") for key in keys]
        said = said or next((text for text in ranked if text), "")
    return said


def _size_read(stage: StagePlan, expr: ast.Expr | None, how: str = "the where on") -> str:
    """'the where on range': what ``expr`` reads that a part day makes small, through the
    map and named patterns' bodies (nr7() reads range); "" when it reads none."""
    if expr is None:
        return ""
    mapped = dict(stage.map_exprs) | {item.name: item.expr for item in stage.select}
    read = [expr] + [
        spec.body
        for node in nodes(expr, mapped)
        if isinstance(node, ast.Call)
        and not node.args
        and (spec := lookup(node.name)) is not None
        and spec.body is not None
    ]
    if any(reads_part_day(e, mapped) for e in read):
        columns = {n.name for e in read for n in nodes(e, mapped) if isinstance(n, ast.Column)}
        sizes = sorted(columns & {"range", "volume"}) or ["high and low"]
        return f"{how} {' and '.join(sizes)}"
    if any(part_day_move(e, mapped) for e in read):
        return f"{how} a move after the open"
    return ""


def _percent(part: int, whole: int) -> str:
    """'3.9%', '20%': two significant digits."""
    share = 100 * part / whole if whole else 0.0
    return f"{share:.2g}%" if share < 10 else f"{share:.0f}%"
