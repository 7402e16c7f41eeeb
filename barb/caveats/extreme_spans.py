"""Which side of a comparison bounds the other by construction, row by row.

A bar's high is the highest price over the bar; session_low('09:30-09:45') the lowest over
those minutes of the row's trading date; cummax(high) the highest over the bars so far, this
one's among them. Where one side's stretch of the day holds the other's, one bounds the
other whatever the prices did: a day's low is never above its opening range's low, a 1m bar's
high never above its session's high. A 1m bar after 09:45 lies outside the opening range, so
nothing but the market keeps its high under the range's high: a day on which it stayed under
says how the day went (p38b Q21), not that it could not go otherwise.

``never_above(low, high, ...)`` gives the rows on which ``low <= high`` is so built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Literal

import numpy as np
import pandas as pd

from barb.instruments import Instrument
from barb.script import ast
from barb.sessions import MINUTES_PER_DAY, minutes_of_day
from barb.timeframes import Timeframe

# What a side is of its stretch: its highest or lowest price, one price in it (an open, a
# close), or its highest less its lowest.
Kind = Literal["max", "min", "point", "width"]
_COLUMNS: dict[str, Kind] = {
    "high": "max",
    "low": "min",
    "open": "point",
    "close": "point",
    "range": "width",
}
_SESSION_CALLS: dict[str, Kind] = {
    "session_high": "max",
    "session_low": "min",
    "session_open": "point",
    "session_close": "point",
}
# Running and rolling extremes whose rows include the row's own (donchian_upper(20) holds
# this bar: volatility.py), as (their kind, the column they read when they name none).
_RUNNING: dict[str, tuple[Kind, str | None]] = {
    "cummax": ("max", None),
    "cummin": ("min", None),
    "rolling_max": ("max", None),
    "rolling_min": ("min", None),
    "donchian_upper": ("max", "high"),
    "donchian_lower": ("min", "low"),
}
BAR = ""  # the stretch of the row's own bar; any other is a session's key ('09:30-09:45')


@dataclasses.dataclass(frozen=True)
class Extreme:
    """A side read as ``kind`` over ``over``: the bar's (BAR) or a session's on the row's
    date. high is Extreme("max", BAR), session_low('09:30-09:45') Extreme("min", "09:30-09:45")."""

    kind: Kind
    over: str


@dataclasses.dataclass(frozen=True)
class Running:
    """The highest (``kind`` "max") or lowest of ``of`` over rows that include the row's own:
    cummax(high) is Running("max", high), never below high on any row."""

    kind: Kind
    of: ast.Expr


Side = Extreme | Running


@dataclasses.dataclass(frozen=True)
class Stretch:
    """Minutes of the trading date counted from its start (CME's 18:00 is 0), [start, end),
    per row or one for all; ``days`` when the bar holds other dates too (a week's)."""

    start: np.ndarray | int
    end: np.ndarray | int
    days: bool = False


def side(expr: ast.Expr, mapped: Mapping[str, ast.Expr]) -> Side | None:
    """What ``expr`` is an extreme of (through map names), None when it is no extreme."""
    for _ in range(len(mapped) + 1):  # orh → session_high(…); a cycle ends
        if isinstance(expr, ast.Column) and expr.name in mapped:
            expr = mapped[expr.name]
        else:
            break
    if isinstance(expr, ast.Column):
        kind = _COLUMNS.get(expr.name)
        return Extreme(kind, BAR) if kind else None
    if isinstance(expr, ast.Binary) and expr.op == "-":  # high - low: a range
        top, bottom = side(expr.left, mapped), side(expr.right, mapped)
        if isinstance(top, Extreme) and isinstance(bottom, Extreme) and top.over == bottom.over:
            return Extreme("width", top.over) if (top.kind, bottom.kind) == ("max", "min") else None
        return None
    if not isinstance(expr, ast.Call):
        return None
    name = expr.name.lower()
    if name in _SESSION_CALLS:
        # Lag 0 only: yesterday's session holds none of today's bars.
        values = [ast.literal_value(arg) for arg in expr.args]
        if not values or not isinstance(values[0], str) or values[1:] not in ([], [0]):
            return None
        return Extreme(_SESSION_CALLS[name], values[0])
    if name in _RUNNING:
        kind, column = _RUNNING[name]
        of = ast.Column(column) if column else (expr.args[0] if expr.args else None)
        return Running(kind, of) if of is not None else None
    return None


def never_above(
    low: ast.Expr,
    high: ast.Expr,
    mapped: Mapping[str, ast.Expr],
    stretch: Callable[[str], Stretch | None],
) -> np.ndarray | bool:
    """Per row (or for all), whether ``low <= high`` holds by how both are built.

    ``stretch`` gives a Stretch for BAR or a session's name, None when it cannot be placed
    on the trading date's clock (a window on another zone's clock)."""
    if low == high:
        return True
    proofs: list[np.ndarray | bool] = []
    upper, lower = side(high, mapped), side(low, mapped)
    if isinstance(upper, Running) and upper.kind == "max":  # low <= x <= cummax(x)
        proofs.append(never_above(low, upper.of, mapped, stretch))
    if isinstance(lower, Running) and lower.kind == "min":  # cummin(x) <= x <= high
        proofs.append(never_above(lower.of, high, mapped, stretch))
    if isinstance(lower, Extreme) and isinstance(upper, Extreme):
        proofs.append(_extremes(lower, upper, stretch))
    proof: np.ndarray | bool = False
    for each in proofs:
        proof = proof | each
    return proof


def could_be_built(low: ast.Expr, high: ast.Expr, mapped: Mapping[str, ast.Expr]) -> bool:
    """Whether ``low <= high`` is built so on some bars: the kinds of the sides allow it
    (a close under a high), as two closes or a close and an open never do. Asked before
    either side is evaluated: close > open is read again for nothing otherwise."""
    return bool(np.all(never_above(low, high, mapped, lambda _: _EVERYWHERE)))


# Every stretch over the whole of every trading date: where only the kinds decide.
_EVERYWHERE = Stretch(0, MINUTES_PER_DAY, days=True)


def _extremes(
    lower: Extreme, upper: Extreme, stretch: Callable[[str], Stretch | None]
) -> np.ndarray | bool:
    """Whether ``lower``'s value is at or below ``upper``'s by their stretches: a maximum
    over a stretch is at or above every price in it, a minimum at or below."""
    pair = (lower.kind, upper.kind)
    if pair in {("max", "max"), ("point", "max"), ("width", "width")}:
        inner, outer = lower.over, upper.over  # the stretch of the lower inside the upper's
    elif pair in {("min", "min"), ("min", "point")}:
        inner, outer = upper.over, lower.over
    elif pair == ("min", "max"):  # a low and a high of stretches that share a minute
        return _meet(lower.over, upper.over, stretch)
    else:
        return False
    return _inside(inner, outer, stretch)


def _inside(inner: str, outer: str, stretch: Callable[[str], Stretch | None]) -> np.ndarray | bool:
    if inner == outer:
        return True
    a, b = stretch(inner), stretch(outer)
    if a is None or b is None or (a.days and not b.days):
        return False
    return (a.start >= b.start) & (a.end <= b.end)


def _meet(one: str, other: str, stretch: Callable[[str], Stretch | None]) -> np.ndarray | bool:
    if one == other:
        return True
    a, b = stretch(one), stretch(other)
    if a is None or b is None:
        return False
    return (a.start < b.end) & (b.start < a.end)


def stretches(
    instrument: Instrument, session: str, timeframe: Timeframe, frame: pd.DataFrame
) -> Callable[[str], Stretch | None]:
    """The Stretch of the bars of ``session`` on ``timeframe`` (BAR) and of any session
    named, each worked out once when first asked for."""
    found: dict[str, Stretch | None] = {}

    def window(name: str) -> Stretch | None:
        spec = instrument.session(name)
        if spec.zone is not None:  # its exchange hours move with two zones' daylight saving
            return None
        opens = instrument.trading_day_start_minute
        start = (spec.start_minute - opens) % MINUTES_PER_DAY
        end = (spec.end_minute - opens) % MINUTES_PER_DAY or MINUTES_PER_DAY
        # A window across the trading day's start holds the ends of two trading dates.
        return Stretch(start, end) if start < end else None

    def bars() -> Stretch | None:
        day = window(session)
        if day is None or not timeframe.intraday:
            return day and dataclasses.replace(day, days=timeframe.calendar)
        assert timeframe.minutes is not None
        opens = instrument.trading_day_start_minute
        minute = minutes_of_day(frame["timestamp"].to_numpy()).astype(np.int64)
        start = (minute - opens) % MINUTES_PER_DAY
        # A bar holds its minutes of the session: the 16:30 hour bar of RTH ends at 17:00.
        return Stretch(start, np.minimum(start + timeframe.minutes, day.end))

    def stretch(name: str) -> Stretch | None:
        if name not in found:
            found[name] = bars() if name == BAR else window(name)
        return found[name]

    return stretch
