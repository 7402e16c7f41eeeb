"""CSV export of what proves an answer: the table, or the rows behind a number (only those
the where kept; after ``then``, the first stage's rows the second stage's where kept).

Daily and longer bars are named by their bar label in the first column (``date``, ``week``,
``month``, ``quarter``, ``year``), the same label the model's summary and the chart use; the
timestamps it stands for are left out, so each bar has one name.

The file is meant to be opened anywhere (a spreadsheet, pandas, another tool) without
guessing: UTF-8, times in ISO 8601 with their UTC offset (dates stay plain dates), minutes
of the day the query made (``hour() * 60 + minute()``) as the clock reads them (``09:53``,
not 593), prices on the instrument's tick, plain numbers (no thousands separators, no
exponents), and a ``source`` column saying whose data it is (the synthetic sample, or the
imported file and its dates).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from barb.bar_labels import as_labelled
from barb.instruments import Instrument, available_instruments
from barb.result import Result, result_instrument
from barb.row_values import statistic_arguments
from barb.time_keys import clock_kind, clock_text

# Columns that hold prices as traded (joined instruments' too: es_close); aggregates of
# them under other names (mean_range) are left at full precision.
PRICE_COLUMNS = ("open", "high", "low", "close", "range")
SIGNIFICANT_DIGITS = 10


NOTE_COLUMN = "ranking_note"
OPEN_NOTE = "not over yet: not ranked"
WHOLE_NOTE = "first whole group in this order: the answer"


def proof_frame(result: Result) -> pd.DataFrame | None:
    """The table for rows and groups; the source rows for a number or a few numbers, with
    the values a statistic of an expression took on each (``range / open * 100`` of
    ``mean(range / open * 100)``): the mapped form (``range_pct``) had that column and the
    written one only the bars'."""
    if result.table is not None:
        return _with_first_whole(result.table, result)
    rows = result.source_rows
    if rows is None:
        return None
    averaged = statistic_arguments(rows, result)
    return rows.assign(**averaged) if averaged else rows


def csv_rows(result: Result) -> int:
    """The rows the CSV holds: the result's, and a ranking's first whole group with them
    (the bot's "CSV · 1 rows" button was under a file of 2)."""
    frame = proof_frame(result)
    return 0 if frame is None else len(frame)


def whole_rows(result: Result) -> int:
    """The rows the CSV would hold had they not been cut to their first ``max_table_rows``
    for display: 1,774,380 one-minute bars behind a mean, of which the CSV holds 50,000. The
    same as ``csv_rows`` when nothing was cut."""
    held = csv_rows(result)
    meta = result.metadata
    if meta is None or not meta.truncated:
        return held
    if result.table is not None:  # the table's own count, taken before the cut
        total = result.summary.rows if result.summary is not None else None
        return max(held, total or 0)
    every = result.drawn_rows  # all the rows behind the number, as the chart draws them
    return max(held, len(every)) if every is not None else held


def _with_first_whole(table: pd.DataFrame, result: Result) -> pd.DataFrame:
    """A ranking cut to one group that the data's end left unfinished ("lowest NQ-ES
    correlation by year", limit 1: 2026's 4 days) with the first whole group after it, as
    the engine found it before the limit, each row noted: the chart and its headline name
    that whole group (2021), and the CSV held 2026 alone."""
    meta = result.metadata
    row = meta.first_whole if meta is not None else None
    if row is None or len(table) != 1 or any(c not in row for c in table.columns):
        return table
    if NOTE_COLUMN in table.columns:
        return table
    whole = pd.DataFrame([row])[list(table.columns)]
    try:
        whole = whole.astype(table.dtypes.to_dict())
    except (TypeError, ValueError):  # a value the table's column cannot hold: as it was
        return table
    out = pd.concat([table, whole], ignore_index=True)
    out[NOTE_COLUMN] = [OPEN_NOTE, WHOLE_NOTE]
    return out


def _is_price(name: str) -> bool:
    if name in PRICE_COLUMNS:
        return True
    prefix, _, column = name.partition("_")
    return column in PRICE_COLUMNS and prefix.upper() in available_instruments()


def _plain(value: float) -> str:
    if not np.isfinite(value):
        return ""
    # + 0.0 makes a negative zero plain zero: round(ret) of a −0.3% day keyed its bucket "-0".
    return np.format_float_positional(
        value + 0.0, precision=SIGNIFICANT_DIGITS, fractional=False, trim="-"
    )


def _on_tick(values: pd.Series, instrument: Instrument) -> pd.Series:
    """Prices written on the instrument's tick (``18000.25``, not ``18000.250000000004``).

    Only prices that sit on a tick (within float noise) are snapped: data off the tick (a
    back-adjusted continuous series, a file on a finer tick) is written as it is. Rounded,
    the CSV said open 18100.25 where the answer, from the same bar, said 18100.13.
    """
    tick, decimals = instrument.tick_size, instrument.tick_decimals
    raw = values.to_numpy(dtype="float64")
    ticks = np.rint(raw / tick)
    on_tick = np.abs(raw / tick - ticks) < 1e-6  # False for NaN and inf
    return pd.Series(
        [
            f"{t * tick + 0.0:.{decimals}f}" if on else _plain(x)
            for x, t, on in zip(raw, ticks, on_tick, strict=True)
        ],
        index=values.index,
    )


def csv_bytes(result: Result) -> bytes:
    """The proof frame as clean CSV (see the module's docstring)."""
    frame = proof_frame(result)
    if frame is None:
        return b""
    instrument = result_instrument(result)
    timeframe = result.metadata.timeframe if result.metadata else ""
    out = as_labelled(frame, timeframe).copy(deep=False)
    for name in out.columns:
        values = out[name]
        if pd.api.types.is_datetime64_any_dtype(values):
            if (values.dt.normalize() == values).all():
                out[name] = values.dt.strftime("%Y-%m-%d")
            elif instrument is not None and values.dt.tz is None:
                local = values.dt.tz_localize(
                    instrument.timezone, ambiguous="NaT", nonexistent="NaT"
                )
                text = local.dt.strftime("%Y-%m-%dT%H:%M:%S%z")
                out[name] = text.str.replace(r"(\d\d)(\d\d)$", r"\1:\2", regex=True)
            else:
                out[name] = values.dt.strftime("%Y-%m-%dT%H:%M:%S")
        elif clock_kind(str(name), values, result.query) == "minute":
            out[name] = values.map(lambda m: clock_text(m) if pd.notna(m) else "")
        elif pd.api.types.is_float_dtype(values):
            if instrument is not None and _is_price(str(name)):
                out[name] = _on_tick(values, instrument)
            else:
                out[name] = values.map(_plain)
    if result.metadata is not None:
        out["source"] = _source(result)
    buffer = io.StringIO()
    out.to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue().encode("utf-8")


def _source(result: Result) -> str:
    meta = result.metadata
    assert meta is not None
    if meta.data_source == "synthetic":
        return "synthetic sample, not market data"
    return meta.data_description


def write_csv(result: Result, path: Path) -> None:
    path.write_bytes(csv_bytes(result))
