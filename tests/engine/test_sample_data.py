"""The same questions on the full NQ sample, checked with DuckDB over the Parquet file."""

from __future__ import annotations

import duckdb
import pytest

from barb import execute
from barb.data.store import data_path

pytestmark = pytest.mark.slow

RTH = "minute >= 570 AND minute < 1020"


@pytest.fixture(scope="module")
def sample_db(sample_settings):
    con = duckdb.connect()
    path = data_path("NQ", sample_settings)
    con.execute(f"CREATE VIEW bars AS SELECT * FROM read_parquet('{path}')")
    yield con
    con.close()


def test_sample_is_marked_synthetic(sample_settings) -> None:
    result = execute({"session": "RTH", "select": "count()"}, "NQ", settings=sample_settings)
    assert result.metadata.data_source == "synthetic"
    assert str(result.metadata.period_start) == "2008-01-02"
    assert str(result.metadata.period_end) == "2026-01-07"


def test_mean_rth_range_by_year(sample_settings, sample_db) -> None:
    result = execute(
        {"session": "RTH", "from": "daily", "group_by": "year()", "select": "mean(range)"},
        "NQ",
        settings=sample_settings,
    )
    expected = sample_db.execute(
        f"""
        SELECT year(d) AS y, avg(r) AS r FROM (
            SELECT trading_date AS d, max(high) - min(low) AS r FROM bars WHERE {RTH}
            GROUP BY 1) GROUP BY 1 ORDER BY 1
        """
    ).fetchall()
    assert result.table["year"].tolist() == [y for y, _ in expected]
    assert result.table["mean_range"].tolist() == pytest.approx([r for _, r in expected])


def test_inside_days_in_2024(sample_settings, sample_db) -> None:
    """The period selects rows, it does not cut history: prev() on 2024's first day reads the
    last day of 2023."""
    result = execute(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "where": "inside_day()",
            "select": "count()",
        },
        "NQ",
        settings=sample_settings,
    )
    expected = sample_db.execute(
        f"""
        WITH d AS (SELECT trading_date AS d, max(high) AS h, min(low) AS l FROM bars
                   WHERE {RTH} GROUP BY 1),
             w AS (SELECT d, h < lag(h) OVER (ORDER BY d) AND l > lag(l) OVER (ORDER BY d)
                   AS inside FROM d)
        SELECT count(*) FROM w WHERE inside AND year(d) = 2024
        """
    ).fetchone()[0]
    assert result.summary.value == expected


def test_volume_by_hour_on_minute_bars(sample_settings, sample_db) -> None:
    result = execute(
        {
            "session": "ETH",
            "from": "1m",
            "period": "2025",
            "group_by": "hour()",
            "select": "sum(volume)",
        },
        "NQ",
        settings=sample_settings,
    )
    # ETH's trading day starts at 18:00: its hours are listed from there, as charted.
    expected = sample_db.execute(
        """SELECT hour(timestamp) AS h, sum(volume) FROM bars
           WHERE year(trading_date) = 2025 GROUP BY 1 ORDER BY (h + 6) % 24"""
    ).fetchall()
    assert result.table["hour"].tolist() == [h for h, _ in expected]
    assert result.table["sum_volume"].tolist() == [v for _, v in expected]
