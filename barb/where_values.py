"""The values a where computed, beside the rows behind the number.

"Days with RSI below 30 in 2024" as ``"where": "rsi(close, 14) < 30"`` with ``count()``
listed the 15 days with their OHLCV only, where the mapped form (``{"rsi": "rsi(close,
14)"}``, ``"where": "rsi < 30"``) listed each day's RSI too: the CSV of the one left the
trader nothing to check the condition against. Each side of a comparison in the where that
reads other bars (an indicator, prev(), a rolling mean) is listed under its text, as a map
column is under its name. A side each row tells alone (``close - open``, ``hour()``) is left
out: the row's own columns show it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from barb.errors import BarbError
from barb.script import ast
from barb.script.library import is_aggregate_call
from barb.script.reach import reach


def where_sides(where: ast.Expr) -> list[ast.Expr]:
    """The sides of the where's comparisons that read other bars, each once, as written:
    ``rsi(close, 14)`` of ``rsi(close, 14) < 30``, ``sar()`` of ``close > sar()``."""
    sides: list[ast.Expr] = []
    for node in ast.walk(where):
        if not isinstance(node, ast.Compare):
            continue
        for side in (node.left, node.right):
            if isinstance(side, ast.Column) or side in sides or reach(side).local:
                continue
            # An aggregate is one number over the rows, not each row's value.
            if any(is_aggregate_call(part) for part in ast.walk(side)):
                continue
            sides.append(side)
    return sides


def with_where_values(
    build: Callable[[], pd.DataFrame],
    sides: list[ast.Expr],
    again: Callable[[ast.Expr], object],
    keep: np.ndarray,
) -> pd.DataFrame:
    """The rows ``build`` gives (one per true of ``keep``, in its order) with each of
    ``sides``' numbers, evaluated again over every row as the where read them (indicators
    warmed up on the bars before the period), on the rows kept."""
    rows = build()
    for side in sides:
        try:
            values = again(side)
        except BarbError:
            continue
        if not isinstance(values, pd.Series) or len(values) != len(keep):
            continue
        if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            continue
        name = side.to_text()
        if name not in rows.columns:
            rows[name] = values.to_numpy()[keep]
    return rows
