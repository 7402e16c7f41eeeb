"""A few days of minute bars in a temporary data directory, for worker processes to load fast.

Workers take this process's environment as it is when their pool is made (``_adopt`` in
bot/pool/runner.py) and read ``BARB_DATA_DIR`` from it, so the fixture sets it before a pool
is created.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from small_bars import small_bars, write_small_data

from barb.data.store import DataMeta, data_path, write_bars
from barb.settings import EngineSettings


@pytest.fixture(scope="session")
def small_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_small_data(tmp_path_factory.mktemp("pool_data"))


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
