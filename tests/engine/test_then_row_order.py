"""A then stage's running functions run in the order the first stage listed its rows: sorted
newest first, cummin(low) in then built the minimum from the period's end back (p34a B: 25345
on 2025-12-31, its own low, for 21182.75 since 12-01), while first()/last() read time order,
with nothing said. Now said, with the form that runs them in time order. Expected values from
DuckDB over the hand-made bars (engine_settings)."""

from __future__ import annotations

import numpy as np
import pytest
from asking import RTH_DAILY, ask, warnings_with

FEBRUARY = {"period": "2024-02", "select": ["close"]}
RUNNING = {"cs": "cumsum(close)", "pc": "prev(close)"}
SAID = (
    "then ran cumsum(close), prev(close) over the rows in the first stage's sort order "
    "(sorted by timestamp descending), not in time order as first() and last() read them: "
    'for time order, drop the first stage\'s sort and sort in then ("sort": "date desc").'
)


@pytest.fixture(scope="module")
def closes(db) -> np.ndarray:
    """February 2024's RTH (09:30-17:00) closes, in time order."""
    rows = db.execute(
        """
        SELECT arg_max(close, timestamp) FROM bars
        WHERE tdate BETWEEN DATE '2024-02-01' AND DATE '2024-02-29' AND mod >= 570 AND mod < 1020
        GROUP BY tdate ORDER BY tdate
        """
    ).fetchall()
    return np.array([r[0] for r in rows])


def _order(result) -> list[str]:
    return warnings_with(result, "first stage's sort order")


def test_running_functions_after_a_newest_first_sort_are_said(engine_settings, closes) -> None:
    query = {**FEBRUARY, "sort": "timestamp desc", "then": {"map": RUNNING}}
    result = ask(query, engine_settings, **RTH_DAILY)
    newest_first = closes[::-1]
    assert result.table["cs"].to_numpy() == pytest.approx(np.cumsum(newest_first))
    assert result.table["pc"].to_numpy()[1:] == pytest.approx(newest_first[:-1])
    assert _order(result) == [SAID]


def test_the_sort_put_in_then_runs_them_in_time_order(engine_settings, closes) -> None:
    query = {**FEBRUARY, "then": {"map": RUNNING, "sort": "date desc"}}
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.table["cs"].to_numpy() == pytest.approx(np.cumsum(closes)[::-1])
    assert result.table["pc"].to_numpy()[:-1] == pytest.approx(closes[:-1][::-1])
    assert _order(result) == []


@pytest.mark.parametrize(
    "query",
    [
        # In time order already.
        {**FEBRUARY, "sort": "timestamp asc", "then": {"map": RUNNING}},
        # Nothing that reads the order: a rank and aggregates over all rows.
        {
            **FEBRUARY,
            "sort": "close desc",
            "then": {"map": {"r": "rank(close)", "share": "close / sum(close)"}},
        },
        {**FEBRUARY, "sort": "close desc", "then": {"select": ["first(close)", "mean(close)"]}},
    ],
)
def test_nothing_is_said_when_the_order_does_not_matter(engine_settings, query) -> None:
    assert _order(ask(query, engine_settings, **RTH_DAILY)) == []


def test_groups_sorted_by_a_value_name_their_key_order(engine_settings, db) -> None:
    """Months ranked by volume, then a running total: it runs in the ranking's order."""
    volumes = dict(
        db.execute(
            "SELECT month(tdate), sum(volume) FROM bars WHERE mod >= 570 AND mod < 1020 GROUP BY 1"
        ).fetchall()
    )
    query = {
        "group_by": "month()",
        "select": "sum(volume) as v",
        "sort": "v desc",
        "then": {"map": {"running": "cumsum(v)"}},
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    ranked = sorted(volumes.values(), reverse=True)
    assert result.table["running"].to_numpy() == pytest.approx(np.cumsum(ranked))
    assert _order(result) == [
        "then ran cumsum(v) over the rows in the first stage's sort order (sorted by v "
        "descending), not in key order (month) as first() and last() read them: for key order "
        '(month), drop the first stage\'s sort and sort in then ("sort": "v desc").'
    ]
