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

from barb.charts.select_calls import parse_call
from barb.charts.value_text import clock_text
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
_ALIAS = re.compile(r"\s+as\s+([A-Za-z_]\w*)\s*$", re.IGNORECASE)
CLOCK_NAMES = frozenset({"minute_of_day"})
HOUR_NAMES = frozenset({"hour"})


def _stages(query: dict[str, Any]) -> list[dict[str, Any]]:
    then = query.get("then")
    return [query, then] if isinstance(then, dict) else [query]


def _origin(name: str, query: dict[str, Any]) -> tuple[str, str] | None:
    """What ``name`` is made from: ("map", expression) or ("carry", argument column)."""
    for stage in reversed(_stages(query)):
        for item in as_list(stage.get("select")):
            alias = _ALIAS.search(item)
            func, args = parse_call(item)
            # Unnamed, the engine names it after the call: arg_max(tod, high) -> arg_max_tod_high.
            default = f"{func}_{args[0]}" if args and args[0] else None
            unnamed = default is not None and (name == default or name.startswith(default + "_"))
            if (alias and alias.group(1) == name) or (not alias and unnamed):
                if func in CARRIES_VALUE and args and args[0]:
                    return "carry", args[0]
                return None
        maps = stage.get("map") or {}
        if name in maps:
            return "map", str(maps[name])
    return None


def is_clock_name(name: str, query: dict[str, Any], depth: int = 0) -> bool:
    """Whether the query made ``name`` a minute of the day (``hour() * 60 + minute()``)."""
    if name in CLOCK_NAMES:
        return True
    origin = _origin(name, query)
    if origin is None or depth > 8:
        return False
    kind, source = origin
    if kind == "map":
        return bool(_CLOCK_EXPR.match(source)) or (
            re.fullmatch(r"[A-Za-z_]\w*", source.strip()) is not None
            and source.strip() != name
            and is_clock_name(source.strip(), query, depth + 1)
        )
    return source != name and is_clock_name(source, query, depth + 1)


def _whole_in(series: pd.Series, top: int) -> bool:
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return False
    values = pd.to_numeric(series, errors="coerce").dropna().to_numpy(dtype="float64")
    return bool(values.size) and bool(
        np.all((values >= 0) & (values < top) & (values == np.round(values)))
    )


def clock_kind(name: str, series: pd.Series, query: dict[str, Any]) -> str | None:
    """``"minute"`` for minutes of the day, ``"hour"`` for hours of the day, else None."""
    if is_clock_name(name, query) and _whole_in(series, MINUTES_PER_DAY):
        return "minute"
    if name in HOUR_NAMES and _whole_in(series, 24):
        return "hour"
    return None


def clock_axis(axis: Axis, lo: float, hi: float) -> None:
    """An axis of minutes of the day read on a clock (``09:30``), ticked at round times."""
    step = next(m for m in CLOCK_STEPS if (hi - lo) / m <= 5)
    axis.set_major_locator(MultipleLocator(step))
    axis.set_major_formatter(FuncFormatter(lambda x, _: clock_text(x)))
