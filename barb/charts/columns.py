"""Reading a result's columns: which one is time, which are numbers, which sit on the price's
scale, and the unit and timeframe words that label them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from barb.bar_labels import bar_label, label_dates, table_label
from barb.charts.words import ENGLISH, Words
from barb.column_units import (
    COUNTED_ROWS,
    PERCENT,
    POINTS,
    ROWS,
    SHARE,
    column_unit,
    stage_rows,
    then_rows_unit,
)
from barb.column_words import aggregate_words, formula_words, plain_words
from barb.i18n import DEFAULT
from barb.instruments import load_instrument
from barb.lineage import Lineage, called_key_names, group_key_names, written_key_texts
from barb.result import Result, result_instrument
from barb.script import ast
from barb.time_keys import calendar_keys, key_call, text_clock_zone, zoned_clock

PRICE_COLUMNS = ("open", "high", "low", "close")


def floats(series: pd.Series) -> np.ndarray:
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


def is_number(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def first_numeric(frame: pd.DataFrame, preferred: list[str]) -> str | None:
    names = [c for c in preferred if c in frame.columns] + list(frame.columns)
    return next((c for c in names if is_number(frame[c])), None)


def time_column(frame: pd.DataFrame) -> str | None:
    # "date" holds dates when the query selected date() (the bar label is text).
    for name in ("timestamp", "trading_date", "date"):
        if name in frame.columns and pd.api.types.is_datetime64_any_dtype(frame[name]):
            return name
    return None


def latest_known(frame: pd.DataFrame, column: str, time_col: str) -> int | None:
    """The position of the latest row in time with a value in ``column``, whatever the rows'
    order: a table sorted newest first (or by a value) has its latest row anywhere, and
    "last" means the latest in time, never the last line of the table."""
    known = pd.to_numeric(frame[column], errors="coerce").notna().to_numpy()
    known &= frame[time_col].notna().to_numpy()
    if not known.any():
        return None
    times = frame[time_col].to_numpy()
    positions = np.flatnonzero(known)
    # Of equal times the row further down wins, as before for rows in time order.
    return int(positions[::-1][np.argmax(times[positions][::-1])])


def price_like(series: pd.Series, close: pd.Series) -> bool:
    """A column on the price's scale (a moving average, a level) belongs on the price axes."""
    level, ref = pd.to_numeric(series, errors="coerce").median(), close.median()
    return bool(np.isfinite(level) and ref and 0.7 <= level / ref <= 1.3)


def timeframe(result: Result) -> str:
    return result.metadata.timeframe if result.metadata else "daily"


# The units of a count of rows: the timeframe's (days, weeks…) or plain bars.
_COUNTED_UNITS = frozenset({*COUNTED_ROWS.values(), "bars"})


def unit(column: str, result: Result) -> str | None:
    found = column_unit(column, timeframe(result), result.query, point_values(result))
    if found == ROWS:
        return then_rows_unit(result.query, timeframe(result))
    if found is None and _count_named_for_its_unit(column, result):
        return column  # "count() as days" counts days: "09:30 71 days", not "09:30 71"
    return price_unit(result) if found == POINTS else found


def _count_named_for_its_unit(column: str, result: Result) -> bool:
    """Whether ``column`` is a count() the query named for what it counts (``count() as
    days``, ``count() as weeks``): its name is then that unit's word, which the chart writes
    after the count and in the chart's language («дни», where "days:" headed a Russian
    chart, p47d D5)."""
    if column not in _COUNTED_UNITS:
        return False
    found = Lineage(result.query).definition(column)
    expr = found[0] if found is not None else None
    return isinstance(expr, ast.Call) and expr.name.lower() == "count"


def price_unit(result: Result) -> str:
    """What a difference of the instrument's prices is written in: points (NQ, ES), or its
    own word (CL's dollars); points when the instrument is not known."""
    instrument = result_instrument(result)
    return POINTS if instrument is None else instrument.price_unit


def point_values(result: Result) -> frozenset[float] | None:
    """A contract's dollars per point of the instrument and of each instrument it joined
    (NQ's 20, ES's 50): points times one of them are dollars, times a 0/1 position or a
    count of contracts still points; None when the instrument is not known."""
    instrument = result_instrument(result)
    if instrument is None:
        return None
    values = {instrument.point_value}
    joins = result.query.get("join") or []
    for join in joins if isinstance(joins, list) else [joins]:
        if isinstance(join, dict) and isinstance(join.get("instrument"), str):
            try:
                values.add(load_instrument(join["instrument"]).point_value)
            except Exception:
                return None  # a join's value unknown: no number is sure to be points
    return frozenset(values)


def row_kind(result: Result) -> tuple[str, bool]:
    """The timeframe the result's rows are named by, and whether they are a first stage's
    groups that are no calendar period (``groups``)."""
    return stage_rows(result.query, timeframe(result))


def row_word(result: Result, words: Words = ENGLISH, count: int | None = None) -> str:
    """What the result's rows are called (after ``count`` of them, in that number's form)."""
    tf, groups = row_kind(result)
    return words.rows(tf, groups=groups, count=count)


def column_name(column: str, result: Result, words: Words = ENGLISH) -> str:
    """What a chart calls ``column``: a bar column, or an aggregate of bar columns under the
    name the engine gave it, in words (``mean(range)`` is "average range", «средний
    диапазон», where "mean_range: больше всего Ср" headed a Russian chart); a name the query
    chose (``max(high) as high``, ``rng_pct``) as written, as its answer's text calls it.
    The words are the plan's (``barb.column_words``)."""
    found = Lineage(result.query).definition(column)
    expr = found[0] if found is not None else ast.Column(column)
    if _count_named_for_its_unit(column, result):
        return str(words.unit(column, axis=True))  # "days" is «дни», as the axis says it
    if ast.default_name(expr) != column:
        return column
    rows = _rows_counted(column, result)
    return (
        plain_words(expr, words.language, rows)
        or aggregate_words(expr, words.language)
        or formula_words(expr, words.language)
        or column
    )


def csv_names(columns: Sequence[str], result: Result, words: Words = ENGLISH) -> str:
    """Columns left off the chart, as the CSV's header names them: the engine's names in
    English (the file keeps them for scripts), the chart's words in another language,
    whose file is headed so («+ ещё 1 значение в CSV: close - open», where «close_open»
    named no column of the Russian file)."""
    if words.language == DEFAULT:
        return ", ".join(columns)
    return ", ".join(column_name(c, result, words) for c in columns)


def _rows_counted(column: str, result: Result) -> str:
    """What a count or a share named in words (``count()``, ``mean(close > open)``) counts:
    a then stage's rows (``then_rows_unit``: days for groups by date(), groups for hours),
    else the bars, in their timeframe's word (days on daily bars)."""
    lineage = Lineage(result.query)
    found = lineage.definition(column)
    if found is not None and found[1] == 0 and lineage.two_stages:
        return then_rows_unit(result.query, timeframe(result)) or "groups"
    return COUNTED_ROWS.get(timeframe(result), "bars")


def counted_unit(column: str, result: Result) -> str | None:
    """The rows ``column`` counts when it is a count of them named in words (``count()``
    on daily bars: "days", as "number of days" says): its value is then written bare, as
    "number of days = 516" (it had read "number of bars = 516 days"); None for any other
    column."""
    lineage = Lineage(result.query)
    found = lineage.definition(column)
    expr = found[0] if found is not None else None
    if not isinstance(expr, ast.Call) or expr.name.lower() != "count":
        return None
    if ast.default_name(expr) != column:
        return None  # count() as days: a name of the query's own, its unit said after it
    if found is not None and found[1] == 0 and lineage.two_stages:
        # A then stage's count() counts the first stage's rows: its days for date(), weeks
        # for week(), its groups for hours. It had read "number of bars = 4,647" over 4,647
        # days of 1-minute bars (f49d), «количество баров: чаще всего 09:30 70» for days.
        return _rows_counted(column, result)
    rows = unit(column, result)
    return rows if rows in _COUNTED_UNITS else None


def keys_text(keys: Sequence[str], result: Result, words: Words = ENGLISH) -> str:
    """The group keys under a chart, ``year · weekday``: those the engine named after their
    call, or the query named for one (``"weekday": "dayname()"``), in the chart's language
    (``год · день недели``), those it named from an expression as the query wrote it (``fh >
    0``, not ``fh_0``), the query's own names as written."""
    called = called_key_names(result.query)
    written = written_key_texts(result.query)

    def named(key: str) -> str:
        if key in called:
            return words.key(key)
        call = key_call(key, result.query)
        if call is not None and words.names_key(call):
            return words.key(call)  # "weekday" in a Russian chart was English
        return written.get(key, key)

    return " · ".join(named(k) for k in keys)


def shown_names(result: Result, words: Words = ENGLISH) -> dict[str, str]:
    """What the chart calls each column a text shows of ``result`` (its answers, its
    table's columns), for those it calls other than the engine does: ``/query`` in
    Russian headed its numbers ``mean_range``, ``dayname`` where the chart says «средний
    диапазон», «день недели». A group key as the axis names it, any other column as its
    panel does (``column_name``)."""
    summary = result.summary
    if summary is None:
        return {}
    keys = set(summary.by or ())
    names = [*(summary.values or {}), *(summary.columns or ()), *(summary.shown or ())]
    named = {
        name: keys_text([name], result, words) if name in keys else column_name(name, result, words)
        for name in dict.fromkeys(names)
    }
    return {name: said for name, said in named.items() if said != name}


def shown_units(result: Result) -> dict[str, str]:
    """The columns a text shows that are a share of rows (``share``: 0.537 written 53.7%) or
    a percent (``%``), by name: ``/query`` wrote ``mean(close > open)`` as 0.54 beside a
    chart's 53.7%."""
    summary = result.summary
    if summary is None:
        return {}
    names = [*(summary.values or {}), *(summary.columns or ()), *(summary.shown or ())]
    found = {name: unit(name, result) for name in dict.fromkeys(names)}
    return {name: said for name, said in found.items() if said in (SHARE, PERCENT)}


def zone_name(result: Result) -> str | None:
    """The instrument's time zone as a trader names it, ``ET`` (``America/New_York``): the
    letter of standard or daylight time (EST, EDT) dropped, as the clock follows both.
    None when the instrument is not known."""
    instrument = result_instrument(result)
    if instrument is None:
        return None
    try:
        zone = ZoneInfo(instrument.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return instrument.timezone
    names = {dt.datetime(2024, month, 1, tzinfo=zone).tzname() or "" for month in (1, 7)}
    if len(names) == 2 and all(len(n) == 3 and n[1] in "SD" for n in names):
        first = min(names)
        return first[0] + first[2]  # EST and EDT: ET
    return min(names)


def zoned(text: str, result: Result, column: str | None = None, words: Words = ENGLISH) -> str:
    """An axis of clock times named with their zone, ``t (ET)``: a Russian reader took
    "09:00" for Moscow time. A ``column`` of times on another clock names its own, in the
    chart's language (``hi (MSK)`` of ``hour('MSK') * 60 + minute('MSK')`` and of
    ``time('Moscow')``, «hi (МСК)»)."""
    zone = None
    if column is not None:
        written = zoned_clock(column, result.query) or text_clock_zone(column, result.query)
        zone = words.clock(written) if written else None
    zone = zone or zone_name(result)
    return text if zone is None else f"{text} ({zone})"


def axis_text(
    column: str, result: Result, words: Words = ENGLISH, together: Sequence[str] = ()
) -> str:
    """``range (points)``: a column and its unit, in the chart's language; columns drawn
    ``together`` with it share the unit, named once (``nq_ret · es_ret (%)``)."""
    names = " · ".join(column_name(c, result, words) for c in [column, *together])
    column_unit = unit(column, result)
    if column_unit is None:
        return names
    if not together and column in (column_unit, ENGLISH.unit(column_unit, axis=True)):
        # A column named for its unit ("count() as days") is that unit, in the chart's
        # language: "days (days)" read «days (дни)» in Russian.
        return str(words.unit(column_unit, axis=True))
    if not together and counted_unit(column, result) == column_unit:
        return names  # "number of bars (bars)" said the unit twice
    return f"{names} ({words.unit(column_unit, axis=True)})"


def bar_labels(frame: pd.DataFrame, result: Result) -> list[str | None] | None:
    """The bar label of each row (``2023-01``) when the frame starts with one."""
    name = table_label(frame, timeframe(result))
    if name is None:
        return None
    return [None if v is None or v != v else str(v) for v in frame[name]]


def open_bar_row(frame: pd.DataFrame, result: Result) -> int | None:
    """The row of the data's unfinished last bar (the 3 days of the week of 2026-01-05), as
    the engine found it (``Metadata.open_bar``), when the frame lists it."""
    meta = result.metadata
    if meta is None or meta.open_bar is None:
        return None
    names = bar_labels(frame, result)
    found = [i for i, name in enumerate(names or ()) if name == meta.open_bar.label]
    return found[0] if len(found) == 1 else None


def counted_dates(rows: pd.DataFrame, result: Result) -> pd.DatetimeIndex | None:
    """The date each row is counted on: a bar's label date (a weekly bar's first trading
    date, as ``year()`` and the table name it), else its trading date. A week's trading date
    is its last day, and counted by it the week of 2025-12-29 fell in 2026."""
    names = bar_labels(rows, result)
    if names is not None:
        dates = label_dates(pd.Series(names), timeframe(result))
        if dates is not None and not np.isnat(dates).any():
            return pd.DatetimeIndex(dates)
    date_col = "trading_date" if "trading_date" in rows.columns else time_column(rows)
    if date_col is not None:
        return pd.DatetimeIndex(rows[date_col])
    return _group_dates(rows, result)


def _group_dates(rows: pd.DataFrame, result: Result) -> pd.DatetimeIndex | None:
    """A ``then`` stage's rows are the first stage's groups: each one's date when its keys
    are a calendar period (``week()`` is its Monday, ``year()`` its January 1st)."""
    then = result.query.get("then")
    if not (isinstance(then, dict) and then):
        return None
    keys = [k for k in group_key_names(result.query) if k in rows.columns]
    called = called_key_names(result.query)
    dated = [k for k in keys if pd.api.types.is_datetime64_any_dtype(rows[k])]
    if dated:
        dates = pd.DatetimeIndex(rows[dated[0]])
        return None if dates.hasnans else dates
    if "year" not in called or "year" not in keys:
        return None
    year = pd.to_numeric(rows["year"], errors="coerce")
    month = pd.to_numeric(rows["month"], errors="coerce") if "month" in keys else 1
    dates = pd.to_datetime(pd.DataFrame({"year": year, "month": month, "day": 1}), errors="coerce")
    return None if dates.isna().any() else pd.DatetimeIndex(dates)


def _selected_label(table: pd.DataFrame, result: Result, tf: str) -> str | None:
    """The bar label's column when the query's own calendar key took its name and holds
    what the label would: ``year()`` selected on yearly bars (2008 … 2025). The engine keeps
    the query's column; its numbers still date the bars, which were drawn as a histogram of
    the years ("number of years", "median = 2,016.5") with the returns left out."""
    label = bar_label(tf)
    if tf != "yearly" or label is None or label.column not in table.columns:
        return None  # month() on monthly bars is 1 … 12, no month of any year
    if not is_number(table[label.column]):
        return None
    return label.column if calendar_keys(result.query, [label.column]) else None


def dated_by_label(table: pd.DataFrame, result: Result) -> pd.DataFrame | None:
    """Bars of a selection ("select": "ret" on monthly bars) keep only their label: their
    dates, from it, so they are drawn over time like any bars, not as a histogram."""
    tf = timeframe(result)
    selected = _selected_label(table, result, tf) if table_label(table, tf) is None else None
    label = selected or table_label(table, tf)
    if label is None or "timestamp" in table.columns:
        return None
    dates = label_dates(table[label], tf)
    if dates is None or np.isnat(dates).any():
        return None
    if selected:  # the years as the label names them, first: "highest 2023", not 2023-01-01
        texts = table[label].astype(str).astype(object)
        table = table.drop(columns=label)
        table.insert(0, label, texts)
    return table.assign(timestamp=dates)
