"""Named patterns: each catalogue entry is a valid condition, and counts match DuckDB."""

from __future__ import annotations

import pandas as pd
import pytest

from barb import execute
from barb.script.library import lookup
from barb.script.patterns import pattern_catalog

RTH = "mod >= 570 AND mod < 1020"
DAILY = f"""
    SELECT tdate, arg_min(open, timestamp) AS o, max(high) AS h, min(low) AS l,
           arg_max(close, timestamp) AS c
    FROM bars WHERE {RTH} GROUP BY tdate
"""


@pytest.mark.parametrize("name", sorted(pattern_catalog()))
def test_every_pattern_runs_as_a_where_condition(name: str, engine_settings) -> None:
    assert lookup(name) is not None
    result = execute(
        {"session": "RTH", "from": "daily", "where": f"{name}()", "select": "count()"},
        "NQ",
        settings=engine_settings,
    )
    assert result.ok, result.to_dict()
    assert 0 <= result.summary.value <= result.metadata.rows_scanned


@pytest.mark.parametrize(
    ("name", "sql"),
    [
        ("inside_day", "h < lag(h) OVER w AND l > lag(l) OVER w"),
        ("outside_day", "h > lag(h) OVER w AND l < lag(l) OVER w"),
        ("gap_up", "o > lag(c) OVER w"),
        ("full_gap_down", "o < lag(l) OVER w"),
        ("doji", "abs(c - o) <= 0.1 * (h - l) AND h > l"),
        (
            "bullish_engulfing",
            "lag(c) OVER w < lag(o) OVER w AND c > o AND o <= lag(c) OVER w AND c >= lag(o) OVER w",
        ),
    ],
)
def test_pattern_counts_match_sql(name: str, sql: str, engine_settings, db) -> None:
    result = execute(
        {"session": "RTH", "from": "daily", "where": f"{name}()", "select": "count()"},
        "NQ",
        settings=engine_settings,
    )
    expected = db.execute(
        f"SELECT count(*) FILTER (WHERE hit) FROM "
        f"(SELECT {sql} AS hit FROM ({DAILY}) WINDOW w AS (ORDER BY tdate))"
    ).fetchone()[0]
    assert result.summary.value == expected


def test_nr7_matches_a_loop(engine_settings) -> None:
    table = execute(
        {"session": "RTH", "from": "daily", "map": {"nr7": "nr7()"}}, "NQ", settings=engine_settings
    ).table
    ranges = list(table["range"])
    # The first six days of the data have no seven-day window: unknown, not false.
    expected = [None] * 6 + [ranges[i] <= min(ranges[i - 6 : i + 1]) for i in range(6, len(ranges))]
    assert [None if v is pd.NA else v for v in table["nr7"]] == expected
