"""A result's values as every chart writes them: in the instrument's prices (a price, a level,
a mean close; points between prices, a range or a sum of changes) at the instrument's tick,
every other unit at the chart's own precision (``value_text``).

The general precision drops the decimals from 1,000 up and keeps one from 10: NQ's
25,788.5 read 25,789 and CL's 57.19 read 57.2 on grouped bars, in the headline, on the
one-row card and beside a value "now", prices the market never printed beside the model's
exact ones. Returns, percents, volumes and counts keep their own formats.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from barb.charts.value_text import (
    chart_decimals,
    format_all,
    format_value,
    is_finite_number,
    shared_decimals,
    summary_decimals,
    with_unit,
)
from barb.charts.words import Words
from barb.column_units import DOLLARS, POINTS, PRICE, SHARE
from barb.result import Result, result_instrument

# Units of values in the instrument's prices: a price (close, cummax(close)) and a
# difference of prices (high - low), in points or the instrument's own word for them.
PRICE_UNITS = frozenset({PRICE, POINTS, DOLLARS})


def tick_decimals(result: Result) -> int | None:
    """The digits of the instrument's tick (2 for NQ's 0.25 and CL's 0.01); None when the
    instrument is not known."""
    instrument = result_instrument(result)
    return None if instrument is None else instrument.tick_decimals


def unit_decimals(value_unit: str | None, result: Result) -> int | None:
    """The decimals a value of ``value_unit`` is written with: the tick's for a price or
    points, else None (the chart's own precision)."""
    return tick_decimals(result) if value_unit in PRICE_UNITS else None


def unit_numbers(
    values: Sequence[float] | np.ndarray,
    value_unit: str | None,
    result: Result,
    words: Words,
    *,
    distinct: bool = False,
) -> list[str]:
    """Values of one column as its bars' labels write them, without a unit word: the tick's
    decimals for prices, else one precision for all of them (``format_all``), ``distinct``
    values written differently."""
    decimals = unit_decimals(value_unit, result)
    array = np.asarray(values, dtype="float64")
    if decimals is None:
        return format_all(array, value_unit, words, distinct=distinct)
    return [format_value(v, value_unit, decimals=decimals, words=words) for v in array]


def column_decimals(
    values: Sequence[float] | np.ndarray, value_unit: str | None, result: Result
) -> int:
    """The one precision ``unit_numbers`` writes a column's values with, for writing a few
    of them (a listing's highest and lowest of 50,000 rows) as its bars do."""
    decimals = unit_decimals(value_unit, result)
    if decimals is not None:
        return decimals
    array = np.asarray(values, dtype="float64")
    if value_unit == SHARE:  # written as a percent of its fraction (``format_all``)
        return chart_decimals(array * 100)
    return shared_decimals(array, value_unit)


def unit_number(value: object, value_unit: str | None, result: Result, words: Words) -> str:
    """One value without a unit word, as the model's text gives it: ``25,788.50`` (a price at
    the tick), ``23.95%`` (``summary_decimals``: where the model read max=23.95, a title's
    "24.0%" was another number)."""
    decimals = unit_decimals(value_unit, result)
    if decimals is None and is_finite_number(value):
        decimals = summary_decimals(float(value), value_unit)  # type: ignore[arg-type]
    return format_value(value, value_unit, decimals=decimals, words=words)


def unit_text(value: object, value_unit: str | None, result: Result, words: Words) -> str:
    """One value with its unit word: ``25,788.50``, ``140.73 points``, ``2 days``, ``5.06%``."""
    return with_unit(unit_number(value, value_unit, result, words), value_unit, words, value)
