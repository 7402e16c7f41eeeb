"""Groups of a run counter, named by the day each run began.

Runs (losing streaks, episodes) are grouped by a counter the query makes for them,
``run_id = cumsum(if(down, 0, 1))``: a number that only tells runs apart. When the select
also finds each run's first day (``first(date()) as start``), that day is the group's name:
"lowest 1674 −912.8 points" over bars "1. 1674, 2. 1924" gave the person no date at all.
"""

from __future__ import annotations

import pandas as pd

from barb.charts.value_text import date_text
from barb.lineage import Lineage
from barb.result import Result
from barb.script import ast

COUNTERS = frozenset({"cumsum"})  # a running total of 0s and 1s numbers the runs
FIRST_OF = frozenset({"first", "min"})  # a group's earliest value


def run_start_labels(table: pd.DataFrame, by: list[str], result: Result) -> tuple[str, list[str]]:
    """The column holding each run's first day and those days as labels, when the one group
    key is a running count and the select found each group's first date; else ``("", [])``."""
    if len(by) != 1:
        return "", []
    lineage = Lineage(result.query)
    key = lineage.definition(by[0])
    if key is None or not _call_of(key[0], COUNTERS):
        return "", []
    for name in table.columns:
        values = table[name]
        made = lineage.definition(str(name))
        if (
            made is not None
            and _call_of(made[0], FIRST_OF)
            and pd.api.types.is_datetime64_any_dtype(values)
            and values.notna().all()
            and values.is_unique  # a name for each group
        ):
            return str(name), [date_text(v) for v in values]
    return "", []


def _call_of(expr: ast.Expr, names: frozenset[str]) -> bool:
    return isinstance(expr, ast.Call) and expr.name.lower() in names
