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
