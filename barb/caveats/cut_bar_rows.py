"""What the weekly or longer bars a period's edges cut would have added to the answer.

Only whole weeks (months, quarters, years) inside a period count, so NQ's weekly MACD
crosses "in 2025" leave out the week 2024-12-30 (its Friday, 2025-01-03, closes it), and "in
2024" leave it out too: its bearish cross (the histogram from +39.13 to -38.00) was in
neither year's count (1 and 2), and the warning naming the cut week did not say it held one.
Said here: the cut bars the where keeps (without a where, those a count(cond) counts), with
the answer they would make. The stage is run again over the period widened to those whole
bars, so what the bars read before them (prev(), the indicator's history) is as in any
other query: a few hundred weekly bars, only when a period cuts one. The interpreter hands
this check the engine's ``run_stage`` to do so (``RunStage``): a check never imports it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

import numpy as np
import pandas as pd

from barb.period_rows import CutBar, Scope, bars_in_scope, event_filtered
from barb.planning import Plan, StagePlan
from barb.result import Summary
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate
from barb.script.periods import Period
from barb.stage_output import SINGLE_ROW, StageOutput
from barb.summary_text import listed_text, value_text


class RunStage(Protocol):
    """``barb.stages.run_stage``: a stage run over ``frame``'s rows that ``keep`` marks."""

    def __call__(
        self,
        stage: StagePlan,
        frame: pd.DataFrame,
        ctx: EvalContext,
        keep: np.ndarray,
        *,
        period: np.ndarray | None = None,
    ) -> StageOutput: ...


def cut_rows_text(
    plan: Plan, ctx: EvalContext, scope: Scope, answer: Summary, run_stage: RunStage
) -> str:
    """The sentence that names the cut bars holding a row the query counts, with the
    first stage's single-row ``answer`` as it would be with them, which ``run_stage`` works
    out over the widened period: "count_xdn counts the week 2024-12-30: with it count_xdn is
    2, not 1."; "" when none does."""
    stage = plan.first
    counted = _counted(stage)
    if not scope.cut or (stage.where is None and not counted):
        return ""
    wide = bars_in_scope(replace(plan, period=_widened(plan, scope.cut)))
    frame = wide.frame.copy(deep=False)
    cut_at = wide.in_period & np.isin(
        frame["timestamp"].to_numpy(), [bar.first_date for bar in scope.cut]
    )
    if not cut_at.any():
        return ""
    keep = event_filtered(plan, frame, wide.in_period)
    aside = replace(ctx, frame=frame, warnings=[], row_warnings=[], history_beyond=[])
    with_them = run_stage(stage, frame, aside, keep, period=wide.in_period)
    assert with_them.passed is not None
    hit = cut_at & with_them.passed
    conditions: list[str] = []
    if stage.where is None:  # the rows a count(cond) counts
        aside = replace(aside, frame=frame, period=wide.in_period)
        met = np.zeros(len(frame), dtype=bool)
        for name, counts in counted:
            values = evaluate(counts, aside)
            if pd.api.types.is_bool_dtype(values):  # count(col) counts every row with a value
                met |= values.fillna(False).to_numpy(dtype=bool)
                conditions.append(name)
        hit &= met
        if hit.any() and not hit[cut_at].all():  # the cut bars it does not count stay out
            aside = replace(aside, warnings=[], row_warnings=[])
            with_them = run_stage(
                stage, frame, aside, keep & (hit | ~cut_at), period=wide.in_period
            )
    if not hit.any():
        return ""
    held = set(frame["timestamp"].to_numpy()[hit])
    labels = [bar.label for bar in scope.cut if np.datetime64(bar.first_date, "ns") in held]
    unit = plan.timeframe.label
    names = f"the {unit}{'s' if len(labels) > 1 else ''} {listed_text(labels)}"
    one = len(labels) == 1
    if stage.where is not None:
        what = f"The where keeps {names}"
    else:
        what = f"{listed_text(conditions)} count{'s' if len(conditions) == 1 else ''} {names}"
    if plan.then is not None or stage.shape not in SINGLE_ROW:
        return f"{what}, left out of the answer."
    changes = [
        f"{name} is {value_text(new)}, not {value_text(old)}"
        for name, old in _values(answer).items()
        if value_text(new := _values(with_them.summary).get(name)) != value_text(old)
    ]
    if not changes:
        return ""
    return f"{what}: with {'it' if one else 'them'} {', '.join(changes)}."


def _counted(stage: StagePlan) -> list[tuple[str, ast.Expr]]:
    """The select's count(x) items, by name, with what they count: a count(cond) counts the
    rows where cond is true (told from its values), count() every row the where keeps."""
    return [
        (item.name, item.expr.args[0])
        for item in stage.select
        if isinstance(item.expr, ast.Call)
        and item.expr.name.lower() == "count"
        and len(item.expr.args) == 1
    ]


def _widened(plan: Plan, cut: tuple[CutBar, ...]) -> Period:
    """The period grown to the whole bars its edges cut: "2025" to 2024-12-30:2026-01-02."""
    period = plan.period
    start, end = period.start, period.end
    first = min(np.datetime64(bar.first_date, "D") for bar in cut).astype(object)
    last = max(np.datetime64(bar.last_date, "D") for bar in cut).astype(object)
    if start is not None and first < start:
        start = first
    if end is not None and last > end:
        end = last
    return replace(period, start=start, end=end, text=f"{start or ''}:{end or ''}")


def _values(summary: Summary) -> dict[str, Any]:
    """A single-row answer's values by name."""
    if summary.type == "scalar":
        return {(summary.columns or ["value"])[0]: summary.value}
    return dict(summary.values or {})
