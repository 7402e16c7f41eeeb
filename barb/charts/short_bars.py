"""The session's last intraday bar when it is shorter than the rest: hourly bars start at the
session's open, so NQ's RTH (09:30-17:00) ends in a half-hour bar, 16:30-17:00, and CL's
(09:00-14:30) in 14:00-14:30. Grouped by its time, that bar is ranked against full hours (the
"lowest" mean range or volume, by construction), so the chart says which group it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from barb.charts.time_of_day import clock_kind
from barb.instruments import parse_clock
from barb.lineage import called_key_names
from barb.result import Result
from barb.timeframes import TIMEFRAMES

MINUTES_PER_DAY = 1440


@dataclass(frozen=True)
class ShortBar:
    """The group (a position in the table) that holds only the short bar, and its length."""

    at: int
    minutes: int
    # The session's end, where the short bar stops: "17:00".
    end: str


def short_bar(result: Result, table: pd.DataFrame, by: list[str]) -> ShortBar | None:
    """The group of ``table`` whose bars are all the session's short last bar; None when the
    bars fill the session evenly or the groups are not the bars' times."""
    meta = result.metadata
    found = TIMEFRAMES.get(meta.timeframe) if meta else None
    if meta is None or found is None or found.minutes is None or len(by) != 1:
        return None
    hours = _session(meta.session_hours)
    if hours is None:
        return None
    open_, length, end = hours
    step = found.minutes
    short = length % step
    if not short:
        return None
    start = (open_ + length - short) % MINUTES_PER_DAY
    starts = {(open_ + k * step) % MINUTES_PER_DAY for k in range(length // step)}
    key = by[0]
    values = table[key]
    if key == "time" and "time" in called_key_names(result.query):
        minutes = [_clock_minutes(v) for v in values]
        matches = [i for i, m in enumerate(minutes) if m == start]
    else:
        kind = clock_kind(key, values, result.query)
        if kind == "minute":
            numbers = pd.to_numeric(values, errors="coerce")
            matches = [i for i, m in enumerate(numbers) if m % MINUTES_PER_DAY == start]
        elif kind == "hour" and not any(s // 60 == start // 60 for s in starts):
            # An hour of the day that holds no other bar than the short one.
            numbers = pd.to_numeric(values, errors="coerce")
            matches = [i for i, h in enumerate(numbers) if h == start // 60]
        else:
            return None
    return ShortBar(matches[0], short, end) if len(matches) == 1 else None


def _session(hours: str | None) -> tuple[int, int, str] | None:
    """The session's open (a minute of the day), its length in minutes and its end text."""
    try:
        first, last = str(hours).split("-")
        open_, close = parse_clock(first.strip()), parse_clock(last.strip())
    except (AttributeError, ValueError):
        return None
    length = (close - open_) % MINUTES_PER_DAY or MINUTES_PER_DAY
    return open_, length, last.strip()


def _clock_minutes(value: object) -> int | None:
    """``"16:30"`` -> 990; None for what is no time of day."""
    try:
        return parse_clock(str(value)[:5])
    except ValueError:
        return None
