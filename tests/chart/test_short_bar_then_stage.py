"""Hours a second stage groups by, taken from the bars (each day's low bar, ``arg_min(time(),
low)``, then counted per time): the half-hour 16:30-17:00 bar of hourly RTH bars was headlined
"least often 16:30 248" beside full hours with no mark, where groups of the bars themselves
were marked. It is named ``16:30 (30 min)`` and noted, in English and Russian. Expected
counts from DuckDB over the sample's minute bars, never the engine."""

from __future__ import annotations

import numpy as np
import pytest
from engine_results import RTH, bar_heights, figure, run

from barb.charts import chart_headline

pytestmark = pytest.mark.slow

LOW_HOURS = {
    "session": "RTH",
    "from": "1h",
    "group_by": "date()",
    "select": "arg_min(time(), low) as low_time",
    "then": {"group_by": "low_time", "select": "count() as days", "sort": "days desc"},
}
NOTES = {
    "en": "16:30: a 30-minute bar (the session ends at 17:00)",
    "ru": "16:30: бар в 30 мин (сессия заканчивается в 17:00)",
}


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_short_last_bar_among_a_second_stages_hours_is_marked(
    sample_settings, con, language
) -> None:
    # Each day's hourly bar (from 09:30) with the lowest low, the first of equal ones.
    expected = con.execute(
        f"""
        SELECT start, count(*) AS days FROM (
            SELECT trading_date, arg_min(start, lo * 100000 + start) AS start FROM (
                SELECT trading_date, 570 + (minute - 570) // 60 * 60 AS start, min(low) AS lo
                FROM nq WHERE {RTH} GROUP BY 1, 2)
            GROUP BY 1)
        GROUP BY 1 ORDER BY days DESC, start
        """
    ).fetchall()
    counts = {start: days for start, days in expected}
    assert 990 in counts and counts[990] == min(counts.values())  # 16:30, the least often
    result = run(LOW_HOURS, sample_settings)
    fig = figure(result, language)
    (ax,) = fig.axes
    assert sorted(bar_heights(ax)) == sorted(counts.values())
    assert NOTES[language] in [t.get_text() for t in ax.texts]
    head = chart_headline(result, language) or ""
    minutes = "30 min" if language == "en" else "30 мин"
    assert f"16:30 ({minutes}) {counts[990]}" in head, head
    assert np.isfinite(bar_heights(ax)).all()
