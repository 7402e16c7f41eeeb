"""Every word a chart writes, from the ``barb`` gettext catalog (``locales/*/barb.po``).

Code asks ``Words`` for a key and never branches on the language; lists are space-separated
words and date formats are separated by ``|`` in the catalog. Numbers are written by Babel
for the locale (``value_text.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from barb.column_units import SHARE
from barb.column_words import key_after_by
from barb.i18n import DEFAULT, N_, Language, language, text
from barb.time_zones import zone_name

#: What the rows are called, by kind.
_ROWS = {
    "daily": N_("rows.daily"),
    "weekly": N_("rows.weekly"),
    "monthly": N_("rows.monthly"),
    "quarterly": N_("rows.quarterly"),
    "yearly": N_("rows.yearly"),
    "other": N_("rows.other"),
    "groups": N_("rows.groups"),
}
#: The same after a number of them, in the form that number takes ("1 day", "2 дня").
_COUNTED_ROWS = {
    "daily": N_("counted_rows.daily"),
    "weekly": N_("counted_rows.weekly"),
    "monthly": N_("counted_rows.monthly"),
    "quarterly": N_("counted_rows.quarterly"),
    "yearly": N_("counted_rows.yearly"),
    "other": N_("counted_rows.other"),
    "groups": N_("counted_rows.groups"),
}
#: The rows "out of" a number of them, in the form that number takes after "of" ("of 521
#: weeks"; in Russian the genitive, "из 521 недели", "из 941 недели", "из 12 месяцев").
_OF_ROWS = {
    "daily": N_("of_rows.daily"),
    "weekly": N_("of_rows.weekly"),
    "monthly": N_("of_rows.monthly"),
    "quarterly": N_("of_rows.quarterly"),
    "yearly": N_("of_rows.yearly"),
    "groups": N_("of_rows.groups"),
    "bars": N_("of_rows.bars"),  # bars with no calendar name (minutes, hours)
}
#: A where's mean over all the period's rows, by what the rows are ("all days: 52.4%",
#: «все дни: 52,4%»), beside the answer over the rows it kept.
_BASELINE = {
    "daily": N_("baseline.daily"),
    "weekly": N_("baseline.weekly"),
    "monthly": N_("baseline.monthly"),
    "quarterly": N_("baseline.quarterly"),
    "yearly": N_("baseline.yearly"),
    "other": N_("baseline.other"),
}
#: Another clock than the exchange's, by its tz database zone, as a chart names it in each
#: language: a Russian headline read «16:30 (Moscow)» where a Russian trader writes «МСК»;
#: "Moscow" and "MSK" are one clock and read as one name.
_CLOCKS = {
    "Europe/Moscow": N_("clock.Europe/Moscow"),
    "Europe/London": N_("clock.Europe/London"),
    "Europe/Berlin": N_("clock.Europe/Berlin"),
    "Asia/Tokyo": N_("clock.Asia/Tokyo"),
    "America/New_York": N_("clock.America/New_York"),
    "America/Chicago": N_("clock.America/Chicago"),
    "UTC": N_("clock.UTC"),
}
#: The period a count is per ("days per year").
_PER = {
    "year": N_("per.year"),
    "month": N_("per.month"),
    "week": N_("per.week"),
    "day": N_("per.day"),
}
#: The group keys the engine names after their call (``year()`` → year), as an axis names them.
_KEYS = {
    "year": N_("key.year"),
    "quarter": N_("key.quarter"),
    "month": N_("key.month"),
    "week": N_("key.week"),
    "weekday": N_("key.weekday"),
    "dayname": N_("key.dayname"),
    "dayofweek": N_("key.weekday"),
    "date": N_("key.date"),
    "hour": N_("key.hour"),
    "time": N_("key.time"),
}
#: A unit word after a number ("245 points") and naming an axis ("range (points)").
_UNITS = {
    "points": (N_("unit.points"), N_("axis_unit.points")),
    "dollars": (N_("unit.dollars"), N_("axis_unit.dollars")),
    "ticks": (N_("unit.ticks"), N_("axis_unit.ticks")),
    "contracts": (N_("unit.contracts"), N_("axis_unit.contracts")),
    "days": (N_("unit.days"), N_("axis_unit.days")),
    "weeks": (N_("unit.weeks"), N_("axis_unit.weeks")),
    "months": (N_("unit.months"), N_("axis_unit.months")),
    "quarters": (N_("unit.quarters"), N_("axis_unit.quarters")),
    "years": (N_("unit.years"), N_("axis_unit.years")),
    "bars": (N_("unit.bars"), N_("axis_unit.bars")),
    "pp": (N_("unit.pp"), N_("axis_unit.pp")),
    "percentile": (N_("unit.percentile"), N_("axis_unit.percentile")),
}
#: Units whose number is an ordinal, with the number: "100th percentile" («100-й
#: перцентиль»), where "100 percentile" read as a count and «100 перцентилей» as a hundred.
_ORDINALS = {"percentile": N_("ordinal.percentile")}
#: The same of a number with a fraction, which has no ordinal: "percentile rank 66.93".
_FRACTIONS = {"percentile": N_("fraction.percentile")}

#: The groups a headline names for their largest and smallest value, by the headline's form
#: (with the column's name, per series, with marks for the words) and whether the
#: value is a count: a count's are the most and least often. "максимум Пн 85, минимум Чт 31"
#: of the weekdays making the week's low read as the low being on Thursday: in Russian a
#: value's are "больше всего / меньше всего", never the words of a price's high and low.
_EXTREMES = {
    ("named", False): N_("highest_lowest"),
    ("series", False): N_("series_highest_lowest"),
    ("short", False): N_("highest_lowest_short"),
    ("marks", False): N_("highest_lowest_marks"),
    ("named", True): N_("most_least"),
    ("series", True): N_("series_most_least"),
    ("short", True): N_("highest_lowest_short"),
    ("marks", True): N_("highest_lowest_marks"),
}
#: The same of a column at or below zero (a drawdown, a loss), the lowest first: its
#: highest is the smallest loss, and "max_dd: highest Dec −1.1%" read as the deepest
#: drawdown, "больше всего" as the most of it. Lowest and highest are true of any sign
#: (in Russian "ниже всего / выше всего", not the amounts "больше / меньше").
_BELOW_ZERO = {
    "named": N_("lowest_highest"),
    "series": N_("series_lowest_highest"),
    "short": N_("lowest_highest_short"),
    "marks": N_("lowest_highest_marks"),
}
#: A short list ranked from its lowest value, the headline's form and its shorter one, and
#: the same of a list at or below zero: "total_pts: меньше всего −912,8 пункта" called the
#: worst losing run the least.
_RANKED_LOWEST = {
    False: (N_("ranked_lowest"), N_("ranked_lowest_short")),
    True: (N_("ranked_below_zero"), N_("ranked_below_zero_short")),
}


@dataclass(frozen=True)
class Words:
    """The words of one language; ``words("key", name=...)`` fills a text."""

    language: Language

    def __call__(self, key: str, **values: object) -> str:
        return text("barb", key, self.language, **values)

    @property
    def weekdays(self) -> list[str]:
        return text("barb", N_("weekdays"), self.language).split(" ")

    @property
    def months(self) -> list[str]:
        return text("barb", N_("months"), self.language).split(" ")

    @property
    def date_formats(self) -> list[str]:
        """Matplotlib's ConciseDateFormatter formats, year down to seconds."""
        return text("barb", N_("date_formats"), self.language).split("|")

    @property
    def date_zero_formats(self) -> list[str]:
        return text("barb", N_("date_zero_formats"), self.language).split("|")

    def flag(self, name: str, value: object) -> str:
        """A yes/no value named with its column: "dec: yes", "golden: нет" (the Russian
        «не golden» glued a word to an English name); None, a condition unknown on that row
        (next() past the data's end), "up: n/a"."""
        if value is None:
            return f"{name}: {self('no_value')}"
        return f"{name}: {self('flag.yes') if value else self('flag.no')}"

    def by_key(self, name: str) -> str | None:
        """A group key the engine named after its call as the subtitle's "by" takes it
        ("month", «месяцу»); None for any other."""
        return key_after_by(name, self.language)

    def key(self, name: str) -> str:
        """A group key the engine named after its call (``year``, ``hour``), in the
        language; any other name as written."""
        found = _KEYS.get(name)
        return name if found is None else self(found)

    @staticmethod
    def names_key(call: str) -> bool:
        """Whether a key made by ``call`` (``dayname``) has a word, whatever it is named."""
        return call in _KEYS

    def clock(self, written: str) -> str:
        """The name of the clock a query wrote (``'Moscow'``, ``'MSK'``, ``'Europe/Moscow'``)
        in the language: "MSK", «МСК»; a zone without a name of its own as written."""
        found = _CLOCKS.get(zone_name(written) or "")
        return written if found is None else self(found)

    def per(self, period: str) -> str:
        return self(_PER[period])

    def extremes(
        self, form: str, *, count: bool = False, below_zero: bool = False, **values: object
    ) -> str:
        """The group with the largest value and the one with the smallest, ``high`` and
        ``low``, in the headline's ``form`` (``named``, ``series``, ``short``, ``marks``):
        highest and lowest, for a ``count`` most and least often, and of a column
        ``below_zero`` lowest and highest, the lowest first."""
        if below_zero and not count:
            return self(_BELOW_ZERO[form], **values)
        return self(_EXTREMES[form, count], **values)

    def ranked_lowest(self, *, below_zero: bool, short: bool = False, **values: object) -> str:
        """The first of a list ranked from its lowest value (``label``, ``value``, and the
        column's ``name`` unless ``short``)."""
        return self(_RANKED_LOWEST[below_zero][short], **values)

    def rows(self, timeframe: str, *, groups: bool = False, count: int | None = None) -> str:
        """What the rows are called: days for daily bars, weeks for weekly…, else bars; the
        groups of a first stage when a ``then`` stage reads them. After a ``count`` of them,
        the word that number takes ("1 day", "2 дня", "5 дней")."""
        kind = "groups" if groups else timeframe if timeframe in _ROWS else "other"
        if count is None:
            return self(_ROWS[kind])
        return text("barb", _COUNTED_ROWS[kind], self.language, plural_of=count)

    def of_rows(self, timeframe: str, count: int, *, groups: bool = False) -> str | None:
        """The rows after "of ``count``" ("of 521 weeks", "из 521 недели"); None for bars
        of a timeframe with no calendar name (minutes, hours)."""
        kind = "groups" if groups else timeframe
        if kind not in _OF_ROWS:
            return None
        return text("barb", _OF_ROWS[kind], self.language, plural_of=count)

    def baseline(self, timeframe: str, value: str) -> str:
        """A mean over all the period's rows, written ``value``: "all days: 52.4%" for daily
        bars, "all bars: …" for bars with no calendar name (minutes, hours)."""
        return self(_BASELINE.get(timeframe, _BASELINE["other"]), value=value)

    def unit(
        self, unit: str | None, *, axis: bool = False, value: float | Decimal | None = None
    ) -> str | None:
        """A unit word after the number ``value`` ("245 points", "1 day"; in Russian "2 дня",
        "5 дней"), or naming an axis ("range (points)"); "%" and "price" are not words."""
        if unit is None:
            return None
        if unit == SHARE:  # a share of rows is written as a percent
            return "%"
        if unit == "price":  # only ever names an axis: "sma50 (price)", in Russian too
            return self("price")
        keys = _UNITS.get(unit)
        if keys is None:
            return unit
        if axis:
            return self(keys[1])
        return text("barb", keys[0], self.language, plural_of=value)

    def with_unit(self, number: str, unit: str, value: float | Decimal | None) -> str:
        """The number written ``number`` (of ``value``) and its unit's word in the form the
        number takes ("245 points", "2 дня"), or as its ordinal ("100th percentile")."""
        ordinal = _ORDINALS.get(unit)
        if ordinal is not None and value is not None and not float(value).is_integer():
            # "66.93th percentile", «66,93-й перцентиль»: no ordinal of a fraction
            return self(_FRACTIONS[unit], value=number)
        if ordinal is not None:
            return text("barb", ordinal, self.language, ordinal_of=value, value=number)
        return f"{number} {self.unit(unit, value=value)}"


def words_for(code: str | None) -> Words:
    """The words of the language ``code``; English for a language Barb does not speak."""
    return Words(language(code))


ENGLISH = Words(DEFAULT)
