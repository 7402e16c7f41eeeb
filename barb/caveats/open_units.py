"""weekly(x, 0) and monthly(x, 0) on rows of the data's unfinished week or month.

Lag 0 is the row's own week's (month's) final value, which a week still trading has not
made: on its rows it is the value so far. "Does the weekly high come by Wednesday?" as
cummax(high, 'week') == weekly(high, 0) on Wednesdays kept 2026-01-07, the data's last day,
whose week's "final" high is its high so far: trivially true (934 Wednesdays, 0.5332; 0.5327
over the 933 whole weeks, p48c Q41). group_by week() says its open week is not over
(``barb.caveats.scope``); this says it of the rows that read the open week through the call,
when leaving them out changes a value shown.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np
import pandas as pd

from barb.caveats.scope import OpenGroup
from barb.errors import BarbError
from barb.frames import period_start, take_rows
from barb.lineage import nodes
from barb.period_rows import still_open
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.daily_calls import UNIT_WORDS
from barb.script.daily_warnings import known_from_first_bar
from barb.script.evaluator import evaluate_aggregate
from barb.stage_output import query_columns
from barb.summary_text import value_text

# The calls whose lag 0 reads a calendar unit the data's end may cut, by their timeframe.
_OPEN_UNITS = ("weekly", "monthly")


def open_unit_caveat(
    plan: Plan, ctx: EvalContext, kept: pd.DataFrame | None, grouped: OpenGroup | None = None
) -> list[str]:
    """The rows kept in the data's unfinished week (month) where the first stage reads
    weekly(x, 0) (monthly(x, 0)): said when leaving them out changes a value shown (an
    aggregate as printed, a group's), or when a table lists them with a column that reads
    the call; with the values without them and the period that compares whole units. Not
    when that week (month) is the group ``grouped`` that group_by's own note says is not
    over (``open_group``): by month() alone January holds 2026-01 beside whole Januaries,
    and is no such group (r48c #3)."""
    stage = plan.first
    if plan.then is not None or plan.timeframe.calendar:
        return []
    if not stage.calls & set(_OPEN_UNITS):
        return []
    if kept is None or not len(kept) or "trading_date" not in kept.columns:
        return []
    warnings = []
    last = np.datetime64(plan.dataset.last_date, "D")
    for unit, calls in _own_unit_calls(stage).items():
        if grouped is not None and grouped.unit == UNIT_WORDS[unit]:  # said so already
            continue
        if not still_open(last, unit, plan.dataset.instrument.calendar):
            continue
        start = period_start(np.array([last]), unit).astype("datetime64[D]")[0]
        inside = kept["trading_date"].to_numpy().astype("datetime64[D]") >= start
        if not inside.any():
            continue
        texts = [call.to_text() for call in calls]
        changed = _changed(stage, ctx, kept, inside, calls)
        if changed is None:
            continue
        word = UNIT_WORDS[unit]
        n = int(inside.sum())
        kind = "listed" if stage.shape == "table" else "kept"
        rows = f"its 1 row {kind}" if n == 1 else f"its {n:,} rows {kind}"
        whole = _whole_period(plan, start)
        label = str(start) if unit == "weekly" else str(start)[:7]  # as group_by labels them
        text = (
            f"The {word} {label} is not over (the data ends on {last}): "
            f"{' and '.join(texts)} on {rows} {'is' if len(texts) == 1 else 'are'} the "
            f"{word}'s value so far, not its final one."
        )
        if changed:
            text += f" Without {'it' if n == 1 else 'them'}, {changed}."
        warnings.append(f'{text} Whole {word}s only: "period": "{whole}".')
    return warnings


def _own_unit_calls(stage: StagePlan) -> dict[str, list[ast.Call]]:
    """weekly(x, 0) and monthly(x, 0) among the stage's calls, by unit, each once; not
    weekly(open, 0), final from the week's first bar (``known_from_first_bar``)."""
    found: dict[str, dict[ast.Call, None]] = {}
    for call in stage.call_nodes():
        name = call.name.lower()
        if name in _OPEN_UNITS and len(call.args) >= 2 and ast.literal_value(call.args[1]) == 0:
            inner = call.args[0]
            inner = inner.expr if isinstance(inner, ast.OnDailyBars) else inner
            session = ast.literal_value(call.args[2]) if len(call.args) > 2 else None
            if known_from_first_bar(inner, session if isinstance(session, str) else None):
                continue
            found.setdefault(name, {})[call] = None
    return {unit: list(calls) for unit, calls in found.items()}


def _reads(expr: ast.Expr, calls: list[ast.Call], mapped: dict[str, ast.Expr]) -> bool:
    return any(node in calls for node in nodes(expr, mapped))


def _changed(
    stage: StagePlan,
    ctx: EvalContext,
    kept: pd.DataFrame,
    inside: np.ndarray,
    calls: list[ast.Call],
) -> str | None:
    """What leaving the ``inside`` rows out changes: "mean_by_wed is 0.5327" for a single
    row of aggregates, "" when groups' values or a table's listed rows change, None when no
    value shown changes (or reads the calls)."""
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    selected = stage.where is not None and _reads(stage.where, calls, mapped)
    if stage.shape == "table":
        exprs = {item.name: item.expr for item in stage.select}
        shown = [
            name
            for name in query_columns(stage)
            if _reads(exprs.get(name, ast.Column(name)), calls, mapped)
        ]
        return "" if shown or selected else None
    items = [
        item
        for item in stage.select
        if item.aggregate and (selected or _reads(item.expr, calls, mapped))
    ]
    if not items or inside.all():
        return None
    by = [name for name, _ in stage.group_keys] or None
    quiet = {"warnings": [], "row_warnings": [], "period": None}
    before = dataclasses.replace(ctx, frame=kept.reset_index(drop=True), **quiet)
    after = dataclasses.replace(ctx, frame=take_rows(kept, ~inside).reset_index(drop=True), **quiet)
    said = []
    try:
        for item in items:
            was = evaluate_aggregate(item.expr, before, by)
            now = evaluate_aggregate(item.expr, after, by)
            if by is None:
                if value_text(was) != value_text(now):
                    said.append(f"{item.name} is {value_text(now)}")
                continue
            was_shown = pd.Series(was).map(value_text)
            now_shown = pd.Series(now).reindex(pd.Series(was).index).map(value_text)
            if (was_shown != now_shown).any():
                said.append("")
    except BarbError:
        return None
    if not said:
        return None
    if by is not None:
        return ""
    return f"{', '.join(said)} ({int((~inside).sum()):,} rows)"


def _whole_period(plan: Plan, start: np.datetime64) -> str:
    """The query's period up to the day before the open unit: '2025-10-08:2026-01-04',
    ':2026-01-04' from the data's start."""
    end = (start - np.timedelta64(1, "D")).astype(dt.date)
    first = plan.period.start
    return f"{first.isoformat() if first is not None else ''}:{end.isoformat()}"
