"""A single number within noise of no edge: a win rate beside a coin flip, a mean result
beside zero.

"Buy the 09:30 open, sell the 16:00 cash close" over all of NQ's 4,649 days answered win
rate 0.5109 and mean +0.03335% (1.086 points), the numbers alone, and "51% winners and a
positive average" reads as an edge. 2,375 wins of 4,649 is within noise of a coin flip (50%
± 1.5 percentage points at 2 standard errors, exact binomial p = 0.14), and the mean is 1.74
standard errors from 0. Groups are tested against each other (``group_noise``) and a where's
rows against the rest (``setup_noise``): a condition's edge is the change it makes, and CL's
next day up on 0.5149 of the days after a close above the 20-day mean is within noise of a
coin flip (binomial p = 0.12) but apart from the 0.4674 of the days below it (Fisher p =
0.0012). A single row over all the rows had no other rows to stand beside, and its null is
no edge. So in a single-row answer (a first stage's, or a second stage's over the first's
table of trades):

- ``mean(x)`` of a signed result is tested against 0 (one-sample t, the band max(2, t
  quantile) standard errors, as setup_noise's): a column whose unit (``barb.column_units``)
  is a distance, a percent or a ratio and whose values take both signs. A range is never
  below 0, and its mean's distance from 0 says nothing.
- ``mean(cond)``, the share of rows a condition holds on, is tested against 50% (the exact
  binomial test) only when the condition is the sign of a price move: a change from one
  open or close to another (``close - open``, ``next(close) / close - 1``, in points or
  percent, through prev/next and map names, or a conditional trade's ``if(c, move, 0 / 0)``)
  compared with 0, or the two prices compared (``close > open``: the day's move is up). A
  coin flip is no edge only there. The share of days above the 200-day mean (0.75), of
  ranges over 200 points, of closes above the day before's high or of returns over 0.5%, and
  the wins of a trade with a 20-point stop and no target (under half by design) have other
  baselines, and are never said to be a coin flip's.

Either may be scaled by a number (``mean(close > open) * 100``). Said only when the value is
within noise of no edge (|t| under the band, binomial p ≥ ``LEVEL``), one sentence for them
all; an edge plainly out of the noise gets no word (nor proof: one test of pure noise in 20
passes). Not said of an item setup_noise spoke of: its band already holds the answer.

A value read 2 bars ahead or more (``next(close, 20) / close - 1``) over rows whose windows
overlap is counted as setup_noise counts it (``barb.caveats.overlapping_windows``): NQ's
4,627 days of 20-day moves are the 232 taken so that no two share a day, the mean's standard
error over 232 (4.5 times the band of 4,627 independent rows), a share's moves scaled to
232; the sentence says so ("over the 4,627 rows whose 20-day windows overlap, counted as the
232 taken so that no two share a day"). A first stage's rows in time order only.

A flat row (close = open) is neither a win nor a loss, and the test is of the rows that
moved: 13% of the sample's NQ minute bars are flat, and their share of up bars is below half
by that much with no edge at all.

Cost: only for the items the query's names make a signed result or a move's sign, read from
the values the select took its means of (``SelectValue.samples``). A mean's lowest and
highest value (a range's mean ends there: 2-4 ms over NQ's 6.4 million minute bars), then
its sum and squares (15-25 ms there); a share's count, and its flat rows' (the move's two
sides evaluated again over the stage's rows: 18-26 ms there; not read when the share is
plainly past half). Under 1 ms on daily bars. scipy.special is imported at the first test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from barb.caveats.group_noise import LEVEL, binomial_p
from barb.caveats.overlapping_windows import (
    counted_text,
    forward_window,
    independent_count,
    overlapping,
    scaled_counts,
)
from barb.column_units import (
    DOLLARS,
    PERCENT,
    PERCENT_POINTS,
    POINTS,
    RATIO,
    SCALED,
    TICKS,
    first_map_unit,
    then_map_unit,
)
from barb.lineage import MAX_DEPTH, Lineage
from barb.planning import StagePlan
from barb.script import ast
from barb.script.evaluator import SelectValue
from barb.script.hoisting import unhoisted
from barb.script.query import Query
from barb.summary_text import two_digits, value_text

# The units of a result a trade or a day gains or loses in: a distance (a contract's dollars,
# ticks), a percent, a difference of percents, a return as a ratio.
RESULT_UNITS = frozenset({POINTS, DOLLARS, TICKS, SCALED, PERCENT, PERCENT_POINTS, RATIO})
# The band said is this many standard errors at least; a t quantile's for few rows.
ERRORS = 2.0
# The prices of a moment, that a trade enters or leaves at: a move is from one to another
# (a high or a low is the extreme of a bar: the close above the day before's high is under
# half the days with no edge at all).
_PRICES = ("open", "close")
_LAGS = frozenset({"prev", "next"})
_SESSION_PRICES = frozenset({"session_open", "session_close"})
_SIDES = frozenset({"<", "<=", ">", ">="})


def no_edge_caveat(
    stage: StagePlan,
    query: Query,
    values: Callable[[ast.Expr], np.ndarray | None],
    answers: Mapping[str, SelectValue],
    *,
    then: bool = False,
    said: Collection[str] = (),
    ahead: tuple[np.ndarray, str] | None = None,
    month: bool = False,
) -> list[str]:
    """For a single-row ``stage`` (``then``: a second stage): its means of a signed result
    and shares of a move's sign that are within noise of no edge, in one sentence; not for
    the items named in ``said`` (setup_noise spoke of them). ``values`` gives an expression's
    numbers at the rows kept, read as the stage's map read them. "No edge shown over these
    4,649 rows: win_rate 0.5109 is within noise of a coin flip (2,375 rows against 2,270,
    leaving out 4 flat: 50% ± 1.5 percentage points at 2 standard errors; binomial p =
    0.13); avg_pct 0.03335 is within noise of 0 (± 0.038 at 2 standard errors; t = 1.74)."
    ``ahead``: the rows kept's places in bars (ascending) and the bars' timeframe, to take
    a value read 2 bars ahead or more over overlapping windows one at a time (``_Counted``).

    ``month``: the period is a month or less. There a share whose condition the select
    also counts is the plain count's fraction, not a rate put forward as an edge: "how many
    times did ES close above its open in December", count(close > open) = 15 beside
    mean(close > open) = 0.6818 of 22, had been told "No edge shown … within noise of a coin
    flip (binomial p = 0.078)" (p48d C2). A share alone, or over a longer period (every
    December, a backtest's win rate beside its wins), is tested.
    """
    means = [(item.name, *found) for item in stage.select if (found := _mean(item.expr))]
    means = [found for found in means if found[0] not in said]
    if not means:
        return []
    plain_counts = _counted_conditions(stage) if month else set()
    names = _Names(query.to_json(), then)
    parts: list[_Part] = []
    for name, call, factor in means:
        answer, sample = answers[name], answers[name].samples.get(call)
        if not sample or not isinstance(sample[0], pd.Series):
            continue
        written = unhoisted(call.args[0], stage.hoisted)
        compared = names.compared(written)
        if compared is not None:
            if written.to_text() in plain_counts:
                continue  # "how many times in December": the count is the answer
            if pd.api.types.is_bool_dtype(sample[0].dtype) and names.coin_flip(compared):
                counted = _counted(call, stage, sample[0], ahead, compared, values)
                parts += _coin_flip(name, answer.value, sample[0], compared, values, counted)
        elif names.result(written):
            counted = _counted(call, stage, sample[0], ahead)
            parts += _zero(name, answer.value, sample[0], factor, counted)
    if not parts:
        return []
    sizes = {(part.rows, part.counted) for part in parts}
    if len(sizes) == 1:
        rows, counted = sizes.pop()
        said = [f"{part.value} {part.text}" for part in parts]
        over = f"the {counted.text()}" if counted else f"these {rows:,} rows"
        return [f"No edge shown over {over}: {'; '.join(said)}."]
    said = [
        f"{part.value} of {part.counted.text() if part.counted else f'{part.rows:,} rows'} "
        f"{part.text}"
        for part in parts
    ]
    return [f"No edge shown: {'; '.join(said)}."]


# The aggregates that count the rows a condition holds on.
_COUNTS = frozenset({"count", "sum"})


def _counted_conditions(stage: StagePlan) -> set[str]:
    """The conditions the select counts, as written: close > open of count(close > open)
    and of sum(close > open)."""
    found = set()
    for item in stage.select:
        for node in ast.walk(item.expr):
            if isinstance(node, ast.Call) and node.name.lower() in _COUNTS and len(node.args) == 1:
                found.add(unhoisted(node.args[0], stage.hoisted).to_text())
    return found


@dataclass(frozen=True)
class _Counted:
    """A value read ``window`` bars ahead whose ``rows`` (those with a value) overlap: as
    many as ``taken`` so that no two windows share a bar, as setup_noise counts them. NQ's
    4,627 days of next(close, 20) / close - 1 are 232 outcomes, not 4,627: the band of their
    mean is sqrt(4,627 / 232) = 4.5 times as wide, and a share's hits are scaled to 232."""

    window: int
    rows: int
    taken: int
    timeframe: str

    def text(self) -> str:
        return counted_text(self.rows, self.window, self.taken, self.timeframe)


@dataclass(frozen=True)
class _Part:
    """One item's part of the sentence: its name and value, the rows it is over, and what
    they are within noise of."""

    value: str
    rows: int
    text: str
    counted: _Counted | None = None


def _counted(
    call: ast.Call,
    stage: StagePlan,
    sample: pd.Series,
    ahead: tuple[np.ndarray, str] | None,
    compared: ast.Compare | None = None,
    values: Callable[[ast.Expr], np.ndarray | None] | None = None,
) -> _Counted | None:
    """How ``call``'s rows are counted when its value reads 2 bars ahead or more and
    enough of them overlap; None to count every row. A share's rows with a value are those
    whose compared sides both have one (next(close, 20) > close is false, not unknown, on
    the last 20 days, when the comparison is of plain floats)."""
    if ahead is None:
        return None
    places, timeframe = ahead
    window = forward_window(call.args[0], stage)
    if window < 2 or len(sample) != len(places):
        return None
    known = sample.notna().to_numpy()
    if compared is not None and values is not None:
        for side in (compared.left, compared.right):
            read = None if _number(side) is not None else values(side)
            if read is not None and len(read) == len(known):
                known &= ~pd.isna(read)
    picks = places[known]
    if not overlapping(picks, window):
        return None
    return _Counted(window, len(picks), independent_count(picks, window), timeframe)


def _mean(expr: ast.Expr) -> tuple[ast.Call, float] | None:
    """``mean(x)``'s call and the number it is scaled by (``mean(x) * 100``: 100); None for
    any other item."""
    factor = 1.0
    if isinstance(expr, ast.Binary) and expr.op in ("*", "/"):
        left, right = _number(expr.left), _number(expr.right)
        if right is not None and right != 0:
            expr, factor = expr.left, right if expr.op == "*" else 1 / right
        elif left is not None and expr.op == "*":
            expr, factor = expr.right, left
    if isinstance(expr, ast.Call) and expr.name.lower() == "mean" and len(expr.args) == 1:
        return expr, factor
    return None


def _coin_flip(
    name: str,
    value: Any,
    condition: pd.Series,
    compared: ast.Compare,
    values: Callable[[ast.Expr], np.ndarray | None],
    counted: _Counted | None = None,
) -> list[_Part]:
    """The share's part when the rows the condition holds on are within noise of half the
    rows that moved (the exact binomial test), flat ones left out. ``condition``: its
    values at the rows kept. ``counted``: the rows' windows overlap, and the test is of
    their share of the rows taken one at a time."""
    if condition.dtype == "boolean":  # unknown where a side is empty: out of the share
        known, hits = int(condition.count()), int(condition.sum())
    else:
        known, hits = len(condition), int(np.count_nonzero(condition.to_numpy()))
    strict = compared.op in ("<", ">")
    # A flat row is counted on the condition's false side (x > 0) or its true side (x >=
    # 0), and taking rows from the smaller count only moves it further from half: a share
    # plainly past half that way stays so whatever they are, and nothing is read again.
    plain = _counts((hits, known - hits), counted)
    if (hits > known - hits) == strict and binomial_p(*plain) < LEVEL:
        return []
    sides: list[np.ndarray | float | None] = []
    for side in (compared.left, compared.right):
        number = _number(side)  # pnl > 0: the 0 is read as it is
        sides.append(values(side) if number is None else number)
    if sides[0] is None or sides[1] is None:
        return []
    # Prices on a tick's grid, and their differences and ratios, are equal exactly or not.
    flat = int(np.count_nonzero(np.equal(*sides)))
    # Its side and the other, of the rows that moved.
    up, down = (hits, known - hits - flat) if strict else (hits - flat, known - hits)
    tested = _counts((up, down), counted)
    if sum(tested) < 2 or binomial_p(*tested) < LEVEL:
        return []
    rows = f"{up:,} rows against {down:,}, leaving out {flat:,} flat: " if flat else ""
    band = ERRORS * 50 / math.sqrt(sum(tested))  # percentage points: 2 × sqrt(0.25 / n) × 100
    return [
        _Part(
            f"{name} {value_text(value)}",
            known,
            f"is within noise of a coin flip ({rows}50% ± {two_digits(band)} percentage "
            f"points at {ERRORS:g} standard errors; binomial p = "
            f"{two_digits(binomial_p(*tested))})",
            counted,
        )
    ]


def _counts(sides: tuple[int, int], counted: _Counted | None) -> tuple[int, int]:
    """Two sides' rows as the binomial test takes them: as they are, or of overlapping
    windows each in its share of the rows taken one at a time (``scaled_counts``)."""
    if counted is None:
        return sides
    scaled = scaled_counts(sides, counted.taken, counted.rows)
    return int(scaled[0]), int(scaled[1])


def _zero(
    name: str, value: Any, values: pd.Series, factor: float, counted: _Counted | None = None
) -> list[_Part]:
    """The mean's part when its values take both signs and it is within its noise of 0.
    Read in whole passes, the cheapest first: a range's (a drawdown's) lowest (highest)
    value ends it; no copy but of the values that have one, when some have none.
    ``counted``: the values' windows overlap, and the standard error is over the rows taken
    one at a time."""
    if isinstance(values.dtype, np.dtype) and values.dtype.kind == "f":
        numbers = values.to_numpy()
    else:
        numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
    # NaN-blind: fmin and fmax pass over an empty value.
    if len(numbers) < 2 or not np.fmin.reduce(numbers) < 0 or not np.fmax.reduce(numbers) > 0:
        return []
    total = float(numbers.sum())
    if math.isnan(total):
        numbers = numbers[~np.isnan(numbers)]
        total = float(numbers.sum())
    n = len(numbers)
    # Squares about 0 less the mean's share: exact enough where it matters, a mean within a
    # few standard errors of 0 (mean² ≪ variance). einsum, not a BLAS dot, whose threads
    # cost two shared cores more than the pass.
    squares = float(np.einsum("i,i->", numbers, numbers))
    taken = n if counted is None else counted.taken
    if taken < 2:
        return []
    mean, error = total / n, math.sqrt(max(squares - total * total / n, 0.0) / (n - 1) / taken)
    from scipy import special  # here: importing it costs a process a few tenths of a second

    errors = max(ERRORS, float(special.stdtrit(taken - 1, 0.975)))
    if not error or abs(mean) >= errors * error:
        return []
    return [
        _Part(
            f"{name} {value_text(value)}",
            n,
            f"is within noise of 0 (± {two_digits(errors * error * abs(factor))} at "
            f"{errors:.3g} standard errors; t = {mean / error:.2f})",
            counted,
        )
    ]


class _Names:
    """A stage's names followed back through the query: its map, then a first stage's
    select and map (a second stage's), then the bars' own columns."""

    def __init__(self, query: Mapping[str, Any], then: bool) -> None:
        self.query, self.then = query, then
        self.lineage = Lineage(query)
        # Where a select item's names are read: its own stage's map.
        self.scope = 1 if then else len(self.lineage.scopes) - 1

    def result(self, expr: ast.Expr) -> bool:
        """Whether ``expr`` is in a unit a result gains or loses in, or a price move."""
        unit = (then_map_unit if self.then else first_map_unit)(expr, self.query)
        return unit in RESULT_UNITS or self._move(expr, self.scope, 0)

    def compared(self, condition: ast.Expr) -> ast.Compare | None:
        """The comparison ``condition`` is, or its map column was made by, when the stage's
        rows hold what it reads (a first stage's own, not a second stage's read through the
        first's select); else None."""
        expr, scope = self._made(condition, self.scope)
        if not (isinstance(expr, ast.Compare) and expr.op in _SIDES):
            return None
        return expr if scope == self.scope else None

    def coin_flip(self, compared: ast.Compare) -> bool:
        """Whether ``compared`` is the sign of a price move (see the module's text)."""
        left, right = _number(compared.left), _number(compared.right)
        if right == 0:
            return self._move(compared.left, self.scope, 0)
        if left == 0:
            return self._move(compared.right, self.scope, 0)
        if right == 1 or left == 1:  # close / open > 1
            return self._ratio(compared.left if right == 1 else compared.right, self.scope, 0)
        return self._price(compared.left, self.scope, 0) and self._price(
            compared.right, self.scope, 0
        )

    def _made(self, expr: ast.Expr, scope: int) -> tuple[ast.Expr, int]:
        """The expression a name was made by (its own when none), and where its names are
        read."""
        for _ in range(MAX_DEPTH):
            if not isinstance(expr, ast.Column):
                break
            found = self.lineage.definition(expr.name, scope)
            if found is None:
                break
            expr, _, scope = found
        return expr, scope

    def _move(self, expr: ast.Expr, scope: int, depth: int) -> bool:
        """A value whose sign is a price move's: one price less another, a ratio of them
        less 1 or its log, scaled by a positive number or price, negated (a short), lagged,
        or an if() of moves and empty values (0 / 0)."""
        if depth > MAX_DEPTH:
            return False
        expr, scope = self._made(expr, scope)
        depth += 1
        if isinstance(expr, ast.Binary):
            left, right = expr.left, expr.right
            if expr.op == "-":
                if _number(right) == 1:
                    return self._ratio(left, scope, depth)
                return self._price(left, scope, depth) and self._price(right, scope, depth)
            if expr.op == "*" and self._positive(left, scope, depth):
                return self._move(right, scope, depth)
            if expr.op in ("*", "/") and self._positive(right, scope, depth):
                return self._move(left, scope, depth)
            return False
        if isinstance(expr, ast.Unary):
            return self._move(expr.operand, scope, depth)
        if not isinstance(expr, ast.Call):
            return False
        name, args = expr.name.lower(), expr.args
        if name in _LAGS and args:
            return self._move(args[0], scope, depth)
        if name == "log" and len(args) == 1:
            return self._ratio(args[0], scope, depth)
        if name == "if" and len(args) == 3:
            moves = [self._move(arg, scope, depth) for arg in args[1:]]
            return any(moves) and all(m or _empty(a) for m, a in zip(moves, args[1:], strict=True))
        return False

    def _ratio(self, expr: ast.Expr, scope: int, depth: int) -> bool:
        """One price over another."""
        expr, scope = self._made(expr, scope)
        return (
            isinstance(expr, ast.Binary)
            and expr.op == "/"
            and self._price(expr.left, scope, depth + 1)
            and self._price(expr.right, scope, depth + 1)
        )

    def _positive(self, expr: ast.Expr, scope: int, depth: int) -> bool:
        number = _number(expr)
        return number > 0 if number is not None else self._price(expr, scope, depth)

    def _price(self, expr: ast.Expr, scope: int, depth: int) -> bool:
        """An open or a close: the bars' (a joined instrument's: ``es_close``), a lagged one,
        a named session's (``session_open('RTH')``)."""
        if depth > MAX_DEPTH:
            return False
        expr, scope = self._made(expr, scope)
        if isinstance(expr, ast.Column):  # no expression made it
            name = expr.name.lower()
            return name in _PRICES or name.endswith(tuple(f"_{price}" for price in _PRICES))
        if isinstance(expr, ast.Call):
            name = expr.name.lower()
            if name in _SESSION_PRICES:
                return True
            if name in _LAGS and expr.args:
                return self._price(expr.args[0], scope, depth + 1)
        return False


def _number(expr: ast.Expr) -> float | None:
    """A number literal's value (a signed one too); None for anything else (true is no 1)."""
    value = ast.literal_value(expr)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _empty(expr: ast.Expr) -> bool:
    """A division by the number 0: an empty value (0 / 0), a row left out of the mean."""
    return isinstance(expr, ast.Binary) and expr.op == "/" and _number(expr.right) == 0
