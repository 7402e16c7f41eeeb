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

Price differences are "points"; the charts write the instrument's own word for them
(``Instrument.price_unit``: CL's dollars). A distance times a number of the query's
(``range * 50``, ``range / 0.01``) may be no longer one: a contract's dollars, a count of
ticks ("avg_usd = 1,744.96 points" was ES's range in dollars per contract). Given the point
values of the instrument and of the joined ones, a distance times one of them is dollars and
times any other number (2 contracts, 2 ATRs) still points, unless the name given to it says
ticks or usd; without them it is what a name on its way says (``usd``, ``pnl`` …, ticks),
else no unit. A distance times a factor the bars make (a 0/1 position, a condition, a count
of contracts per row: ``coalesce(prev(pos), 0) * (close - prev(close))``) stays a distance:
the equity of a position in points is points ("equity now: -7,830.50 dollars" was NQ's
points, -156,610 USD a contract, p39b Q3).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Any

from barb.errors import BarbError
from barb.lineage import MAX_DEPTH, Lineage, called_key_names, group_key_names
from barb.script import ast
from barb.script.library import library
from barb.script.parser import parse_expression

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
# A distance (points, dollars, ticks) times or over a number of the query's other than 1: a
# contract's dollars (range * 50), ticks (range / 0.25) or a multiple (atr * 2), as a name on
# the way says (``_scaled_unit``); no unit when none does.
SCALED = "scaled"
# With the point values known: points times one of them (a contract's dollars, unless a name
# says ticks), and points times another number (a multiple: still points, unless a name
# says ticks or dollars).
WORTH, MULTIPLE = "worth", "multiple"
_SCALINGS = frozenset({SCALED, WORTH, MULTIPLE})
# What a scaling is shown as when no name on its way said otherwise.
_SCALING_SHOWN = {WORTH: DOLLARS, MULTIPLE: POINTS}
# What a count of rows counts, by timeframe: "12 months", never "12 bars" of monthly bars.
COUNTED_ROWS = {
    "daily": "days",
    "weekly": "weeks",
    "monthly": "months",
    "quarterly": "quarters",
    "yearly": "years",
}
# The calendar periods a first stage's groups can be, by its group keys the engine named
# after their call: a then stage's rows are then weeks or months, not "groups".
PERIOD_KEYS = {
    "date": "daily",
    "week": "weekly",
    "month": "monthly",
    "quarter": "quarterly",
    "year": "yearly",
}


def stage_rows(query: dict[str, Any], timeframe: str) -> tuple[str, bool]:
    """The timeframe a query's result rows are named by (its bars' ``timeframe``, or the
    calendar period its first stage groups by when it has a then stage), and whether they
    are a first stage's groups that are no calendar period (hours: ``groups``)."""
    then = query.get("then")
    keys = group_key_names(query)
    # Groups by date() are days, whatever the bars were ("число групп" said nothing).
    if keys == ["date"]:
        return "daily", False
    if not (isinstance(then, dict) and then):
        return timeframe, False
    called = called_key_names(query)
    periods = [k for k in keys if k in called and k in PERIOD_KEYS]
    if len(periods) == len(keys) == 2 and "year" in periods:
        periods.remove("year")  # year and month together are months
    if len(periods) == 1 and len(keys) <= 2 and set(keys) - set(periods) <= {"year"}:
        return PERIOD_KEYS[periods[0]], False
    return timeframe, True


def then_rows_unit(query: dict[str, Any], timeframe: str) -> str | None:
    """What a count made in a then stage counts: its rows, which are the bars a first stage
    lists (``timeframe``'s), or its groups: days for date(), weeks for week()…; None for
    groups of no calendar period (hours), which no unit word names."""
    if not group_key_names(query):
        return COUNTED_ROWS.get(timeframe, "bars")
    kind, groups = stage_rows(query, timeframe)
    return None if groups else COUNTED_ROWS.get(kind)


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
# A pnl is as often in points: its words say dollars only when the point values are unknown.
_MONEY_WORDS = ("usd", "dollar")
_DOLLAR_WORDS = (*_MONEY_WORDS, "pnl", "profit", "loss")
_TICK_WORDS = ("tick",)

_PRICE_COLUMNS = frozenset({"open", "high", "low", "close", "price"})
# What a difference of two like values is in: prices differ by points, percents by
# percentage points (NQ's range 2.1% of the price minus ES's 1.6% is 0.5 pp, not 0.5%).
_DIFFERENCE = {PRICE: POINTS, PERCENT: PERCENT_POINTS}
# A name no expression made, as the engine names an aggregate: ``mean_range`` is mean(range).
_AGGREGATE_NAME = re.compile(
    r"^(mean|median|min|max|sum|std|first|last|percentile)_(\w+?)(?:_\d+)?$"
)
_PLAIN_NAME = re.compile(r"^[A-Za-z_]\w*$")
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
    column: str,
    timeframe: str = "daily",
    query: dict[str, Any] | None = None,
    point_values: Collection[float] | None = None,
) -> str | None:
    """The unit a chart writes for a result's column: ``price``, ``points``, ``dollars`` (a
    contract's: points times one of ``point_values``, or a name like ``avg_usd``), ``ticks``,
    ``%``, ``pp`` (percentage points), ``share`` (a fraction shown as a percent),
    ``contracts``, ``days``, ``weeks``…, or ``bars``; ``rows`` for a count of a second
    stage's rows; None when unsure. ``point_values``: a contract's dollars per point of the
    instrument and of each joined one (NQ's 20), when known."""
    return column_units([column], timeframe, query, point_values)[column]


def column_units(
    columns: Sequence[str],
    timeframe: str = "daily",
    query: dict[str, Any] | None = None,
    point_values: Collection[float] | None = None,
) -> dict[str, str | None]:
    """``column_unit`` of each of ``columns``, the query's names read once for all of them."""
    units = _Units(query or {}, point_values)
    found = {column: units.of_name(column, 0, 0) for column in columns}
    found = {column: _SCALING_SHOWN.get(unit, unit) for column, unit in found.items()}
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

    def __init__(
        self, query: dict[str, Any], point_values: Collection[float] | None = None
    ) -> None:
        self.lineage = Lineage(query)
        self.point_values = None if point_values is None else frozenset(point_values)
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
            if found in _SCALINGS:  # the name says what the scaling made, if anything
                return _scaled_unit(name, found)
            return found
        aggregate = _AGGREGATE_NAME.match(name)
        if aggregate:
            func, column = aggregate.groups()
            return self.of(ast.Call(func, (ast.Column(column),)), scope, depth + 1)
        written = _expression(name)
        if written is not None:  # a column named by its expression: that expression's unit
            return self.of(written, scope, depth + 1)
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
            if expr.op == "/" and self._share_of_counts(expr, scope, depth):
                return SHARE
            left, right = (self.of(side, scope, depth) for side in (expr.left, expr.right))
            if expr.op in ("*", "/"):
                return self._product(expr, left, right, scope, depth)
            return _arithmetic(expr, left, right)
        if isinstance(expr, ast.Call):
            return self._call(expr, scope, depth)
        if isinstance(expr, ast.OnDailyBars):  # daily()'s, weekly()'s: the bars' own columns
            return self.of(expr.expr, len(self.lineage.scopes), depth + 1)
        return None

    def _share_of_counts(self, expr: ast.Binary, scope: int, depth: int) -> bool:
        """Whether ``expr`` is the rows a condition holds on over all the rows, a share from
        0 to 1 as their mean is: ``count(close > open) / count()``, or ``ups / n`` of a first
        stage's ``sum(close > open) as ups`` and ``count() as n`` ("months where more than
        55% of days closed up" as ``up > 55`` kept no month, said of mean(close > open))."""
        part = self._made(expr.left, scope, depth)
        whole = self._made(expr.right, scope, depth)
        if part is None or whole is None:
            return False
        (counted, at), (total, _) = part, whole
        if not (isinstance(total, ast.Call) and total.name.lower() == "count"):
            return False
        return (
            isinstance(counted, ast.Call)
            and counted.name.lower() in ("count", "sum")
            and len(counted.args) == 1
            and self.of(counted.args[0], at, depth + 1) == CONDITION
        )

    def _made(self, expr: ast.Expr, scope: int, depth: int) -> tuple[ast.Expr, int] | None:
        """The expression a column name stands for, followed through names, with the scope
        its own names are read in; None past ``MAX_DEPTH`` names."""
        for _ in range(MAX_DEPTH - depth):
            if not isinstance(expr, ast.Column):
                return expr, scope
            found = self.lineage.definition(expr.name, scope)
            if found is None:
                return expr, scope
            expr, _, scope = found
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

    def _product(
        self, expr: ast.Binary, left: str | None, right: str | None, scope: int, depth: int
    ) -> str | None:
        """``*`` and ``/``. A distance times a factor the bars make (a 0/1 position, a
        condition) stays a distance; times a number of the query's, ``_scaling``'s unit."""
        scaled = _DISTANCES | _SCALINGS
        if expr.op == "*" and CONDITION in (left, right):
            other = right if left == CONDITION else left
            # (close > open) * (close - open): the move on the days the condition holds.
            return other if other in scaled else _arithmetic(expr, left, right)
        if right == SCALAR and left in scaled:
            other, factor = left, expr.right
        elif expr.op == "*" and left == SCALAR and right in scaled:
            other, factor = right, expr.left
        else:
            return _arithmetic(expr, left, right)
        number = self._number(factor, scope, depth)
        return other if number is None else self._scaling(expr.op, other, number)

    def _number(self, expr: ast.Expr, scope: int, depth: int) -> float | None:
        """The number ``expr`` is, read through the query's names ("pv": "20"); None for a
        value the bars make (``if(sig, 1, 0)``, ``coalesce(prev(pos), 0)``, a column)."""
        for _ in range(MAX_DEPTH - depth):
            value = ast.literal_value(expr)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
            if not isinstance(expr, ast.Column):
                return None
            found = self.lineage.definition(expr.name, scope)
            if found is None:
                return None
            expr, _, scope = found
        return None

    def _scaling(self, op: str, distance: str, number: float) -> str:
        """A distance (or a scaling) times or over ``number``: unchanged by 1 or -1; with the
        point values unknown ``SCALED``; with them known, points times one of them is
        ``WORTH`` (a contract's dollars), times another number a ``MULTIPLE`` (2 contracts'
        points, 2 ATRs); over a number ``SCALED`` (ticks: range / 0.25, or nothing named)."""
        if abs(number) == 1:
            return distance
        if self.point_values is None or op == "/" or distance == SCALED:
            return SCALED
        if distance in (POINTS, MULTIPLE):
            return WORTH if abs(number) in self.point_values else MULTIPLE
        return distance  # dollars, ticks or a contract's worth times a count: as they were

    def _count(self, scope: int) -> str:
        """What a count made by a call read in ``scope`` counts: a second stage's (its names
        are read in scope 0 or 1) counts its rows, a first stage's the bars."""
        return ROWS if self.lineage.two_stages and scope < 2 else COUNT


def _arithmetic(expr: ast.Binary, left: str | None, right: str | None) -> str | None:
    """The unit of ``expr`` from its sides' (a distance's scaling aside: ``_Units._product``)."""
    op = expr.op
    if op in ("+", "-"):
        return _sum(op, left, right)
    if op == "*":
        if left == SCALAR or right == SCALAR:
            other = right if left == SCALAR else left
            if other in (RATIO, SHARE) and _hundred(expr):
                return PERCENT
            return None if other == PERCENTILE else other
        return MIXED if left and right else None
    if op == "/":
        if right == SCALAR:  # a rank over 100 is a fraction, no longer a percentile
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


def _scaled_unit(name: str, scaling: str) -> str:
    """What a ``scaling`` of a distance named ``name`` is in: ticks or dollars when the name
    says so (``range_ticks``, ``avg_usd``; ``pnl`` too while the point values are unknown),
    a contract's dollars when scaled by its point value; else the scaling, for a name further
    on to say."""
    lowered = name.lower()
    money = _DOLLAR_WORDS if scaling == SCALED else _MONEY_WORDS
    if any(word in lowered for word in money):
        return DOLLARS
    if any(word in lowered for word in _TICK_WORDS):
        return TICKS
    return DOLLARS if scaling == WORTH else scaling


def _hundred(expr: ast.Binary) -> bool:
    return any(ast.literal_value(side) == 100 for side in (expr.left, expr.right))


def _expression(name: str) -> ast.Expr | None:
    """A name that is an expression (``range / open * 100``, the column a chart draws the
    values of ``mean(range / open * 100)`` in), parsed; None for a plain name. By its words
    alone it read as points ("range"), where it is a percent."""
    if _PLAIN_NAME.match(name):
        return None
    try:
        return parse_expression(name)
    except BarbError:
        return None


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
