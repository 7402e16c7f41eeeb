"""Tens of thousands of groups (an hour of every date) took 7-9 s to draw, each group
labelled and its value written out one by one, and 3-4 s more for the caption's headline:
the answer missed the bot's 20-second limit. Above ``MAX_DRAWN_GROUPS`` the chart
now draws a couple of thousand of them (each stretch's lowest and highest, the extremes the
headline names, ties counted over all of them) and says so under the axis. Expected values
come from DuckDB over the sample's minute bars; no test times anything."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, figure, run
from matplotlib.collections import PathCollection
from matplotlib.text import Text

from barb.charts import chart_headline
from barb.charts.grouped import read_groups
from barb.charts.many_groups import MAX_DRAWN_GROUPS, MAX_TIED_NAMED

pytestmark = pytest.mark.slow

# Rows a thinned table holds past its slices' lows and highs: first, last, the open group,
# and a tie's few at each extreme.
EXTRA_ROWS = 3 + 2 * (MAX_TIED_NAMED + 1)

HOURS_BY_DATE = {
    "session": "ETH",
    "from": "1h",
    "period": "2018:2025",
    "group_by": ["date()", "time()"],
    "select": "mean(range)",
}
BARS_PER_DAY = {"session": "RTH", "from": "1h", "group_by": "date()", "select": "count()"}


@pytest.fixture(scope="module")
def hour_ranges(con) -> pd.DataFrame:
    """Each ETH hourly bar's range in 2018-2025, by trading date and hour (``d``, ``t``, ``r``)."""
    return con.execute(
        """
        SELECT trading_date AS d, strftime(time_bucket(INTERVAL 1 HOUR, timestamp), '%H:%M') AS t,
               max(high) - min(low) AS r
        FROM nq WHERE year(trading_date) BETWEEN 2018 AND 2025 GROUP BY 1, 2
        """
    ).df()


@pytest.fixture(scope="module")
def bars_per_day(con) -> pd.Series:
    """How many RTH hourly bars (from 09:30) each trading date has."""
    frame = con.execute(
        f"""
        SELECT d, count(*) AS n FROM (
            SELECT DISTINCT trading_date AS d,
                   time_bucket(INTERVAL 1 HOUR, timestamp, TIMESTAMP '2000-01-01 09:30') AS b
            FROM nq WHERE {RTH})
        GROUP BY d
        """
    ).df()
    return frame.set_index("d")["n"]


def dots(fig) -> list[float]:
    """The y of each extreme's dot on the line."""
    (ax,) = fig.axes
    return sorted(
        float(y)
        for c in ax.collections
        if isinstance(c, PathCollection)
        for _, y in c.get_offsets()
    )


def texts(fig) -> str:
    return " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible()).replace("\n", " ")


def test_an_hour_of_every_date_draws_a_few_thousand_with_the_named_extremes(
    sample_settings, hour_ranges
) -> None:
    result = run(HOURS_BY_DATE, sample_settings)
    assert result.summary.rows == len(hour_ranges) > 20 * MAX_DRAWN_GROUPS
    high = hour_ranges.loc[hour_ranges["r"].idxmax()]
    low = hour_ranges.loc[hour_ranges["r"].idxmin()]
    assert (hour_ranges["r"] == high["r"]).sum() == 1 and (hour_ranges["r"] == low["r"]).sum() == 1

    expected = (
        # each label held in one line of the title
        f"average range: highest {high['d']:%Y-%m-%d}\u00a0·\u00a0{high['t']} "
        f"{high['r']:,.2f} points, lowest {low['d']:%Y-%m-%d}\u00a0·\u00a0{low['t']} "
        f"{low['r']:,.2f} points"
    )
    assert chart_headline(result) == expected
    fig = figure(result)
    (ax,) = fig.axes
    for row in (high, low):  # the chart's own headline, in whichever form fits
        assert f"{row['d']:%Y-%m-%d}\u00a0·\u00a0{row['t']} {row['r']:,.1f}" in texts(fig)
    assert dots(fig) == [low["r"], high["r"]]
    # What is drawn is bounded: one line of a couple of thousand points, no stripe per date.
    assert len(read_groups(result).table) <= MAX_DRAWN_GROUPS + EXTRA_ROWS
    (line,) = ax.get_lines()
    assert len(line.get_xdata()) <= MAX_DRAWN_GROUPS + EXTRA_ROWS
    assert len(ax.patches) < 100 and len(ax.get_xticklabels()) < 40
    drawn = len(line.get_xdata())
    assert f"chart: {drawn:,} of {len(hour_ranges):,} groups, the highest and lowest" in texts(fig)
    ru = texts(figure(result, "ru"))
    total_ru = f"{len(hour_ranges):,}".replace(",", "\u00a0")
    assert f"из {total_ru} групп, включая самую высокую и самую низкую" in ru


@pytest.mark.parametrize("limit", [50_000, 1_000], ids=["whole table", "table cut for display"])
def test_ties_are_counted_over_every_group(sample_settings, bars_per_day, limit) -> None:
    """RTH hourly bars per date: 8 on most days, fewer on short ones. The tie the headline
    counts is of all 4,649 days, drawn or not, and cut for display or not: a spread of the
    table had "8 bars (965 tied)" of 4,498. The groups of date() are days, and counted so."""
    settings = sample_settings.model_copy(update={"max_table_rows": limit})
    result = run(BARS_PER_DAY, settings)
    assert result.summary.rows == len(bars_per_day) > MAX_DRAWN_GROUPS
    most, least = bars_per_day.max(), bars_per_day.min()
    tied_most, tied_least = (bars_per_day == most).sum(), (bars_per_day == least).sum()
    assert min(tied_most, tied_least) > MAX_TIED_NAMED  # counted, not named
    assert chart_headline(result) == (
        f"number of bars: most often {most} bars ({tied_most:,} days tied), "
        f"least often {least} bars ({tied_least:,} days tied)"
    )
    fig = figure(result)
    assert dots(fig) == [least, most]
    assert len(fig.axes[0].get_lines()[0].get_xdata()) <= MAX_DRAWN_GROUPS + EXTRA_ROWS


def test_a_few_hundred_groups_are_all_drawn(sample_settings, con) -> None:
    """Below the bound nothing changes: every date of 2024-2025 is a point of the line."""
    query = {**BARS_PER_DAY, "from": "daily", "period": "2024:2025", "select": "mean(range)"}
    result = run(query, sample_settings)
    days = con.execute(
        f"SELECT count(DISTINCT trading_date) FROM nq WHERE {RTH} "
        "AND year(trading_date) BETWEEN 2024 AND 2025"
    ).fetchone()[0]
    fig = figure(result)
    assert len(fig.axes[0].get_lines()[0].get_xdata()) == days == result.summary.rows
    assert "groups, the highest and lowest" not in texts(fig)
    assert np.isfinite(dots(fig)).all()
