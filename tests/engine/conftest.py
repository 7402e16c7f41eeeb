"""A small hand-made minute-bar data set with known structure, and DuckDB over the same bars.

The bars are built here from a seeded random walk (not with Barb's generator), written with
Barb's store, and loaded into DuckDB so that tests can compute expected answers in SQL, a
second implementation that shares no code with the engine.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from small_bars import bars_from_closes

from barb.data.store import DataMeta, data_path, write_bars
from barb.sessions import minutes_of_day, trading_dates
from barb.settings import EngineSettings

FIRST = dt.date(2024, 1, 2)
LAST = dt.date(2024, 3, 28)
HOLIDAY = dt.date(2024, 1, 15)  # no bars at all for this trading date


def make_minutes(seed: int = 7) -> pd.DataFrame:
    """Every minute from 18:00 the evening before to 17:00, each weekday but the holiday."""
    rng = np.random.default_rng(seed)
    stamps = []
    for day in pd.bdate_range(FIRST, LAST):
        if day.date() == HOLIDAY:
            continue
        start = day - pd.Timedelta(hours=6)  # 18:00 the evening before (Sunday for Monday)
        stamps.append(
            pd.date_range(start, day + pd.Timedelta(hours=17), freq="1min", inclusive="left")
        )
    ts = stamps[0].append(stamps[1:])
    n = len(ts)
    close = 17000 + np.cumsum(rng.choice([-1.0, 0.0, 1.0], size=n) * 0.25 * rng.integers(1, 8, n))
    close = np.round(close * 4) / 4
    up, down = 0.25 * rng.integers(0, 4, n), 0.25 * rng.integers(0, 4, n)
    return bars_from_closes(ts, close, rng.integers(1, 500, n), up=up, down=down)


@pytest.fixture(scope="session")
def minutes() -> pd.DataFrame:
    return make_minutes()


@pytest.fixture(scope="session")
def engine_settings(
    tmp_path_factory: pytest.TempPathFactory, minutes: pd.DataFrame
) -> EngineSettings:
    data_dir: Path = tmp_path_factory.mktemp("data")
    settings = EngineSettings(data_dir=data_dir)
    frame = minutes.copy()
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minutes_of_day(frame["timestamp"])
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description="hand-made test bars",
        first_date=FIRST,
        last_date=LAST,
        rows=len(frame),
    )
    write_bars(frame, meta, data_path("NQ", settings))
    return settings


@pytest.fixture(scope="session")
def db(minutes: pd.DataFrame) -> Iterator[duckdb.DuckDBPyConnection]:
    """DuckDB with the raw bars and its own notion of trading date and minute of day."""
    con = duckdb.connect()
    con.register("raw", minutes)
    con.execute(
        """
        CREATE TABLE bars AS
        SELECT *,
               hour(timestamp) * 60 + minute(timestamp) AS mod,
               CAST(CASE WHEN hour(timestamp) >= 18 THEN CAST(timestamp AS DATE) + 1
                         ELSE CAST(timestamp AS DATE) END AS DATE) AS tdate
        FROM raw
        """
    )
    yield con
    con.close()


# A year of RTH minutes (2023, weekdays, 09:30-16:59): twelve monthly bars, 260 daily ones.


def year_of_minutes(seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.bdate_range("2023-01-02", "2023-12-29")
    stamps = [
        pd.date_range(day + pd.Timedelta(minutes=570), periods=450, freq="1min") for day in days
    ]
    ts = stamps[0].append(stamps[1:])
    n = len(ts)
    steps = rng.choice([-1.0, 0.0, 1.0], size=n) * 0.25 * rng.integers(1, 6, n)
    close = np.round((11000 + np.cumsum(steps + 0.004)) * 4) / 4
    up, down = 0.25 * rng.integers(0, 3, n), 0.25 * rng.integers(0, 3, n)
    return bars_from_closes(ts, close, rng.integers(1, 400, n), up=up, down=down)


@pytest.fixture(scope="session")
def year_minutes() -> pd.DataFrame:
    return year_of_minutes()


@pytest.fixture(scope="session")
def year_settings(tmp_path_factory: pytest.TempPathFactory, year_minutes: pd.DataFrame):
    data_dir: Path = tmp_path_factory.mktemp("year")
    settings = EngineSettings(data_dir=data_dir)
    frame = year_minutes.copy()
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minutes_of_day(frame["timestamp"])
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description="a year of hand-made RTH bars",
        first_date=dt.date(2023, 1, 2),
        last_date=dt.date(2023, 12, 29),
        rows=len(frame),
    )
    write_bars(frame, meta, data_path("NQ", settings))
    return settings


@pytest.fixture(scope="module")
def con(sample_settings: EngineSettings) -> Iterator[duckdb.DuckDBPyConnection]:
    """DuckDB views ``nq`` and ``es`` over the full sample's minute files: a second
    implementation for the questions asked over all history."""
    con = duckdb.connect()
    for symbol in ("NQ", "ES"):
        path = data_path(symbol, sample_settings)
        con.execute(f"CREATE VIEW {symbol.lower()} AS SELECT * FROM read_parquet('{path}')")
    yield con
    con.close()
