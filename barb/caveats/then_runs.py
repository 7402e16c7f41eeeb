"""A then stage's running functions over the rows its where drops.

Both stages compute their map before their where (the first stage's map reads the bars its
where drops: history-aware), and so a then stage's map runs over every row of the first
stage's table. A backtest that keeps its trades with then.where and counts them in then.map
counted the rows dropped too: "buy the open on gap-up days" (where g == 1) read the most
losses in a row 6 and a total of 744.25, all 517 days', where its 289 trades give 7 and
391.75; an ORB's days without a break (pnl = close - entry < 0 there) read 9 losses in a row
for 6 (p39a M1). There is no third stage; the form that works empties the argument on the
rows the where drops (if(g == 1, pnl, 0 / 0)): cumsum, cummax, cummin, cumprod and rank skip
an empty value, and streak an unknown condition. bars_since counts rows, empty or not, so no
emptying fixes it: "trades since the last loss" as bars_since(pnl < 0) over the gap-up days
read 5 at most, the days since the last losing day, where the trades give 4. Its form is
streak(if(g == 1, pnl < 0, 0 / 0) == 0): the rows since the condition was last true are a
run of it being false, and the run skips the rows emptied; it differs only before the
condition's first true row, where it counts from the first row and bars_since is empty.

Said when the then stage's answer changes once its map runs over the rows kept alone, with
the calls whose values change: not when the dropped rows' argument is already empty (or 0
for a total), nor when they only change values the answer does not read (the longest run
elsewhere), nor for a call the where reads (a where on the run's own value, "cum_pct > 15",
keeps rows by the run over every row, as it asks).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from barb.errors import BarbError
from barb.lineage import kept_by_own_run, nodes
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import RowsOverAll, evaluate, evaluate_select
from barb.summary_text import listed_text

# Running functions that skip an empty argument, so that emptying it on the rows the where
# drops gives their run over the rows kept.
_SKIP_EMPTY = frozenset({"streak", "cumsum", "cummax", "cummin", "cumprod", "rank"})
# bars_since counts rows, empty or not: over the rows kept it is a streak of its condition
# being false, whose argument is emptied (``_counted_apart``).
_RUNNING = _SKIP_EMPTY | {"bars_since"}


def then_runs_caveat(
    plan: Plan,
    ctx: EvalContext,
    rows: pd.DataFrame,
    passed: np.ndarray | None,
    order: np.ndarray | None,
) -> list[str]:
    """The warning for the running calls of a then stage whose answer changes when its map
    runs over the rows its where kept alone (``rows``: the stage's rows with the columns it
    made; ``passed``: those kept; ``order``: each row's place in time order, for its map's
    aggregates). One sentence, with the form that runs them over the rows kept."""
    then = plan.then
    if then is None or then.where is None or passed is None or passed.all() or not passed.any():
        return []
    calls = _running_calls(then)
    if not calls:
        return []
    at = np.flatnonzero(passed)
    given = _rows_at(rows, at)
    everywhere = RowsOverAll(order)
    kept = RowsOverAll(order[at] if order is not None else None)
    try:
        alone = _mapped_again(then, ctx, given, kept)
        if _same(_answers(then, ctx, given), _answers(then, ctx, alone)):
            return []
        changed = [
            call.to_text()
            for call in calls
            if not _same(
                [evaluate(call, _over(ctx, rows), everywhere).to_numpy()[at]],
                [evaluate(call, _over(ctx, alone), kept).to_numpy()],
            )
        ]
    except BarbError:  # the stage ran them; over fewer rows some may not (a restart per day)
        return []
    if not changed:
        return []
    mapped = dict(then.map_exprs)
    # A call fed by another one changed (cummax(equity) of equity = cumsum(pnl)) follows it:
    # the form is for those the rows' own values feed.
    found = {call.to_text(): call for call in calls}
    roots = [
        found[text]
        for text in changed
        if not any(o != text and _reads(found[text].args[0], o, mapped) for o in changed)
    ]
    skipping = [call for call in roots if call.name.lower() != "bars_since"]
    counting = [call for call in roots if call.name.lower() == "bars_since"]
    said = (
        f"{listed_text(changed)} in then.map ran over all {len(passed):,} rows; then.where keeps "
        f"{len(at):,}"
    )
    if skipping:
        forms = list(dict.fromkeys(_emptied(call, then.where, mapped) for call in skipping))
        their, runs = (
            ("their arguments", "the runs skip")
            if len(skipping) > 1
            else ("its argument", "the run skips")
        )
        said += (
            f": make {their} empty on the rows the where drops ({'; '.join(forms)}) so {runs} them."
        )
    if counting:
        said += (" " if skipping else ", and ") + _counted_apart(counting, then.where)
    if any(found[text].name.lower() == "rank" for text in changed):
        said += " A rank among all the rows is right for one row's place among them all."
    return [said]


def _running_calls(then: StagePlan) -> list[ast.Call]:
    """The running calls of the then stage's map and select (through its names), less those
    its where reads, and a streak whose own condition it reads ("above and not next(above)"
    keeps each run's last row, where the streak is the run's length); in the order
    written."""
    assert then.where is not None
    mapped = dict(then.map_exprs) | dict(then.hoisted)
    filtered_on = {n.to_text() for n in nodes(then.where, mapped) if isinstance(n, ast.Call)}
    read = [expr for _, expr in then.map_exprs] + [item.expr for item in then.select]
    found: dict[str, ast.Call] = {}
    for expr in read:
        for node in nodes(expr, mapped):
            if (
                isinstance(node, ast.Call)
                and node.name.lower() in _RUNNING
                and node.args
                and node.to_text() not in filtered_on
                and not (
                    node.name.lower() == "streak" and kept_by_own_run(then.where, node, mapped)
                )
            ):
                found.setdefault(node.to_text(), node)
    return list(found.values())


def _over(ctx: EvalContext, frame: pd.DataFrame) -> EvalContext:
    """``ctx`` over ``frame`` for a then stage's map, its warnings kept apart."""
    return replace(
        ctx,
        frame=frame,
        period=None,
        step="then.map",
        warnings=[],
        row_warnings=[],
        history_beyond=[],
    )


def _rows_at(rows: pd.DataFrame, at: np.ndarray) -> pd.DataFrame:
    frame = rows.iloc[at].copy()
    frame.index = pd.RangeIndex(len(frame))
    return frame


def _mapped_again(
    then: StagePlan, ctx: EvalContext, frame: pd.DataFrame, over_all: RowsOverAll
) -> pd.DataFrame:
    """``frame`` with the stage's map, computed group keys and hoisted parts made again over
    its rows alone, in the order the stage makes them (``over_all``: how its map's
    aggregates read them)."""
    frame = frame.copy()
    for name, expr in then.map_exprs:
        frame[name] = evaluate(expr, _over(ctx, frame), over_all)
    for name, expr in then.group_keys:
        if not (isinstance(expr, ast.Column) and expr.name == name):
            frame[name] = evaluate(expr, _over(ctx, frame))
    for name, expr in then.hoisted:
        frame[name] = evaluate(expr, _over(ctx, frame))
    return frame


def _answers(then: StagePlan, ctx: EvalContext, frame: pd.DataFrame) -> list[Any]:
    """The stage's answer over ``frame``: its select's values (per group when it groups),
    or, with no select, its map's columns."""
    aside = _over(ctx, frame)
    if not then.select:
        return [frame[name].to_numpy() for name, _ in then.map_exprs]
    by = [name for name, _ in then.group_keys]
    return [
        evaluate_select(item.expr, aside, by).value
        if item.aggregate
        else evaluate(item.expr, aside).to_numpy()
        for item in then.select
    ]


def _same(left: list[Any], right: list[Any]) -> bool:
    """Whether two lists of answers (numbers, Series, arrays) hold the same values, empty
    ones alike."""
    for a, b in zip(left, right, strict=True):
        x = np.asarray(a.to_numpy() if isinstance(a, pd.Series) else a, dtype=object).ravel()
        y = np.asarray(b.to_numpy() if isinstance(b, pd.Series) else b, dtype=object).ravel()
        if x.shape != y.shape:
            return False
        xs = pd.to_numeric(pd.Series(x), errors="coerce").to_numpy(dtype=np.float64)
        ys = pd.to_numeric(pd.Series(y), errors="coerce").to_numpy(dtype=np.float64)
        if not np.allclose(xs, ys, rtol=1e-9, atol=1e-12, equal_nan=True):
            return False
        words = np.isnan(xs) & np.isnan(ys)  # text, dates: compared as they are
        if any(
            not (pd.isna(u) and pd.isna(v)) and u != v
            for u, v in zip(x[words], y[words], strict=True)
        ):
            return False
    return True


def _reads(expr: ast.Expr, text: str, mapped: dict[str, ast.Expr]) -> bool:
    """Whether ``expr`` reads the call written ``text``, through the map's names."""
    return any(isinstance(n, ast.Call) and n.to_text() == text for n in nodes(expr, mapped))


def _emptied(call: ast.Call, where: ast.Expr, mapped: dict[str, ast.Expr]) -> str:
    """The form that empties ``call``'s argument on the rows the where drops: the then.map
    column it reads made empty there ("pnl": "if(side != 0, …, 0 / 0)"), or, for a column
    of the first stage's (or one the where reads), the call with that column wrapped:
    streak(if(g == 1, pnl, 0 / 0) < 0); a streak of a true/false column, compared again:
    streak(if(g == 1, up, 0 / 0) == 1)."""
    argument = call.args[0]
    empty = ast.Binary("/", ast.Number(0), ast.Number(0))
    if call.name.lower() == "streak" and isinstance(argument, ast.Column):
        # A true/false column made empty is a number: streak() takes it as a condition
        # again compared with 1 (its unknowns stay unknown, and the streak skips them).
        kept = ast.Compare("==", ast.Call("if", (where, argument, empty)), ast.Number(1))
        return ast.Call(call.name, (kept, *call.args[1:])).to_text()
    columns = [n.name for n in ast.walk(argument) if isinstance(n, ast.Column)]
    read = {n.name for n in nodes(where, mapped) if isinstance(n, ast.Column)}
    for name in columns:
        if name in mapped and name not in read:
            return f'"{name}": "if({where.to_text()}, …, 0 / 0)"'
    if not columns:  # an argument of no column (dayname() == 'Mon'): the form in words
        return f"if({where.to_text()}, …, 0 / 0)"

    def emptied(node: ast.Node) -> ast.Node:
        if isinstance(node, ast.Column) and node.name == columns[0]:
            return ast.Call("if", (where, node, empty))
        return ast.with_children(node, emptied)

    return ast.Call(call.name, (emptied(argument), *call.args[1:])).to_text()


def _counted_apart(calls: list[ast.Call], where: ast.Expr) -> str:
    """What gives bars_since over the rows kept: it counts rows, empty or not, so emptying
    its argument changes nothing; a streak of its condition being false on the rows kept,
    empty on the others (which the streak skips), counts the rows kept since it was last
    true: bars_since(pnl < 0) is streak(if(g == 1, pnl < 0, 0 / 0) == 0)."""
    empty = ast.Binary("/", ast.Number(0), ast.Number(0))
    forms = [
        ast.Call(
            "streak",
            (ast.Compare("==", ast.Call("if", (where, call.args[0], empty)), ast.Number(0)),),
        ).to_text()
        for call in calls
    ]
    return (
        "bars_since counts rows, empty or not: over the rows kept write "
        f"{'; '.join(forms)} (from the first row on; bars_since is empty until its condition "
        "is first true). Over all rows it counts the days (rows) since, right for a question "
        "of time."
    )
