"""A streak record the period's end cuts: the run still going on its last row.

A streak counts the run's rows before the period (said by streak() itself), and stops at the
period's last row though the run may go on: NQ's longest losing streak of 2024 read 6, a tie
of four runs, one of them 2024-12-19 to 12-31, which went on to 7 on 2025-01-02, with nothing
said (p46f Q17). When the answer's longest run is the one holding the period's last row and
the data goes on past it, the first stage is run again over the period carried on until that
run ends, and its whole length and last row are said. The interpreter hands this check the
engine's ``run_stage`` (``RunStage``), as for the cut weekly bars.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import numpy as np
import pandas as pd

from barb.bar_labels import row_label
from barb.caveats.cut_bar_rows import RunStage
from barb.lineage import through_map
from barb.period_rows import Scope, bars_in_scope, event_filtered
from barb.planning import Plan
from barb.script import ast
from barb.script.context import EvalContext
from barb.stage_output import StageOutput

# Calendar days the period is carried on by at first (doubled while the run goes on).
_FIRST_STEP = 14


def run_past_period_caveat(
    plan: Plan,
    ctx: EvalContext,
    scope: Scope,
    frame: pd.DataFrame,
    first: StageOutput,
    run_stage: RunStage,
) -> list[str]:
    """Said of a streak the first stage maps (streak(cond) without a restart unit) whose
    highest value over the rows kept is on the period's last row, where the data goes on
    after it: "The run ending 2024-12-31 (6) is still going on the period's last row: it
    went on to 7 on 2025-01-02; a period reaching 2025-01-02 counts it whole."
    ``frame``: the first stage's bars with its columns."""
    period = plan.period
    if plan.then is not None or period.end is None or period.bars is not None:
        return []
    inside = np.flatnonzero(scope.in_period)
    last_date = pd.Timestamp(plan.dataset.last_date).date()
    if not len(inside) or int(inside[-1]) != len(frame) - 1 or period.end >= last_date:
        return []
    last = int(inside[-1])
    kept = first.passed if first.passed is not None else scope.in_period
    for name in _streak_columns(plan):
        if name not in frame.columns or not kept[last]:
            continue
        values = frame[name].to_numpy(dtype="float64")
        held = values[kept & scope.in_period]
        if not values[last] > 0 or values[last] < np.nanmax(held):
            continue
        went_on = _run_after(plan, ctx, frame, name, last, last_date, run_stage)
        if went_on is None:
            return []
        length, ended, still = went_on
        said = row_label(frame, last, plan.timeframe.name)
        later = (
            f"it is {length} at the data's end ({ended}) and still going"
            if still
            else f"it went on to {length} on {ended}"
        )
        return [
            f"The run ending {said} ({int(values[last])}) is still going on the period's last "
            f"row: {later}; a period reaching {ended} counts it whole."
        ]
    return []


def _streak_columns(plan: Plan) -> list[str]:
    """The first stage's map columns that are streak(cond) without a restart unit."""
    mapped = dict(plan.first.map_exprs)
    return [
        name
        for name, expr in plan.first.map_exprs
        if isinstance(call := through_map(expr, mapped), ast.Call)
        and call.name.lower() == "streak"
        and len(call.args) == 1
    ]


def _run_after(
    plan: Plan,
    ctx: EvalContext,
    frame: pd.DataFrame,
    name: str,
    last: int,
    data_end: dt.date,
    run_stage: RunStage,
) -> tuple[int, str, bool] | None:
    """The whole length of the run holding row ``last`` (the period's last), the label of
    its last row and whether it holds the data's last, from the first stage run over the
    period carried on; None when the run does not go on past the period."""
    assert plan.period.end is not None
    step = _FIRST_STEP
    stamp = frame["timestamp"].iloc[last]
    while True:
        end = min(plan.period.end + dt.timedelta(days=step), data_end)
        wide = bars_in_scope(replace(plan, period=replace(plan.period, end=end)))
        rows = wide.frame.copy(deep=False)
        keep = event_filtered(plan, rows, wide.in_period)
        aside = replace(ctx, frame=rows, warnings=[], row_warnings=[], history_beyond=[])
        run_stage(plan.first, rows, aside, keep, period=wide.in_period)
        at = int(np.flatnonzero(rows["timestamp"].to_numpy() == stamp.to_datetime64())[0])
        values = rows[name].to_numpy(dtype="float64")
        after = values[at + 1 :]
        ends = np.flatnonzero(after == 0)
        if len(ends) or end >= data_end:
            upto = at + (int(ends[0]) if len(ends) else len(after))
            if upto == at:
                return None  # the run ended with the period
            known = np.flatnonzero(~np.isnan(values[: upto + 1]))
            final = int(known[-1])
            label = row_label(rows, final, plan.timeframe.name)
            return int(values[final]), label, not len(ends)
        step *= 2
