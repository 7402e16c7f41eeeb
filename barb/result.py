"""The result contract (seed 001): a compact ``summary`` for the model, full data for people.

The model only ever reads ``render_summary(result)``: a few lines with the value(s), stats
and at most a handful of rows, whatever the size of the table. ``table`` and ``source_rows``
are for the person (chart, CSV), ``metadata`` says what was scanned and where the data came
from (a synthetic sample is always marked as such).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from barb.errors import QueryError

ResultType = Literal["scalar", "dict", "table", "grouped"]
# Groups listed one by one in the summary when there are at most this many.
MAX_LISTED_GROUPS = 7


class ColumnStats(BaseModel):
    min: float | None
    max: float | None
    mean: float | None


class Summary(BaseModel):
    """What the model is told. Values are JSON scalars; rows are small dicts."""

    type: ResultType
    value: Any = None
    values: dict[str, Any] | None = None
    rows: int | None = None
    columns: list[str] | None = None
    by: list[str] | None = None
    stats: dict[str, ColumnStats] = Field(default_factory=dict)
    first: dict[str, Any] | None = None
    last: dict[str, Any] | None = None
    min: dict[str, Any] | None = None
    max: dict[str, Any] | None = None
    groups: list[dict[str, Any]] | None = None


class Metadata(BaseModel):
    instrument: str
    session: str
    timeframe: str
    period_requested: str
    period_start: dt.date | None
    period_end: dt.date | None
    rows_scanned: int
    rows_matched: int
    warnings: list[str] = Field(default_factory=list)
    data_source: Literal["synthetic", "imported"]
    data_description: str
    elapsed_ms: float | None = None
    truncated: bool = False


@dataclass
class Result:
    """Either a computed answer or an error value; ``execute`` never raises for bad queries."""

    query: dict[str, Any]
    summary: Summary | None = None
    table: pd.DataFrame | None = None
    source_rows: pd.DataFrame | None = None
    metadata: Metadata | None = None
    error: QueryError | None = None
    # Columns the query itself made (map, join, group keys, select names): stats and charts.
    focus_columns: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (what ``barb query --json`` prints)."""
        if self.error is not None:
            return {**self.error.to_dict(), "query": self.query}
        assert self.summary is not None and self.metadata is not None
        return {
            "summary": self.summary.model_dump(mode="json", exclude_none=True),
            "summary_text": render_summary(self),
            "table": records(self.table) if self.table is not None else None,
            "source_rows": records(self.source_rows) if self.source_rows is not None else None,
            "metadata": self.metadata.model_dump(mode="json"),
            "query": self.query,
        }


def json_value(value: Any) -> Any:
    """A cell as a JSON scalar: NaN -> None, timestamps -> ISO dates, numpy -> Python."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (pd.Timestamp, dt.datetime)):
        ts = pd.Timestamp(value)
        if ts.hour == 0 and ts.minute == 0 and ts.second == 0:
            return ts.strftime("%Y-%m-%d")
        return ts.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, np.datetime64):
        return json_value(pd.Timestamp(value))
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return None if math.isnan(f) or math.isinf(f) else f
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    columns = list(frame.columns)
    return [
        {c: json_value(v) for c, v in zip(columns, row, strict=True)}
        for row in frame.itertuples(index=False, name=None)
    ]


def _short(value: Any) -> Any:
    """Round for the model's eyes: enough digits to quote, no float noise."""
    value = json_value(value)
    if isinstance(value, float):
        if value == 0 or abs(value) >= 100:
            return round(value, 2)
        digits = max(2, 3 - math.floor(math.log10(abs(value))))
        return round(value, digits)
    return value


def _row(frame: pd.DataFrame, position: int, columns: list[str]) -> dict[str, Any]:
    return {c: _short(frame[c].iloc[position]) for c in columns if c in frame.columns}


def _stats(series: pd.Series) -> ColumnStats | None:
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return None
    values = series.astype("float64")
    if values.notna().sum() == 0:
        return ColumnStats(min=None, max=None, mean=None)
    return ColumnStats(
        min=_short(values.min()), max=_short(values.max()), mean=_short(values.mean())
    )


def summarize_table(
    table: pd.DataFrame, stat_columns: list[str], row_columns: list[str]
) -> Summary:
    """Rows result: count, stats of the query's own columns, first and last row."""
    stats = {}
    for name in stat_columns:
        if name in table.columns:
            col_stats = _stats(table[name])
            if col_stats is not None:
                stats[name] = col_stats
    summary = Summary(type="table", rows=len(table), columns=list(table.columns), stats=stats)
    if len(table):
        summary.first = _row(table, 0, row_columns)
        summary.last = _row(table, len(table) - 1, row_columns)
    return summary


def summarize_grouped(table: pd.DataFrame, by: list[str], value_columns: list[str]) -> Summary:
    """Groups result: how many, and the groups with the smallest and largest first value."""
    summary = Summary(type="grouped", rows=len(table), by=by, columns=list(table.columns))
    if not len(table) or not value_columns:
        return summary
    main = value_columns[0]
    shown = by + value_columns
    numeric = pd.to_numeric(table[main], errors="coerce")
    if numeric.notna().any():
        summary.min = _row(table, int(np.nanargmin(numeric.to_numpy(dtype="float64"))), shown)
        summary.max = _row(table, int(np.nanargmax(numeric.to_numpy(dtype="float64"))), shown)
        col_stats = _stats(numeric)
        if col_stats is not None:
            summary.stats = {main: col_stats}
    if len(table) <= MAX_LISTED_GROUPS:
        summary.groups = [_row(table, i, shown) for i in range(len(table))]
    return summary


def _fmt(value: Any) -> str:
    value = _short(value)
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:,.10g}" if abs(value) < 1e15 else str(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _fmt_row(row: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_fmt(v)}" for k, v in row.items())


def render_summary(result: Result) -> str:
    """The short text the model reads. Never more than a handful of rows."""
    if result.error is not None:
        err = result.error.to_dict()
        text = f"Error ({err['error_type']}, step {err['step']}): {err['message']}"
        if err.get("hint"):
            text += f"\nHint: {err['hint']}"
        return text
    s, m = result.summary, result.metadata
    assert s is not None and m is not None
    lines: list[str] = []
    if s.type == "scalar":
        name = s.columns[0] if s.columns else "value"
        lines.append(f"Result: {name} = {_fmt(s.value)}")
    elif s.type == "dict":
        lines.append("Result: " + _fmt_row(s.values or {}))
    elif s.type == "table":
        lines.append(f"Result: {s.rows:,} rows")
        for name, st in s.stats.items():
            lines.append(f"  {name}: min={_fmt(st.min)}, max={_fmt(st.max)}, mean={_fmt(st.mean)}")
        if s.first:
            lines.append(f"  first: {_fmt_row(s.first)}")
        if s.last and s.rows and s.rows > 1:
            lines.append(f"  last: {_fmt_row(s.last)}")
    else:
        by = ", ".join(s.by or [])
        lines.append(f"Result: {s.rows:,} groups by {by}")
        if s.groups:
            lines.extend(f"  {_fmt_row(g)}" for g in s.groups)
        else:
            if s.max:
                lines.append(f"  max: {_fmt_row(s.max)}")
            if s.min:
                lines.append(f"  min: {_fmt_row(s.min)}")
            for name, st in s.stats.items():
                lines.append(f"  {name} across groups: mean={_fmt(st.mean)}")
    period = f"{m.period_start} — {m.period_end}" if m.period_start else "no bars"
    lines.append(
        f"Scanned {m.rows_scanned:,} {m.timeframe} {m.session} bars of {m.instrument}, "
        f"{period}; {m.rows_matched:,} matched."
    )
    if m.data_source == "synthetic":
        lines.append("Data: SYNTHETIC sample, not market history; say so in the answer.")
    lines.extend(f"Warning: {w}" for w in m.warnings)
    return "\n".join(lines)
