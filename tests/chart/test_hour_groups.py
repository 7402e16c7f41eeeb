"""Groups by hour() name the bars they hold: RTH's 1h bars start at :30, so "hour 15" is the
bar from 15:30 (a tester read the chart's "15:00" as the busiest hour, 15:00-16:00, and got
40,050 contracts for 58,401); a session that crosses midnight is drawn from its 18:00 open,
and an hour the session has no bar in is no "lowest". Expected numbers from DuckDB."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, bar_heights, figure, run

from barb.charts import chart_headline

pytestmark = pytest.mark.slow


def test_hourly_rth_bars_by_hour_are_named_by_their_start(sample_settings, con) -> None:
    query = {"session": "RTH", "from": "1h", "group_by": "hour()", "select": "mean(volume)"}
    result = run(query, sample_settings)
    # The model is told what hour() of these bars is.
    assert (
        "hour() is the clock hour a bar starts in, and these 1h bars start at :30 (09:30, …): "
        "hour 9 is the bar 09:30-10:30. Group by time() to name each bar by its start."
    ) in result.metadata.warnings
    # Each 1h bar from 09:30 sums its minutes; the mean over days per bar start.
    expected = con.execute(
        f"""
        SELECT slot, avg(v) FROM (
            SELECT trading_date, (minute - 570) // 60 AS slot, sum(volume) AS v
            FROM nq WHERE {RTH} GROUP BY 1, 2)
        GROUP BY 1 ORDER BY 1
        """
    ).fetchall()
    fig = figure(result)
    (ax,) = fig.axes
    np.testing.assert_allclose(bar_heights(ax), [v for _, v in expected], rtol=1e-9)
    starts = [f"{(570 + 60 * slot) // 60:02d}:30" for slot, _ in expected]
    shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert shown and set(shown) <= set(starts) and "15:00" not in shown
    assert chart_headline(result).startswith(f"mean_volume: highest {starts[0]} ")
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
    assert chart_headline(result).endswith(f"least often {lowest:02d}:00 {counts.min()}")
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
