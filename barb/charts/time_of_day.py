"""Times of day on a chart: an axis that reads ``09:30`` rather than ``570``, and the bar
grid of a result's session (where its bars start, whether it crosses midnight).

Which columns hold a time of day is read from the query in ``barb.time_keys`` (the engine
orders groups by it too); the names are kept here for the charts that import them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.axis import Axis
from matplotlib.ticker import FuncFormatter, MultipleLocator

from barb.charts.value_text import is_finite_number
from barb.charts.words import Words
from barb.instruments import load_instrument
from barb.result import Result
from barb.time_keys import (
    MINUTES_PER_DAY,
    calendar_part,
    clock_kind,
    clock_text,
    is_clock_name,
    no_time_marker,
    time_kind,
    zoned_clock,
)
from barb.timeframes import timeframe

__all__ = [
    "MINUTES_PER_DAY",
    "BarGrid",
    "bar_grid",
    "calendar_part",
    "calendar_text",
    "clock_axis",
    "clock_kind",
    "is_clock_name",
    "no_time_marker",
    "part_text",
    "time_kind",
    "time_text",
    "value_kind",
]

CLOCK_STEPS = (15, 30, 60, 120, 180, 240, 360, 720, 1440)  # minutes between clock ticks


def calendar_text(value: Any, part: str, words: Words) -> str | None:
    """A place in the calendar as a label, not a magnitude: the year ``2025`` (never
    "2,025"), ``Q3``, ``W34``, the month's name; None for a value no such place is."""
    if isinstance(value, bool | np.bool_) or not is_finite_number(value):
        return None
    if not float(value).is_integer():
        return None
    whole = int(value)
    if part == "quarter" and 1 <= whole <= 4:
        return f"Q{whole}"  # as quarters are labelled everywhere in Barb (2023-Q1)
    if part == "weekofyear" and 1 <= whole <= 53:
        return f"W{whole}"  # ISO 8601's week notation (2024-W34), as quarters are Q3
    if part == "month" and 1 <= whole <= 12:
        return words.months[whole - 1]
    if part == "dayofweek" and 0 <= whole <= 6:  # 0 is Monday, as dayofweek() counts
        # "highest dayofweek 2 (54.4%)" made the reader count from Monday, and from 0
        return words.weekdays[whole]
    if part in ("year", "dayofyear"):
        return str(whole)
    return None


def part_text(column: str, value: Any, result: Result, words: Words) -> str | None:
    """``value`` of ``column`` written as the place in the calendar the query made it
    (``calendar_part``), else None: the answer ``most_year = 2025``, ``best = Oct``."""
    part = calendar_part(column, result.query)
    return None if part is None else calendar_text(value, part, words)


def value_kind(name: str, result: Result, values: Any = ()) -> str | None:
    """``time_kind`` of a result's column, or ``"minute"`` for minutes of the day on another
    clock (``hour('MSK') * 60 + minute('MSK')``): the answer reads "1207 (20:07 MSK)", and
    its chart drew 1,207 on an axis of numbers."""
    kind = time_kind(name, result.query, values)
    if kind is None and zoned_clock(name, result.query) is not None:
        return "minute"
    return kind


def time_text(value: Any, kind: str) -> str:
    """A minute or an hour of the day on the clock: 570 or 9.5 -> ``09:30``."""
    return clock_text(value * 60 if kind == "hour" and is_finite_number(value) else value)


def clock_axis(axis: Axis, lo: float, hi: float, kind: str = "minute") -> None:
    """An axis of minutes (or hours) of the day read on a clock, ticked at round times."""
    per = 60 if kind == "hour" else 1
    step = next(m for m in CLOCK_STEPS if (hi - lo) * per / m <= 5)
    axis.set_major_locator(MultipleLocator(step / per))
    axis.set_major_formatter(FuncFormatter(lambda x, _: _tick_text(x * per, kind)))


def _tick_text(minutes: float, kind: str) -> str:
    """A clock tick: the day's end, over the latest bars' room, is 24:00, not a second
    00:00 above 12:00."""
    return "24:00" if round(minutes) == MINUTES_PER_DAY else time_text(minutes, "minute")


@dataclass(frozen=True)
class BarGrid:
    """Where a result's intraday bars start: every ``step`` minutes from the session's open
    at ``start``, for ``length`` minutes (RTH's 1h bars: 09:30, 10:30 … 16:30)."""

    start: int
    step: int
    length: int

    def first_in_hour(self, hour: int) -> int:
        """The minute the first bar of clock hour ``hour`` starts at: hour 15 of RTH's 1h
        bars is the bar from 15:30, hour 9 of its 5m bars begins at 09:30. The hour's top
        when no bar starts in it."""
        found = self._first_in_hour(hour)
        return hour * 60 if found is None else found

    def has_hour(self, hour: int) -> bool:
        """Whether a bar starts in clock hour ``hour``: ETH has none at 17:00, so an hour 17
        of 0 days is no answer to "which hour least often"."""
        return self._first_in_hour(hour) is not None

    def _first_in_hour(self, hour: int) -> int | None:
        for minute in range(hour * 60, hour * 60 + 60):
            since_open = (minute - self.start) % MINUTES_PER_DAY
            if since_open < self.length and since_open % self.step == 0:
                return minute
        return None

    @property
    def crosses_midnight(self) -> bool:
        return self.start + self.length > MINUTES_PER_DAY


def bar_grid(result: Result) -> BarGrid | None:
    """The bar grid of an intraday result, None for daily and longer bars (or a session no
    longer known)."""
    meta = result.metadata
    if meta is None:
        return None
    try:
        tf = timeframe(meta.timeframe)
        session = load_instrument(meta.instrument).session(meta.session)
    except Exception:  # an instrument or session gone since the query ran: no grid
        return None
    if (
        not tf.intraday or session.zone is not None
    ):  # a window on another clock is other exchange hours on other dates
        return None
    return BarGrid(session.start_minute, tf.minutes or 1, session.length_minutes)
