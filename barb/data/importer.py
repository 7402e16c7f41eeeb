"""Import real bars from a vendor file into Barb's store, checking everything before writing.

``check_file`` reads one of the layouts in ``barb.data.layouts`` (plain or ``.gz``/``.zip``),
finds the bars' interval and clock (``barb.data.clock``), and builds the validation report
(``barb.data.validation``) and the stored form. ``import_file`` refuses a file with problems,
a file whose interval or time zone contradicts what was declared, and any write over existing
data that was not asked for (``replace``) or that disagrees with it (``append``); otherwise it
writes atomically and keeps the previous file for ``barb data restore``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gzip
import re
import shutil
import tempfile
import zipfile
import zoneinfo
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

import numpy as np
import pandas as pd

from barb.data import formats
from barb.data.clock import (
    DAY_NS,
    HOUR_NS,
    ClockReading,
    clear_margin,
    closed_bars,
    closed_reason,
    in_closed_hours,
    localize,
    opening_in_break,
    read_clock,
    split_zone,
    zone_message,
    zone_words,
)
from barb.data.formats import BadFile, BadRow, CsvShape, RawBars, abbreviation_region
from barb.data.layouts import (
    DATE_ORDERS,
    FORMATS,
    HEADER_FIXED,
    LAYOUTS,
    TITLE_WORDS,
    DateOrder,
    LayoutError,
    Stamp,
    parse_columns_option,
)
from barb.data.mapped import mapped_path, refresh_mapped
from barb.data.store import (
    DamagedData,
    DataMeta,
    data_path,
    make_meta,
    previous_path,
    read_bars,
    read_columns,
    read_meta,
    remove_stale_temporaries,
    stored_version,
    write_bars,
    write_lock,
)
from barb.data.validation import (
    Check,
    Finding,
    ImportReport,
    calendar_findings,
    collect,
    detect_interval,
    future_checks,
    hundredfold_prices,
    jump_checks,
    quote,
    row_checks,
    session_shares,
    show,
)
from barb.data.words import ENGLISH, Advice, ImportWords, Message, Note
from barb.errors import BarbError, DataError
from barb.i18n import N_, decimal
from barb.instruments import Instrument, load_instrument
from barb.process_memory import trim_freed_memory
from barb.sessions import minutes_of_day, trading_dates
from barb.settings import EngineSettings
from barb.timeframes import INTRADAY, TIMEFRAMES, case_ambiguity, resolve_timeframe

MINUTE_NS = 60 * 1_000_000_000
# "volumes": the file's volumes for the stored dates that have none (``_volumes_filled``).
Mode = Literal["new", "replace", "append", "volumes"]
# Where appended bars meet the stored ones, a move beyond this factor (20%) is refused:
# futures rarely gap that much between sessions, and a unit mix-up (×100) is far beyond it.
SEAM_JUMP = 1.2
# How far a first import's prices may stray from the instrument's known level (its YAML's
# approximate ``sample.anchors``) before it is refused as another instrument's or another
# unit's (``--any-level`` imports it anyway).
KNOWN_JUMP = 2.0


class ImportRefused(DataError):
    """The file was checked and refused; ``report`` says everything that was found, and
    this its first problem, in the report's language: "bad.csv, line 2: high 99 is below
    low 101." / «bad.csv, строка 2: high 99 ниже low 101.»."""

    def __init__(self, report: ImportReport, path: str):
        words = report.words
        first = min((f for c in report.errors for f in c.shown), key=lambda f: f.row)
        total = sum(c.count for c in report.errors)
        more = (
            words("import.more_problems", plural_of=total - 1, count=words.count(total - 1))
            if total > 1
            else ""
        )
        where = words("import.located", file=path, where=first.where(words))
        # DataError's own "file, line N: " is English; this one is said in the language.
        BarbError.__init__(self, f"{where}{first.message}{more}")
        self.path, self.line = path, first.line
        self.report = report


class Refused(DataError):
    """A file refused as a whole, said in ``words``' language and placed as ``DataError``
    places it: "bad.csv, line 2: expected 6 fields, found 5." / «bad.csv, строка 2:
    ожидалось полей: 6, найдено: 5.». The CLI's English is ``DataError``'s own."""

    def __init__(
        self,
        words: ImportWords,
        message: Message,
        *,
        path: str | None = None,
        line: int | None = None,
    ):
        where = ""
        if path and line is not None:
            where = words("import.located", file=path, where=words("import.line", line=line))
        elif path:
            where = f"{path}: "
        BarbError.__init__(self, f"{where}{words.say(message)}")
        self.path, self.line = path, line


class StoredChanged(DataError):
    """The stored data is no longer the one a plan was made against (``write_checked``'s
    ``expect``): its mode, said to the person, may now be wrong. Nothing was written."""


@dataclass
class CheckedFile:
    """A file read and validated; ``frame`` (the stored form) is None when it is refused."""

    report: ImportReport
    frame: pd.DataFrame | None
    instrument: Instrument
    name: str  # how the file is named in messages
    # Import prices far from the instrument's known level (a new contract, a split): said in
    # the note instead of refused (``_known_level``).
    any_level: bool = False


@dataclass(frozen=True)
class ImportResult:
    meta: DataMeta  # of the file now in place
    report: ImportReport
    added: int  # bars written (for --append: only the new ones)
    path: Path
    note: str = ""  # what the write changed that the person may not expect (``_level_note``)
    cleaned: str = ""  # the temporary files of killed writes it removed ('' when none)
    # The file it replaced is kept for `barb data restore`: not on a first import (nothing
    # to keep), nor over a damaged file; the bot said it was kept after every import.
    kept: bool = False


def parse_interval(text: str, words: ImportWords = ENGLISH) -> int:
    """``5m``, ``1h`` … -> minutes, through the one registry of timeframes, by the rule
    `from` follows: "1M", a month in TradingView and pandas, was read as 1-minute bars.

    >>> parse_interval("1H"), parse_interval("15min")
    (60, 15)
    """
    tf = resolve_timeframe(text)
    ambiguous = case_ambiguity(text)
    if ambiguous is not None and tf is not None:
        raise Refused(
            words,
            (
                N_("import.refuse.interval_case"),
                {"ambiguous": ambiguous, "minutes": tf.minutes, "name": tf.name},
            ),
        )
    if tf is None or tf.minutes is None:
        raise Refused(
            words,
            (
                N_("import.refuse.interval_unknown"),
                {"text": repr(text), "known": ", ".join(INTRADAY)},
            ),
        )
    return tf.minutes


def _check_zone(name: str, words: ImportWords = ENGLISH) -> None:
    """``Refused`` unless ``name`` is a time zone. A region alone (``America``, ``Europe``,
    ``Etc``: a half-typed America/Chicago) is a folder of the zone database, which zoneinfo
    opens and fails on with ``IsADirectoryError``: an unknown zone all the same."""
    base, _ = split_zone(name)  # "America/New_York+7": New York's clock moved by 7 hours
    try:
        zoneinfo.ZoneInfo(base)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise Refused(words, (N_("import.refuse.unknown_zone"), {"zone": repr(name)})) from None
    if base in FIXED_LINKS:
        values = {"zone": base, "region": FIXED_LINKS[base], "fixed": FIXED_NAMES[base]}
        raise Refused(words, (N_("import.refuse.fixed_zone"), values))


#: IANA names that look like a region's clock but are a fixed offset all year: "EST" is
#: UTC-5 even in July, when New York is at UTC-4, and --timezone EST stored summer bars an
#: hour late. Refused for the region's zone. HST stays: Hawaii keeps no summer time.
FIXED_LINKS = {"EST": "America/New_York", "MST": "America/Denver"}
#: The same offsets by names that say what they are, for times truly kept on them all year
#: (the refusal advised only the region's zone, which reads their summer bars an hour off).
FIXED_NAMES = {"EST": "Etc/GMT+5", "MST": "Etc/GMT+7"}


def _finder_litter(member: zipfile.ZipInfo) -> bool:
    """Folders, and what macOS Finder adds to every zip it makes (``__MACOSX/._name``
    resource forks, ``.DS_Store``): not files of bars."""
    name = Path(member.filename)
    return (
        member.is_dir()
        or name.parts[:1] == ("__MACOSX",)
        or name.name.startswith("._")
        or name.name == ".DS_Store"
    )


def _is_workbook(path: Path) -> bool:
    """An Excel workbook (.xlsx, a zip holding ``xl/workbook.xml``; or the old .xls): it
    was refused as "not UTF-8 text: is it a CSV or Parquet file?"."""
    with path.open("rb") as fh:
        head = fh.read(8)
    if head == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":  # the old .xls (OLE2)
        return True
    if not head.startswith(b"PK\x03\x04"):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return "xl/workbook.xml" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


#: Archives Barb does not unpack, by their first bytes: sent from a phone, a .rar or .7z
#: was read as text and refused as "not UTF-8 text", or with every layout Barb knows.
OTHER_ARCHIVES = {
    b"Rar!\x1a\x07": "RAR",
    b"7z\xbc\xaf\x27\x1c": "7-Zip",
    b"\x28\xb5\x2f\xfd": "Zstandard (.zst)",
    b"BZh": "bzip2",
    b"\xfd7zXZ\x00": "xz",
}


def _check_kind(path: Path, words: ImportWords, where: str) -> None:
    """``Refused`` for a file that is no file of bars Barb reads: an Excel workbook, or an
    archive of a kind it does not unpack."""
    if _is_workbook(path):
        raise Refused(words, (N_("import.refuse.workbook"), {}), path=where)
    with path.open("rb") as fh:
        head = fh.read(8)
    for magic, kind in OTHER_ARCHIVES.items():
        if head.startswith(magic):
            raise Refused(words, (N_("import.refuse.other_archive"), {"kind": kind}), path=where)


def _copy_at_most(src: BinaryIO, dst: BinaryIO, limit: int | None) -> bool:
    """Copy ``src`` to ``dst``; False (and the copy stopped) once over ``limit`` bytes."""
    copied = 0
    while chunk := src.read(1 << 20):
        copied += len(chunk)
        if limit is not None and copied > limit:
            return False
        dst.write(chunk)
    return True


@contextmanager
def unpacked(
    path: Path,
    words: ImportWords = ENGLISH,
    name: str | None = None,
    limit: int | None = None,
) -> Iterator[Path]:
    """The file itself, or the one file inside a ``.gz`` or ``.zip``, as a plain file
    (``name``: how refusals name it). Unpacked past ``limit`` bytes it is refused: a 20 MB
    upload of a gzip bomb unpacked gigabytes into the temporary directory (the disk the
    database and Redis write to) before anything looked at it."""
    where = name or str(path)
    suffix = path.suffix.lower()
    if suffix not in (".gz", ".zip"):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="barb-import-") as tmp:
        try:
            if suffix == ".gz":
                target = Path(tmp) / path.stem
                with gzip.open(path, "rb") as src, target.open("wb") as dst:
                    whole = _copy_at_most(src, dst, limit)
            else:
                with zipfile.ZipFile(path) as archive:
                    members = [m for m in archive.infolist() if not _finder_litter(m)]
                    if len(members) != 1:
                        names = ", ".join(m.filename for m in members) or words(
                            "import.refuse.nothing"
                        )
                        raise Refused(
                            words, (N_("import.refuse.archive"), {"names": names}), path=where
                        )
                    target = Path(tmp) / Path(members[0].filename).name
                    with archive.open(members[0]) as src, target.open("wb") as dst:
                        whole = _copy_at_most(src, dst, limit)
        except (OSError, EOFError, zipfile.BadZipFile) as exc:
            raise Refused(words, (N_("import.refuse.unpack"), {"error": exc}), path=where) from None
        if not whole:
            size = {"limit": round((limit or 0) / 1e6)}
            raise Refused(words, (N_("import.refuse.unpacked_large"), size), path=where)
        yield target


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@contextmanager
def utf8_text(path: Path, words: ImportWords, where: str) -> Iterator[tuple[Path, str | None]]:
    """The file as UTF-8, and the note on the encoding it was in, if not UTF-8: Excel's
    "Unicode Text" (and some platforms' exports) write UTF-16 with a byte-order mark, which
    was refused as "not UTF-8 text: is it a CSV or Parquet file?"; a Russian Excel saves
    "CSV" in Windows-1251, its header (Дата;Время;…) the file's only letters, refused
    asking to save it again as UTF-8. Lines stay where they were, so refusals name the
    file's own lines."""
    with path.open("rb") as fh:
        head = fh.read(2)
    encoding, note = "utf-16", N_("import.note.utf16")
    if head not in UTF16_BOMS:
        if not _cyrillic_header(path):
            yield path, None
            return
        encoding, note = "cp1251", N_("import.note.cp1251")
    with tempfile.TemporaryDirectory(prefix="barb-import-") as tmp:
        target = Path(tmp) / path.name
        try:
            with (
                path.open(encoding=encoding, newline="") as src,
                target.open("w", encoding="utf-8", newline="") as dst,
            ):
                head_text = src.read(4096)
                # Binary junk that happens to start with FF FE decodes too, to nothing
                # printable: still not text.
                if not all(c.isprintable() or c in "\t\r\n" for c in head_text):
                    raise UnicodeError("not text")
                dst.write(head_text)
                shutil.copyfileobj(src, dst, 1 << 20)
        except UnicodeError:
            raise Refused(words, (N_("import.refuse.not_utf8"), {}), path=where) from None
        yield target, note


def _cyrillic_header(path: Path) -> bool:
    """Whether the file is not UTF-8 but Windows-1251 (a Russian Excel's "CSV"), as far as
    its first and last 64 KiB tell: every word with a letter beyond ASCII is Cyrillic
    words (Дата;Время;…, a ticker «Фьючерс NQ», a footer «Загружено с Финам»), at least one
    of three letters or more, and no control bytes. A file of other letters (Latin-1's
    «Clôture» reads «Clфture» in Windows-1251: two alphabets in one word) is refused,
    asking for UTF-8 (``code_page``). Only a Cyrillic header was taken: Cyrillic on the
    bars' lines or in a footer was refused so."""
    size = path.stat().st_size
    with path.open("rb") as fh:
        head = fh.read(SAMPLE_BYTES)
        fh.seek(max(len(head), size - SAMPLE_BYTES))
        tail = fh.read()
    if _utf8(head, cut_end=len(head) == SAMPLE_BYTES) and _utf8(tail, cut_start=True):
        return False
    text = (head + b"\n" + tail).decode("cp1251", "replace")
    if "\ufffd" in text or any(ord(c) < 32 and c not in "\t\r\n" for c in text):
        return False
    foreign = [w for w in re.findall(r"\w+", text) if not w.isascii()]
    cyrillic = re.compile(r"[0-9_а-яА-ЯёЁ]+")
    if not all(cyrillic.fullmatch(w) for w in foreign):
        return False
    return any(len(re.sub(r"[0-9_]", "", w)) >= 3 for w in foreign)


#: Bytes read at each end of a file to tell its encoding.
SAMPLE_BYTES = 64 * 1024


def _utf8(data: bytes, cut_start: bool = False, cut_end: bool = False) -> bool:
    """Whether ``data`` is UTF-8, a character cut at a ``cut_start`` or ``cut_end`` allowed
    (the bytes were read from the middle of a file)."""
    if cut_start:
        data = data.lstrip(bytes(range(0x80, 0xC0)))  # continuation bytes of a cut character
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return cut_end and exc.reason == "unexpected end of data"
    return True


def _code_page_text(path: Path) -> bool:
    """Whether a file that is not UTF-8 reads as text in a one-byte code page: lines of
    printable characters, no control bytes. Excel on Windows saves "CSV" in the system's
    code page (a Russian header, Дата;Время;…, in Windows-1251), which was refused as "not
    UTF-8 text: is it a CSV or Parquet file?" though it was a CSV."""
    with path.open("rb") as fh:
        head = fh.read(64 * 1024)
    controls = set(range(32)) - {9, 10, 13}
    return b"\n" in head and not any(byte in controls or byte == 127 for byte in head)


def check_options(
    *,
    timezone: str | None = None,
    interval: str | None = None,
    fmt: str | None = None,
    columns: str | None = None,
    date_order: str | None = None,
    words: ImportWords = ENGLISH,
) -> tuple[int | None, dict[str, str] | None]:
    """The declared options checked before any file is read: the interval in minutes and
    the ``--columns`` mapping, or ``Refused`` naming the value that is not one
    (``interval="5m"`` -> ``(5, None)``; ``timezone="Asia/Dubay"`` is refused)."""
    if fmt is not None and fmt not in FORMATS:
        raise Refused(
            words, (N_("import.refuse.format"), {"format": repr(fmt), "known": ", ".join(FORMATS)})
        )
    if timezone is not None:
        _check_zone(timezone, words)
    if date_order is not None and date_order not in DATE_ORDERS:
        values = {"value": repr(date_order), "known": " or ".join(DATE_ORDERS)}
        raise Refused(words, (N_("import.refuse.date_order_value"), values))
    declared_interval = parse_interval(interval, words) if interval is not None else None
    try:
        mapping = parse_columns_option(columns) if columns else None
    except LayoutError as exc:
        raise Refused(words, exc.said) from None
    return declared_interval, mapping


def check_file(
    path: Path | str,
    symbol: str,
    settings: EngineSettings | None = None,
    *,
    timezone: str | None = None,
    interval: str | None = None,
    stamp: Stamp | None = None,
    fmt: str | None = None,
    columns: str | None = None,
    date_order: DateOrder | None = None,
    progress: bool = False,
    name: str | None = None,
    lang: str = "en",
    advice: Advice = "command",
    unpacked_limit: int | None = None,
    any_level: bool = False,
) -> CheckedFile:
    """Read and validate ``path`` as bars of ``symbol``; nothing is written.

    Problems with rows go into the report (the file is then refused by ``import_file``);
    a file that cannot be read, or whose interval or zone contradicts what was declared,
    raises ``DataError``. The report and the refusals are said in ``lang`` (the bot's
    upload passes the admin's), advising options as ``advice`` says they are given. A
    ``.gz`` or ``.zip`` that unpacks to over ``unpacked_limit`` bytes is refused.
    """
    settings = settings or EngineSettings()
    path = Path(path)
    where = name or str(path)
    words = ImportWords(lang, advice)
    instrument = load_instrument(symbol, settings)
    declared_interval, mapping = check_options(
        timezone=timezone,
        interval=interval,
        fmt=fmt,
        columns=columns,
        date_order=date_order,
        words=words,
    )
    if not path.is_file():
        raise Refused(words, (N_("import.refuse.no_file"), {}), path=where)
    if path.stat().st_size == 0:
        raise Refused(words, (N_("import.refuse.empty"), {}), path=where)
    _check_kind(path, words, where)

    with unpacked(path, words, where, unpacked_limit) as packed:
        if packed != path:  # a zipped workbook was refused as "not UTF-8 text"
            _check_kind(packed, words, where)
        with utf8_text(packed, words, where) as (inner, encoding):
            shape: CsvShape | None = None
            try:
                if fmt == "parquet" or (fmt is None and formats.is_parquet(inner)):
                    _check_memory(inner, READ_FACTOR["parquet"], words, where)
                    raw = formats.read_parquet(inner, None, mapping, date_order)
                else:
                    shape = formats.read_csv_shape(inner, fmt, mapping)
                    numbers = formats.read_as_numbers(inner, shape)
                    factor = READ_FACTOR["numbers" if numbers else "text"]
                    _check_memory(inner, factor, words, where)
                    raw = formats.read_csv(inner, shape, progress, date_order)
                    if encoding:
                        raw.notes.append((encoding, {}))
                checked = _check_raw(
                    raw, instrument, where, timezone, declared_interval, stamp, words, any_level
                )
                checked.report.file = name or path.name
                checked.report.file_kind = "CSV" if shape else "Parquet"
                checked.any_level = any_level
            except BadFile as exc:
                raise Refused(words, exc.said, path=where, line=exc.line) from None
            except UnicodeDecodeError:
                key = (
                    N_("import.refuse.code_page")
                    if _code_page_text(inner)
                    else N_("import.refuse.not_utf8")
                )
                raise Refused(words, (key, {}), path=where) from None
            except BadRow as exc:
                line = formats.line_of_row(inner, shape, exc.row) if shape else None
                prefix = "" if shape else words("import.row", row=exc.row + 1) + ": "
                said = str(words.say(exc.said))
                raise Refused(words, prefix + said, path=where, line=line) from None
            if shape is not None:
                _check_cut(checked.report, inner, shape)
                _name_lines(checked.report, inner, shape)
    # The check's temporary arrays, freed, stay with malloc otherwise: the bot checks an
    # upload in its own process, which then kept them for as long as it ran.
    trim_freed_memory()
    return checked


# Memory an import takes per byte of the (unpacked) file it reads, over the process's own,
# measured with bench/import_memory.py and the same bars in other layouts (docs/benchmarks.md,
# "Import memory"): the bars' arrays, the stored frame and the largest step's temporaries.
# A CSV read as numbers and codes (``formats.read_as_numbers``) peaked at 1.96-1.99 per
# byte on 350 MB and 2.13-2.30 on 118 MB for one naive ISO time column; at 2.23-2.37 on
# 330 MB and 2.28-2.53 on 115 MB for Date and Time columns, decimal commas, Excel's
# one-column dates ("Import memory by layout"; they took 3.3-4.8, held as text while read).
# A file still held as text (times with an offset, IB's) takes more. Parquet is smaller on
# disk than its bars, so its factor is larger.
READ_FACTOR = {"numbers": 2.75, "text": 5.5, "parquet": 25.0}


def available_memory() -> int | None:
    """Bytes of memory the system can give without swapping (Linux's MemAvailable), or None
    where it does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _check_memory(path: Path, factor: float, words: ImportWords, where: str) -> None:
    """``Refused`` when reading the file would need more memory than the system has free:
    a 2 GB file was read whole (about 8.5 GB resident) until the kernel killed the import,
    and the person read only "Killed". Nothing is read or written; the way is to import it
    in parts."""
    free = available_memory()
    if free is None:
        return
    size = path.stat().st_size
    need = round(size * factor)
    if need <= free:
        return
    values = {
        "size": words.count(round(size / 1e6)),
        "need": words.count(round(need / 1e6)),
        "free": words.count(round(free / 1e6)),
    }
    raise Refused(words, (N_("import.refuse.memory"), values), path=where)


def _check_cut(report: ImportReport, path: Path, shape: CsvShape) -> None:
    """The file's last line is reported when the file looks cut inside its last number
    (``formats.cut_last_field``). What follows is what happens to the file: a refused file
    was told "The bar is imported as written" under "Not imported", and a field cut to
    nothing read "its volume  is shorter"."""
    cut = formats.cut_last_field(path, shape)
    if cut is None:
        return
    field, shortest, lines = cut
    words = report.words
    then = words(N_("import.cut_then_imported") if report.ok else N_("import.cut_then_refused"))
    if field:
        digits = words("import.cut_digits", plural_of=shortest, digits=words.count(shortest))
        message = words(
            "import.cut_last_line",
            column=shape.names[-1],
            value=field,
            digits=digits,
            lines=lines,
            plural_of=lines,  # «в каждой из 21 строки»
            then=then,
        )
    else:
        message = words(
            "import.cut_last_line_empty",
            column=shape.names[-1],
            lines=lines,
            then=then,
            plural_of=lines,
        )
    finding = Finding(row=report.rows - 1, message=message)
    report.warnings.append(Check(name="cut last line", count=1, shown=[finding]))


def _name_lines(report: ImportReport, path: Path, shape: CsvShape) -> None:
    findings = [f for c in (*report.errors, *report.warnings) for f in c.shown]
    lines = formats.lines_of_rows(path, shape, [f.row for f in findings])
    for finding in findings:
        finding.line = lines.get(finding.row)


def _check_raw(
    raw: RawBars,
    instrument: Instrument,
    name: str,
    timezone: str | None,
    declared_interval: int | None,
    declared_stamp: Stamp | None,
    words: ImportWords,
    any_level: bool = False,
) -> CheckedFile:
    _check_series(raw)
    _check_half_days(raw)
    declared_zone = timezone
    timezone = _header_timezone(raw, timezone)
    rows = len(raw)  # the file's: the report names its last line by it
    raw, declared_stamp = _last_second_stamps(raw, declared_stamp)
    _check_sub_minute(raw)
    raw, sorted_note = _in_time_order(raw)
    report = ImportReport(
        file=name,
        layout=words(TITLE_WORDS[raw.layout.name]),
        layout_name=raw.layout.name,
        rows=rows,
        notes=[words.note(note) for note in raw.notes],
        language=words.language,
        advice=words.advice,
    )
    report.errors = collect(raw, row_checks(raw, words))
    if report.errors:
        if report.count("duplicates") and not raw.utc:
            _check_clock_change_repeats(raw, timezone or instrument.timezone)
        return CheckedFile(report, None, instrument, name)
    # Prices in another unit: refused as the level check refuses them, and imported as
    # written with the same --any-level (it had no way past it, for prices that are right).
    cents = hundredfold_prices(raw, instrument.tick_size)
    if cents is not None and not any_level:
        raise BadFile(cents)
    if cents is not None:
        report.notes.append(words.note((N_("import.note.cents_kept"), cents[1])))

    interval = declared_interval or 1
    found = detect_interval(raw.instants) or interval
    lengths = sorted({tf.minutes for tf in TIMEFRAMES.values() if tf.minutes is not None})
    if found not in lengths:
        raise BadFile(
            (
                N_("import.refuse.interval_odd"),
                {"found": found, "lengths": ", ".join(map(str, lengths))},
            )
        )
    if found != interval:
        if declared_interval is None:
            raise BadFile((N_("import.refuse.interval_found"), {"found": found}))
        raise BadFile(
            (N_("import.refuse.interval_contradicts"), {"declared": interval, "found": found})
        )
    report.interval_minutes = interval
    if declared_zone is None:
        _check_header_offset(raw, instrument, interval, declared_stamp)

    clock = _read_clock(raw, instrument, interval, timezone, declared_stamp, report)
    report.timezone, report.stamp, report.clock_note = clock.zone, clock.stamp, clock.note
    instants = raw.instants - interval * MINUTE_NS if clock.stamp == "close" else raw.instants
    try:
        wall = to_wall_clock(instants, raw.utc, clock.zone, instrument.timezone)
    except BadRow as exc:
        raise BadRow(raw.file_row(exc.row), exc.said) from None
    wall = _opening_in_break(wall, instrument, interval, report)
    timestamp = wall.view("datetime64[ns]")
    tdate = trading_dates(timestamp, instrument.trading_day_start_minute)
    minute = minutes_of_day(timestamp)
    report.first_date = pd.Timestamp(tdate[0]).date()
    report.last_date = pd.Timestamp(tdate[-1]).date()
    report.trading_dates = len(np.unique(tdate))
    report.sessions = session_shares(minute, instrument)
    schedule = _schedule_dates(instrument, report)
    if schedule is not None:
        calendar_findings(report, wall, tdate, schedule, interval)
    # Bars when the exchange is shut would be filed under a trading date they do not belong
    # to (a Saturday bar makes a phantom day): refused, each named by its line.
    shut = in_closed_hours(wall, instrument, step=interval * MINUTE_NS)
    if shut.any():
        report.errors = collect(
            raw,
            [
                (
                    "bars in the exchange's closed hours",
                    shut,
                    lambda i: closed_reason(wall[i], instrument, words),
                )
            ],
        )
        return CheckedFile(report, None, instrument, name)
    if sorted_note is not None:  # said once nothing else is wrong: only then is it safe
        report.notes.append(words.note(sorted_note))
    now = pd.Timestamp.now(tz=instrument.timezone).tz_localize(None).value
    report.warnings = collect(
        raw,
        jump_checks(raw, tdate, interval, words)
        + future_checks(raw, wall, now, instrument.timezone, words),
    )
    frame = pd.DataFrame(
        {
            "timestamp": timestamp,
            "open": raw.open,
            "high": raw.high,
            "low": raw.low,
            "close": raw.close,
            "volume": raw.volume.astype(np.int64),
            "trading_date": tdate,
            "minute": minute,
        },
        copy=False,  # no second copy of millions of rows
    )
    return CheckedFile(report, frame, instrument, name)


def _opening_in_break(
    wall: np.ndarray, instrument: Instrument, interval: int, report: ImportReport
) -> np.ndarray:
    """``wall`` with each bar that opens in the daily break but reaches past it (hourly bars
    on the half hour: 17:30-18:30) stored where its trades start (18:00), said in the
    report; as it is otherwise, or when so moved two bars would meet (refused then as bars
    in closed hours)."""
    moved = opening_in_break(wall, instrument, interval * MINUTE_NS)
    if moved is wall or not bool((np.diff(moved) > 0).all()):
        return wall
    first = int(np.flatnonzero(moved != wall)[0])
    report.notes.append(
        report.words(
            "import.note.opening_in_break",
            plural_of=int((moved != wall).sum()),
            count=report.words.count(int((moved != wall).sum())),
            time=show(wall[first], False),
            start=show(moved[first], False),
        )
    )
    return moved


def _header_timezone(raw: RawBars, timezone: str | None) -> str | None:
    """The zone to read the file's times in: the one its header names ("Time (UTC)",
    "Gmt time"), said in the report, as if declared with ``--timezone``; ``--timezone``'s
    when it names another (a header may be wrong: the refusal of times that do not fit it
    advises --timezone), said too. Times that carry their own offsets keep them."""
    named = raw.header_zone
    if named is None or raw.utc:
        return timezone
    if timezone is not None and timezone != named:
        values = {"named": named, "declared": timezone}
        raw.notes.append((N_("import.note.header_zone_declared"), values))
        return timezone
    raw.notes.append((N_("import.note.header_zone"), {"zone": named}))
    return named


def _check_header_offset(
    raw: RawBars, instrument: Instrument, interval: int, stamp: Stamp | None
) -> None:
    """``BadFile`` when the header names its times' zone by an abbreviation ("Time (EST)")
    and they keep the abbreviation's fixed offset all year (``HEADER_FIXED``), not the
    region's clock it is read as: read as New York time, such summer bars fall in the daily
    break, and the refusal advised America/Chicago (UTC-5 only in summer: its winter bars
    would be stored an hour late). It names the fixed zone, Etc/GMT+5."""
    word = raw.header_abbreviation
    if word is None or raw.header_zone is None or raw.utc:
        return
    fixed = HEADER_FIXED[word.lower()]
    region = closed_bars(raw, instrument, interval, raw.header_zone, stamp)
    if region - closed_bars(raw, instrument, interval, fixed, stamp) < clear_margin(raw):
        return
    hours = int(zoneinfo.ZoneInfo(fixed).utcoffset(None).total_seconds()) // 3600
    values = {
        "word": word,
        "zone": zone_message(raw.header_zone),
        "bars": region,
        "offset": f"UTC{hours:+d}".replace("-", "−"),
        "fixed": fixed,
    }
    raise BadFile((N_("import.refuse.header_fixed_offset"), values))


SECOND_NS = 1_000_000_000


def _last_second_stamps(raw: RawBars, declared: Stamp | None) -> tuple[RawBars, Stamp | None]:
    """The bars and the stamp to read them with, for a file whose every time is at 59
    seconds (18:00:59, 09:30:59.999): each is its bar's last second, so they are read as
    bar-close stamps one second early (18:00:59 -> the close at 18:01, the bar opening at
    18:00), with a note saying so; with ``--stamp open``, as the minute they fall in. Such
    a file was refused with each of its bars "not on a whole minute". Other files are
    returned as they are."""
    into = raw.instants % MINUTE_NS
    if len(into) == 0 or not bool((into >= 59 * SECOND_NS).all()):
        return raw, declared
    first = show(raw.instants[0], raw.utc)
    if declared == "open":
        instants, stamp = raw.instants - into, declared
        note = (N_("import.note.last_second_open"), {"time": first})
    else:
        instants, stamp = raw.instants + (MINUTE_NS - into), "close"
        shown = show(instants[0], raw.utc)
        note = (N_("import.note.last_second"), {"time": first, "close": shown})
    return dataclasses.replace(raw, instants=instants, notes=[*raw.notes, note]), stamp


def _check_sub_minute(raw: RawBars) -> None:
    """``BadFile`` for a file of bars shorter than a minute (1-second bars) or of trades
    (ticks): its times are under a minute apart, most inside a minute. Each bar was
    refused as "not on a whole minute", up to 19,999 of them, without saying what Barb
    takes instead. Minute bars stamped at 30 seconds are left to that check."""
    off = np.flatnonzero(raw.instants % MINUTE_NS)
    if len(off) * 2 <= len(raw):
        return
    sample = raw.instants[: 1 << 16]  # enough to tell, and cheap
    distinct = np.unique(sample)
    steps = np.diff(distinct)
    step = int(np.median(steps)) if len(steps) else MINUTE_NS
    if step >= MINUTE_NS:
        return
    first = show(raw.instants[off[0]], raw.utc)
    # Trades share a time where several fall in one second; bars never do.
    whole = step % SECOND_NS == 0 and len(distinct) == len(sample)
    if whole and not (raw.instants % SECOND_NS).any():
        raise BadFile((N_("import.refuse.seconds"), {"seconds": step // SECOND_NS, "time": first}))
    raise BadFile((N_("import.refuse.ticks"), {"time": first}))


def _read_clock(
    raw: RawBars,
    instrument: Instrument,
    interval: int,
    timezone: str | None,
    stamp: Stamp | None,
    report: ImportReport,
) -> ClockReading:
    """``read_clock``, for a file that names a zone Barb cannot take as it stands
    (``RawBars.claimed_zone``) too.

    IB's "EST" was read as IANA's EST, UTC-5 all year: summer bars stored an hour late.
    An abbreviation is read only in the zone ``--timezone`` names ("EST" as
    America/New_York), and refused without it. Databento's ts_event without a zone was read
    as UTC: a frame converted to New York time and stripped of its zone was stored 5 hours
    early. It is read in the zone ``--timezone`` names; without it, as UTC when the bars so
    read fit the exchange's hours (its daily break, or its session's bounds), and refused
    otherwise, naming the zone they fit when one does.
    """
    words, claimed = report.words, raw.claimed_zone
    if claimed is None:
        return read_clock(raw, instrument, interval, timezone, stamp, words)
    if timezone is not None:
        _check_abbreviation_zone(raw, claimed, timezone)
        clock = read_clock(raw, instrument, interval, timezone, stamp, words)
        key = (
            N_("import.note.ts_event_declared")
            if raw.layout.time == "ts_event"
            else N_("import.note.abbreviation_declared")
        )
        report.notes.append(words(key, claimed=claimed, zone=zone_words(timezone, words)))
        return clock
    if raw.layout.time != "ts_event":
        example = abbreviation_region(claimed) or _zone_link(claimed) or "America/New_York"
        named = {"zone": claimed, "example": example}
        raise BadFile((N_("import.refuse.zone_abbreviation"), named))
    try:
        clock = read_clock(raw, instrument, interval, None, stamp, words, home_zone="UTC")
    except BadFile:
        clock = None
    if clock is not None and clock.zone == "UTC" and clock.confirmed:
        report.notes.append(words("import.note.ts_event_utc", symbol=instrument.symbol))
        return clock
    fits: Message = ""
    if clock is not None and clock.confirmed:
        fits = (N_("import.refuse.ts_event_fits"), {"zone": zone_message(clock.zone)})
    raise BadFile((N_("import.refuse.ts_event_zone"), {"symbol": instrument.symbol, "fits": fits}))


def _zone_link(name: str) -> str | None:
    """``name`` when IANA keeps it as a region's zone with its own clock changes ("NZ" for
    Pacific/Auckland, "GB"): the refusal's example, not New York's. None otherwise."""
    try:
        zone = zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return None
    jan, jul = (dt.datetime(2024, month, 1, tzinfo=zone).utcoffset() for month in (1, 7))
    return name if jan != jul else None


def _check_abbreviation_zone(raw: RawBars, claimed: str, timezone: str) -> None:
    """``BadFile`` when ``--timezone`` keeps other UTC offsets on the file's dates than the
    clock its abbreviation names: "EST" (New York's, as IB writes it all year) read with
    --timezone America/Chicago stored a July cash session an hour late, as declared.

    ``claimed`` is the file's abbreviation ("EST", "EST/EDT": ``abbreviation_region`` gives
    its clock); names Barb does not know are left to the person's ``timezone``.
    """
    region = abbreviation_region(claimed)
    if region is None or raw.layout.time == "ts_event":
        return
    days = pd.DatetimeIndex(np.unique(raw.instants // DAY_NS * DAY_NS).view("datetime64[ns]"))
    noon = days + pd.Timedelta(hours=12)
    theirs = noon.tz_localize(region).tz_convert("UTC").asi8
    declared = localize(noon, timezone).tz_convert("UTC").asi8
    if not np.array_equal(theirs, declared):
        values = {
            "claimed": claimed,
            "zone": zone_message(region),
            "declared": timezone,
            "region": region,
        }
        raise BadFile((N_("import.refuse.zone_abbreviation_conflict"), values))


SHOWN_JUMPS = 20  # jumps back looked at: one without a repeat is enough


def _check_half_days(raw: RawBars) -> None:
    """``BadRow`` when the file's times look like 12-hour times without AM or PM.

    Excel shows "1:30" for 13:30 under a custom format without AM/PM: a cash-session
    file's afternoon was stored at 01:00-03:59 (sorted as "safe"), a 24-hour file refused
    as thousands of "pasted" repeats. Told by hours that never pass 12 and a day whose
    times go back from 12:xx to a 1:xx that is not a repeat of an earlier bar.
    """
    t = raw.instants
    if raw.utc or len(t) < 2:
        return
    hour = (t // HOUR_NS) % 24
    if int(hour.max()) > 12:
        return
    day = t // DAY_NS
    back = np.flatnonzero(
        (np.diff(t) < 0) & (day[1:] == day[:-1]) & (hour[:-1] == 12) & (hour[1:] == 1)
    )
    columns = (raw.open, raw.high, raw.low, raw.close, raw.volume)
    for i in back[:SHOWN_JUMPS] + 1:
        earlier = np.flatnonzero(t[:i] == t[i])
        if any(all(c[j] == c[i] for c in columns) for j in earlier):
            continue  # a bar repeated by two exports pasted together
        time = {"time": show(t[i], False), "before": show(t[i - 1], False)}
        raise BadRow(int(i), (N_("import.refuse.no_am_pm"), time))
    _check_afternoon_gap(t, hour, day)


def _check_afternoon_gap(t: np.ndarray, hour: np.ndarray, day: np.ndarray) -> None:
    """``BadRow`` when, in time order, a day of hours never over 12 starts at 1:xx, ends
    at 11:xx or 12:xx, and pauses three hours or more after a bar before 5:00: a cash
    session's afternoon (1:00-3:59) written without its PM.

    The file-order check misses it when the file runs newest first (1:00 is followed by
    12:59) or lacks the 12:xx hour (11:59 is followed by 1:00): both stored 13:00-15:59 at
    01:00-03:59, "sorted by time, which is safe".
    """
    order = np.argsort(t, kind="stable")
    st, sh, sd = t[order], hour[order], day[order]
    first = np.r_[True, sd[1:] != sd[:-1]]
    last = np.r_[sd[1:] != sd[:-1], True]
    day_index = np.cumsum(first) - 1
    starts_at_one = (sh[first] == 1)[day_index]
    ends_late = (sh[last] >= 11)[day_index]
    pause = np.flatnonzero(
        (np.diff(st) >= 3 * HOUR_NS)
        & (sd[1:] == sd[:-1])
        & (sh[:-1] <= 4)
        & starts_at_one[:-1]
        & ends_late[:-1]
    )
    if not pause.size:
        return
    i = int(pause[0])
    d = day_index[i]
    begin, end = np.flatnonzero(first)[d], np.flatnonzero(last)[d]
    values = {
        "day": str(pd.Timestamp(int(st[i])).date()),
        "runs": f"{_clock(st[begin])}–{_clock(st[i])}",
        "again": f"{_clock(st[i + 1])}–{_clock(st[end])}",
    }
    raise BadRow(int(order[begin]), (N_("import.refuse.no_am_pm_pause"), values))


def _clock(ns: int) -> str:
    """Wall-clock ns -> 'HH:MM'."""
    return pd.Timestamp(int(ns)).strftime("%H:%M")


def _check_clock_change_repeats(raw: RawBars, zone: str) -> None:
    """``BadRow`` naming the first repeated time that a clock change in ``zone`` makes
    occur twice: its two bars are the hour lived twice, not two exports pasted together
    (which the "duplicates" check would say)."""
    t = raw.instants
    repeats = np.flatnonzero(np.diff(t) == 0) + 1
    if not repeats.size:
        return
    local = localize(
        pd.DatetimeIndex(t[repeats].view("datetime64[ns]")),
        zone,
        ambiguous="NaT",
        nonexistent="NaT",
    )
    twice = np.flatnonzero(local.isna())
    if twice.size:
        i = int(repeats[twice[0]])
        time = {"time": str(pd.Timestamp(int(t[i]))), "zone": zone}
        raise BadRow(raw.file_row(i), (N_("import.refuse.clock_change"), time))


def _in_time_order(raw: RawBars) -> tuple[RawBars, Note | None]:
    """The bars sorted by time, each bar repeated with the same prices and volume kept
    once (with a note saying so), and the note saying they were sorted (for the report
    once the file passes every other check: only then was the sort safe); ``raw`` itself
    when its times already rise bar by bar.

    Two exports pasted together repeat the bars where they overlap, and may be out of
    order: 1,380 identical repeats were refused one by one ("duplicate bar: … again"),
    and a file out of order was sent to "sort the file by time". Sorting is safe when no
    time holds two different bars and the times are read right: each bar then has one
    place, whatever the file's order. When a time holds two, the bars are still sorted
    (so that the repeats meet), but nothing is said here: the "duplicates" check refuses
    the file, naming each repeat's line.
    """
    t = raw.instants
    if len(t) < 2 or bool((np.diff(t) > 0).all()):
        return raw, None
    order = np.argsort(t, kind="stable")  # a repeat stays after the line it repeats
    s = t[order]
    columns = ("open", "high", "low", "close", "volume")
    values = {c: getattr(raw, c)[order] for c in columns}
    same = np.r_[False, s[1:] == s[:-1]]
    for v in values.values():
        same[1:] &= (v[1:] == v[:-1]) | (np.isnan(v[1:]) & np.isnan(v[:-1]))
    keep = ~same
    notes = list(raw.notes)
    sorted_note: Note | None = None
    if bool((np.diff(s[keep]) > 0).all()):
        back = np.flatnonzero(np.diff(t) < 0)
        if back.size:
            i = int(back[0]) + 1
            when = {"time": show(t[i], raw.utc), "before": show(t[i - 1], raw.utc)}
            sorted_note = (N_("import.note.sorted"), when)
        if same.any():
            first = show(s[int(np.flatnonzero(same)[0])], raw.utc)
            notes.append((N_("import.note.repeats"), {"count": int(same.sum()), "time": first}))
    sorted_raw = dataclasses.replace(
        raw,
        instants=s[keep],
        series=None if raw.series is None else raw.series[order][keep],
        notes=notes,
        rows=order[keep],
        **{c: v[keep] for c, v in values.items()},
    )
    return sorted_raw, sorted_note


def _schedule_dates(instrument: Instrument, report: ImportReport) -> np.ndarray | None:
    """Trading dates of the exchange calendar over the file's range (None if unknown)."""
    from barb.data.sample import load_schedule  # the calendar loader shared with the sample

    assert report.first_date is not None and report.last_date is not None
    try:
        return load_schedule(instrument, report.first_date, report.last_date).dates
    except DataError:
        report.notes.append(report.words("import.note.no_calendar"))
        return None


def _check_series(raw: RawBars) -> None:
    """Several Databento symbols are fine only one after another (a continuous series)."""
    if raw.series is None or len(raw) == 0:
        return
    s = raw.series
    starts = np.concatenate(([0], np.flatnonzero(s[1:] != s[:-1]) + 1))
    if len(starts) == 1:
        return
    name = raw.series_names
    names = [name[code] for code in dict.fromkeys(s[starts].tolist())]
    advice = (
        N_("import.refuse.series"),
        {"count": len(names), "names": ", ".join(names[:5]) + (", …" if len(names) > 5 else "")},
    )
    _, first_seen = np.unique(s[starts], return_index=True)
    back = np.setdiff1d(np.arange(len(starts)), first_seen)
    if back.size:
        row = int(starts[back.min()])
        raise BadRow(
            row, (N_("import.refuse.series_resume"), {"symbol": name[s[row]], "advice": advice})
        )
    overlap = starts[1:][raw.instants[starts[1:]] <= raw.instants[starts[1:] - 1]]
    if overlap.size:
        row = int(overlap[0])
        raise BadRow(
            row,
            (
                N_("import.refuse.series_overlap"),
                {"symbol": name[s[row]], "before": name[s[row - 1]], "advice": advice},
            ),
        )


def to_wall_clock(
    instants: np.ndarray, utc: bool, source_zone: str, target_zone: str
) -> np.ndarray:
    """int64 ns of naive wall-clock time in ``target_zone``; refuses times a clock change
    makes impossible (skipped) or ambiguous (repeated)."""
    values = pd.DatetimeIndex(instants.view("datetime64[ns]"))
    if utc:
        local = values.tz_localize("UTC")
    elif source_zone == target_zone:
        return instants
    else:
        local = localize(values, source_zone, ambiguous="NaT", nonexistent="NaT")
        bad = np.flatnonzero(local.isna())
        if bad.size:
            row = int(bad[0])
            raise BadRow(
                row,
                (
                    N_("import.refuse.clock_change"),
                    {"time": show(instants[row], False), "zone": source_zone},
                ),
            )
    wall = local.tz_convert(target_zone).tz_localize(None).asi8
    repeated = np.flatnonzero(wall[1:] <= wall[:-1])
    if repeated.size:
        row = int(repeated[0]) + 1
        raise BadRow(
            row,
            (
                N_("import.refuse.clocks_back"),
                {"time": show(wall[row], False), "zone": target_zone},
            ),
        )
    return wall


# --- writing ---------------------------------------------------------------------------


def import_file(
    path: Path | str,
    symbol: str,
    settings: EngineSettings | None = None,
    *,
    mode: Mode = "new",
    timezone: str | None = None,
    interval: str | None = None,
    stamp: Stamp | None = None,
    fmt: str | None = None,
    columns: str | None = None,
    date_order: DateOrder | None = None,
    progress: bool = False,
    name: str | None = None,
    any_level: bool = False,
) -> ImportResult:
    """Check ``path`` and write it as the data of ``symbol`` (see the module's docstring)."""
    settings = settings or EngineSettings()
    checked = check_file(
        path,
        symbol,
        settings,
        timezone=timezone,
        interval=interval,
        stamp=stamp,
        fmt=fmt,
        columns=columns,
        date_order=date_order,
        progress=progress,
        name=name,
        any_level=any_level,
    )
    return write_checked(checked, settings, mode)


@dataclass(frozen=True)
class _Write:
    """What an import would write: the whole new file and how many of its bars are new."""

    frame: pd.DataFrame
    added: int
    description: str
    replaces: bool  # a file is there (kept for restore)
    note: str = ""  # see ``_level_note``


def plan_write(checked: CheckedFile, settings: EngineSettings, mode: Mode) -> _Write:
    """Every check the write makes against the stored data (the mode, the interval, the
    overlap), without writing: ``--check`` runs it too, so it refuses what the import would.
    A refusal marks the report (``refused_by_stored``): the CLI printed "No problems that
    stop the import." and then refused the import."""
    if checked.frame is None:
        raise ImportRefused(checked.report, checked.name)
    # Set by this plan alone: the bot's refused --append is followed by a --replace that
    # stands, and its report then ends "No problems that stop the import." again.
    checked.report.refused_by_stored = False
    try:
        return _plan_write(checked, settings, mode)
    except Exception:  # a stored file that cannot be read too (OSError, pyarrow's)
        checked.report.refused_by_stored = True
        raise


def _plan_write(checked: CheckedFile, settings: EngineSettings, mode: Mode) -> _Write:
    report, instrument = checked.report, checked.instrument
    words = report.words
    assert checked.frame is not None
    target = data_path(instrument.symbol, settings)
    frame, added = checked.frame, len(checked.frame)
    exists = target.exists()
    zone = report.timezone
    description = (
        f"imported from {report.file} ({report.layout_name} {report.file_kind}, times in {zone}"
        f"{', close stamps' if report.stamp == 'close' else ''})"
    )
    try:
        if exists and mode == "new":
            _refuse_new(checked, read_meta(target))
        if mode == "volumes":
            frame, added, description, note = _volumes_filled(checked, target)
        elif exists and mode == "append":
            frame, added, description = _appended(checked, target, description)
            note = _hole_note(frame, added, words)
        elif exists and mode == "replace":
            if _holds_the_same(checked, target):
                # Nothing to write: a rerun of the same --replace deleted the kept file
                # (the data before the first run, the only way back) for a copy of itself.
                return _Write(frame, 0, description, True)
            note = _level_note(checked, target)
        elif not exists:
            note = _known_level(checked)
        else:
            note = ""
    except DamagedData as exc:
        if mode != "replace":
            raise _damaged(exc, checked, target) from None
        # The way out of a damaged file: it is replaced, and not kept, so that the previous
        # file (if any) stays for `barb data restore` rather than being deleted for it.
        note = words(
            "import.damaged_replaced",
            symbol=instrument.symbol,
            file=target.name,
            reason=exc.reason,
        )
        return _Write(frame, added, description, False, note)
    return _Write(frame, added, description, exists, note)


def _refuse_new(checked: CheckedFile, current: DataMeta) -> None:
    """Without --replace or --append, a file over stored data is refused, naming it."""
    words = checked.report.words
    what = (
        (N_("import.refuse.has_sample"), {})
        if current.source == "synthetic"
        else (
            N_("import.refuse.has_imported"),
            {"file": current.source_file or words("import.refuse.a_file")},
        )
    )
    message = (
        N_("import.refuse.exists"),
        {
            "symbol": checked.instrument.symbol,
            "what": what,
            "rows": words.count(current.rows),
            "first": current.first_date,
            "last": current.last_date,
        },
    )
    raise Refused(words, message, path=checked.name)


def _damaged(exc: DamagedData, checked: CheckedFile, target: Path) -> Refused:
    """The refusal of a write over a stored file that cannot be read, with the ways out:
    the kept previous file when it can be read, and --replace."""
    words, symbol = checked.report.words, checked.instrument.symbol
    values: dict[str, object] = {
        "symbol": symbol,
        "file": str(target),
        "reason": exc.reason,
    }
    try:
        kept = read_meta(previous_path(target)) if previous_path(target).exists() else None
    except DamagedData:
        kept = None
    if kept is None:
        return Refused(words, (N_("import.refuse.damaged"), values), path=checked.name)
    span = {"rows": words.count(kept.rows), "first": kept.first_date, "last": kept.last_date}
    message = (N_("import.refuse.damaged_kept"), values | span)
    return Refused(words, message, path=checked.name)


def _hole_note(combined: pd.DataFrame, added: int, words: ImportWords) -> str:
    """On --append, the sentence naming a hole of over five days between the stored bars and
    the file's ('' otherwise): bars of 2031 appended to data ending 2024-03-22 left seven
    years without bars, and the calendar checks of the file see only the file's dates."""
    if added == 0:
        return ""
    last, first = combined["timestamp"].iloc[-added - 1], combined["timestamp"].iloc[-added]
    if first - last <= pd.Timedelta(formats.LONGEST_PAUSE_NS):
        return ""
    days = (first - last).days
    return words("import.hole", plural_of=days, last=last, first=first, days=words.count(days))


def _holds_the_same(checked: CheckedFile, target: Path) -> bool:
    """Whether the stored data is imported bars of the file's interval equal to the file's,
    bar for bar (times, prices, volumes)."""
    assert checked.frame is not None
    meta = read_meta(target)
    frame = checked.frame
    if (
        meta.source != "imported"
        or meta.rows != len(frame)
        or meta.interval_minutes != checked.report.interval_minutes
    ):
        return False
    columns = ["timestamp", "open", "high", "low", "close", "volume"]
    stored = read_columns(target, columns)
    return all(np.array_equal(stored[c].to_numpy(), frame[c].to_numpy()) for c in columns)


def _level_note(checked: CheckedFile, target: Path) -> str:
    """On --replace, the sentence saying the file's prices are far from the stored ones at
    the same times ('' when they agree): an ES file (5,100) or a tenfold file replaced NQ's
    18,000 without a word, where --append refuses it at the seam (``_check_seam``). Not
    refused: a replace may be what fixes wrong stored data. A file that shares no time with
    the stored bars is held to the instrument's known level, as a first import is: the next
    week of ES sent as NQ's (the bot offers a file that cannot be appended as a replace)
    replaced three weeks of NQ without a word."""
    assert checked.frame is not None
    stored = read_columns(target, ["timestamp", "close"])
    shared = checked.frame[["timestamp", "close"]].merge(
        stored, on="timestamp", suffixes=("", "_stored")
    )
    if shared.empty:
        return _known_level(checked, stored)
    ratio = float((shared["close"] / shared["close_stored"]).median())
    if 1 / SEAM_JUMP <= ratio <= SEAM_JUMP:
        return ""
    middle = checked.frame["timestamp"].iloc[len(checked.frame) // 2].date()
    if _anchor_level(checked.instrument, middle) is not None:
        # Far from the stored prices and from the instrument's known level too: another
        # instrument's file (a week of ES captioned NQ, which the bot offers as a replace
        # of NQ's same dates) was written over NQ's bars with only this note. Refused as a
        # first import is; near the known level, it is the stored data that was wrong.
        _known_level(checked)
    first = shared.iloc[0]
    return checked.report.words(
        "import.level",
        plural_of=len(shared),
        time=first["timestamp"],
        stored=quote(first["close_stored"]),
        close=quote(first["close"]),
        ratio=f"{ratio:.3g}",
        bars=checked.report.words.count(len(shared)),
        symbol=checked.instrument.symbol,
    )


def _known_level(checked: CheckedFile, stored: pd.DataFrame | None = None) -> str:
    """On a first import (or a replace sharing no time with the ``stored`` bars), a refusal
    when the file's prices are far from the level the instrument had then; with
    ``any_level``, the sentence saying so instead ('' when near). NQ at 180.77 (points over
    100) was stored with only a note after the write, and every answer over it was off a
    hundredfold; ES's 4,450 imported as NQ (16,900-21,200 in 2024) likewise. The level is
    its YAML's approximate ``sample.anchors`` within a year of the file, else the stored
    bar nearest the file's middle within a year (an instrument added without a sample
    block was never checked: ES's prices replaced its week of bars without a word), else
    the report says that the prices could not be checked. The anchors are approximate
    closes with the turning points between them, so only a factor of ``KNOWN_JUMP`` counts;
    a new contract or a split that truly moves the level is imported with ``--any-level``."""
    assert checked.frame is not None
    frame, words = checked.frame, checked.report.words
    middle_time = frame["timestamp"].iloc[len(frame) // 2]
    middle = middle_time.date()
    close = float(frame["close"].median())
    values: dict[str, object] = {
        "close": quote(round(close, 9)),  # a median of two prices: 180.765, not 180.76500000000001
        "symbol": checked.instrument.symbol,
        "date": middle,
    }
    known = _anchor_level(checked.instrument, middle)
    if known is not None:
        keys = (N_("import.refuse.level_known"), N_("import.level_known"))
        values["known"] = words.count(round(known, -1))
    else:
        nearest = _stored_near(stored, middle_time)
        if nearest is None:
            return words("import.level_unchecked", **values)
        known = float(nearest["close"])
        keys = (N_("import.refuse.level_stored"), N_("import.level_stored"))
        values |= {"known": quote(known), "time": nearest["timestamp"]}
    ratio = close / known
    if 1 / KNOWN_JUMP <= ratio <= KNOWN_JUMP:
        return ""
    # ×102 for a file in cents: "×1e+02" was said.
    values["ratio"] = f"{ratio:.2g}" if ratio < 10 else words.count(round(ratio))
    if not checked.any_level:
        raise Refused(words, (keys[0], values), path=checked.name)
    return words(keys[1], **values)


def _anchor_level(instrument: Instrument, day: dt.date) -> float | None:
    """The instrument's approximate close on ``day`` by its YAML's ``sample.anchors``
    (log-linear between them, flat beyond, as the sample's path is drawn), or None when it
    has none within a year of ``day``."""
    spec = instrument.sample
    if spec is None or not spec.anchors:
        return None
    days = sorted(spec.anchors)
    year = dt.timedelta(days=366)
    if not days[0] - year <= day <= days[-1] + year:
        return None
    return float(
        np.exp(
            np.interp(
                day.toordinal(),
                [d.toordinal() for d in days],
                np.log([spec.anchors[d] for d in days]),
            )
        )
    )


def _stored_near(stored: pd.DataFrame | None, time: pd.Timestamp) -> pd.Series | None:
    """The stored bar (timestamp, close) nearest ``time``, or None when none is within a
    year of it."""
    if stored is None or stored.empty:
        return None
    times = stored["timestamp"]
    i = int(times.searchsorted(time))
    near = [j for j in (i - 1, i) if 0 <= j < len(stored)]
    j = min(near, key=lambda k: abs(times.iloc[k] - time))
    if abs(times.iloc[j] - time) > pd.Timedelta(days=366):
        return None
    return stored.iloc[j]


def write_checked(
    checked: CheckedFile,
    settings: EngineSettings,
    mode: Mode,
    *,
    expect: str | None = None,
    writing: Callable[[ImportResult], None] | None = None,
    written: Callable[[ImportResult], None] | None = None,
) -> ImportResult:
    """Write a file ``check_file`` accepted, as ``mode`` allows; with ``expect`` (the
    ``stored_version`` the mode was chosen against), only if the stored data is still that
    one, else ``StoredChanged``: an append offered to the bot's admin, pressed after another
    import, became a replace of 5,520 bars by the file's 1,380. ``written`` is called with
    the result once the data file is in place, still under the lock and before the Arrow
    copy is made (seconds for 6.4M bars): the bot records there that its offer was imported,
    so that a stop before the reply does not leave "imported" unsaid. ``writing`` is called
    with the same result just before the data file is replaced: killed between the two, the
    bot finds ``version_of(result.meta)`` stored and knows the write was its own."""
    report, instrument = checked.report, checked.instrument
    target = data_path(instrument.symbol, settings)
    # From reading the stored bars to replacing them, no other import of the instrument runs.
    with write_lock(target):
        if expect is not None and stored_version(target) != expect:
            raise StoredChanged(
                report.words("import.refuse.stored_changed", symbol=instrument.symbol),
                path=checked.name,
            )
        plan = plan_write(checked, settings, mode)
        cleaned = _cleaned(target, settings, report.words)  # by an import that will go on
        if plan.added == 0 and plan.replaces and mode in ("append", "replace"):
            result = ImportResult(read_meta(target), report, 0, target, cleaned=cleaned)
            if written is not None:
                written(result)
            return result
        meta = make_meta(
            plan.frame,
            instrument=instrument.symbol,
            timezone=instrument.timezone,
            source="imported",
            description=plan.description,
        ).model_copy(
            update={"interval_minutes": report.interval_minutes, "source_file": report.file}
        )
        result = ImportResult(
            meta, report, plan.added, target, plan.note, cleaned, kept=plan.replaces
        )
        if writing is not None:
            writing(result)
        write_bars(plan.frame, meta, target, keep_previous=plan.replaces)
        if written is not None:
            written(result)
        refresh_mapped(plan.frame, meta, target, settings)
    return result


def _cleaned(target: Path, settings: EngineSettings, words: ImportWords) -> str:
    """Remove what imports killed mid-write left beside the data and its Arrow copy (run
    under the write lock) and say so, or '' when nothing was left: "Removed the temporary
    file a killed write left: .NQ.parquet.k3j9.tmp (12.4 MB)."."""
    removed = remove_stale_temporaries(target, mapped_path(target, settings))
    if not removed:
        return ""
    files = ", ".join(
        words("import.removed_file", name=name, size=decimal(size / 1e6, words.language, 1))
        for name, size in removed
    )
    return words("import.removed_temporaries", plural_of=len(removed), files=files)


def _check_seam(checked: CheckedFile, stored: pd.Series, first: pd.Series) -> None:
    """The jump checks run inside the file; this one runs where its new bars meet the stored
    ones, so a file in another unit (cents onto dollars) cannot be appended."""
    ratio = first["open"] / stored["close"]
    if 1 / SEAM_JUMP <= ratio <= SEAM_JUMP:
        return
    values = {
        "time": first["timestamp"],
        "open": f"{first['open']:.10g}",
        "stored_time": stored["timestamp"],
        "close": f"{stored['close']:.10g}",
        "ratio": f"{ratio:.3g}",
    }
    raise Refused(checked.report.words, (N_("import.refuse.seam"), values), path=checked.name)


def _one_bar_off(checked: CheckedFile, overlap: pd.DataFrame, old: pd.DataFrame) -> Message | None:
    """The refusal for an overlap that is the stored bars one bar later (bar-close stamps
    read as opens) or earlier, with the --stamp that reads it right; None otherwise. An
    RTH file stamped 09:31-16:00 was told "use --replace", which replaced two weeks of
    24-hour bars with 3,900 bars a minute late."""
    step = pd.Timedelta(minutes=checked.report.interval_minutes or 1)
    prices = ["open", "high", "low", "close", "volume"]
    for shift, stamp in ((step, "close"), (-step, "open")):
        moved = overlap[["timestamp", *prices]].assign(timestamp=overlap["timestamp"] - shift)
        joined = moved.merge(old[["timestamp", *prices]], on="timestamp", suffixes=("", "_s"))
        if len(joined) < max(2, len(overlap) // 2):
            continue
        if all((joined[c] == joined[f"{c}_s"]).all() for c in prices):
            first = joined.iloc[0]
            values = {
                "time": first["timestamp"] + shift,
                "stored_time": first["timestamp"],
                "minutes": int(step / pd.Timedelta(minutes=1)),
                "stamp": stamp,
            }
            return (N_("import.refuse.append_shifted"), values)
    return None


def _check_volumes_meet(checked: CheckedFile, old: pd.DataFrame, meta: DataMeta) -> None:
    """``Refused`` when the file has volumes and the stored bars none (a file without a
    volume column is stored with volume 0), or the other way round. Appended, the zeros
    joined the real volumes: the engine, which refuses questions of volume only on data
    with no volume at all, averaged them in ("mean(volume)" over both halves read half the
    true mean) without a word."""
    assert checked.frame is not None
    stored = bool(old["volume"].to_numpy().any())
    file = bool(checked.frame["volume"].to_numpy().any())
    if stored == file:
        return
    values = {"symbol": checked.instrument.symbol, "file": meta.source_file or "?"}
    key = N_("import.refuse.append_volume_new") if file else N_("import.refuse.append_no_volume")
    raise Refused(checked.report.words, (key, values), path=checked.name)


def _silent_dates(frame: pd.DataFrame) -> np.ndarray:
    """The trading dates (datetime64[ns]) whose every bar has volume 0, as the engine finds
    them (``planning._dates_without_volume``)."""
    dates = frame["trading_date"].to_numpy()
    if not len(dates):
        return dates
    starts = np.flatnonzero(np.r_[True, dates[1:] != dates[:-1]])
    traded = np.maximum.reduceat((frame["volume"].to_numpy() != 0).astype(np.int8), starts)
    return dates[starts][traded == 0]


def _volumes_filled(checked: CheckedFile, target: Path) -> tuple[pd.DataFrame, int, str, str]:
    """The stored bars with the file's volumes on the stored dates that have none, the
    number of bars filled, the data's description and the sentence saying what was filled.

    Data stored before a file with volumes was refused onto bars without them (and the other
    way round) mixes dates of volume 0 with dates of real volume: the engine refuses volume
    questions over those dates, and nothing could mend them (--append refuses a file that
    starts before the stored bars, --replace needs every bar again). Only the volumes of
    those dates change, each date whole: every stored bar of it must be in the file at the
    same time with the same prices, and the file must hold no other bar of it; a date the
    file lacks stays as it was, and is named."""
    assert checked.frame is not None
    words, symbol, new = checked.report.words, checked.instrument.symbol, checked.frame
    if not target.exists():
        key = N_("import.refuse.fill_nothing_stored")
        raise Refused(words, (key, {"symbol": symbol}), path=checked.name)
    old, meta = read_bars(target)
    silent = _silent_dates(old) if meta.source == "imported" else old["trading_date"][:0]
    if not bool(old["volume"].to_numpy().any()):
        # Filled in part, data without volumes (refused as such) would become a mix.
        key = N_("import.refuse.fill_none_stored")
        raise Refused(words, (key, {"symbol": symbol}), path=checked.name)
    if not len(silent):
        key = N_("import.refuse.fill_no_silent")
        raise Refused(words, (key, {"symbol": symbol}), path=checked.name)
    if not bool(new["volume"].to_numpy().any()):
        raise Refused(words, (N_("import.refuse.fill_no_volumes"), {}), path=checked.name)
    if meta.interval_minutes != checked.report.interval_minutes:
        lengths = {"stored": meta.interval_minutes, "file": checked.report.interval_minutes}
        raise Refused(words, (N_("import.refuse.append_interval"), lengths), path=checked.name)
    # The dates the file gives volumes for (a date of zeros in it too would fill nothing).
    given = np.setdiff1d(new["trading_date"].unique(), _silent_dates(new))
    filled_dates = np.intersect1d(given, silent)
    if not len(filled_dates):
        values = {"symbol": symbol, "dates": _dates_named(silent)}
        raise Refused(words, (N_("import.refuse.fill_no_dates"), values), path=checked.name)
    prices = ["open", "high", "low", "close"]
    joined = old.loc[old["trading_date"].isin(filled_dates), ["timestamp", *prices]].merge(
        new.loc[new["trading_date"].isin(filled_dates), ["timestamp", *prices, "volume"]],
        on="timestamp",
        how="outer",
        suffixes=("", "_file"),
        indicator=True,
        sort=True,
    )
    differs = (joined["_merge"] != "both").to_numpy()
    for column in prices:
        differs |= (joined[column] != joined[f"{column}_file"]).to_numpy()
    if differs.any():
        row = joined[differs].iloc[0]
        values: dict[str, object] = {"time": row["timestamp"], "symbol": symbol}
        if row["_merge"] == "right_only":
            key = N_("import.refuse.fill_extra_bar")
        elif row["_merge"] == "left_only":
            key = N_("import.refuse.fill_missing_bar")
        else:
            column = next(c for c in prices if row[c] != row[f"{c}_file"])
            values |= {
                "column": column,
                "value": quote(row[f"{column}_file"]),
                "stored": quote(row[column]),
            }
            key = N_("import.refuse.fill_disagrees")
        raise Refused(words, (key, values), path=checked.name)
    volumes = joined.set_index("timestamp")["volume"]
    combined = old.copy()
    at = combined["timestamp"].isin(volumes.index)
    combined.loc[at, "volume"] = volumes.reindex(combined.loc[at, "timestamp"]).to_numpy()
    combined["volume"] = combined["volume"].astype(np.int64)
    left = np.setdiff1d(silent, filled_dates)
    values = {
        "bars": words.count(int(at.sum())),
        "count": words.count(len(filled_dates)),
        "dates": _dates_named(filled_dates),
        "file": checked.report.file,
    }
    note = words("import.filled_volumes", plural_of=len(filled_dates), **values)
    if len(left):
        note += " " + words(
            "import.filled_volumes_left",
            plural_of=len(left),
            count=words.count(len(left)),
            dates=_dates_named(left),
        )
    description = (
        f"{meta.description}; volumes of {len(filled_dates)} dates from {checked.report.file}"
    )
    return combined, int(at.sum()), description, note


def _dates_named(dates: np.ndarray) -> str:
    """'2024-03-18, 2024-03-19 … 2024-03-22': the first five trading dates and the last."""
    days = [str(pd.Timestamp(d).date()) for d in dates]
    return ", ".join(days[:5]) + (f" … {days[-1]}" if len(days) > 5 else "")


def _appended(
    checked: CheckedFile, target: Path, description: str
) -> tuple[pd.DataFrame, int, str]:
    """The stored bars plus the file's later ones; the overlap must agree bar for bar."""
    assert checked.frame is not None
    words = checked.report.words
    new = checked.frame
    old, meta = read_bars(target)
    if meta.source != "imported":
        raise Refused(
            words,
            (N_("import.refuse.append_sample"), {"symbol": checked.instrument.symbol}),
            path=checked.name,
        )
    if meta.interval_minutes != checked.report.interval_minutes:
        lengths = {"stored": meta.interval_minutes, "file": checked.report.interval_minutes}
        raise Refused(words, (N_("import.refuse.append_interval"), lengths), path=checked.name)
    _check_volumes_meet(checked, old, meta)
    first, last = old["timestamp"].iloc[0], old["timestamp"].iloc[-1]
    starts, ends = new["timestamp"].iloc[0], new["timestamp"].iloc[-1]
    if starts < first:
        span = {"starts": starts, "ends": ends, "first": first, "last": last}
        how = (
            N_("import.refuse.append_before") if ends < first else N_("import.refuse.append_starts")
        )
        raise Refused(
            words, (N_("import.refuse.append_earlier"), {"how": (how, span)}), path=checked.name
        )
    overlap = new[new["timestamp"] <= last]
    if len(overlap):
        joined = overlap.merge(old, on="timestamp", how="left", suffixes=("", "_stored"))
        for column in ("open", "high", "low", "close", "volume"):
            differs = joined[column] != joined[f"{column}_stored"]
            if differs.any():
                i = int(np.flatnonzero(differs.to_numpy())[0])
                row = joined.iloc[i]
                stored = row[f"{column}_stored"]
                if pd.isna(stored):
                    # A bar where the stored data has none, before its last: the day missing
                    # from it, sent on its own. "Use --replace" replaced the whole history
                    # with that one day.
                    gap = {"time": row["timestamp"], "first": first, "last": last}
                    raise Refused(words, (N_("import.refuse.append_gap"), gap), path=checked.name)
                had = (N_("import.refuse.has_value"), {"column": column, "value": quote(stored)})
                values = {
                    "time": row["timestamp"],
                    "column": column,
                    "value": quote(row[column]),
                    "had": had,
                }
                shifted = _one_bar_off(checked, overlap, old)
                raise Refused(
                    words,
                    shifted or (N_("import.refuse.append_disagrees"), values),
                    path=checked.name,
                )
    fresh = new[new["timestamp"] > last]
    if len(fresh):
        _check_seam(checked, old.iloc[-1], fresh.iloc[0])
    combined = pd.concat([old, fresh], ignore_index=True)
    return combined, len(fresh), f"{meta.description}; then {description}"


__all__ = [
    "LAYOUTS",
    "CheckedFile",
    "ImportRefused",
    "ImportResult",
    "StoredChanged",
    "check_file",
    "import_file",
    "plan_write",
]
