"""An aggregate's argument on each row behind the number (``up`` in ``mean(up)``,
``fh_up and day_down`` in ``count(fh_up and day_down)``): the mapped column it names, or the
expression evaluated again by the engine's evaluator over those rows. Only an expression that
reads each row alone: one that reads earlier bars would see the kept rows' neighbours, not
the bars'. A chart drawing these rows checks they add up to the answer before it trusts them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.charts.columns import timeframe
from barb.errors import BarbError, UnknownSession
from barb.result import Result
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate
from barb.script.parser import parse_expression
from barb.script.reach import reach


def row_values(text: str, rows: pd.DataFrame, result: Result) -> pd.Series | None:
    """The expression ``text`` on each row, or None when the rows cannot tell it."""
    try:
        expr = parse_expression(text)
        if isinstance(expr, ast.Column) and expr.name in rows.columns:
            return rows[expr.name]
        if not reach(expr).local:
            return None
        ctx = EvalContext(
            frame=rows, timeframe=timeframe(result), session_bars=_no_sessions, step="select"
        )
        values = evaluate(expr, ctx)
    except BarbError:
        return None
    return values if isinstance(values, pd.Series) and len(values) == len(rows) else None


def held(values: pd.Series) -> np.ndarray | None:
    """A condition's value on each row, 1.0 or 0.0 (NaN where unknown); None when the values
    are no condition."""
    if not pd.api.types.is_bool_dtype(values):
        return None
    known = values.notna().to_numpy()
    return np.where(known, values.to_numpy(dtype=bool, na_value=False), np.nan)


def counted(values: pd.Series) -> np.ndarray:
    """The rows ``count()`` of these values counts, as the engine does: where a condition is
    true (not unknown), else where a value is present."""
    if pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=bool, na_value=False)
    return values.notna().to_numpy()


def _no_sessions(name: str) -> pd.DataFrame:
    raise UnknownSession(f"no session bars behind a chart: {name}")
