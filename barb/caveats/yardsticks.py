"""A bar's own size measured against an average that already holds it.

atr(14) on a bar is Wilder's average of true range up to and including that bar, so
``range > 1.5 * atr(14)`` asks whether the day outgrew a yardstick the day itself stretched
(1/14 of its own true range is in it). A stop sized at 1.5 ATR in the morning uses the ATR
known before the day, prev(atr(14)): on NQ's RTH days the same-bar form held on 139 of 4,635
days (3.0%), the morning's ATR on 193 (4.2%). Said when a comparison of the bar's range, true
range or move with a same-bar ATR (or a rolling mean of range) changes its count once the
yardstick is the previous bar's, with both counts and the prev() form. A stop written as a
level, low <= open - atr(14), is the same comparison (open - low >= atr(14)): 322 days hit
against 344 with the ATR known at the open.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np
import pandas as pd

from barb.column_units import COUNTED_ROWS
from barb.errors import BarbError
from barb.lineage import MAX_DEPTH, nodes, through_map
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate
from barb.script.library import contains_aggregate, lookup

_PRICES = frozenset({"open", "high", "low", "close"})
_LAGS = frozenset({"prev", "next"})
# Averages of a bar's size that count the bar itself: atr(), and a rolling mean (or ema) of
# range, true range or high - low.
_AVERAGES = frozenset({"rolling_mean", "ema"})
_YARDSTICKS = _AVERAGES | {"atr"}
_ORDERED = frozenset({"<", "<=", ">", ">="})


def same_bar_yardstick_caveat(
    plan: Plan, ctx: EvalContext, frame: pd.DataFrame, given: np.ndarray, passed: np.ndarray
) -> list[str]:
    """The warning for each comparison of a bar's own size with a yardstick of the same bar.

    ``frame`` is the first stage's rows with the bars read before the period and its map
    columns; ``given`` marks the rows its where chose from, ``passed`` those it kept. A
    comparison in the where is counted over the rows given to it, one in select (count(big))
    over the rows kept."""
    stage = plan.first
    if not stage.comparisons & _ORDERED or not stage.calls & _YARDSTICKS:
        return []  # no comparison with an average of the bar's size: no walk of the query
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    found = _comparisons([stage.where] if stage.where is not None else [], mapped, given)
    found += _comparisons(_answered(stage), mapped, passed)
    if not found:
        return []
    every = dataclasses.replace(ctx, frame=frame, warnings=[], row_warnings=[])
    unit = COUNTED_ROWS.get(plan.timeframe.name, "bars")
    counted: dict[ast.Compare, np.ndarray] = {}
    for compare, rows in found:  # one in the where is counted over the rows given to it
        counted.setdefault(compare, rows)
    said: list[str] = []
    for compare, rows in counted.items():
        lagged = _lag_yardsticks(compare, mapped)
        try:
            holds, defined = _holds(compare, every)
            held_before, _ = _holds(lagged, every)
        except BarbError:  # what the query itself ran: not expected, never worth failing it
            continue
        rows = rows & defined  # the warm-up's rows have no yardstick yet
        now = int(np.count_nonzero(holds & rows))
        before = int(np.count_nonzero(held_before & rows))
        if now == before:
            continue  # the same answer either way: nothing to say
        yardstick = through_map(next(_yardsticks(compare, mapped)), mapped).to_text()
        said.append(
            f"{compare.to_text()} compares each bar with {yardstick} of the same bar, an "
            "average that includes the bar itself (a wide bar stretches its own yardstick): "
            f"true on {now:,} of the {int(np.count_nonzero(rows)):,} {unit}; against the value "
            f"known before the bar, {lagged.to_text()}, on {before:,} ({_more(before, now)})."
        )
    return said


def _answered(stage: StagePlan) -> list[ast.Expr]:
    """What the stage answers with: its group keys and select (with no select, its map)."""
    exprs = [e for _, e in stage.group_keys]
    return exprs + ([item.expr for item in stage.select] or [e for _, e in stage.map_exprs])


def _comparisons(
    exprs: list[ast.Expr], mapped: dict[str, ast.Expr], rows: np.ndarray
) -> list[tuple[ast.Compare, np.ndarray]]:
    """The comparisons among ``exprs`` (through map names) of a bar's size with a same-bar
    yardstick, each with the rows it is counted over."""
    found = []
    for expr in exprs:
        for node in nodes(expr, mapped):
            if (
                isinstance(node, ast.Compare)
                and node.op in _ORDERED
                and not contains_aggregate(node)  # range > mean(atr14): one value for all
                and _bar_size(node, mapped)
                and next(_yardsticks(node, mapped), None) is not None
            ):
                found.append((node, rows))
    return found


def _bar_size(expr: ast.Node, mapped: dict[str, ast.Expr], depth: int = 0) -> bool:
    """Whether ``expr`` reads the bar's own size: range, true_range(), a difference of its
    prices (high - low, open - low, abs(close - open)) or its move from the close before
    (close - prev(close)), also when a comparison puts the prices on either side (low <=
    open - atr(14) is open - low >= atr(14)); not inside a window or an indicator, which are
    yardsticks."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(expr, ast.Compare) and _prices_apart(expr, mapped):
        return True
    if isinstance(expr, ast.Column):
        if expr.name == "range":
            return True
        return expr.name in mapped and _bar_size(mapped[expr.name], mapped, depth + 1)
    if isinstance(expr, ast.Call):
        spec = lookup(expr.name)
        if spec is not None and spec.name == "true_range":
            return True
        if spec is None or spec.category != "scalar":
            return False
    if isinstance(expr, ast.Binary) and expr.op == "-":
        sides = (expr.left, expr.right)
        if any(_price(s, mapped, lagged=False) for s in sides) and all(
            _price(s, mapped, lagged=True) for s in sides
        ):
            return True
    return any(_bar_size(child, mapped, depth) for child in expr.children())


def _prices_apart(compare: ast.Compare, mapped: dict[str, ast.Expr]) -> bool:
    """Whether a comparison, read as left - right, adds one of the bar's prices and takes
    away another (or the close before): low <= open - atr(14) holds low and -open, a
    difference of the bar's prices, where close > keltner_upper() holds one price only."""
    signed = [*_terms(compare.left, mapped, 1), *_terms(compare.right, mapped, -1)]
    return any(
        _price(term, mapped, lagged=False)
        and any(_price(other, mapped, lagged=True) for s, other in signed if s == -sign)
        for sign, term in signed
    )


def _terms(
    expr: ast.Expr, mapped: dict[str, ast.Expr], sign: int, depth: int = 0
) -> Iterator[tuple[int, ast.Expr]]:
    """The terms ``expr`` adds up, each with its sign, through map names: open - atr14 →
    (+1, open), (-1, atr14)."""
    expr = through_map(expr, mapped)
    if depth <= MAX_DEPTH and isinstance(expr, ast.Binary) and expr.op in ("+", "-"):
        yield from _terms(expr.left, mapped, sign, depth + 1)
        yield from _terms(expr.right, mapped, sign if expr.op == "+" else -sign, depth + 1)
    elif depth <= MAX_DEPTH and isinstance(expr, ast.Unary):
        yield from _terms(expr.operand, mapped, sign if expr.op == "+" else -sign, depth + 1)
    else:
        yield sign, expr


def _price(expr: ast.Node, mapped: dict[str, ast.Expr], *, lagged: bool) -> bool:
    """One of the bar's prices (or, with ``lagged``, also prev() of one)."""
    expr = through_map(expr, mapped)
    if lagged and isinstance(expr, ast.Call) and expr.name.lower() == "prev" and expr.args:
        return _price(expr.args[0], mapped, lagged=False)
    return isinstance(expr, ast.Column) and expr.name in _PRICES


def _yardsticks(expr: ast.Node, mapped: dict[str, ast.Expr], depth: int = 0) -> Iterator[ast.Expr]:
    """The same-bar averages of a bar's size ``expr`` reads (not under prev()), as written:
    atr(14), or atr14 when a map column holds it."""
    if depth > MAX_DEPTH:
        return
    if isinstance(expr, ast.Column):
        if expr.name in mapped:
            if _is_yardstick(through_map(expr, mapped), mapped):
                yield expr
            else:
                yield from _yardsticks(mapped[expr.name], mapped, depth + 1)
        return
    if isinstance(expr, ast.Call):
        if expr.name.lower() in _LAGS:
            return
        if _is_yardstick(expr, mapped):
            yield expr
            return
    for child in expr.children():
        yield from _yardsticks(child, mapped, depth)


def _is_yardstick(expr: ast.Expr, mapped: dict[str, ast.Expr]) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    name = expr.name.lower()
    if name == "atr":
        return True
    return name in _AVERAGES and bool(expr.args) and _bar_size(expr.args[0], mapped)


def _lag_yardsticks(expr: ast.Expr, mapped: dict[str, ast.Expr], depth: int = 0) -> ast.Expr:
    """``expr`` with each same-bar yardstick read a bar earlier: range > 1.5 * atr14 →
    range > 1.5 * prev(atr14); a map column holding one inside (ratio = range / atr14) is
    written out (range / prev(atr14))."""
    if depth > MAX_DEPTH:
        return expr
    if isinstance(expr, ast.Column):
        if expr.name not in mapped or next(_yardsticks(expr, mapped), None) is None:
            return expr
        if _is_yardstick(through_map(expr, mapped), mapped):
            return ast.Call("prev", (expr,))
        return _lag_yardsticks(mapped[expr.name], mapped, depth + 1)
    if isinstance(expr, ast.Call):
        if expr.name.lower() in _LAGS:
            return expr
        if _is_yardstick(expr, mapped):
            return ast.Call("prev", (expr,))
    return ast.with_children(expr, lambda child: _lag_yardsticks(child, mapped, depth))


def _holds(compare: ast.Expr, ctx: EvalContext) -> tuple[np.ndarray, np.ndarray]:
    """Where the comparison is true, and where it has a value at all."""
    values = evaluate(compare, ctx)
    defined = values.notna().to_numpy(dtype=bool)
    return values.fillna(False).to_numpy(dtype=bool) & defined, defined


def _more(before: int, now: int) -> str:
    return "more" if before > now else "fewer"
