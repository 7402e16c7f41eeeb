"""The unit of a result's column, worked out from the expression that made it.

A column's name says little: ``nq_vol`` is a volatility in percent, not a volume, and
``p_close_above_open`` is a share of days, not a price. So the unit is read from the query:
a select item or a map entry is followed through the names it uses (``mean(next_chg)`` →
``next(chg_pct)`` → ``(close - prev(close)) / prev(close) * 100``, a percent) down to the
bars' own columns, and combined by what each operator and function does to units: a
difference of prices is points, a price over a price a ratio, a ratio times 100 a percent,
the mean of a condition a share of rows. Arithmetic on mixed units, or an unknown function,
gives no unit: no unit is better than a wrong one. A column's name is read only when no
expression made it (the bars' and a joined instrument's columns).

Ticks and point values are not in a Result, so price differences are "points"; the charts
write the instrument's own word for them (``Instrument.price_unit``: CL's dollars). A
distance scaled by a number (``range * 50``, ``range / 0.01``) is no longer one: it is a
contract's dollars, a count of ticks or a multiple of the distance, which only the name
given to it tells ("avg_usd = 1,744.96 points" was ES's range in dollars per contract). So
it is dollars when a name on its way says so (``usd``, ``pnl`` …), ticks when one says
ticks, else no unit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from barb.lineage import MAX_DEPTH, Lineage
from barb.script import ast
from barb.script.library import library

# Units shown to a person ("245 points", "61%"); COUNT is shown as days or bars.
PRICE = "price"
POINTS = "points"
# An instrument's own word for points, when it has one (CL's moves are in dollars): the
# charts write it for a difference of its prices (``barb.charts.columns.unit``).
DOLLARS = "dollars"
PERCENT = "%"
TICKS = "ticks"
SHARE = "share"  # a fraction of rows (0.61), written as a percent (61%)
PERCENT_POINTS = "pp"  # a difference of two percents: 2.1% - 1.1% is 1 pp, not 1%
CONTRACTS = "contracts"
COUNT = "count"
# A percentile rank, 0-100 (rank(range) = 59.7): "59.7 percentile", not a bare 59.7 that
# reads as points.
PERCENTILE = "percentile"
# Units met on the way and never shown: a plain number (100, sqrt(252)), a quotient of like
# quantities (a return of 0.012), a true/false condition, and a known mixture (price × volume).
SCALAR, RATIO, CONDITION, MIXED = "scalar", "ratio", "condition", "mixed"
# A distance (points, dollars, ticks) times or over a number other than 1: a contract's
# dollars (range * 50), ticks (range / 0.25) or a multiple (atr * 2), as a name on the way
# says (``_scaled_unit``); no unit when none does.
SCALED = "scaled"
# What a count of rows counts, by timeframe: "12 months", never "12 bars" of monthly bars.
COUNTED_ROWS = {
    "daily": "days",
    "weekly": "weeks",
    "monthly": "months",
    "quarterly": "quarters",
    "yearly": "years",
}
# A count of a second stage's rows (streak(pnl < 0) in then.map): the first stage's groups or
# its table's rows, not the timeframe's bars. A chart names them from the query (days for
# groups by date(): "17 bars" was 17 losing trades of an ORB backtest on 1m bars, p38b Q15).
ROWS = "rows"
SHOWN = frozenset(
    {
        PRICE,
        POINTS,
        DOLLARS,
        TICKS,
        PERCENT,
        PERCENT_POINTS,
        SHARE,
        CONTRACTS,
        COUNT,
        PERCENTILE,
        ROWS,
    }
)
# The units a number rescales into another (a point is $50 of ES, 4 of its ticks).
_DISTANCES = frozenset({POINTS, DOLLARS, TICKS})
# The words of a name that say a scaled distance is money, or ticks: "pnl_usd", "avg_ticks".
_DOLLAR_WORDS = ("usd", "dollar", "pnl", "profit", "loss")
_TICK_WORDS = ("tick",)

_PRICE_COLUMNS = frozenset({"open", "high", "low", "close", "price"})
# What a difference of two like values is in: prices differ by points, percents by
# percentage points (NQ's range 2.1% of the price minus ES's 1.6% is 0.5 pp, not 0.5%).
_DIFFERENCE = {PRICE: POINTS, PERCENT: PERCENT_POINTS}
# A name no expression made, as the engine names an aggregate: ``mean_range`` is mean(range).
_AGGREGATE_NAME = re.compile(
    r"^(mean|median|min|max|sum|std|first|last|percentile)_(\w+?)(?:_\d+)?$"
)
_POINT_WORDS = ("range", "gap", "atr", "move", "body", "wick", "change", "chg", "diff", "dist")
# The units a function gives whatever it reads (its ``unit`` in the function registry).
_OWN_UNITS = {
    "price": PRICE,
    "points": POINTS,
    "contracts": CONTRACTS,
    "count": COUNT,
    "scalar": SCALAR,
    "percentile": PERCENTILE,
}


def column_unit(
    column: str, timeframe: str = "daily", query: dict[str, Any] | None = None
) -> str | None:
    """The unit a chart writes for a result's column: ``price``, ``points``, ``dollars`` (a
    contract's, from a name like ``avg_usd``), ``ticks``, ``%``, ``pp`` (percentage points),
    ``share`` (a fraction shown as a percent), ``contracts``, ``days``, ``weeks``…, or
    ``bars``; ``rows`` for a count of a second stage's rows; None when unsure."""
    return column_units([column], timeframe, query)[column]


def column_units(
    columns: Sequence[str], timeframe: str = "daily", query: dict[str, Any] | None = None
) -> dict[str, str | None]:
    """``column_unit`` of each of ``columns``, the query's names read once for all of them."""
    units = _Units(query or {})
    found = {column: units.of_name(column, 0, 0) for column in columns}
    return {
        column: COUNTED_ROWS.get(timeframe, "bars")
        if unit == COUNT
        else (unit if unit in SHOWN else None)
        for column, unit in found.items()
    }


def first_map_unit(expr: ast.Expr, query: dict[str, Any]) -> str | None:
    """The unit of ``expr`` as the query's first stage's map reads it (its names are that
    map's entries, then the bars' columns): ``price`` for ``peak`` of ``"peak":
    "cummax(close)"`` and for ``prev(close)``, ``points`` for ``close - peak``; units never
    shown (a ratio, a condition) as they are, None when unsure."""
    units = _Units(query)
    return units.of(expr, len(units.lineage.scopes) - 1, 0)


def price_ratio(column: str, query: dict[str, Any] | None = None) -> bool:
    """Whether ``column`` is one price over another (``"ratio": "close / es_close"``, NQ's
    close in ES points, 3.58): a level, which moves as the two prices part, read as prices
    are, not a change around zero (its unit is a ``RATIO``, like a return's). Drawn as bars
    from zero, a swing from 3.58 to 3.23 and back to 3.63 looked flat."""
    units = _Units(query or {})
    found = units.lineage.definition(column, 0)
    for _ in range(MAX_DEPTH):
        if found is None:
            return False
        expr, _, inner = found
        if not isinstance(expr, ast.Column):
            break
        found = units.lineage.definition(expr.name, inner)
    else:
        return False
    return (
        isinstance(expr, ast.Binary)
        and expr.op == "/"
        and units.of(expr.left, inner, 1) == PRICE
        and units.of(expr.right, inner, 1) == PRICE
    )


def then_map_unit(expr: ast.Expr, query: dict[str, Any]) -> str | None:
    """The unit of ``expr`` as a second stage's map reads it (its names are that map's
    entries, then the first stage's select and map): ``points`` for ``chg`` of a first stage
    selecting ``close - prev(close) as chg``; None without a second stage, or when unsure."""
    units = _Units(query)
    return units.of(expr, 1, 0) if units.lineage.two_stages else None


class _Units:
    """The units of the names a query defines, followed through its lineage."""

    def __init__(self, query: dict[str, Any]) -> None:
        self.lineage = Lineage(query)
        joins = _joins(query)
        self.events = frozenset(str(j["source"]).lower() for j in joins if "source" in j)
        self.instruments = [f"{j['instrument']}_".lower() for j in joins if "instrument" in j]

    def of_name(self, name: str, scope: int, depth: int) -> str | None:
        if depth > MAX_DEPTH:
            return None
        found = self.lineage.definition(name, scope)
        if found is not None:
            expr, at, inner = found
            if at == 0 and self.lineage.two_stages and _is_count(expr):
                return SCALAR  # a second stage's count() counts groups, not bars
            found = self.of(expr, inner, depth + 1)
            if found == SCALED:  # the name says what the scaling made, if anything
                return _scaled_unit(name) or SCALED
            return found
        aggregate = _AGGREGATE_NAME.match(name)
        if aggregate:
            func, column = aggregate.groups()
            return self.of(ast.Call(func, (ast.Column(column),)), scope, depth + 1)
        return self._of_bar_column(name.lower())

    def _of_bar_column(self, name: str) -> str | None:
        """A column no expression made: the bars' own, a joined instrument's, an event's."""
        for prefix in self.instruments:
            name = name.removeprefix(prefix)
        if name in _PRICE_COLUMNS:
            return PRICE
        if name in self.events:
            return CONDITION
        return _name_unit(name)

    def of(self, expr: ast.Expr, scope: int, depth: int) -> str | None:
        if isinstance(expr, ast.Number):
            return SCALAR
        if isinstance(expr, ast.Column):
            return self.of_name(expr.name, scope, depth)
        if isinstance(expr, ast.Unary):
            return self.of(expr.operand, scope, depth)
        if isinstance(expr, ast.Compare | ast.Logical | ast.Not | ast.InList | ast.Bool):
            return CONDITION
        if isinstance(expr, ast.Binary):
            left, right = (self.of(side, scope, depth) for side in (expr.left, expr.right))
            return _arithmetic(expr, left, right)
        if isinstance(expr, ast.Call):
            return self._call(expr, scope, depth)
        if isinstance(expr, ast.OnDailyBars):  # daily()'s, weekly()'s: the bars' own columns
            return self.of(expr.expr, len(self.lineage.scopes), depth + 1)
        return None

    def _call(self, call: ast.Call, scope: int, depth: int) -> str | None:
        spec = library().get(call.name.lower())
        if spec is not None and spec.body is not None:
            # A named pattern is its expression (a condition) over the bars' own columns,
            # never the query's names: mean(gap_filled()) is a share, like mean(close > open).
            return self.of(spec.body, len(self.lineage.scopes), depth + 1)
        if spec is None or spec.unit is None:
            return None  # an oscillator (rsi, cci …), a time part, or unknown: no unit
        args = [self.of(arg, scope, depth) for arg in call.args]
        first = args[0] if args else None
        if first == CONDITION and spec.of_condition is not None:
            return SHARE if spec.of_condition == "share" else self._count(scope)
        rule = spec.unit
        if rule == "branches":  # if(cond, then, else): the unit both branches share
            branches = {u for u in args[1:3] if u != SCALAR}
            return branches.pop() if len(branches) == 1 else (SCALAR if not branches else MIXED)
        if rule == "same":
            return first
        if rule == "spread":  # the spread of prices is in points
            return POINTS if first == PRICE else first
        if rule == "number":  # of a plain number or a ratio (a log return)
            return first if first in (SCALAR, RATIO) else MIXED
        return self._count(scope) if rule == "count" else _OWN_UNITS[rule]

    def _count(self, scope: int) -> str:
        """What a count made by a call read in ``scope`` counts: a second stage's (its names
        are read in scope 0 or 1) counts its rows, a first stage's the bars."""
        return ROWS if self.lineage.two_stages and scope < 2 else COUNT


def _arithmetic(expr: ast.Binary, left: str | None, right: str | None) -> str | None:
    op = expr.op
    if op in ("+", "-"):
        return _sum(op, left, right)
    if op == "*":
        if left == SCALAR or right == SCALAR:
            other, factor = (right, expr.left) if left == SCALAR else (left, expr.right)
            if other in (RATIO, SHARE) and _hundred(expr):
                return PERCENT
            if other in _DISTANCES and not _unit_factor(factor):
                return SCALED
            return None if other == PERCENTILE else other
        return MIXED if left and right else None
    if op == "/":
        if right == SCALAR:  # a rank over 100 is a fraction, no longer a percentile
            if left in _DISTANCES and not _unit_factor(expr.right):
                return SCALED
            return None if left == PERCENTILE else left
        if (left and left == right) or {left, right} <= {PRICE, POINTS}:
            return RATIO  # a return, a range over the price: like over like
        return MIXED if left and right else None
    return MIXED  # %, **


def _sum(op: str, left: str | None, right: str | None) -> str | None:
    if left is None or right is None:
        return None
    if left == right and op == "-" and left in _DIFFERENCE:
        return _DIFFERENCE[left]
    if left == right:
        return left
    if SCALAR in (left, right):  # close - 100, chg_pct + 1
        return right if left == SCALAR else left
    if {left, right} == {PRICE, POINTS}:  # a level and a distance: a level
        return PRICE
    return MIXED


def _unit_factor(expr: ast.Expr) -> bool:
    """Whether ``expr`` is the number 1 or -1, which leave a unit as it was."""
    value = ast.literal_value(expr)
    return isinstance(value, int | float) and not isinstance(value, bool) and abs(value) == 1


def _scaled_unit(name: str) -> str | None:
    """What a scaled distance named ``name`` is in, by the name: dollars (``avg_usd``,
    ``pnl``), ticks (``range_ticks``); None when the name does not say."""
    lowered = name.lower()
    if any(word in lowered for word in _DOLLAR_WORDS):
        return DOLLARS
    if any(word in lowered for word in _TICK_WORDS):
        return TICKS
    return None


def _hundred(expr: ast.Binary) -> bool:
    return any(ast.literal_value(side) == 100 for side in (expr.left, expr.right))


def _name_unit(name: str) -> str | None:
    """The unit a name spells out, for a column no expression of the query made: the bars'
    own, or a result built without its query."""
    if name.endswith("pct") or "percent" in name:
        return PERCENT
    if name == "count" or name.startswith("count_"):
        return COUNT
    if name == "volume":
        return CONTRACTS
    if "usd" in name or "dollar" in name:  # range_usd: a contract's dollars, not points
        return DOLLARS
    if "tick" in name:
        return TICKS
    if name in _PRICE_COLUMNS:
        return PRICE
    if any(word in name for word in _POINT_WORDS):
        return POINTS
    return None


def _is_count(expr: ast.Expr) -> bool:
    return isinstance(expr, ast.Call) and expr.name.lower() == "count"


def _joins(query: dict[str, Any]) -> list[dict[str, Any]]:
    """The query's joins, each a dict (``{"source": "fomc"}``, ``{"instrument": "ES"}``)."""
    joins = query.get("join") or []
    joins = joins if isinstance(joins, list) else [joins]
    return [{"source": j} if isinstance(j, str) else j for j in joins if isinstance(j, str | dict)]
