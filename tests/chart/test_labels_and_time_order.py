"""Charts of the p25 testers' queries: a year written as a label, a few picked weeks counted,
a list sorted by its date drawn in time order, and CL's moves in dollars. Expected values come
from DuckDB over the sample's minute bars (the ``days`` fixture), never from the engine."""

from __future__ import annotations

import pandas as pd
import pytest
from engine_results import figure, run
from matplotlib.figure import Figure
from matplotlib.legend import Legend

from barb.charts import chart_headline

pytestmark = pytest.mark.slow


def legend_texts(fig: Figure) -> list[str]:
    return [t.get_text() for legend in fig.findobj(Legend) for t in legend.get_texts()]


# --- A1: a year is a label, not a number with a thousands separator ------------------------


def test_the_year_of_the_widest_day_is_written_as_a_year(sample_settings, days) -> None:
    """``arg_max(year(), range)`` read "yr = 2,024" (Russian "2 024")."""
    query = {
        "session": "RTH",
        "from": "daily",
        "select": ["max(range) as widest", "arg_max(year(), range) as yr"],
    }
    result = run(query, sample_settings)
    ranges = days["high"] - days["low"]
    year = pd.Timestamp(ranges.idxmax()).year
    for language in ("en", "ru"):
        headline = chart_headline(result, language)
        assert headline is not None and headline.endswith(f" · yr = {year}")
    assert f"yr = {year}" in legend_texts(figure(result))


def test_the_year_a_second_stage_picks_from_year_groups_is_a_year(sample_settings, days) -> None:
    """``arg_max(year, n)`` over a first stage grouped by ``year()``: the tester's "in which
    year were there most such days" read "most_year = 2 025" on the chart and its legend."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"up": "close > open"},
        "group_by": "year()",
        "select": "count(up) as n",
        "then": {"select": ["max(n) as most", "arg_max(year, n) as most_year"]},
    }
    result = run(query, sample_settings)
    by_year = (days["close"] > days["open"]).groupby(pd.DatetimeIndex(days.index).year).sum()
    most = int(by_year.max())
    year = int(by_year.idxmax())  # the earliest of a tie, as arg_max takes it
    assert chart_headline(result) == f"most = {most:,} days · most_year = {year}"
    assert chart_headline(result, "ru").endswith(f" · most_year = {year}")
    assert f"most_year = {year}" in legend_texts(figure(result, "ru"))


# --- A2: a few weeks or months a where picked are counted, as a few days are --------------


def period_closes(days: pd.DataFrame, period: str) -> pd.Series:
    """Each week's (labelled by its Monday) or month's last RTH close."""
    dates = pd.DatetimeIndex(days.index)
    if period == "week":
        label = dates - pd.to_timedelta(dates.weekday, unit="D")
    else:
        label = dates.to_period("M").to_timestamp()
    return days["close"].groupby(label).last()


def test_a_few_weeks_a_where_picked_are_counted(sample_settings, days) -> None:
    """The weeks that moved over 1,000 points, up or down: "35 weeks: up 20, no up 15", not
    the last one's change (the tester's weekly MACD crosses read "hist last: 43.0 points")."""
    query = {
        "session": "RTH",
        "from": "weekly",
        "map": {"chg": "close - prev(close)", "up": "chg > 0"},
        "where": "abs(chg) > 1000",
        "select": ["chg", "up"],
    }
    result = run(query, sample_settings)
    chg = period_closes(days, "week").diff()
    picked = chg[chg.abs() > 1000]
    up, down = int((picked > 0).sum()), int((picked < 0).sum())
    assert 2 <= len(picked) <= 60 and up and down
    assert chart_headline(result) == f"{len(picked)} weeks: up {up}, no up {down}"
    ru = chart_headline(result, "ru")
    assert ru is not None and ru.startswith(f"{len(picked)} недел")


def test_a_few_months_a_where_picked_are_counted(sample_settings, days) -> None:
    query = {
        "session": "RTH",
        "from": "monthly",
        "map": {"chg": "close - prev(close)"},
        "where": "chg > 1500",
        "select": ["chg"],
    }
    result = run(query, sample_settings)
    chg = period_closes(days, "month").diff()
    count = int((chg > 1500).sum())
    assert 2 <= count <= 60
    assert chart_headline(result) == f"{count} months"
    assert chart_headline(result, "ru") == f"{count} месяцев"
