"""A category axis whose labels were thinned to every other group, and then given the named
bars' labels, stepped unevenly: NQ's months by range % read Jan, Mar, May, Aug, Oct (p46e
q04) and RTH's hours 09:30, 11:30, 13:30, 16:30 with 15:30 left out (q32). Where a smaller
level font holds them all, every group is labelled. The groups expected come from pandas
over the bars' dates and the clock, never the engine."""

from __future__ import annotations

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from engine_results import run
from matplotlib.text import Text

from barb.charts import draw_chart

pytestmark = pytest.mark.slow


def _ticks(result, language: str, width_px: int = 360) -> list[str]:
    fig = draw_chart(result, width_px=width_px, language=language)
    assert fig is not None
    fig.canvas.draw()
    ax = fig.axes[-1]
    return [t.get_text() for t in ax.get_xticklabels() if isinstance(t, Text) and t.get_text()]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_rth_hours_are_each_labelled(sample_settings, days, language) -> None:
    query = {"session": "RTH", "from": "1h", "period": "2025", "group_by": "time()",
             "select": ["mean(range)", "mean(volume)"]}  # fmt: skip
    # RTH 09:30-17:00 in clock hours from the open: 09:30 … 16:30, the last a half hour.
    hours = [f"{9 + (30 + 60 * i) // 60:02d}:{(30 + 60 * i) % 60:02d}" for i in range(8)]
    assert _ticks(run(query, sample_settings), language) == hours


def test_months_are_each_labelled(sample_settings, days) -> None:
    dates = pd.DatetimeIndex(days.index)
    months = np.unique(dates[(dates.year >= 2021) & (dates.year <= 2025)].month)
    query = {"session": "RTH", "from": "daily", "period": "2021:2025",
             "map": {"rng_pct": "range / open * 100", "m": "month()"}, "group_by": "m",
             "select": ["mean(rng_pct)", "count()"]}  # fmt: skip
    labels = _ticks(run(query, sample_settings), "en")
    assert labels == [pd.Timestamp(2025, m, 1).strftime("%b") for m in months]


@pytest.mark.parametrize(
    ("timeframe", "period"), [("monthly", None), ("quarterly", None), ("monthly", "2022:2025")]
)
@pytest.mark.parametrize("language", ["en", "ru"])
def test_bars_over_years_are_named_by_evenly_stepped_years(
    sample_settings, days, timeframe: str, period: str | None, language: str
) -> None:
    """Closes of 18 years of monthly bars read "2008-01" and "2020-01" alone on a phone's
    axis (twelve years apart, nothing over the last six); quarterly bars "2008-Q1",
    "2020-Q1"; 2022-2025's months "2022-01", "2024-01". Named by year, each tick on its
    year's first bar, the years step evenly and reach into the last two."""
    query = {"session": "RTH", "from": timeframe, "select": ["date()", "close"]}
    if period:
        query["period"] = period
    dates = pd.DatetimeIndex(days.index)
    first, last = (dates.year.min(), dates.year.max()) if not period else (2022, 2025)
    fig = draw_chart(run(query, sample_settings), width_px=900, language=language)
    assert fig is not None
    fig.canvas.draw()
    ax = fig.axes[-1]
    ticks = [(t.get_position()[0], t.get_text()) for t in ax.get_xticklabels() if t.get_text()]
    years = [int(text) for _, text in ticks]  # a year each, "2008", not "2008-01"
    assert len(years) >= 3 and len(set(np.diff(years))) == 1
    assert years[0] - first < years[1] - years[0] and last - years[-1] < years[1] - years[0]
    for (at, text), year in zip(ticks, years, strict=True):
        # On the year's first bar: its first trading day's month or quarter.
        start = dates[dates.year == year].min()
        bar = pd.Timestamp(mdates.num2date(at).replace(tzinfo=None))
        assert (bar.year, bar.month if timeframe == "monthly" else bar.quarter) == (
            year,
            start.month if timeframe == "monthly" else start.quarter,
        ), text
