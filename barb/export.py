"""CSV export of what proves an answer: the table, or the rows behind a number.

Daily and longer bars are named by their bar label in the first column (``date``, ``week``,
``month``, ``quarter``, ``year``), the same label the model's summary and the chart use; the
timestamps it stands for are left out, so each bar has one name.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from barb.bar_labels import REPLACED_COLUMNS, table_label
from barb.result import Result


def proof_frame(result: Result) -> pd.DataFrame | None:
    """The table for rows and groups; the source rows for a number or a few numbers."""
    if result.table is not None:
        return result.table
    return result.source_rows


def csv_bytes(result: Result) -> bytes:
    """ISO dates, no index column, full precision."""
    frame = proof_frame(result)
    if frame is None:
        return b""
    out = frame.copy(deep=False)
    timeframe = result.metadata.timeframe if result.metadata else ""
    if table_label(out, timeframe) is not None:
        out = out.drop(columns=[c for c in REPLACED_COLUMNS if c in out.columns])
    for name in out.columns:
        if pd.api.types.is_datetime64_any_dtype(out[name]):
            values = out[name]
            if (values.dt.normalize() == values).all():
                out[name] = values.dt.strftime("%Y-%m-%d")
            else:
                out[name] = values.dt.strftime("%Y-%m-%dT%H:%M:%S")
    buffer = io.StringIO()
    out.to_csv(buffer, index=False, float_format="%.10g", lineterminator="\n")
    return buffer.getvalue().encode("utf-8")


def write_csv(result: Result, path: Path) -> None:
    path.write_bytes(csv_bytes(result))
