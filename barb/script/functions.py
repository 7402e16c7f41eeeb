"""The one registry of Barb Script functions.

Every function the language knows is declared here once, by ``@register`` (or, for a named
pattern, ``register_macro``): its name, its category, its parameters with their kinds and
defaults, a one-line summary, and how far it reads beyond its own bar (``reach``, which the
planner widens a period by). The validator, the evaluator, the planner and the model's
reference text are all derived from this table, so they cannot drift apart.

Modules fill ``FUNCTIONS`` as they load; everything else reads the complete table through
``barb.script.library.library()``, never this module's partial view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import numpy as np
import pandas as pd

from barb.script.daily_calls import DAILY_ARGUMENTS
from barb.script.parser import parse_expression
from barb.script.warmup import ReachRule, row

# "daily": an expression evaluated over the session's daily (weekly, monthly) bars, not the
# rows (daily()'s, weekly()'s); the call receives its values by trading date (week, month:
# ``ast.OnDailyBars``).
ParamKind = Literal["series", "daily", "number", "int", "string", "bool"]
# What a ``series`` parameter takes: numbers (true/false count as 1/0), conditions only,
# numbers or dates (arg_max's val), numbers or times of day as time() writes them (floor),
# any of the three (max, min; times in the session's order), or any value (text too).
Accepts = Literal["number", "condition", "number_or_date", "number_or_clock", "orderable", "any"]
# The kinds of value an expression can produce.
ValueKind = Literal["number", "bool", "string", "datetime"]
T = TypeVar("T")
Category = Literal[
    "scalar",
    "lag",
    "window",
    "cumulative",
    "pattern",
    "candle",
    "aggregate",
    "time",
    "session",
    "indicator",
]

# What a call does to the unit of what it reads, for the units a chart writes
# (barb.column_units): "same" keeps its first argument's (prev, mean, ema); "spread" too, but
# the spread of prices is in points (std); "number" keeps a plain number or a ratio and mixes
# anything else (sqrt, log); "branches" is the unit if()'s branches share; the others are the
# call's own unit whatever it reads (atr: points; rank: a percentile). None: no unit (rsi,
# hour()).
UnitRule = Literal[
    "same",
    "spread",
    "number",
    "branches",
    "price",
    "points",
    "contracts",
    "count",
    "scalar",
    "percentile",
]
# What an aggregate or window makes of a condition: its mean is a share of rows, its sum a
# count of them.
ConditionUnit = Literal["share", "count"]

# Categories whose functions read only their own row (or its trading date's session bars):
# their reach is that row. Every other function declares its reach when it is registered.
ROW_CATEGORIES: frozenset[Category] = frozenset({"scalar", "time", "session", "aggregate"})

_NO_DEFAULT: Any = object()


@dataclass(frozen=True)
class Param:
    """One parameter. ``series`` and ``daily`` take any expression; the others must be
    literals."""

    name: str
    kind: ParamKind = "series"
    default: Any = _NO_DEFAULT
    # Bounds for int/number literals, inclusive.
    min: float | None = None
    max: float | None = None
    # For a ``series`` parameter: a column used when the argument is omitted (e.g. close).
    default_column: str | None = None
    # For a ``series`` parameter: the kinds of value it takes, checked before the call.
    accepts: Accepts = "number"
    # For a ``string`` parameter: the only values it takes (lower case; matched ignoring
    # case), named in the error when another is written.
    choices: tuple[str, ...] | None = None
    # For a ``condition`` parameter: receive unknown rows as unknown (if() leaves them
    # empty; streak skips them) instead of as false (rolling_count counts only true rows).
    keeps_unknown: bool = False
    # For a ``series`` parameter: received named after the expression written (arg_min's arg
    # ``time()``), so a warning can write a query form with it ("select first(time())").
    named: bool = False

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT and self.default_column is None


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    category: Category
    params: tuple[Param, ...]
    summary: str
    # None for a macro: a named pattern is its ``body`` expression, evaluated in place.
    impl: Callable[..., Any] | None
    # Extra positional arguments of the last parameter's kind are allowed (none by default).
    variadic: bool = False
    # Text shown in the reference when the signature alone is not enough.
    example: str | None = None
    aliases: tuple[str, ...] = field(default_factory=tuple)
    # A macro's Barb Script text, for named patterns; parsed when first used, so that a
    # process pays only for the patterns its questions name.
    expression: str | None = None
    # How far a call reads beyond its bar, from its literal arguments; None for a macro,
    # whose reach is its body's.
    reach: ReachRule | None = None
    unit: UnitRule | None = None
    of_condition: ConditionUnit | None = None
    # A statistic of a sample that skips missing values (mean, median…): how many of its
    # first arguments must all have a value for a row to be in the sample (correlation: 2);
    # 0 for the others (count, first…). The answer says how many rows that is.
    sample: int = 0
    # Where those arguments begin: arg_max(arg, val) skips the rows whose val is missing
    # (1), not those whose arg is.
    sample_from: int = 0
    # A count that leaves out the rows its condition is unknown on (count(cond): unknown is
    # not true): said when the data's start left them unknown (``barb.caveats.sample_sizes``), as
    # 2008's days before a 200-day mean has a value. (sum() skips them as a ``sample``.)
    counts_true: bool = False
    # The lowest and highest value a calendar or clock function returns (month(): 1, 12): a
    # comparison with a number outside it never matches, and is refused as a mistake.
    values: tuple[int, int] | None = None
    # The function whose line in the reference names this one too, with the same parameters:
    # weekly() under daily(), "daily|weekly|monthly(expr, lag=1, [session])" (one line for a
    # family, in a reference with no room for three).
    listed_under: str | None = None
    # Reads every bar before its own (``reach`` is all history), yet nothing before the last
    # row its event holds on: a streak's false row, bars_since()'s true one, ffill()'s value.
    # Over rows that begin after the data's first bar it checks that such a row lies before
    # the period (``barb.script.event_history``), so the planner reads back only that far.
    forgets: bool = False

    @property
    def body(self) -> Any:
        """A macro's expression tree (barb.script.ast); None for a function."""
        if self.expression is None:
            return None
        return parse_expression(self.expression, step="map")

    @property
    def is_aggregate(self) -> bool:
        return self.category == "aggregate"

    def sampled(self, args: Sequence[T]) -> tuple[T, ...]:
        """The arguments whose missing values leave a row out (of a count of a condition,
        ``counts_true``, its one): ``arg_max(m, ret)`` -> ``(ret,)``."""
        return tuple(args[self.sample_from : self.sample_from + max(self.sample, 1)])

    def signature(self) -> str:
        parts = []
        for p in self.params:
            if p.default_column is not None:
                parts.append(f"{p.name}={p.default_column}")
            elif p.default is None:
                parts.append(f"[{p.name}]")
            elif p.default is not _NO_DEFAULT:
                parts.append(f"{p.name}={p.default}")
            else:
                parts.append(p.name)
        return f"{self.name}({', '.join(parts)})"


FUNCTIONS: dict[str, FunctionSpec] = {}


def register(
    name: str,
    *,
    category: Category,
    params: tuple[Param, ...] = (),
    summary: str,
    variadic: bool = False,
    example: str | None = None,
    aliases: tuple[str, ...] = (),
    reach: ReachRule | None = None,
    unit: UnitRule | None = None,
    of_condition: ConditionUnit | None = None,
    sample: int = 0,
    sample_from: int = 0,
    counts_true: bool = False,
    values: tuple[int, int] | None = None,
    listed_under: str | None = None,
    forgets: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a function of the language; the decorated callable implements it.

    ``reach`` says how many bars before and after its own a call reads, from its literal
    arguments by name (``barb.script.warmup``). Row-wise categories read their row and may
    leave it out; every other function must give it, or registering it fails. ``unit`` and
    ``of_condition`` say what the call does to units (``UnitRule``; None: no unit).
    ``sample``, ``sample_from``, ``counts_true``, ``values``, ``listed_under`` and
    ``forgets``: see ``FunctionSpec``.

    Row-wise functions are called as ``impl(ctx, *args)`` with series arguments evaluated to
    ``pd.Series`` aligned with ``ctx.frame`` (true/false converted to 1/0 for ``accepts=
    "number"``) and literal arguments as Python values; an omitted optional series argument
    is its ``default_column`` or ``None``. They return a Series aligned with ``ctx.frame``.
    ``scalar`` functions are also applied to aggregated values in select (one value per
    group), so they must work on any Series, whatever its index or length.
    Aggregates are called as ``impl(rows, *args)`` where ``rows`` is a ``RowGroups``
    (see context.py) to reduce through; they return a scalar, or a Series per group.
    """

    if reach is None:
        if category not in ROW_CATEGORIES:
            raise RuntimeError(
                f"function {name!r} ({category}) reads other rows: register it with its reach"
            )
        reach = row
    daily = [i for i, p in enumerate(params) if p.kind == "daily"]
    if daily != ([DAILY_ARGUMENTS[name]] if name in DAILY_ARGUMENTS else []):
        # The parser seals these arguments by that table, before any function is registered.
        raise RuntimeError(f"function {name!r}: its daily parameter must be in DAILY_ARGUMENTS")

    def decorate(impl: Callable[..., Any]) -> Callable[..., Any]:
        spec = FunctionSpec(
            name=name,
            category=category,
            params=params,
            summary=summary,
            impl=impl,
            variadic=variadic,
            example=example,
            aliases=aliases,
            reach=reach,
            unit=unit,
            of_condition=of_condition,
            sample=sample,
            sample_from=sample_from,
            counts_true=counts_true,
            values=values,
            listed_under=listed_under,
            forgets=forgets,
        )
        _add(spec)
        return impl

    return decorate


def register_macro(name: str, *, category: Category, summary: str, expression: str) -> None:
    """Declare a zero-argument function that stands for an expression (a named pattern)."""
    _add(
        FunctionSpec(
            name=name,
            category=category,
            params=(),
            summary=summary,
            impl=None,
            expression=expression,
        )
    )


def _add(spec: FunctionSpec) -> None:
    for key in (spec.name, *spec.aliases):
        if key in FUNCTIONS:
            raise RuntimeError(f"function {key!r} registered twice")
        FUNCTIONS[key] = spec


def value_kind(value: Any) -> ValueKind:
    """The kind of a value the evaluator holds: a Python literal or a Series."""
    if isinstance(value, pd.Series):
        dtype = value.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            dtype = dtype.categories.dtype
        if pd.api.types.is_bool_dtype(dtype):
            return "bool"
        if pd.api.types.is_numeric_dtype(dtype):
            return "number"
        if pd.api.types.is_datetime64_any_dtype(dtype):
            return "datetime"
        return "string"
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int | float | np.number):
        return "number"
    if isinstance(value, pd.Timestamp | np.datetime64):
        return "datetime"
    return "string"


KIND_NAMES: dict[ValueKind, str] = {
    "number": "a number",
    "bool": "a condition (true/false)",
    "string": "text",
    "datetime": "a date",
}
