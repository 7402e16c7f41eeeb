"""Readers for the vendor files Barb imports, each producing the same ``RawBars``.

The layouts themselves (column names, time forms, stamps) are in ``barb.data.layouts``. This
module reads CSV text (any of ``,`` ``;`` tab, a decimal comma with ``;``, with or without a
header) and Parquet into arrays. Readers are fast on good files (Arrow's CSV reader and
vectorized casts); only when something fails do they go back over the file to find the line,
which costs a few seconds on a file of millions of rows.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import re
import sys
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
from tqdm import tqdm

from barb.data.layouts import (
    LAYOUTS,
    PRICES,
    TITLE_WORDS,
    UP_DOWN,
    DateOrder,
    Layout,
    LayoutError,
    Stamp,
    column_key,
    custom_layout,
    detect_header_layout,
    detect_headerless,
    match_header,
    named_abbreviation,
    named_zone,
)
from barb.data.words import Message, Note, Refusal
from barb.i18n import N_
from barb.process_memory import trim_freed_memory

DATABENTO_OPTIONAL = ("rtype", "instrument_id", "symbol")
OHLCV_1M_RTYPE = 33  # Databento's record type of one-minute bars
FIXED_PRICE_SCALE = 1e9  # Databento's fixed-point prices are integers in units of 1e-9
NUMERIC = (*PRICES, "volume", *UP_DOWN)
PROGRESS_BYTES = 32 << 20  # files larger than this show a progress bar while read

_ZONE = re.compile(r"\d\d:\d\d(?::\d\d(?:\.\d+)?)?\s*(?:Z|[+-]\d\d(?::?\d\d)?)$")
_DECIMAL_COMMA = re.compile(r"^\s*-?\d+,\d+\s*$")
# 17,850.25 / 17.850,25 / 17 850,25 / 17'850.25: Excel's numbers "with 1000 separator".
_THOUSANDS = re.compile(
    r"^-?\d{1,3}(?P<sep>[.,\s\u00a0\u202f'])\d{3}(?:(?P=sep)\d{3})*(?:[.,]\d+)?$"
)
# Lines looked at for a decimal comma: a quiet market prints whole-number bars for a while.
DECIMAL_SAMPLE_LINES = 1000


class BadRow(Refusal):
    """A problem in data row ``row`` (0-based, after the header) of the file being read."""

    def __init__(self, row: int, message: Message):
        super().__init__(message)
        self.row = row


class BadFile(Refusal):
    """A problem with the file as a whole, or at a known physical ``line`` (1-based)."""

    def __init__(self, message: Message, line: int | None = None):
        super().__init__(message)
        self.line = line


@dataclass
class RawBars:
    """Bars as read from a file, before validation.

    ``instants`` are int64 nanoseconds: since the epoch in UTC when ``utc``, otherwise
    naive wall-clock times in a timezone still to be decided. Prices may hold NaN.
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
    notes: list[Note] = field(default_factory=list)  # what the reader assumed
    # The zone the file names when it cannot be taken as it stands, its times then naive:
    # IB's abbreviation ("EST": IANA's fixed UTC-5, IB's New York time), read only in the
    # zone --timezone names; "UTC" for Databento's ts_event without a zone, read as UTC only
    # when the bars fit the exchange's hours so read (a frame may lose its zone after a
    # conversion to New York time).
    claimed_zone: str | None = None
    # The zone the header names beside the times ("Time (UTC)", "Gmt time"): read as the
    # zone --timezone declares.
    header_zone: str | None = None
    # The abbreviation the header names it by ("EST" in "Time (EST)"), when it has a fixed
    # offset of its own (``layouts.HEADER_FIXED``): the refusal of times on that offset
    # names it.
    header_abbreviation: str | None = None
    # The file's data row of each bar once the bars are no longer in the file's order
    # (sorted by time, repeats dropped); None while they are.
    rows: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.instants)

    def file_row(self, i: int) -> int:
        """The file's data row (0-based) of bar ``i``, for naming its line."""
        return int(self.rows[i]) if self.rows is not None else int(i)


def is_parquet(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(4) == b"PAR1"


# --- CSV ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CsvShape:
    """What the first lines say: the layout, where each column is, the separators."""

    layout: Layout
    indexes: dict[str, int]  # canonical column -> field index
    width: int  # fields per line
    delimiter: str
    decimal_comma: bool
    line: int  # physical line of the header (1-based); 0 without a header
    names: list[str]  # the header's names (generated for headerless files)
    zone: str | None = None  # the zone the header names beside the times ("Time (UTC)")
    abbreviation: str | None = None  # how it names it, when by "EST" and the like


def _first_lines(path: Path, count: int = 2) -> list[tuple[int, str]]:
    found = []
    with path.open(encoding="utf-8-sig", newline="") as fh:
        for number, text in enumerate(fh, start=1):
            if text.strip():
                found.append((number, text.rstrip("\r\n")))
                if len(found) == count:
                    break
    return found


def read_csv_shape(
    path: Path, forced: str | None = None, columns: dict[str, str] | None = None
) -> CsvShape:
    """Find the layout from the first lines: a known header, a known headerless line, or
    the ``--columns`` mapping."""
    lines = _first_lines(path, 1 + DECIMAL_SAMPLE_LINES)
    if not lines:
        raise BadFile((N_("import.refuse.empty"), {}))
    number, text = lines[0]
    headerless = detect_headerless(text) if not columns else None
    if forced and not LAYOUTS[forced].header:
        headerless = LAYOUTS[forced]
        if headerless.first_line is not None and not headerless.first_line.match(text):
            raise BadFile(
                (
                    N_("import.refuse.not_layout_line"),
                    {
                        "layout": (TITLE_WORDS[headerless.name], {}),
                        "example": repr(headerless.example),
                    },
                ),
                line=number,
            )
    if headerless is not None:
        delimiter = headerless.delimiter or ","
        width = len(next(csv.reader([text], delimiter=delimiter)))
        names = [
            *headerless.columns,
            *(f"extra_{i}" for i in range(len(headerless.columns), width)),
        ]
        indexes = {name: i for i, name in enumerate(headerless.columns)}
        sample = [text for _, text in lines]
        return CsvShape(
            headerless,
            indexes,
            width,
            delimiter,
            _decimal_comma(sample, delimiter, indexes),
            0,
            names,
        )
    if text[:1].isdigit() and not columns:
        cells = text.strip().split(max((",", ";", "\t"), key=text.count))
        if len(cells) > 1 and _DATE_ONLY.fullmatch(cells[0]) and ":" not in cells[1]:
            raise BadFile(_daily(cells[0]), line=number)
        raise BadFile((N_("import.refuse.no_header"), {"line": repr(text[:60])}), line=number)
    delimiter = max((",", ";", "\t"), key=text.count)
    names = [n.strip() for n in next(csv.reader([text], delimiter=delimiter))]
    try:
        if columns:
            layout = custom_layout(columns, names, "open")
            found = match_header(layout, names)
            assert found is not None  # custom_layout checked every name
            indexes = found
        else:
            layout, indexes = detect_header_layout(names, forced)
    except LayoutError as exc:
        daily = _daily_column(names, lines[1:], delimiter)
        raise BadFile(daily or _ticks(names) or exc.said, line=number) from None
    time = names[indexes["timestamp"]] if "timestamp" in indexes else ""
    if layout.time == "timestamp" and column_key(time) == "date":
        # One "Date" column of dates and times ("2024-03-18 09:30"): a daily file's (its
        # dates alone) is refused as daily, as when no layout took "Date".
        daily = _daily_column(names, lines[1:], delimiter)
        if daily is not None:
            raise BadFile(daily, line=number)
    sample = [text for _, text in lines[1:]]
    if sample and all(_one_empty_field_more(text, delimiter, len(names)) for text in sample):
        # A separator after each bar's last field, not after the header's (some exports
        # end every line with one): an unnamed empty column, left unread. Every bar was
        # refused as "expected 6 fields, found 7".
        names.append("")
    elif (
        sample
        and not names[-1]
        and all(
            _one_empty_field_more(f"{text}{delimiter}", delimiter, len(names) - 1)
            for text in sample
        )
    ):
        # The header's alone (`Date,Time,…,Volume,`): the bars have no such field.
        names.pop()
    try:
        zone = named_zone(names, indexes)
    except LayoutError as exc:
        raise BadFile(exc.said, line=number) from None
    return CsvShape(
        layout,
        indexes,
        len(names),
        delimiter,
        _decimal_comma(sample, delimiter, indexes),
        number,
        names,
        zone,
        named_abbreviation(names, indexes),
    )


#: Column names (as ``column_key`` reads them) of a trade's price in tick exports.
TICK_PRICES = frozenset({"price", "last", "lastprice", "tradeprice", "bid", "ask"})


def _ticks(names: list[str]) -> Message | None:
    """The refusal of a header of trades (a price, no open, high or low): such a file was
    told its columns were unrecognised, and to map them with ``--columns``."""
    keys = {column_key(name) for name in names}
    if not keys & TICK_PRICES or keys & {"open", "high", "low"}:
        return None
    return (N_("import.refuse.tick_columns"), {"names": ", ".join(names)})


def _one_empty_field_more(text: str, delimiter: str, width: int) -> bool:
    """Whether a line has ``width`` fields and then an empty one."""
    cells = next(csv.reader([text], delimiter=delimiter), [])
    return len(cells) == width + 1 and not cells[-1].strip()


# A date with no time of day: 2024-03-04, 20240304, 03/04/2024, 2024.03.04, 04.03.2024.
_DATE_ONLY = re.compile(r"\d{4}([-/.]?)\d{1,2}\1\d{1,2}|\d{1,2}([-/.])\d{1,2}\2\d{4}")


def _daily(cell: str) -> Message:
    return (N_("import.refuse.daily"), {"date": repr(cell)})


def _daily_column(names: list[str], lines: list[tuple[int, str]], delimiter: str) -> Message | None:
    """The refusal of a daily file (Norgate's ``Date,Open,…``, no time column) whose header
    no layout takes: it was sent to --columns, which then found 1440-minute bars."""
    keys = [column_key(n.strip().strip('"')) for n in names]
    if not lines or "date" not in keys or {"time", "timestamp", "datetime"} & set(keys):
        return None
    cells = next(csv.reader([lines[0][1]], delimiter=delimiter), [])
    index = keys.index("date")
    if any(_TIME_OF_DAY.fullmatch(cell.strip()) for cell in cells):
        # A time of day under another name (French «Heure», German «Zeit»): intraday bars
        # whose columns Barb does not know, told --columns; they were told they were daily.
        return None
    if index < len(cells) and _DATE_ONLY.fullmatch(cells[index].strip()):
        return _daily(cells[index].strip())
    return None


_TIME_OF_DAY = re.compile(r"\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?")


def _decimal_comma(lines: list[str], delimiter: str, indexes: dict[str, int]) -> bool:
    """European files write 4500,25 and separate fields with ';' (any of ``lines`` says so:
    the first bars may all be whole numbers)."""
    if delimiter == ",":
        return False
    prices = [i for name, i in indexes.items() if name in PRICES]
    return any(
        i < len(cells) and _DECIMAL_COMMA.match(cells[i])
        for cells in csv.reader(lines, delimiter=delimiter)
        for i in prices
    )


def read_csv(
    path: Path,
    shape: CsvShape,
    progress: bool = False,
    date_order: DateOrder | None = None,
    end: int | None = None,
    repeats: list[tuple[int, int, int]] | None = None,
) -> RawBars:
    """Read a CSV file of ``shape``: Arrow's reader first, a line-by-line scan on failure
    (``date_order``: as ``--date-order`` declares it, else read from the dates). ``end``:
    read only the file's first ``end`` bytes (all before a vendor's footer); ``repeats``:
    the header's repeats to read around (``repeated_headers``)."""
    wanted = dict(shape.indexes)
    if shape.layout.name == "databento":
        lower = [n.lower() for n in shape.names]
        wanted |= {c: lower.index(c) for c in DATABENTO_OPTIONAL if c in lower}
    names = [_unique_name(shape.names, i) for i in range(shape.width)]
    as_float = pa.string() if shape.decimal_comma else pa.float64()
    types = {
        names[i]: (as_float if c in NUMERIC else pa.float64() if c == "rtype" else pa.string())
        for c, i in wanted.items()
    }
    # Arrow gets the names: vendors repeat some ("", "Volume" twice) and headerless
    # files have none.
    options = {
        "read_options": pa_csv.ReadOptions(skip_rows=shape.line, column_names=names),
        "parse_options": pa_csv.ParseOptions(delimiter=shape.delimiter),
        "convert_options": pa_csv.ConvertOptions(
            column_types=types, include_columns=list(types), strings_can_be_null=False
        ),
    }
    try:
        split = shape.layout.time == "split"
        gathered = _Gathered(
            _time_key(shape, names, wanted),
            comma=[names[i] for c, i in wanted.items() if shape.decimal_comma and c in NUMERIC],
            coded=[names[wanted[c]] for c in ("date", "time") if c in wanted and split],
            layout=shape.layout,
            date_order=date_order,
        )
        spans = _spans(path, end, repeats or [])
        read = _read_table(path, options, progress, spans, gathered)
        parsed = gathered.parsed
        if read is None:  # a batch could not be read on its own: the file is read whole
            read, parsed = _read_table(path, options, progress, spans, None), None
        assert read is not None
        table, empty = read
    except pa.ArrowInvalid as exc:
        if repeats is None and (found_repeats := repeated_headers(path, shape)):
            return _read_around(path, shape, progress, date_order, end, found_repeats)
        if shape.delimiter != "," and not shape.decimal_comma:
            # A ';' file whose first thousand bars were whole numbers may still write 4500,25.
            wider = dataclasses.replace(shape, decimal_comma=True)
            try:
                return read_csv(path, wider, progress, date_order, end, repeats or [])
            except BadFile:
                # Unless a decimal comma does not explain the line the file was refused
                # for: a NinjaTrader line with a field too many, or a damaged price, was
                # refused as "line 1: open is not a number: '18002.0'" (a '.' read where the
                # retry wanted a decimal comma).
                found = find_bad_line(path, shape, wanted)
                if found is None or _comma_in(found[1]):
                    raise
        else:
            found = find_bad_line(path, shape, wanted)
        said = found[1] if found is not None else None
        footer = isinstance(said, tuple) and said[0] == "import.refuse.footer"
        if found is not None and footer and end is None:
            # Barchart's "Downloaded from Barchart.com as of …" under the bars: read without
            # it, and said (the admin of the bot could not delete it from a phone).
            assert isinstance(said, tuple)
            cut = _line_offset(path, found[0])
            raw = read_csv(path, shape, progress, date_order, cut, repeats)
            values = {"line": found[0], "line_text": said[1]["line"]}
            # A line of spaces under the bars is no vendor's footer: said as what it is.
            blank = said[1]["line"] == repr("")
            key = N_("import.note.blank_tail") if blank else N_("import.note.footer")
            raw.notes.append((key, values))
            return raw
        if found is not None:
            raise BadFile(found[1], line=found[0]) from exc
        raise BadFile((N_("import.refuse.not_csv"), {"error": exc})) from exc
    inverse = {names[i]: c for c, i in wanted.items()}
    table = table.rename_columns([inverse[n] for n in table.column_names])
    table, empty = _without_empty_tail(table, empty)
    if shape.decimal_comma:
        for name in NUMERIC:
            if name in table.column_names and pa.types.is_string(table.column(name).type):
                # Read whole (``_Gathered`` converts them batch by batch otherwise).
                index = table.column_names.index(name)
                column = table.column(name)
                # Where the decimal mark is ',', a '.' groups thousands (Excel's volume
                # 1.260): read as a decimal point it made 1,260 contracts 1.26, and 12.000
                # silently 12.
                if pc.any(pc.match_substring(column, ".")).as_py():
                    found = find_bad_line(path, shape, wanted)
                    if found is not None:
                        raise BadFile(found[1], line=found[0])
                try:
                    numbers = _comma_floats(column)
                except pa.ArrowInvalid as exc:
                    if repeats is None and (found_repeats := repeated_headers(path, shape)):
                        return _read_around(path, shape, progress, date_order, end, found_repeats)
                    found = find_bad_line(path, shape, wanted)
                    not_csv = (N_("import.refuse.not_csv"), {"error": exc})
                    raise BadFile(*(found[::-1] if found else (not_csv,))) from exc
                table = table.set_column(index, name, numbers)
    raw = from_table(table, shape.layout, date_order, parsed)
    raw.header_zone, raw.header_abbreviation = shape.zone, shape.abbreviation
    if empty:
        raw.notes.append((N_("import.note.empty_rows"), {"count": empty}))
    return raw


def _read_around(
    path: Path,
    shape: CsvShape,
    progress: bool,
    date_order: DateOrder | None,
    end: int | None,
    repeats: list[tuple[int, int, int]],
) -> RawBars:
    """The file read without the ``repeats`` of its header, and said: two exports joined
    with `cat` repeat the first's header where the second starts. It was refused ("delete
    this line"; from the bot, on a phone). The bars the two share are repeats, kept once."""
    raw = read_csv(path, shape, progress, date_order, end, repeats)
    values = {"count": len(repeats), "line": repeats[0][0]}
    raw.notes.append((N_("import.note.header_again"), values))
    return raw


def _spans(
    path: Path, end: int | None, repeats: list[tuple[int, int, int]]
) -> list[tuple[int, int]] | None:
    """The byte ranges of the file to read: None for all of it, else the parts before
    ``end`` around the ``repeats`` (line, offset, length) of its header."""
    if end is None and not repeats:
        return None
    stop = path.stat().st_size if end is None else end
    spans, start = [], 0
    for _, offset, length in repeats:
        if offset >= stop:
            break
        spans.append((start, offset))
        start = offset + length
    spans.append((start, stop))
    return [(a, b) for a, b in spans if b > a]


def _read_table(
    path: Path,
    options: dict[str, object],
    progress: bool,
    spans: list[tuple[int, int]] | None,
    gathered: _Gathered | None,
) -> tuple[pa.Table, np.ndarray] | None:
    """The file's table as ``options`` read it (``spans``: only those byte ranges, one
    after another, the header skipped in the first), and ``_blank_rows`` of it: gathered
    batch by batch when ``gathered`` is given (None when it could not be), else whole."""
    size = path.stat().st_size
    schema, batches = None, []
    with tqdm(
        total=size,
        unit="B",
        unit_scale=True,
        desc=f"reading {path.name}",
        disable=not progress or size < PROGRESS_BYTES or None,
        leave=False,
        file=sys.stderr,
    ) as bar:
        mapped = pa.memory_map(str(path)) if spans is not None else None
        for k, (start, stop) in enumerate(spans or [(0, size)]):
            # Arrow reads the file itself (not through a Python file object): its read-ahead
            # thread calling back into Python, still pending after a parse error, aborted
            # the CLI at exit ("terminate called without an active exception", exit 134).
            source = (
                pa.OSFile(str(path))
                if mapped is None
                else pa.BufferReader(mapped.read_at(stop - start, start))
            )
            read = options
            if k:  # the header is where the file starts, not where a part after a repeat does
                given = options["read_options"]
                assert isinstance(given, pa_csv.ReadOptions)
                names = given.column_names
                read = {**options, "read_options": pa_csv.ReadOptions(column_names=names)}
            with source:
                reader = pa_csv.open_csv(source, **read)
                schema = schema or reader.schema
                try:
                    for batch in reader:
                        if gathered is None:
                            batches.append(batch)
                        elif not gathered.add(batch):
                            return None
                        bar.update(start + source.tell() - bar.n)
                finally:
                    reader.close()
    assert schema is not None
    if gathered is not None:
        return gathered.table(schema)
    table = pa.Table.from_batches(batches, schema=schema)
    return table, _blank_rows(table)


def _blank_rows(table: pa.Table | pa.RecordBatch) -> np.ndarray:
    """Whether each row has only empty fields."""
    empty = np.ones(table.num_rows, dtype=bool)
    for column in table.columns:
        blank = column.is_null()
        if pa.types.is_string(column.type):
            blank = pc.or_(blank, pc.equal(pc.utf8_trim_whitespace(column), ""))
        empty &= blank.to_numpy(zero_copy_only=False)
    return empty


def _without_empty_tail(table: pa.Table, empty: np.ndarray) -> tuple[pa.Table, int]:
    """The table without the rows of only empty fields at its end (``,,,,,``: Excel's saved
    CSV keeps the cleared rows below the data), and how many there were: they were
    refused as "cannot read the timestamp ''". ``empty``: ``_blank_rows`` of the table as
    read (its numbers may since hold NaN where a field was empty)."""
    if table.num_rows == 0:
        return table, 0
    tail = int(np.argmin(empty[::-1])) if not empty.all() else table.num_rows
    return table.slice(0, table.num_rows - tail), tail


# The two forms of a time column that each row's text says alone, whatever the rest of
# the file holds (``parse_timestamps`` reads them so): an ISO time without an offset, and
# Unix time (its unit is found from the whole column, once it is gathered).
_NAIVE_ISO = r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?$"
_UNIX = r"^\s*\d+(?:\.0*)?\s*$"
_IB_ABBREVIATED = re.compile(r"\d\s+[A-Za-z]{2,6}\s*$")
# An ISO time with its offset, read batch by batch by ``parse_timestamps`` (``_Gathered``).
_OFFSET_ISO = r"^\s*\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?\s*(?:Z|[+-]\d\d:?\d\d)\s*$"


def _time_key(shape: CsvShape, names: list[str], wanted: dict[str, int]) -> str | None:
    """Arrow's name of the column ``from_table`` reads one-cell times from (None when the
    layout's times are in other forms)."""
    if shape.layout.time not in ("timestamp", "ib", "compact"):
        return None
    key = "time" if "time" in wanted and shape.layout.time == "timestamp" else "timestamp"
    return names[wanted[key]] if key in wanted else None


def read_as_numbers(path: Path, shape: CsvShape) -> bool:
    """Whether ``read_csv`` most likely holds the file only as its numbers and codes
    (``_Gathered``): its prices written with '.' or a decimal comma, its times in Date and
    Time columns, or in one column as naive ISO or Unix times or Excel's "02.01.2024 09:30"
    (the first bar's say which). Other files are held as text, whole or in part, while
    read."""
    if shape.layout.time in ("split", "compact"):
        return True
    key = "time" if "time" in shape.indexes else "timestamp"
    if shape.layout.time != "timestamp" or key not in shape.indexes:
        return False
    lines = _first_lines(path, 2 if shape.line else 1)
    if len(lines) < (2 if shape.line else 1):
        return False
    cells = next(csv.reader([lines[-1][1]], delimiter=shape.delimiter), [])
    index = shape.indexes[key]
    if index >= len(cells):
        return False
    if shape.layout.time == "ib":
        # Not IB's abbreviations ("EST" in winter, "EDT" in summer): batches that name
        # another abbreviation than the first's are read whole, as text.
        return _IB_ABBREVIATED.search(cells[index]) is None
    forms = (_NAIVE_ISO, _UNIX, _OFFSET_ISO)
    return any(re.match(form, cells[index]) for form in forms) or bool(
        _DAY_MONTH_TIME.match(cells[index].strip())
    )


TRIM_BATCHES = 32  # batches (of about 1 MB of text each) between two trims of the heap


class _Gathered:
    """A CSV's columns gathered batch by batch in the form they are checked in, so that the
    file's text is never held whole: a 350 MB file of 6.4 million bars was kept as Arrow
    text (its times as strings) beside the arrays made from it, and took 1.8 GB.

    Numbers become float64 arrays (an empty field NaN, as ``from_table`` reads it), and so
    do decimal-comma numbers (``comma``: "4500,25" read as text, as ``read_csv`` reads them
    whole); a time column of naive ISO times or Unix times its int64 values; the Date and
    Time columns of a split layout (``coded``) codes into the few dates and times they
    repeat (``parse_split`` reads them so). Times in other forms (with an offset, IB's,
    NinjaTrader's) are read batch by batch by ``parse_time_column``, as ``from_table`` reads
    the whole column, when every batch reads them alike (``parsed``: UTC or not, the zone
    they claim, the layout, the notes): they were held as text until the file was read,
    at about 5.5 bytes a byte of CSV. A batch that cannot be so read (times in another
    form after converted ones, a time Arrow cannot read, a decimal-comma number that is not
    one) makes ``add`` return False, and a blank row amid Excel's one-column times
    ``table`` None: the file is then read whole, as before, and refused or read as before.
    """

    def __init__(
        self,
        time_key: str | None,
        comma: list[str] | None = None,
        coded: list[str] | None = None,
        layout: Layout | None = None,
        date_order: DateOrder | None = None,
    ):
        self.time_key = time_key
        self.comma = frozenset(comma or ())
        self.coded = frozenset(coded or ())
        self.layout, self.date_order = layout, date_order
        # "iso", "unix", "day_month", "parsed" or "text", from the first batch
        self.time_form: str | None = None
        self.parsed: ParsedTimes | None = None
        self.pieces: dict[str, list[np.ndarray | pa.Array]] = {}
        self.blank: list[np.ndarray] = []

    def add(self, batch: pa.RecordBatch) -> bool:
        if batch.num_rows == 0:
            return True
        blank = _blank_rows(batch)
        converted = self._convert(batch, blank)
        if converted is None:
            return False
        self.blank.append(blank)
        for name, piece in converted.items():
            self.pieces.setdefault(name, []).append(piece)
        if len(self.blank) % TRIM_BATCHES == 0:
            trim_freed_memory()  # the text of the batches read: freed, kept by malloc
        return True

    def _convert(
        self, batch: pa.RecordBatch, blank: np.ndarray
    ) -> dict[str, np.ndarray | pa.Array] | None:
        out: dict[str, np.ndarray | pa.Array] = {}
        for name, column in zip(batch.schema.names, batch.columns, strict=True):
            if pa.types.is_floating(column.type):
                out[name] = column.to_numpy(zero_copy_only=False)
            elif name in self.comma:
                numbers = _comma_numbers(column)
                if numbers is None:
                    return None
                out[name] = numbers
            elif name in self.coded:
                out[name] = pc.dictionary_encode(column)
            elif name == self.time_key:
                times = self._times(column, blank)
                if times is None:
                    return None
                out[name] = times
            else:
                out[name] = column
        return out

    def _times(self, column: pa.Array, blank: np.ndarray) -> np.ndarray | pa.Array | None:
        if self.time_form == "day_month":
            return _day_month_parts(column, blank)
        if self.time_form == "parsed" or (
            self.time_form is None and self.layout is not None and self.layout.time != "timestamp"
        ):
            return self._parsed(column, blank)
        form = "text"
        if column.null_count == 0 and len(column):
            if pc.all(pc.match_substring_regex(column, _NAIVE_ISO)).as_py():
                form = "iso"
            elif pc.all(pc.match_substring_regex(column, _UNIX)).as_py():
                form = "unix"
            elif self.time_form is None and _DAY_MONTH_TIME.match(column[0].as_py().strip()):
                # As ``parse_timestamps`` chooses by the first time: Excel's "02.01.2024
                # 09:30", held as the few dates and times it repeats.
                self.time_form = "day_month"
                return _day_month_parts(column, blank)
        if self.time_form is None and form == "text" and self.layout is not None:
            return self._parsed(column, blank)
        if self.time_form is None:
            self.time_form = form
        if form != self.time_form:
            # Text after converted times needs them all as text; converted after text is
            # kept as text.
            return None if self.time_form != "text" else column
        try:
            if form == "iso":
                return pc.cast(column, pa.timestamp("ns")).to_numpy().view(np.int64)
            if form == "unix":
                whole = pc.replace_substring_regex(pc.utf8_trim_whitespace(column), r"\.0*$", "")
                return pc.cast(whole, pa.int64()).to_numpy()
        except pa.ArrowInvalid:
            return None  # read whole, where the reader names the line
        return column

    def _parsed(self, column: pa.Array, blank: np.ndarray) -> np.ndarray | None:
        """A batch's times as ``parse_time_column`` reads them, or None (the file is then
        read whole, and refused or read as before): a blank row (Excel's below the bars are
        dropped from the whole file), a time it refuses (named by the whole read), or
        times read unlike the first batch's."""
        assert self.layout is not None
        if blank.any() or not len(column):
            return None
        notes: list[Note] = []
        try:
            instants, utc, claimed, layout = parse_time_column(
                pa.chunked_array([column]), self.layout, notes, self.date_order
            )
        except Refusal:
            return None
        said = ParsedTimes(utc, claimed, layout.name, tuple(notes))
        if self.parsed is None:
            self.time_form, self.parsed = "parsed", said
        elif said != self.parsed:
            return None
        # A copy of its own: a view would keep the batch's Arrow buffers until the end.
        return np.array(instants, dtype=np.int64, copy=True)

    def table(self, schema: pa.Schema) -> tuple[pa.Table, np.ndarray] | None:
        """The gathered table and ``_blank_rows`` of it (None: to be read whole)."""
        blank = np.concatenate(self.blank) if self.blank else np.ones(0, dtype=bool)
        if self.time_form == "day_month" and blank.any():
            # Blank rows, of no time, are dropped only at the file's end (``_without_empty_
            # tail``); one amid the bars is refused by the whole read, naming its line.
            tail = int(np.argmin(blank[::-1])) if not blank.all() else blank.size
            if blank[: blank.size - tail].any():
                return None
        columns: dict[str, pa.Array | pa.ChunkedArray] = {}
        for name in schema.names:
            pieces = self.pieces.pop(name, [])
            if pieces and isinstance(pieces[0], np.ndarray):
                values = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
                del pieces  # the concatenated copy alone stays
                if name == self.time_key and self.time_form == "iso":
                    values = values.view("datetime64[ns]")
                columns[name] = pa.array(values)
                trim_freed_memory()  # the pieces' pages, before the next column's copy
            elif name == self.time_key and self.time_form == "day_month":
                parts = [
                    pa.chunked_array([p.field(k) for p in pieces]).unify_dictionaries()
                    for k in ("date", "time")
                ]
                del pieces
                columns[name] = pa.StructArray.from_arrays(
                    [p.combine_chunks() for p in parts], names=["date", "time"]
                )
            elif name in self.coded and pieces:
                # One dictionary for the whole column, its values in the order they first
                # appear (``parse_split`` names the first bad date by it).
                columns[name] = pa.chunked_array(pieces).unify_dictionaries()
            else:
                columns[name] = pa.chunked_array(pieces, type=schema.field(name).type)
        return pa.table(columns), blank


def _day_month_parts(column: pa.Array, blank: np.ndarray) -> pa.StructArray | None:
    """A batch's one-column dates and times (``_DAY_MONTH_TIME``) as ``parse_date_time``
    parts them, each coded into the values it repeats (a blank row's none); None where
    one is not such a time, refused by the whole read naming it."""
    parts = pc.extract_regex(column, _DAY_MONTH_TIME.pattern)
    unread = parts.is_null().to_numpy(zero_copy_only=False)
    if (unread & ~blank).any():
        return None
    return pa.StructArray.from_arrays(
        [pc.dictionary_encode(parts.field(k)) for k in ("date", "time")], names=["date", "time"]
    )


def _comma_numbers(column: pa.Array) -> np.ndarray | None:
    """A batch's decimal-comma numbers as float64, as ``read_csv`` reads the whole column;
    None where that read refuses, naming the line: a '.' (Excel's thousands, 1.260), a
    field that is not a number."""
    if pc.any(pc.match_substring(column, ".")).as_py():
        return None
    try:
        return _comma_floats(column).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid:
        return None


def _comma_floats(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Decimal-comma numbers ("4500,25") as float64, an empty field NaN as in a file of
    '.' numbers (refused by its line where it must not be empty): it was refused as
    "volume: Failed to parse string: '' as a scalar of type double", no line named."""
    trimmed = pc.utf8_trim_whitespace(column)
    empty = pc.equal(trimmed, "")
    # Spaces around a number, as a column aligned by its exporter has (";  490"), are
    # read as in a file of '.' numbers: they were refused in Arrow's words ("volume:
    # Failed to parse string: '  490' as a scalar of type double"), no line named.
    text = pc.if_else(empty, pa.scalar(None, pa.string()), pc.replace_substring(trimmed, ",", "."))
    return pc.cast(text, pa.float64())


def _unique_name(names: list[str], i: int) -> str:
    return f"{i}:{names[i]}"


def _unended(path: Path) -> bool:
    """Whether the file ends inside a line (no line end after its last): where a download
    or a copy that stopped leaves it."""
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - 1))
        return fh.read(1) not in (b"\n", b"\r")


_LINE_END = re.compile(rb"\r\n?|\n")


def _line_offset(path: Path, line: int, chunk_size: int = 1 << 20) -> int:
    """The byte offset at which physical line ``line`` (1-based) starts, its lines ended
    as Arrow and the line numbers read them: by ``\n``, ``\r\n`` or a lone ``\r`` (old Mac
    files). Counted by ``\n`` alone, a footer in a file of ``\r`` line ends was not found
    (its offset was the file's end), and the footer refused instead of left out."""
    seen, base, pending = 0, 0, False
    if line <= 1:
        return 0
    with path.open("rb") as fh:
        while chunk := fh.read(chunk_size):
            start = 0
            if pending:  # a \r ended the last chunk: a \n here belongs to it
                start = 1 if chunk[:1] == b"\n" else 0
                if seen == line - 1:
                    return base + start
                pending = False
            for end in _LINE_END.finditer(chunk, start):
                seen += 1
                if end.group() == b"\r" and end.end() == len(chunk):
                    pending = True
                    break
                if seen == line - 1:
                    return base + end.end()
            base += len(chunk)
    return base


def _is_header(text: str, header: str | None) -> bool:
    """Whether a line is ``header`` again: the same text, a byte-order mark before it
    allowed (two UTF-8 exports with one each, joined with `cat`)."""
    return header is not None and text.lstrip("\ufeff").rstrip("\r\n") == header


def data_lines(path: Path, shape: CsvShape) -> Iterator[tuple[int, str]]:
    """(physical line number, text) of each data row, skipping empty lines as Arrow does
    and the header's repeats as ``read_csv`` does."""
    header: str | None = None
    with path.open(encoding="utf-8-sig", newline="") as fh:
        for number, text in enumerate(fh, start=1):
            if number == shape.line:
                header = text.rstrip("\r\n")
            if number <= shape.line or text in ("\n", "\r\n", "\r", ""):
                continue
            if _is_header(text, header):
                continue
            yield number, text


def repeated_headers(path: Path, shape: CsvShape) -> list[tuple[int, int, int]]:
    """(line, byte offset, byte length) of each line after the header that is the header
    again, as where two exports were joined into one file."""
    if not shape.line:
        return []
    found: list[tuple[int, int, int]] = []
    header: str | None = None
    offset = 0
    with path.open(encoding="utf-8", newline="") as fh:
        for number, text in enumerate(fh, start=1):
            size = len(text.encode("utf-8"))
            if number == shape.line:
                header = text.lstrip("\ufeff").rstrip("\r\n")
            elif number > shape.line and _is_header(text, header):
                found.append((number, offset, size))
            offset += size
    return found


def line_of_row(path: Path, shape: CsvShape, row: int) -> int | None:
    """Physical line number of data row ``row`` (0-based)."""
    for k, (number, _) in enumerate(data_lines(path, shape)):
        if k == row:
            return number
    return None


def lines_of_rows(path: Path, shape: CsvShape, rows: list[int]) -> dict[int, int]:
    """Physical line numbers of several data rows, in one pass."""
    wanted = set(rows)
    found: dict[int, int] = {}
    if not wanted:
        return found
    last = max(wanted)
    for k, (number, _) in enumerate(data_lines(path, shape)):
        if k in wanted:
            found[k] = number
        if k >= last:
            break
    return found


def _comma_in(problem: Message) -> bool:
    """Whether ``find_bad_line``'s problem is a number it cannot read that holds a comma,
    which a decimal comma may explain."""
    if not isinstance(problem, tuple):
        return False
    key, values = problem
    numbers = key in ("import.refuse.not_number", "import.refuse.thousands")
    return numbers and _COMMA_NUMBER.match(str(values.get("cell", "")).strip("'")) is not None


_COMMA_NUMBER = re.compile(r"^\s*-?\d+,\d+\s*$")


#: Characters in a line beyond any bar's (a bar is under 200): damage, or not bars at all.
LONG_LINE = 10_000
# A short line this close to the end is the vendor's footer, not a cut bar.
FOOTER_LINES = 3


def find_bad_line(
    path: Path, shape: CsvShape, wanted: dict[str, int]
) -> tuple[int, Message] | None:
    """The first line with the wrong number of fields or an unreadable number, if any."""
    numeric = [(name, i) for name, i in wanted.items() if name in NUMERIC]
    lines = data_lines(path, shape)
    for number, text in lines:
        if len(text) > LONG_LINE:
            # Python's csv module stops at 128 KiB in one field: the import crashed.
            return number, (N_("import.refuse.long_line"), {"length": len(text.rstrip("\r\n"))})
        if text.count('"') % 2:
            # Arrow reads on to the next quote, lines later: the bars between were one field,
            # refused in Arrow's words ("Failed to parse string: '155\n18.03.2024;…'").
            return number, (N_("import.refuse.open_quote"), {})
        cells = next(csv.reader([text], delimiter=shape.delimiter), [])
        if shape.line and _other_header(cells, shape):
            # Two exports of other columns joined with `cat` (the header's exact repeats
            # are read around): it was refused as "open is not a number: 'Open'".
            values = {"header": shape.line, "names": ", ".join(c.strip() for c in cells)}
            return number, (N_("import.refuse.header_other"), values)
        if len(cells) != shape.width:
            # The last line or two of a download ("Downloaded from Barchart.com as of …").
            # A cut bar starts with its time; a footer with words.
            words = bool(cells) and not cells[0].strip()[:1].isdigit()
            after = sum(1 for _ in lines)
            if words and len(cells) < shape.width and after < FOOTER_LINES:
                return number, (N_("import.refuse.footer"), {"line": repr(text.strip()[:60])})
            if not words and len(cells) < shape.width and after == 0 and _unended(path):
                # A bar cut by a download that stopped (no line end after it): "expected 6
                # fields, found 2" did not say what happened to the file.
                counts = {"expected": shape.width, "found": len(cells)}
                return number, (N_("import.refuse.cut_line"), counts)
            return number, (
                N_("import.refuse.fields"),
                {"expected": shape.width, "found": len(cells)},
            )
        for name, i in numeric:
            cell = cells[i].strip()
            if cell == "":
                continue  # missing values are reported by the validation, with the others
            try:
                if shape.decimal_comma and "." in cell:  # 1.260 beside 4500,25: not 1.26
                    raise ValueError(cell)
                float(cell.replace(",", ".") if shape.decimal_comma else cell)
            except ValueError:
                # Told only "is not a number", the person could not see what to change.
                grouped = _THOUSANDS.match(cell) is not None
                key = N_("import.refuse.thousands") if grouped else N_("import.refuse.not_number")
                return number, (key, {"name": name, "cell": repr(cell)})
    return None


def _other_header(cells: list[str], shape: CsvShape) -> bool:
    """Whether a line of the file is a header of bars (one a layout knows, or with the
    header's own time column), not the file's."""
    if not cells or cells[0].strip()[:1].isdigit() or len(cells) < len(PRICES):
        return False
    names = [c.strip() for c in cells]
    times = [shape.names[i] for k, i in shape.indexes.items() if k in ("timestamp", "date")]
    try:
        detect_header_layout(names, None)
    except LayoutError:
        return bool(times) and column_key(times[0]) in {column_key(n) for n in names}
    return True


# Lines before an unended last line its last field is compared with (see ``cut_last_field``).
CUT_LINES = 100


def cut_last_field(path: Path, shape: CsvShape) -> tuple[str, int, int] | None:
    """(the last line's last field, that field's shortest length on the lines before, how
    many lines before were read) when the file may be cut inside its last number, else
    None.

    A download cut short ends inside a line: "…,21340,3" where the file had "…,21340,348"
    imported volume 3 without a word. Many CSV writers leave out the final line end, so that
    alone says nothing; but a file without one whose last field is shorter than on each of
    the ``CUT_LINES`` lines before it most likely lost digits, and is reported (not refused:
    a quiet bar's volume may be short).
    """
    size = path.stat().st_size
    with path.open("rb") as fh:
        fh.seek(max(0, size - 64 * 1024))
        tail = fh.read()
    if tail.endswith((b"\n", b"\r")):
        return None
    lines = [line for line in tail.decode("utf-8", "replace").splitlines() if line.strip()]
    if len(lines) < 3:
        return None
    # The first line read may be cut by the seek, or be the header: left out.
    *before, last = csv.reader(lines[-CUT_LINES - 2 :][1:], delimiter=shape.delimiter)
    if not last or len(before) < 2 or any(len(row) != len(last) for row in before):
        return None
    shortest = min(len(row[-1].strip()) for row in before)
    field = last[-1].strip()
    return (field, shortest, len(before)) if len(field) < shortest else None


# --- Parquet --------------------------------------------------------------------------


def read_parquet(
    path: Path,
    forced: str | None = None,
    columns: dict[str, str] | None = None,
    date_order: DateOrder | None = None,
) -> RawBars:
    try:
        schema = pq.read_schema(path)
        names = list(schema.names)
        if columns:
            layout = custom_layout(columns, names, "open")
            found = match_header(layout, names)
            assert found is not None
        else:
            layout, found = detect_header_layout(names, forced)
        zone = named_zone(names, found)
        wanted = {c: names[i] for c, i in found.items()}
        if layout.name == "databento":
            lower = {n.lower(): n for n in names}
            wanted |= {c: lower[c] for c in DATABENTO_OPTIONAL if c in lower}
        table = pq.read_table(path, columns=list(dict.fromkeys(wanted.values())))
    except LayoutError as exc:
        raise BadFile(exc.said) from None
    except (OSError, pa.ArrowException) as exc:
        raise BadFile((N_("import.refuse.not_parquet"), {"error": exc})) from exc
    table = pa.table({c: table.column(n) for c, n in wanted.items()})
    for name in (*NUMERIC, "rtype"):
        if name in table.column_names:
            column = table.column(name)
            if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
                raise BadFile(
                    (N_("import.refuse.not_numbers"), {"name": name, "type": column.type})
                )
            index = table.column_names.index(name)
            table = table.set_column(index, name, pc.cast(column, pa.float64()))
    raw = from_table(table, layout, date_order)
    raw.header_zone, raw.header_abbreviation = zone, named_abbreviation(names, found)
    return raw


# --- from an Arrow table to RawBars -----------------------------------------------------


@dataclass(frozen=True)
class ParsedTimes:
    """How ``parse_time_column`` read a batch's times, which every batch must share for
    their values to be those of the whole column (``_Gathered``)."""

    utc: bool
    claimed: str | None
    layout: str
    notes: tuple[Note, ...]


def parse_time_column(
    column: pa.ChunkedArray, layout: Layout, notes: list[Note], date_order: DateOrder | None
) -> tuple[np.ndarray, bool, str | None, Layout]:
    """A one-column time of ``layout`` -> (int64 ns, utc, the zone they claim, the layout
    they show: IB's header over ib_insync's ISO times is ib_insync's)."""
    if layout.time == "ib" and _ISO_DATE.match(str(column[0].as_py())):
        # ib_insync's util.df(bars).to_csv(): IB's columns, ISO times with their offset.
        layout = LAYOUTS["ib_insync"]
    if layout.time == "timestamp":
        return (*parse_timestamps(column, notes, date_order), layout)
    if layout.time == "compact":
        return parse_compact(column), False, None, layout
    if layout.time == "ib":
        return (*parse_ib(column, notes), layout)
    return (*parse_ts_event(column), layout)


def from_table(
    table: pa.Table,
    layout: Layout,
    date_order: DateOrder | None = None,
    parsed: ParsedTimes | None = None,
) -> RawBars:
    """``RawBars`` from a table whose columns carry canonical names (``parsed``: its time
    column read already, batch by batch, as ``_Gathered`` says)."""
    if table.num_rows == 0:
        raise BadFile((N_("import.refuse.no_bars"), {}))
    notes: list[Note] = []
    claimed: str | None = None
    key = "ts_event" if layout.time == "ts_event" else "timestamp"
    if layout.time == "timestamp" and "time" in table.column_names:
        key = "time"
    if parsed is not None:
        instants = table.column(key).to_numpy().astype(np.int64, copy=False)
        utc, claimed, layout = parsed.utc, parsed.claimed, LAYOUTS[parsed.layout]
        notes.extend(parsed.notes)
    elif layout.time == "split":
        dates, times = table.column("date"), table.column("time")
        instants, utc = parse_split(dates, times, date_order), False
    else:
        instants, utc, claimed, layout = parse_time_column(
            table.column(key), layout, notes, date_order
        )
    prices = {name: _floats(table.column(name)) for name in PRICES}
    if "volume" in table.column_names:
        prices["volume"] = _floats(table.column("volume"))
    elif set(UP_DOWN) <= set(table.column_names):
        up, down = (_floats(table.column(name)) for name in UP_DOWN)
        prices["volume"] = up + down
        notes.append((N_("import.note.up_down_volume"), {}))
    else:
        prices["volume"] = np.zeros(table.num_rows)
        ticks = layout.name == "metatrader"
        key = N_("import.note.tick_volume") if ticks else N_("import.note.no_volume")
        notes.append((key, {}))
    series, names = None, ()
    if layout.name == "databento":
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
    return RawBars(
        layout,
        instants,
        utc,
        series=series,
        series_names=names,
        notes=notes,
        claimed_zone=claimed,
        **prices,
    )


def _floats(column: pa.ChunkedArray) -> np.ndarray:
    return column.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)


# Unix time in seconds, milliseconds, microseconds or nanoseconds, told apart by size:
# 2001-09-09 is 1e9 s, so seconds stay below 1e11 until the year 5138.
_EPOCH_UNITS = (
    (1e11, 10**9, N_("import.note.unix_seconds")),
    (1e14, 10**6, N_("import.note.unix_milliseconds")),
    (1e17, 10**3, N_("import.note.unix_microseconds")),
)


def epoch_to_ns(values: np.ndarray, notes: list[Note]) -> np.ndarray:
    """Unix times of any unit -> int64 ns since the epoch (UTC)."""
    values = values.astype(np.int64, copy=False)
    top = float(np.abs(values).max()) if values.size else 0.0
    for limit, scale, note in _EPOCH_UNITS:
        if top < limit:
            notes.append((note, {}))
            return values * scale
    notes.append((N_("import.note.unix_nanoseconds"), {}))
    return values.copy()


def parse_timestamps(
    column: pa.ChunkedArray, notes: list[Note], date_order: DateOrder | None = None
) -> tuple[np.ndarray, bool, str | None]:
    """ISO timestamps or Unix times -> (int64 ns, utc, the zone they claim: see
    ``RawBars.claimed_zone``). ISO ones are all naive, or all carry an offset."""
    if pa.types.is_struct(column.type):  # gathered by ``_Gathered`` as Excel's dates, times
        dates, times = (pc.struct_field(column, [k]) for k in (0, 1))
        return parse_split(dates, times, date_order), False, None
    if pa.types.is_timestamp(column.type):
        utc = column.type.tz is not None
        ns = column.cast(pa.timestamp("ns", tz=column.type.tz)).to_numpy().view(np.int64)
        return ns, utc, None
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        return epoch_to_ns(column.to_numpy(zero_copy_only=False), notes), True, None
    if not pa.types.is_string(column.type) and not pa.types.is_large_string(column.type):
        raise BadFile((N_("import.refuse.not_times"), {"type": column.type}))
    # Unix time, also as a float column writes it ("1709506800.0": pandas does so once the
    # column held a missing value), which was "cannot read the timestamp".
    digits = pc.fill_null(pc.match_substring_regex(column, r"^\s*\d+(?:\.0*)?\s*$"), False)
    unix = digits.to_numpy(zero_copy_only=False)
    if bool(unix.all()):
        whole = pc.replace_substring_regex(pc.utf8_trim_whitespace(column), r"\.0*$", "")
        return epoch_to_ns(pc.cast(whole, pa.int64()).to_numpy(), notes), True, None
    if unix.size and unix[0] and len(column) > 1:
        # Unix time from the first bar on: the first time that is not one is named. It was
        # read as ISO and refused naming the first bar ("line 2: cannot read the timestamp
        # '1710712800'"), whatever line held the damage.
        row = int(np.flatnonzero(~unix)[0])
        raise BadRow(row, (N_("import.refuse.timestamp"), {"time": repr(column[row].as_py())}))
    first = (column[0].as_py() or "").strip()
    if _DAY_MONTH_TIME.match(first):  # Excel's "1/2/2024 9:30", "02.01.2024 09:30"
        return parse_date_time(column, date_order), False, None
    if _IB_TIME.match(first):
        return parse_ib(column, notes)
    abbreviated = _iso_abbreviated(column)
    if abbreviated is not None:
        return abbreviated
    column, day_end = _iso_day_ends(column)
    zoned = pc.fill_null(pc.match_substring_regex(column, _ZONE.pattern), False)
    zoned = zoned.to_numpy(zero_copy_only=False)
    utc = bool(zoned[0])
    if not bool(np.all(zoned == utc)):
        row = int(np.flatnonzero(zoned != utc)[0])
        key = N_("import.refuse.offset_lacks") if utc else N_("import.refuse.offset_has")
        raise BadRow(row, (key, {"time": repr(column[row].as_py())}))
    target = pa.timestamp("ns", tz="UTC" if utc else None)
    try:
        return pc.cast(column, target).to_numpy().view(np.int64) + day_end, utc, None
    except pa.ArrowInvalid:
        pass
    # Find the row Arrow choked on. pandas' ISO 8601 reader is as strict (a guessing parser
    # would read "01/02/2024" as either day first or month first) but marks each bad row.
    values = column.to_pandas()
    parsed = pd.to_datetime(values, format="ISO8601", errors="coerce", utc=utc)
    bad = np.flatnonzero(parsed.isna().to_numpy())
    if bad.size:
        time = {"time": repr(values.iloc[bad[0]])}
        raise BadRow(int(bad[0]), (N_("import.refuse.timestamp"), time))
    return parsed.to_numpy(dtype="datetime64[ns]").view(np.int64) + day_end, utc, None


# An ISO date and time written at its day's end, 24:00 (ISO 8601 allows it), with seconds
# and their fractions of zero and an offset if any: "2024-03-17 24:00:00", "…T24:00Z".
_ISO_DAY_END = r"^(\s*\d{4}-\d\d-\d\d[ T])24:00(:00(?:\.0+)?)?(\s*(?:Z|[+-]\d\d(?::?\d\d)?)?\s*)$"


def _iso_day_ends(column: pa.ChunkedArray) -> tuple[pa.ChunkedArray, np.ndarray | int]:
    """ISO times with each day's end (24:00) written as its 00:00, and the ns to add to
    each (a day where it was 24:00, else 0; 0 for all when none is): the next day's 00:00,
    as ``parse_split``
    reads a Time of 24:00. "2024-03-17 24:00:00" was refused as a timestamp that cannot
    be read, where the same bar in Date and Time columns was imported."""
    ends = pc.fill_null(pc.match_substring_regex(column, _ISO_DAY_END), False)
    if not pc.any(ends).as_py():
        return column, 0
    # RE2 numbers groups by one digit: \1 then "00:00".
    column = pc.replace_substring_regex(column, _ISO_DAY_END, r"\100:00\2\3")
    return column, ends.to_numpy(zero_copy_only=False).astype(np.int64) * _DAY_NS


# An ISO time followed by a zone's abbreviation: "2024-07-08 09:30:00 EST".
_ISO_ABBREVIATED = (
    r"^\s*(?P<time>\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?)\s+(?P<zone>[A-Z]{2,5})\s*$"
)


def _iso_abbreviated(column: pa.ChunkedArray) -> tuple[np.ndarray, bool, str | None] | None:
    """ISO times all naming one abbreviation ("2024-07-08 09:30:00 EST") -> naive int64 ns
    and the abbreviation, read as IB's are (``parse_ib``): only in the zone --timezone
    names. They were "cannot read the timestamp", which gave no way in. None otherwise."""
    parts = pc.extract_regex(column, _ISO_ABBREVIATED)
    if parts.null_count:
        return None
    times, zones = pc.struct_field(parts, [0]), pc.struct_field(parts, [1])
    zone = _one_clock(zones)
    if zone is None or zone in _UTC_NAMES:
        return None
    try:
        naive = pc.cast(times, pa.timestamp("ns")).to_numpy().view(np.int64)
    except pa.ArrowInvalid:
        return None
    return naive, False, zone


MONTH_FIRST = ("%m/%d/%Y", "01/31/2024, month first")
# Dates with the day and the month in either order: 01/02/2024 (US), 02.01.2024 or 2/1/2024
# (Europe), 02-01-2024 (the Netherlands), and Excel's two-digit years (1/2/24).
_DAY_MONTH = r"^(?P<a>\d{1,2})(?P<sep>[/.\-])(?P<b>\d{1,2})[/.\-](?P<year>\d{4}|\d{2})$"
# One column holding such a date and a time (Excel's CSV: "1/2/2024 9:30:00 AM").
_DAY_MONTH_TIME = re.compile(
    r"^\s*(?P<date>\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})|\d{1,2}\.\d{1,2}\.\d{4}|\d{1,2}-\d{1,2}-\d{4})"
    r"[ T]+"
    r"(?P<time>\d{1,2}:\d\d\S*(?:\s*[AaPp][Mm])?)\s*$"
)
# A time of day: 9:30, 09:30:00, 18:00:00.000, 9:30:00 AM.
_CLOCK = r"^(?P<clock>\d{1,2}:\d\d(?::\d\d)?)(?:\.\d+)?\s*(?P<half>[AaPp][Mm])?$"
# A bar follows the one before within this (a long weekend with a holiday): a longer pause
# is a hole worth naming.
LONGEST_PAUSE_NS = 5 * 86_400 * 10**9


def _date_format(first: str) -> tuple[str, str] | None:
    """strptime format and an example, from the first date in the file; None for a date
    whose day and month may come in either order (``_day_month_order`` reads them)."""
    if re.match(r"^\d{4}-\d{1,2}-\d{1,2}$", first):
        return "%Y-%m-%d", "2024-01-02"
    if re.match(r"^\d{4}/\d{1,2}/\d{1,2}$", first):
        return "%Y/%m/%d", "2024/01/02"
    if re.match(r"^\d{4}\.\d{1,2}\.\d{1,2}$", first):  # MetaTrader's
        return "%Y.%m.%d", "2024.01.02"
    if re.match(r"^\d{8}$", first):
        return "%Y%m%d", "20240102"
    return None


def _day_month_order(dates: pa.ChunkedArray, declared: DateOrder | None) -> tuple[str, str]:
    """Whether ``dd/dd/yyyy`` (``dd.dd.yyyy``, ``dd-dd-yyyy``, ``d/d/yy``) dates are month
    first (US) or day first (Europe): what the dates themselves say, else ``declared``
    (``--date-order``), else the order the form is written in by convention (dotted dates
    are day first), else ``BadFile`` asking for ``--date-order``.

    Only a field over 12 tells: 01/13/2024 is month first, 13/01/2024 day first. How the
    bars run from date to date does not: a file of first Fridays (01/06, 02/03, 03/03/2023)
    runs on by months under either order, and was read day first, its 6 January bars
    stored on 1 June. A declared order is refused only when a field over 12 contradicts it.
    """
    parts = pc.extract_regex(dates, _DAY_MONTH)
    valid = np.flatnonzero(parts.is_valid().to_numpy(zero_copy_only=False))
    if valid.size == 0:
        return MONTH_FIRST  # not such dates: refused by the reading, naming the first
    sep = pc.struct_field(parts, [1])[int(valid[0])].as_py()
    year = "%Y" if len(pc.struct_field(parts, [3])[int(valid[0])].as_py()) == 4 else "%y"
    formats: dict[DateOrder, tuple[str, str]] = {
        "month-first": (f"%m{sep}%d{sep}{year}", f"01{sep}31{sep}2024, month first"),
        "day-first": (f"%d{sep}%m{sep}{year}", f"31{sep}01{sep}2024, day first"),
    }
    first, second = (
        pc.cast(pc.struct_field(parts, [k]), pa.float64()).to_numpy(zero_copy_only=False)
        for k in (0, 2)
    )
    days_first, months_first = bool((first > 12).any()), bool((second > 12).any())
    if days_first and months_first:
        a = dates[int(np.flatnonzero(first > 12)[0])].as_py()
        b = dates[int(np.flatnonzero(second > 12)[0])].as_py()
        raise BadFile((N_("import.refuse.date_orders"), {"a": repr(a), "b": repr(b)}))
    if days_first or months_first:
        found: DateOrder = "day-first" if days_first else "month-first"
        if declared is not None and declared != found:
            shown = dates[int(np.flatnonzero((first > 12) | (second > 12))[0])].as_py()
            values = {"declared": declared, "date": repr(shown), "found": found}
            raise BadFile((N_("import.refuse.date_order_contradicts"), values))
        return formats[found]
    if declared is not None:
        return formats[declared]
    if bool((first[valid] == second[valid]).all()):
        return formats["month-first"]  # 01/01, 02/02: either order reads alike
    if sep == ".":
        return formats["day-first"]  # dotted dates are European by convention
    # Kibot writes MM/DD/YYYY, but a headerless Date,Time,OHLCV file is Kibot's only by its
    # shape: a European export looks the same, and 4-6 March read month first was stored
    # on 3 April, 3 May and 3 June. Such a file's order is asked for like any other.
    days = len(np.unique(dates.to_numpy(zero_copy_only=False)[valid]))
    key = N_("import.refuse.date_order") if days > 1 else N_("import.refuse.date_order_day")
    raise BadFile((key, {"date": repr(dates[int(valid[0])].as_py())}))


SPLIT_ROWS = 1 << 18  # rows parsed at a time: the text temporaries of these, not of all


def parse_split(
    dates: pa.ChunkedArray,
    times: pa.ChunkedArray,
    date_order: DateOrder | None = None,
) -> np.ndarray:
    """Date and Time columns -> naive int64 ns (``date_order``: see ``_day_month_order``).

    The columns may come as text or coded (``_Gathered``'s dictionaries): the choices made
    for the whole column (the dates' form and order, times written as digits alone, a
    12-hour clock) hold for its rows as for its distinct values, read from those; the rows
    are then read a million at a time."""
    first = _trimmed(dates.slice(0, 1))
    date_format, example = _date_format(first[0].as_py() if len(first) else "") or (
        _day_month_order(_trimmed(_distinct(dates)), date_order)
    )
    distinct_times = _trimmed(_distinct(times))
    width = _colon_width(distinct_times)
    half = pc.struct_field(pc.extract_regex(_with_colons(distinct_times, width), _CLOCK), [1])
    # Excel's US times ("9:30:00 AM") keep their half of the day.
    twelve = bool(pc.any(pc.not_equal(half, "")).as_py())
    instants = np.empty(len(dates), dtype=np.int64)
    for start in range(0, len(dates), SPLIT_ROWS):
        rows = slice(start, start + SPLIT_ROWS)
        part = (dates.slice(start, SPLIT_ROWS), times.slice(start, SPLIT_ROWS))
        instants[rows] = _split_rows(*part, start, width, twelve, (date_format, example))
    return instants


def _distinct(column: pa.ChunkedArray) -> pa.ChunkedArray | pa.Array:
    """A coded column's distinct values in the order they first appear; text as it is."""
    if pa.types.is_dictionary(column.type):
        return pc.unique(column).cast(pa.string())
    return column


def _trimmed(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    return pc.utf8_trim_whitespace(column.cast(pa.string()))


def _split_rows(
    dates: pa.ChunkedArray,
    times: pa.ChunkedArray,
    start: int,
    width: int | None,
    twelve: bool,
    date_format: tuple[str, str],
) -> np.ndarray:
    """``parse_split`` of rows from ``start`` on, with the whole columns' choices."""
    dates, times = _trimmed(dates), _with_colons(_trimmed(times), width)
    (date_form, example) = date_format
    # Whole minutes are all Barb keeps: drop fractions ("18:00:00.000"), then write "9:30"
    # and "09:30" as "09:30:00" so that one format reads every form.
    parts = pc.extract_regex(times, _CLOCK)
    clock, half = pc.struct_field(parts, [0]), pc.struct_field(parts, [1])
    clock = _with_seconds(clock)
    # A day's end written as 24:00 (ISO 8601's, and some vendors' last close of the day):
    # the next day's 00:00. It was refused as a date and time that cannot be read.
    day_end = pc.fill_null(pc.and_(pc.equal(clock, "24:00:00"), pc.equal(half, "")), False)
    clock = pc.if_else(day_end, "00:00:00", clock)
    time_format = "%H:%M:%S"
    if twelve:
        clock, time_format = pc.binary_join_element_wise(clock, half, " "), "%I:%M:%S %p"
    joined = pc.binary_join_element_wise(dates, clock, " ")
    parsed = pc.strptime(joined, format=f"{date_form} {time_format}", unit="ns", error_is_null=True)
    bad = np.flatnonzero(_unread(parsed, dates, date_form))
    if bad.size:
        row = int(bad[0])
        raise BadRow(
            start + row,
            (
                N_("import.refuse.date_time"),
                {
                    "date": repr(dates[row].as_py()),
                    "time": repr(times[row].as_py()),
                    "example": example,
                },
            ),
        )
    instants = parsed.to_numpy().view(np.int64)
    return instants + day_end.to_numpy(zero_copy_only=False) * _DAY_NS


_DAY_NS = 86_400 * 10**9


def _unread(
    parsed: pa.ChunkedArray | pa.Array, dates: pa.ChunkedArray | pa.Array, date_format: str
) -> np.ndarray:
    """Whether each row's time could not be read: Arrow's strptime left it null, or its
    date is no day of the calendar. Arrow reads 30.02.2024 as 1 March and 31/04/2024 as
    1 May: a typo in a date stored a day's bars silently on another day."""
    unread = parsed.is_null().to_numpy(zero_copy_only=False)
    distinct = pc.unique(dates).to_pylist()  # the file's days: a few thousand at most
    impossible = [d for d in distinct if d is not None and not _calendar_day(d, date_format)]
    if impossible:
        wrong = pc.is_in(dates, value_set=pa.array(impossible, pa.string()))
        unread = unread | wrong.to_numpy(zero_copy_only=False)
    return unread


def _calendar_day(text: str, date_format: str) -> bool:
    """Python's strptime refuses a day its month lacks, as Arrow's does not."""
    try:
        dt.datetime.strptime(text, date_format)
    except ValueError:
        return False
    return True


def _colon_width(times: pa.ChunkedArray | pa.Array) -> int | None:
    """4 when every time is written as up to 4 digits alone (CQG's ``0930``;
    TradeStation's times as numbers, ``930``, midnight ``0``): hours and minutes; 6 when
    every one is up to 6 (``093000``): hours, minutes and seconds; else None."""
    for width in (4, 6):
        if pc.all(pc.match_substring_regex(times, rf"^\d{{1,{width}}}$")).as_py():
            return width
    return None


def _with_colons(
    times: pa.ChunkedArray | pa.Array, width: int | None
) -> pa.ChunkedArray | pa.Array:
    """Times written as digits alone (``_colon_width``) as ``09:30`` and ``09:30:00``;
    others as they are. They were refused as times that cannot be read."""
    if width is None:
        return times
    padded = pc.utf8_lpad(times, width, "0")
    parts = [pc.utf8_slice_codeunits(padded, i, i + 2) for i in range(0, width, 2)]
    return pc.binary_join_element_wise(*parts, ":")


def _with_seconds(clock: pa.ChunkedArray) -> pa.ChunkedArray:
    """``9:30`` and ``09:30`` as ``9:30:00`` and ``09:30:00``: one format reads them all."""
    short = pc.less_equal(pc.utf8_length(clock), 5)
    return pc.if_else(short, pc.binary_join_element_wise(clock, ":00", ""), clock)


def parse_date_time(column: pa.ChunkedArray, date_order: DateOrder | None = None) -> np.ndarray:
    """One column of ``1/2/2024 9:30`` (or ``02.01.2024 09:30``, ``1/2/2024 9:30:00 AM``),
    as Excel saves a date-time cell -> naive int64 ns, its day and month ordered as
    ``parse_split`` orders them. It was refused as "cannot read the timestamp '03/03/2024
    18:00'" with no next step, where the same dates in a Date column were read."""
    text = column.cast(pa.string())
    parts = pc.extract_regex(text, _DAY_MONTH_TIME.pattern)
    bad = np.flatnonzero(parts.is_null().to_numpy(zero_copy_only=False))
    if bad.size:
        row = int(bad[0])
        raise BadRow(row, (N_("import.refuse.timestamp"), {"time": repr(text[row].as_py())}))
    return parse_split(pc.struct_field(parts, [0]), pc.struct_field(parts, [1]), date_order)


# An ISO date at the start of a time: "2024-03-03 17:00:00-06:00" (ib_insync's).
_ISO_DATE = re.compile(r"^\s*\d{4}-\d\d-\d\d")
# Interactive Brokers: "20240318 09:30:00 US/Eastern", "20240318  09:30:00", "20240318",
# and the API's UTC form "20240318-13:30:00".
_IB_TIME = re.compile(
    r"^\s*(?P<date>\d{8})(?:(?P<sep>\s+|-)(?P<time>\d{1,2}:\d\d(?::\d\d)?))?"
    r"(?:\s+(?P<zone>[A-Za-z][\w/+\-]*))?\s*$"
)
# A zone's abbreviation as older TWS versions name it ("EST", "CST", "MET"): either not a
# zone at all, or one of IANA's old fixed-offset or European entries. IB's "EST" holds New
# York's summer times too, which IANA's EST (UTC-5 all year) would store an hour late.
_ABBREVIATION = re.compile(r"^[A-Z]{2,5}$")
_UTC_NAMES = frozenset({"UTC", "GMT", "UCT", "Z"})
#: Where an abbreviation's times are most likely read, for the refusal's example.
ABBREVIATED_ZONES = {
    **dict.fromkeys(("EST", "EDT", "ET"), "America/New_York"),
    **dict.fromkeys(("CST", "CDT", "CT"), "America/Chicago"),
    **dict.fromkeys(("MST", "MDT"), "America/Denver"),
    **dict.fromkeys(("PST", "PDT"), "America/Los_Angeles"),
    **dict.fromkeys(("MET", "CET", "CEST", "MEST"), "Europe/Berlin"),
    **dict.fromkeys(("BST", "WET"), "Europe/London"),
    "JST": "Asia/Tokyo",
    "HKT": "Asia/Hong_Kong",
    **dict.fromkeys(("AEST", "AEDT"), "Australia/Sydney"),
}


def abbreviation_region(claimed: str) -> str | None:
    """The clock a file's abbreviation names ("EST", or "EST/EDT" for a file that spans a
    clock change), for the refusal's example and the check of --timezone; None if unknown."""
    regions = {ABBREVIATED_ZONES.get(name) for name in claimed.split("/")}
    return regions.pop() if len(regions) == 1 else None


def _one_clock(zones: pa.ChunkedArray) -> str | None:
    """The zone every time names ("US/Eastern", "EST"), or the abbreviations of one clock's
    winter and summer time in order of appearance ("EST/EDT"): older TWS writes the one in
    force at each bar, and a file spanning a clock change was refused as two zones, with
    --timezone too. None when the times name different zones."""
    names = pc.unique(zones).to_pylist()
    if len(names) == 1:
        return names[0]
    if not all(name and _ABBREVIATION.match(name) for name in names):
        return None
    joined = "/".join(names)
    return joined if abbreviation_region(joined) is not None else None


def parse_ib(column: pa.ChunkedArray, notes: list[Note]) -> tuple[np.ndarray, bool, str | None]:
    """Interactive Brokers' times -> (int64 ns, utc, the abbreviation they name, if any):
    UTC when they name their zone (any IANA name, the same on every bar), or are written
    in the API's UTC forms ("20240318-13:30:00", Unix seconds with ``formatDate=2``);
    naive otherwise (the zone is then found, or declared, as for any naive file). Times
    naming an abbreviation ("EST") are naive too: the importer reads them only in the
    zone ``--timezone`` names. A daily file (bare dates) is refused as daily."""
    text = column.cast(pa.string())
    # Unix seconds have ten digits; a daily file's 20240318 (eight) is a date.
    if bool(pc.all(pc.match_substring_regex(text, r"^\s*\d{9,}\s*$")).as_py()):
        seconds = pc.cast(pc.utf8_trim_whitespace(text), pa.int64())
        return epoch_to_ns(seconds.to_numpy(), notes), True, None
    parts = pc.extract_regex(text, _IB_TIME.pattern)
    bad = np.flatnonzero(parts.is_null().to_numpy(zero_copy_only=False))
    if bad.size:
        row = int(bad[0])
        raise BadRow(row, (N_("import.refuse.ib_time"), {"time": repr(text[row].as_py())}))
    dates, seps, times, zones = (pc.struct_field(parts, [k]) for k in range(4))
    zones = pc.if_else(pc.equal(seps, "-"), "UTC", zones)  # the API's UTC form
    zone = _one_clock(zones)
    if zone is None:
        first = zones[0].as_py()
        row = int(np.flatnonzero(pc.not_equal(zones, first).to_numpy(zero_copy_only=False))[0])
        values = {"time": repr(text[row].as_py()), "first": repr(text[0].as_py())}
        raise BadRow(row, (N_("import.refuse.ib_zones"), values))
    if not bool(pc.any(pc.not_equal(times, "")).as_py()):
        raise BadFile(_daily(dates[0].as_py()))  # the daily bars' dates, said as at once
    times = _with_seconds(times)
    joined = pc.binary_join_element_wise(dates, times, " ")
    parsed = pc.strptime(joined, format="%Y%m%d %H:%M:%S", unit="ns", error_is_null=True)
    bad = np.flatnonzero(_unread(parsed, dates, "%Y%m%d"))
    if bad.size:
        row = int(bad[0])
        raise BadRow(row, (N_("import.refuse.ib_time"), {"time": repr(text[row].as_py())}))
    naive = parsed.to_numpy().view(np.int64)
    if not zone:
        return naive, False, None
    if zone in _UTC_NAMES:
        notes.append((N_("import.note.named_zone"), {"zone": zone}))
        return naive.copy(), True, None
    if all(_ABBREVIATION.match(name) for name in zone.split("/")):
        return naive, False, zone
    try:
        tz = zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise BadRow(0, (N_("import.refuse.unknown_zone"), {"zone": repr(zone)})) from None
    local = pd.DatetimeIndex(naive.view("datetime64[ns]")).tz_localize(
        tz, ambiguous="NaT", nonexistent="NaT"
    )
    skipped = np.flatnonzero(local.isna())
    if skipped.size:
        row = int(skipped[0])
        time = str(pd.Timestamp(int(naive[row])))
        raise BadRow(row, (N_("import.refuse.clock_change"), {"time": time, "zone": zone}))
    notes.append((N_("import.note.named_zone"), {"zone": zone}))
    return local.tz_convert("UTC").asi8.copy(), True, None


def parse_compact(column: pa.ChunkedArray) -> np.ndarray:
    """NinjaTrader's ``yyyyMMdd HHmmss`` -> naive int64 ns."""
    text = pc.utf8_trim_whitespace(column.cast(pa.string()))
    parsed = pc.strptime(text, format="%Y%m%d %H%M%S", unit="ns", error_is_null=True)
    bad = np.flatnonzero(_unread(parsed, pc.utf8_slice_codeunits(text, 0, 8), "%Y%m%d"))
    if bad.size:
        row = int(bad[0])
        raise BadRow(row, (N_("import.refuse.compact_time"), {"time": repr(text[row].as_py())}))
    return parsed.to_numpy().view(np.int64)


def parse_ts_event(column: pa.ChunkedArray) -> tuple[np.ndarray, bool, str | None]:
    """Databento ``ts_event`` -> (int64 ns, utc, claimed zone): UTC nanoseconds as
    integers, ISO strings or timestamps. Times without a zone (a Parquet file written from
    a frame whose zone was dropped, an ISO string without an offset) come back naive,
    claiming UTC: the importer reads them as UTC only when the bars fit the exchange's
    hours so read (``importer._read_claimed_utc``), for a frame loses its zone as often
    after a conversion to New York time, which read as UTC stored every bar 5 hours early."""
    if pa.types.is_timestamp(column.type):
        if column.type.tz is None:
            return column.cast(pa.timestamp("ns")).to_numpy().view(np.int64), False, "UTC"
        return column.cast(pa.timestamp("ns", tz="UTC")).to_numpy().view(np.int64), True, None
    if pa.types.is_integer(column.type):
        return column.cast(pa.int64()).to_numpy().copy(), True, None
    digits = pc.fill_null(pc.match_substring_regex(column, r"^\d+$"), False)
    digits = digits.to_numpy(zero_copy_only=False)
    if bool(digits.all()):
        return pc.cast(column, pa.int64()).to_numpy().copy(), True, None
    instants, utc, _ = parse_timestamps(column, [])
    return instants, utc, None if utc else "UTC"


def check_rtype(table: pa.Table) -> None:
    """Databento record types other than one-minute bars are refused."""
    if "rtype" not in table.column_names:
        return
    rtype = table.column("rtype").to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(rtype != OHLCV_1M_RTYPE)
    if bad.size:
        raise BadRow(
            int(bad[0]),
            (N_("import.refuse.rtype"), {"rtype": f"{rtype[bad[0]]:g}", "ohlcv": OHLCV_1M_RTYPE}),
        )


__all__ = ["BadFile", "BadRow", "CsvShape", "RawBars", "Stamp"]
