"""The interpreter: shape → parse → bind and plan → evaluate, each stage small and named.

The pipeline (seed 001's order, with one correction): session → from → join → map →
**period** → where → group_by → select → sort → limit, then an optional second stage
(``then``) over the result table. The period selects rows; it never cuts the history that
``prev()``, rolling windows, indicators and patterns read (``barb.period_rows``).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from typing import Any

import numpy as np
import pandas as pd

from barb.errors import BarbError, DataError, ExecutionError, QueryError
from barb.instruments import SessionSpec
from barb.period_rows import Scope, bars_in_scope, still_open
from barb.planning import Plan, plan_query, session_name
from barb.result import Metadata, Result, RowsBuilder
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.query import Query, parse_query
from barb.settings import EngineSettings, default_settings
from barb.stages import StageOutput, run_stage

log = logging.getLogger(__name__)

__all__ = ["Plan", "execute", "plan_query", "run"]


def execute(
    query: dict[str, Any] | Query,
    instrument: str = "NQ",
    *,
    settings: EngineSettings | None = None,
) -> Result:
    """Run a Barb Script query. Bad queries come back as ``Result.error``, never as raises."""
    started = time.perf_counter()
    raw = query.to_json() if isinstance(query, Query) else query
    try:
        parsed = parse_query(query).with_instrument(instrument)
        raw = parsed.to_json()
        settings = settings or default_settings()
        plan = plan_query(parsed, instrument, settings)
        result = run(plan, settings)
    except QueryError as exc:
        return Result(query=raw if isinstance(raw, dict) else {}, error=exc)
    except DataError as exc:
        return Result(
            query=raw if isinstance(raw, dict) else {},
            error=ExecutionError(str(exc), step="data", hint="Run `barb data sample`."),
        )
    except (BarbError, Exception) as exc:  # a bug: log it, never crash the caller
        ref = uuid.uuid4().hex[:8]
        log.error("query failed (ref %s): %r", ref, raw, exc_info=exc)
        return Result(
            query=raw if isinstance(raw, dict) else {},
            error=ExecutionError(
                f"Internal error while running the query (reference {ref}).", step="execute"
            ),
        )
    assert result.metadata is not None
    result.metadata.elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    return result


# --- running --------------------------------------------------------------------------------


def run(plan: Plan, settings: EngineSettings) -> Result:
    dataset = plan.dataset
    scope = bars_in_scope(plan)
    frame = scope.frame
    ctx = EvalContext(
        frame=frame,
        timeframe=plan.timeframe.name,
        session_bars=lambda name: dataset.session_daily(session_name(dataset, name)),
        step="map",
    )
    keep = scope.in_period
    for join in plan.events:
        if join.filter is not None:
            assert join.source is not None
            marked = frame[join.source].fillna(False).to_numpy(dtype=bool)
            keep = keep & (marked if join.filter == "only" else ~marked)
    rows_scanned = int(np.count_nonzero(keep))
    # A weekly or longer bar begins at its timestamp (its first trading date) and ends at
    # its trading date (its last): the period covered runs from one to the other.
    begins = frame["timestamp" if plan.timeframe.calendar else "trading_date"].to_numpy()
    covered = _covered(begins, frame["trading_date"].to_numpy(), keep)

    hide = ("trading_date",) if plan.timeframe.name == "daily" else ()
    focus = [j.source for j in plan.events if j.source is not None]
    output = run_stage(plan.first, frame, ctx, keep, focus=focus, hide=hide, period=scope.in_period)
    rows_matched = output.rows_kept
    warnings = list(plan.warnings) + _scope_warnings(plan, scope)
    if rows_matched == 0:
        warnings.append("No bars matched: the result is empty.")
    warnings += output.warnings
    if plan.first.shape == "grouped":
        warnings += _open_group(plan, output.table)
    if plan.then is not None:
        output = _second_stage(plan, output, ctx)
        warnings += output.warnings

    table, source_rows, truncated = _bounded(output, settings, warnings)
    warnings += [w for w in ctx.warnings if w not in warnings]
    metadata = Metadata(
        instrument=dataset.instrument.symbol,
        session=plan.session,
        session_hours=_hours(dataset.instrument.sessions.get(plan.session)),
        timeframe=plan.timeframe.name,
        period_requested=plan.period.text,
        period_start=covered[0],
        period_end=covered[1],
        rows_scanned=rows_scanned,
        rows_matched=rows_matched,
        warnings=warnings,
        data_source=dataset.meta.source,
        data_description=dataset.meta.source_label(),
        truncated=truncated,
    )
    return Result(
        query=plan.query.to_json(),
        summary=output.summary,
        table=table,
        source_rows=source_rows,
        metadata=metadata,
        focus_columns=output.focus,
    )


def _second_stage(plan: Plan, first: StageOutput, ctx: EvalContext) -> StageOutput:
    """``then``: the first stage's table is the second stage's rows."""
    assert plan.then is not None and first.table is not None
    rows = first.table.copy(deep=False)
    keys = tuple(name for name, _ in plan.first.group_keys)
    output = run_stage(
        plan.then, rows, ctx, np.ones(len(rows), dtype=bool), prefix="then.", row_keys=keys
    )
    if output.summary.type != "table":
        output.source_rows = first.table  # what the second stage's numbers rest on
    return output


def _scope_warnings(plan: Plan, scope: Scope) -> list[str]:
    warnings = []
    if scope.cut_bars:
        unit = plan.timeframe.label
        noun = f"{plan.timeframe.name} bar" + ("s" if scope.cut_bars > 1 else "")
        warnings.append(
            f"{scope.cut_bars} {noun} cut by the period's edges left out: only whole {unit}s "
            "inside the period count."
        )
    warnings += _releases_inside_bars(plan, scope)
    if scope.open_bar is not None:
        bar = scope.open_bar
        days = f"{_day(bar.first_date)} — {_day(bar.last_date)}"
        unit = plan.timeframe.label
        if bar.kept:
            warnings.append(
                f"The {unit} {bar.label} is not over yet: the data ends on {_day(bar.last_date)}, "
                f"so this bar covers only {days}."
            )
        else:
            warnings.append(
                f"The {unit} {bar.label} is not over yet (the data covers only {days}): "
                f"left out, so only whole {unit}s count."
            )
    for symbol, dropped in scope.unmatched:
        if dropped:
            warnings.append(
                f"{dropped} {plan.dataset.instrument.symbol} bar{'s' if dropped > 1 else ''} "
                f"without a matching {symbol} bar left out."
            )
    if plan.period.bars is not None and np.count_nonzero(scope.in_period) < plan.period.bars:
        warnings.append(
            f"Only {np.count_nonzero(scope.in_period)} bars exist, fewer than the "
            f"{plan.period.bars} asked for."
        )
    return warnings


def _releases_inside_bars(plan: Plan, scope: Scope) -> list[str]:
    """An event released inside a bar (NFP at 08:30 in the 08:00-09:00 bar): the bars from
    the release on begin at the next bar, so "the hour after" on these bars is not that."""
    tf = plan.timeframe
    if not tf.intraday or (tf.minutes or 1) <= 1:
        return []
    warnings = []
    for join in plan.events:
        column = f"{join.source}_minutes"
        if column not in scope.frame.columns:
            continue
        minutes = scope.frame[column].to_numpy()
        with np.errstate(invalid="ignore"):
            inside = scope.in_period & (minutes < 0) & (minutes > -tf.minutes)
        if not inside.any():
            continue
        at = int(np.flatnonzero(inside)[0])
        opens = pd.Timestamp(scope.frame["timestamp"].iloc[at])
        released = opens - pd.Timedelta(minutes=float(minutes[at]))
        warnings.append(
            f"{join.source.upper()} came out at {released:%H:%M}, inside the {tf.name} bar "
            f"opening {opens:%H:%M}: the first bar after it opens "
            f"{opens + pd.Timedelta(minutes=tf.minutes):%H:%M}. For the time right after a "
            f"release use 1m bars, or a window such as '{released:%H:%M}-"
            f"{released + pd.Timedelta(minutes=tf.minutes):%H:%M}' as the session."
        )
    return warnings


def _open_group(plan: Plan, table: pd.DataFrame | None) -> list[str]:
    """Daily bars grouped by year() (or year and month, or year and quarter): the group of
    the data's last year is a few days, and can top a ranking of whole years."""
    keys = {
        expr.name: name
        for name, expr in plan.first.group_keys
        if isinstance(expr, ast.Call) and not expr.args
    }
    year = keys.get("year")
    if table is None or year is None or year not in table.columns:
        return []
    last = pd.Timestamp(plan.dataset.last_date)
    unit, label, mask = "year", str(last.year), table[year] == last.year
    for function, part, text in (
        ("month", last.month, f"{last.year}-{last.month:02d}"),
        ("quarter", last.quarter, f"{last.year}-Q{last.quarter}"),
    ):
        key = keys.get(function)
        if key is not None and key in table.columns:
            unit, label, mask = function, text, mask & (table[key] == part)
    timeframe = {"year": "yearly", "month": "monthly", "quarter": "quarterly"}[unit]
    calendar = plan.dataset.instrument.calendar
    if not mask.any() or not still_open(np.datetime64(last, "ns"), timeframe, calendar):
        return []
    return [
        f"The {unit} {label} is not over: its group holds only the bars up to "
        f"{last.date()}, where the data ends (a period ending before it compares whole "
        f"{unit}s only)."
    ]


def _hours(spec: SessionSpec | None) -> str | None:
    return None if spec is None else f"{spec.start}-{spec.end}"


def _day(value: np.datetime64) -> str:
    return str(np.datetime64(value, "D"))


def _bounded(
    output: StageOutput, settings: EngineSettings, warnings: list[str]
) -> tuple[pd.DataFrame | None, pd.DataFrame | RowsBuilder | None, bool]:
    """The table and rows kept for display, at most ``max_table_rows`` each."""
    table, source_rows, truncated = output.table, output.source_rows, False
    limit = settings.max_table_rows
    if table is not None and len(table) > limit:
        warnings.append(
            f"The table has {len(table)} rows; only the first {limit} are kept for display. "
            "Add a limit or aggregate."
        )
        table, truncated = table.iloc[:limit], True
    if callable(source_rows):  # the rows behind a number: one per row the stage kept
        if output.rows_kept > limit:
            source_rows, truncated = _first_rows(source_rows, limit), True
    elif source_rows is not None and len(source_rows) > limit:
        source_rows, truncated = source_rows.iloc[:limit], True
    return table, source_rows, truncated


def _first_rows(build: RowsBuilder, limit: int) -> RowsBuilder:
    def first() -> pd.DataFrame | None:
        rows = build()
        return None if rows is None else rows.iloc[:limit]

    return first


def _covered(
    begins: np.ndarray, ends: np.ndarray, keep: np.ndarray
) -> tuple[dt.date | None, dt.date | None]:
    """The trading dates actually covered by the period's bars, before where filters them:
    where the first kept bar begins and the last one ends.

    Read at the first and last kept row: no copy of millions of minute bars' dates.
    """
    if not keep.any():
        return None, None
    first = int(keep.argmax())
    last = _last_true(keep)
    day = "datetime64[D]"
    return begins[first].astype(day).tolist(), ends[last].astype(day).tolist()


def _last_true(mask: np.ndarray, chunk: int = 4096) -> int:
    """Position of the last true value, read back from the end a chunk at a time: argmax of
    the reversed view would first copy all of it (milliseconds on minute bars)."""
    stop = len(mask)
    while stop > 0:
        start = max(0, stop - chunk)
        hits = np.flatnonzero(mask[start:stop])
        if len(hits):
            return start + int(hits[-1])
        stop = start
    raise ValueError("no true value")
