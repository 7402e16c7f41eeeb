"""Columns that hold a time of day, so that their axis reads ``09:30`` rather than ``570``.

A minute of the day is made in Barb Script as ``hour() * 60 + minute()``, under any name, and
travels on through aggregates that return a row's own value (``arg_max(tod, high) as
high_tod``, ``first``, ``min`` …) and through the ``then`` stage. The column is followed back
through the query's map and select, so the name alone never decides; the values must also be
whole minutes of a day.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axis import Axis
from matplotlib.ticker import FuncFormatter, MultipleLocator

from barb.charts.select_calls import call_args
from barb.charts.value_text import clock_text, is_finite_number
from barb.proof_names import as_list

MINUTES_PER_DAY = 1440
CLOCK_STEPS = (15, 30, 60, 120, 180, 240, 360, 720, 1440)  # minutes between clock ticks
# Aggregates whose value is a value of their argument's kind (a mean of times is a time).
CARRIES_VALUE = frozenset(
    {"arg_max", "arg_min", "first", "last", "min", "max", "median", "percentile", "mean", "avg"}
)
_CLOCK_EXPR = re.compile(
    r"^\s*(?:hour\(\)\s*\*\s*60\s*\+\s*minute\(\)|minute\(\)\s*\+\s*hour\(\)\s*\*\s*60|"
    r"minute\(\)\s*\+\s*60\s*\*\s*hour\(\)|60\s*\*\s*hour\(\)\s*\+\s*minute\(\))\s*$"
)
_HOUR_EXPR = re.compile(r"^\s*hour\(\)\s*$")
_CALENDAR_EXPR = re.compile(r"^\s*(month|quarter)\(\)\s*$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")
_ALIAS = re.compile(r"\s+as\s+([A-Za-z_]\w*)\s*$", re.IGNORECASE)
CLOCK_NAMES = frozenset({"minute_of_day"})
HOUR_NAMES = frozenset({"hour"})


def _stages(query: dict[str, Any]) -> list[dict[str, Any]]:
    then = query.get("then")
    return [query, then] if isinstance(then, dict) else [query]


def _origin(name: str, query: dict[str, Any]) -> str | None:
    """The expression ``name`` holds values of: its map expression, or the argument of an
    aggregate that keeps its argument's kind (``arg_max(tod, high) as high_tod`` -> ``tod``)."""
    for stage in reversed(_stages(query)):
        for item in as_list(stage.get("select")):
            alias = _ALIAS.search(item)
            func, args = call_args(item)
            # Unnamed, the engine names it after the call: arg_max(tod, high) -> arg_max_tod_high.
            default = f"{func}_{args[0]}" if args and _NAME.match(args[0]) else None
            unnamed = default is not None and (name == default or name.startswith(default + "_"))
            if (alias and alias.group(1) == name) or (not alias and unnamed):
                return args[0] if func in CARRIES_VALUE and args else None
        maps = stage.get("map") or {}
        if name in maps:
            return str(maps[name])
    return None


def time_kind(name: str, query: dict[str, Any], depth: int = 0) -> str | None:
    """``"minute"`` when the query made ``name`` a minute of the day (``hour() * 60 +
    minute()``), ``"hour"`` an hour of the day (``hour()``), else None."""
    if name in CLOCK_NAMES:
        return "minute"
    if name in HOUR_NAMES:
        return "hour"
    source = _origin(name, query)
    if source is None or depth > 8:
        return None
    source = source.strip()
    if _CLOCK_EXPR.match(source):
        return "minute"
    if _HOUR_EXPR.match(source):
        return "hour"
    if _NAME.match(source) and source != name:
        return time_kind(source, query, depth + 1)
    return None


def calendar_part(name: str, query: dict[str, Any], depth: int = 0) -> str | None:
    """``"month"`` or ``"quarter"`` when the query made ``name`` the month (``month()``, 1 to
    12) or the quarter (``quarter()``, 1 to 4) of the year, followed through the map."""
    if name.lower() in ("month", "quarter"):
        return name.lower()
    source = _origin(name, query)
    if source is None or depth > 8:
        return None
    call = _CALENDAR_EXPR.match(source)
    if call:
        return call.group(1)
    source = source.strip()
    if _NAME.match(source) and source != name:
        return calendar_part(source, query, depth + 1)
    return None


def is_clock_name(name: str, query: dict[str, Any]) -> bool:
    """Whether ``name`` holds minutes of the day."""
    return time_kind(name, query) == "minute"


def _whole_in(series: pd.Series, top: int) -> bool:
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return False
    values = pd.to_numeric(series, errors="coerce").dropna().to_numpy(dtype="float64")
    return bool(values.size) and bool(
        np.all((values >= 0) & (values < top) & (values == np.round(values)))
    )


def clock_kind(name: str, series: pd.Series, query: dict[str, Any]) -> str | None:
    """``time_kind`` of a column whose values are whole minutes or hours of a day."""
    kind = time_kind(name, query)
    top = {"minute": MINUTES_PER_DAY, "hour": 24}.get(kind or "")
    return kind if top and _whole_in(series, top) else None


def time_text(value: Any, kind: str) -> str:
    """A minute or an hour of the day on the clock: 570 or 9.5 -> ``09:30``."""
    return clock_text(value * 60 if kind == "hour" and is_finite_number(value) else value)


def clock_axis(axis: Axis, lo: float, hi: float, kind: str = "minute") -> None:
    """An axis of minutes (or hours) of the day read on a clock, ticked at round times."""
    per = 60 if kind == "hour" else 1
    step = next(m for m in CLOCK_STEPS if (hi - lo) * per / m <= 5)
    axis.set_major_locator(MultipleLocator(step / per))
    axis.set_major_formatter(FuncFormatter(lambda x, _: time_text(x, kind)))
