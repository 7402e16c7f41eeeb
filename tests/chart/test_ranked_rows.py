"""Short ranked lists of days: a ranking by a column the query did not select says what it
ranks by (the headline "close: #1 2024-02-27 14,115" called a close the top of a ranking by
range). Expected rows from DuckDB over the sample's minute bars."""

from __future__ import annotations

import pytest
from engine_results import RTH, figure, run
from matplotlib.figure import Figure
from matplotlib.text import Text

from barb.charts import chart_headline

pytestmark = pytest.mark.slow

WIDEST_2024 = {
    "session": "RTH",
    "from": "daily",
    "period": "2024",
    "map": {"d": "dayname()"},
    "sort": "range desc",
    "limit": 5,
    "select": ["d", "close"],
}


def headline_drawn(fig: Figure) -> str:
    """The chart's bold headline as drawn, its lines joined by spaces."""
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    size = max(t.get_fontsize() for t in texts)
    lines = [t for t in texts if t.get_fontsize() == size]
    return " ".join(t.get_text() for t in sorted(lines, key=lambda t: -t.get_position()[1]))


def _days_2024(con):
    return con.execute(
        f"""
        SELECT trading_date AS day, max(high) - min(low) AS range,
               arg_max(close, timestamp) AS close, sum(volume) AS volume
        FROM nq WHERE {RTH} AND year(trading_date) = 2024 GROUP BY 1
        """
    ).df()


def test_a_ranking_by_a_column_not_selected_names_what_it_ranks_by(sample_settings, con) -> None:
    result = run(WIDEST_2024, sample_settings)
    top = _days_2024(con).sort_values("range", ascending=False).iloc[0]
    expected = f"#1 by range: {top['day']:%Y-%m-%d}, close {top['close']:,.0f}"
    assert chart_headline(result) == expected
    assert headline_drawn(figure(result)) == expected
    assert chart_headline(result, "ru").startswith(f"№1 по range: {top['day']:%Y-%m-%d}, close ")


def test_a_lowest_first_ranking_by_a_column_not_selected_says_lowest(sample_settings, con) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "sort": "volume",
        "limit": 3,
        "select": ["close", "range"],
    }
    result = run(query, sample_settings)
    quietest = _days_2024(con).sort_values("volume").iloc[0]
    headline = chart_headline(result)
    assert headline == f"lowest volume: {quietest['day']:%Y-%m-%d}, close {quietest['close']:,.0f}"
    assert "#1" not in headline
