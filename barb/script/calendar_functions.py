"""Functions of the trading calendar: US stock-market holidays, early closes, and a trading
date's place in its week, month, quarter or year.

CME keeps Globex open on most US holidays (MLK Day, Presidents' Day, Memorial Day,
Juneteenth, July 4, Labor Day, Thanksgiving) for a short session while the stock market is
shut, and those sessions are trading dates of their own in the data: a "Monday", a month's
first day, the next day's prev(). holiday() and early_close() let a query name them;
trading_day() counts a month's days over every trading date of the instrument, so neither a
session window without bars on an early close nor the period's edge moves the count.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from barb.errors import ArgumentError, DataError, TypeMismatch, UnknownColumn
from barb.events.rules import early_close_days, trading_days, us_market_closed
from barb.frames import last_weekday_of_period, period_start
from barb.script.builtins import _dates
from barb.script.context import EvalContext
from barb.script.functions import KIND_NAMES, Param, register, value_kind
from barb.timeframes import timeframe

# trading_day()'s units, and the calendar timeframe that labels each one's periods.
UNITS = {"week": "weekly", "month": "monthly", "quarter": "quarterly", "year": "yearly"}

_UNIT = Param("unit", "string", default="month")
# Whose days are counted: the exchange's (a futures holiday session is a day) or the US stock
# market's (it is not: the day after Labor Day is September's first, and Labor Day n/a).
_DAYS = Param("days", "string", default="exchange", choices=("exchange", "stocks"))


def _per_date(
    ctx: EvalContext, function: str, compute: Callable[[np.ndarray], np.ndarray], fill: object
) -> pd.Series:
    """``compute`` over the rows' distinct trading dates (datetime64[D]), spread to the rows;
    ``fill`` where a row has no date. Intraday frames repeat a date hundreds of times."""
    if timeframe(ctx.timeframe).calendar:
        raise ArgumentError(
            f"{function}() is about one trading date, and a {ctx.timeframe} bar spans many.",
            step=ctx.step,
            hint="Use daily (or intraday) bars.",
        )
    codes, unique = pd.factorize(_dates(ctx, function))
    values = compute(np.asarray(unique, dtype="datetime64[D]"))
    out = np.append(values, np.array([fill], dtype=values.dtype))[codes]  # -1 → fill
    return pd.Series(out, index=ctx.frame.index)


def _calendar(ctx: EvalContext, function: str) -> str:
    if ctx.calendar is None:
        raise UnknownColumn(
            f"{function}() needs the instrument's exchange calendar, which these rows lack "
            "(a second stage's rows are the first stage's results).",
            step=ctx.step,
            hint=f"Compute {function}() in the first stage's map and carry it as a column.",
        )
    return ctx.calendar


@register(
    "holiday",
    category="time",
    summary="True on a US stock-market holiday the futures traded (Christmas, New Year, RTH "
    "Good Friday have no bar).",
    example='"where": "not holiday()"',
)
def _holiday(ctx: EvalContext) -> pd.Series:
    _calendar(ctx, "holiday")  # rows of an instrument only
    return _per_date(ctx, "holiday", us_market_closed, False)


# The days around a holiday are read from the NYSE calendar, not from the rows: Christmas, New
# Year's Day and (on RTH) Good Friday have no bar, so next(holiday()) never sees them. A
# closure is a weekday the NYSE was shut: a Saturday or Sunday holiday counts on the weekday
# it is observed (Friday July 3, Monday Dec 26), and one with no observed weekday (New Year's
# Day 2022, a Saturday) not at all; an early close (Christmas Eve, the day after
# Thanksgiving) is a trading day, not a closure. Unplanned closures (Sandy 2012) count.
def _closed_beside(ctx: EvalContext, function: str, step: int) -> pd.Series:
    """Whether the weekday after (step 1) or before (step -1) each row's trading date, weekends
    skipped, is an NYSE closure."""
    _calendar(ctx, function)  # rows of an instrument only

    def closed(days: np.ndarray) -> np.ndarray:
        roll = "forward" if step > 0 else "backward"
        return us_market_closed(np.busday_offset(days + step, 0, roll=roll))

    return _per_date(ctx, function, closed, False)


@register(
    "pre_holiday",
    category="time",
    summary="True when the next weekday is an NYSE closure (observed dates; not early closes).",
    example='"where": "pre_holiday() and not holiday()"',
)
def _pre_holiday(ctx: EvalContext) -> pd.Series:
    return _closed_beside(ctx, "pre_holiday", 1)


@register(
    "post_holiday",
    category="time",
    summary="True when the previous weekday is one.",
    example='"where": "post_holiday()"',
)
def _post_holiday(ctx: EvalContext) -> pd.Series:
    return _closed_beside(ctx, "post_holiday", -1)


@register(
    "early_close",
    category="time",
    summary="True when the exchange closed early (holidays, day after Thanksgiving…).",
    example='"where": "not early_close()"',
)
def _early_close(ctx: EvalContext) -> pd.Series:
    early = early_close_days(_calendar(ctx, "early_close"))
    return _per_date(ctx, "early_close", lambda days: np.isin(days, early), False)


def _unit(ctx: EvalContext, function: str, unit: str) -> str:
    key = unit.strip().lower()
    if key not in UNITS:
        raise ArgumentError(
            f"{function}() counts within a week, month, quarter or year, not {unit!r}.",
            step=ctx.step,
            hint=f"e.g. {function}('month')",
        )
    return UNITS[key]


def _all_dates(ctx: EvalContext, function: str, period: str) -> np.ndarray:
    """The instrument's trading dates (datetime64[D]), with the exchange's own days added in
    the periods the data starts and ends in: the last month's days left count to the
    month's real end, not to the data's."""
    if ctx.trading_dates is None:
        _calendar(ctx, function)  # raises: no instrument behind these rows
        raise AssertionError("an instrument's rows come with their trading dates")
    dates = np.asarray(ctx.trading_dates(), dtype="datetime64[D]")
    if not len(dates) or ctx.calendar is None:
        return dates
    try:
        exchange = trading_days(ctx.calendar)
    except DataError:  # no known calendar: the data's dates only
        return dates
    begins = period_start(dates[:1], period)[0].astype("datetime64[D]")
    ends = last_weekday_of_period(dates[-1], period).astype("datetime64[D]")
    before = exchange[(exchange >= begins) & (exchange < dates[0])]
    after = exchange[(exchange > dates[-1]) & (exchange <= ends)]
    return np.concatenate([before, dates, after])


def _positions(ctx: EvalContext, function: str, unit: str, days: str, left: bool) -> pd.Series:
    period = _unit(ctx, function, unit)
    every = _all_dates(ctx, function, period)
    if days == "stocks":
        every = every[~us_market_closed(every)]
    labels = period_start(every, period).astype(np.int64)
    starts = np.flatnonzero(np.concatenate(([True], labels[1:] != labels[:-1])))
    ends = np.append(starts[1:], len(every))
    group = np.searchsorted(starts, np.arange(len(every)), side="right") - 1
    place = np.arange(len(every))
    counted = (ends[group] - 1 - place) if left else (place - starts[group] + 1)

    def lookup(days: np.ndarray) -> np.ndarray:
        at = np.minimum(np.searchsorted(every, days), max(len(every) - 1, 0))
        found = (every[at] == days) if len(every) else np.zeros(len(days), dtype=bool)
        return np.where(found, counted[at] if len(every) else 0, np.nan)

    return _per_date(ctx, function, lookup, np.nan)


@register(
    "trading_day",
    category="time",
    params=(_UNIT, _DAYS),
    summary="Number of the date in its 'week', 'month', 'quarter' or 'year' (1 = first); "
    "days='stocks' skips US holiday sessions (n/a).",
    example="trading_day('month', 'stocks') <= 3",
    unit="count",
)
def _trading_day(ctx: EvalContext, unit: str, days: str) -> pd.Series:
    return _positions(ctx, "trading_day", unit, days, left=False)


@register(
    "trading_days_left",
    category="time",
    params=(_UNIT, _DAYS),
    summary="Trading dates after it in that unit (0 = the last).",
    example="trading_days_left('month') < 1 or trading_day('month') <= 3",
    unit="count",
)
def _trading_days_left(ctx: EvalContext, unit: str, days: str) -> pd.Series:
    return _positions(ctx, "trading_days_left", unit, days, left=True)


# Calendar days between two dates: CAGR's years (days / 365.25) and "recovered in 297
# calendar days" had no form, as a date minus a date is refused (p47a Q8). A date is a date()
# column, an aggregate of one (first(date()), arg_min(date(), dd)), a second stage's date
# labels ('2020-10-23', text there) or a written date; a bar's time counts as its day.
_DAY = np.timedelta64(1, "D")


def _as_days(ctx: EvalContext, name: str, value: pd.Series) -> np.ndarray:
    """``value`` as datetime64[D] (NaT where empty); text must be dates, 'YYYY-MM-DD'."""
    kind = value_kind(value)
    if kind == "string":
        text = value.astype(object).where(value.notna())
        parsed = pd.to_datetime(text, format="ISO8601", errors="coerce")
        bad = text.notna().to_numpy() & parsed.isna().to_numpy()
        if bad.any():
            raise TypeMismatch(
                f"days_between() needs dates for {name}, got {text[bad].iloc[0]!r}.",
                step=ctx.step,
                hint="write dates as 'YYYY-MM-DD', or pass a date column: date()",
            )
        value = parsed
    elif kind != "datetime":
        raise TypeMismatch(
            f"days_between() needs dates for {name}, got {KIND_NAMES[kind]}.",
            step=ctx.step,
            hint="days_between(first(date()), last(date())); trading days are a count of rows",
        )
    stamps = pd.DatetimeIndex(value)
    if stamps.tz is not None:
        stamps = stamps.tz_localize(None)
    return stamps.to_numpy(dtype="datetime64[ns]").astype("datetime64[D]")


@register(
    "days_between",
    category="scalar",
    params=(Param("start", accepts="any"), Param("end", accepts="any")),
    summary="Calendar days from start to end.",
    example="days_between(first(date()), last(date())) / 365.25 (years: CAGR)",
    unit="count",
)
def _days_between(ctx: EvalContext, start: pd.Series, end: pd.Series) -> pd.Series:
    """``days_between('2019-12-31', '2020-10-23')`` is 297; empty where either date is."""
    days = (_as_days(ctx, "end", end) - _as_days(ctx, "start", start)) / _DAY
    return pd.Series(days, index=end.index, dtype=np.float64)
