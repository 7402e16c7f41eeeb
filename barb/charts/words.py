"""Every word a chart writes, one table per language.

Kept as plain ``key -> text`` dicts (lists as space-separated words, date formats separated by
``|``) so that they move into message catalogs as they are; code asks ``Words`` for a key and
never branches on the language. ``{name}`` placeholders are filled with ``str.format``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Language = Literal["en", "ru"]

EN: dict[str, str] = {
    "synthetic_badge": "SYNTHETIC DATA",
    "footer": "{matched} of {scanned} {timeframe} bars matched",
    "data_from": "data: {source}",
    "table_cut": "table cut for display",
    "all_bars": "all bars",
    "no_bars": "no bars",
    "price": "price",
    "rows.daily": "days",
    "rows.other": "bars",
    "rows.groups": "groups",
    "number_of": "number of {rows}",
    "per.year": "year",
    "per.month": "month",
    "per.day": "day",
    "count_per": "{rows} per {per}",
    "close_on_counted": "close on counted {rows}",
    "running_total": "running total of {label}",
    "highest": "highest",
    "lowest": "lowest",
    "below_not_drawn": "{count} {rows} below {value} not drawn",
    "above_not_drawn": "{count} {rows} above {value} not drawn",
    "median": "median",
    "mean": "mean",
    "now": "{name} now: {value}",
    "now_on": "{name} now: {value} ({date})",
    "last_value": "{name} last: {value} ({date})",
    "correlation": "r = {r} ({x} vs {y})",
    "fit_line": "fit line",
    "n_points": "{count} {rows}",
    "answer": "{name} = {value}",
    "highest_lowest": "{name}: highest {high}, lowest {low}",
    "ranked_first": "{name}: #1 {label} {value}",
    "rows_shown": "{count} rows",
    "no_value": "n/a",
    "no_group": "no {name}",
    "sub.by": "by",
    "sub.where": "where",
    "sub.with": "with",
    "sub.sorted": "sorted",
    "sub.first": "first",
    "sub.then": "then",
    "unit.points": "points",
    "unit.contracts": "contracts",
    "unit.days": "days",
    "unit.bars": "bars",
    "axis_unit.points": "points",
    "axis_unit.contracts": "contracts",
    "axis_unit.days": "days",
    "axis_unit.bars": "bars",
    "number.group": ",",
    "number.decimal": ".",
    "weekdays": "Mon Tue Wed Thu Fri Sat Sun",
    "months": "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec",
    "date_formats": "%Y|%b|%b %d|%H:%M|%H:%M|%S.%f",
    "date_zero_formats": "|%Y|%b|%b %d|%H:%M|%H:%M",
}

RU: dict[str, str] = {
    "synthetic_badge": "СИНТЕТИЧЕСКИЕ ДАННЫЕ",
    "footer": "подошло {matched} из {scanned} баров ({timeframe})",
    "data_from": "данные: {source}",
    "table_cut": "таблица сокращена",
    "all_bars": "все бары",
    "no_bars": "нет баров",
    "price": "цена",
    "rows.daily": "дней",
    "rows.other": "баров",
    "rows.groups": "групп",
    "number_of": "число {rows}",
    "per.year": "год",
    "per.month": "месяц",
    "per.day": "день",
    "count_per": "{rows} за {per}",
    "close_on_counted": "закрытие отобранных {rows}",
    "running_total": "нарастающая сумма {label}",
    "highest": "максимум",
    "lowest": "минимум",
    "below_not_drawn": "{count} {rows} ниже {value} не показано",
    "above_not_drawn": "{count} {rows} выше {value} не показано",
    "median": "медиана",
    "mean": "среднее",
    "now": "{name} сейчас: {value}",
    "now_on": "{name} сейчас: {value} ({date})",
    "last_value": "{name} последнее: {value} ({date})",
    "correlation": "r = {r} ({x} и {y})",
    "fit_line": "линия регрессии",
    "n_points": "{rows}: {count}",
    "answer": "{name} = {value}",
    "highest_lowest": "{name}: максимум {high}, минимум {low}",
    "ranked_first": "{name}: №1 {label} {value}",
    "rows_shown": "строк: {count}",
    "no_value": "н/д",
    "no_group": "не {name}",
    "sub.by": "по",
    "sub.where": "где",
    "sub.with": "с",
    "sub.sorted": "сортировка",
    "sub.first": "первые",
    "sub.then": "затем",
    "unit.points": "пунктов",
    "unit.contracts": "контрактов",
    "unit.days": "дней",
    "unit.bars": "баров",
    "axis_unit.points": "пункты",
    "axis_unit.contracts": "контракты",
    "axis_unit.days": "дни",
    "axis_unit.bars": "бары",
    "number.group": "\u202f",
    "number.decimal": ",",
    "weekdays": "Пн Вт Ср Чт Пт Сб Вс",
    "months": "янв фев мар апр май июн июл авг сен окт ноя дек",
    "date_formats": "%Y|%m.%Y|%d.%m|%H:%M|%H:%M|%S.%f",
    "date_zero_formats": "|%Y|%m.%Y|%d.%m|%H:%M|%H:%M",
}

TABLES: dict[str, dict[str, str]] = {"en": EN, "ru": RU}


@dataclass(frozen=True)
class Words:
    """The words of one language; ``words("key", name=...)`` fills a text."""

    language: str
    table: dict[str, str]

    def __call__(self, key: str, **values: object) -> str:
        return self.table[key].format(**values)

    def list(self, key: str) -> list[str]:
        return self.table[key].split(" ")

    def formats(self, key: str) -> list[str]:
        return self.table[key].split("|")

    def rows(self, timeframe: str, *, groups: bool = False) -> str:
        """What the rows are called: days for daily bars, else bars; the groups of a first
        stage when a ``then`` stage reads them."""
        if groups:
            return self.table["rows.groups"]
        return self.table["rows.daily" if timeframe == "daily" else "rows.other"]

    def unit(self, unit: str | None, *, axis: bool = False) -> str | None:
        """A unit word after a number ("245 points"), or naming an axis ("range (points)");
        "%" and "price" are not words."""
        if unit is None:
            return None
        return self.table.get(f"{'axis_unit' if axis else 'unit'}.{unit}", unit)


def words_for(language: str | None) -> Words:
    """The words of ``language``; English for a language Barb does not speak."""
    code = (language or "en").split("-")[0].lower()
    return Words(code if code in TABLES else "en", TABLES.get(code, EN))


ENGLISH = words_for("en")
