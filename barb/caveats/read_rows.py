"""The rows a warning weighs a statistic again over (the days without the holidays, the
full days without the short ones), of the columns the statistic reads."""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.frames import masked_values, take_rows
from barb.script import ast
from barb.script.library import is_aggregate_call


def rows_read(
    kept: pd.DataFrame, mask: np.ndarray, exprs: list[ast.Expr], by: list[str] | None
) -> pd.DataFrame:
    """The ``kept`` rows where ``mask`` holds, of the columns ``exprs`` and the group keys
    ``by`` read when that is all they read (aggregates of columns and their arithmetic:
    mean(range), sum(close - open)): the other columns of a weekday question's days are
    never read, and taking them cost more than the statistic. Every column otherwise (a
    function may read a column it does not name: dayname() the trading date)."""
    names = list(by or [])
    for expr in exprs:
        for node in ast.walk(expr):
            if isinstance(node, ast.Column):
                names.append(node.name)
            elif isinstance(node, ast.Call) and is_aggregate_call(node):
                continue
            elif not isinstance(node, (ast.Binary, ast.Unary, *ast.LITERAL_TYPES)):
                return take_rows(kept, mask)
    names = list(dict.fromkeys(names))
    if not names or not all(name in kept.columns for name in names):
        return take_rows(kept, mask)  # the evaluation says which is missing, as before
    rows = np.flatnonzero(mask)
    return pd.DataFrame({name: masked_values(kept[name], rows) for name in names}, copy=False)
