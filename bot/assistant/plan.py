"""A plain-language plan of a query, rendered from the query itself (not by the model).

The person confirms what will actually run, so the plan is derived deterministically from the
Barb Script: metric, bars, session, period, filters, grouping, order. English and Russian.
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np

from barb.column_units import COUNTED_ROWS
from barb.column_words import condition_text, described, plain_words, quoted
from barb.errors import QueryError
from barb.i18n import N_, decimal
from barb.instruments import Instrument
from barb.period_rows import still_open, whole_bars
from barb.script.ast import Column, referenced_columns
from barb.script.parser import parse_expression, parse_select_item
from barb.script.periods import last_whole_span, parse_period
from barb.script.query import Query, Stage, parse_query
from barb.timeframes import TIMEFRAMES, timeframe_words
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
    names = [alias] if alias else [c for c in referenced_columns(expr) if plain_words(Column(c))]
    shown = [name for name in names if not re.search(rf"\b{re.escape(name)}\b", words)]
    return f"{words} ({', '.join(shown)})" if shown else words


def _group_name(text: str, lang: Language) -> str:
    try:
        expr = parse_expression(text)
    except QueryError:
        return text
    return quoted(expr.name if isinstance(expr, Column) else expr.to_text(), lang)


def _condition(text: str, lang: Language) -> str:
    try:
        return condition_text(parse_expression(text), lang)
    except QueryError:
        return text


def _period(query: Query, last: dt.date, lang: Language, calendar: str) -> str:
    try:
        period = parse_period(query.period, last)
    except QueryError:
        return query.period or ""
    if period.bars is not None:
        return t("plan.last_bars", lang, plural_of=period.bars, n=decimal(period.bars, lang))
    if period.start is None and period.end is None:
        return t("plan.all", lang)
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
    label = f"{start.isoformat() if start else '…'} — {end.isoformat() if end else '…'}"
    return label if query.period in (None, label) else f"{query.period} ({label})"


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
    lines = [_computation(query, lang, rows=COUNTED_ROWS.get(query.timeframe or "daily", "bars"))]

    timeframe = query.timeframe or "daily"
    session = (query.session or instrument.default_session).upper()
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
            bars = t("plan.bars_of", lang, symbol=join.instrument, prefix=join.prefix)
            lines.append(t("plan.with", lang, bars=bars))
            continue
        how = t(_EVENT_DAYS[join.filter], lang)
        lines.append(t("plan.events", lang, source=(join.source or "").upper(), how=how))
    if query.map:
        cols = "; ".join(f"{name} = {text}" for name, text in query.map.items())
        lines.append(t("plan.new", lang, columns=cols))
    if query.where:
        lines.append(t("plan.filter", lang, condition=_condition(query.where, lang)))
    lines += _ordering(query, lang)
    if query.then is not None:
        then = [_computation(query.then, lang, labelled=False)]
        if query.then.where:
            then.append(t("plan.filter", lang, condition=_condition(query.then.where, lang)))
        then += _ordering(query.then, lang)
        lines.append(t("plan.then", lang, steps="; ".join(then)))
    return "\n".join(lines)


def _computation(stage: Stage, lang: Language, *, labelled: bool = True, rows: str = "bars") -> str:
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
        groups = ", ".join(_group_name(g, lang) for g in stage.group_by)
        line = t("plan.group", lang, what=line, groups=groups)
    return line


def _ordering(stage: Stage, lang: Language) -> list[str]:
    lines = []
    if stage.sort:
        order = ", ".join(f"{k.column} ({_direction(k.descending, lang)})" for k in stage.sort)
        lines.append(t("plan.order", lang, order=order))
    if stage.limit:
        first = t("plan.first", lang, plural_of=stage.limit, n=decimal(stage.limit, lang))
        if lines:
            lines[-1] += "; " + first
        else:
            lines.append(first)
    return lines


def _direction(descending: bool, lang: Language) -> str:
    return t("plan.desc", lang) if descending else t("plan.asc", lang)
