"""Readers for the vendor files Barb imports, each producing the same ``RawBars``.

Layouts (column names are matched case-insensitively; other columns are ignored):

- ``plain``: ``timestamp,open,high,low,close,volume``; ISO timestamps, either all naive
  (wall-clock in a given timezone) or all with a UTC offset or ``Z``;
- ``split``: ``Date,Time,Open,High,Low,Close,Volume``; dates ``2024-01-02`` or
  ``01/02/2024``, times ``09:30`` or ``09:30:00``, wall-clock;
- ``databento``: OHLCV-1m export: ``ts_event`` (UTC, integer nanoseconds or ISO) plus
  ``open,high,low,close,volume`` and optionally ``rtype,publisher_id,instrument_id,symbol``.
  Prices of 1e9 or more are Databento's fixed-point integers (units of 1e-9) and are scaled.

Each comes as CSV or as Parquet. Readers are fast on good files (Arrow's CSV reader and
vectorized casts); only when something fails do they go back over the file to find the
line, which costs a few seconds on a file of millions of rows.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

Layout = Literal["plain", "split", "databento"]
Format = Literal["plain", "split", "databento", "parquet"]
FORMATS: tuple[str, ...] = ("plain", "split", "databento", "parquet")

PRICES = ("open", "high", "low", "close")
LAYOUT_COLUMNS: dict[str, tuple[str, ...]] = {
    "plain": ("timestamp", *PRICES, "volume"),
    "split": ("date", "time", *PRICES, "volume"),
    "databento": ("ts_event", *PRICES, "volume"),
}
DATABENTO_OPTIONAL = ("rtype", "instrument_id", "symbol")
OHLCV_1M_RTYPE = 33  # Databento's record type of one-minute bars
FIXED_PRICE_SCALE = 1e9  # Databento's fixed-point prices are integers in units of 1e-9
NUMERIC = (*PRICES, "volume", "rtype")

_ZONE = re.compile(r"\d\d:\d\d(?::\d\d(?:\.\d+)?)?\s*(?:Z|[+-]\d\d(?::?\d\d)?)$")


class BadRow(Exception):
    """A problem in data row ``row`` (0-based, after the header) of the file being read."""

    def __init__(self, row: int, message: str):
        super().__init__(message)
        self.row = row
        self.message = message


class BadFile(Exception):
    """A problem with the file as a whole, or at a known physical ``line`` (1-based)."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class RawBars:
    """Bars as read from a file, before validation.

    ``instants`` are int64 nanoseconds: since the epoch in UTC when ``utc``, otherwise
    naive wall-clock times in a timezone the caller knows. Prices may hold NaN (missing).
    """

    layout: Layout
    instants: np.ndarray
    utc: bool
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray  # float64: checked for whole numbers before becoming int64
    series: np.ndarray | None = None  # Databento symbol or instrument_id: a code per bar
    series_names: tuple[str, ...] = ()  # the name of each code

    def __len__(self) -> int:
        return len(self.instants)


# --- detecting the layout ---------------------------------------------------------------


def detect_layout(columns: list[str], forced: Layout | None) -> Layout:
    """The layout whose columns are present (or ``forced``), else a ``BadFile`` naming both."""
    names = {c.strip().lower() for c in columns}
    order: tuple[Layout, ...] = (forced,) if forced else ("databento", "split", "plain")
    for layout in order:
        if all(c in names for c in LAYOUT_COLUMNS[layout]):
            return layout
    found = ", ".join(columns) or "none"
    if forced:
        missing = ", ".join(c for c in LAYOUT_COLUMNS[forced] if c not in names)
        expected = ",".join(LAYOUT_COLUMNS[forced])
        raise BadFile(f"missing columns {missing}. Found: {found}. Expected: {expected}.")
    expected = "; or ".join(f"{name}: {','.join(cols)}" for name, cols in LAYOUT_COLUMNS.items())
    raise BadFile(f"unrecognised columns. Found: {found}. Expected {expected}.")


def is_parquet(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(4) == b"PAR1"


# --- CSV ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CsvHeader:
    columns: list[str]
    delimiter: str
    line: int  # physical line of the header (1-based)


def read_csv_header(path: Path) -> CsvHeader:
    """The header row: its column names, the delimiter, and its line."""
    with path.open(encoding="utf-8-sig", newline="") as fh:
        for number, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            delimiter = max((",", ";", "\t"), key=text.count)
            names = next(csv.reader([text], delimiter=delimiter))
            return CsvHeader([n.strip() for n in names], delimiter, number)
    raise BadFile("the file is empty.")


def read_csv(path: Path, header: CsvHeader, layout: Layout) -> RawBars:
    """Read a CSV file of ``layout``: Arrow's reader first, a line-by-line scan on failure."""
    lookup = {c.strip().lower(): c for c in header.columns}
    wanted = [*LAYOUT_COLUMNS[layout]]
    if layout == "databento":
        wanted += [c for c in DATABENTO_OPTIONAL if c in lookup]
    types = {lookup[c]: (pa.float64() if c in NUMERIC else pa.string()) for c in wanted}
    if layout == "databento" and "instrument_id" in lookup:
        types[lookup["instrument_id"]] = pa.string()
    try:
        table = pa_csv.read_csv(
            path,
            read_options=pa_csv.ReadOptions(skip_rows=header.line - 1),
            parse_options=pa_csv.ParseOptions(delimiter=header.delimiter),
            convert_options=pa_csv.ConvertOptions(
                column_types=types, include_columns=list(types), strings_can_be_null=False
            ),
        )
    except pa.ArrowInvalid as exc:
        found = find_bad_line(path, header, wanted)
        if found is not None:
            raise BadFile(found[1], line=found[0]) from exc
        raise BadFile(f"cannot read as CSV ({exc}).") from exc
    table = table.rename_columns([c.strip().lower() for c in table.column_names])
    return from_table(table, layout)


def data_lines(path: Path, header: CsvHeader) -> Iterator[tuple[int, str]]:
    """(physical line number, text) of each data row, skipping empty lines as Arrow does."""
    with path.open(encoding="utf-8-sig", newline="") as fh:
        for number, text in enumerate(fh, start=1):
            if number <= header.line or text in ("\n", "\r\n", "\r", ""):
                continue
            yield number, text


def line_of_row(path: Path, header: CsvHeader, row: int) -> int | None:
    """Physical line number of data row ``row`` (0-based)."""
    for k, (number, _) in enumerate(data_lines(path, header)):
        if k == row:
            return number
    return None


def find_bad_line(path: Path, header: CsvHeader, wanted: list[str]) -> tuple[int, str] | None:
    """The first line with the wrong number of fields or an unreadable number, if any."""
    lookup = {c.strip().lower(): i for i, c in enumerate(header.columns)}
    numeric = [(name, lookup[name]) for name in wanted if name in NUMERIC]
    for number, text in data_lines(path, header):
        cells = next(csv.reader([text], delimiter=header.delimiter), [])
        if len(cells) != len(header.columns):
            return number, f"expected {len(header.columns)} fields, found {len(cells)}."
        for name, i in numeric:
            cell = cells[i].strip()
            if cell == "":
                continue  # missing values are reported by the validation, with the others
            try:
                float(cell)
            except ValueError:
                return number, f"{name} is not a number: {cell!r}."
    return None


# --- Parquet --------------------------------------------------------------------------


def read_parquet(path: Path, forced_layout: Layout | None) -> RawBars:
    try:
        schema = pq.read_schema(path)
        layout = detect_layout(schema.names, forced_layout)
        lookup = {c.strip().lower(): c for c in schema.names}
        wanted = [*LAYOUT_COLUMNS[layout]]
        if layout == "databento":
            wanted += [c for c in DATABENTO_OPTIONAL if c in lookup]
        table = pq.read_table(path, columns=[lookup[c] for c in wanted])
    except (OSError, pa.ArrowException) as exc:
        raise BadFile(f"cannot read as Parquet ({exc}).") from exc
    table = table.rename_columns([c.strip().lower() for c in table.column_names])
    for name in NUMERIC:
        if name in table.column_names:
            column = table.column(name)
            if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
                raise BadFile(f"column {name} holds {column.type}, not numbers.")
            index = table.column_names.index(name)
            table = table.set_column(index, name, pc.cast(column, pa.float64()))
    return from_table(table, layout)


# --- from an Arrow table to RawBars -----------------------------------------------------


def from_table(table: pa.Table, layout: Layout) -> RawBars:
    """``RawBars`` from a table with lower-case column names of ``layout``."""
    if table.num_rows == 0:
        raise BadFile("no bars after the header.")
    if layout == "plain":
        instants, utc = parse_timestamps(table.column("timestamp"))
    elif layout == "split":
        instants, utc = parse_split(table.column("date"), table.column("time")), False
    else:
        instants, utc = parse_ts_event(table.column("ts_event")), True
    prices = {name: _floats(table.column(name)) for name in (*PRICES, "volume")}
    series, names = None, ()
    if layout == "databento":
        check_rtype(table)
        if prices["high"].size and np.nanmax(prices["high"]) >= FIXED_PRICE_SCALE:
            for name in PRICES:
                prices[name] = prices[name] / FIXED_PRICE_SCALE
        for key in ("symbol", "instrument_id"):
            if key in table.column_names:
                # Codes rather than millions of Python strings.
                encoded = pc.dictionary_encode(table.column(key).cast(pa.string()))
                encoded = encoded.combine_chunks()
                series = encoded.indices.to_numpy(zero_copy_only=False)
                names = tuple(str(x) for x in encoded.dictionary.to_pylist())
                break
    return RawBars(layout, instants, utc, series=series, series_names=names, **prices)


def _floats(column: pa.ChunkedArray) -> np.ndarray:
    return column.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)


def parse_timestamps(column: pa.ChunkedArray) -> tuple[np.ndarray, bool]:
    """ISO timestamps -> (int64 ns, utc). All must be naive, or all carry an offset."""
    if pa.types.is_timestamp(column.type):
        utc = column.type.tz is not None
        return column.cast(pa.timestamp("ns", tz=column.type.tz)).to_numpy().view(np.int64), utc
    if not pa.types.is_string(column.type) and not pa.types.is_large_string(column.type):
        raise BadFile(f"column timestamp holds {column.type}, not times.")
    zoned = pc.fill_null(pc.match_substring_regex(column, _ZONE.pattern), False)
    zoned = zoned.to_numpy(zero_copy_only=False)
    utc = bool(zoned[0])
    if not bool(np.all(zoned == utc)):
        row = int(np.flatnonzero(zoned != utc)[0])
        raise BadRow(
            row,
            f"timestamp {column[row].as_py()!r} {'lacks' if utc else 'has'} a UTC offset, "
            f"unlike the first bar's; use one form throughout.",
        )
    target = pa.timestamp("ns", tz="UTC" if utc else None)
    try:
        return pc.cast(column, target).to_numpy().view(np.int64), utc
    except pa.ArrowInvalid:
        pass
    # Find the row Arrow choked on. pandas' ISO 8601 reader is as strict (a guessing parser
    # would read "01/02/2024" as either day first or month first) but marks each bad row.
    values = column.to_pandas()
    parsed = pd.to_datetime(values, format="ISO8601", errors="coerce", utc=utc)
    bad = np.flatnonzero(parsed.isna().to_numpy())
    if bad.size:
        raise BadRow(int(bad[0]), f"cannot read the timestamp {values.iloc[bad[0]]!r}.")
    return parsed.to_numpy(dtype="datetime64[ns]").view(np.int64), utc


def parse_split(dates: pa.ChunkedArray, times: pa.ChunkedArray) -> np.ndarray:
    """Date and Time columns -> naive int64 ns."""
    dates = dates.cast(pa.string())
    times = times.cast(pa.string())
    first = dates[0].as_py() or ""
    date_format = "%m/%d/%Y" if "/" in first else "%Y-%m-%d"
    # "09:30" -> "09:30:00", so that one format reads both.
    times = pc.if_else(
        pc.equal(pc.utf8_length(times), 5), pc.binary_join_element_wise(times, ":00", ""), times
    )
    joined = pc.binary_join_element_wise(dates, times, " ")
    parsed = pc.strptime(joined, format=f"{date_format} %H:%M:%S", unit="ns", error_is_null=True)
    bad = np.flatnonzero(parsed.is_null().to_numpy(zero_copy_only=False))
    if bad.size:
        row = int(bad[0])
        raise BadRow(
            row,
            f"cannot read the date and time {dates[row].as_py()!r} {times[row].as_py()!r} "
            f"(expected dates like {'01/02/2024' if '/' in first else '2024-01-02'} and "
            f"times like 09:30 or 09:30:00).",
        )
    return parsed.to_numpy().view(np.int64)


def parse_ts_event(column: pa.ChunkedArray) -> np.ndarray:
    """Databento ``ts_event``: UTC nanoseconds as integers, ISO strings or timestamps."""
    if pa.types.is_timestamp(column.type):
        if column.type.tz is None:
            raise BadFile("ts_event has no timezone; Databento's are UTC.")
        return column.cast(pa.timestamp("ns", tz="UTC")).to_numpy().view(np.int64)
    if pa.types.is_integer(column.type):
        return column.cast(pa.int64()).to_numpy().copy()
    digits = pc.fill_null(pc.match_substring_regex(column, r"^\d+$"), False)
    digits = digits.to_numpy(zero_copy_only=False)
    if bool(digits.all()):
        return pc.cast(column, pa.int64()).to_numpy().copy()
    instants, utc = parse_timestamps(column)
    if not utc:
        raise BadRow(0, f"ts_event {column[0].as_py()!r} has no zone; Databento's are UTC.")
    return instants


def check_rtype(table: pa.Table) -> None:
    """Databento record types other than one-minute bars are refused."""
    if "rtype" not in table.column_names:
        return
    rtype = table.column("rtype").to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(rtype != OHLCV_1M_RTYPE)
    if bad.size:
        raise BadRow(
            int(bad[0]),
            f"rtype {rtype[bad[0]]:g} is not one-minute bars (ohlcv-1m has rtype "
            f"{OHLCV_1M_RTYPE}); export the ohlcv-1m schema.",
        )
