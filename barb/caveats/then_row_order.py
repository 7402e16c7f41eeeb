"""A then stage's running functions over a first stage that sorted its rows.

A then stage's rows are the first stage's table as listed: after its sort. first() and last()
read them in time (or key) order (``barb.stages``), but cumsum(), cummax(), prev(), streak()
and the other functions that read the rows around their own run in the order the rows are
in. Sorted newest first for display, ``"then": {"map": {"run_min": "cummin(low)"}}`` gave
each December day of 2025 the lowest low from the month's end back to it (25345 on 12-31,
its own low), not the running minimum since 12-01 (21182.75), with nothing said.
"""

from __future__ import annotations

import numpy as np

from barb.lineage import nodes
from barb.planning import Plan
from barb.result import sort_order
from barb.script import ast
from barb.script.query import SortKey
from barb.script.reach import own_reach
from barb.stage_output import sort_keys

# Functions that read every row of the period but not in an order: a rank by value.
ORDER_FREE = frozenset({"rank"})
# The columns a first stage sorts by time with, which a then stage's rows name by their label.
TIME_COLUMNS = frozenset({"timestamp", "date", "trading_date"})
# Calls named in the warning; more are left out.
NAMED_CALLS = 3


def then_order_caveat(plan: Plan, order: np.ndarray | None) -> list[str]:
    """The then stage's calls that read the rows around their own, when the first stage's
    sort put its rows out of time (key) order (``order``: each row's place in that order, as
    the first stage listed them): which order they ran in, and how to run them in time
    order. One sentence; nothing when the sort kept time order or then runs none."""
    then = plan.then
    if then is None or order is None or len(order) < 2 or bool((np.diff(order) >= 0).all()):
        return []
    calls = _running_calls(then.row_exprs, dict(then.map_exprs))
    if not calls:
        return []
    keys = [name for name, _ in plan.first.group_keys]
    natural = f"key order ({', '.join(keys)})" if keys else "time order"
    return [
        f"then ran {', '.join(calls)} over the rows in the first stage's sort order "
        f"({sort_order(sort_keys(plan.first))}), not in {natural} as first() and last() "
        f"read them: for {natural}, drop the first stage's sort and sort in then "
        f'("sort": "{_then_sort(plan)}").'
    ]


def _then_sort(plan: Plan) -> str:
    """The first stage's sort as then writes it: its rows name their bar by their label
    (date), not by timestamp."""
    label = plan.first.label
    keys = [
        SortKey(column=label, descending=k.descending) if label and k.column in TIME_COLUMNS else k
        for k in plan.first.sort
    ]
    return ", ".join(k.to_text() for k in keys)


def _running_calls(exprs: tuple[ast.Expr, ...], mapped: dict[str, ast.Expr]) -> list[str]:
    """The calls in ``exprs`` (through the map's names) whose value depends on the row order,
    as written: cummin(low), prev(close)."""
    found: dict[str, None] = {}
    for expr in exprs:
        for node in nodes(expr, mapped):
            if not isinstance(node, ast.Call) or node.name.lower() in ORDER_FREE:
                continue
            if not own_reach(node).local:
                found[node.to_text()] = None
    calls = list(found)
    more = len(calls) - NAMED_CALLS
    return calls[:NAMED_CALLS] + ([f"{more} more"] if more > 0 else [])
