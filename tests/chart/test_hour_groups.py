"""Groups by hour() name the bars they hold: RTH's 1h bars start at :30, so "hour 15" is the
bar from 15:30 (a tester read the chart's "15:00" as the busiest hour, 15:00-16:00, and got
40,050 contracts for 58,401); a session that crosses midnight is drawn from its 18:00 open,
and an hour the session has no bar in is no "lowest". Expected numbers from DuckDB."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, bar_heights, figure, run

from barb.charts import chart_headline
from barb.export import csv_bytes
from barb.summary_text import render_summary

pytestmark = pytest.mark.slow


def test_hourly_rth_bars_by_hour_are_named_by_their_start(sample_settings, con) -> None:
    query = {"session": "RTH", "from": "1h", "group_by": "hour()", "select": "mean(volume)"}
    result = run(query, sample_settings)
    # Each 1h bar from 09:30 sums its minutes; the mean over days per bar start.
    expected = con.execute(
        f"""
        SELECT slot, avg(v), max(stop) FROM (
            SELECT trading_date, (minute - 570) // 60 AS slot, sum(volume) AS v,
                   max(minute) + 1 AS stop
            FROM nq WHERE {RTH} GROUP BY 1, 2)
        GROUP BY 1 ORDER BY 1
        """
    ).fetchall()
    # The model is told what hour() of these bars is: the first and the last bar it names.
    last, _, stop = expected[-1]
    assert (
        "hour() is the clock hour a bar starts in, and these 1h bars start at :30 (09:30, …): "
        f"hour 9 is the bar 09:30-10:30, …, hour {(570 + 60 * last) // 60} the bar "
        f"{(570 + 60 * last) // 60:02d}:30-{stop // 60:02d}:{stop % 60:02d}. Group by time() "
        "to name each bar by its start."
    ) in result.metadata.warnings
    fig = figure(result)
    (ax,) = fig.axes
    np.testing.assert_allclose(bar_heights(ax), [v for _, v, _ in expected], rtol=1e-9)
    starts = [f"{(570 + 60 * slot) // 60:02d}:30" for slot, _, _ in expected]
    shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert shown and set(shown) <= set(starts) and "15:00" not in shown
    assert chart_headline(result).startswith(f"average volume: highest {starts[0]} ")
    assert "lowest 16:30 (30 min)" in chart_headline(result)


def _low_hours(con) -> tuple[pd.Series, list[int]]:
    """Days per hour of the ETH day's low (the earliest 1h bar on a tie), from DuckDB, and
    the hours in the session's order from its 18:00 open."""
    bars = con.execute(
        """
        SELECT trading_date, hour(timestamp) AS h, min(low) AS low, min(timestamp) AS t
        FROM nq GROUP BY 1, 2
        """
    ).df()
    first = bars.sort_values(["trading_date", "low", "t"]).groupby("trading_date").head(1)
    counts = first.groupby("h").size()
    return counts, sorted(counts.index, key=lambda h: (h - 18) % 24)


def test_a_session_across_midnight_is_drawn_from_its_open(sample_settings, con) -> None:
    """The hour of each ETH day's low: 18:00 came last, after 16:00, and the 17:00 hour ETH
    has no bar in headlined "lowest 17:00 0"."""
    query = {
        "session": "ETH",
        "from": "1h",
        "map": {"h": "hour()"},
        "group_by": "date()",
        "select": "arg_min(h, low) as low_hour",
        "then": {"group_by": "low_hour", "select": "count() as days"},
    }
    result = run(query, sample_settings)
    counts, order = _low_hours(con)
    fig = figure(result)
    (ax,) = fig.axes
    np.testing.assert_array_equal(bar_heights(ax), counts.reindex(order).to_numpy())
    shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert shown[0] == "18:00" and "17:00" not in shown
    lowest = counts.index[counts.argmin()]
    # The fewest first; hours within its noise follow it ("or 01:00 56, 23:00 57").
    assert f"least often {lowest:02d}:00 {counts.min()}" in chart_headline(result)
    assert 17 not in counts.index and pd.Series(order).iloc[-1] == 16


def test_clock_times_from_time_are_drawn_from_the_open_too(sample_settings, con) -> None:
    """time()'s '18:00' text keys from a then stage ran 00:00 … 16:00, then 18:00."""
    query = {
        "session": "ETH",
        "from": "1h",
        "group_by": "date()",
        "select": "arg_min(time(), low) as t",
        "then": {"group_by": "t", "select": "count() as days"},
    }
    result = run(query, sample_settings)
    counts, order = _low_hours(con)
    (ax,) = figure(result).axes
    np.testing.assert_array_equal(bar_heights(ax), counts.reindex(order).to_numpy())
    assert next(t.get_text() for t in ax.get_xticklabels() if t.get_text()) == "18:00"


ETH_HOURS = {
    "session": "ETH",
    "from": "1h",
    "map": {"t": "hour()"},
    "group_by": "t",
    "select": "mean(range)",
}


def _eth_hour_ranges(con) -> pd.Series:
    """The mean range of ETH's 1h bars (on the clock hour) by the hour they start in."""
    return (
        con.execute(
            """
            SELECT h, avg(r) AS r FROM (
                SELECT trading_date, date_trunc('hour', timestamp) AS b,
                       hour(timestamp) AS h, max(high) - min(low) AS r
                FROM nq GROUP BY 1, 2, 3)
            GROUP BY 1
            """
        )
        .df()
        .set_index("h")["r"]
    )


def test_times_of_day_of_eth_are_listed_from_its_open_everywhere(sample_settings, con) -> None:
    """ETH by hour: the table, its CSV and the summary the model reads ran 00:00 … 16:00,
    18:00 … 23:00 while the chart began at 18:00, where the trading day starts. One order
    everywhere: the session's."""
    result = run(ETH_HOURS, sample_settings)
    ranges = _eth_hour_ranges(con)
    order = sorted(ranges.index, key=lambda h: (h - 18) % 24)
    assert order[0] == 18 and order[-1] == 16
    assert result.table["t"].tolist() == order
    np.testing.assert_allclose(result.table["mean_range"], ranges.reindex(order), rtol=1e-9)
    csv = pd.read_csv(io.BytesIO(csv_bytes(result)))
    assert csv["t"].tolist() == order
    text = render_summary(result)
    assert "ordered by t from the session's 18:00 open" in text
    listed = [int(line.split(",")[0]) for line in text.splitlines() if re.match(r"\d+,", line)]
    assert listed == order
    (ax,) = figure(result).axes
    np.testing.assert_allclose(bar_heights(ax), ranges.reindex(order), rtol=1e-9)


def test_an_explicit_sort_of_eth_hours_is_kept(sample_settings, con) -> None:
    """A sort the query asks for decides the order, not the session's open."""
    ranges = _eth_hour_ranges(con)
    by_hour = run({**ETH_HOURS, "sort": "t asc"}, sample_settings)
    assert by_hour.table["t"].tolist() == sorted(ranges.index)
    assert "sorted by t" in render_summary(by_hour)
    widest = run({**ETH_HOURS, "sort": "mean_range desc", "limit": 3}, sample_settings)
    assert widest.table["t"].tolist() == ranges.sort_values(ascending=False).index[:3].tolist()
