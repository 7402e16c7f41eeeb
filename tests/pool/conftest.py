"""A few days of minute bars in a temporary data directory, for worker processes to load fast.

Workers are spawned: they read ``BARB_DATA_DIR`` from the environment when they start, so the
fixture sets it before a pool is created.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from barb.data.store import DataMeta, data_path, write_bars
from barb.sessions import minutes_of_day, trading_dates
from barb.settings import EngineSettings

DAYS = pd.bdate_range("2024-03-04", "2024-03-15")


def small_bars() -> pd.DataFrame:
    """Every minute from 18:00 the evening before to 17:00 on ten weekdays, random walk."""
    rng = np.random.default_rng(3)
    stamps = [
        pd.date_range(day - pd.Timedelta(hours=6), day + pd.Timedelta(hours=17), freq="1min")[:-1]
        for day in DAYS
    ]
    ts = stamps[0].append(stamps[1:])
    close = 18000 + np.cumsum(rng.choice([-0.25, 0.0, 0.25], size=len(ts)))
    open_ = np.concatenate(([close[0]], close[:-1]))
    frame = pd.DataFrame(
        {
            "timestamp": ts.values.astype("datetime64[ns]"),
            "open": open_,
            "high": np.maximum(open_, close) + 0.25,
            "low": np.minimum(open_, close) - 0.25,
            "close": close,
            "volume": rng.integers(1, 500, len(ts)).astype(np.int64),
        }
    )
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minutes_of_day(frame["timestamp"])
    return frame


@pytest.fixture(scope="session")
def small_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir: Path = tmp_path_factory.mktemp("pool_data")
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


@pytest.fixture
def small_data(small_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BARB_DATA_DIR", str(small_data_dir))
    return small_data_dir


@pytest.fixture(scope="session")
def two_instrument_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same ten days as NQ and as ES (ES a tenth of NQ's prices, so answers differ)."""
    data_dir: Path = tmp_path_factory.mktemp("queue_data")
    frame = small_bars()
    for symbol, scale in (("NQ", 1.0), ("ES", 0.1)):
        bars = frame.copy()
        for column in ("open", "high", "low", "close"):
            bars[column] = bars[column] * scale
        meta = DataMeta(
            instrument=symbol,
            timezone="America/New_York",
            source="synthetic",
            description="ten days of test bars",
            first_date=dt.date(2024, 3, 4),
            last_date=dt.date(2024, 3, 15),
            rows=len(bars),
        )
        write_bars(bars, meta, data_path(symbol, EngineSettings(data_dir=data_dir)))
    return data_dir
