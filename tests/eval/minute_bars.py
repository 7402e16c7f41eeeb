"""Bars for the eval's reference answers, built by hand from the raw minute bars.

Nothing here imports Barb: trading dates, session windows and timeframes are re-derived from
the rules the project states (instruments/*.yaml, README): a bar at or after 18:00 ET belongs
to the next weekday's trading date; a session is a [start, end) window of bar-open times;
intraday bars are aligned to the session open and never cross a trading date.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd

DATA_DIR = Path(__file__).resolve().parents[2] / "data"

# Session windows as the instrument files define them, restated: (start, end) wall clock ET.
SESSIONS: dict[str, dict[str, tuple[str, str]]] = {
    "NQ": {
        "ETH": ("18:00", "17:00"),
        "OVERNIGHT": ("18:00", "09:30"),
        "RTH": ("09:30", "17:00"),
        "RTH_OPEN": ("09:30", "10:30"),
        # The stock market's hours, to the 16:00 cash close (RTH adds the post-cash hour).
        "CASH": ("09:30", "16:00"),
    },
    "CL": {
        "ETH": ("18:00", "17:00"),
        "RTH": ("09:00", "14:30"),
    },
}
SESSIONS["ES"] = SESSIONS["NQ"]


def _minute(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


@functools.cache
def minutes(symbol: str) -> pd.DataFrame:
    """The instrument's minute bars plus our own trading date and minute of the day."""
    frame = pd.read_parquet(
        DATA_DIR / f"{symbol}.parquet",
        columns=["timestamp", "open", "high", "low", "close", "volume"],
    )
    stamp = frame["timestamp"].to_numpy(dtype="datetime64[ns]")
    day = stamp.astype("datetime64[D]")
    minute = ((stamp - day) // np.timedelta64(1, "m")).astype(np.int32)
    day = day + (minute >= 18 * 60).astype("timedelta64[D]")
    # Saturday/Sunday roll forward to Monday (the Sunday-evening open trades for Monday).
    weekday = (day.astype(np.int64) + 3) % 7  # 1970-01-01 was a Thursday
    day = day + np.where(weekday >= 5, 7 - weekday, 0).astype("timedelta64[D]")
    frame["tdate"] = day.astype("datetime64[ns]")
    frame["mod"] = minute
    return frame


def window(symbol: str, start: str, end: str) -> pd.DataFrame:
    """Minute bars whose open lies in [start, end) ET; the window may cross midnight."""
    bars = minutes(symbol)
    lo, hi = _minute(start), _minute(end)
    mod = bars["mod"]
    mask = (mod >= lo) | (mod < hi) if lo > hi else (mod >= lo) & (mod < hi)
    return bars[mask]


def session(symbol: str, name: str) -> pd.DataFrame:
    start, end = SESSIONS[symbol][name]
    return window(symbol, start, end)


def _ohlcv(grouped: pd.core.groupby.DataFrameGroupBy) -> pd.DataFrame:
    out = grouped.agg(
        timestamp=("timestamp", "first"),
        open=("open", "first"),
        high=("high", "max"),
        low=("low", "min"),
        close=("close", "last"),
        volume=("volume", "sum"),
    )
    out["range"] = out["high"] - out["low"]
    return out


@functools.cache
def daily(symbol: str, name: str = "RTH") -> pd.DataFrame:
    """One bar per trading date of the session, indexed by trading date (oldest first)."""
    return _ohlcv(session(symbol, name).groupby("tdate", sort=True))


@functools.cache
def window_daily(symbol: str, start: str, end: str) -> pd.DataFrame:
    return _ohlcv(window(symbol, start, end).groupby("tdate", sort=True))


@functools.cache
def intraday(symbol: str, name: str, step: int) -> pd.DataFrame:
    """``step``-minute bars of the session, aligned to its open, labelled by bar start."""
    start, _ = SESSIONS[symbol][name]
    bars = session(symbol, name)
    into = (bars["mod"] - _minute(start)) % 1440
    bucket = into // step
    out = _ohlcv(bars.groupby([bars["tdate"], bucket.rename("bucket")], sort=True))
    out = out.reset_index()
    # The bar's label is where its bucket starts, even if its first minute is missing.
    offset = (into.groupby([bars["tdate"], bucket]).first().to_numpy() % step).astype(int)
    out["timestamp"] = out["timestamp"] - pd.to_timedelta(offset, unit="m")
    out["hour"] = out["timestamp"].dt.hour
    return out


def calendar(days: pd.DataFrame, freq: str) -> pd.DataFrame:
    """Weekly ("W"), monthly ("M") or yearly ("Y") bars from daily bars (indexed by date)."""
    days = days.reset_index()
    if freq == "W":
        key = days["tdate"] - pd.to_timedelta(days["tdate"].dt.weekday, unit="D")
    else:
        key = days["tdate"].dt.to_period(freq).dt.start_time
    return _ohlcv(days.groupby(key, sort=True))


def in_year(frame: pd.DataFrame, year: int) -> pd.DataFrame:
    """Rows of a daily frame (indexed by trading date) in one calendar year."""
    return frame[frame.index.year == year]
