"""A then stage's where keeps some years of a year() stage: each year kept is named on the
axis, none implied by its neighbours (p48i 8). Expected years from DuckDB over the sample's
minute bars."""

from __future__ import annotations

from itertools import pairwise

import pytest
from asking import ask

from barb.charts import draw_chart

RTH = (570, 1020)  # NQ's RTH, 09:30-17:00, in minutes of the day


@pytest.mark.slow
def test_the_years_a_then_stage_kept_are_each_named(sample_settings, con) -> None:
    """The up years of NQ's RTH (sum of close - open by year, then pts > 0) were 12 of 19,
    labelled every other bar: 2009, 2013, 2015 …, read as a time line with gaps, and 2025,
    the tallest, unnamed."""
    up = con.execute(
        f"""
        WITH days AS (
            SELECT CAST(timestamp AS DATE) AS day, arg_min(open, timestamp) AS o,
                   arg_max(close, timestamp) AS c
            FROM nq
            WHERE hour(timestamp) * 60 + minute(timestamp) >= {RTH[0]}
              AND hour(timestamp) * 60 + minute(timestamp) < {RTH[1]}
            GROUP BY 1
        )
        SELECT year(day) AS y FROM days GROUP BY 1 HAVING sum(c - o) > 0 ORDER BY 1
        """
    ).fetchall()
    years = [str(y) for (y,) in up]
    assert any(b - a > 1 for a, b in pairwise(map(int, years)))  # gaps
    query = {"session": "RTH", "from": "daily", "group_by": "year()",
             "select": "sum(close - open) as pts",
             "then": {"where": "pts > 0", "select": "count() as up_years"}}  # fmt: skip
    fig = draw_chart(ask(query, sample_settings), language="en")
    fig.canvas.draw()
    ticks = [t.get_text() for ax in fig.axes for t in ax.get_xticklabels() if t.get_text()]
    assert ticks == years
