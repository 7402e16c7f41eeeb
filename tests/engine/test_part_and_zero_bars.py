"""Bars that read as what they are not. "In which month is NQ's yearly high" counted 2026's
first 4 days as January's 1 year, drawn like a whole year's and tied with them; a bar whose
count is a part group alone is drawn hollow and unranked, as the part group itself is. A 0%
year's stub hung below the zero line and read as a small negative bar; it lies on the line
(p44a Q29, Q05). Expected values from pandas over RTH bars built from the minute file."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
from asking import RTH_DAILY, ask
from matplotlib.collections import PolyCollection
from rth_bars import rth_daily

from barb.charts import draw_chart
from barb.export import csv_bytes, csv_rows


def _bars(ax) -> PolyCollection:
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return bars


def test_a_count_made_of_a_part_week_alone_is_hollow(engine_settings, minutes) -> None:
    """Weeks by their number of days from 2024-01-10, a Wednesday: the period cuts its week
    to 3 days, and no whole week has 3, so that bar is the cut week alone."""
    result = ask(
        {
            "period": "2024-01-10:",
            "group_by": "week()",
            "select": "count() as days",
            "then": {"group_by": "days", "select": "count() as weeks"},
        },
        engine_settings,
        **RTH_DAILY,
    )
    daily = rth_daily(minutes).loc["2024-01-10":]
    sizes = daily.groupby(daily.index.to_period("W-SUN")).size()
    weeks = sizes.value_counts().sort_index()
    assert sizes.iloc[0] == 3 and weeks[3] == 1  # the cut week, alone in its group
    fig = draw_chart(result)
    assert fig is not None
    fig.canvas.draw()
    (ax,) = fig.axes
    bars = _bars(ax)
    heights = [p.vertices[2, 1] - p.vertices[0, 1] for p in bars.get_paths()]
    np.testing.assert_allclose(heights, weeks.to_numpy())
    hollow = [tuple(face[:3]) == (1.0, 1.0, 1.0) for face in bars.get_facecolors()]
    assert hollow == [days == 3 for days in weeks.index]
    texts = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]
    assert any("3: 1 includes" in t and "0 without it" in t for t in texts)


def test_a_zero_bar_lies_on_the_zero_line(engine_settings, minutes) -> None:
    daily = rth_daily(minutes)
    daily["range"] = daily["high"] - daily["low"]
    week = daily.index.to_period("W-SUN")
    # Above the quietest week's widest day: that week's share is 0, the others' are not.
    level = float(daily["range"].groupby(week).max().min())
    shares = (daily["range"] > level).groupby(week).mean()
    assert (shares == 0).sum() >= 1 and (shares > 0).any()
    result = ask(
        {"group_by": "week()", "select": f"mean(range > {level}) as wide_share"},
        engine_settings,
        **RTH_DAILY,
    )
    fig = draw_chart(result)
    assert fig is not None
    fig.canvas.draw()
    (ax,) = fig.axes
    stubs = [line for line in ax.lines if list(line.get_ydata()) == [0, 0]]
    assert len(stubs) == int((shares == 0).sum())
    for stub in stubs:
        x = float(stub.get_xdata()[0])
        drawn = stub.get_transform().transform((x, 0))[1]
        line = ax.transData.transform((x, 0))[1]
        half = stub.get_linewidth() / 2 * fig.dpi / 72
        assert drawn - half >= line - 1e-6  # its lower edge on the line, none of it below


def test_the_csv_holds_the_zero_groups_the_chart_draws(engine_settings, minutes) -> None:
    """p48i 5: days with range > 700 by year drew 2019, 2021, 2023 and 2025 at 0 and the
    headline counted them ("least often 0 days, 4 groups tied"), but the CSV held 2020, 2022
    and 2024 alone. The fixture's 31st days by month: January's one, February and March at
    0, from pandas; the file lists every month the chart draws, and each zero stub is no
    thicker than the axis line, so it reads as the line, not as a small count."""
    daily = rth_daily(minutes)
    months = daily.index.month.unique()
    counts = pd.Series(daily.index.day == 31, index=daily.index).groupby(daily.index.month).sum()
    counts = counts.reindex(months, fill_value=0)
    assert counts.tolist() == [1, 0, 0]  # the case: two months with no 31st
    query = {"where": "day() == 31", "group_by": "month()", "select": "count() as days"}
    result = ask(query, engine_settings, **RTH_DAILY)
    assert len(result.table) == 1  # the engine's table: the month that has one
    rows = list(csv.DictReader(io.StringIO(csv_bytes(result, "en").decode("utf-8-sig"))))
    assert [(int(r["month"]), float(r["days"])) for r in rows] == list(counts.items())
    assert csv_rows(result) == len(counts)
    fig = draw_chart(result)
    fig.canvas.draw()
    (ax,) = fig.axes
    assert len(_bars(ax).get_paths()) == len(counts)  # the chart draws the same three
    stubs = [line for line in ax.lines if list(line.get_ydata()) == [0, 0]]
    assert len(stubs) == int((counts == 0).sum())
    axis = ax.spines["bottom"].get_linewidth()
    assert all(stub.get_linewidth() <= axis for stub in stubs), axis
