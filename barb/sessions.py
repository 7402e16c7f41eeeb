"""Trading dates and session windows.

A bar belongs to the trading date on which its Globex day ends: bars at or after the
instrument's ``trading_day_start`` (18:00 ET for CME products) count for the next weekday, so
the Sunday-evening open belongs to Monday and sessions that cross midnight (ETH, OVERNIGHT,
ASIAN) are never split across two dates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.instruments import SessionSpec

MINUTES_PER_DAY = 24 * 60


def trading_dates(timestamps: pd.Series | pd.DatetimeIndex, day_start_minute: int) -> np.ndarray:
    """Trading date (datetime64[ns] at midnight) of each wall-clock bar-open timestamp."""
    values = np.asarray(timestamps, dtype="datetime64[ns]")
    days = values.astype("datetime64[D]")
    minute = minutes_of_day(values)
    days = days + (minute >= day_start_minute).astype("timedelta64[D]")
    # np.busday_offset rolls Saturday/Sunday forward to Monday.
    days = np.busday_offset(days, 0, roll="forward")
    return days.astype("datetime64[ns]")


def minutes_of_day(timestamps: np.ndarray | pd.Series | pd.DatetimeIndex) -> np.ndarray:
    """Minutes after midnight (0..1439) of each wall-clock timestamp, as int16."""
    values = np.asarray(timestamps, dtype="datetime64[ns]")
    since_midnight = values - values.astype("datetime64[D]")
    return (since_midnight // np.timedelta64(1, "m")).astype(np.int16)


def session_mask(minute: np.ndarray, spec: SessionSpec) -> np.ndarray:
    """True for bars whose open lies in the session's [start, end) window."""
    start, end = spec.start_minute, spec.end_minute
    if spec.crosses_midnight:
        return (minute >= start) | (minute < end)
    return (minute >= start) & (minute < end)


def minutes_into_session(minute: np.ndarray, spec: SessionSpec) -> np.ndarray:
    """Minutes since the session opened (0 at the open), for bucket alignment."""
    return (minute.astype(np.int32) - spec.start_minute) % MINUTES_PER_DAY
