"""A condition the bars settle the same way on every row: a question they cannot answer.

An opening-range breakout long with its stop at the range's low, on daily bars, wrote
``stopped = low <= or_low``. A day's low includes the opening range's own low, so it is true
on every day: stop rate 1, -99.81 points a trade, where minute bars, which put the stop after
the entry, give 55.6% and +3.97 points (p32e Q19). Said when a comparison of two extremes
(highs, lows, opens, closes, ranges: of the bar, of a session, running), in the where or
under the select's statistics (through map names and if()), is true on every one of at least
``MIN_ROWS`` rows of the period, or false on every one, while its two sides are equal on
some, and on each of those rows one side's stretch of bars holds the other's, as a day holds
its opening range (``extreme_spans``). A comparison the market merely settled is not said:
no 1m bar of 2026-01-07 went above its 15-minute opening range's high, but the bars after
09:45 lie outside the range, and on 407 of the 517 days of 2024-25 one did (p38b Q21). A
rare or common event does not sit on its bound either, and one the where makes certain
(where gap_pct > 1, mean(gap_pct > 0)) still varies over the period's rows, so neither is
said.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pandas as pd

from barb.caveats.extreme_spans import Stretch, could_be_built, never_above, stretches
from barb.column_units import COUNTED_ROWS
from barb.errors import BarbError
from barb.lineage import nodes
from barb.planning import Plan
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import compare_numbers, evaluate
from barb.script.library import lookup

# Fewer rows than this can all agree by chance.
MIN_ROWS = 20
# The period's first rows a comparison is read on before all of them.
_HEAD_ROWS = 4096
_ORDERED = frozenset({"<", "<=", ">", ">="})


def bounded_condition_caveat(
    plan: Plan, ctx: EvalContext, frame: pd.DataFrame, given: np.ndarray, passed: np.ndarray
) -> list[str]:
    """The warning for the first stage's comparisons that no row of the period could
    settle otherwise.

    ``frame`` is the stage's rows with the bars read before the period and its map columns;
    ``given`` marks the period's rows, the where's to choose from, ``passed`` those it
    kept. Each comparison is judged over ``given``: one the where makes certain is not one
    the bars cannot answer."""
    stage = plan.first
    if not stage.comparisons & _ORDERED:  # no ordering to settle: no walk of the query
        return []
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    used: dict[ast.Compare, bool] = {}  # each comparison, and whether a statistic reads it
    if stage.where is not None:
        for compare in _comparisons(stage.where, mapped):
            used.setdefault(compare, False)
    for item in stage.select:
        if item.aggregate:
            for compare in _comparisons(item.expr, mapped):
                used.setdefault(compare, True)
    if not used:
        return []
    every = dataclasses.replace(ctx, frame=frame, warnings=[], row_warnings=[])
    stretch = stretches(plan.dataset.instrument, plan.session, plan.timeframe, frame)
    unit = COUNTED_ROWS.get(plan.timeframe.name, "bars")
    said: list[str] = []
    parts = False
    for compare, in_select in used.items():
        try:
            settled = _settled(compare, every, given)
            if settled is None or not _built(compare, mapped, stretch, settled[1]):
                continue
        except BarbError:  # what the query itself ran: not expected, never worth failing it
            continue
        holds, rows, bound, ties = settled
        kept = int(np.count_nonzero(rows & passed))
        among = f" (the {kept:,} kept among them)" if in_select and kept < rows.sum() else ""
        said.append(
            f"{_named(compare, stage.map_exprs)} is {str(holds).lower()} on all "
            f"{int(rows.sum()):,} {unit}{among}: {compare.left.to_text()} is {bound} "
            f"{compare.right.to_text()}{_ties(ties, rows)}, so it cannot be "
            f"{str(not holds).lower()}."
        )
        parts = parts or _reads_a_session(compare, mapped)
    if not said:
        return []
    return [" ".join(said) + _why(plan, parts)]


def _comparisons(expr: ast.Expr, mapped: dict[str, ast.Expr]) -> list[ast.Compare]:
    """The ordered comparisons ``expr`` reads, through map names, whose sides can bound
    each other: extremes (a day's low and its opening range's), not a number (rsi(14) < 30)
    nor close against its 200-day mean."""
    return [
        node
        for node in nodes(expr, mapped)
        if isinstance(node, ast.Compare)
        and node.op in _ORDERED
        and could_be_built(*_low_high(node), mapped)
    ]


def _low_high(compare: ast.Compare) -> tuple[ast.Expr, ast.Expr]:
    """The side that must be at or below the other for ``compare`` to be settled on its
    bound: > and <= are settled by left <= right, >= and < by right <= left."""
    if compare.op in {">=", "<"}:
        return compare.right, compare.left
    return compare.left, compare.right


def _built(
    compare: ast.Compare,
    mapped: dict[str, ast.Expr],
    stretch: Callable[[str], Stretch | None],
    rows: np.ndarray,
) -> bool:
    """Whether, on each of ``rows``, how the sides are built settles ``compare`` the way the
    bars did: high > or_high fails on every 1m bar inside the opening range by its making, on
    the bars after it only when the market stayed below."""
    built = never_above(*_low_high(compare), mapped, stretch)
    return bool(np.broadcast_to(built, rows.shape)[rows].all())


def _settled(
    compare: ast.Compare, ctx: EvalContext, given: np.ndarray
) -> tuple[bool, np.ndarray, str, int] | None:
    """Whether ``compare`` holds on every row of ``given`` where both sides have a value
    (True), on none (False), those rows, and how one side bounds the other ("never above")
    with the rows where they are equal; None when it varies, or its sides never meet."""
    left, right = (_numbers(evaluate(side, ctx)) for side in (compare.left, compare.right))
    if left is None or right is None or not given.any():
        return None
    # Most comparisons go both ways within the period's first rows: read those first, not
    # millions of minute bars.
    first = int(given.argmax())
    head = slice(first, first + _HEAD_ROWS)
    if _both_ways(compare.op, left[head], right[head], given[head]):
        return None
    rows = given & ~np.isnan(left) & ~np.isnan(right)
    if np.count_nonzero(rows) < MIN_ROWS:
        return None
    a, b = left[rows], right[rows]
    holds = compare_numbers(compare.op, a, b)
    if holds.any() and not holds.all():
        return None
    ties = int(np.count_nonzero(compare_numbers("==", a, b)))
    if not ties:
        return None  # never on its bound: a rare event, or a common one
    if ties == len(a):
        bound = "always equal to"
    elif compare_numbers("<=", a, b).all():
        bound = "never above"
    else:
        bound = "never below"
    return bool(holds[0]), rows, bound, ties


def _both_ways(op: str, left: np.ndarray, right: np.ndarray, given: np.ndarray) -> bool:
    """Whether ``left op right`` holds on some of the rows ``given`` and fails on others."""
    rows = given & ~np.isnan(left) & ~np.isnan(right)
    holds = compare_numbers(op, left[rows], right[rows])
    return bool(holds.any() and not holds.all())


def _numbers(values: pd.Series) -> np.ndarray | None:
    """A side's values as floats (NaN where empty); None for text, dates, true/false."""
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return None
    return values.to_numpy(dtype=float, na_value=np.nan)


def _ties(ties: int, rows: np.ndarray) -> str:
    return "" if ties == np.count_nonzero(rows) else f" (equal on {ties:,})"


def _named(compare: ast.Compare, map_exprs: tuple[tuple[str, ast.Expr], ...]) -> str:
    """``stopped (low <= or_low)`` when a map column holds the comparison, else its text."""
    for name, expr in map_exprs:
        if expr == compare:
            return f"{name} ({compare.to_text()})"
    return compare.to_text()


def _why(plan: Plan, parts: bool) -> str:
    """What a condition that cannot be otherwise usually means: on daily or longer bars
    compared with a part of their session (``parts``: the opening range's low), an order
    within the bar they cannot tell."""
    if plan.timeframe.intraday or not parts:
        return " A condition that cannot be otherwise usually asks what the bars cannot answer."
    name = plan.timeframe.name
    unit = COUNTED_ROWS.get(name, "bars").removesuffix("s")
    return (
        f" A condition that cannot be otherwise usually asks what {name} bars cannot answer: "
        f"a {unit}'s high and low hold all of it, before an entry and after it, so they cannot "
        'say whether a stop or a target came first; 1m bars can (get_concept "stop and '
        'target").'
    )


def _reads_a_session(compare: ast.Compare, mapped: dict[str, ast.Expr]) -> bool:
    """Whether ``compare`` reads session_high('09:30-09:45') or the like, through map names."""
    return any(_category(node) == "session" for node in nodes(compare, mapped))


def _category(node: ast.Node) -> str | None:
    """The library category of a call (session, indicator…), None for anything else."""
    spec = lookup(node.name) if isinstance(node, ast.Call) else None
    return spec.category if spec is not None else None
