"""A clock function on another zone that falls back to 0 at midnight inside the session.

NQ's RTH, 09:30-17:00 ET, is 17:30-01:00 in Moscow in the US winter and 16:30-00:00 in the
summer, so ``hour('MSK') * 60 + minute('MSK')`` reads 0-59 for its last hour on the winter
dates. "At what Moscow time does NQ first break the overnight high", as each day's min() of
that, took a 00:15 break for the first on 58 of 329 days (p38a #11): median 16:49 MSK, before
the session opens, for the real 17:31, with nothing said.

A query that orders such values is told: a min, max, median, mean, percentile or std of
them, an arg_min/arg_max by them, a sort by them, or a comparison of them (two clocks, or one
with a time of day: ``msk_at < 1080``). The warning names the session's hours on that clock
per offset of it from the exchange's, with their dates (17:30-01:00 MSK on 2024-2025's 179
US-winter dates, 16:30-00:00 on the other 338), the dates it crosses midnight on where
short sessions make them fewer (169: 10 winter holidays and early closes ended by 21:15),
and the form that counts across midnight in the clock's unit (``if(tm < 720, tm + 1440,
tm)``; an hour stays an hour: ``hour('MSK') + if(hour('MSK') < 12, 24, 0)``), and, once
the answer is known, for a statistic or a comparison, the answer that form gives
(``zone_clock_answers``: the mean Moscow time of NQ's RTH high over 2024-2025 read 1159.89,
19:20, for 1207.33, 20:07, counted across midnight, and had only the form). A grouping
by such a clock is ``zone_clock_groups``'s. Nothing is said where the session lies within one
day on that clock on every date (RTH on UTC's: 14:30-22:00), of a window written across the
zone's midnight (``hour('MSK') >= 23 or hour('MSK') < 1``), nor of that form itself.

A bar's own clock compared with a time of day is the reference's TIME OF DAY AS A NUMBER
(``hour() >= 18`` is ETH's evening, written on purpose). Averaged or taken min/max of, or a
day's value of it (arg_max(t, high)) or two of its times compared (``own_clock_caveat``),
the query is run again with those values counted from the open and the warning gives what
that answers, when it differs: "the average time of the day's high on ETH" as mean(hi_t)
read 761.56 (12:41) on NQ 2024 for 551.1 (09:11), "how often is the high made before the
cash open" as mean(hi_t < 570) 0.2077 for 0.3538, ``mean(hi < lo)`` of two such times
0.5308 for the bars' 0.4808. Ranked by rank()/place() or sorted, it is said, with the form
counted from the open: "ETH's last 30 minutes of each day" as ``place(t, 'day') <= 30``
over ``t = hour() * 60 + minute()`` kept 23:30-23:59 (NQ 2024: mean volume 2,577.85 for
16:30-16:59's 3,164.15).

A session written as a window on a zone's clock is judged on the hours it traded each date:
'23:00-01:00 MSK' is 15:00-17:00 ET on US-winter dates, crossing Moscow's midnight, and
16:00-18:00 in the summer, where the 17:00 break leaves 23:00-00:00. Its bars keep one
trading date (date(), first() and last() read the window in its order), but the mean of
each day's arg_max(hour('MSK') * 60 + minute('MSK'), high) over NQ's 2024-2025 read
1,325.97 (22:06) for the 23:30 (1,409.99) that counts the 00:xx highs after 23:59, with
nothing said: a window written across midnight did not tell the mean it wraps.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from barb.caveats.zones import period_dates, window_stamps
from barb.errors import BarbError
from barb.instruments import MINUTES_PER_DAY, format_clock, parse_clock
from barb.planning import Plan, StagePlan
from barb.result import Summary
from barb.script import ast
from barb.script.ast import literal_value
from barb.script.library import lookup
from barb.script.parser import parse_expression, parse_select_item
from barb.short_days import day_edges, window_edges
from barb.summary_text import listed_text, value_text
from barb.time_keys import CARRIES_VALUE
from barb.time_zones import zone_minutes, zone_name, zone_shifts

# The clock functions that fall back at midnight (minute() repeats every hour anyway).
_CLOCKS = frozenset({"hour", "time"})
# Aggregates whose value depends on how their argument's values order (or spread).
_ORDERING = frozenset({"min", "max", "median", "percentile", "mean", "std"})
# Aggregates that pick a row by their second argument's order.
_PICKS = frozenset({"arg_min", "arg_max"})
# Each row's place among its unit's by their first argument's order.
_RANKS = frozenset({"rank", "place"})
_ORDER_OPS = frozenset({"<", "<=", ">", ">="})
_NOON = 720
_MAX_DEPTH = 20  # names followed before giving up (and the guard against a cycle)


@dataclass(frozen=True)
class Reading:
    """A value that holds a zone's clock: the call that reads it (``hour('MSK')``), the
    minutes one unit of it is (60 for an hour, 1 for ``hour() * 60 + minute()``, None for
    ``time()``'s 'HH:MM' or a scale lost to arithmetic), and the map column that first holds
    it, before any aggregate ('tm'), for the form that counts across midnight."""

    call: ast.Call
    zone: str  # as written: 'MSK'
    scale: int | None
    text: bool = False
    name: str | None = None
    aggregated: bool = False
    own: bool = False  # the exchange's own clock: hour() * 60 + minute()
    # Moved by a number that is no whole days (tm - 570): minutes from a time, not a time.
    shifted: bool = False


@dataclass(frozen=True)
class Use:
    """Where the query orders a clock's values, as written: ``min(th)``, ``msk_at < 1080``,
    ``"sort": "tm asc"``."""

    text: str
    reading: Reading
    # The aggregate or comparison that orders them (``mean(hi_t)``, ``hi_t < 570``), and
    # the stage it is in (1: then).
    node: ast.Expr | None = None
    stage: int = 0

    @property
    def counted(self) -> bool:
        """A statistic of the clock's values (min, max, mean, median…, an arg_min/arg_max
        by them) or a comparison of them: what ``own_clock_caveat`` runs again."""
        if isinstance(self.node, ast.Compare):
            return True
        if not isinstance(self.node, ast.Call):
            return False
        spec = lookup(self.node.name)
        name = spec.name if spec is not None else self.node.name.lower()
        return name in _ORDERING | _PICKS


@dataclass(frozen=True)
class _Scope:
    """The names one part of a stage defines: a map reads itself, then what the stage
    starts from; a stage's output (its select and group keys) reads its map."""

    names: dict[str, ast.Expr]
    outer: _Scope | None
    own: bool  # a map: its entries read its own names

    def find(self, name: str) -> tuple[ast.Expr, _Scope | None, bool] | None:
        """The expression that made ``name``, the scope its own names are read in, and
        whether it is a map column."""
        scope: _Scope | None = self
        while scope is not None:
            expr = scope.names.get(name)
            if expr is not None and expr != ast.Column(name):
                return expr, (scope if scope.own else scope.outer), scope.own
            scope = scope.outer
        return None


def zone_midnight_caveat(plan: Plan, covered: tuple[dt.date | None, dt.date | None]) -> list[str]:
    """For each zone whose clock a query orders the values of, the warning when the session
    crosses that clock's midnight on some of the period's dates."""
    if not plan.timeframe.intraday:
        return []
    home = plan.dataset.instrument.timezone
    uses = _ordered_uses(plan, home)
    if not uses:
        return []
    dates = period_dates(plan, covered)
    warnings = []
    # The exchange's own clock's statistics are own_clock_caveat's, once the answer is known.
    own = [use for use in uses if use.reading.own and not use.counted]
    if own:
        text = _own_warning(plan, own, _clock_hours(plan, dates, home, home))
        if text:
            warnings.append(text)
    for zone, said in _by_zone([use for use in uses if not use.reading.own]).items():
        text = _warning(plan, said, _clock_hours(plan, dates, zone, home))
        if text:
            warnings.append(text)
    return warnings


def _by_zone(uses: list[Use]) -> dict[str, list[Use]]:
    found: dict[str, list[Use]] = {}
    for use in uses:
        zone = zone_name(use.reading.zone)
        if zone is not None:
            found.setdefault(zone, []).append(use)
    return found


# --- where the query orders a clock's values --------------------------------------------------


def _ordered_uses(plan: Plan, home: str) -> list[Use]:
    """The places the query orders values of a clock on another zone than ``home``'s, in
    the order written: each stage's map, where, group keys, select, then its sort."""
    reader = _Reader(home, own=True)
    uses: list[Use] = []
    for at, (stage, inner, out) in enumerate(_stage_scopes(plan)):
        exprs = [e for _, e in stage.map_exprs + stage.hoisted + stage.group_keys]
        exprs += [e for e in (stage.where,) if e is not None]
        exprs += [item.expr for item in stage.select]
        for expr in exprs:
            uses += [replace(use, stage=at) for use in reader.uses(expr, inner)]
        for key in stage.sort:
            reading = reader.reading(ast.Column(key.column), out)
            if reading is not None:
                uses.append(Use(f'"sort": "{key.to_text()}"', reading))
    return uses


def group_clocks(plan: Plan) -> list[tuple[str, ast.Expr, Reading]]:
    """The group keys of the stage whose groups the answer lists (the then stage's, else
    the first's) that hold another zone's clock than the exchange's, by name and as
    written: [('hour_msk', hour('MSK'), Reading(hour('MSK'), 'MSK', 60))] for "group_by":
    "hour('MSK')"; a then stage's key high_gmt that is a first stage's arg_max(time('GMT'),
    high) holds time('GMT')."""
    stage, inner, _ = _stage_scopes(plan)[-1]
    if stage.shape != "grouped":
        return []
    reader = _Reader(plan.dataset.instrument.timezone)
    found = [(name, expr, reader.reading(expr, inner)) for name, expr in stage.group_keys]
    return [(name, expr, held) for name, expr, held in found if held is not None]


def clock_columns(plan: Plan, then: bool = False) -> dict[str, int]:
    """The columns of the first stage (``then``: the then stage) that hold a clock as a
    number, with the minutes one unit of it is: {"t": 1} for ``hour() * 60 + minute()``,
    counted across midnight or not (``if(hour() >= 18, tm - 1440, tm)``), {"hi_t": 1} for
    a first stage's ``arg_max(t, high) as hi_t`` read by a then stage. What a warning names
    those values by: -360 is 18:00 (``builtins`` arg_max's ties). Minutes only: an hour()
    of 1h bars that start at :30 is 9 for the 09:30 bar, which "09:00" would misname."""
    scopes = _stage_scopes(plan)
    if then and len(scopes) < 2:
        return {}
    stage, inner, _ = scopes[1 if then else 0]
    reader = _Reader(plan.dataset.instrument.timezone, own=True, wrapped=True)
    named = dict(stage.map_exprs + stage.hoisted) | _output(stage)
    found = {}
    if then:  # the first stage's columns, as the then stage's rows hold them
        _, first_map, _ = scopes[0]
        for name, expr in _output(plan.first).items():
            held = reader.reading(expr, first_map)
            if held is not None and held.scale == 1 and not held.text:
                found[name] = held.scale
    for name, expr in named.items():
        held = reader.reading(expr, inner)
        if held is not None and held.scale == 1 and not held.text:
            found[name] = held.scale
    return found


def text_clock_zones(plan: Plan, then: bool = False) -> dict[str, str]:
    """The first stage's columns (``then``: those the then stage reads, and its own map's)
    holding another zone's time() text, by that zone as written: {"t": "MSK"} for
    ``arg_max(time('MSK'), high) as t``. What a hint for their minutes names: median(t)
    was told to write hour() * 60 + minute(), the exchange's clock, of a Moscow time."""
    scopes = _stage_scopes(plan)
    if then and len(scopes) < 2:
        return {}
    stage, inner, _ = scopes[1 if then else 0]
    reader = _Reader(plan.dataset.instrument.timezone, wrapped=True)
    named = [(dict(stage.map_exprs + stage.hoisted) | _output(stage), inner)]
    if then:
        named.append((_output(plan.first), scopes[0][1]))
    found = {}
    for exprs, scope in named:
        for name, expr in exprs.items():
            held = reader.reading(expr, scope)
            if held is not None and held.text and not held.own:
                found.setdefault(name, held.zone)
    return found


def zone_clock_columns(plan: Plan) -> dict[str, str]:
    """The answering stage's columns that hold minutes of the day on another zone's clock
    than the exchange's, by that zone as written: {"avg_m": "MSK"} for a then stage's
    mean(hi_m) of a first stage's arg_max(hour('MSK') * 60 + minute('MSK'), high) as hi_m,
    counted across midnight or not; not a span from a time (``tm - 1050``)."""
    scopes = _stage_scopes(plan)
    stage, inner, _ = scopes[-1]
    home = plan.dataset.instrument.timezone
    reader = _Reader(home, wrapped=True)
    found = {}
    for name, expr in _output(stage).items():
        held = reader.reading(expr, inner)
        if held is not None and held.scale == 1 and not (held.text or held.shifted or held.own):
            found[name] = held.zone
    return found


def _stage_scopes(plan: Plan) -> list[tuple[StagePlan, _Scope, _Scope]]:
    """Each stage with the scope its map and where read names in, and its output's."""
    first_map = _Scope(dict(plan.first.map_exprs + plan.first.hoisted), None, True)
    first_out = _Scope(_output(plan.first), first_map, False)
    stages: list[tuple[StagePlan, _Scope, _Scope]] = [(plan.first, first_map, first_out)]
    if plan.then is not None:
        then_map = _Scope(dict(plan.then.map_exprs + plan.then.hoisted), first_out, True)
        stages.append((plan.then, then_map, _Scope(_output(plan.then), then_map, False)))
    return stages


def _output(stage: StagePlan) -> dict[str, ast.Expr]:
    return {**dict(stage.group_keys), **{item.name: item.expr for item in stage.select}}


class _Reader:
    """Reads which expressions hold another zone's clock and where they are ordered."""

    def __init__(self, home: str, *, own: bool = False, wrapped: bool = False) -> None:
        self.home = home
        # The exchange's own clock read too (its ranks and two-clock comparisons): hour().
        self.own = own
        # A clock counted across midnight (if(hour() >= 18, tm - 1440, tm)) is still one:
        # read for how its values are named, not for a warning of its wrap.
        self.wrapped = wrapped
        # Each name once per scope: a chain of map entries that each read the one before
        # twice (b = a * a) is not walked 2**n times.
        self.named: dict[tuple[int, str], Reading | None] = {}

    def reading(self, expr: ast.Expr, scope: _Scope | None, depth: int = 0) -> Reading | None:
        """The clock ``expr``'s values are readings of, None for any other value."""
        if depth > _MAX_DEPTH:
            return None
        step = depth + 1
        if isinstance(expr, ast.Column):
            key = (id(scope), expr.name)
            if key not in self.named:
                self.named[key] = self._column(expr.name, scope, step)
            return self.named[key]
        if isinstance(expr, ast.Call):
            return self._call(expr, scope, step)
        if isinstance(expr, ast.Binary):
            return self._arithmetic(expr, scope, step)
        if isinstance(expr, ast.Unary):
            held = self.reading(expr.operand, scope, step)
            return None if held is None else replace(held, scale=None)
        return None  # a literal, or a condition (comparisons are uses, not values)

    def _column(self, name: str, scope: _Scope | None, depth: int) -> Reading | None:
        found = scope.find(name) if scope is not None else None
        if found is None:
            return None  # a bar's own column
        inner, where, is_map = found
        held = self.reading(inner, where, depth)
        if held is not None and is_map and held.name is None and not held.aggregated:
            held = replace(held, name=name)
        return held

    def _call(self, call: ast.Call, scope: _Scope | None, depth: int) -> Reading | None:
        spec = lookup(call.name)
        name = spec.name if spec is not None else call.name.lower()
        if name in _CLOCKS:
            zone = literal_value(call.args[0]) if call.args else None
            scale = 60 if name == "hour" else None
            if zone is None or (isinstance(zone, str) and zone_name(zone) == self.home):
                # time()'s 'HH:MM' on the exchange's clock is the evaluator's (clock_order).
                own = self.own and name == "hour"
                return Reading(call, self.home, scale, own=True) if own else None
            if not isinstance(zone, str) or zone_name(zone) is None:
                return None
            return Reading(call, zone, scale, text=name == "time")
        if name == "if" and len(call.args) == 3:
            if not self.wrapped and self._across_midnight(call, scope, depth):
                return None
            branches = [self.reading(arg, scope, depth) for arg in call.args[1:]]
            held = [b for b in branches if b is not None]
            if not held:
                return None
            scales = {b.scale for b in held}
            return held[0] if len(scales) == 1 else replace(held[0], scale=None)
        if not call.args:
            return None
        if spec is not None and spec.is_aggregate:
            if name not in CARRIES_VALUE:
                return None
            held = self.reading(call.args[0], scope, depth)
            return None if held is None else replace(held, aggregated=True)
        for arg in call.args:  # round(tm / 60), prev(tm): still the clock, scale unknown
            held = self.reading(arg, scope, depth)
            if held is not None:
                return replace(held, scale=None)
        return None

    def _arithmetic(self, expr: ast.Binary, scope: _Scope | None, depth: int) -> Reading | None:
        if not self.wrapped and self._across_midnight(expr, scope, depth):
            return None
        left = self.reading(expr.left, scope, depth)
        right = self.reading(expr.right, scope, depth)
        if expr.op == "%" or (left is None and right is None):
            return None  # (tm - 1050) % 1440 counts from the open across midnight
        held = left or right
        assert held is not None
        factor = _number(expr.right if left is not None else expr.left) or None
        if left is not None and right is not None:
            return replace(held, scale=None)  # two clocks: a span, wrapped just the same
        if expr.op in ("+", "-"):  # hour() * 60 + minute(), tm - 570
            number = _number(expr.right if left is not None else expr.left)
            moved = number is not None and not _whole_days(
                expr.right if left is not None else expr.left, held.scale
            )
            return replace(held, shifted=True) if moved else held
        if expr.op == "*" and factor and held.scale and held.scale % factor == 0:
            return replace(held, scale=int(held.scale // factor))
        if expr.op == "/" and factor and held.scale and left is not None:
            return replace(held, scale=int(held.scale * factor))
        return replace(held, scale=None)

    def _across_midnight(self, expr: ast.Expr, scope: _Scope | None, depth: int) -> bool:
        """The clock counted on past midnight, as the warning's forms write it: an if()
        whose branches differ by whole days, ``if(tm < 720, tm + 1440, tm)``, or whole days
        added by one, ``hour('MSK') * 60 + minute('MSK') + if(hour('MSK') < 12, 1440, 0)``."""
        if _is_if(expr):
            a, b = expr.args[1], expr.args[2]
            for one, other in ((a, b), (b, a)):
                if isinstance(one, ast.Binary) and one.op in ("+", "-") and one.left == other:
                    held = self.reading(other, scope, depth)
                    if (
                        held is not None
                        and _number(one.right)
                        and _whole_days(one.right, held.scale)
                    ):
                        return True
            return False
        if isinstance(expr, ast.Binary) and expr.op in ("+", "-"):
            for days, clock in ((expr.right, expr.left), (expr.left, expr.right)):
                if _is_if(days) and _number(days.args[1]) != _number(days.args[2]):
                    held = self.reading(clock, scope, depth)
                    scale = None if held is None else held.scale
                    if held is not None and all(_whole_days(b, scale) for b in days.args[1:]):
                        return True
        return False

    def uses(self, expr: ast.Expr, scope: _Scope) -> Iterator[Use]:
        """Where ``expr`` (not the map entries it names: each is read itself) orders a
        clock's values."""
        if self._across_midnight(expr, scope, 0):
            return  # its tm < 720 is the count across midnight
        if isinstance(expr, ast.Call):
            spec = lookup(expr.name)
            name = spec.name if spec is not None else expr.name.lower()
            ordered = expr.args[:1] if name in _ORDERING | _RANKS else expr.args[1:2]
            if name in _ORDERING | _PICKS | _RANKS and ordered:
                held = self.reading(ordered[0], scope)
                if held is not None:
                    yield Use(expr.to_text(), held, expr)
        elif isinstance(expr, ast.Compare) and expr.op in _ORDER_OPS:
            held = self._compared(expr, scope)
            if held is not None:
                yield Use(expr.to_text(), held, expr)
        elif isinstance(expr, ast.Logical):
            window = self._window(expr, scope)
            for operand in _operands(expr, expr.op):
                if operand not in window:
                    yield from self.uses(operand, scope)
            return
        for child in expr.children():
            if isinstance(child, ast.Expr):
                yield from self.uses(child, scope)

    def _compared(self, compare: ast.Compare, scope: _Scope) -> Reading | None:
        """The clock a comparison orders: two clocks, or one and a time of day (not a
        stand-in outside the day, ``msk_at < 9999``, nor 0)."""
        left, right = self.reading(compare.left, scope), self.reading(compare.right, scope)
        if left is not None and right is not None:
            return left
        held, other = (left, compare.right) if left is not None else (right, compare.left)
        if held is None or (held.own and not held.aggregated):
            # The exchange's hour() >= 18 is a window written on purpose; a day's time of
            # its high (arg_max(t, high)) before 570 is an order ("before the cash open").
            return None
        at = _minutes(held, other)
        return held if at is not None and 0 < at < MINUTES_PER_DAY else None

    def _window(self, expr: ast.Logical, scope: _Scope) -> set[ast.Expr]:
        """Comparisons of a clock with times of day joined by one and/or: a window written
        on that clock (``hour('MSK') >= 10 and hour('MSK') < 12``, or across its midnight
        with or), which reads what it says."""
        bounds = {
            operand
            for operand in _operands(expr, expr.op)
            if isinstance(operand, ast.Compare)
            and operand.op in _ORDER_OPS
            and self._compared(operand, scope) is not None
        }
        return bounds if len(bounds) >= 2 else set()


def _operands(expr: ast.Expr, op: str) -> list[ast.Expr]:
    """The operands of a chain of one logical operator: a and (b and c) is [a, b, c]."""
    if isinstance(expr, ast.Logical) and expr.op == op:
        return [*_operands(expr.left, op), *_operands(expr.right, op)]
    return [expr]


def _is_if(expr: ast.Expr) -> bool:
    return isinstance(expr, ast.Call) and expr.name.lower() == "if" and len(expr.args) == 3


def _number(expr: ast.Expr) -> float | None:
    """A number written in the query (``-1``), else None."""
    value = literal_value(expr)
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if numeric else None


def _whole_days(expr: ast.Expr, scale: int | None) -> bool:
    """A number of whole days in the clock's unit: 1440 of minutes, 24 of hours (0 too)."""
    value = _number(expr)
    day = MINUTES_PER_DAY // scale if scale in (1, 60) else MINUTES_PER_DAY
    return value is not None and value % day == 0


def _minutes(held: Reading, expr: ast.Expr) -> float | None:
    """A time of day written in the query as minutes of the clock ``held`` reads: 18 for
    hour() is 1080, '18:00' for time() too; None for no literal or a scale unknown."""
    value = literal_value(expr)
    if held.text and isinstance(value, str):
        try:
            return float(parse_clock(value))
        except ValueError:
            return None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) * held.scale if number and held.scale else None


# --- the session's hours on that clock ---------------------------------------------------------


@dataclass(frozen=True)
class ClockHours:
    """The session's hours on a zone's clock, per date of the period that traded in it: its
    first bar's minute of the day there and the end of its last."""

    dates: np.ndarray  # datetime64[D]
    opens: np.ndarray
    ends: np.ndarray  # 1..1440
    shifts: np.ndarray  # the minutes that clock is ahead of the exchange's, at the open

    @property
    def wraps(self) -> np.ndarray:
        """The dates on which the session crosses midnight on that clock."""
        return self.ends <= self.opens

    def hours(self, where: np.ndarray, most: int = 1) -> str:
        """The hours ``where``'s dates had, the ``most`` frequent: '17:30-01:00'; two are
        '22:00-21:00 or 23:00-22:00' (ETH on UTC's clock, summer and winter)."""
        pairs = Counter(zip(self.opens[where].tolist(), self.ends[where].tolist(), strict=True))
        texts = [f"{format_clock(a)}-{format_clock(b)}" for (a, b), _ in pairs.most_common(most)]
        return " or ".join(texts)


def _clock_hours(plan: Plan, dates: np.ndarray, zone: str, home: str) -> ClockHours:
    """The session's hours on ``zone``'s clock over ``dates``, read from the bars' own
    open and close on each (a holiday's 13:00 close crosses no midnight at 21:00 MSK). A
    window on a zone's clock is where it lay on the exchange's clock that date: '23:00-01:00
    MSK' is 15:00-17:00 ET in the US winter, crossing Moscow's midnight, and 16:00-18:00 in
    the summer, whose 17:00 break leaves it 23:00-00:00 there."""
    dataset = plan.dataset
    instrument = dataset.instrument
    day_start = (dates - np.timedelta64(1, "D")).astype("datetime64[m]")
    day_start += np.timedelta64(instrument.trading_day_start_minute, "m")
    spec = instrument.session(plan.session)
    if spec.zone is None:
        start, end = window_edges(dataset, plan.session)
    else:  # minutes into each trading day, as the exchange's own windows are
        _, starts_at, ends_at = window_stamps(instrument, spec, dates)
        start = (starts_at - day_start) // np.timedelta64(1, "m")
        end = (ends_at - day_start) // np.timedelta64(1, "m")
    opened, closed = day_edges(dataset, dates)
    first, last = np.maximum(opened, start), np.minimum(closed, end)
    traded = (opened >= 0) & (last > first)
    day_start = day_start[traded]
    opened_at = day_start + first[traded].astype("timedelta64[m]")
    begins = _on(opened_at, home, zone)
    ends = _on(day_start + (last[traded] - 1).astype("timedelta64[m]"), home, zone) + 1
    return ClockHours(dates[traded], begins, ends, zone_shifts(opened_at, home, zone))


def _on(stamps: np.ndarray, home: str, zone: str) -> np.ndarray:
    """The minute of the day on ``zone``'s clock of ``home``'s wall-clock ``stamps``."""
    values = stamps.astype("datetime64[ns]")
    minute = (stamps - stamps.astype("datetime64[D]")) // np.timedelta64(1, "m")
    return zone_minutes(values, minute.astype(np.int64), home, zone).astype(np.int64)


# --- the warning -------------------------------------------------------------------------------


def _warning(plan: Plan, uses: list[Use], hours: ClockHours) -> str:
    """The warning ("hour('MSK') falls back to 0 at midnight inside RTH: …"), or '' when
    the session lies within one day on that clock on every date. Its hours there are said
    per offset of that clock from the exchange's: 17:30-01:00 MSK on NQ's 179 US-winter
    dates of 2024-2025, 16:30-00:00 on the other 338; the 10 winter holidays and early
    closes that ended by 21:15 MSK are why it crossed midnight on 169 (p39a had read "169
    dates ... and 16:30-00:00 on the others")."""
    wraps = hours.wraps
    if not wraps.any():
        return ""
    use = uses[0]
    held = use.reading
    total, crossing = len(hours.dates), int(wraps.sum())
    offsets = _offsets(hours)
    parts = []
    for at, on in enumerate(offsets):
        there, count = hours.hours(on), int(on.sum())
        if len(offsets) == 1:
            parts.append(f"{there} {held.zone} on the period's {total:,} trading dates")
        elif at == 0:
            parts.append(
                f"{there} {held.zone} on {count:,} of the period's {total:,} trading dates "
                f"({hours.dates[on][0]} first)"
            )
        else:
            parts.append(f"{there} on {'the other ' if at == len(offsets) - 1 else ''}{count:,}")
    aside = any(bool((_pairs(hours, on) != hours.hours(on)).any()) for on in offsets)
    spans = listed_text(parts) + (", short sessions aside" if aside else "")
    wrapped = sum(int(on.sum()) for on in offsets if _crosses(hours, on))
    on_dates = f", on {crossing:,} dates," if crossing != wrapped else ""
    after = f"00:00-{format_clock(int(hours.ends[wraps].max()))}"
    zoned = plan.dataset.instrument.session(plan.session).zone is not None
    session, it = (f"the window {plan.session}", "it") if zoned else (plan.session,) * 2
    return (
        f"{held.call.to_text()} falls back to 0 at midnight inside {session}: on that "
        f"clock {it} is {spans}, so {use.text} reads the "
        f"{'window' if zoned else 'session'}'s {after} {held.zone} bars{on_dates} as the "
        f"day's earliest. To count across midnight: {_form(held, hours)}."
    )


def _offsets(hours: ClockHours) -> list[np.ndarray]:
    """The dates of each offset of the clock from the exchange's: those on which the session
    crosses midnight first, then by how many dates."""
    found = [hours.shifts == shift for shift in np.unique(hours.shifts)]
    return sorted(found, key=lambda on: (not _crosses(hours, on), -int(on.sum())))


def _crosses(hours: ClockHours, on: np.ndarray) -> bool:
    """Whether the session's usual hours on the dates ``on`` cross that clock's midnight."""
    pairs = Counter(zip(hours.opens[on].tolist(), hours.ends[on].tolist(), strict=True))
    (opened, ended), _ = pairs.most_common(1)[0]
    return ended <= opened


def _pairs(hours: ClockHours, on: np.ndarray) -> np.ndarray:
    """The hours of each of the dates ``on`` ('17:30-01:00')."""
    return np.array(
        [
            f"{format_clock(a)}-{format_clock(b)}"
            for a, b in zip(hours.opens[on].tolist(), hours.ends[on].tolist(), strict=True)
        ]
    )


def _cut(hours: ClockHours) -> int:
    """The minute of the day a clock is counted past midnight below: noon where the session
    is away from it on the dates it wraps, else the hour after its latest end."""
    wraps = hours.wraps
    latest, earliest = int(hours.ends[wraps].max()), int(hours.opens[wraps].min())
    return _NOON if latest <= _NOON <= earliest else -(-latest // 60) * 60


def _form(held: Reading, hours: ClockHours) -> str:
    """The clock counted on past midnight: ``if(tm < 720, tm + 1440, tm) in place of tm``,
    below the open and at or past the latest end after midnight (noon where it can be)."""
    cut = _cut(hours)
    name = held.name
    if name is not None and held.scale == 1:
        return f"if({name} < {cut}, {name} + 1440, {name}) in place of {name}"
    if name is not None and held.scale == 60:
        return f"if({name} < {cut // 60}, {name} + 24, {name}) in place of {name}"
    zone = literal_value(held.call.args[0])
    hour, minute = f"hour('{zone}')", f"minute('{zone}')"
    if held.scale == 60:  # an hour stays an hour: 0 reads 24 (p39a Q37 was told minutes)
        return f"{hour} + if({hour} < {cut // 60}, 24, 0) in place of {held.call.to_text()}"
    counted = f"{hour} * 60 + {minute} + if({hour} < {cut // 60}, 1440, 0)"
    return f"{counted} in place of {name or held.call.to_text()}"


def _own_warning(plan: Plan, uses: list[Use], hours: ClockHours) -> str:
    """The warning for the exchange's own clock ranked (or two of its times compared) over a
    session that crosses its midnight: over ETH (18:00-17:00), "the last 30 minutes of each
    day" as place(hour() * 60 + minute(), 'day') <= 30 kept 23:30-23:59, not 16:30-16:59,
    with nothing said."""
    wraps = hours.wraps
    if not wraps.any():
        return ""
    use = uses[0]
    held = use.reading
    opened = Counter(hours.opens[wraps].tolist()).most_common(1)[0][0]
    ended = Counter(hours.ends[wraps].tolist()).most_common(1)[0][0]
    zone = plan.dataset.instrument.session(plan.session).zone is not None
    session = f"the window {plan.session}" if zone else plan.session
    evening = f"{format_clock(opened)}-23:59"
    ranked = use.text.split("(", 1)[0].strip().lower() in _RANKS
    latest = (
        f", so a day's latest minute reads {format_clock(MINUTES_PER_DAY - 1)}, not "
        f"{format_clock(ended - 1)}"
        if ranked
        else ""
    )
    morning = f"00:00-{format_clock(ended - 1)}"
    clock_ = held.call.to_text()
    subject = clock_ if held.name is None else f"{clock_}, and {held.name} with it,"
    return (
        f"{subject} falls back to 0 at midnight inside {session} "
        f"({format_clock(opened)}-{format_clock(ended)}, from the evening before): "
        f"{use.text} orders {morning} before {evening}, though it comes after it"
        f"{latest}. Count minutes from the {format_clock(opened)} open "
        f"instead (TIME OF DAY AS A NUMBER): {_own_form(held, opened)}."
    )


def _own_form(held: Reading, opened: int) -> str:
    """The exchange's clock counted from the open, negative before midnight, as the
    reference writes it: ``if(t >= 1080, t - 1440, t) in place of t``."""
    name, hour = held.name, opened // 60
    if name is not None and held.scale == 1:
        return f"if({name} >= {opened}, {name} - 1440, {name}) in place of {name}"
    if name is not None and held.scale == 60:
        return f"if({name} >= {hour}, {name} - 24, {name}) in place of {name}"
    if held.scale == 60:
        return f"if(hour() >= {hour}, hour() - 24, hour()) in place of hour()"
    counted = "hour() * 60 + minute()"
    return f"if(hour() >= {hour}, {counted} - 1440, {counted}) in place of {counted}"


# --- the exchange's own clock's statistics, once the answer is known ---------------------------


def own_clock_caveat(
    plan: Plan,
    covered: tuple[dt.date | None, dt.date | None],
    answer: Summary,
    again: Callable[[dict[str, Any]], Summary | None],
) -> list[str]:
    """The warning for a mean, median, min, max (or an arg_min/arg_max by) of the
    exchange's own clock as a number over a session that crosses its midnight: "the average
    time of the day's high on ETH" as mean(hi_t) of each date's arg_max(hour() * 60 +
    minute(), high) averages a 23:30 high and a 00:30 one to 12:00 (NQ 2024: 761.56, 12:41),
    and the reference's note was all that said it. The query is run again (``again``) with
    each such statistic's values counted from the open, ``if(hi_t >= 1080, hi_t - 1440,
    hi_t)``; said, with the number that gives, only when the answer is not the same (a
    where that keeps the hours before midnight out, 09:30-16:00 of ETH, reads as written)."""
    if not plan.timeframe.intraday:
        return []
    home = plan.dataset.instrument.timezone
    uses = [u for u in _ordered_uses(plan, home) if u.reading.own and u.counted]
    if not uses:
        return []
    hours = _clock_hours(plan, period_dates(plan, covered), home, home)
    wraps = hours.wraps
    if not wraps.any():
        return []
    opened = Counter(hours.opens[wraps].tolist()).most_common(1)[0][0]
    ended = Counter(hours.ends[wraps].tolist()).most_common(1)[0][0]
    query = plan.query.to_json()
    counted = _counted_query(query, uses, opened, across=False)
    if counted is None:
        return []
    other = again(counted)
    # Its clock columns aside: the form counted from the open is read as minutes too.
    aside = {"clocks"}
    same = other is not None and (
        other.model_dump_json(exclude=aside) == answer.model_dump_json(exclude=aside)
    )
    if other is None or same:
        return []
    use = uses[0]
    held = use.reading
    zone = plan.dataset.instrument.session(plan.session).zone is not None
    session = f"the window {plan.session}" if zone else plan.session
    clock_ = held.call.to_text()
    subject = clock_ if held.name is None else f"{clock_}, and {held.name} with it,"
    spec = lookup(use.node.name) if isinstance(use.node, ast.Call) else None
    averaged = spec is not None and spec.name in ("mean", "median")
    blend = " (a 23:30 and a 00:30 average to 12:00)" if averaged else ""
    text = (
        f"{subject} falls back to 0 at midnight inside {session} "
        f"({format_clock(opened)}-{format_clock(ended)}, from the evening before): "
        f"{use.text} takes 00:00-{format_clock(ended - 1)} for earlier than "
        f"{format_clock(opened)}-23:59, though it comes after it{blend}. Counted from the "
        f"{format_clock(opened)} open (TIME OF DAY AS A NUMBER: {_own_form(held, opened)})"
    )
    return [text + _answer_change(answer, other, uses, plan) + "."]


def zone_clock_answers(
    plan: Plan,
    covered: tuple[dt.date | None, dt.date | None],
    answer: Summary,
    again: Callable[[dict[str, Any]], Summary | None],
    warnings: list[str],
) -> list[str]:
    """``warnings`` with each zone's midnight warning (``zone_midnight_caveat``'s) given the
    number its form counted across midnight answers, when the query's statistic or
    comparison of that clock gives another: "at what Moscow time is NQ's RTH high, on
    average" as mean(hi_m) of each date's arg_max(hour('MSK') * 60 + minute('MSK'), high)
    was told only the form (NQ 2024-2025: 1159.89, 19:20, for 1207.33, 20:07)."""
    if not plan.timeframe.intraday:
        return warnings
    home = plan.dataset.instrument.timezone
    uses = [use for use in _ordered_uses(plan, home) if not use.reading.own]
    if not uses:
        return warnings
    dates = period_dates(plan, covered)
    said = list(warnings)
    for zone, used in _by_zone(uses).items():
        hours = _clock_hours(plan, dates, zone, home)
        text = _warning(plan, used, hours)
        counted = [use for use in used if use.counted]
        if not text or text not in said or not counted:
            continue
        query = _counted_query(plan.query.to_json(), counted, _cut(hours), across=True)
        other = again(query) if query is not None else None
        aside = {"clocks"}
        if other is None or other.model_dump_json(exclude=aside) == answer.model_dump_json(
            exclude=aside
        ):
            continue
        change = _answer_change(answer, other, counted, plan)
        said[said.index(text)] = f"{text[:-1]}; counted so{change}."
    return said


def _counted_query(
    query: dict[str, Any], uses: list[Use], cut: int, *, across: bool
) -> dict[str, Any] | None:
    """``query`` with the clock values each of ``uses`` orders counted on one line through
    midnight, ``cut`` the minute of the day it is cut at. From the open (``across`` False),
    negative before midnight: ``mean(hi_t)`` → ``mean(if(hi_t >= 1080, hi_t - 1440,
    hi_t))``, ``hi_t < 570`` → ``if(hi_t >= 1080, hi_t - 1440, hi_t) < 570`` (a time of day
    in the evening counted so too). Across midnight (``across``), past 24:00 after it:
    ``mean(hi_m)`` → ``mean(if(hi_m < 120, hi_m + 1440, hi_m))``. None when one of them
    cannot be written so (a scale lost to arithmetic) or is not found among the map, where
    and select the query wrote."""
    changed: dict[str, ast.Expr] = {}
    for use in uses:
        scale = use.reading.scale
        if use.node is None or scale not in (1, 60):
            return None
        at, day = (cut, MINUTES_PER_DAY) if scale == 1 else (cut // 60, 24)
        counted = _counted_node(use.node, at, day, across)
        if counted is None:
            return None
        changed[use.node.to_text()] = counted
    counted_query = copy.deepcopy(query)
    then = counted_query.get("then")
    found: set[str] = set()
    for stage in [counted_query] + ([then] if isinstance(then, dict) else []):
        items = stage.get("select")
        if items is not None:
            written = [items] if isinstance(items, str) else list(items)
            counted = [_counted_text(item, changed, found, True) for item in written]
            # As written where nothing changed: a first stage left as it was is not run again.
            stage["select"] = counted[0] if isinstance(items, str) else counted
        if stage.get("where") is not None:
            stage["where"] = _counted_text(stage["where"], changed, found, False)
        if isinstance(stage.get("map"), dict):
            stage["map"] = {
                name: _counted_text(text, changed, found, False)
                for name, text in stage["map"].items()
            }
    return counted_query if found == set(changed) else None


def _counted_node(node: ast.Expr, cut: int, day: int, across: bool) -> ast.Expr | None:
    """``node`` with the clock it orders counted from the open (``cut``, in the clock's
    unit, ``day`` of them in a day), or ``across`` midnight (below ``cut``, a day later):
    an aggregate's ordered argument, or each side of a comparison (a number written there
    as the same time of day counted so)."""

    def from_open(value: ast.Expr) -> ast.Expr:
        number = _number(value)
        if number is not None and across:
            return ast.Number(number + day if number < cut else number)
        if number is not None:
            return ast.Number(number - day if number >= cut else number)
        moved = ast.Binary("+" if across else "-", value, ast.Number(day))
        test = ast.Compare("<" if across else ">=", value, ast.Number(cut))
        return ast.Call("if", (test, moved, value))

    if isinstance(node, ast.Compare):
        return ast.Compare(node.op, from_open(node.left), from_open(node.right))
    if not isinstance(node, ast.Call):
        return None
    spec = lookup(node.name)
    name = spec.name if spec is not None else node.name.lower()
    at = 1 if name in _PICKS else 0
    if len(node.args) <= at:
        return None
    args = (*node.args[:at], from_open(node.args[at]), *node.args[at + 1 :])
    return ast.Call(node.name, args)


def _counted_text(text: Any, changed: dict[str, ast.Expr], found: set[str], item: bool) -> Any:
    """A select ``item`` (its name kept), a where or a map entry with the nodes ``changed``
    names (by their text) replaced."""
    if not isinstance(text, str):
        return text
    try:
        expr, alias = parse_select_item(text) if item else (parse_expression(text), None)
    except BarbError:
        return text

    def swap(node: ast.Node) -> ast.Node:
        written = node.to_text() if isinstance(node, ast.Call | ast.Compare) else None
        if written is not None and written in changed:
            found.add(written)
            return changed[written]
        return ast.with_children(node, swap)

    new = swap(expr)
    if new == expr:
        return text
    return f"{new.to_text()} as {alias or ast.default_name(expr)}" if item else new.to_text()


def _answer_change(answer: Summary, other: Summary, uses: list[Use], plan: Plan) -> str:
    """ ", mean_hi_t is -31.52 (23:28), not 761.56 (12:41)" for one number, as a clock
    when the answer is the clock's own statistic; else ", the answer is not the same"."""
    pairs: list[tuple[str, Any, Any]] = []
    if _is_number(answer.value) and _is_number(other.value):
        pairs = [("the answer", answer.value, other.value)]
    elif answer.values and other.values:
        pairs = [
            (name, value, other.values.get(name))
            for name, value in answer.values.items()
            if _is_number(value)
            and _is_number(other.values.get(name))
            and value != other.values[name]
        ]
    last = 1 if plan.then is not None else 0
    clock_ = {
        spec.name
        for use in uses
        if use.stage == last and isinstance(use.node, ast.Call)
        for spec in (lookup(use.node.name),)
        if spec is not None and spec.name in _ORDERING - {"std"}
    }
    scale = uses[0].reading.scale or 1
    if not pairs:
        ends = _group_ends(answer, other, scale if clock_ else None)
        return f", {ends}" if ends else ", the answer is not the same"
    texts = []
    for name, old, new in pairs:
        if clock_:
            texts.append(
                f"{name} is {_quoted(new)} ({_clock_of(new, scale)}), not {_quoted(old)} "
                f"({_clock_of(old, scale)})"
            )
        else:
            texts.append(f"{name} is {_quoted(new)}, not {_quoted(old)}")
    return ", " + listed_text(texts)


def _group_ends(answer: Summary, other: Summary, scale: int | None) -> str:
    """Of groups, the lowest and highest counted from the open against the answer's:
    "avg_t runs from 'Mon' 471.92 (07:52) to 'Wed' 560 (09:20), not from 'Thu' 688.85
    (11:29) to 'Tue' 781.13 (13:01)"; '' when either is no grouped answer."""
    ends = []
    for summary in (other, answer):
        low, high = summary.min or {}, summary.max or {}
        values = [k for k in low if k not in (summary.by or []) and _is_number(low[k])]
        if not values or not _is_number(high.get(values[0])):
            return ""
        column = values[0]
        label = ", ".join(f"'{low[k]}'" for k in summary.by or [] if k in low)
        top = ", ".join(f"'{high[k]}'" for k in summary.by or [] if k in high)
        ends.append((column, (label, low[column]), (top, high[column])))
    (column, low, high), (_, was_low, was_high) = ends

    def said(group: tuple[str, Any]) -> str:
        clock_ = f" ({_clock_of(group[1], scale)})" if scale else ""
        return f"{group[0]} {_quoted(group[1])}{clock_}"

    return (
        f"{column} runs from {said(low)} to {said(high)}, not from {said(was_low)} to "
        f"{said(was_high)}"
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _quoted(value: float) -> str:
    """A number as the summary prints it: 761.56 of 761.5615, 0.3538 of 0.353846."""
    return value_text(value)


def _clock_of(value: float, scale: int) -> str:
    """A clock value as a time of day: -31.52 minutes is 23:28, -0.5 hours 23:30."""
    return format_clock(round(value * scale) % MINUTES_PER_DAY)
