"""Numbers and dates as a trader reads them: 4,512 · 245.4 · 1.27 · −5.06% · 2025-03-07."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import Formatter

from barb.charts.words import ENGLISH, Words
from barb.column_units import SHARE
from barb.i18n import decimal, millions, percent, shown_number
from barb.summary_text import value_text

# From here up, ticks read in millions (2.4M): "2,400,000" is wider than the axis's margin,
# and its first digit was cut off ("400,000").
MILLIONS = 1_000_000
# Below 1 a value's digits start after its zeros: a mean one-minute return of 1.049e-05 read
# "0.000" with a fixed 3 decimals, and weekday means 0.00108 and 0.00073 both read "0.001".
SIGNIFICANT = 3
# Past this a value is noise at any trader's scale; the cap keeps a label finite.
MAX_DECIMALS = 10
PERCENT_DECIMALS = 2  # a percent's decimals under 1,000 (``shared_decimals``)
# Digits a chart's labels take beyond its one precision so that different values read
# differently; values the same that far apart are the same to a reader.
EXTRA_DIGITS = 2


class TickFormatter(Formatter):
    """Thousands separators and only the decimals the tick step needs (4, not 4.0); from a
    million up, millions (2.4M)."""

    def __init__(self, words: Words = ENGLISH, unit: str | None = None) -> None:
        self.decimals = 0
        self.scale = 1.0
        self.words = words
        # Fractions of rows (0.6) tick as the percents their labels say (60%).
        self.share = unit == SHARE

    def set_locs(self, locs: Any) -> None:
        super().set_locs(locs)
        values = np.asarray(locs, dtype="float64") * (100 if self.share else 1)
        finite = np.abs(values[np.isfinite(values)])
        self.scale = MILLIONS if finite.size and finite.max() >= MILLIONS else 1.0
        steps = np.diff(np.sort(values)) / self.scale
        step = float(steps.min()) if steps.size else 1.0
        self.decimals = 0
        while self.decimals < MAX_DECIMALS:
            scaled = step * 10**self.decimals
            if abs(scaled - round(scaled)) <= 1e-6 * max(1.0, scaled):
                break
            self.decimals += 1

    def __call__(self, x: float, pos: int | None = None) -> str:
        if self.share:
            return signed(percent(x * 100 + 0.0, self.words.language, self.decimals))
        if self.scale != 1.0:
            return "0" if x == 0 else signed(millions(x, self.words.language))
        return number_text(x, self.decimals, self.words)


def is_finite_number(value: Any) -> bool:
    numeric = isinstance(value, (int, float, np.integer, np.floating))
    return numeric and not isinstance(value, bool) and math.isfinite(value)


def chart_decimals(values: np.ndarray) -> int:
    """One precision for a whole chart's labels, from its largest value."""
    finite = np.abs(values[np.isfinite(values)])
    if finite.size == 0 or np.all(finite == np.round(finite)):
        return 0
    top = float(finite.max())
    if top >= 1:
        return 0 if top >= 1000 else 1 if top >= 10 else 2
    return min(MAX_DECIMALS, SIGNIFICANT - 1 - math.floor(math.log10(top)))


def shared_decimals(values: np.ndarray, unit: str | None) -> int:
    """One precision for a column's values wherever a chart writes them, bars and headline
    alike (``chart_decimals``); a percent under 1,000 keeps two decimals, as the model's
    text has them: "Jul 2.092%" over a bar's "2.09%" read as two numbers, and so did a
    headline's "24.0%" beside the text's 23.95 (p47d D8). Not a share of rows, written as a
    percent of its fraction: the text gives 0.4545, and "45.5%" is its reading."""
    decimals = chart_decimals(values)
    if unit == "%" and 0 < decimals < PERCENT_DECIMALS:  # a share: as a percent first
        return PERCENT_DECIMALS
    return decimals


def summary_decimals(value: float, unit: str | None = None) -> int | None:
    """The decimals the model's summary writes ``value`` with (``summary_text.value_text``:
    four significant digits, two decimals from 100 up, no trailing zeros), in ``unit``'s
    written form (a share's as a percent: 0.2395 is 23.95%); None where it writes an
    exponent. A title had said "ret: highest 2020-10 24.0%" where the text the model
    quoted said max=23.95, and the two read as two numbers."""
    text = value_text(float(value))
    if not is_finite_number(float(value)) or "e" in text:
        return None
    decimals = len(text.partition(".")[2])
    return max(decimals - 2, 0) if unit == SHARE else decimals


def nonzero_decimals(value: float, decimals: int) -> int:
    """``decimals``, or more when they would write a nonzero value as 0 (or −0 as 0, losing
    its sign): a chart's one precision comes from its largest value, and a much smaller one
    beside it still reads as what it is (0.0001, not 0.000)."""
    if value == 0 or not math.isfinite(value) or round(abs(value), decimals) > 0:
        return decimals
    return min(MAX_DECIMALS, -math.floor(math.log10(abs(value))))


def distinct_decimals(values: np.ndarray, decimals: int) -> int:
    """``decimals``, or up to ``EXTRA_DIGITS`` more when two different values would be
    written alike: percentile ranks 100, 99.98 and 99.96 all read "100.0"."""
    finite = np.unique(values[np.isfinite(values)])
    for more in range(decimals, min(MAX_DECIMALS, decimals + EXTRA_DIGITS) + 1):
        if len(np.unique(np.round(finite, more))) == len(finite):
            return more
    return decimals


def format_all(
    values: np.ndarray, unit: str | None, words: Words = ENGLISH, *, distinct: bool = False
) -> list[str]:
    """Values of one column at one precision, the chart's (``chart_decimals``); with the
    digits that tell different values apart when ``distinct`` (a ranked list, whose equal
    labels read as a tie)."""
    share = unit == SHARE
    if share:  # one precision for the percents written, not for the fractions
        values, unit = np.asarray(values, dtype="float64") * 100, "%"
    array = np.asarray(values, dtype="float64")
    decimals = chart_decimals(array) if share else shared_decimals(array, unit)
    if distinct:
        decimals = distinct_decimals(array, decimals)
    return [format_value(v, unit, decimals=decimals, words=words) for v in values]


def format_value(
    value: Any, unit: str | None = None, *, decimals: int | None = None, words: Words = ENGLISH
) -> str:
    """A value as a trader reads it: 4,512 · 245.4 · 1.27 · −5.06% (in Russian 4 512 · 245,4)."""
    if not is_finite_number(value):
        if isinstance(value, str):
            return value
        if isinstance(value, dt.date | np.datetime64) and not pd.isna(value):
            return date_text(value)  # arg_max(date(), range): the day, not "n/a"
        return words("no_value")
    v = float(value)
    if unit == SHARE:  # a fraction of rows as a percent: 0.609 -> 60.9%
        v, unit = v * 100, "%"
    if decimals is None:
        decimals = chart_decimals(np.array([v]))
    decimals = nonzero_decimals(v, decimals)
    if unit == "%":  # the locale's percent pattern: 5.06% / 5,06 %
        return signed(percent(v + 0.0, words.language, decimals))
    return number_text(v, decimals, words)


def number_text(value: float, decimals: int, words: Words = ENGLISH) -> str:
    """``value`` with ``decimals`` digits as the language writes it (Babel's locale data:
    ``4,512.5``, ``4 512,5``), with a true minus sign."""
    return signed(decimal(value + 0.0, words.language, decimals))


def signed(text: str) -> str:
    """A true minus sign; "-0.0" rounds to plain zero."""
    if text.startswith("-") and not text.strip("-0.,%\u00a0 "):
        text = text[1:]
    return text.replace("-", "\u2212")


def with_unit(text: str, unit: str | None, words: Words = ENGLISH, value: object = None) -> str:
    """Words after the number ``value`` written as ``text`` ("points", "1 day", "2 дня");
    "%" is already glued to it. The word agrees with the number as written: 58 400.72
    shown as "58 401" is "58 401 контракт", not the "контракта" of a fraction."""
    if unit in (None, "%", SHARE, "price") or text == words("no_value"):
        return text  # "n/a", never "n/a points"
    number: float | Decimal | None = shown_number(text, words.language)
    if number is None and is_finite_number(value):
        number = float(value)  # type: ignore[arg-type]
    return words.with_unit(text, unit, number)


def date_text(value: Any, *, weekday: bool = False, words: Words = ENGLISH) -> str:
    ts = pd.Timestamp(value)
    text = ts.strftime("%Y-%m-%d %H:%M" if ts.hour or ts.minute else "%Y-%m-%d")
    return f"{words.weekdays[ts.dayofweek]} {text}" if weekday else text
