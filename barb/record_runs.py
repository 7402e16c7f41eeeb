"""The rows that prove a streak record: the longest run itself, not every bar.

"The longest run of up days" is ``max(run)`` over ``"run": "streak(close > prev(close))"``,
and the rows behind that number are every day it was read over: NQ's CSV held all 4,647
RTH days for an answer of 14 (p47d q09), the 14 a trader wants to check lost among them,
and on minute bars the run could lie past the file's first 50,000 rows. A streak record's
file holds each longest run (every one of a tie) with the row before it and the row after
it, so the streak's column reads 0, 1, 2 … 14, 0: where the run began and where it broke,
and each of its days beside the one it was compared with. The chart still draws the
streak over every row (the distribution it is the longest of).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from barb.errors import BarbError
from barb.lineage import MAX_DEPTH, Lineage
from barb.proof_names import as_list
from barb.script import ast
from barb.script.parser import parse_select_item

# The select calls that read a column's longest run, and which of their arguments is it.
_RECORD_ARGUMENT = {"max": 0, "arg_max": -1}


def record_columns(query: Mapping[str, Any]) -> list[str]:
    """The streak columns whose longest run the answer's select reads: ``run`` of
    ``max(run)`` or ``arg_max(date(), run)``, where ``run`` is ``streak(…)`` in the map
    (through its names). A statistic of a streak written in place (``max(streak(…))``)
    is none: its values are no column of the rows."""
    then = query.get("then")
    stage = then if isinstance(then, dict) and then else query
    lineage = Lineage(query)
    found: list[str] = []
    for item in as_list(stage.get("select")):
        try:
            expr, _ = parse_select_item(item)
        except BarbError:
            continue
        if not isinstance(expr, ast.Call) or not expr.args:
            continue
        at = _RECORD_ARGUMENT.get(expr.name.lower())
        read = expr.args[at] if at is not None else None
        if isinstance(read, ast.Column) and read.name not in found and _is_streak(lineage, read):
            found.append(read.name)
    return found


def _is_streak(lineage: Lineage, column: ast.Column) -> bool:
    """Whether the stage's ``column`` (read from its map, scope 1) is made by streak()."""
    found = lineage.definition(column.name, 1)
    for _ in range(MAX_DEPTH):
        if found is None:
            return False
        expr, _, inner = found
        if not isinstance(expr, ast.Column):
            return isinstance(expr, ast.Call) and expr.name.lower() == "streak"
        found = lineage.definition(expr.name, inner)
    return False


def record_run_rows(rows: pd.DataFrame, query: Mapping[str, Any]) -> pd.DataFrame | None:
    """The rows of each longest run of the streaks ``record_columns`` names, with the row
    before and the row after each, in the rows' order; None when the answer reads no
    streak's record, no row is in a run, a run's rows are not all among ``rows`` (a where
    that dropped some) or the runs would be about as many rows as ``rows``: the rows
    behind the number prove it then, as before.

    A run ending at 2020-11-10 with 14 there holds the rows whose streak reads 14, 13 … 1
    going back (an empty row among them, which streak() skips, too); the rows are then
    2020-10-22 (0) to 2020-11-11 (0). A run the rows' start cuts (begun before the period)
    holds the rows there are."""
    positions: set[int] = set()
    for name in record_columns(query):
        if name not in rows.columns or not pd.api.types.is_numeric_dtype(rows[name]):
            continue
        values = rows[name].to_numpy(dtype="float64", na_value=np.nan)
        best = np.nanmax(values, initial=0)
        if not best > 0:
            continue
        ends = np.flatnonzero(values == best)
        if len(ends) * (best + 2) >= len(values):
            return None  # a tie of runs about as long as the rows: the rows themselves
        for end in ends:
            run = _run(values, int(end))
            if run is None:
                return None
            first, last = max(run[0] - 1, 0), min(run[1] + 1, len(values) - 1)
            positions.update(range(first, last + 1))
    if not positions:
        return None
    return rows.iloc[sorted(positions)].reset_index(drop=True)


def _run(values: np.ndarray, end: int) -> tuple[int, int] | None:
    """The first and last row of the run ending at row ``end``: back from its length to 1,
    over empty rows; None when a row reads other than the next count down."""
    want, at = values[end], end
    while at >= 0:
        value = values[at]
        if not np.isnan(value):
            if value != want:
                return None
            if want == 1:
                return at, end
            want -= 1
        at -= 1
    return 0, end  # begun before the first row
