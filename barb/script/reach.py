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
from barb.script.bars_before import BAR_COLUMNS
from barb.script.functions import FunctionSpec
from barb.script.library import lookup
from barb.script.warmup import ALL, PERIOD_ROWS, ROW, Reach

# The running highs and lows whose history is read apart (``extreme_of_bars``).
RUNNING_EXTREMES = frozenset({"cummax", "cummin"})
# The paths from the data's first bar over the bars' own columns (no argument a column):
# their values on the rows are read from one path over all history, kept per process
# (``barb.script.path_cache.served_path``), so the stage needs no bar before its rows.
BAR_PATHS = frozenset({"sar", "supertrend", "obv"})


def reach(
    expr: ast.Node,
    columns: Mapping[str, Reach] | None = None,
    *,
    values: bool = False,
    to_event: bool = False,
) -> Reach:
    """How many bars before and after each row ``expr`` reads.

    ``columns`` gives the reach of the columns the query computed (its map): a column that is
    ``rolling_mean(volume, 20)`` already reads 19 bars back, so ``prev()`` of it reads 20.
    ``values``: only the bars its values need, beyond the rows it is given: none for a
    running total or a count since an event (``_starts_with_rows``), whose values start at
    the first row given; cumsum(pnl) and prev(cumsum(pnl)) over 2025's rows are the same in
    either stage.
    ``to_event``: a call that forgets the bars before its event (``FunctionSpec.forgets``:
    streak, bars_since, ffill) read as its own row alone when its arguments read a bounded
    number of bars: how far the rest reads, once its event's row is found at run time
    (``barb.script.event_history``). Its arguments read all history, a running total's rows
    or a calendar unit's: all history still, their values before the period being no
    bounded number of bars' (cumsum() starts at the period).
    """
    if isinstance(expr, ast.Column):
        return (columns or {}).get(expr.name, ROW)
    if isinstance(expr, ast.Call):
        own = own_reach(expr)
        inner = ROW
        for arg in expr.args:
            inner = inner.widest(reach(arg, columns, values=values, to_event=to_event))
        if to_event and _forgets(expr) and _bounded(inner):
            own = ROW
        if to_event and extreme_of_bars(expr, columns):
            # The bars before the period are read for one number, the data's own
            # (``barb.script.bars_before``): the rows are the rest's.
            own = PERIOD_ROWS
        if to_event and expr.name.lower() in BAR_PATHS:
            # Each row's value is the kept path's at that bar (``served_path``): a row.
            own = ROW
        if values and _starts_with_rows(inner):
            # Empty before the rows it is given: what reads earlier rows of it reads them alone.
            return Reach(0, own.ahead + inner.ahead, in_period=True)
        if values and _starts_with_rows(own):
            own = Reach(0, own.ahead, in_period=True)
        return own.then(inner)
    result = ROW
    for child in expr.children():
        result = result.widest(reach(child, columns, values=values, to_event=to_event))
    return result


def map_reach(
    exprs: Iterable[tuple[str, ast.Node]], *, values: bool = False, to_event: bool = False
) -> dict[str, Reach]:
    """The reach of each map column, in map order: a later column reads what the earlier
    ones it names read, on top of its own (``values``, ``to_event``: as ``reach``)."""
    columns: dict[str, Reach] = {}
    for name, expr in exprs:
        columns[name] = reach(expr, columns, values=values, to_event=to_event)
    return columns


def _forgets(call: ast.Call) -> bool:
    spec = lookup(call.name)
    return spec is not None and spec.forgets


def extreme_of_bars(call: ast.Call, columns: Mapping[str, Reach] | None = None) -> bool:
    """Whether ``call`` is a running high or low of a bar's own column over the period, no
    unit (cummax(close), cummin(low)): what it reads before the period is that column's
    extreme over the data's bars there, read apart from the stage's rows."""
    if call.name.lower() not in RUNNING_EXTREMES or not call.args:
        return False
    spec = lookup(call.name)
    if spec is None or _literal_args(spec, call).get("per") is not None:
        return False
    column = call.args[0]
    return (
        isinstance(column, ast.Column)
        and column.name in BAR_COLUMNS
        and column.name not in (columns or {})
    )


def _bounded(inner: Reach) -> bool:
    """Whether an argument of this reach has, on a row, the value it has over all history
    once that row has ``back`` bars before it."""
    return inner.back is not None and not inner.in_period and not inner.units


def _starts_with_rows(own: Reach) -> bool:
    """Whether the values of a function (or argument) of this reach start at the first row
    given, nothing before it read (``reach``'s ``values``): a running total, high or rank
    starts at the period's first bar (the bars before it a running high reads only to say
    they went beyond, ``period_rows_seen_from_history``), and a count since an event
    (streak, bars_since) over a stage's rows counts the runs among them. Not a window or a
    smoother (prev, rsi): its first rows are its warm-up."""
    return own.back is None or (own.in_period and own.back == 0)


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
    a running total or rank reads only the period's rows, and a run restarted each day,
    week… (``per``) only its unit's."""
    own = own_reach(call)
    if own.back == 0 and own.ahead == 0:
        return False
    spec = lookup(call.name)
    return spec is None or _literal_args(spec, call).get("per") != "day"


def reads_earlier_days(call: ast.Call) -> bool:
    """Whether ``call`` reads a day, week or month before its row's on the session's own
    bars: daily(), weekly(), monthly() and session_high()… read those bars over all history
    apart from the rows, so their reach over the rows is the row's, yet near the data's
    start they are empty when they lag (session_high('RTH', 1), daily(close)) or their
    expression reads back on those bars (daily(rolling_mean(close, 200)))."""
    spec = lookup(call.name)
    if spec is None or spec.category != "session":
        return False
    if (_literal_args(spec, call).get("lag") or 0) > 0:
        return True
    return any(isinstance(arg, ast.OnDailyBars) and reach(arg.expr).back != 0 for arg in call.args)


def _literal_args(spec: FunctionSpec, call: ast.Call) -> dict[str, Any]:
    """Literal parameters of a call by name, defaults filled in (validation has run)."""
    values: dict[str, Any] = {}
    for i, param in enumerate(spec.params):
        if param.kind in ("series", "daily"):
            continue
        value = ast.literal_value(call.args[i]) if i < len(call.args) else None
        if value is None:
            value = param.default
        if isinstance(value, str) and param.choices is not None:
            value = value.lower()  # matched ignoring case, as validation does: 'Month'
        values[param.name] = int(value) if isinstance(value, int | float) else value
    return values
