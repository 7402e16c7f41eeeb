"""An aggregate's argument on each row behind the number (``up`` in ``mean(up)``,
``fh_up and day_down`` in ``count(fh_up and day_down)``): the mapped column it names, or the
expression evaluated again by the engine's evaluator over those rows. Only an expression that
reads each row alone: one that reads earlier bars would see the kept rows' neighbours, not
the bars'. A chart drawing these rows checks they add up to the answer before it trusts them.

The CSV and the chart of a number share ``statistic_arguments``: the values a statistic of
an expression took (``range / open * 100`` of ``mean(range / open * 100)``), a column of
the rows as the mapped form's ``range_pct`` is.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from barb.errors import BarbError, UnknownSession
from barb.proof_names import as_list
from barb.result import Result
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate
from barb.script.library import is_aggregate_call, lookup
from barb.script.parser import parse_expression
from barb.script.reach import reach

_ALIAS = re.compile(r"\s+as\s+", re.IGNORECASE)


def row_values(text: str, rows: pd.DataFrame, result: Result) -> pd.Series | None:
    """The expression ``text`` on each row, or None when the rows cannot tell it."""
    try:
        expr = parse_expression(text)
        if isinstance(expr, ast.Column) and expr.name in rows.columns:
            return rows[expr.name]
        if not reach(expr).local:
            return None
        ctx = EvalContext(
            frame=rows, timeframe=_timeframe(result), session_bars=_no_sessions, step="select"
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


def statistic_arguments(rows: pd.DataFrame, result: Result) -> dict[str, pd.Series]:
    """The values each statistic of an expression in the answer's select took on each row
    behind it (``mean(range / open * 100)``: ``range / open * 100``), by the expression's
    text, numbers only: what its histogram draws and its CSV holds, as the mapped form's
    column (``range_pct``) is for ``mean(range_pct)``. Statistics of one sample only (mean,
    median, percentile, std, sum…); a share's condition (``mean(close > open)``), a bare
    column and an expression over earlier bars are left out, and so is a select item that
    does more than call the statistic (``mean(x) * 100``).
    """
    found: dict[str, pd.Series] = {}
    for item in as_list(_final_stage(result.query).get("select")):
        text = _ALIAS.split(item)[0]
        try:
            expr = parse_expression(text)
        except BarbError:
            continue
        if not (is_aggregate_call(expr) and isinstance(expr, ast.Call) and expr.args):
            continue
        spec = lookup(expr.name)
        argument = expr.args[0]
        # A statistic of one sample, its first argument (not arg_max's value, a correlation's
        # pair or a count's condition).
        one_sample = spec is not None and spec.sample == 1 and spec.sample_from == 0
        if not one_sample or isinstance(argument, ast.Column):
            continue
        if not any(isinstance(node, ast.Column) for node in ast.walk(argument)):
            continue  # a constant: mean(1)
        name = argument.to_text()
        if name in rows.columns or name in found:
            continue
        values = row_values(name, rows, result)
        if values is None or pd.api.types.is_bool_dtype(values):
            continue
        if pd.api.types.is_numeric_dtype(values):
            found[name] = values
    return found


def _final_stage(query: dict) -> dict:
    """The stage whose select made the answer: ``then`` when the query has one."""
    then = query.get("then")
    return then if isinstance(then, dict) and then else query


def _timeframe(result: Result) -> str:
    return result.metadata.timeframe if result.metadata else "daily"
