"""CSV export of what proves an answer: the table, or the rows behind a number (only those
the where kept; after ``then``, the first stage's rows the second stage's where kept).

Daily and longer bars are named by their bar label in the first column (``date``, ``week``,
``month``, ``quarter``, ``year``), the same label the model's summary and the chart use; the
timestamps it stands for are left out, so each bar has one name.

The file is meant to be opened anywhere (a spreadsheet, pandas, another tool) without
guessing: UTF-8 with a byte order mark (Excel reads a file without one in the machine's
code page: Cyrillic and "—" came out garbled), intraday times as the exchange's clock reads
them (``2025-12-24 09:30``, as the answer and the chart write them, a cell Excel reads as a
time) in a column whose name says the clock (``time_et``; dates stay plain dates), minutes
of the day the query made (``hour() * 60 + minute()``) as the clock reads them (``09:53``,
not 593), prices on the instrument's tick, other numbers to 6 significant digits (never
fewer decimals than a tick has), plain (no thousands separators, no exponents), and a
``source`` column saying whose data it is (the synthetic sample, or the imported file and
its dates), on the first row: the rest of that column is empty. The words Barb writes (that
note, its column's name, a ranking's notes) are in the person's language, and so, in a
language other than English, are the names of the bars' columns and of what the engine named
(«дата», «средний диапазон», as the chart calls them); the query's own column names and the
values are as the query has them.

Fields are split and numbers written as a spreadsheet in the person's locale reads them
(``csv_dialect``): Excel in a locale whose decimal mark is a comma (Russian, German) splits
a line on ";" and reads "311.423" as text, so there the file is ``311,423`` between ``;``.
A Russian chat's file had opened as one column per line.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from barb.bar_labels import BAR_LABELS, as_labelled
from barb.i18n import DEFAULT, N_, decimal_mark, text
from barb.instruments import Instrument, available_instruments
from barb.joined_names import event_flag, joined_name
from barb.planning import HIDDEN
from barb.record_runs import RUN_NOTE_COLUMN
from barb.result import Result, result_instrument
from barb.row_values import statistic_arguments
from barb.time_keys import (
    calendar_part,
    clock_kind,
    clock_text,
    minutes_of_day,
    text_clock_zone,
    zoned_clock_column,
    zoned_hour_column,
)
from barb.time_zones import short_name

if TYPE_CHECKING:
    from barb.charts.words import Words

# Columns that hold prices as traded (joined instruments' too: es_close); aggregates of
# them under other names (mean_range) are rounded as any statistic.
PRICE_COLUMNS = ("open", "high", "low", "close", "range")
#: A statistic's digits: two more than the chart's 4 (311.42 there, 311.423 here).
SIGNIFICANT_DIGITS = 6
#: A value written as it is (a price off the tick): every digit a float holds that matters.
EXACT_DIGITS = 10
#: Decimals kept without an instrument to take its tick's from.
DEFAULT_DECIMALS = 2


# The notes' keys, under a name no query's column can take (``HIDDEN``): a query's own
# ``ranking_note`` had its values sent through the translation, and the CSV failed.
NOTE_COLUMN = HIDDEN + "ranking_note"
OPEN_NOTE = N_("csv.open_note")
#: The columns that name a daily or longer bar by its label (``date``, ``week`` …).
LABEL_COLUMNS = frozenset(label.column for label in BAR_LABELS.values())
WHOLE_NOTE = N_("csv.whole_note")


@dataclass(frozen=True)
class Dialect:
    """How a spreadsheet splits a line into fields, which mark it reads as a number's
    decimal point, and what it reads as true and false."""

    separator: str
    decimal: str
    true: str = "True"
    false: str = "False"


def csv_dialect(locale: str | None = DEFAULT) -> Dialect:
    """The CSV dialect of the spreadsheet in ``locale``: where the decimal mark is a comma
    (Babel's number symbols), Excel takes ";" for the list separator, so ``csv_dialect("ru")``
    is ``;`` and ``,``; ``csv_dialect("en")`` is ``,`` and ``.``.

    A condition's True/False is a boolean to an English spreadsheet and to pandas; Russian
    Excel and LibreOffice know ИСТИНА/ЛОЖЬ only (German WAHR/FALSCH…) and opened "True" as
    text (r48b). There it is 1 and 0: a number in every locale and every tool, which sums to
    the days counted and averages to their share; a locale's own words would be text to all
    but that locale's spreadsheet."""
    if decimal_mark(locale) == ",":
        return Dialect(separator=";", decimal=",", true="1", false="0")
    return Dialect(separator=",", decimal=".")


def proof_frame(result: Result) -> pd.DataFrame | None:
    """The table for rows and groups; the source rows for a number or a few numbers, with
    the values a statistic of an expression took on each (``range / open * 100`` of
    ``mean(range / open * 100)``): the mapped form (``range_pct``) had that column and the
    written one only the bars'. A streak record's, its longest runs (``barb.record_runs``)."""
    if result.table is not None:
        # Here, not at the top: the chart's package loads matplotlib, which the bot's own
        # process (it imports this module, the workers write the files) never draws with.
        from barb.charts.grouped import with_counted_zeros

        table = with_counted_zeros(result)
        assert table is not None
        return _with_first_whole(table, result)
    rows = _record_runs(result)
    if rows is None:
        rows = result.source_rows
    if rows is None:
        return None
    averaged = statistic_arguments(rows, result)
    return rows.assign(**averaged) if averaged else rows


def _record_runs(result: Result) -> pd.DataFrame | None:
    """The longest runs behind a streak record, found by the engine among all the rows
    behind it (those past the first ``max_table_rows`` too); None for any other answer, a
    record beside other statistics too (a backtest's trades are its proof)."""
    return result.run_rows if result.table is None else None


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
    if meta is None or not meta.truncated or _record_runs(result) is not None:
        return held  # nothing cut, or a streak record's runs, which come whole
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


def _flag_words(
    name: str, result: Result, language: str | None, dialect: Dialect
) -> dict[bool, str]:
    """How a yes/no column's values are written: an event's flag (``cpi``) in a language
    other than English as the chat and the chart say it («да», «нет»: a Russian file read
    0 and 1 under «день CPI» beside «cpi: да»); any other as the dialect's true and false
    (``csv_dialect``), which a spreadsheet sums."""
    if language != DEFAULT and event_flag(name, result):
        return {
            True: text("barb", N_("flag.yes"), language),
            False: text("barb", N_("flag.no"), language),
        }
    return {True: dialect.true, False: dialect.false}


def _is_price(name: str) -> bool:
    if name in PRICE_COLUMNS:
        return True
    prefix, _, column = name.partition("_")
    return column in PRICE_COLUMNS and prefix.upper() in available_instruments()


def _plain(value: float, digits: int = EXACT_DIGITS, decimals: int = 0) -> str:
    """``value`` to ``digits`` significant digits, never fewer than ``decimals`` decimals,
    trailing zeros dropped: ``_plain(311.4230769, 6, 2)`` is "311.423", ``_plain(18000.125,
    6, 2)`` "18000.12" (a mean price keeps its tick's cents), ``_plain(21.0, 6, 2)`` "21"."""
    if not np.isfinite(value):
        return ""
    magnitude = int(np.floor(np.log10(abs(value)))) + 1 if value else 1
    places = max(decimals, digits - magnitude, 0)
    # + 0.0 makes a negative zero plain zero: round(ret) of a −0.3% day keyed its bucket "-0".
    return np.format_float_positional(
        round(value, places) + 0.0, precision=places, fractional=True, trim="-"
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


def csv_bytes(result: Result, language: str | None = DEFAULT) -> bytes:
    """The proof frame as clean CSV (see the module's docstring), Barb's own words in
    ``language`` and its fields and numbers in that locale's dialect: ``18000,25;311,423``
    for ``ru``, ``18000.25,311.423`` for ``en``."""
    frame = proof_frame(result)
    if frame is None:
        return b""
    dialect = csv_dialect(language)
    instrument = result_instrument(result)
    timeframe = result.metadata.timeframe if result.metadata else ""
    out = as_labelled(frame, timeframe).copy(deep=False)
    decimals = instrument.tick_decimals if instrument is not None else DEFAULT_DECIMALS
    renamed: dict[str, str] = {}
    zoned: dict[str, str] = {}
    hours = _keys_as_charted(out, result, language) if result.table is not None else set()
    for name in out.columns:
        values = out[name]
        if name in hours:  # written as the chart's times already
            continue
        if pd.api.types.is_datetime64_any_dtype(values):
            out[name], clock = _times(values, instrument)
            if clock is not None:
                renamed[name] = _clock_column(str(name), clock)
        elif clock_kind(str(name), values, result.query) == "minute":
            out[name] = values.map(lambda m: clock_text(m) if pd.notna(m) else "")
        elif (zone := zoned_clock_column(str(name), values, result.query)) is not None:
            # hour('MSK') * 60 + minute('MSK'): the time on that clock, as the answer reads
            # it ("20:07"), in a column that names the clock (the exchange's is the default)
            out[name] = values.map(lambda m: clock_text(m) if pd.notna(m) else "")
            zoned[name] = _zone_column(str(name), zone)
        elif not pd.api.types.is_numeric_dtype(values) and (
            zone := text_clock_zone(str(name), result.query)
        ):
            zoned[name] = _zone_column(str(name), zone)  # time('Moscow')'s '17:30', named so
        elif pd.api.types.is_float_dtype(values):
            if instrument is not None and _is_price(str(name)):
                out[name] = _on_tick(values, instrument)
            else:
                out[name] = values.map(lambda v: _plain(v, SIGNIFICANT_DIGITS, decimals))
            if dialect.decimal != ".":  # plain digits and one point: no grouping to mistake
                out[name] = out[name].map(lambda v: v.replace(".", dialect.decimal))
        elif pd.api.types.is_bool_dtype(values):  # an unknown (NA) stays empty
            flags = _flag_words(str(name), result, language, dialect)
            out[name] = values.map(lambda v, f=flags: "" if pd.isna(v) else f[bool(v)])
        elif language != DEFAULT and not pd.api.types.is_numeric_dtype(values):
            out[name] = _calendar_words(values, language)
    out = out.rename(columns={k: v for k, v in renamed.items() if v not in out.columns})
    out = out.rename(columns={k: v for k, v in zoned.items() if v not in out.columns})
    out = out.rename(columns=_headers(out.columns, renamed, result, language, hours))
    # Barb's notes under a word the person reads ("note", «примечание»; English had read
    # "ranking_note"), never over a column of the query's own of that name.
    note_header = _free_header(text("barb", N_("csv.note_column"), language), out.columns)
    for column in (NOTE_COLUMN, RUN_NOTE_COLUMN):
        if column in out.columns:
            notes = out[column].map(lambda key: text("barb", key, language) if key else "")
            out = out.drop(columns=column)
            out[note_header] = notes
    out = _with_limit_tie_note(out, result, language, note_header)
    if result.metadata is not None:
        # Once, on the first row: the file says whose data it is, not every row again.
        source = [""] * len(out)
        if source:
            source[0] = _source(result, language)
        out[text("barb", N_("csv.source_column"), language)] = source
    buffer = io.StringIO()
    # A text field holding the separator or a line break is quoted (QUOTE_MINIMAL): "a;b"
    # stays one cell. Lines end "\r\n" (RFC 4180, as Excel writes them): the csv module
    # quotes a field holding a character of the line ending only, and a bare "\r" in a
    # text left unquoted after "\n" endings split its row in Excel and pandas (r48b).
    out.to_csv(buffer, index=False, sep=dialect.separator, lineterminator="\r\n")
    return buffer.getvalue().encode("utf-8-sig")


def _free_header(header: str, columns: pd.Index) -> str:
    """``header``, or with Barb's name after it when the query has a column of that name."""
    taken = {str(c) for c in columns}
    return header if header not in taken else f"{header} (Barb)"


def _with_limit_tie_note(
    out: pd.DataFrame, result: Result, language: str | None, header: str
) -> pd.DataFrame:
    """A limit that cut a tie says so on the last row, the one the rows cut tie with, in the
    notes' column, as the chart's note under the bars does ("Also 14, cut by the limit:
    Oct"): "two months with the most up days" sent a file of Dec and Sep alone, and nothing
    of October's equal 14."""
    meta = result.metadata
    if meta is None or meta.limit_tie is None or result.table is None or out.empty:
        return out
    # Here, not at the top: the chart package loads matplotlib (see ``proof_frame``).
    from barb.charts.rows import limit_tie_note
    from barb.charts.words import words_for

    note = limit_tie_note(result, words_for(language))
    if note is None:
        return out
    notes = out[header] if header in out.columns else pd.Series([""] * len(out), index=out.index)
    last = notes.iloc[-1]
    notes = notes.copy()
    notes.iloc[-1] = f"{last}; {note}" if last else note
    return out.assign(**{header: notes})


#: Keys the chart names by a word or a clock's time, not by their number.
_NAMED_PARTS = frozenset({"dayofweek", "month", "quarter", "weekofyear"})


def _keys_as_charted(out: pd.DataFrame, result: Result, language: str | None) -> set[str]:
    """Group keys that hold a number the chart writes as a word or a time, written as it
    does in a language other than English (``dayofweek`` 0 «Пн», ``month`` 3 «мар», RTH's
    hour 9 «09:30», the hour's first bar): a Russian file read 0 and 9 beside a chart of
    «Пн» and «09:30». The names of the hour keys so written, whose header names the clock.
    English keeps the engine's numbers, which a script reading the file may know."""
    if language == DEFAULT or result.summary is None or result.metadata is None:
        return set()
    from barb.charts.grouped import key_labels
    from barb.charts.time_of_day import bar_grid
    from barb.charts.words import words_for

    instrument = result_instrument(result)
    words, grid = words_for(language), bar_grid(result)
    hours: set[str] = set()
    for name in result.summary.by or ():
        if name not in out.columns or not pd.api.types.is_numeric_dtype(out[name]):
            continue
        hour = clock_kind(name, out[name], result.query) == "hour"
        if hour and (grid is None or instrument is None):
            continue
        # hour('MSK'): 22:00, as the chart's ticks and its tie note write it, not 22
        other = zoned_hour_column(name, out[name], result.query) is not None
        if not hour and not other and calendar_part(name, result.query) not in _NAMED_PARTS:
            continue
        known = out[name].notna()
        [labels] = key_labels(out.loc[known], [name], result.query, words, grid)
        written = pd.Series("", index=out.index, dtype=object)
        written[known] = labels
        out[name] = written
        if hour:
            hours.add(name)
    return hours


def _calendar_words(values: pd.Series, language: str | None) -> pd.Series:
    """A column of weekday or month names (``dayname()``'s "Mon", ``monthname()``'s "Jan")
    in ``language``'s words, as the chart, the caption and ``/query``'s table write them: a
    Russian file read "Mon" to "Fri" beside a chart of «Пн» to «Пт». Only a column all of
    whose values are such names (any other text is the query's own); numbers stay numbers."""
    from barb.charts.grouped import MONTHS, WEEKDAYS
    from barb.charts.words import words_for

    # Of each distinct value once: a minute query's rows are many, its names seven.
    names = set(values.dropna().unique())
    if not names or not all(isinstance(v, str) for v in names):
        return values
    words = words_for(language)
    for engine, said in ((WEEKDAYS, words.weekdays), (MONTHS, words.months)):
        if names <= set(engine):
            return values.map(dict(zip(engine, said, strict=True)))
    return values


def _headers(
    columns: pd.Index,
    renamed: dict[str, str],
    result: Result,
    language: str | None,
    hours: frozenset[str] | set[str] = frozenset(),
) -> dict[str, str]:
    """The columns' names in ``language`` where it is not English, as the chart names them
    (``date``: «дата», ``mean_range``: «средний диапазон», ``time_et``: «время (ET)»): a
    Russian file was headed ``date;open;…;mean_range`` beside a chart and a caption in
    Russian words. The query's own names (``r``, ``max(high) as hi``) stay as written, as
    does a name whose words another column already has (``high - low`` beside ``range``).
    English keeps the engine's names, which a script reading the file may know."""
    # Here, not at the top: the chart package loads matplotlib, which the bot's own
    # process (it imports this module, never draws) does without.
    from barb.charts.columns import column_name, keys_text, zoned
    from barb.charts.words import words_for

    words = words_for(language)
    if words.language == DEFAULT:
        return {}
    keys = set(result.summary.by or ()) if result.summary is not None else set()
    clocks = {header: name for name, header in renamed.items()}
    taken = {str(c) for c in columns}
    out: dict[str, str] = {}
    for column in map(str, columns):
        if column in clocks:  # time_et: the time, on the clock the chart names
            said = zoned(words.key("time"), result)
        elif column in hours:  # «час (ET)», as the axis of its times names it
            said = zoned(keys_text([column], result, words), result, words=words)
        elif column in keys:
            said = _key_header(column, result, words)
        elif words.names_key(column) and column in LABEL_COLUMNS:
            said = words.key(column)
        elif (joined := joined_name(column, result, language)) is not None:
            said = joined  # trading_date, cpi, cpi_minutes: «торговый день», «день CPI»…
        else:
            said = column_name(column, result, words)
        if said != column and said not in taken:
            out[column] = said
            taken.add(said)
    return out


def _key_header(column: str, result: Result, words: Words) -> str:
    """A group key's header as the chart's axis names it, with the clock of times of day
    (``time()``'s «время (ET)», ``hour('MSK')``'s «hh (МСК)»): a Russian file headed
    «время» over 09:30 read as Moscow's time beside an axis of «время (ET)»."""
    from barb.charts.columns import keys_text, zoned

    said = keys_text([column], result, words)
    values = result.table[column] if result.table is not None else None
    if values is None or column not in result.table.columns:
        return said
    if minutes_of_day(column, values, result.query) is not None:
        return zoned(said, result, column, words)
    if (zone := zoned_hour_column(column, values, result.query)) is not None:
        return f"{said} ({words.clock(zone)})"
    return said


def _times(values: pd.Series, instrument: Instrument | None) -> tuple[pd.Series, str | None]:
    """Dates as dates; times as the exchange's clock reads them, to the minute (to the
    second where a time has seconds), with the clock's short name ("ET"), None for dates or
    where the clock is unknown (no instrument)."""
    if values.dt.tz is not None:
        if instrument is None:
            return values.dt.strftime("%Y-%m-%d %H:%M:%S%z"), None
        values = values.dt.tz_convert(instrument.timezone).dt.tz_localize(None)
    # Read over the values there are: a missing one (NaT) is neither midnight nor :00
    # seconds, and a column of dates with a gap had been written as times, named d_et.
    known = values.dropna()
    if (known.dt.normalize() == known).all():
        return values.dt.strftime("%Y-%m-%d"), None
    seconds = (known.dt.second != 0).any()
    written = values.dt.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
    return written, short_name(instrument.timezone) if instrument is not None else None


def _clock_column(name: str, clock: str) -> str:
    """A time column's name with its clock: ``timestamp`` is ``time_et``, ``ended``
    ``ended_et``."""
    tag = re.sub(r"\W+", "_", clock).lower()
    return f"time_{tag}" if name == "timestamp" else f"{name}_{tag}"


def _zone_column(name: str, zone: str) -> str:
    """A column of times on another clock named with it: ``hi_m`` of Moscow's clock is
    ``hi_m_msk``; ``low_msk`` says it already."""
    tag = re.sub(r"\W+", "_", zone).strip("_").lower()
    return name if tag in name.lower().split("_") else f"{name}_{tag}"


def _source(result: Result, language: str | None = DEFAULT) -> str:
    meta = result.metadata
    assert meta is not None
    if meta.data_source == "synthetic":
        return text("barb", N_("csv.synthetic"), language)
    return meta.data_description
