"""Events that follow a rule and are computed, not stored: options expirations and the EIA report.

Holidays come from ``pandas_market_calendars`` (exchange calendars) and pandas'
``USFederalHolidayCalendar`` (the EIA is a federal agency and keeps federal holidays).
"""

from __future__ import annotations

import datetime as dt
import re
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from pandas.tseries.holiday import USFederalHolidayCalendar

from barb.errors import DataError

if TYPE_CHECKING:
    from pandas_market_calendars import MarketCalendar

# The dates the rules are evaluated for: Barb's data era, through the horizon for which
# exchange holiday rules are published. Beyond it a one-off closure could move a date.
RULE_COVERAGE: tuple[dt.date, dt.date] = (dt.date(2008, 1, 1), dt.date(2030, 12, 31))

# US equity and index options expire on the listing exchanges' calendar. The NYSE calendar is
# checked too because the futures calendars of pandas_market_calendars keep some days open on
# which the options market was closed (Good Friday 2025-04-18 for CME Globex Equity; Juneteenth
# 2026-06-19 for every CME calendar), and the expiration then moved to the Thursday.
OPTIONS_CALENDAR = "NYSE"

QUARTERLY_MONTHS = frozenset({3, 6, 9, 12})
EIA_TIME = dt.time(10, 30)
EIA_DELAYED_TIME = dt.time(11, 0)
EXPIRATION_TIME = dt.time(9, 30)

# Padding so that a date near the edge of the rule range can still roll to a trading day.
_PAD = dt.timedelta(days=15)

# Early closes pandas_market_calendars (5.1) lacks, by the calendar's own name: the close in
# the calendar's zone. On the national days of mourning CME halted its US equity index
# futures after the overnight session, at 08:30 CT (09:30 ET; CME's notices of 2018-12-02
# and 2024-12-30); energy and metals traded as usual, so CL's calendar has none.
MISSED_EARLY_CLOSES: dict[str, dict[dt.date, dt.time]] = {
    "CME Globex Equities": {
        dt.date(2018, 12, 5): dt.time(8, 30),  # George H. W. Bush
        dt.date(2025, 1, 9): dt.time(8, 30),  # Jimmy Carter
    },
}


@cache
def trading_days(calendar: str) -> np.ndarray:
    """Sorted open days (datetime64[D]) of an exchange calendar over the rule range (+ padding)."""
    try:
        # Imported here: the calendar library costs ~0.2 s to import and is only needed
        # when an options-expiration or EIA schedule is first built.
        import pandas_market_calendars as mcal

        cal = mcal.get_calendar(calendar)
    except RuntimeError as exc:
        raise DataError(
            f"unknown exchange calendar {calendar!r} (pandas_market_calendars)"
        ) from exc
    days = cal.valid_days(RULE_COVERAGE[0] - _PAD, RULE_COVERAGE[1] + _PAD)
    return np.asarray(days.tz_localize(None), dtype="datetime64[D]")


@cache
def early_close_days(calendar: str) -> np.ndarray:
    """Sorted days (datetime64[D]) on which an exchange calendar's session closes before its
    regular close, over the rule range: US holidays' short Globex sessions, the Friday after
    Thanksgiving, Christmas Eve, and the closes the library misses (MISSED_EARLY_CLOSES)."""
    import pandas_market_calendars as mcal

    try:
        cal = mcal.get_calendar(calendar)
    except RuntimeError as exc:
        raise DataError(
            f"unknown exchange calendar {calendar!r} (pandas_market_calendars)"
        ) from exc
    schedule = exchange_schedule(cal, RULE_COVERAGE[0] - _PAD, RULE_COVERAGE[1] + _PAD)
    days = cal.early_closes(schedule).index
    return np.asarray(days, dtype="datetime64[D]")


def exchange_schedule(cal: MarketCalendar, start: dt.date, end: dt.date) -> pd.DataFrame:
    """The sessions of a pandas_market_calendars calendar ``cal`` from ``start`` to ``end``
    (its ``schedule``), with the early closes it misses (``MISSED_EARLY_CLOSES``) applied:
    CME Globex Equities' 2018-12-05 closes at 14:30 UTC (08:30 CT), not 22:00."""
    schedule = cal.schedule(start_date=start, end_date=end)
    for day, clock in MISSED_EARLY_CLOSES.get(cal.name, {}).items():
        at = pd.Timestamp(day)
        if at in schedule.index:
            close = pd.Timestamp(dt.datetime.combine(day, clock), tz=cal.tz)
            schedule.loc[at, "market_close"] = close.tz_convert(schedule["market_close"].dt.tz)
    return schedule


@cache
def stock_market_early_closes() -> dict[np.datetime64, int]:
    """The US stock market's (NYSE's) early closes over the rule range, as the minute of the
    day (ET) it closed at: 780 (13:00) on the half days, Jul 3, the day after Thanksgiving
    and Dec 24, where the index futures trade on to 13:15. Read from the calendar's rules,
    not its schedule (0.03 s, not 1 s)."""
    import pandas_market_calendars as mcal

    cal = mcal.get_calendar(OPTIONS_CALENDAR)
    start, end = RULE_COVERAGE
    closes: dict[np.datetime64, int] = {}
    for clock, holidays in cal.special_closes:
        for day in holidays.holidays(start, end):
            closes[np.datetime64(day.date(), "D")] = clock.hour * 60 + clock.minute
    return closes


def closure_name(calendar: str, day: np.datetime64) -> str | None:
    """The name an exchange calendar gives the holiday on ``day`` (a day it is closed, or
    closes early): "Christmas", "Good Friday". None for an unnamed closure (a national day
    of mourning), an ordinary day, or an unknown calendar."""
    return _closure_names(calendar).get(np.datetime64(day, "D"))


@cache
def _closure_names(calendar: str) -> dict[np.datetime64, str]:
    """Every named holiday and early close of the calendar over the rule range. Its rules'
    names are written for programs ("Good Friday 1908+", "ThanksgivingFriday"): the year a
    rule starts is dropped and joined words are split, for a person to read."""
    import pandas_market_calendars as mcal

    try:
        cal = mcal.get_calendar(calendar)
    except RuntimeError:
        return {}
    start, end = RULE_COVERAGE
    named: dict[np.datetime64, str] = {}
    rules = [cal.regular_holidays] + [rules for _, rules in cal.special_closes]
    for holidays in rules:
        if holidays is None:
            continue
        found = holidays.holidays(start, end, return_name=True)
        for day, name in found.items():
            named.setdefault(np.datetime64(day.date(), "D"), _readable(str(name), day))
    return named


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _readable(name: str, day: pd.Timestamp) -> str:
    """'Good Friday 1908+' → 'Good Friday'; 'ThanksgivingFriday' on the Thursday (the
    library names Thanksgiving Day's early close so) → 'Thanksgiving'."""
    name = re.sub(r"\s*(?:\d{4}\+|(?:Starting|Since|Until) (?:at |in )?\d{4})$", "", name)
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).split()
    wrong_day = set(_WEEKDAYS) - {_WEEKDAYS[day.weekday()]}
    return " ".join(word for word in words if word not in wrong_day) or name


def us_market_closed(days: np.ndarray) -> np.ndarray:
    """Whether the US stock market (NYSE) was closed on each weekday trading date
    (datetime64[D]); outside the rule range nothing is known, so False."""
    closed = _us_market_holidays()
    # A binary search in the ~200 holidays: a set test against every open day cost more
    # than the question it warns about (2 ms on a 3 ms weekday query).
    found = np.searchsorted(closed, days).clip(max=len(closed) - 1)
    return closed[found] == days


@cache
def _us_market_holidays() -> np.ndarray:
    """Sorted weekdays (datetime64[D]) of the rule range on which the NYSE was closed."""
    start, end = (np.datetime64(day, "D") for day in RULE_COVERAGE)
    every = np.arange(start, end + 1, dtype="datetime64[D]")
    weekdays = every[np.is_busday(every)]
    return np.setdiff1d(weekdays, trading_days(OPTIONS_CALENDAR))


def third_friday(year: int, month: int) -> dt.date:
    first = dt.date(year, month, 1)
    # weekday(): Monday 0 .. Friday 4
    return first + dt.timedelta(days=(4 - first.weekday()) % 7 + 14)


def _months(start: dt.date, end: dt.date) -> list[tuple[int, int]]:
    out = []
    year, month = start.year, start.month
    while (year, month) <= (end.year, end.month):
        out.append((year, month))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def expirations(calendar: str, quarterly_only: bool) -> pd.DataFrame:
    """Monthly (or quarterly) options expirations: the third Friday, or the last earlier day
    open on both the instrument's calendar and the options market when that Friday is closed."""
    instrument_days = trading_days(calendar)
    options_days = trading_days(OPTIONS_CALENDAR)
    open_days = np.intersect1d(instrument_days, options_days)
    rows = []
    for year, month in _months(*RULE_COVERAGE):
        if quarterly_only and month not in QUARTERLY_MONTHS:
            continue
        friday = np.datetime64(third_friday(year, month), "D")
        # The last day open on both calendars at or before the Friday (holiday → Thursday).
        position = np.searchsorted(open_days, friday, side="right") - 1
        day = open_days[position].astype(dt.date)
        rows.append(
            {
                "date": day,
                "time": dt.datetime.combine(day, EXPIRATION_TIME),
                "scheduled": True,
                "quarterly": month in QUARTERLY_MONTHS,
                "moved_from": None if day == friday.astype(dt.date) else friday.astype(dt.date),
            }
        )
    return pd.DataFrame(rows)


def eia_releases() -> pd.DataFrame:
    """EIA Weekly Petroleum Status Report: Wednesday 10:30 ET, or Thursday 11:00 ET in a week
    whose Monday, Tuesday or Wednesday is a federal holiday. Ad-hoc delays are not modelled."""
    start, end = RULE_COVERAGE
    holidays = {d.date() for d in USFederalHolidayCalendar().holidays(start - _PAD, end + _PAD)}
    # The Wednesday of the first week in range, then every 7 days.
    wednesday = start + dt.timedelta(days=(2 - start.weekday()) % 7)
    rows = []
    while wednesday <= end:
        monday = wednesday - dt.timedelta(days=2)
        delayed = any(monday + dt.timedelta(days=i) in holidays for i in range(3))
        day = wednesday + dt.timedelta(days=1) if delayed else wednesday
        clock = EIA_DELAYED_TIME if delayed else EIA_TIME
        rows.append(
            {
                "date": day,
                "time": dt.datetime.combine(day, clock),
                "scheduled": True,
                "holiday_delay": delayed,
            }
        )
        wednesday += dt.timedelta(days=7)
    return pd.DataFrame(rows)
