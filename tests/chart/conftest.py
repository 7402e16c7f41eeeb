"""Second implementations for the charts of real results: DuckDB over the sample's minute
files, never Barb's engine."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pandas as pd
import pytest
from engine_results import RTH

from barb.data.store import data_path
from barb.settings import EngineSettings


@pytest.fixture(scope="module")
def con(sample_settings: EngineSettings) -> Iterator[duckdb.DuckDBPyConnection]:
    """Views ``nq`` and ``es`` over the full sample's minute bars."""
    con = duckdb.connect()
    for symbol in ("NQ", "ES"):
        path = data_path(symbol, sample_settings)
        con.execute(f"CREATE VIEW {symbol.lower()} AS SELECT * FROM read_parquet('{path}')")
    yield con
    con.close()


@pytest.fixture(scope="module")
def days(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """NQ's RTH days: open, high, low, close, volume, one row per trading date, in order."""
    return (
        con.execute(
            f"""
            SELECT trading_date AS d, arg_min(open, timestamp) AS open, max(high) AS high,
                   min(low) AS low, arg_max(close, timestamp) AS close, sum(volume) AS volume
            FROM nq WHERE {RTH} GROUP BY 1 ORDER BY 1
            """
        )
        .df()
        .set_index("d")
    )
