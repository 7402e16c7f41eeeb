"""Groups keyed by a date, too many to name each (a year of days by ``date()``, drawn as a
line), are named level, on the first day of round months or years: they read
"2024-01-02", "2024-01-29" … every 18th day, turned 40 degrees, fourteen across a phone.
Expected first days from DuckDB's RTH days, never the engine."""

from __future__ import annotations

import pandas as pd
import pytest
from engine_results import RTH, figure, run

pytestmark = pytest.mark.slow


def _ticks(fig) -> tuple[list[str], list[float]]:
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    shown = [(t.get_text(), t.get_rotation()) for t in ax.get_xticklabels() if t.get_text()]
    inside = [x for x in ax.get_xticks() if low <= x <= high]
    assert len(inside) == len(shown)
    return [text for text, _ in shown], [angle for _, angle in shown]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_year_of_days_is_named_on_round_months(sample_settings, days, language) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "group_by": "date()",
        "select": "max(high) - min(low) as rng",
    }
    fig = figure(run(query, sample_settings), language)
    texts, angles = _ticks(fig)
    assert set(angles) == {0.0}
    year = pd.DatetimeIndex(days.index)
    year = year[year.year == 2024]
    firsts = pd.Series(year, index=year).groupby(year.month).min()
    dates = pd.to_datetime(texts)
    assert 2 <= len(texts) <= 6
    assert all(d == firsts[d.month] for d in dates)  # each a month's first trading day
    steps = set((dates.month[1:] - dates.month[:-1]).tolist())
    assert len(steps) == 1 and 12 % steps.pop() == 0  # evenly, on the same months yearly
    assert dates[0] == firsts.iloc[0]


def test_years_of_days_are_named_by_year(sample_settings, days) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2016:2025",
        "group_by": "date()",
        "select": "max(high) - min(low) as rng",
    }
    fig = figure(run(query, sample_settings), "ru")
    texts, angles = _ticks(fig)
    assert set(angles) == {0.0}
    years = [int(t) for t in texts]
    assert years[0] == 2016 and len(set(pd.Series(years).diff().dropna())) == 1
    assert len(years) >= 3


def test_a_line_of_times_of_day_spans_its_times(sample_settings, con) -> None:
    """The time of each day's high over a year of RTH days, a line of 252 times between
    09:30 and 16:59, was drawn on a clock from 00:00: the line in the top half, midnight to
    08:00 empty. The axis spans the times, the earliest and latest in view."""
    query = {
        "session": "RTH",
        "from": "1m",
        "period": "2024",
        "group_by": "date()",
        "select": "arg_max(time(), high) as high_time",
    }
    highs = con.execute(
        f"""
        SELECT trading_date, arg_min(hour(timestamp) * 60 + minute(timestamp),
                                     (-high, timestamp)) AS m
        FROM nq WHERE {RTH} AND year(trading_date) = 2024 GROUP BY 1
        """
    ).df()["m"]
    fig = figure(run(query, sample_settings), "ru")
    low, high = fig.axes[0].get_ylim()
    assert highs.min() - 60 < low <= highs.min()
    assert highs.max() <= high
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels() if t.get_text()]
    assert "00:00" not in ticks and len(ticks) >= 3
