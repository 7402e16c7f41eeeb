"""Columns that hold a time of day, so that their axis reads ``09:30`` rather than ``570``.

A minute of the day is made in Barb Script as ``hour() * 60 + minute()`` (or counted from the
18:00 open, negative before midnight: ``if(hour() >= 18, … - 1440, …)``), under any name, and
travels on through aggregates that return a row's own value (``arg_max(tod, high) as
high_tod``, ``first``, ``min`` …) and through the ``then`` stage. The column is followed back
through the query's map and select, so the name alone never decides; the values must also be
whole minutes of a day.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axis import Axis
from matplotlib.ticker import FuncFormatter, MultipleLocator

from barb.charts.value_text import clock_text, is_finite_number
from barb.instruments import load_instrument
from barb.lineage import Lineage
from barb.result import Result
from barb.script import ast
from barb.timeframes import timeframe

MINUTES_PER_DAY = 1440
CLOCK_STEPS = (15, 30, 60, 120, 180, 240, 360, 720, 1440)  # minutes between clock ticks
# Aggregates whose value is a value of their argument's kind (a mean of times is a time).
CARRIES_VALUE = frozenset(
    {"arg_max", "arg_min", "first", "last", "min", "max", "median", "percentile", "mean", "avg"}
)
CLOCK_NAMES = frozenset({"minute_of_day"})
HOUR_NAMES = frozenset({"hour"})
# Numbers that name a place in the year: a group, never a magnitude to draw as a bar.
CALENDAR_PARTS = ("month", "quarter", "weekofyear", "dayofyear")


def time_kind(name: str, query: dict[str, Any], values: Iterable[Any] = ()) -> str | None:
    """``"minute"`` when the query made ``name`` a minute of the day (``hour() * 60 +
    minute()``), ``"hour"`` an hour of the day (``hour()``), else None.

    A clock guarded by a marker for "no time" (``if(high > onh, hour() * 60 + minute(), -1)``)
    is a clock while none of ``values`` is the marker: −1 is not 23:59."""
    if name in CLOCK_NAMES:
        return "minute"
    if name in HOUR_NAMES:
        return "hour"
    source = Lineage(query).values_of(name, CARRIES_VALUE)
    if source is None:
        return None
    if _is_clock(source):
        return "minute"
    marker = no_time_marker(source)
    if marker is not None:
        return None if any(_equals(v, marker) for v in values) else "minute"
    return "hour" if _bare_call(source) == "hour" else None


def no_time_marker(expr: ast.Expr) -> float | None:
    """The number an if() gives instead of a clock (``-1`` in ``if(cond, hour() * 60 +
    minute(), -1)``), else None."""
    if not (isinstance(expr, ast.Call) and expr.name.lower() == "if" and len(expr.args) == 3):
        return None
    for clock, other in ((expr.args[1], expr.args[2]), (expr.args[2], expr.args[1])):
        marker = _literal(other)
        if marker is not None and _is_clock(clock):
            return marker
    return None


def _literal(expr: ast.Expr) -> float | None:
    """A number written in the query (``-1``), else None."""
    if isinstance(expr, ast.Unary) and expr.op == "-":
        inner = _literal(expr.operand)
        return None if inner is None else -inner
    return float(expr.value) if isinstance(expr, ast.Number) else None


def _equals(value: Any, marker: float) -> bool:
    return is_finite_number(value) and float(value) == marker


def calendar_part(name: str, query: dict[str, Any]) -> str | None:
    """``"month"`` or ``"quarter"`` when the query made ``name`` the month (``month()``, 1 to
    12) or the quarter (``quarter()``, 1 to 4) of the year, followed through the map; likewise
    ``"weekofyear"`` and ``"dayofyear"``."""
    if name.lower() in CALENDAR_PARTS:
        return name.lower()
    source = Lineage(query).values_of(name, CARRIES_VALUE)
    part = _bare_call(source) if source is not None else None
    return part if part in CALENDAR_PARTS else None


def _bare_call(expr: ast.Expr) -> str | None:
    """The name of a call without arguments (``hour()`` → hour), else None."""
    return expr.name.lower() if isinstance(expr, ast.Call) and not expr.args else None


def _is_clock(expr: ast.Expr) -> bool:
    """``hour() * 60 + minute()``, or that counted from an evening open as the reference
    writes it for ETH and OVERNIGHT, whole days earlier on one branch (negative before
    midnight): ``if(hour() >= 18, hour() * 60 + minute() - 1440, hour() * 60 + minute())``,
    or ``hour() * 60 + minute() - if(hour() >= 18, 1440, 0)``."""
    if isinstance(expr, ast.Call) and expr.name.lower() == "if" and len(expr.args) == 3:
        return all(_is_clock(branch) for branch in expr.args[1:])
    if isinstance(expr, ast.Binary) and expr.op in ("+", "-") and _whole_days(expr.right):
        return _is_clock(expr.left)
    return _is_minute_of_day(expr)


def _whole_days(expr: ast.Expr) -> bool:
    """A shift by whole days of minutes: ``1440``, or an if() of such (``if(…, 1440, 0)``)."""
    if isinstance(expr, ast.Number):
        return expr.value % MINUTES_PER_DAY == 0
    if isinstance(expr, ast.Call) and expr.name.lower() == "if" and len(expr.args) == 3:
        return all(_whole_days(branch) for branch in expr.args[1:])
    return False


def _is_minute_of_day(expr: ast.Expr) -> bool:
    """``hour() * 60 + minute()``, its terms and factors in either order."""
    if not (isinstance(expr, ast.Binary) and expr.op == "+"):
        return False
    for hours, minutes in ((expr.left, expr.right), (expr.right, expr.left)):
        if _bare_call(minutes) == "minute" and isinstance(hours, ast.Binary) and hours.op == "*":
            factors = (hours.left, hours.right)
            if any(_bare_call(f) == "hour" for f in factors) and any(
                isinstance(f, ast.Number) and f.value == 60 for f in factors
            ):
                return True
    return False


def is_clock_name(name: str, query: dict[str, Any]) -> bool:
    """Whether ``name`` holds minutes of the day."""
    return time_kind(name, query) == "minute"


def _numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _whole_in(series: pd.Series, bottom: int, top: int) -> bool:
    if not _numeric(series):
        return False
    values = pd.to_numeric(series, errors="coerce").dropna().to_numpy(dtype="float64")
    return bool(values.size) and bool(
        np.all((values >= bottom) & (values < top) & (values == np.round(values)))
    )


def clock_kind(name: str, series: pd.Series, query: dict[str, Any]) -> str | None:
    """``time_kind`` of a column whose values are whole minutes or hours of a day; minutes
    counted from an evening open are negative before midnight (−103 is 22:17)."""
    kind = time_kind(name, query, series.to_numpy() if _numeric(series) else ())
    if kind == "minute":
        return kind if _whole_in(series, -MINUTES_PER_DAY, MINUTES_PER_DAY) else None
    return kind if kind == "hour" and _whole_in(series, 0, 24) else None


def time_text(value: Any, kind: str) -> str:
    """A minute or an hour of the day on the clock: 570 or 9.5 -> ``09:30``."""
    return clock_text(value * 60 if kind == "hour" and is_finite_number(value) else value)


def clock_axis(axis: Axis, lo: float, hi: float, kind: str = "minute") -> None:
    """An axis of minutes (or hours) of the day read on a clock, ticked at round times."""
    per = 60 if kind == "hour" else 1
    step = next(m for m in CLOCK_STEPS if (hi - lo) * per / m <= 5)
    axis.set_major_locator(MultipleLocator(step / per))
    axis.set_major_formatter(FuncFormatter(lambda x, _: time_text(x, kind)))


@dataclass(frozen=True)
class BarGrid:
    """Where a result's intraday bars start: every ``step`` minutes from the session's open
    at ``start``, for ``length`` minutes (RTH's 1h bars: 09:30, 10:30 … 16:30)."""

    start: int
    step: int
    length: int

    def first_in_hour(self, hour: int) -> int:
        """The minute the first bar of clock hour ``hour`` starts at: hour 15 of RTH's 1h
        bars is the bar from 15:30, hour 9 of its 5m bars begins at 09:30. The hour's top
        when no bar starts in it."""
        found = self._first_in_hour(hour)
        return hour * 60 if found is None else found

    def has_hour(self, hour: int) -> bool:
        """Whether a bar starts in clock hour ``hour``: ETH has none at 17:00, so an hour 17
        of 0 days is no answer to "which hour least often"."""
        return self._first_in_hour(hour) is not None

    def _first_in_hour(self, hour: int) -> int | None:
        for minute in range(hour * 60, hour * 60 + 60):
            since_open = (minute - self.start) % MINUTES_PER_DAY
            if since_open < self.length and since_open % self.step == 0:
                return minute
        return None

    def since_open(self, minute: float) -> float:
        """Minutes from the session's open, for ordering a session that crosses midnight
        from its 18:00 open, not from 00:00."""
        return (minute - self.start) % MINUTES_PER_DAY

    @property
    def crosses_midnight(self) -> bool:
        return self.start + self.length > MINUTES_PER_DAY


def bar_grid(result: Result) -> BarGrid | None:
    """The bar grid of an intraday result, None for daily and longer bars (or a session no
    longer known)."""
    meta = result.metadata
    if meta is None:
        return None
    try:
        tf = timeframe(meta.timeframe)
        session = load_instrument(meta.instrument).session(meta.session)
    except Exception:  # an instrument or session gone since the query ran: no grid
        return None
    if not tf.intraday:
        return None
    return BarGrid(session.start_minute, tf.minutes or 1, session.length_minutes)
