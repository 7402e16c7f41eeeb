"""Answers computed in DuckDB over the raw minute bars (a table per instrument: nq, es, cl),
shared by the engine and chart tests that ask the same question of Barb."""

from __future__ import annotations

import duckdb
import pandas as pd

RTH = "minute >= 570 AND minute < 1020"  # 09:30-17:00, NQ's and ES's RTH

# One query in the engine's and the charts' tests alike: the five 5-minute RTH bars of 2024
# with the largest |close - open|, bars aligned to the 09:30 open.
BIGGEST_5M_MOVES_2024 = {
    "session": "RTH",
    "from": "5m",
    "period": "2024",
    "map": {"move": "close - open", "abs_move": "abs(close - open)"},
    "sort": "abs_move desc",
    "limit": 5,
    "select": ["move", "range"],
}


def biggest_5m_moves_2024(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Columns ``b`` (the bar's start) and ``move``, biggest |move| first."""
    return con.execute(
        f"""
        SELECT b, arg_max(close, timestamp) - arg_min(open, timestamp) AS move
        FROM (SELECT *, time_bucket(INTERVAL 5 MINUTE, timestamp, TIMESTAMP '2000-01-01 09:30')
              AS b FROM nq WHERE {RTH} AND year(trading_date) = 2024)
        GROUP BY b ORDER BY abs(move) DESC, b LIMIT 5
        """
    ).df()


def rth_closes(con: duckdb.DuckDBPyConnection, table: str) -> pd.Series:
    """Each trading date's last RTH close of one instrument (``nq``, ``es``), by date."""
    frame = con.execute(
        f"SELECT trading_date AS d, arg_max(close, timestamp) AS c FROM {table} "
        f"WHERE {RTH} GROUP BY 1 ORDER BY 1"
    ).df()
    return frame.set_index("d")["c"]
