"""Ten weekdays of NQ minute bars in a data directory: for processes that must load data fast.

Worker processes (and the real `barb bot` in the kill tests) load their instrument when they
start; on the full sample that is seconds of CPU per start. Tests whose point is not the data
use this instead (``BARB_DATA_DIR``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd

from barb.data.store import DataMeta, data_path, write_bars
from barb.sessions import minutes_of_day, trading_dates
from barb.settings import EngineSettings

DAYS = pd.bdate_range("2024-03-04", "2024-03-15")


def session_stamps(first: str, last: str, closes: dict[str, str]) -> pd.DatetimeIndex:
    """The minute stamps of each weekday from ``first`` to ``last``: from 18:00 the evening
    before to 17:00, or to the early close ``closes`` names for a date ("2024-11-29":
    "13:15"). ``session_stamps("2024-11-28", "2024-11-29", {"2024-11-29": "13:15"})``
    holds 1,380 minutes for the 28th and 1,155 for the 29th."""
    stamps = []
    for day in pd.bdate_range(first, last):
        end = pd.Timedelta(closes.get(f"{day:%Y-%m-%d}", "17:00") + ":00")
        stamps.append(
            pd.date_range(day - pd.Timedelta(hours=6), day + end, freq="1min", inclusive="left")
        )
    return stamps[0].append(stamps[1:])


def bars_from_closes(
    stamps: pd.DatetimeIndex,
    close: np.ndarray,
    volume: np.ndarray,
    *,
    open_: np.ndarray | None = None,
    up: float | np.ndarray = 0.25,
    down: float | np.ndarray = 0.25,
) -> pd.DataFrame:
    """Minute bars (timestamp, open, high, low, close, volume) around hand-made closes.

    Each bar opens at the close before (the first at its own close) unless ``open_`` is
    given; its high is ``up`` above the higher of open and close, its low ``down`` below the
    lower (a scalar or one wick a bar). It draws nothing: callers draw their random wicks,
    opens and volume themselves, in their own order, so a seed gives the same bars as ever.
    ``bars_from_closes(ts, np.array([10.0, 10.5]), np.array([3, 4]))`` gives opens 10.0 and
    10.0, highs 10.25 and 10.75, lows 9.75 and 9.75.
    """
    if open_ is None:
        open_ = np.concatenate(([close[0]], close[:-1]))
    return pd.DataFrame(
        {
            "timestamp": stamps.values.astype("datetime64[ns]"),
            "open": open_,
            "high": np.maximum(open_, close) + up,
            "low": np.minimum(open_, close) - down,
            "close": close,
            "volume": np.asarray(volume).astype(np.int64),
        }
    )


def small_bars() -> pd.DataFrame:
    """Every minute from 18:00 the evening before to 17:00 on ten weekdays, random walk."""
    rng = np.random.default_rng(3)
    stamps = [
        pd.date_range(day - pd.Timedelta(hours=6), day + pd.Timedelta(hours=17), freq="1min")[:-1]
        for day in DAYS
    ]
    ts = stamps[0].append(stamps[1:])
    close = 18000 + np.cumsum(rng.choice([-0.25, 0.0, 0.25], size=len(ts)))
    frame = bars_from_closes(ts, close, rng.integers(1, 500, len(ts)))
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minutes_of_day(frame["timestamp"])
    return frame


def write_small_data(data_dir: Path) -> Path:
    """The ten days of bars as the NQ file of ``data_dir``; returns ``data_dir``."""
    frame = small_bars()
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description="ten days of test bars",
        first_date=dt.date(2024, 3, 4),
        last_date=dt.date(2024, 3, 15),
        rows=len(frame),
    )
    write_bars(frame, meta, data_path("NQ", EngineSettings(data_dir=data_dir)))
    return data_dir


def write_minutes(
    minutes: pd.DataFrame, symbol: str, settings: EngineSettings, description: str
) -> None:
    """Hand-made minute bars (timestamp, open, high, low, close, volume, ET) as the data file
    of ``symbol`` in ``settings``' data directory, with their trading dates (from 18:00) and
    minutes of the day."""
    frame = minutes.copy()
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minutes_of_day(frame["timestamp"])
    meta = DataMeta(
        instrument=symbol,
        timezone="America/New_York",
        source="synthetic",
        description=description,
        first_date=frame["trading_date"].iloc[0].date(),
        last_date=frame["trading_date"].iloc[-1].date(),
        rows=len(frame),
    )
    write_bars(frame, meta, data_path(symbol, settings))
