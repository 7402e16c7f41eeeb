"""Tester p28c's charts. A select of numbers with a share written after them ("what share of
the day's range does NQ make by 11:00": mean and median share, then mean(share == 100)) drew
the side share per year, and nothing on the chart showed the 58% asked for. A group key
written as a condition ("group_by": "fh > 0") was labelled by its engine name, "fh_0: yes",
read as "fh = 0". Expected values are pandas over the sample's RTH days (DuckDB,
``conftest.py``), never the engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, as_read, bar_heights, figure, run, title

from barb.charts import chart_headline

pytestmark = pytest.mark.slow

LANGUAGES = ("en", "ru")
YES_NO = {"en": ("yes", "no"), "ru": ("да", "нет")}
# The close's place in the day's range, its mean and median asked first, then how often the
# day closed at its high: the side figure is a share of days.
CLOSE_PLACE = {
    "session": "RTH",
    "from": "daily",
    "map": {"place": "(close - low) / range * 100"},
    "select": [
        "count()",
        "mean(place) as mean_place",
        "median(place) as median_place",
        "mean(place == 100) as closed_at_high",
    ],
}
FIRST_MOVE_UP = {
    "session": "RTH",
    "from": "daily",
    "map": {"fh": "close - open"},
    "group_by": "fh > 0",
    "select": ["count()", "mean(range) as mean_range"],
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_numbers_asked_first_are_drawn_not_a_share_written_after_them(
    sample_settings, days: pd.DataFrame, language: str
) -> None:
    place = (days["close"] - days["low"]) / (days["high"] - days["low"]) * 100
    result = run(CLOSE_PLACE, sample_settings)
    values = result.summary.values
    assert values["mean_place"] == pytest.approx(place.mean(), abs=0.01)
    assert values["closed_at_high"] == pytest.approx((place == 100).mean(), abs=1e-4)
    (ax,) = figure(result, language).axes
    # A histogram of every day's place, with the mean and the median marked across it.
    assert bar_heights(ax).sum() == len(place)
    marked = sorted(
        float(line.get_xdata()[0])
        for line in ax.get_lines()
        if len(line.get_xdata()) == 2 and line.get_xdata()[0] == line.get_xdata()[1]
    )
    np.testing.assert_allclose(marked, sorted([place.mean(), place.median()]), atol=0.01)
    names = [t.get_text() for t in ax.get_legend().get_texts()]
    # Barb's words for each statistic, the query's name quoted (f49g: "mean_place").
    said = {"en": ("average place", "median place"), "ru": ("среднее «place»", "медиана «place»")}
    assert names[0].startswith(said[language][0]) and names[1].startswith(said[language][1])


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_condition_key_reads_as_the_condition(
    sample_settings, days: pd.DataFrame, language: str
) -> None:
    up = days["close"] - days["open"] > 0
    counts = [int((~up).sum()), int(up.sum())]  # no, then yes: the engine's order
    result = run(FIRST_MOVE_UP, sample_settings)
    fig = figure(result, language)
    count_axes = fig.axes[-1]
    yes, no = YES_NO[language]
    ticks = [t.get_text() for t in count_axes.get_xticklabels() if t.get_text()]
    assert ticks == [f"fh > 0: {no}", f"fh > 0: {yes}"]
    np.testing.assert_array_equal(bar_heights(count_axes), counts)
    assert count_axes.get_xlabel() == "fh > 0"
    assert "fh > 0: " in title(fig) and "fh_0" not in title(fig)


def test_more_answers_than_the_headline_holds_leave_the_count_out(sample_settings, con) -> None:
    """p28c q1, "how often does NQ break both sides of the 30-minute opening range": the
    headline held count · broke_high · broke_low, and `both`, the answer, was cut. The rows
    counted are the footer's; the headline keeps the first three shares."""
    days = con.execute(
        f"""
        SELECT trading_date, max(high) AS high, min(low) AS low,
               max(high) FILTER (WHERE minute < 600) AS or_high,
               min(low) FILTER (WHERE minute < 600) AS or_low
        FROM nq WHERE {RTH} GROUP BY 1
        """
    ).df()
    up, down = days["high"] > days["or_high"], days["low"] < days["or_low"]
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "or_high": "session_high('09:30-10:00')",
            "or_low": "session_low('09:30-10:00')",
            "up": "high > or_high",
            "dn": "low < or_low",
        },
        "select": [
            "count()",
            "mean(up) as broke_high",
            "mean(dn) as broke_low",
            "mean(up and dn) as both",
            "mean(not up and not dn) as neither",
        ],
    }
    shares = [up.mean(), down.mean(), (up & down).mean()]
    said = " · ".join(
        f"{name} = {as_read(share, share=True)}%"
        for name, share in zip(("broke_high", "broke_low", "both"), shares, strict=True)
    )
    assert chart_headline(run(query, sample_settings)) == said
