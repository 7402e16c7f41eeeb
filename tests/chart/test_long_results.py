"""A result longer than the rows kept for display (``max_table_rows``, 50,000 by default)
was cut to its first rows, and its chart drew only them: an hourly ETH listing over all data
ended in 2016 under "range last: 28 points (2016-06-20 09:00)", a grouped table's "highest"
was the first rows' highest, and the rows behind a number were 2008's. The table and its CSV
keep their first rows; the chart draws the whole period: a table's rows spread evenly over
all of it (its extremes among them, the footer says so), every row behind a number. Here the
limit is lowered to 1,000 so that daily bars exceed it; expected values come from DuckDB."""

from __future__ import annotations

import io

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from engine_results import bar_heights, figure, run
from matplotlib.text import Text

from barb.charts import chart_headline
from barb.export import csv_bytes
from barb.settings import EngineSettings

pytestmark = pytest.mark.slow

LIMIT = 1_000


@pytest.fixture(scope="module")
def short_settings(sample_settings: EngineSettings) -> EngineSettings:
    return sample_settings.model_copy(update={"max_table_rows": LIMIT})


def footer(fig) -> str:
    return " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible()).replace("\n", " ")


def test_a_listing_cut_for_display_is_drawn_over_the_whole_period(short_settings, days) -> None:
    query = {"session": "RTH", "from": "daily", "select": ["close", "range"]}
    result = run(query, short_settings)
    ranges = days["high"] - days["low"]
    csv = pd.read_csv(io.BytesIO(csv_bytes(result)))
    assert len(csv) == LIMIT and csv["date"].iloc[-1] == f"{days.index[LIMIT - 1]:%Y-%m-%d}"
    fig = figure(result)
    price, lower = fig.axes
    (line,) = price.get_lines()
    drawn = mdates.num2date(line.get_xdata()[[0, -1]])
    assert [f"{d:%Y-%m-%d}" for d in drawn] == [
        f"{days.index[0]:%Y-%m-%d}",
        f"{days.index[-1]:%Y-%m-%d}",
    ]
    # A listing's answer is its extremes, found over all of it, not among the rows kept.
    high, low = ranges.idxmax(), ranges.idxmin()
    assert chart_headline(result) == (
        f"range: highest {high:%Y-%m-%d} {ranges.max():,.2f} points, "
        f"lowest {low:%Y-%m-%d} {ranges.min():,.2f} points"
    )
    assert high > days.index[LIMIT - 1]  # past the rows the table keeps
    # The widest day is drawn, though a spread of 1,000 of 4,649 days could miss it.
    highest = max(np.nanmax(np.asarray(a.get_ydata(), dtype=float)) for a in lower.get_lines())
    assert highest == pytest.approx(ranges.max())
    assert "chart: an even sample" in footer(fig)
    assert "график: выборка" in footer(figure(result, "ru"))


def test_groups_cut_for_display_name_their_own_highest_and_lowest(short_settings, days) -> None:
    query = {"session": "RTH", "from": "daily", "group_by": "date()", "select": "max(range)"}
    result = run(query, short_settings)
    ranges = days["high"] - days["low"]
    assert len(result.table) == LIMIT  # the table as cut: 2008 to 2011
    high, low = ranges.idxmax(), ranges.idxmin()
    headline = chart_headline(result)
    assert f"{high:%Y-%m-%d}" in headline and f"{low:%Y-%m-%d}" in headline
    assert high > days.index[LIMIT] or low > days.index[LIMIT]  # not among the first rows


def test_rows_behind_a_number_are_all_counted(short_settings, days) -> None:
    """Up days per year: every year of the data, each counted in full."""
    query = {"session": "RTH", "from": "daily", "where": "close > open", "select": "count()"}
    result = run(query, short_settings)
    up = days[days["close"] > days["open"]]
    per_year = up.groupby(pd.DatetimeIndex(up.index).year).size()
    assert len(up) > LIMIT and result.summary.value == len(up)
    (ax,) = figure(result).axes
    np.testing.assert_array_equal(bar_heights(ax), per_year.to_numpy())


def test_the_latest_row_s_chart_bars_say_nothing_of_a_number(short_settings, days) -> None:
    """ "ATR now" (the latest daily bar, its chart the bars before it) over more days than
    the limit: its chart's bars are built when read, and a table has no number "over 4,647
    rows" whose CSV holds the first 1,000."""
    query = {"session": "RTH", "from": "daily", "sort": "timestamp desc", "limit": 1}
    result = run(query, short_settings)
    assert len(days) > LIMIT
    assert list(result.table["date"]) == [f"{days.index[-1]:%Y-%m-%d}"]
    assert not [w for w in result.metadata.warnings if "The number is over" in w]
    assert result.table["close"].iloc[0] == pytest.approx(days["close"].iloc[-1])
