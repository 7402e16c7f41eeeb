"""A statistic of a value filled with a number on the rows where a condition does not hold.

"How often did NQ fall 3 days in a row each year, and what came on the 4th day", written to
keep every year listed (count(cond) without where keeps every group) as
``mean(if(st == 3, next_ret, 0))`` by year(), averaged the 0 of each year's ~245 other days
with the 4th days' returns: 2024 read -0.05722% where its 14 such days averaged -1.059%,
every year's mean shrunk ~18 times toward 0 ("no effect"), and nothing was said (p39b Q11t).
So a mean, median, percentile, standard deviation, skew or kurtosis of ``if(c, x, 0)`` or
``if(c, 0, x)`` (0 as written: 0, 0.0, -0) with x no number, directly or through map names,
is said with its value over x's rows alone and the forms that give it: ``if(c, x, 0 / 0)``,
an empty value the statistic leaves out, or ``"where": "c"``. Another number is an outcome
a case gives, not a place holder: an opening-range backtest's ``r = if(stopped, -1, if(won,
2, …))`` averages each stopped trade's -1 R as meant (p39a Q4: avg_r 0.02717 over 407 NQ
trades, not 1.177 "over the 192 others"), as ``if(stopped, -50, …)`` points do (p35c Q22).

The statistic decides whether the number is meant: a sum or a running total of the filled
value (``pnl = if(entry, close - open, 0)`` in ``sum(pnl)`` or ``cumsum(pnl)``) adds the 0
of a day without a trade, as meant, and max, min, count, first and last are not read here.
Not said either of a share (x a number too: ``mean(if(c, 1, 0))`` is ``mean(c)``), of a
clipped value (``if(ret > 0, ret, 0)`` is max(ret, 0): RSI's average gain, 0 on a down day,
and min(ret, 0) a downside deviation's), of a mean and a standard deviation of one value in
one item (``mean(r) / std(r)``, a Sharpe ratio of a strategy's daily returns, where a flat
day's 0 is a return), nor when the filled rows move the value by less than ``DILUTION`` of
itself in every group.

Cost: only for an item of that form, its condition evaluated once more over the stage's rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from barb.lineage import through_map
from barb.planning import SelectItem
from barb.script import ast
from barb.script.evaluator import SelectValue
from barb.script.hoisting import unhoisted
from barb.script.library import lookup
from barb.summary_text import group_name, value_text

# The statistics that read every value they are given as one of a sample: a filled number
# is a value among them. A sum adds it (0 adds nothing), a max or a count is not a sample.
FILLED_STATISTICS = frozenset({"mean", "median", "percentile", "std", "skew", "kurt"})
# Said when the filled rows move the value by more than this share of it (the share of
# filled rows, for a mean filled with 0), in some group.
DILUTION = 0.1
# A mean and a spread of one value in one item: a Sharpe ratio, a t-statistic.
_RATIO_PARTS = frozenset({"mean", "std"})


@dataclass(frozen=True)
class _Filled:
    """A statistic's argument that is ``if(cond, value, fill)`` (``fills_true``: the fill
    stands where cond is true, ``if(cond, fill, value)``), as the query wrote it."""

    call: ast.Call  # the statistic as the stage runs it (hoisted parts as columns)
    written: ast.Call  # as the query wrote it
    cond: ast.Expr
    value: ast.Expr
    fill: ast.Expr
    fills_true: bool
    through: str | None  # the map entry the if() is, "f = if(st == 3, next_ret, 0)", if any


def filled_statistic_caveat(
    select: Sequence[SelectItem],
    hoisted: Sequence[tuple[str, ast.Expr]],
    mapped: Mapping[str, ast.Expr],
    answers: Mapping[str, SelectValue],
    values: Callable[[ast.Expr], np.ndarray | None],
) -> list[str]:
    """One sentence per statistic of a filled value whose fill moves it; ``values`` gives an
    expression's numbers at the rows the statistics were taken over, in their order.
    "x = mean(if(st == 3, next_ret, 0)) reads the 0 of every row where st == 3 is false as
    a value beside next_ret where it is true: year 2024 holds 245 such 0s and 14 values,
    so x is -0.05722 there; over the 14 alone it is -1.059. Over the rows where st == 3 is
    true only: mean(if(st == 3, next_ret, 0 / 0)) (…) or "where": "st == 3"."."""
    said = []
    for item in select:
        for found in _filled(item, hoisted, mapped):
            text = _sentence(item, found, answers[item.name], values)
            if text and text not in said:
                said.append(text)
    return said


def _filled(
    item: SelectItem, hoisted: Sequence[tuple[str, ast.Expr]], mapped: Mapping[str, ast.Expr]
) -> list[_Filled]:
    """The statistics in ``item`` whose argument is a filled value."""
    calls = [
        node
        for node in ast.walk(item.expr)
        if isinstance(node, ast.Call) and node.name.lower() in FILLED_STATISTICS and node.args
    ]
    found = []
    for call in calls:
        written = unhoisted(call, hoisted)
        assert isinstance(written, ast.Call)
        arg = written.args[0]
        target = through_map(arg, mapped)
        if not (isinstance(target, ast.Call) and target.name.lower() == "if"):
            continue
        if len(target.args) != 3 or _ratio_part(call, calls):
            continue
        cond, then, other = target.args
        for fill, value, fills_true in ((other, then, False), (then, other, True)):
            number = _number(fill)
            if number != 0 or _number(value) is not None or not _reads_rows(value):
                continue
            if _clipped(cond, value, number):
                continue
            through = f"{arg.name} = {target.to_text()}" if isinstance(arg, ast.Column) else None
            found.append(_Filled(call, written, cond, value, fill, fills_true, through))
    return found


def _ratio_part(call: ast.Call, calls: list[ast.Call]) -> bool:
    """Whether a mean (or a std) stands with a std (a mean) of the same value in its item:
    mean(pnl) / std(pnl) * sqrt(252) reads a flat day's 0 as its return, as meant."""
    if call.name.lower() not in _RATIO_PARTS:
        return False
    return any(
        other.name.lower() in _RATIO_PARTS - {call.name.lower()} and other.args[:1] == call.args[:1]
        for other in calls
    )


def _clipped(cond: ast.Expr, value: ast.Expr, fill: float) -> bool:
    """Whether the condition compares the value itself with the fill: if(ret > 0, ret, 0) is
    max(ret, 0), a gain that is 0 on a down day (RSI's average gain; min(ret, 0) in a
    downside deviation), a value of every row and not a pick of some."""
    if not isinstance(cond, ast.Compare):
        return False
    sides = ((cond.left, cond.right), (cond.right, cond.left))
    return any(own == value and _number(bound) == fill for own, bound in sides)


def _number(node: ast.Expr) -> float | None:
    """A finite number written in the query (0, 0.0, -1); 0 / 0, the empty value, is none."""
    value = ast.literal_value(node)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _reads_rows(node: ast.Expr) -> bool:
    """Whether a value reads the rows (a column or a function), not numbers alone."""
    return any(isinstance(n, ast.Column | ast.Call) for n in ast.walk(node))


def _sentence(
    item: SelectItem,
    found: _Filled,
    answer: SelectValue,
    values: Callable[[ast.Expr], np.ndarray | None],
) -> str | None:
    sample = answer.samples.get(found.call)
    spec = lookup(found.call.name)
    extra = [ast.literal_value(arg) for arg in found.call.args[1:]]
    if not sample or spec is None or any(e is None for e in extra):
        return None
    numbers = pd.to_numeric(pd.Series(sample[0]), errors="coerce").astype(np.float64)
    cond = values(found.cond)
    if cond is None or len(cond) != len(numbers):
        return None
    filled = cond == (1.0 if found.fills_true else 0.0)  # unknown: empty, in neither
    kept = cond == (0.0 if found.fills_true else 1.0)
    if not filled.any():
        return None
    numbers.index = pd.RangeIndex(len(numbers))
    rows = answer.rows
    whole = spec.impl(rows, numbers, *extra)
    alone = spec.impl(rows, numbers.where(kept), *extra)
    if rows.grouped:
        fills = np.asarray(rows.count_where(filled), dtype=np.int64)
        picks = np.asarray(rows.count_where(kept), dtype=np.int64)
    else:
        fills = np.array([int(np.count_nonzero(filled))])
        picks = np.array([int(np.count_nonzero(kept))])
    before = np.atleast_1d(np.asarray(whole, dtype=np.float64))
    after = np.atleast_1d(np.asarray(alone, dtype=np.float64))
    gap = np.abs(before - after)
    with np.errstate(invalid="ignore"):
        moved = (
            np.isfinite(gap)
            & (fills > 0)
            & (picks > 0)
            & (gap > DILUTION * np.maximum(np.abs(before), np.abs(after)))
        )
    if not moved.any():
        return None
    at = int(np.argmax(np.where(moved, gap, -1.0)))
    return _text(item, found, rows.index, at, int(fills[at]), int(picks[at]), before, after)


def _text(
    item: SelectItem,
    found: _Filled,
    index: pd.Index | None,
    at: int,
    fills: int,
    picks: int,
    before: np.ndarray,
    after: np.ndarray,
) -> str:
    """The sentence, of group ``at`` (its filled rows and the others) when grouped."""
    cond, value, fill = found.cond.to_text(), found.value.to_text(), found.fill.to_text()
    written = found.written.to_text()
    subject = item.name if item.expr is found.call else written
    if item.expr is not found.call:
        shown = f"{written} in {item.name}"
    else:
        shown = written if item.name == written else f"{item.name} = {written}"
    if found.through is not None:
        shown += f" ({found.through})"
    filled, other = ("true", "false") if found.fills_true else ("false", "true")
    holds = f"{group_name(index, at)} holds" if index is not None else "the rows hold"
    there = " there" if index is not None else ""
    alone = f"over the {picks:,} alone" if picks > 1 else "over that one alone"
    empty = ast.Binary("/", ast.Number(0), ast.Number(0))
    branches = (empty, found.value) if found.fills_true else (found.value, empty)
    form = ast.Call(
        found.written.name, (ast.Call("if", (found.cond, *branches)), *found.written.args[1:])
    )
    kept = f"not ({cond})" if found.fills_true else cond
    listed = "; every group stays listed" if index is not None else ""
    return (
        f"{shown} reads the {fill} of every row where {cond} is {filled} as a value beside "
        f"{value} where it is {other}: {holds} {fills:,} such {fill}s and {picks:,} "
        f"value{'s' if picks != 1 else ''}, so {subject} is {value_text(before[at])}{there}; "
        f"{alone} it is {value_text(after[at])}. Over the rows where {cond} is {other} only: "
        f"{form.to_text()} "
        f"(0 / 0 is empty, which {found.written.name.lower()}() leaves out{listed}) or "
        f'"where": "{kept}".'
    )
