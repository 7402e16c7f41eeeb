"""The interpreter: parse → resolve → validate → run, each stage small and named.

The run follows seed 001's order strictly:
session → period → from → join → map → where → group_by → select → sort → limit.
(``join`` marks event days on the bars of the chosen timeframe, so it runs after ``from``.)
"""

from __future__ import annotations

import datetime as dt
import difflib
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from barb.errors import (
    ArgumentError,
    BarbError,
    DataError,
    ExecutionError,
    QueryError,
    QueryTooLarge,
    TypeMismatch,
    UnknownColumn,
    raise_collected,
)
from barb.events import join_events, resolve_event
from barb.frames import (
    BAR_COLUMNS,
    MINUTE_OF_DAY,
    Dataset,
    get_dataset,
    resample_calendar,
)
from barb.result import Metadata, Result, Summary, summarize_grouped, summarize_table
from barb.script.ast import Column, Expr, contains_aggregate, default_name
from barb.script.context import INTRADAY_MINUTES, EvalContext
from barb.script.evaluator import evaluate, evaluate_aggregate
from barb.script.parser import parse_expression, parse_select_item
from barb.script.periods import Period, parse_period
from barb.script.query import Query, parse_query
from barb.script.validator import validate
from barb.settings import EngineSettings, default_settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SelectItem:
    expr: Expr
    name: str
    aggregate: bool


@dataclass(frozen=True)
class Plan:
    """A query checked against an instrument: everything needed to run it."""

    query: Query
    dataset: Dataset
    session: str
    timeframe: str
    period: Period
    map_exprs: tuple[tuple[str, Expr], ...]
    where: Expr | None
    group_keys: tuple[tuple[str, Expr], ...]
    select: tuple[SelectItem, ...]
    warnings: tuple[str, ...]

    @property
    def shape(self) -> str:
        if self.group_keys:
            return "grouped"
        if self.select and all(item.aggregate for item in self.select):
            return "scalar" if len(self.select) == 1 else "dict"
        return "table"


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
        parsed = parse_query(query)
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


# --- planning -------------------------------------------------------------------------------


def plan_query(query: Query, symbol: str, settings: EngineSettings) -> Plan:
    dataset = get_dataset(symbol, settings)
    instrument = dataset.instrument
    warnings: list[str] = []

    timeframe = query.timeframe
    if timeframe is None:
        timeframe = "daily"
        warnings.append("No 'from' given: daily bars used.")
    if query.session:
        session = _session_name(dataset, query.session)
    elif timeframe in INTRADAY_MINUTES:
        session = "ETH"
    else:
        session = instrument.default_session
        warnings.append(
            f"No session given for {timeframe} bars: {session} (the default session) used."
        )
    period = parse_period(query.period, dataset.last_date, dataset.first_date)
    if period.note:
        warnings.append(period.note)

    errors: list[QueryError] = []
    columns = set(BAR_COLUMNS)
    for join in query.join:
        try:
            resolve_event(join.source, instrument, step="join")
        except QueryError as exc:
            errors.append(exc)
        columns |= {join.source, f"{join.source}_minutes"}

    map_exprs: list[tuple[str, Expr]] = []
    for name, text in query.map.items():
        expr = _parse(text, "map", errors)
        if expr is not None:
            errors += validate(expr, columns, step="map", allow_aggregates=False)
            map_exprs.append((name, expr))
        columns.add(name)

    where = _parse(query.where, "where", errors) if query.where else None
    if where is not None:
        errors += validate(where, columns, step="where", allow_aggregates=False)

    group_keys: list[tuple[str, Expr]] = []
    for text in query.group_by:
        expr = _parse(text, "group_by", errors)
        if expr is None:
            continue
        errors += validate(expr, columns, step="group_by", allow_aggregates=False)
        name = expr.name if isinstance(expr, Column) else default_name(expr)
        group_keys.append((name, expr))

    select: list[SelectItem] = []
    select_texts = query.select or (["count()"] if query.group_by else [])
    key_names = {name for name, _ in group_keys}
    for text in select_texts:
        try:
            expr, alias = parse_select_item(text, step="select")
        except QueryError as exc:
            errors.append(exc)
            continue
        if isinstance(expr, Column) and expr.name in key_names and alias is None:
            continue  # selecting the group key itself: it is in the output anyway
        aggregate = contains_aggregate(expr)
        errors += validate(expr, columns, step="select", allow_aggregates=True)
        select.append(SelectItem(expr, alias or default_name(expr), aggregate))

    if select and group_keys and not all(s.aggregate for s in select):
        bad = next(s for s in select if not s.aggregate)
        errors.append(
            ArgumentError(
                f"With group_by, every select item must be an aggregate; '{bad.expr.to_text()}' "
                "is not.",
                step="select",
                hint="Use e.g. mean(range), count(), max(volume).",
            )
        )
    elif select and len({s.aggregate for s in select}) > 1:
        errors.append(
            ArgumentError(
                "select mixes aggregates with plain columns; use one kind or add group_by.",
                step="select",
                hint='e.g. "select": ["count()", "mean(range)"] or ["timestamp", "range"]',
            )
        )

    output_columns = _output_columns(query, columns, group_keys, select)
    if not select and not group_keys and timeframe == "daily":
        output_columns = output_columns - {"trading_date"}  # _display_rows drops it
    for key in query.sort:
        if key.column not in output_columns:
            errors.append(_unknown_sort(key.column, output_columns))
    if query.limit is not None and query.limit > settings.max_limit:
        errors.append(
            QueryTooLarge(
                f"limit {query.limit:,} is above the maximum of {settings.max_limit:,}.",
                step="limit",
                hint="Aggregate with select/group_by, or ask for fewer rows.",
            )
        )
    raise_collected(errors)
    return Plan(
        query=query,
        dataset=dataset,
        session=session,
        timeframe=timeframe,
        period=period,
        map_exprs=tuple(map_exprs),
        where=where,
        group_keys=tuple(group_keys),
        select=tuple(select),
        warnings=tuple(warnings),
    )


def _parse(text: str, step: str, errors: list[QueryError]) -> Expr | None:
    try:
        return parse_expression(text, step=step)
    except QueryError as exc:
        errors.append(exc)
        return None


def _output_columns(
    query: Query,
    columns: set[str],
    group_keys: list[tuple[str, Expr]],
    select: list[SelectItem],
) -> set[str]:
    if group_keys:
        return {name for name, _ in group_keys} | {s.name for s in select}
    if select and not select[0].aggregate:
        return {s.name for s in select}  # the table holds only what is selected
    return columns


def _unknown_sort(column: str, available: set[str]) -> UnknownColumn:
    names = sorted(available)
    close = difflib.get_close_matches(column, names, n=1)
    hint = f"Did you mean '{close[0]}'?" if close else f"To sort by '{column}', select it too."
    return UnknownColumn(
        f"Cannot sort by '{column}': no such column in the result. Available: {', '.join(names)}.",
        step="sort",
        hint=hint,
    )


# --- running --------------------------------------------------------------------------------


def _slice_period(frame: pd.DataFrame, period: Period) -> pd.DataFrame:
    if period.start is None and period.end is None:
        return frame
    dates = frame["trading_date"].to_numpy()
    lo = 0
    hi = len(frame)
    if period.start is not None:
        lo = int(np.searchsorted(dates, np.datetime64(period.start, "ns"), side="left"))
    if period.end is not None:
        hi = int(np.searchsorted(dates, np.datetime64(period.end, "ns"), side="right"))
    return frame.iloc[lo:hi]


def _frame_for(plan: Plan) -> pd.DataFrame:
    """session → period → from: the bars the query looks at, with a fresh RangeIndex."""
    dataset = plan.dataset
    if plan.timeframe in ("weekly", "monthly", "quarterly", "yearly") and (
        plan.period.start or plan.period.end
    ):
        daily = _slice_period(dataset.frame(plan.session, "daily"), plan.period)
        frame = resample_calendar(daily, plan.timeframe)
    else:
        frame = _slice_period(dataset.frame(plan.session, plan.timeframe), plan.period)
    # A shallow copy: new columns can be added without touching the cached frame.
    frame = frame.copy(deep=False)
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0:
        frame.index = pd.RangeIndex(len(frame))
    return frame


def _take_rows(frame: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    """The rows where mask is true, with a fresh RangeIndex.

    Column by column into separate blocks: a boolean index on the whole frame would first
    consolidate its blocks, copying every column of millions of minute bars.
    """
    positions = np.flatnonzero(mask)
    columns: dict[str, Any] = {}
    for name in frame.columns:
        series = frame[name]
        if isinstance(series.dtype, np.dtype):
            columns[name] = series.to_numpy()[positions]
        else:  # categories, nullable booleans: keep the dtype
            columns[name] = series.array.take(positions)
    return pd.DataFrame(columns, copy=False)


def _as_condition(values: pd.Series, step: str, text: str) -> np.ndarray:
    if pd.api.types.is_bool_dtype(values):
        return values.fillna(False).to_numpy(dtype=bool)
    raise TypeMismatch(
        f"'{text}' in {step} gives {values.dtype} values, not true/false.",
        step=step,
        hint="Compare it, e.g. 'gap > 0' or 'dayname() == \"Mon\"'.",
    )


def run(plan: Plan, settings: EngineSettings) -> Result:
    query = plan.query
    dataset = plan.dataset
    warnings = list(plan.warnings)
    frame = _frame_for(plan)
    ctx = EvalContext(
        frame=frame,
        timeframe=plan.timeframe,
        session_bars=lambda name: dataset.session_daily(_session_name(dataset, name)),
        step="join",
    )

    for join in query.join:
        frame = join_events(
            frame, join.source, dataset.instrument, intraday=plan.timeframe in INTRADAY_MINUTES
        )
        if join.filter is not None:
            marked = frame[join.source].fillna(False).to_numpy(dtype=bool)
            keep = marked if join.filter == "only" else ~marked
            frame = _take_rows(frame, keep)
    rows_scanned = len(frame)
    # The period actually covered is that of the bars scanned, before where filters them.
    covered = (
        (_date(frame["trading_date"].iloc[0]), _date(frame["trading_date"].iloc[-1]))
        if len(frame)
        else (None, None)
    )

    ctx.frame = frame
    for name, expr in plan.map_exprs:
        ctx.step = "map"
        frame[name] = _evaluate(expr, ctx, "map")

    if plan.where is not None:
        ctx.step = "where"
        mask = _as_condition(_evaluate(plan.where, ctx, "where"), "where", plan.where.to_text())
        frame = _take_rows(frame, mask)
        ctx.frame = frame
    rows_matched = len(frame)
    if rows_matched == 0:
        warnings.append("No bars matched: the result is empty.")

    focus = [name for name, _ in plan.map_exprs] + [j.source for j in query.join]
    for name, expr in plan.group_keys:
        if not (isinstance(expr, Column) and expr.name == name):
            ctx.step = "group_by"
            frame[name] = _evaluate(expr, ctx, "group_by")

    shape = plan.shape
    summary: Summary
    table: pd.DataFrame | None = None
    source_rows: pd.DataFrame | None = None
    if shape == "grouped":
        table = _grouped(plan, ctx)
        by = [name for name, _ in plan.group_keys]
        table = _sort_limit(table, plan, warnings)
        summary = summarize_grouped(table, by, [s.name for s in plan.select])
        focus = by + [s.name for s in plan.select]
    elif shape in ("scalar", "dict"):
        ctx.step = "select"
        values = {s.name: _aggregate(s.expr, ctx) for s in plan.select}
        if query.sort or query.limit:
            warnings.append("sort and limit do not apply to a single-row result and were ignored.")
        if shape == "scalar":
            name, value = next(iter(values.items()))
            summary = Summary(type="scalar", value=value, columns=[name])
        else:
            summary = Summary(type="dict", values=values)
        source_rows = _display_rows(frame, plan)
    else:
        if plan.select:
            ctx.step = "select"
            table = pd.DataFrame(
                {s.name: _evaluate(s.expr, ctx, "select") for s in plan.select}, index=frame.index
            )
            focus = [s.name for s in plan.select]
        else:
            table = _display_rows(frame, plan)
        table = _sort_limit(table, plan, warnings)
        stat_cols = [name for name, _ in plan.map_exprs] + [k.column for k in query.sort]
        if plan.select:
            stat_cols += [s.name for s in plan.select]
        row_cols = ["timestamp", *(name for name, _ in plan.map_exprs)]
        summary = summarize_table(table, list(dict.fromkeys(stat_cols)), row_cols)

    truncated = False
    if table is not None and len(table) > settings.max_table_rows:
        warnings.append(
            f"The table has {len(table):,} rows; only the first {settings.max_table_rows:,} are "
            "kept for display. Add a limit or aggregate."
        )
        table = table.iloc[: settings.max_table_rows]
        truncated = True
    if source_rows is not None and len(source_rows) > settings.max_table_rows:
        source_rows = source_rows.iloc[: settings.max_table_rows]
        truncated = True
    warnings += [w for w in ctx.warnings if w not in warnings]

    metadata = Metadata(
        instrument=dataset.instrument.symbol,
        session=plan.session,
        timeframe=plan.timeframe,
        period_requested=plan.period.text,
        period_start=covered[0],
        period_end=covered[1],
        rows_scanned=rows_scanned,
        rows_matched=rows_matched,
        warnings=warnings,
        data_source=dataset.meta.source,
        data_description=dataset.meta.description,
        truncated=truncated,
    )
    return Result(
        query=query.to_json(),
        summary=summary,
        table=table,
        source_rows=source_rows,
        metadata=metadata,
        focus_columns=list(dict.fromkeys(focus)),
    )


def _date(value: Any) -> dt.date:
    return pd.Timestamp(value).date()


def _evaluate(expr: Expr, ctx: EvalContext, step: str) -> pd.Series:
    ctx.step = step
    return evaluate(expr, ctx)


def _aggregate(expr: Expr, ctx: EvalContext) -> Any:
    value = evaluate_aggregate(expr, ctx, None)
    return value.item() if isinstance(value, np.generic) else value


def _grouped(plan: Plan, ctx: EvalContext) -> pd.DataFrame:
    ctx.step = "select"
    by = [name for name, _ in plan.group_keys]
    columns = {s.name: evaluate_aggregate(s.expr, ctx, by) for s in plan.select}
    table = pd.DataFrame(columns)
    return table.reset_index()


def _display_rows(frame: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    """The rows behind a number, without internal columns (and daily bars' trading_date,
    which repeats their timestamp)."""
    hidden = [MINUTE_OF_DAY] + (["trading_date"] if plan.timeframe == "daily" else [])
    return frame.drop(columns=[c for c in hidden if c in frame.columns])


def _session_name(dataset: Dataset, name: str) -> str:
    dataset.instrument.session(name)  # raises UnknownSession naming the real ones
    return name.upper()


def _sort_limit(table: pd.DataFrame, plan: Plan, warnings: list[str]) -> pd.DataFrame:
    query = plan.query
    if query.sort:
        table = table.sort_values(
            [k.column for k in query.sort],
            ascending=[not k.descending for k in query.sort],
            kind="stable",
            na_position="last",
        )
    if query.limit is not None:
        table = table.head(query.limit)
    return table.reset_index(drop=True)
