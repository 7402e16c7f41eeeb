"""Runs expression trees over a frame, vectorized: no per-row Python, no eval.

Two entry points: ``evaluate`` gives one value per row (map, where, group_by) and
``evaluate_aggregate`` one value per group, or one value in all (select; ``evaluate_select``
also hands back what its statistics were evaluated over). Both share the
operators below, which work on a Series or a scalar alike, so ``sum(volume) / count()`` is the
same division as ``volume / 2``.

Null handling is defined once, here:
- arithmetic propagates NaN; a division (or ``%``) by zero gives NaN, never inf, and the
  number of such values is added to ``ctx.warnings``; any other inf (overflow) becomes NaN;
- a comparison or ``in`` with a missing value is unknown (``!=`` and ``not in`` included);
  ``and`` / ``or`` / ``not`` take conditions only and are three-valued (unknown and false is
  false, unknown or true is true): barb.script.conditions;
- true/false count as 1/0 where a number is needed.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from barb.errors import ArgumentError, TypeMismatch, raise_collected
from barb.frames import period_start
from barb.script import ast
from barb.script.builtins import week_of_date
from barb.script.clock_order import (
    ClockComparison,
    TextComparison,
    as_minutes_hint,
    bar_clocks,
    clock_windows,
    clocks,
    in_session_order,
    names_bar_clock,
)
from barb.script.conditions import (
    as_known,
    as_numbers,
    condition,
    has_unknowns,
    is_condition,
    kleene,
    kleene_logical,
    plain_if_known,
)
from barb.script.context import EvalContext, RowGroups
from barb.script.daily_warnings import (
    SameDayCalls,
    known_from_first_bar,
    part_of_day_warning,
)
from barb.script.functions import KIND_NAMES, FunctionSpec, Param, value_kind
from barb.script.library import lookup
from barb.script.validator import (
    bind_arguments,
    misplaced_aggregate,
    unknown_column,
    unknown_function,
)
from barb.time_keys import is_clock_expr

_NUMERIC = frozenset({"number", "bool"})
_ACCEPTED_KINDS: dict[str, frozenset[str]] = {
    "number": _NUMERIC,
    "condition": frozenset({"bool"}),
    "number_or_date": _NUMERIC | {"datetime"},
    "number_or_clock": _NUMERIC,  # and text of times of day: _clock_texts
    "orderable": _NUMERIC | {"datetime"},  # and bar labels, times of day
    "any": frozenset({"number", "bool", "string", "datetime"}),
}
_ACCEPTED_NAMES = {
    "number": "a number",
    "condition": "a condition (true/false)",
    "number_or_date": "a number or a date",
    "number_or_clock": "a number or a time of day ('09:30')",
    "orderable": "a number, a date or a time of day ('09:30')",
    "any": "a value",
}
# A time of day as time() gives it: "09:30".
_CLOCK = re.compile(r"\d\d:\d\d")
# A bar's label as a second stage reads it, text in time order: a date, a week's first date,
# a month, a quarter, a year, or an intraday bar's date and time.
_BAR_LABEL = re.compile(r"\d{4}(-Q[1-4]|-\d\d(-\d\d( \d\d:\d\d)?)?)?")
# Integer results beyond this switch to float rather than wrap around.
_INT_LIMIT = 2.0**62

_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_MIRRORED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
# Decimal prices in binary floats: CL's 67.26 - 67.46 is -0.19999999999998863, and
# "abs(gap) >= 0.20" left that 20-cent gap out. Numbers this close, relative to their size,
# are the same number: the error of a subtraction of prices is ~1e-14 of the prices, and no
# two prices, ratios or sums a query compares differ by less than 1e-10 of themselves.
# Whole numbers (volume, counts) compare exactly.
SAME_NUMBER = 1e-10


def compare_numbers(op: str, a: Any, b: Any) -> Any:
    """``a op b`` for numbers, equal when within SAME_NUMBER of ``b``'s size: one comparison
    with ``b`` moved by that much (the band matters only where a is b, so b's size is both's)."""
    if np.result_type(a, b).kind != "f":
        return _COMPARISONS[op](a, b)
    tol = SAME_NUMBER * np.abs(b)
    if np.ndim(tol):
        tol[~np.isfinite(tol)] = 0.0  # an infinite b is only equal to itself
    elif not np.isfinite(tol):
        tol = 0.0
    if op == ">=":
        return a >= b - tol
    if op == "<=":
        return a <= b + tol
    if op == ">":
        return a > b + tol
    if op == "<":
        return a < b - tol
    same = (a >= b - tol) & (a <= b + tol)
    return same if op == "==" else ~same


def evaluate(expr: ast.Expr, ctx: EvalContext, over_all: RowsOverAll | None = None) -> pd.Series:
    """One value per row of ``ctx.frame``, on its index; literals are broadcast.

    With ``over_all`` (a second stage's map) an aggregate is one value over all the rows,
    repeated on each: ``days / sum(days) * 100`` is each group's share of the total.
    """
    value = _RowEvaluator(ctx, over_all=over_all, root=expr).eval(expr)
    if isinstance(value, pd.Series):
        return value
    return pd.Series(value, index=ctx.frame.index)


@dataclass(frozen=True)
class RowsOverAll:
    """How an aggregate in a second stage's map reads its rows: all of them, in time order.

    ``order`` gives each row's place in time (or key) order when the rows are not in it (the
    first stage sorted them); first(), last() and arg_max's ties read that order, as select's
    aggregates do.
    """

    order: np.ndarray | None = None


@dataclass(frozen=True)
class SelectValue:
    """A select item's value, with what its statistics were taken over."""

    value: Any
    # How select partitioned the rows.
    rows: RowGroups
    # Each sample statistic's (``FunctionSpec.sample``) sampled arguments as evaluated, by
    # call, before any conversion (a count's, ``FunctionSpec.counts_true``, its one): what its
    # sample size reads, so that ``mean(abs(close - open))`` on minute bars computes
    # abs(close - open) once, not again to count its rows.
    samples: Mapping[ast.Call, tuple[Any, ...]]


def evaluate_aggregate(
    expr: ast.Expr,
    ctx: EvalContext,
    by: Sequence[str] | None = None,
    *,
    groups: RowGroups | None = None,
) -> Any:
    """A select item's value: a Python scalar, or with ``by`` a Series per group.

    Groups are the distinct values of the ``by`` columns of ``ctx.frame``, sorted, rows with
    a missing key left out; several keys give a MultiIndex. ``groups``: those groups when
    the caller has them already (``RowGroups.taken``), not found again.
    """
    return evaluate_select(expr, ctx, by, groups=groups).value


def evaluate_select(
    expr: ast.Expr,
    ctx: EvalContext,
    by: Sequence[str] | None = None,
    *,
    groups: RowGroups | None = None,
) -> SelectValue:
    """``evaluate_aggregate``, with the groups and the statistics' arguments it evaluated."""
    if by:
        for name in by:
            if name not in ctx.frame.columns:
                raise unknown_column(name, list(ctx.frame.columns), ctx.step)
        if groups is not None:
            assert groups.length == len(ctx.frame)
        rows = groups if groups is not None else RowGroups.by_keys(ctx.frame, by, warn=ctx.warn)
    else:
        rows = RowGroups.whole(len(ctx.frame), warn=ctx.warn)
    evaluator = _AggregateEvaluator(ctx, rows, by or (), root=expr)
    value = evaluator.eval(expr)
    if rows.grouped:
        if not isinstance(value, pd.Series):
            value = pd.Series([value] * rows.ngroups, index=rows.index)
    else:
        value = _python_scalar(value)
    return SelectValue(value, rows, evaluator.samples)


def _is_missing(value: Any) -> bool:
    """Whether a scalar is a missing value (NaN, None, NaT)."""
    return not isinstance(value, pd.Series | np.ndarray) and bool(pd.isna(value))


def _python_scalar(value: Any) -> Any:
    if isinstance(value, pd.Series):
        value = value.iloc[0]
    if isinstance(value, np.datetime64):
        return pd.Timestamp(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


class _RowEvaluator:
    """Evaluates row by row (vectorized): every Series is aligned with ``ctx.frame``."""

    def __init__(
        self,
        ctx: EvalContext,
        inside_aggregate: str | None = None,
        over_all: RowsOverAll | None = None,
        root: ast.Node | None = None,
    ):
        self.ctx = ctx
        self.frame = ctx.frame
        self.step = ctx.step
        # The enclosing aggregate's text, when evaluating its arguments.
        self.inside_aggregate = inside_aggregate
        # Set where an aggregate is one value over all the rows (a second stage's map).
        self.over_all = over_all
        # The whole expression (a where's condition, a select item): the clocks it writes.
        self.root = root

    def eval(self, node: ast.Node) -> Any:
        if isinstance(node, ast.LITERAL_TYPES):
            return node.value
        if isinstance(node, ast.Column):
            return self.column(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Binary):
            return self.arithmetic(node, self.eval(node.left), self.eval(node.right))
        if isinstance(node, ast.Compare):
            return self.compare(node, self.eval(node.left), self.eval(node.right))
        if isinstance(node, ast.Logical):
            return self.logical(node, self.eval(node.left), self.eval(node.right))
        if isinstance(node, ast.Not):
            return self.negate(node, self.eval(node.operand))
        if isinstance(node, ast.Unary):
            return self.unary(node, self.eval(node.operand))
        if isinstance(node, ast.InList):
            return self.membership(node, self.eval(node.operand))
        raise TypeError(f"not an expression node: {node!r}")

    # --- names --------------------------------------------------------------------------

    def column(self, node: ast.Column) -> pd.Series:
        if node.name not in self.frame.columns:
            raise unknown_column(node.name, list(self.frame.columns), self.step)
        return _plain_dtype(self.frame[node.name])

    def call(self, node: ast.Call) -> Any:
        spec = self.spec(node)
        if spec.is_aggregate:
            if self.over_all is None or self.inside_aggregate:
                raise self.misplaced_aggregate(node)
            return self.aggregate_over_all(spec, node, self.over_all)
        if spec.body is not None:  # a named pattern: its expression, here
            return self.eval(spec.body)
        assert spec.impl is not None
        args = self.arguments(spec, node, self, self.frame.index)
        return self.finite(node, _aligned(spec.impl(self.ctx, *args), self.frame.index, spec))

    def spec(self, node: ast.Call) -> FunctionSpec:
        spec = lookup(node.name)
        if spec is None:
            raise unknown_function(node.name, list(self.frame.columns), self.step)
        return spec

    def misplaced_aggregate(self, node: ast.Call) -> ArgumentError:
        if self.inside_aggregate:
            return ArgumentError(
                f"Aggregates cannot be nested: {node.to_text()} is inside {self.inside_aggregate}.",
                step=self.step,
                hint="compute the inner value per row in map, then aggregate it once",
            )
        return misplaced_aggregate(node.to_text(), self.step)

    def aggregate_over_all(self, spec: FunctionSpec, node: ast.Call, over: RowsOverAll) -> Any:
        """The aggregate over every row of the frame: one value (a scalar, broadcast by the
        operators around it)."""
        inner = _RowEvaluator(self.ctx, inside_aggregate=node.to_text(), root=self.root)
        args = self.arguments(spec, node, inner, self.frame.index)
        order = over.order
        if order is not None and len(order) > 1 and not bool((np.diff(order) >= 0).all()):
            in_time = np.argsort(order, kind="stable")
            args = [_reordered(arg, in_time) for arg in args]
        assert spec.impl is not None
        rows = RowGroups.whole(len(self.frame), warn=self.ctx.warn)
        value = _python_scalar(spec.impl(_clocks_named(self.ctx, node, rows), *args))
        series = [arg for arg in args if isinstance(arg, pd.Series)]
        if series and _is_missing(value) and value_kind(series[0]) in ("string", "datetime"):
            # max(t) of times of day with none there (no row, or none known) is a missing
            # time, not a number: "t == latest" was refused as text against a number.
            return None if value_kind(series[0]) == "string" else np.datetime64("NaT", "ns")
        return value

    def arguments(
        self,
        spec: FunctionSpec,
        node: ast.Call,
        evaluator: _RowEvaluator,
        index: pd.Index,
        evaluated: list[Any] | None = None,
    ) -> list[Any]:
        """The call's arguments as the implementation receives them; each series argument
        as evaluated, before conversion, is also appended to ``evaluated`` when given."""
        bound, errors = bind_arguments(spec, node.args, step=self.step)
        raise_collected(errors)
        args = []
        literals = {p.name: v for p, v in bound if p.kind not in ("series", "daily")}
        for param, expr in bound:
            if param.kind == "daily":
                args.append(self.on_daily_bars(spec, node, expr, **literals))
                continue
            if param.kind != "series" or expr is None:
                args.append(expr)
                continue
            value = evaluator.eval(expr)
            if evaluated is not None:
                evaluated.append(value)
            args.append(self.argument(spec, param, expr, value, index))
        return args

    def on_daily_bars(
        self, spec: FunctionSpec, call: ast.Call, expr: ast.Expr, lag: int, session: str | None
    ) -> pd.Series:
        """daily()'s (weekly()'s, monthly()'s) argument evaluated over the daily (weekly,
        monthly) bars, all history, of ``session``, by default the query's, indexed by their
        trading dates (their weeks' and months' starts); what it warns of is said of the
        query, and so are a lag of 0 and a part of the day's own bars
        (``barb.script.daily_warnings``)."""
        inner = expr.expr if isinstance(expr, ast.OnDailyBars) else expr
        value = self.daily_values(spec, inner, session)
        if lag == 0 and not known_from_first_bar(inner, session):
            self.same_day(spec, call, inner, session)
        part = self.ctx.part_of_day
        if session is None and part is not None:
            own = whole = None
            if not is_condition(value):  # a share of dates would say little more
                own = self.on_rows(spec, value, lag)
                whole = self.on_rows(spec, self.daily_values(spec, inner, part.whole), lag)
            units = self.ctx.frame["trading_date"].to_numpy()
            if spec.name != "daily":
                units = period_start(units, spec.name)
            self.ctx.warn_rows(part_of_day_warning(call, inner, lag, part, units, own, whole))
        return value

    def same_day(
        self, spec: FunctionSpec, call: ast.Call, inner: ast.Expr, session: str | None
    ) -> None:
        """Lag 0 said of the rows kept, one sentence for the unit's calls: on daily rows, of
        those whose week (month) goes on after them in the data; on intraday rows, of any."""
        frame = self.ctx.frame
        ahead = np.ones(len(frame), dtype=bool)
        if not self.ctx.intraday and spec.name != "daily" and "trading_date" in frame.columns:
            dates = frame["trading_date"].to_numpy()
            units = self.ctx.on_daily_bars(session, spec.name).frame
            starts = period_start(units["trading_date"].to_numpy(), spec.name)
            lasts = pd.Series(units["trading_date"].to_numpy(), index=starts)
            last = lasts.reindex(period_start(dates, spec.name)).to_numpy()
            ahead = ~(dates >= last)  # a unit no bar holds: said
        found = SameDayCalls.of(self.ctx.row_warnings, spec.name)
        if found is None:
            found = SameDayCalls(spec.name)
            self.ctx.warn_rows(found)
        found.add(call, inner, session, ahead)

    def daily_values(self, spec: FunctionSpec, inner: ast.Expr, session: str | None) -> pd.Series:
        """``inner`` over ``session``'s bars of the call's unit (None: the query's session),
        by trading date (week's or month's start)."""
        bars = self.ctx.on_daily_bars(session, spec.name)
        value = evaluate(inner, bars)
        for message in bars.warnings:
            self.ctx.warn(message)
        kind = value_kind(value)
        if kind not in _NUMERIC:
            raise TypeMismatch(
                f"{spec.name}() needs a number or a condition, got {KIND_NAMES[kind]}: "
                f"{inner.to_text()}.",
                step=self.step,
                hint=spec.example or f"call it as {spec.signature()}",
            )
        dates = bars.frame["trading_date"].to_numpy()
        if spec.name != "daily":
            dates = period_start(dates, spec.name)
        return value.set_axis(pd.DatetimeIndex(dates))

    def on_rows(self, spec: FunctionSpec, by_date: pd.Series, lag: int) -> np.ndarray:
        """Each row's value of daily values ``by_date``, as the call gives it."""
        assert spec.impl is not None
        return np.asarray(spec.impl(self.ctx, by_date, lag, None), dtype=np.float64)

    def argument(
        self,
        spec: FunctionSpec,
        param: Param,
        expr: ast.Expr,
        value: Any,
        index: pd.Index,
    ) -> Any:
        """A series argument's ``value`` checked and converted for ``param``."""
        kind = value_kind(value)
        if (
            kind not in _ACCEPTED_KINDS[param.accepts]
            and not _labels_as_dates(param, value)
            and not _clock_texts(param, value)
        ):
            wanted = _ACCEPTED_NAMES[param.accepts]
            hint = spec.example or f"call it as {spec.signature()}"
            if kind == "string" and clocks(value) is not None:  # median(high_time): p43b Q30
                hint = (
                    "times of day are text: min(), max() and mode() take them as they are; "
                    f"for {spec.name}() " + _minutes_hint(expr, self.ctx)
                )
            raise TypeMismatch(
                f"{spec.name}() needs {wanted} for {param.name}, got {KIND_NAMES[kind]}: "
                f"{expr.to_text()}.",
                step=self.step,
                hint=hint,
            )
        if not isinstance(value, pd.Series):
            value = pd.Series(value, index=index)
        if param.accepts == "orderable" and kind == "string" and _clock_texts(param, value):
            value = in_session_order(value, self.ctx.night)
        if param.named:  # a builtin's own name ('minute_of_day' for hour()) is no query's
            value = value.rename(expr.to_text(), copy=False)
        if param.accepts == "number" and kind == "bool":
            if isinstance(value.dtype, pd.BooleanDtype):
                return as_numbers(value)
            value = value.astype(np.int64)
        elif param.accepts == "condition" and not param.keeps_unknown:
            value = as_known(value)
        return value

    # --- operators ----------------------------------------------------------------------

    def arithmetic(self, node: ast.Binary, left: Any, right: Any) -> Any:
        op = node.op
        self.need_numbers(node, op, left, right)
        a, b = _numbers(left), _numbers(right)
        ints = _is_int(a) and _is_int(b)
        with np.errstate(all="ignore"):
            if op == "+":
                out = a + b
            elif op == "-":
                out = a - b
            elif op == "*":
                out = np.multiply(a, b, dtype=np.float64)
                if ints and not np.any(np.abs(out) > _INT_LIMIT):
                    out = a * b
            elif op == "**":
                out = np.power(np.asarray(a, dtype=np.float64), b)
            else:
                out = self.divide(node, a, b, ints)
        return _wrap(self.finite(node, out), _index_of(left, right))

    def finite(self, node: ast.Node, out: Any) -> Any:
        """``out`` with inf (past a float's range: exp(close), 2 ** 100000000, the running
        product cumprod(1 + close)) as NaN, said as division by zero is: "max_x = n/a" had
        come with no reason."""
        if isinstance(out, pd.Series) and _never_float(out.dtype):
            return out  # np.asarray of dayname()'s categories made 4,500 strings to look at
        values = np.asarray(out)
        if values.dtype.kind != "f":
            return out
        infinite = np.isinf(values)
        count = int(np.count_nonzero(infinite))
        if not count:
            return out
        noun = "value" if count == 1 else "values"
        said = f" for {count:,} {noun}; those results are" if values.ndim else "; its result is"
        self.ctx.warn(f"'{node.to_text()}' overflowed (past ±1.8e308){said} empty (NaN).")
        if isinstance(out, pd.Series):
            return out.mask(infinite)
        return np.where(infinite, np.nan, out)

    def divide(self, node: ast.Binary, a: Any, b: Any, ints: bool) -> Any:
        zero = b == 0
        zeros = int(np.count_nonzero(zero & ~np.isnan(a)))
        if node.op == "%":
            out = np.mod(a, b) if ints and not zeros else np.mod(np.asarray(a, float), b)
        else:
            out = np.true_divide(a, b)
        if np.any(zero):
            out = np.where(zero, np.nan, out)
        # 0 / 0 written out is the reference's way to say "empty" (if(cond, x, 0 / 0)).
        written = isinstance(node.left, ast.Number) and isinstance(node.right, ast.Number)
        if zeros and not written:
            noun = "value" if zeros == 1 else "values"
            self.ctx.warn(
                f"Division by zero in '{node.to_text()}' for {zeros} {noun}; "
                "those results are empty (NaN)."
            )
        return out

    def unary(self, node: ast.Unary, value: Any) -> Any:
        kind = value_kind(value)
        if kind not in _NUMERIC:
            raise TypeMismatch(
                f"Sign '{node.op}' needs a number, got {KIND_NAMES[kind]} in '{node.to_text()}'.",
                step=self.step,
            )
        if node.op == "+" and kind == "number":
            return value
        a = _numbers(value)
        return _wrap(-a if node.op == "-" else a, _index_of(value))

    def need_numbers(self, node: ast.Node, op: str, left: Any, right: Any) -> None:
        lk, rk = value_kind(left), value_kind(right)
        if lk in _NUMERIC and rk in _NUMERIC:
            return
        if "datetime" in (lk, rk) and lk == rk and op == "-" and _within_days(left, right):
            # "Minutes between the day's high and low" with arg_max(timestamp, high): bar
            # times of one day (p43b Q11y), which the trading days below do not count.
            hint = "bar times within a day cannot be subtracted; " + as_minutes_hint(
                self.ctx.night, "timestamp"
            )
        elif "datetime" in (lk, rk) and lk == rk and op == "-" and self._daily_picks(node):
            # "Trading days between the year's high and low": two rows an aggregate picks
            # (p43f C2), whose distance is the difference of their numbers.
            numbered = ast.Binary("-", _numbered(node.left), _numbered(node.right))
            hint = (
                f"dates cannot be subtracted; calendar days: {_days_between(node)}; trading "
                f'days between the two rows: number the rows, map {{"n": "cumsum(1)"}}, and '
                f"select {numbered.to_text()}"
            )
        elif "datetime" in (lk, rk) and lk == rk and op == "-":
            # "Average days between inside days" is the question behind a date minus a date.
            hint = (
                f"dates cannot be subtracted; calendar days: {_days_between(node)}; trading "
                'days between the rows a condition keeps: map {"days": "prev(bars_since(cond)) '
                '+ 1"} with where cond'
            )
        elif "datetime" in (lk, rk):
            hint = "dates cannot be added or subtracted; compare them, e.g. date() >= '2024-03-01'"
        elif "string" in (lk, rk):
            hint = "text can only be compared (==, !=, in); numbers are written without quotes"
        else:
            hint = None
        raise TypeMismatch(
            f"Operator '{op}' needs numbers on both sides, got {KIND_NAMES[lk]} and "
            f"{KIND_NAMES[rk]} in '{node.to_text()}'.",
            step=self.step,
            hint=hint,
        )

    def _daily_picks(self, node: ast.Binary) -> bool:
        """Two rows of daily bars an aggregate picks, whose numbers count trading days."""
        return self.ctx.timeframe == "daily" and _picked_rows(node)

    def compare(self, node: ast.Compare, left: Any, right: Any) -> Any:
        lk, rk = value_kind(left), value_kind(right)
        op = node.op
        if lk in _NUMERIC and rk in _NUMERIC:
            a, b = _numbers(left), _numbers(right)
            with np.errstate(invalid="ignore"):
                out = compare_numbers(op, a, b)
            unknown = _isnull(a) | _isnull(b) if _has_nan(a) or _has_nan(b) else False
        elif "datetime" in (lk, rk) and {lk, rk} <= {"datetime", "string"}:
            a, b = self.datetimes(node, left), self.datetimes(node, right)
            if op in ("==", "!="):
                a, b = (
                    self.week_of(node.left, node.right, a),
                    self.week_of(node.right, node.left, b),
                )
            out = _COMPARISONS[op](a, b)
            unknown = np.isnat(a) | np.isnat(b)
        elif lk == rk == "string":
            if op in ("==", "!="):
                left = self.week_text(node.left, node.right, left)
                right = self.week_text(node.right, node.left, right)
            out = self.compare_text(node, left, right)
            unknown = _missing(left) | _missing(right)
            if self.ctx.night is not None:
                self.clock_order(node, left, right)
        else:
            raise self.mismatch(node, lk, rk)
        return condition(out, unknown, _index_of(left, right))

    def clock_order(self, node: ast.Compare, left: Any, right: Any) -> None:
        """Times of day compared as text over a session that crosses midnight, two columns
        or a column and a clock: said where that reads against the session's order, over the
        rows the comparison decides (those a where is given, the rows kept, or an
        aggregate's own)."""
        night = self.ctx.night
        assert night is not None
        compared: TextComparison | ClockComparison | None
        if isinstance(left, str) or isinstance(right, str):
            windows = clock_windows(self.root) if self.root is not None else frozenset()
            times = right if isinstance(left, str) else left
            decides = self.root is node and self.step.endswith("where")
            frame, columns = self.ctx.frame, self.ctx.bar_clock_columns
            compared = ClockComparison.of(
                night,
                node,
                times,
                windows,
                decides=decides,
                # Read only when the comparison is not a window idiom (a pass over the bars).
                own=lambda: bar_clocks(times, frame) or names_bar_clock(node, columns),
            )
        else:
            compared = TextComparison.of(night, node, left, right)
        if compared is None:
            return
        if self.inside_aggregate is not None or self.over_all is not None:
            message = compared.caveat()
        elif self.step.endswith("where"):
            message = compared.caveat(self.ctx.period)
        else:
            self.ctx.warn_rows(compared.caveat)
            return
        if message is not None:
            self.ctx.warn(message)

    def mismatch(self, node: ast.Node, lk: str, rk: str) -> TypeMismatch:
        if "datetime" in (lk, rk):
            hint = "write dates in quotes, e.g. date() == '2024-03-15'"
        elif "bool" in (lk, rk):
            hint = "a condition is true or false; compare numbers with numbers"
        else:
            hint = "numbers are written without quotes, text in quotes"
        return TypeMismatch(
            f"Cannot compare {KIND_NAMES[lk]} with {KIND_NAMES[rk]} in '{node.to_text()}'.",
            step=self.step,
            hint=hint,
        )

    def datetimes(self, node: ast.Node, value: Any) -> Any:
        """Dates as numpy datetime64; a text side must be a literal date."""
        if isinstance(value, pd.Series):
            if value_kind(value) != "datetime":
                raise self.mismatch(node, "datetime", value_kind(value))
            return value.to_numpy(dtype="datetime64[ns]")
        if isinstance(value, str):
            try:
                stamp = pd.Timestamp(value)
            except (ValueError, TypeError, OverflowError):
                stamp = pd.NaT
            if pd.isna(stamp):
                raise TypeMismatch(
                    f"'{value}' is not a date, in '{node.to_text()}'.",
                    step=self.step,
                    hint="write dates as 'YYYY-MM-DD' (or 'YYYY-MM-DD HH:MM')",
                )
            value = stamp.tz_localize(None) if stamp.tzinfo else stamp
        return np.datetime64(pd.Timestamp(value).to_datetime64(), "ns")

    def week_of(self, side: ast.Node, other: ast.Node, value: Any) -> Any:
        """A date written beside week() in an equality, as the week it falls in: week()
        names each week by its first trading date (2024-01-02 for the week of closed Monday
        2024-01-01), and ``week() == '2024-01-01'`` matched nothing. Any day of a week means
        that week, as a trader writes it, also against a column holding week() labels (a
        map's ``wk``, a first stage's ``week`` key), and date() on monthly (quarterly,
        yearly) bars means the bar holding the day; the label it was read as is said once,
        so the answer names the week as the table does. Orderings keep the date as
        written."""
        unit = self.labels_of(other) if isinstance(side, ast.String) else None
        if unit is None:
            return value
        label = week_of_date(self.ctx, value, unit)
        if label != value:
            day, named = pd.Timestamp(value).date(), pd.Timestamp(label).date()
            if unit == "weekly":
                said = f"week() names each week by its first trading date: '{day}' was read "
                said += f"as its week, {named}."
            else:
                bar = {"monthly": "month", "quarterly": "quarter", "yearly": "year"}[unit]
                said = f"date() of a {unit} bar is its {bar}'s first trading date: '{day}' "
                said += f"was read as its {bar}, {named}."
            self.ctx.warn(said)
        return label

    def labels_of(self, node: ast.Node) -> str | None:
        """The calendar unit ``node``'s values label, each by its first trading date:
        "weekly" for week() (date() on weekly bars) or a column of its labels, the bars'
        own unit for date() on monthly, quarterly or yearly bars; None for any other."""
        if isinstance(node, ast.Column):
            return "weekly" if node.name in self.ctx.week_columns else None
        if not isinstance(node, ast.Call) or node.args:
            return None
        name = node.name.lower()
        if name == "week":
            return "weekly"
        calendar = self.ctx.timeframe in ("weekly", "monthly", "quarterly", "yearly")
        return self.ctx.timeframe if name == "date" and calendar else None

    def week_text(self, side: ast.Node, other: ast.Node, value: Any) -> Any:
        """A date beside a column of week labels as text (weekly bars' ``week`` label, read by
        a second stage): the label of that date's week, as ``week_of`` reads it."""
        if not isinstance(value, str) or not _BAR_LABEL.fullmatch(value) or len(value) != 10:
            return value
        if self.labels_of(other) != "weekly":
            return value
        return str(pd.Timestamp(self.week_of(side, other, self.datetimes(side, value))).date())

    def compare_text(self, node: ast.Compare, left: Any, right: Any) -> Any:
        op = node.op
        if isinstance(right, pd.Series) and not isinstance(left, pd.Series):
            left, right, op = right, left, _MIRRORED[op]  # keep the Series on the left
        if not isinstance(left, pd.Series):
            return _COMPARISONS[op](left, right)
        if _is_ordered_category(left) and not isinstance(right, pd.Series):
            self.need_category(node, left, [right], ordering=op not in ("==", "!="))
        categorical = _categorical_codes(left, right, op)
        if categorical is not None:
            return categorical
        left = _uncategorized(left)
        right = _uncategorized(right)
        try:
            out = _COMPARISONS[op](left, right).to_numpy(dtype=bool)
        except TypeError as exc:  # an object column holding text and numbers together
            raise TypeMismatch(
                f"Cannot order mixed values in '{node.to_text()}'.", step=self.step
            ) from exc
        return out

    def logical(self, node: ast.Logical, left: Any, right: Any) -> Any:
        self.need_conditions(node, node.op, left, right)
        if has_unknowns(left) or has_unknowns(right):  # SQL's three-valued logic
            if (
                isinstance(left, pd.Series)
                and isinstance(right, pd.Series)
                and (left.index is right.index or left.index.equals(right.index))
            ):
                return kleene_logical(node.op, left, right)
            a, b = kleene(left), kleene(right)
            return plain_if_known(a & b if node.op == "and" else a | b)
        combine = np.logical_and if node.op == "and" else np.logical_or
        return _wrap(combine(_bools(left), _bools(right)), _index_of(left, right))

    def negate(self, node: ast.Not, value: Any) -> Any:
        self.need_conditions(node, "not", value)
        if has_unknowns(value):
            return ~value
        return _wrap(np.logical_not(_bools(value)), _index_of(value))

    def need_category(
        self, node: ast.Node, series: pd.Series, values: list[Any], *, ordering: bool = False
    ) -> None:
        """Days and months have fixed names: 'Monday' is not one of them, and a comparison
        with it would silently match nothing."""
        categories = series.dtype.categories
        unknown = [v for v in values if v not in categories]
        if not unknown:
            return
        listed = ", ".join(map(str, categories[:7] if len(categories) > 12 else categories))
        if len(categories) > 12:  # the minutes of a day
            listed += f" … {categories[-1]}"
        consequence = "cannot be ordered" if ordering else "could never match it"
        hint = f"compare with one of the listed values, e.g. '{categories[0]}'"
        if _CLOCK.fullmatch(str(categories[0])):  # times of day: '9:30' wants its zero
            hour, _, minute = str(unknown[0]).partition(":")
            padded = f"{hour.strip():0>2}:{minute.strip()}"
            example = padded if padded in categories else "09:30"
            hint = f"times are HH:MM with a leading zero, e.g. '{example}'"
        raise TypeMismatch(
            f"'{unknown[0]}' is not one of {listed}, so '{node.to_text()}' {consequence}.",
            step=self.step,
            hint=hint,
        )

    def need_conditions(self, node: ast.Node, op: str, *values: Any) -> None:
        kinds = [value_kind(v) for v in values]
        if all(k == "bool" for k in kinds):
            return
        got = " and ".join(KIND_NAMES[k] for k in kinds)
        raise TypeMismatch(
            f"'{op}' needs conditions (true/false), got {got} in '{node.to_text()}'.",
            step=self.step,
            hint="turn a number into a condition with a comparison, e.g. volume > 0",
        )

    def membership(self, node: ast.InList, value: Any) -> Any:
        kind = value_kind(value)
        items = [v.value for v in node.values]
        item_kinds = {value_kind(v) for v in items}
        if kind in _NUMERIC and item_kinds <= _NUMERIC:
            values = [int(v) if isinstance(v, bool) else v for v in items]
        elif kind == "datetime" and item_kinds == {"string"}:
            values = [
                pd.Timestamp(self.week_of(v, node.operand, self.datetimes(node, v.value)))
                for v in node.values
            ]
        elif item_kinds == {kind}:
            values = [self.week_text(v, node.operand, v.value) for v in node.values]
        else:
            other = next(iter(item_kinds - {kind}))
            raise self.mismatch(node, kind, other)
        if not isinstance(value, pd.Series):
            present = not pd.isna(value)
            return present and ((value in values) != node.negated)
        if kind in _NUMERIC:
            found = np.isin(_numbers(value), values)
        elif isinstance(value.dtype, pd.CategoricalDtype):  # by codes: no strings compared
            if value.dtype.ordered:
                self.need_category(node, value, values)
            categories = value.dtype.categories
            wanted = [categories.get_loc(v) for v in values if v in categories]
            found = np.isin(value.cat.codes.to_numpy(), wanted)
        else:
            found = value.isin(values).to_numpy()
        return condition(found != node.negated, value.isna().to_numpy(), value.index)


class _AggregateEvaluator(_RowEvaluator):
    """Evaluates a select item: aggregates reduce rows to one value per group."""

    def __init__(
        self,
        ctx: EvalContext,
        rows: RowGroups,
        by: Sequence[str],
        root: ast.Node | None = None,
    ):
        super().__init__(ctx, root=root)
        self.rows = rows
        self.by = tuple(by)
        self.samples: dict[ast.Call, tuple[Any, ...]] = {}

    def column(self, node: ast.Column) -> Any:
        if node.name in self.by:
            keys = self.rows.index
            assert keys is not None
            return pd.Series(keys.get_level_values(node.name), index=keys)
        if node.name not in self.frame.columns:
            raise unknown_column(node.name, list(self.frame.columns), self.step)
        raise TypeMismatch(
            f"Column '{node.name}' is used in select outside an aggregate, so it has no single "
            "value per result.",
            step=self.step,
            hint=f"wrap it in an aggregate, e.g. mean({node.name}) or max({node.name})",
        )

    def call(self, node: ast.Call) -> Any:
        spec = self.spec(node)
        if spec.is_aggregate:
            rows_evaluator = _RowEvaluator(
                self.ctx, inside_aggregate=node.to_text(), root=self.root
            )
            evaluated: list[Any] | None = [] if spec.sample or spec.counts_true else None
            args = self.arguments(spec, node, rows_evaluator, self.frame.index, evaluated)
            if evaluated is not None:
                self.samples[node] = spec.sampled(evaluated)
            return spec.impl(_clocks_named(self.ctx, node, self.rows), *args)
        if spec.category != "scalar":
            raise TypeMismatch(
                f"{node.to_text()} gives one value per row, so it cannot stand alone in select.",
                step=self.step,
                hint=f"put it inside an aggregate, e.g. mean({node.to_text()})",
            )
        # A scalar function over aggregated values: one value per group (or one in all).
        index = self.rows.index if self.rows.grouped else pd.RangeIndex(1)
        args = self.arguments(spec, node, self, index)
        result = self.finite(node, _aligned(spec.impl(self.ctx, *args), index, spec))
        if not self.rows.grouped and isinstance(result, pd.Series):
            return result.iloc[0]
        return result


# --- value helpers ----------------------------------------------------------------------------


# The aggregates that name their argument's values in a warning (ties).
_NAMING = frozenset({"arg_max", "arg_min", "mode"})


def _clocks_named(ctx: EvalContext, node: ast.Call, rows: RowGroups) -> RowGroups:
    """``rows`` told the unit of the aggregate's first argument where it is a column that
    holds a clock as a number (``ctx.clock_columns``): what an aggregate names its values
    by (arg_max's ties as 18:00, not -360)."""
    if node.name.lower() not in _NAMING or not node.args:
        return rows
    arg = node.args[0]
    if isinstance(arg, ast.Column):
        scale = ctx.clock_columns.get(arg.name)
    else:  # written in place: arg_max(hour() * 60 + minute(), high)
        scale = 1 if is_clock_expr(arg) else None
    return replace(rows, arg_clock=scale) if scale else rows


def _never_float(dtype: Any) -> bool:
    """Whether a Series of ``dtype`` cannot give a float array: numpy's own non-float
    dtypes, and categories that are not numbers."""
    if isinstance(dtype, np.dtype):
        return dtype.kind != "f"
    if isinstance(dtype, pd.CategoricalDtype):
        return dtype.categories.dtype.kind not in "iuf"
    return False


def _plain_dtype(series: pd.Series) -> pd.Series:
    """Nullable extension dtypes as the numpy dtypes the operators expect; a condition
    stays nullable only while some of its values are unknown."""
    dtype = series.dtype
    if isinstance(dtype, pd.BooleanDtype):
        return plain_if_known(series)
    if isinstance(dtype, pd.StringDtype):
        return series.astype(object)
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and pd.api.types.is_numeric_dtype(dtype):
        return series.astype(np.float64)
    return series


def _aligned(result: Any, index: pd.Index, spec: FunctionSpec) -> Any:
    """A function's result on the expected index (scalars stay scalars)."""
    if isinstance(result, pd.Series):
        if result.index is index or result.index.equals(index):
            return result
        values = result.to_numpy()
    elif isinstance(result, np.ndarray):
        values = result
    else:
        return result
    if len(values) != len(index):
        raise RuntimeError(f"{spec.name}() returned {len(values)} values for {len(index)} rows")
    return pd.Series(values, index=index)


def _reordered(arg: Any, positions: np.ndarray) -> Any:
    """A series argument's rows taken at ``positions`` (literal parameters unchanged)."""
    if not isinstance(arg, pd.Series):
        return arg
    out = arg.iloc[positions]
    out.index = pd.RangeIndex(len(out))
    return out


# Aggregates that give one row's value: a date they pick is that row's.
_ROW_PICKS = frozenset({"arg_max", "arg_min", "first", "last", "max", "min"})


def _picked_rows(node: ast.Binary) -> bool:
    """Whether both sides of ``node`` are a row an aggregate picks: arg_max(date(), high) -
    arg_min(date(), low)."""
    return all(
        isinstance(side, ast.Call) and side.name in _ROW_PICKS and bool(side.args)
        for side in (node.left, node.right)
    )


def _numbered(call: ast.Expr) -> ast.Expr:
    """The pick with the row's number n in place of its date: arg_max(n, high)."""
    assert isinstance(call, ast.Call)
    return ast.Call(call.name, (ast.Column("n"), *call.args[1:]))


def _within_days(*values: Any) -> bool:
    """Whether any of ``values`` (dates) holds a time other than midnight: bar times."""
    for value in values:
        if isinstance(value, pd.Series) and value_kind(value) == "datetime":
            stamps = value.to_numpy(dtype="datetime64[ns]")
            stamps = stamps[~np.isnat(stamps)]
            if (stamps != stamps.astype("datetime64[D]")).any():
                return True
    return False


def _index_of(*values: Any) -> pd.Index | None:
    for value in values:
        if isinstance(value, pd.Series):
            return value.index
    return None


def _wrap(result: Any, index: pd.Index | None) -> Any:
    if index is not None:
        return pd.Series(result, index=index)
    if isinstance(result, np.generic) or (isinstance(result, np.ndarray) and result.ndim == 0):
        return result.item()  # np.where on scalars gives a 0-d array
    return result


def _numbers(value: Any) -> Any:
    """A numeric numpy array or scalar; true/false become 1/0 (unknown: NaN)."""
    if isinstance(value, pd.Series):
        if isinstance(value.dtype, pd.BooleanDtype):
            return as_numbers(value).to_numpy()
        if isinstance(value.dtype, pd.CategoricalDtype):
            return np.asarray(value, dtype=np.float64)
        array = value.to_numpy()
        if array.dtype == np.bool_:
            return array.astype(np.int64)
        if array.dtype.kind not in "iuf":
            return array.astype(np.float64)
        return array
    if isinstance(value, bool | np.bool_):
        return np.int64(value)
    if isinstance(value, int | np.integer) and abs(int(value)) < _INT_LIMIT:
        return np.int64(value)
    return np.float64(value)


def _missing(value: Any) -> Any:
    """Where a value of any kind is missing (a scalar: never, literals are never missing)."""
    return value.isna().to_numpy() if isinstance(value, pd.Series) else False


def _is_int(value: Any) -> bool:
    return np.asarray(value).dtype.kind in "iu"


def _has_nan(value: Any) -> bool:
    """Whether a number or an array of them holds a NaN: one reduction (a min carries a NaN
    through) instead of a mask over every row, which most comparisons then find empty."""
    array = np.asarray(value)
    if array.dtype.kind != "f" or not array.size:
        return False
    return bool(np.isnan(array.min()))


def _isnull(value: Any) -> Any:
    return np.isnan(value) if np.asarray(value).dtype.kind == "f" else False


def _bools(value: Any) -> Any:
    if isinstance(value, pd.Series):
        return value.to_numpy(dtype=bool)
    return bool(value)


def _is_ordered_category(series: pd.Series) -> bool:
    return isinstance(series.dtype, pd.CategoricalDtype) and bool(series.dtype.ordered)


def _uncategorized(value: Any) -> Any:
    if isinstance(value, pd.Series) and isinstance(value.dtype, pd.CategoricalDtype):
        return value.astype(object)
    return value


def _days_between(node: ast.Binary) -> str:
    """``a - b`` of two dates as the call that counts the calendar days between them (p47a
    Q8: the hint offered only trading days, and CAGR's years were left to the model)."""
    return ast.Call("days_between", (node.right, node.left)).to_text()


def _categorical_codes(left: pd.Series, right: Any, op: str) -> np.ndarray | None:
    """Compare a categorical Series by its codes (so ordered categories keep their order).

    Used when the other side is one of the categories, or a Series with the same categories;
    None when the codes do not apply.
    """
    if not isinstance(left.dtype, pd.CategoricalDtype):
        return None
    categories = left.dtype.categories
    codes = left.cat.codes.to_numpy()
    ordering = op not in ("==", "!=")
    if isinstance(right, pd.Series):
        if not (isinstance(right.dtype, pd.CategoricalDtype) and right.dtype == left.dtype):
            return None
        other = right.cat.codes.to_numpy()
        present = (codes >= 0) & (other >= 0)
    else:
        if right not in categories:
            if ordering:
                return None
            other = -2  # never equal to a code
        else:
            other = categories.get_loc(right)
        present = codes >= 0
    if ordering and not left.dtype.ordered:
        return None
    return _COMPARISONS[op](codes, other) & present


def _clock_texts(param: Param, value: Any) -> bool:
    """Whether ``value`` is times of day as time() writes them ('09:30': its column, a first
    stage's column of it, or such text) where ``param`` takes them: floor(time(), 30)."""
    if param.accepts not in ("number_or_clock", "orderable"):
        return False
    return clocks(value if isinstance(value, pd.Series) else pd.Series([value])) is not None


def _labels_as_dates(param: Param, value: Any) -> bool:
    """Whether ``value`` is a column of bar labels where a date is wanted: min(date) in a
    second stage, over the first stage's date labels ("2008-01-10"), whose text sorts as
    their time does. It read "min() needs a number or a date … got text" (p33d C1)."""
    if param.accepts not in ("number_or_date", "orderable") or not isinstance(value, pd.Series):
        return False
    text = value.dropna()
    return bool(len(text)) and bool(text.astype(str).str.fullmatch(_BAR_LABEL).all())


def _minutes_hint(expr: ast.Expr, ctx: EvalContext) -> str:
    """``as_minutes_hint`` for times of day given where a number was wanted, on the clock
    they were read on: time('MSK')'s, written or held in a column (``ctx.text_zones``)."""
    zone = ctx.text_zones.get(expr.name) if isinstance(expr, ast.Column) else None
    if isinstance(expr, ast.Call) and expr.name.lower() == "time" and expr.args:
        written = expr.args[0]
        zone = written.value if isinstance(written, ast.String) else None
    taken = "time()" if zone is None else f"time('{zone}')"
    return as_minutes_hint(ctx.night if zone is None else None, taken, zone)
