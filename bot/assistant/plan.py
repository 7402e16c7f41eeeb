"""A plain-language plan of a query, rendered from the query itself (not by the model).

The person confirms what will actually run, so the plan is derived deterministically from the
Barb Script: metric, bars, session, period, filters, grouping, order. English and Russian.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from barb.errors import QueryError
from barb.instruments import Instrument
from barb.script.ast import Call, Column, Expr, literal_value
from barb.script.parser import parse_expression, parse_select_item
from barb.script.periods import parse_period
from barb.script.query import Query, Stage, parse_query
from barb.timeframes import TIMEFRAMES

Language = Literal["en", "ru"]

_AGGREGATES: dict[str, tuple[str, str]] = {
    "mean": ("average {x}", "среднее {x}"),
    "sum": ("total {x}", "сумма {x}"),
    "max": ("maximum {x}", "максимум {x}"),
    "min": ("minimum {x}", "минимум {x}"),
    "median": ("median {x}", "медиана {x}"),
    "std": ("standard deviation of {x}", "стандартное отклонение {x}"),
    "count": ("number of bars", "количество баров"),
    "percentile": ("{p}th percentile of {x}", "{p}-й перцентиль {x}"),
    "correlation": ("correlation of {x} and {y}", "корреляция {x} и {y}"),
}
_LABELS: dict[str, tuple[str, str]] = {
    "compute": ("Compute", "Посчитаю"),
    "rows": ("Show the bars", "Покажу бары"),
    "columns": ("Show", "Покажу"),
    "bars": ("Bars", "Бары"),
    "session": ("session", "сессия"),
    "period": ("Period", "Период"),
    "all": ("all data", "все данные"),
    "new": ("New columns", "Новые колонки"),
    "filter": ("Filter", "Фильтр"),
    "group": ("by", "по"),
    "events": ("Events", "События"),
    "only": ("event days only", "только дни события"),
    "exclude": ("without event days", "без дней события"),
    "mark": ("marks event days", "отмечаю дни события"),
    "order": ("Order", "Сортировка"),
    "desc": ("highest first", "по убыванию"),
    "asc": ("lowest first", "по возрастанию"),
    "first": ("first {n} rows", "первые {n} строк"),
    "last_bars": ("the last {n} bars", "последние {n} баров"),
    "with": ("With", "Вместе с"),
    "bars_of": (
        "{symbol} bars ({prefix}open … {prefix}volume)",
        "барами {symbol} ({prefix}open … {prefix}volume)",
    ),
    "then": ("Then", "Затем"),
    "unreadable": ("The query could not be read", "Запрос не удалось прочитать"),
}


def _t(key: str, lang: Language) -> str:
    en, ru = _LABELS[key]
    return ru if lang == "ru" else en


def _metric(text: str, lang: Language) -> str:
    try:
        expr, alias = parse_select_item(text)
    except QueryError:
        return text
    words = _describe(expr, lang)
    return f"{words} ({alias})" if alias else words


def _describe(expr: Expr, lang: Language) -> str:
    if isinstance(expr, Call) and expr.name.lower() in _AGGREGATES:
        en, ru = _AGGREGATES[expr.name.lower()]
        template = ru if lang == "ru" else en
        args = [a.to_text() for a in expr.args]
        if expr.name.lower() == "count" and args:
            return ("количество баров, где " if lang == "ru" else "number of bars where ") + args[0]
        p = literal_value(expr.args[1]) if len(expr.args) > 1 else None
        return template.format(x=args[0] if args else "", y=args[1] if len(args) > 1 else "", p=p)
    return expr.to_text()


def _group_name(text: str) -> str:
    try:
        expr = parse_expression(text)
    except QueryError:
        return text
    return expr.name if isinstance(expr, Column) else expr.to_text()


def _period(query: Query, last: dt.date, lang: Language) -> str:
    try:
        period = parse_period(query.period, last)
    except QueryError:
        return query.period or ""
    if period.bars is not None:
        return _t("last_bars", lang).format(n=period.bars)
    if period.start is None and period.end is None:
        return _t("all", lang)
    start = period.start.isoformat() if period.start else "…"
    end = period.end.isoformat() if period.end else "…"
    label = f"{start} — {end}"
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
        return f"{_t('unreadable', lang)}: {exc.message}"
    lines = [_computation(query, lang)]

    timeframe = query.timeframe or "daily"
    en, ru = TIMEFRAMES[timeframe].words
    session = (query.session or instrument.default_session).upper()
    window = ""
    if session in instrument.sessions:
        spec = instrument.sessions[session]
        window = f" ({spec.start}–{spec.end} ET)"
    lines.append(
        f"{_t('bars', lang)}: {query.instrument or instrument.symbol}, "
        f"{ru if lang == 'ru' else en}, "
        f"{_t('session', lang)} {session}{window}"
    )
    lines.append(f"{_t('period', lang)}: {_period(query, data_last, lang)}")
    for join in query.join:
        if join.instrument is not None:
            bars = _t("bars_of", lang).format(symbol=join.instrument, prefix=join.prefix)
            lines.append(f"{_t('with', lang)} {bars}")
            continue
        how = _t(join.filter or "mark", lang)
        lines.append(f"{_t('events', lang)}: {(join.source or '').upper()} — {how}")
    if query.map:
        cols = "; ".join(f"{name} = {text}" for name, text in query.map.items())
        lines.append(f"{_t('new', lang)}: {cols}")
    if query.where:
        lines.append(f"{_t('filter', lang)}: {query.where}")
    lines += _ordering(query, lang)
    if query.then is not None:
        then = [_computation(query.then, lang, labelled=False)]
        if query.then.where:
            then.append(f"{_t('filter', lang)}: {query.then.where}")
        then += _ordering(query.then, lang)
        lines.append(f"{_t('then', lang)}: " + "; ".join(then))
    return "\n".join(lines)


def _computation(stage: Stage, lang: Language, *, labelled: bool = True) -> str:
    label = f"{_t('compute', lang)}: " if labelled else ""
    if stage.select:
        line = label + ", ".join(_metric(s, lang) for s in stage.select)
    elif stage.group_by:
        line = label + _describe(parse_expression("count()"), lang)
    else:
        line = _t("rows", lang)
    if stage.group_by:
        line += f", {_t('group', lang)} " + ", ".join(_group_name(g) for g in stage.group_by)
    return line


def _ordering(stage: Stage, lang: Language) -> list[str]:
    lines = []
    if stage.sort:
        order = ", ".join(
            f"{k.column} ({_t('desc' if k.descending else 'asc', lang)})" for k in stage.sort
        )
        lines.append(f"{_t('order', lang)}: {order}")
    if stage.limit:
        first = _t("first", lang).format(n=stage.limit)
        if lines:
            lines[-1] += "; " + first
        else:
            lines.append(first)
    return lines
