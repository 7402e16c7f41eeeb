"""What a query job sends back: a table's rows, not the period's closes its chart draws a
few signals on. Those closes (every bar of the period, up to ``MAX_EVENT_CLOSES``) were
made JSON with the result and dropped: a year of 15-minute closes took 0.7 s of a worker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from small_bars import small_bars

import barb.result
from barb import execute
from barb.settings import default_settings
from bot.pool.jobs import QueryJob, run_query_job


@pytest.fixture
def bars(small_data: Path) -> Iterator[pd.DataFrame]:
    default_settings.cache_clear()
    yield small_bars()
    default_settings.cache_clear()


def test_a_few_signals_send_their_rows_not_the_closes_drawn_behind_them(
    bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = {"session": "ETH", "from": "1h", "where": "range > 0", "select": ["timestamp"]}
    ranges = execute({**query, "select": ["timestamp", "range"]}, "NQ").table["range"]
    top = float(ranges.sort_values(ascending=False).iloc[5])
    picked = {**query, "where": f"range > {top}"}
    result = execute(picked, "NQ")
    closes, n = result.source_rows, int((ranges > top).sum())
    assert result.table is not None and len(result.table) == n and 2 <= n <= 60
    assert closes is not None and len(closes) == len(ranges)  # kept for the chart
    sizes: list[int] = []
    records = barb.result.records

    def counted(frame: pd.DataFrame) -> list[dict[str, Any]]:
        sizes.append(len(frame))
        return records(frame)

    monkeypatch.setattr(barb.result, "records", counted)
    outcome = run_query_job(QueryJob(query=picked, chart=False, csv=False))
    assert outcome.ok and outcome.rows == n
    assert [row["timestamp"] for row in outcome.preview] == [
        row["timestamp"] for row in records(result.table)
    ]
    assert "source_rows" not in outcome.result
    assert sizes == [n]  # the table's rows alone were made JSON
