"""Other time zones' clocks, read per bar from the tz database.

The bars are stamped in the exchange's wall-clock time (an instrument's ``timezone``), and a
trader asks in their own: "10:00-11:00 Moscow", "the London open". The hours between two
clocks change with each one's daylight saving and with history (Moscow was UTC+3/+4 until
2011-03-27, UTC+4 until 2014-10-26, UTC+3 since), so a query names the zone and the engine
converts every bar with zoneinfo, never with a fixed offset.
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

import numpy as np
import pandas as pd

# What traders type for the zones they ask in: the one table of short names.
ALIASES = {
    "UTC": "UTC",
    "GMT": "UTC",
    "MSK": "Europe/Moscow",
    "Moscow": "Europe/Moscow",
    "London": "Europe/London",
    "Frankfurt": "Europe/Berlin",
    "CET": "Europe/Berlin",
    "Tokyo": "Asia/Tokyo",
    "ET": "America/New_York",
    "CT": "America/Chicago",
}
_BY_CAPITALS = {alias.upper(): zone for alias, zone in ALIASES.items()}
# How the answer names an exchange's own clock.
SHORT_NAMES = {"America/New_York": "ET", "America/Chicago": "CT", "UTC": "UTC"}
# The shift between two clocks is read once a day and, around each change, every quarter of
# an hour: every zone's offset is a whole quarter hour, and so is each change.
_STEP = pd.Timedelta(minutes=15)
# The years a zone's shift is tabulated over; bars outside them use the nearest year's.
_FIRST_DAY, _LAST_DAY = dt.date(1990, 1, 1), dt.date(2040, 1, 1)


def zone_name(text: str) -> str | None:
    """The IANA name of a zone as written ('MSK', 'london', 'Europe/Moscow'), None if unknown.

    >>> zone_name("msk")
    'Europe/Moscow'
    """
    cleaned = text.strip()
    alias = _BY_CAPITALS.get(cleaned.upper())
    if alias is not None:
        return alias
    return _zones_by_case().get(cleaned.lower())


@cache
def _zones_by_case() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


def aliases_text() -> str:
    """The short names a zone may be written with, for an error's hint: 'UTC, GMT (UTC), MSK
    (Europe/Moscow), …'."""
    return ", ".join(
        alias if alias == zone else f"{alias} ({zone})" for alias, zone in ALIASES.items()
    )


def short_name(zone: str) -> str:
    """'ET' for America/New_York; a zone without a short name keeps its IANA name."""
    return SHORT_NAMES.get(zone, zone)


def zone_minutes(timestamps: np.ndarray, minute: np.ndarray, home: str, zone: str) -> np.ndarray:
    """The minute of the day (0..1439, int16) each bar opens at on ``zone``'s clock.

    ``timestamps`` are naive wall-clock times in ``home`` and ``minute`` their minute of the
    day. 02:00 ET on 2012-06-01 is 10:00 in Moscow (UTC+4 then): 600.
    """
    shifts = zone_shifts(timestamps, home, zone)
    return ((minute.astype(np.int32) + shifts) % (24 * 60)).astype(np.int16)


def zone_shifts(timestamps: np.ndarray, home: str, zone: str) -> np.ndarray:
    """The minutes ``zone``'s clock is ahead of ``home``'s (int32) at each of ``timestamps``,
    naive wall-clock times in ``home``: Moscow is 480 ahead of New York at 09:30 ET on
    2024-01-02 and 420 on 2024-07-01 (the US on summer time, Moscow on none)."""
    starts, shifts = _shifts(home, zone)
    values = np.asarray(timestamps, dtype="datetime64[ns]")
    at = np.maximum(np.searchsorted(starts, values, side="right") - 1, 0)
    return shifts[at]


def home_times(naive: pd.DatetimeIndex, zone: str, home: str) -> pd.DatetimeIndex:
    """``zone``'s wall-clock times as ``home``'s (a time the change skips reads as the one
    after it; a repeated one as its first)."""
    there = naive.tz_localize(zone, ambiguous=True, nonexistent="shift_forward")
    return there.tz_convert(home).tz_localize(None)


@cache
def _shifts(home: str, zone: str) -> tuple[np.ndarray, np.ndarray]:
    """Where (naive ``home`` times, ascending) the minutes ``zone`` is ahead of ``home``
    change, and that shift from each on."""
    ZoneInfo(home), ZoneInfo(zone)  # raise on a name the tz database lacks
    days = pd.date_range(_FIRST_DAY, _LAST_DAY, freq="D") + pd.Timedelta(hours=12)
    daily = _shift(days, home, zone)
    starts, shifts = [days[0] - pd.Timedelta(days=1)], [daily[0]]
    for i in np.flatnonzero(np.diff(daily)) + 1:
        grid = pd.date_range(days[i - 1], days[i], freq=_STEP)
        fine = _shift(grid, home, zone)
        changed = int(np.argmax(fine == daily[i]))
        starts.append(grid[changed])
        shifts.append(daily[i])
    return (
        np.asarray(pd.DatetimeIndex(starts), dtype="datetime64[ns]"),
        np.asarray(shifts, dtype=np.int32),
    )


def _shift(naive: pd.DatetimeIndex, home: str, zone: str) -> np.ndarray:
    """Minutes ``zone``'s clock is ahead of ``home``'s at each naive ``home`` time."""
    local = naive.tz_localize(home, ambiguous=True, nonexistent="shift_forward")
    there = local.tz_convert(zone).tz_localize(None)
    return ((there - naive) // pd.Timedelta(minutes=1)).to_numpy(dtype=np.int32)
