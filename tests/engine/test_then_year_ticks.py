"""Ticks over the sample's years: a then stage's where keeps some years of a year() stage,
each named on the axis, none implied by its neighbours (p48i 8; expected years from DuckDB
over the sample's minute bars); no date label reaches the picture's edge (p48i 11)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from asking import ask

from barb.charts import draw_chart
from barb.charts.style import MARGIN_X

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


@pytest.mark.slow
def test_no_date_tick_label_reaches_the_picture_s_edge(sample_settings) -> None:
    """p48i 11: gaps over 0.5% in 2025 had a "2026" tick whose label ended on the PNG's last
    pixel and read as cut off. Every tick label drawn keeps the header text's margin, as
    matplotlib's own extents measure it."""
    query = {"session": "RTH", "from": "daily", "period": "2025",
             "map": {"gap_pct": "(open - prev(close)) / prev(close) * 100"},
             "where": "gap_pct > 0.5", "select": ["date()", "gap_pct"]}  # fmt: skip
    fig = draw_chart(ask(query, sample_settings), language="ru")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    margin = MARGIN_X * fig.bbox.width
    labels = [t for ax in fig.axes for t in ax.get_xticklabels() if t.get_text()]
    assert labels
    for label in labels:
        box = label.get_window_extent(renderer)
        assert margin - 0.5 <= box.x0 and box.x1 <= fig.bbox.width - margin + 0.5, label
