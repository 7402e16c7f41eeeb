"""Whether a where decides a mean's outcome on the rows it left: no base rate to read it by.

``setup_noise`` reads a where's mean against the same mean over the rows the where did not
pick, and a chart draws that value as "all days: …". That is a base rate when the outcome
could have gone either way on those rows. It is none when the where's own condition settles
the outcome there:

- NQ's CASH days gapping down more than 1% (``gap_pct = (open / prev(close) - 1) * 100``,
  "where": "gap_pct < -1") filled the gap (``high >= prev(close)``) on 0.3243 of 515 days,
  said beside "all days: 0.8115". On the 2,452 gap-up days among the other 4,131 the gap is
  filled at the open, true by construction (high >= open >= prev(close)); the gap-downs
  alone fill on 0.6007, those of 0 to -1% on 0.6855. "32% against 81%" read as a 2.5x
  contrast where the honest one is 32% against 60-69% (p44a Q05).
- ES's RTH days that broke the opening range's high ("where": "high > or_high") closed
  above it on 0.5017 of 3,725; "all days: 0.4022" counted the 922 other days, on none of
  which a close above the range's high is possible (close <= high <= or_high) (p44a Q21).
- mean(gap_pct) "where": "gap_pct < -1" is -1.7 against 0.035 over all the rows, "far
  beyond its noise": the rows were picked by that very value (p44a Q05b).

So an item's baseline is left out, its sentence and the chart's line together, when its
value is read on the row's own bar (no ``next()``: an outcome read ahead is what a where
is asked to predict) and

- its argument is one of the where's own values, as written or through the map (``own``):
  mean(gap_pct) under gap_pct < -1, mean(range) under range > 100; or
- it holds one of the where's conditions as a part of its own (``_branches``): the where
  picks which branch of the outcome its rows read. gap_filled() under gap_down() asks of
  the gap-downs whether the high reached the close before and of the others whether the low
  did: NQ's 0.6085 beside "all days: 0.5889", gap-up fills and 16 days opening at the close
  mixed (p45d #1b); or
- read as values, not as written (``_decided_by_values``), a condition inside it is the
  same on every row kept, or on every other row, beyond chance at the other side's rate:
  "gap_pct > 0", "gap_pct > 0.5" and full_gap_up() keep only rows where gap_filled()'s
  open > prev(close) holds, and had kept "over all rows 0.5889 … more than noise (p =
  0.042)" where gap_up() said nothing (p46t B); or the whole outcome is the same on every
  row kept, when the where reads one of its values on the row's bar: close > prev(high)
  makes close > prev(close) true on NQ 2024's 84 rows ("Fisher p < 0.001", p46w #5), and
  high >= prev(close) is 1 on all 2,405 gap_up() rows, which had kept "all rows 0.8125"
  (p46h); or
- it is a true/false outcome sharing a level the query derived with the where
  (``prev(close)``, a map column such as ``or_high``: not the bars' own prices), and on
  the other rows it is empirically decided (``decided``): the same on every one of them
  (0 of Q21's 922), or on every one of them on one side of that level by a price of the
  row's own bar the where reads (``open`` above ``prev(close)``: all 2,452 of Q05's gap-ups)
  where that side holds at least ``DECIDED_SHARE`` of them; or
- it is a number sharing such a level with the where whose values on the rows kept lie
  apart from the others' (``_apart``): mean(gap_pct) under gap_down(), gap_pct = (open /
  prev(close) - 1) * 100, is below 0 on every row kept and not on any other, the where's
  own comparison written as another expression: -0.6841 beside "over all 4,646 rows
  0.03415, far beyond its noise" had been said (p46h).

The classic setup keeps its base rate: "where": "rsi(close, 14) < 30" with next(close) >
close read ahead, or close > open on the same day, shares no derived level (rsi's own
close is read inside a call over past bars, not beside it). Nor is "after an up day"
("where": "prev(close) > prev(open)", outcome close > prev(close)) left out: it shares
prev(close), but its where reads no price of the row's own bar and the outcome is up on
about half the other days, decided on none. A mean of numbers that only shares a level
(mean(close / prev(close) - 1) under a gap, the day's return on gap days) keeps its
baseline: part of its difference is the gap picked, but the rows kept and the others
overlap, and it is what the person compares.

Both expressions are read through the map and through the named patterns' definitions (the
function registry's, ``barb.script.patterns``): "where": "gap_down()" with mean(high >=
prev(close)) had kept "all days: 0.8125", the gap-ups filled at the open, which the same
where written "open < prev(close)" left out (p45d #1b). A mean of numbers is read the same
way: mean(range) under doji(), whose definition compares range, is the where's own value.

Cost: a walk of two expressions, up to ``MAX_PARTS`` of the outcome's comparisons evaluated
over the period's rows (a few ms on daily bars; gap_filled()'s 4 over NQ's 6.4 million
minute bars about 0.5 s when none is decided), and for a shared level up to four
comparisons.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping

import numpy as np
import pandas as pd

from barb.script import ast
from barb.script.library import lookup
from barb.script.reach import reads_other_bars

# The bars' own prices: a where and an outcome both reading close share no derived level.
PRICES = frozenset({"open", "high", "low", "close"})
# A side of the shared level holding at least this share of the other rows, the outcome the
# same on every one of them, decides the baseline: Q05's gap-ups are 2,452 of 4,131 (0.59).
DECIDED_SHARE = 0.25
# An outcome the same on every row kept is the where's consequence when the other rows' rate
# gives that by chance with less than this probability (rate ** rows kept).
BY_CHANCE = 1e-3
# The outcome's comparisons read as values, at most: gap_filled() holds 4.
MAX_PARTS = 6


def structural(
    arg: ast.Expr,
    where: ast.Expr,
    mapped: Mapping[str, ast.Expr],
    values: Callable[[ast.Expr], object],
    given: np.ndarray,
    inside: np.ndarray,
) -> bool:
    """Whether ``where`` decides ``arg``, a same-bar ``mean()`` argument, on the rows it did
    not pick (module docstring): ``values`` evaluates an expression over every row the stage
    had, ``given`` the rows the baseline is over, ``inside`` which of them the where kept."""
    where_nodes = {_text(n): n for n in same_bar_nodes(where, mapped)}
    if _text(arg) in where_nodes or _text(_through(arg, mapped)) in where_nodes:
        return True
    if _branches(arg, where, mapped):
        return True
    outcome = _bools(values(arg), given)
    if outcome is not None and _decided_by_values(
        arg, outcome, where, mapped, values, given, inside
    ):
        return True
    shared = [
        node
        for node in same_bar_nodes(arg, mapped)
        if _derived(node, mapped) and _text(node) in where_nodes
    ]
    if not shared:
        return False
    if outcome is None:
        return _apart(_numbers(values(arg), given), inside)
    others = ~inside & ~outcome.isna
    rest = outcome.values[others]
    if len(rest) < 2:
        return False
    if rest.all() or not rest.any():
        return True
    prices = [n.name for n in where_nodes.values() if isinstance(n, ast.Column) and _raw(n, mapped)]
    for level in shared:
        low = _numbers(values(level), given)
        if low is None:
            continue
        for price in prices:
            near = _numbers(values(ast.Column(price)), given)
            if near is None:
                continue
            for side in (near >= low, near < low):
                on = side[others]
                if np.count_nonzero(on) >= max(2, DECIDED_SHARE * len(rest)) and (
                    rest[on].all() or not rest[on].any()
                ):
                    return True
    return False


def _decided_by_values(
    arg: ast.Expr,
    outcome: _Bools,
    where: ast.Expr,
    mapped: Mapping[str, ast.Expr],
    values: Callable[[ast.Expr], object],
    given: np.ndarray,
    inside: np.ndarray,
) -> bool:
    """Whether the where decides a true/false outcome, or a condition inside it, by what
    they compute rather than how they are written: read as values over the rows given, the
    where's consequence whatever its spelling. ``gap_pct > 0``, ``gap_pct > 0.5`` and
    full_gap_up() all keep only rows where gap_filled()'s ``open > prev(close)`` holds
    (NQ's 2,405, 1,223 and 1,056 gap-ups), so they read the gap-ups' branch of it beside
    "all rows 0.5889", the other branch's fills mixed in (p46t B). And close > prev(high)
    makes close > prev(close) true on every row kept (NQ 2024: 84 of 84 beside 0.5328, "p <
    0.001", p46w #5). A part of the outcome (``_parts``) is decided by any where; the whole
    outcome only by a where reading one of its values on the row's bar (``_inputs``): a
    where over rsi(close, 14) or the day before shares none with close > open, and an
    outcome true on every row kept there would be a finding."""
    if _inputs(arg, mapped) & _inputs(where, mapped) and _one_side_decided(
        *_counts(outcome, inside)
    ):
        return True
    for part in _parts(arg, mapped):  # evaluated one at a time: the first decided ends it
        found = _bools(values(part), given)
        if found is None:
            continue
        kept, rest = _counts(found, inside)
        if _one_side_decided(kept, rest) or _one_side_decided(rest, kept):
            return True
    return False


def _parts(arg: ast.Expr, mapped: Mapping[str, ast.Expr]) -> list[ast.Expr]:
    """The comparisons inside ``arg`` on its row's own bar, through the map and the
    patterns, without ``arg`` itself: gap_filled()'s four. (An and of them is decided where
    they are: 2 evaluations fewer over 6.4 million minute bars, 65 ms each.)"""
    whole = {_text(arg), _text(_through(arg, mapped))}
    found: dict[str, ast.Expr] = {}
    for node in same_bar_nodes(arg, mapped):
        if isinstance(node, (ast.Compare, ast.InList)):
            text = _text(node)
            if text not in whole:
                found.setdefault(text, node)
    return list(found.values())[:MAX_PARTS]


def _inputs(expr: ast.Expr, mapped: Mapping[str, ast.Expr]) -> set[str]:
    """The bar's values ``expr`` reads on its own row, through the map and the patterns:
    close and prev(high) for close > prev(high); rsi(close, 14) (not close) for rsi(close,
    14) < 30."""
    return {
        _text(node)
        for node in same_bar_nodes(expr, mapped)
        if isinstance(node, ast.Column) or (isinstance(node, ast.Call) and node.args)
    }


def _counts(found: _Bools, inside: np.ndarray) -> tuple[tuple[int, int], tuple[int, int]]:
    """A condition's (rows, true rows) among the rows kept and among the others, its empty
    rows left out: counted, not indexed (minute bars are millions)."""
    known = ~found.isna
    kept, rest = inside & known, ~inside & known
    true = found.values & known
    return (
        (int(np.count_nonzero(kept)), int(np.count_nonzero(true & inside))),
        (int(np.count_nonzero(rest)), int(np.count_nonzero(true & ~inside))),
    )


def _one_side_decided(side: tuple[int, int], other: tuple[int, int]) -> bool:
    """Whether a condition is the same on every row of ``side`` (rows, true rows) where
    ``other``'s rows make that a chance below ``BY_CHANCE`` (none of them alike: no chance
    at all), and it is not the same on every row of both: gap_filled()'s open > prev(close)
    is true on all 1,223 of NQ's gaps over 0.5% and on 0.345 of the other days."""
    (rows, true), (others, others_true) = side, other
    if rows < 2 or others < 2 or 0 < true < rows:
        return False
    rate = others_true / others if true == rows else 1 - others_true / others
    if rate == 1:
        return False  # the same everywhere: it picks no branch
    return rate == 0 or rows * math.log(rate) < math.log(BY_CHANCE)


def _apart(numbers: np.ndarray | None, inside: np.ndarray) -> bool:
    """Whether the rows kept and the others lie apart in ``numbers``, each kept value below
    every other or above: the where picked the rows by that value's side of a level, as
    gap_down() (open < prev(close)) picks the rows where open / prev(close) - 1 < 0. Two
    rows on each side at least; a few thousand rows apart by chance alone would be one
    ordering among more than millions."""
    if numbers is None:
        return False
    known = ~np.isnan(numbers)
    kept, rest = numbers[inside & known], numbers[~inside & known]
    if len(kept) < 2 or len(rest) < 2:
        return False
    return bool(kept.max() < rest.min() or kept.min() > rest.max())


def same_bar_nodes(expr: ast.Expr, mapped: Mapping[str, ast.Expr]) -> Iterator[ast.Node]:
    """The nodes of ``expr`` valued on its row's own bar, through the map's columns and the
    named patterns' definitions (gap_down() is open < prev(close)): a call that reads other
    bars (prev(close), rsi(close, 14)) is one, its arguments not (their close is another
    bar's, or many bars')."""
    seen: set[str] = set()
    pending = [expr]
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, ast.Call) and (body := _pattern(node)) is not None:
            if f"{node.name}()" not in seen:
                seen.add(f"{node.name}()")
                pending.append(body)
            continue
        if isinstance(node, ast.Call) and reads_other_bars(node):
            continue
        if isinstance(node, ast.Column) and node.name in mapped:
            if node.name not in seen:
                seen.add(node.name)
                pending.append(mapped[node.name])
            continue
        pending.extend(node.children())


def _branches(arg: ast.Expr, where: ast.Expr, mapped: Mapping[str, ast.Expr]) -> bool:
    """Whether ``arg`` holds one of the where's conditions (a conjunct, through the map and
    the patterns) as a part of its own: the where then picks which branch of the outcome its
    rows read, and the other rows read another. gap_filled() is (open > prev(close) and low
    <= prev(close)) or (open < prev(close) and high >= prev(close)): under gap_down() its
    rows ask whether the high reached the close before, the others whether the low did (and
    a day opening at that close counts unfilled), so "all days: 0.5889" beside NQ's 0.6085
    mixed two outcomes (p45d #1b)."""
    parts = {_text(node) for node in same_bar_nodes(arg, mapped)}
    pending, seen = [where], set()
    while pending:
        condition = _through(pending.pop(), mapped)
        if isinstance(condition, ast.Logical) and condition.op == "and":
            pending += [condition.left, condition.right]
            continue
        text = _text(condition)
        if text in seen:
            continue
        seen.add(text)
        if text in parts:
            return True
    return False


def _pattern(call: ast.Call) -> ast.Expr | None:
    """A named pattern's definition (``barb.script.patterns``, from the function registry);
    None for any other call."""
    if call.args:
        return None
    spec = lookup(call.name)
    return spec.body if spec is not None else None


def _derived(node: ast.Node, mapped: Mapping[str, ast.Expr]) -> bool:
    """A level the query made: a call or a map column, not a bar's own price or a literal."""
    if isinstance(node, ast.Call):
        return bool(node.args)  # month(), holiday(): calendar keys, no level
    return isinstance(node, ast.Column) and node.name in mapped


def _raw(node: ast.Column, mapped: Mapping[str, ast.Expr]) -> bool:
    return node.name in PRICES and node.name not in mapped


def _through(expr: ast.Expr, mapped: Mapping[str, ast.Expr]) -> ast.Expr:
    """The expression a map column or a named pattern stands for, in turn."""
    while True:
        if isinstance(expr, ast.Column) and expr.name in mapped and mapped[expr.name] != expr:
            expr = mapped[expr.name]
        elif isinstance(expr, ast.Call) and (body := _pattern(expr)) is not None:
            expr = body
        else:
            return expr


def _text(node: ast.Node) -> str:
    return node.to_text()


class _Bools:
    """A condition's values on the rows given, and which of them are empty."""

    def __init__(self, values: np.ndarray, isna: np.ndarray) -> None:
        self.values, self.isna = values, isna


def _bools(series: object, given: np.ndarray) -> _Bools | None:
    if not isinstance(series, pd.Series) or len(series) != len(given):
        return None
    if not pd.api.types.is_bool_dtype(series.dtype):
        return None
    isna = series.isna().to_numpy()[given]
    return _Bools(series.to_numpy(dtype=bool, na_value=False)[given], isna)


def _numbers(series: object, given: np.ndarray) -> np.ndarray | None:
    if not isinstance(series, pd.Series) or len(series) != len(given):
        return None
    if not pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series):
        return None
    return series.to_numpy(dtype=np.float64, na_value=np.nan)[given]
