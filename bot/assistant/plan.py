"""A plain-language plan of a query, rendered from the query itself (not by the model).

The person confirms what will actually run, so the plan is derived deterministically from the
Barb Script: metric, bars, session, period, filters, grouping, order. English and Russian.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import numpy as np

from barb.column_units import COUNTED_ROWS, then_rows_unit
from barb.column_words import (
    condition_text,
    counts_rows,
    described,
    key_after_by,
    plain_words,
    quoted,
)
from barb.errors import DataError, QueryError
from barb.i18n import N_, decimal
from barb.instruments import Instrument, load_instrument
from barb.period_rows import still_open, whole_bars
from barb.script.ast import Call, Column, default_name, referenced_columns
from barb.script.parser import parse_expression, parse_select_item
from barb.script.periods import last_whole_span, parse_period
from barb.script.query import JoinSpec, Query, Stage, parse_query
from barb.time_keys import key_call
from barb.timeframes import TIMEFRAMES, session_without_one, timeframe_words
from bot.texts import Language, t

#: How an event join treats the event days, by its ``filter``.
_EVENT_DAYS: dict[str | None, str] = {
    "only": N_("plan.only"),
    "exclude": N_("plan.exclude"),
    None: N_("plan.mark"),
}


def _metric(text: str, lang: Language, rows: str = "bars") -> str:
    """A select item in words, with the name the CSV and the query know it by when the
    words do not hold it: "average range", «средний диапазон (range)», "maximum range
    (top)"."""
    try:
        expr, alias = parse_select_item(text)
    except QueryError:
        return text
    words = described(expr, lang, rows)
    # A count or share names its condition's columns itself, in words or as written: "(close,
    # open)" after «доля дней, где закрытие > открытие» named no column of the CSV.
    read = [] if counts_rows(expr) else referenced_columns(expr)
    names = [alias] if alias else [c for c in read if plain_words(Column(c))]
    shown = [name for name in names if not re.search(rf"\b{re.escape(name)}\b", words)]
    return f"{words} ({', '.join(shown)})" if shown else words


def _group_name(text: str, lang: Language, query: dict[str, Any]) -> str:
    """A group key as the chart's subtitle names it: a calendar key in words ("by year",
    «по году», where «по «year()»» quoted the query's code), any other quoted."""
    try:
        expr = parse_expression(text)
    except QueryError:
        return text
    if isinstance(expr, Call) and not expr.args:
        call: str | None = expr.name.lower()
    else:
        call = key_call(expr.name, query) if isinstance(expr, Column) else None
    found = key_after_by(call, lang) if call is not None else None
    if (
        found is not None
        and isinstance(expr, Column)
        and expr.name != call  # the engine's own name for month() is no name of the query's
        and not re.search(rf"\b{re.escape(expr.name)}\b", found)
    ):
        return f"{found} ({expr.name})"  # the name the CSV and the query know it by
    if found is not None:
        return found
    return quoted(expr.name if isinstance(expr, Column) else expr.to_text(), lang)


def _condition(text: str, lang: Language) -> str:
    try:
        return condition_text(parse_expression(text), lang)
    except QueryError:
        return text


def period_span(
    query: Query, last: dt.date, calendar: str
) -> tuple[dt.date | None, dt.date | None] | None:
    """The first and last date ``query``'s period covers on data ending ``last`` (None: open
    at that end), as the plan shows them; None for a count of bars, all the data, or a
    period that cannot be read."""
    try:
        period = parse_period(query.period, last)
    except QueryError:
        return None
    if period.bars is not None or (period.start is None and period.end is None):
        return None
    start, end = period.start, period.end
    tf = TIMEFRAMES[query.timeframe or "daily"]
    whole = whole_bars(period, tf)
    if whole is not None and period.unit is not None:
        # last_2_weeks on weekly bars runs on the last 2 whole weeks, not 14 days back.
        finished = not still_open(np.datetime64(last, "ns"), tf.name, calendar)
        end = last_whole_span(1, period.unit, last, finished)[1]
        try:
            start = last_whole_span(whole, period.unit, last, finished)[0]
        except (OverflowError, ValueError):  # before the calendar: all the data there is
            start = None
    return start, end


def _period(query: Query, last: dt.date, lang: Language, calendar: str) -> str:
    span = period_span(query, last, calendar)
    if span is None:
        try:
            period = parse_period(query.period, last)
        except QueryError:
            return query.period or ""
        if period.bars is not None:
            bars = t("plan.last_bars", lang, plural_of=period.bars, n=decimal(period.bars, lang))
            if period.end is None:
                return bars
            return t("plan.bars_to", lang, bars=bars, end=period.end.isoformat())
        return t("plan.all", lang)
    start, end = span
    label = f"{start.isoformat() if start else '…'} — {end.isoformat() if end else '…'}"
    if start is not None and start == end:  # one day: "2025-12-24 (2025-12-24 — 2025-12-24)"
        label = start.isoformat()
    quarter = _quarter(start, end)
    if quarter is not None:
        # A quarter's dates do not say which quarter they are: named once, in words, with
        # them ("Q4 2025 (2025-10-01 — 2025-12-31)"), whether written "2025-Q4",
        # "last_quarter" or pinned to its dates; «2025-Q4 (…)» and «last_quarter (…)» put
        # the query's token in the person's sentence.
        return t("plan.quarter", lang, quarter=quarter, year=end.year, dates=label)
    if not (query.period or "").strip()[:1].isalpha():
        # Dates (a pinned period, "2024", "2015:") read as the dates they cover alone:
        # «2015: (2015-01-01 — …)» showed the query's token beside its own dates.
        return label
    return f"{query.period} ({label})"


def _quarter(start: dt.date | None, end: dt.date | None) -> int | None:
    """The quarter (1-4) ``start`` to ``end`` is exactly, whole; None for any other span."""
    if start is None or end is None or start.day != 1 or (start.month - 1) % 3:
        return None
    following = dt.date(start.year + start.month // 10, (start.month + 2) % 12 + 1, 1)
    if end != following - dt.timedelta(days=1):
        return None
    return (start.month - 1) // 3 + 1


def _range(start: dt.date | None, end: dt.date | None) -> str:
    return f"{start.isoformat() if start else ''}:{end.isoformat() if end else ''}"


def pinned(raw: dict[str, Any], last: dt.date, calendar: str) -> dict[str, Any]:
    """``raw`` with a period counted from the data's last date written as the dates its
    plan shows: "last_10_days" on data ending 2025-12-19 runs as "2025-12-10:2025-12-19",
    whatever bars are imported before Run is pressed (p48e: it ran 2025-12-29 — 2026-01-07,
    and nothing said so); a count of bars gets the data's last date as its end
    ("last_5_bars:2025-12-19", the last 5 bars up to it). A period written as dates and all
    the data are left as written.

    >>> pinned({"period": "ytd"}, dt.date(2025, 12, 19), "CME Globex Equity")
    {'period': '2025-01-01:2025-12-19'}
    """
    period = raw.get("period")
    if not isinstance(period, str) or not period.strip()[:1].isalpha():
        return raw
    try:
        query = parse_query(raw)
    except QueryError:
        return raw
    span = period_span(query, last, calendar)
    if span is not None:
        return {**raw, "period": _range(*span)}
    try:
        period = parse_period(query.period, last)
    except QueryError:
        return raw
    if period.bars is not None and period.end is None:
        # The last N bars up to the data's end now: an import before Run adds bars after
        # it, and last_5_bars would be 5 others.
        return {**raw, "period": f"last_{period.bars}_bars:{last.isoformat()}"}
    return raw


def render_plan(
    raw: dict | Query,
    instrument: Instrument,
    data_last: dt.date,
    lang: Language = "en",
) -> str:
    """A few lines saying what the query will compute, on which bars, over which dates."""
    try:
        query = parse_query(raw)
    except QueryError as exc:
        return t("plan.unreadable", lang, reason=exc.message)
    # A count names what it counts as the chart does: "number of days" on daily bars.
    whole = query.to_json()
    rows = COUNTED_ROWS.get(query.timeframe or "daily", "bars")
    lines = [_computation(query, lang, whole, rows=rows)]

    timeframe = query.timeframe or "daily"
    written = query.session or session_without_one(
        TIMEFRAMES[timeframe], instrument.default_session
    )
    # A named session in capitals (rth is RTH); a window as written: "10:00-11:00 Moscow"
    # read «10:00-11:00 MOSCOW».
    session = written.upper() if written.upper() in instrument.sessions else written
    window = ""
    if session in instrument.sessions:
        spec = instrument.sessions[session]
        window = f" ({spec.start}–{spec.end} ET)"
    bars = t(
        "plan.bars",
        lang,
        instrument=query.instrument or instrument.symbol,
        timeframe=timeframe_words(TIMEFRAMES[timeframe], lang),
        session=f"{session}{window}",
    )
    lines.append(bars)
    period = _period(query, data_last, lang, instrument.calendar)
    lines.append(t("plan.period", lang, period=period))
    for join in query.join:
        if join.instrument is not None:
            lines.append(t("plan.with", lang, bars=_joined_bars(join, session, lang)))
            continue
        how = t(_EVENT_DAYS[join.filter], lang)
        lines.append(t("plan.events", lang, source=(join.source or "").upper(), how=how))
    if query.map:
        cols = "; ".join(f"{name} = {text}" for name, text in query.map.items())
        lines.append(t("plan.new", lang, columns=cols))
    if query.where:
        lines.append(t("plan.filter", lang, condition=_condition(query.where, lang)))
    named = _output_words(query, lang, rows)
    lines += _ordering(query, lang, named)
    if query.then is not None:
        # A then stage reads the first stage's rows: without a select or groups of its own it
        # shows them, sorted or cut ("Then: Show the bars" said bars of weekday averages). It
        # counts those rows as the chart names them: days for groups by date(), weeks for
        # week() («количество баров (weeks)» had counted weeks as bars), else groups.
        counted = then_rows_unit(whole, query.timeframe or "daily") or "groups"
        then = []
        if query.then.select or query.then.group_by:
            then.append(_computation(query.then, lang, whole, labelled=False, rows=counted))
        if query.then.where:
            # Inside the line, lower case: «…, по месяцу; Фильтр: month in (9, 10)» read
            # as a sentence begun in the middle of another.
            condition = _condition(query.then.where, lang)
            then.append(t("plan.then_where", lang, condition=condition))
        then += _ordering(query.then, lang, named | _output_words(query.then, lang, counted))
        if then:
            lines.append(t("plan.then", lang, steps="; ".join(then)))
    return "\n".join(lines)


def _joined_bars(join: JoinSpec, session: str, lang: Language) -> str:
    """A joined instrument's bars with their session and its hours on that instrument: the
    plan said "With CL bars" over NQ's "RTH (09:30–17:00 ET)", while CL's RTH is 09:00–14:30
    (or the join names a session of its own: CL's OVERNIGHT beside NQ's RTH day)."""
    symbol = join.instrument or ""
    name = (join.session or session).upper()
    try:
        spec = load_instrument(symbol).sessions.get(name)
    except (DataError, QueryError, OSError):  # an unknown symbol: the run says so
        spec = None
    if spec is None and not re.fullmatch(r"\d\d:\d\d-\d\d:\d\d", name):
        return t("plan.bars_of", lang, symbol=symbol, prefix=join.prefix)
    hours = f" ({spec.start}–{spec.end} ET)" if spec is not None else ""
    return t("plan.bars_of_session", lang, symbol=symbol, session=name + hours, prefix=join.prefix)


def _output_words(stage: Stage, lang: Language, rows: str) -> dict[str, str]:
    """The words of each select item the stage names by the engine's name for it
    ("mean_range": "average range"), which a sort names; an alias the query gave stays."""
    named = {}
    for text in stage.select:
        try:
            expr, alias = parse_select_item(text)
        except QueryError:
            continue
        words = plain_words(expr, lang, rows)
        if alias is None and words is not None:
            named[default_name(expr)] = words
    return named


def _computation(
    stage: Stage,
    lang: Language,
    whole: dict[str, Any],
    *,
    labelled: bool = True,
    rows: str = "bars",
) -> str:
    if stage.select or stage.group_by:
        what = (
            ", ".join(_metric(s, lang, rows) for s in stage.select)
            if stage.select
            else described(parse_expression("count()"), lang, rows)
        )
        line = t("plan.compute", lang, what=what) if labelled else what
    else:
        line = t("plan.rows", lang)
    if stage.group_by:
        groups = ", ".join(_group_name(g, lang, whole) for g in stage.group_by)
        line = t("plan.group", lang, what=line, groups=groups)
    return line


def _ordering(stage: Stage, lang: Language, named: dict[str, str]) -> list[str]:
    """The sort in words: a column the select named ("mean_range") by that item's words, a
    bar column by its own; any other name as the query wrote it."""
    lines = []
    if stage.sort:
        order = ", ".join(
            f"{_sort_column(k.column, named, lang)} ({_direction(k.descending, lang)})"
            for k in stage.sort
        )
        lines.append(t("plan.order", lang, order=order))
    if stage.limit:
        first = t("plan.first", lang, plural_of=stage.limit, n=decimal(stage.limit, lang))
        if lines:
            lines[-1] += "; " + first
        else:
            lines.append(first)
    return lines


def _sort_column(column: str, named: dict[str, str], lang: Language) -> str:
    return named.get(column) or plain_words(Column(column), lang) or column


def _direction(descending: bool, lang: Language) -> str:
    return t("plan.desc", lang) if descending else t("plan.asc", lang)
