"""How far an expression reaches beyond the bar it is computed for.

A period selects rows; it must not cut the history that ``prev()``, rolling windows,
indicators and patterns read. The planner asks this module how many bars before (and after,
for ``next()``) the period each expression needs, and evaluates on that slice. Each function's
own reach is declared where it is registered (``barb.script.functions.register``, rules in
``barb.script.warmup``); a call reads its own reach on top of its arguments'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from barb.script import ast
from barb.script.functions import FunctionSpec
from barb.script.library import lookup
from barb.script.warmup import ALL, ROW, Reach


def reach(expr: ast.Node, columns: Mapping[str, Reach] | None = None) -> Reach:
    """How many bars before and after each row ``expr`` reads.

    ``columns`` gives the reach of the columns the query computed (its map): a column that is
    ``rolling_mean(volume, 20)`` already reads 19 bars back, so ``prev()`` of it reads 20.
    """
    if isinstance(expr, ast.Column):
        return (columns or {}).get(expr.name, ROW)
    if isinstance(expr, ast.Call):
        own = own_reach(expr)
        inner = ROW
        for arg in expr.args:
            inner = inner.widest(reach(arg, columns))
        return own.then(inner)
    result = ROW
    for child in expr.children():
        result = result.widest(reach(child, columns))
    return result


def map_reach(exprs: Iterable[tuple[str, ast.Node]]) -> dict[str, Reach]:
    """The reach of each map column, in map order: a later column reads what the earlier
    ones it names read, on top of its own."""
    columns: dict[str, Reach] = {}
    for name, expr in exprs:
        columns[name] = reach(expr, columns)
    return columns


def own_reach(call: ast.Call) -> Reach:
    """How far ``call`` itself reads, its arguments' reach left out."""
    spec = lookup(call.name)
    if spec is None:
        return ROW
    if spec.reach is not None:
        return spec.reach(_literal_args(spec, call))
    return ALL if spec.body is None else reach(spec.body)  # a macro reads what its body reads


def reads_other_bars(call: ast.Call) -> bool:
    """Whether ``call`` itself (its arguments left out) reads bars before or after its own:
    a running total or rank reads only the period's rows, and a run restarted each day
    (``per`` 'day') only the day's."""
    own = own_reach(call)
    if own.back == 0 and own.ahead == 0:
        return False
    spec = lookup(call.name)
    return spec is None or _literal_args(spec, call).get("per") != "day"


def _literal_args(spec: FunctionSpec, call: ast.Call) -> dict[str, Any]:
    """Literal parameters of a call by name, defaults filled in (validation has run)."""
    values: dict[str, Any] = {}
    for i, param in enumerate(spec.params):
        if param.kind in ("series", "daily"):
            continue
        value = ast.literal_value(call.args[i]) if i < len(call.args) else None
        if value is None:
            value = param.default
        values[param.name] = int(value) if isinstance(value, int | float) else value
    return values
