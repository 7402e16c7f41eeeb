"""A group keyed by a running state that the data's end leaves open.

Grouped by a running value (a drawdown episode as group_by cummax(close), a streak's run as
group_by cumsum(...)), each group is a run of consecutive bars, and the last one runs to the
data's last bar: it has not ended, the data has. CL's episodes under each peak, sorted by
their length, listed 149.47 (from 2022-05-11, -80.57%, "946 days") beside 148.05 (3,574
days, recovered 2022-05-10); CL closed 2026-01-07, the data's last day, at 57.41, still 62%
under that peak, so 946 was a count so far, read as "recovered after 946 trading days"
(p35c M2). An unfinished year or week is said (``scope.open_group``); this is said the
same way of a running key's last group, when the answer lists it or reads it.

Only a key computed by a running function (the "cumulative" ones: cummax, cummin, cumsum,
cumprod), whose group at the data's last bar has held its value since some bar up to it:
a period that ends before the data does leaves no group open.

A where that keeps each run's last day ("above and not next(above)", streak(above) read
there as the run's length) cannot decide the run still holding at the data's end: next()
reads past it, the where is unknown and the row is dropped. NQ's runs above SMA20 read 275
runs, longest 98 days, with the data ending 47 days into a run nothing named (p39b Q23):
said with its length so far (``open_run_end_caveat``).

A key counting starts (cumsum(entry), a trade's number) holds its value from one start to the
next, and a where keeping the bars held ("prev(pos) == 1") ends each run: its last group is
open only when the where keeps the data's last bar. NQ's RSI(2) trades by trade (the
hold_until_exit concept's per-trade form) were told "trade = 225, from 2025-11-17, is still
running" of a trade bought 2025-11-14 and sold 2025-11-17, 7 weeks before the data's end.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from barb.bar_labels import row_label
from barb.column_units import COUNTED_ROWS
from barb.lineage import nodes, own_runs, through_map
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.script.library import lookup
from barb.stage_output import StageOutput, counted_columns
from barb.summary_text import count_text, listed_text, value_text


def open_run_caveat(
    plan: Plan,
    frame: pd.DataFrame,
    in_period: np.ndarray,
    first: StageOutput,
    final: StageOutput,
) -> list[str]:
    """The warning for the first stage's group keyed by a running value that holds the
    data's last bar, when the answer (``final``: the last stage's output) lists or reads
    it. ``frame``: the first stage's bars with its key columns, ``in_period``: which of
    them the period holds."""
    stage = plan.first
    if stage.shape != "grouped" or first.passed is None or not len(frame):
        return []
    keys = [name for name, _ in stage.group_keys]
    running = _running_keys(stage)
    if not running or any(name not in frame.columns for name in keys):
        return []
    last = pd.Timestamp(plan.dataset.last_date)
    if not in_period[-1] or pd.Timestamp(frame["trading_date"].iloc[-1]) != last:
        return []  # the period ends before the data does
    if stage.where is not None and not first.passed[-1] and _counts_starts(running):
        return []  # the where ended the run before the data's last bar: a closed trade
    values = {name: frame[name].iloc[-1] for name in keys}
    if any(pd.isna(value) for value in values.values()):
        return []
    held = _rows_of(frame, values) & in_period
    since = int(np.argmax(held))
    if not held[since:].all():
        return []  # not a run: the key held this value before too (a cumsum of ups and downs)
    group = _row_of(first.groups, values)
    if group is None or not _in_answer(plan, first, final, values):
        return []
    named = ", ".join(f"{name} = {value_text(value)}" for name, value in values.items())
    kept = np.flatnonzero(held & first.passed)
    began = pd.Timestamp(frame["trading_date"].iloc[kept[0] if len(kept) else since])
    counts = [
        f"{name} = {value_text(group[name])}"
        for name in counted_columns(stage)
        if name in group.index
    ]
    so_far = (
        f"; {listed_text(counts)} {'counts' if len(counts) == 1 else 'count'} its rows so far, "
        "not a finished run's"
        if counts
        else ""
    )
    return [
        f"The group {named}, from {began:%Y-%m-%d}, is still running at the data's end "
        f"({last:%Y-%m-%d}): {running[0].to_text()} holds that value to the data's last "
        f"bar, so the run has not ended, the data has{so_far}."
    ]


def began_run_caveat(
    plan: Plan,
    frame: pd.DataFrame,
    in_period: np.ndarray,
    first: StageOutput,
    final: StageOutput,
) -> list[str]:
    """The mirror of ``open_run_caveat`` at the period's start, for a key counting starts
    (cumsum(entry): a trade's number): cumsum starts at the period's first bar, so a trade
    held into it is a group of the bars the where keeps from that day, its entry and the bars
    before left out. NQ's RSI(2) trades of 2025 listed "0, 172.5, 2, 2025-01-02": bought in
    December 2024, its 2 days and +172.50 are its 2025 part. Said when the where keeps the
    period's first bar, no run begins there (``_begins_at``) and the period starts after the
    data does."""
    stage = plan.first
    if stage.shape != "grouped" or stage.where is None or first.passed is None:
        return []
    keys = [name for name, _ in stage.group_keys]
    running = _running_keys(stage)
    if not running or not _counts_starts(running):
        return []
    if any(name not in frame.columns for name in keys):
        return []
    inside = np.flatnonzero(in_period)
    if not len(inside) or not first.passed[inside[0]]:
        return []
    start = int(inside[0])
    opened = pd.Timestamp(frame["trading_date"].iloc[start])
    if opened <= pd.Timestamp(plan.dataset.first_date):
        return []  # the data's first bar: nothing was held before it
    mapped = dict(stage.map_exprs)
    counting = [name for name, expr in stage.group_keys if _is_running(through_map(expr, mapped))]
    if _begins_at(frame, start, counting):
        return []  # entered on the period's first bar: nothing was held before it
    values = {name: frame[name].iloc[start] for name in keys}
    if any(pd.isna(value) for value in values.values()):
        return []
    group = _row_of(first.groups, values)
    if group is None or not _in_answer(plan, first, final, values):
        return []
    named = ", ".join(f"{name} = {value_text(value)}" for name, value in values.items())
    counts = [
        f"{name} = {value_text(group[name])}"
        for name in counted_columns(stage)
        if name in group.index
    ]
    held = (
        f"{listed_text(counts)} {'counts' if len(counts) == 1 else 'count'}"
        if counts
        else "it holds"
    )
    return [
        f"The group {named} began before the period: the where keeps it from the period's "
        f"first day ({opened:%Y-%m-%d}), so {held} only its rows from there, not the whole "
        "run; a period starting before the run began counts it whole."
    ]


def held_in_caveat(
    plan: Plan,
    frame: pd.DataFrame,
    in_period: np.ndarray,
    first: StageOutput,
    final: StageOutput,
) -> list[str]:
    """A position held into the period, when the answer counts trades as sum(entry) of
    hold_until_exit's entry = if(pos > coalesce(prev(pos), 0), 1, 0): the period's first row
    marks the position's move from the close before it (prev(pos) * (close - prev(close))),
    but its entry lies before the period and is not counted. NQ's SMA 20/50 cross "in 2022"
    read trades=1, total 1,710.75 and the drawdown -4,538.25, most of whose swing came from
    a long bought in 2021 and sold 2022-05-12 (p48j q15). Said with the entry's date, as the
    trade still open at the data's end is (``open_run_caveat``), when the first stage keeps
    the period's first row."""
    stage = plan.first
    if stage.shape != "table" or plan.then is None or final.summary.values is None:
        return []
    found = _counted_entries(plan)
    if found is None:
        return []
    name, entry, pos = found
    if any(column not in frame.columns for column in (entry, pos)):
        return []
    inside = np.flatnonzero(in_period)
    if not len(inside) or (first.passed is not None and not first.passed[inside[0]]):
        return []
    start = int(inside[0])
    held = pd.to_numeric(frame[pos], errors="coerce").to_numpy(dtype="float64")
    entered = pd.to_numeric(frame[entry], errors="coerce").to_numpy(dtype="float64")
    if not start or not held[start - 1] > 0 or not held[start] > 0 or entered[start] > 0:
        return []  # flat before the period, out on its first day, or entered that day
    dates = frame["trading_date"].to_numpy()
    before = np.flatnonzero(entered[:start] > 0)
    since = (
        f"{pd.Timestamp(dates[before[-1]]):%Y-%m-%d}"
        if len(before)
        else f"before {pd.Timestamp(dates[0]):%Y-%m-%d}"
    )
    counted = final.summary.values.get(name)
    more = (
        f" ({count_text(int(counted) + 1, 'trade')} made the answer)"
        if isinstance(counted, int | float) and not pd.isna(counted)
        else ""
    )
    return [
        f"The period starts inside a trade: {pos} = 1 from {since} is held into its first "
        f"day ({pd.Timestamp(dates[start]):%Y-%m-%d}); its move from there is in the "
        f"answer's P&L, but {name} = sum({entry}) counts entries in the period only{more}."
    ]


def _counted_entries(plan: Plan) -> tuple[str, str, str] | None:
    """The then stage's sum(entry) of an entry that marks a position's rise, entry =
    if(pos > coalesce(prev(pos), 0), 1, 0): its name, the entry's and the position's
    columns; None when it sums none."""
    assert plan.then is not None
    mapped = dict(plan.first.map_exprs)
    for item in plan.then.select:
        expr = item.expr
        if not (_is_call(expr, "sum") and len(expr.args) == 1):  # type: ignore[union-attr]
            continue
        column = expr.args[0]  # type: ignore[union-attr]
        if not isinstance(column, ast.Column) or column.name not in mapped:
            continue
        for node in ast.walk(mapped[column.name]):
            if not (isinstance(node, ast.Compare) and node.op == ">"):
                continue
            left = node.left
            if isinstance(left, ast.Column) and any(
                _is_call(inner, "prev") and inner.args[0] == left  # type: ignore[union-attr]
                for inner in ast.walk(node.right)
            ):
                return item.name, column.name, left.name
    return None


def open_run_end_caveat(
    stage: StagePlan,
    frame: pd.DataFrame,
    condition: pd.Series,
    period: np.ndarray,
    values: Callable[[ast.Expr], object],
    timeframe: str,
    kept: int,
) -> list[str]:
    """The run still holding at the data's end, which a where keeping each run's last day
    drops: "The run of above that holds at the data's end is not among the 275 rows kept: the
    where reads next(above), which has no value on 2026-01-07, the data's last day. It is
    still open, 47 days so far since 2025-10-31 (streak(above) = 47 there)."

    ``frame``: the first stage's rows, which reach the data's end when the period does and
    a where reads next(); ``condition``: its where over them; ``values`` evaluates a part
    over them; ``kept``: how many rows the where kept. Only for a streak the stage selects
    that the where keeps rows by (``own_runs``), when the where is unknown on the period's
    and the data's last row."""
    if stage.where is None or not isinstance(condition, pd.Series) or not len(frame):
        return []
    if not period[-1] or not pd.isna(condition.iloc[-1]):
        return []  # the period ends before the data, or the where decides its last row
    ahead = [n for n in nodes(stage.where, _mapped(stage)) if _is_call(n, "next")]
    runs = [
        call
        for item in stage.select
        for call in own_runs(item.expr, stage.where, _mapped(stage))
        if call.name.lower() == "streak" and call.args
    ]
    if not ahead or not runs:
        return []
    run = values(runs[0])
    if not isinstance(run, pd.Series) or len(run) != len(frame):
        return []
    if pd.isna(run.iloc[-1]) or int(run.iloc[-1]) < 1:
        return []  # the data's last row is no run's
    length = int(run.iloc[-1])
    row = COUNTED_ROWS.get(timeframe, "bars")[:-1]  # day, week, bar
    began = row_label(frame, len(frame) - length, timeframe)
    ended = row_label(frame, len(frame) - 1, timeframe)
    return [
        f"The run of {runs[0].args[0].to_text()} that holds at the data's end is not among "
        f"the {kept:,} rows kept: the where reads {ahead[0].to_text()}, which has no value on "
        f"{ended}, the data's last {row}. It is still open, {count_text(length, row)} "
        f"so far since {began} ({runs[0].to_text()} = {length} there)."
    ]


def _mapped(stage: StagePlan) -> dict[str, ast.Expr]:
    return dict(stage.map_exprs) | dict(stage.hoisted)


def _is_call(node: ast.Node, name: str) -> bool:
    return isinstance(node, ast.Call) and node.name.lower() == name


def _is_running(expr: ast.Expr) -> bool:
    """Whether ``expr`` is a call of a running function (cummax(close), cumsum(x > 0))."""
    if not isinstance(expr, ast.Call):
        return False
    spec = lookup(expr.name)
    return spec is not None and spec.category == "cumulative"


def _running_keys(stage: StagePlan) -> list[ast.Expr]:
    """The stage's group keys that are running values (cumsum(entry), cummax(close)), as
    expressions through its map."""
    mapped = dict(stage.map_exprs)
    keys = (through_map(expr, mapped) for _, expr in stage.group_keys)
    return [key for key in keys if _is_running(key)]


def _counts_starts(running: list[ast.Expr]) -> bool:
    """Whether every running key counts starts (cumsum(entry): a trade's number), whose
    group runs from one start to the next: what a where keeps of it is the run (a trade's
    bars held), which the key alone does not end. A peak's episode (cummax(close)) ends at
    the next peak, whatever the where keeps of it."""
    return all(_is_call(expr, "cumsum") for expr in running)


def _begins_at(frame: pd.DataFrame, at: int, names: list[str]) -> bool:
    """Whether a run of the keys ``names`` (cumsum(entry): a trade's number) begins on row
    ``at``: a key differs from the row before's, or, where that row has none (cumsum starts
    at the period), from cumsum's first 0. NQ's down-day runs from 2024-01-08, an entry
    after the 5th's up day, read trade = 1 there, entered that day, and were said to have
    begun before the period (p43d #2)."""
    for name in names:
        value = frame[name].iloc[at]
        before = frame[name].iloc[at - 1] if at else None
        if value != (0 if before is None or pd.isna(before) else before):
            return True
    return False


def _rows_of(table: pd.DataFrame, values: dict[str, object]) -> np.ndarray:
    """Which of ``table``'s rows hold every key value."""
    mask = np.ones(len(table), dtype=bool)
    for name, value in values.items():
        mask &= (table[name] == value).fillna(False).to_numpy(dtype=bool)
    return mask


def _row_of(table: pd.DataFrame | None, values: dict[str, object]) -> pd.Series | None:
    """The row of ``table`` holding the key values, if it lists them."""
    if table is None or any(name not in table.columns for name in values):
        return None
    found = np.flatnonzero(_rows_of(table, values))
    return table.iloc[int(found[0])] if len(found) else None


def _in_answer(
    plan: Plan, first: StageOutput, final: StageOutput, values: dict[str, object]
) -> bool:
    """Whether the answer lists the group (a table holding its keys) or, from a then stage
    whose rows do not name it, reads it: its where kept it."""
    table = final.table
    if table is not None and all(name in table.columns for name in values):
        return _row_of(table, values) is not None
    if plan.then is None or first.table is None:
        return False
    at = (
        np.flatnonzero(_rows_of(first.table, values))
        if all(name in first.table.columns for name in values)
        else []
    )
    if not len(at):
        return False  # the first stage's limit left it out
    return final.passed is None or bool(final.passed[int(at[0])])
