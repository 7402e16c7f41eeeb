"""Charts of results the engine really makes on the sample: a ``then`` stage's grouped count,
a correlation of NQ's and ES's returns through an instrument join, "ATR now" asked the way
the examples ask it, and a time of day carried through ``arg_max`` and ``then``. Expected
numbers come from DuckDB over the same Parquet bars."""

from __future__ import annotations

import re

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from duckdb_answers import BIGGEST_5M_MOVES_2024, biggest_5m_moves_2024
from engine_results import RTH, as_read, bar_heights, figure, run, title
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.patches import StepPatch
from matplotlib.text import Text

from barb.charts import chart_headline

pytestmark = pytest.mark.slow


def daily_closes(con, table: str, period: tuple[str, str]) -> pd.Series:
    frame = con.execute(
        f"SELECT trading_date AS d, arg_max(close, timestamp) AS c FROM {table} "
        f"WHERE {RTH} AND trading_date BETWEEN ? AND ? GROUP BY 1 ORDER BY 1",
        list(period),
    ).df()
    return frame.set_index("d")["c"]


def test_a_then_grouped_count_shows_every_year(sample_settings, con) -> None:
    """Months with a day gapping up over 80 points, counted per year: years with none show 0."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"gap": "open - prev(close)"},
        "where": "gap > 80",
        "group_by": ["year()", "month()"],
        "select": "count() as n",
        "then": {"group_by": "year", "select": "count() as months"},
    }
    result = run(query, sample_settings)
    opens = con.execute(
        f"SELECT trading_date AS d, arg_min(open, timestamp) AS o FROM nq "
        f"WHERE {RTH} GROUP BY 1 ORDER BY 1"
    ).df()
    closes = daily_closes(con, "nq", ("2000-01-01", "2100-01-01"))
    days = opens.set_index("d").join(closes)
    days["gap"] = days["o"] - days["c"].shift()
    hit = days[days["gap"] > 80].index.to_series()
    months = hit.dt.to_period("M").drop_duplicates()
    expected = months.dt.year.value_counts().reindex(range(2008, 2027), fill_value=0).sort_index()
    assert (expected == 0).any()  # the case that matters: years with no such month

    fig = figure(result)
    (ax,) = fig.axes
    np.testing.assert_array_equal(bar_heights(ax), expected.to_numpy())
    # The words, or ▲/▼ where "12 months" with its unit (p47d D4) takes the room for them.
    assert title(fig).startswith(("months: most often ", "months: ▲"))
    # Several years have none: the lowest is a tie, said as one (not the first of them).
    assert ", least often 0 months (" in (chart_headline(result) or "")


def test_a_correlation_of_nq_and_es_returns_is_a_scatter(sample_settings, con) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2020:2025",
        "join": {"instrument": "ES"},
        "map": {
            "nq_ret": "(close - prev(close)) / prev(close) * 100",
            "es_ret": "(es_close - prev(es_close)) / prev(es_close) * 100",
        },
        "select": "correlation(nq_ret, es_ret)",
    }
    result = run(query, sample_settings)
    period = ("2019-06-01", "2025-12-31")  # a little history, for the first day's return
    nq = daily_closes(con, "nq", period)
    es = daily_closes(con, "es", period)
    both = pd.concat({"nq": nq, "es": es}, axis=1).dropna()
    returns = both.pct_change() * 100
    returns = returns[returns.index >= pd.Timestamp("2020-01-01")].dropna()
    r = np.corrcoef(returns["nq"], returns["es"])[0, 1]

    fig = figure(result)
    (ax,) = fig.axes
    (points,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(points.get_offsets()) == len(returns)
    np.testing.assert_allclose(
        np.sort(points.get_offsets()[:, 0]), np.sort(returns["nq"].to_numpy()), rtol=1e-9
    )
    r_text = f"{r:.2f}".replace("-", "\u2212") if round(r, 2) else "0.00"
    assert title(fig).startswith(f"r = {r_text} (nq_ret vs es_ret)")
    assert "ES" in " ".join(t.get_text() for t in fig.findobj(Text))  # "with ES" in the subtitle


def test_atr_now_as_the_examples_ask_it_is_the_series(sample_settings) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "last_2_years",
        "map": {"atr14": "atr(14)"},
        "sort": "timestamp desc",
        "limit": 1,
    }
    result = run(query, sample_settings)
    assert result.table is not None and len(result.table) == 1
    history = result.source_rows
    assert history is not None and len(history) > 400
    assert history["timestamp"].is_monotonic_increasing
    assert history["timestamp"].iloc[-1] == result.table["timestamp"].iloc[0]
    assert history["atr14"].iloc[-1] == result.table["atr14"].iloc[0]

    fig = figure(result)
    price_ax, ax = sorted(fig.axes, key=lambda a: -a.get_position().y1)
    # No candle (the bars' low-high band behind the close is a fill, not candle bodies).
    assert not [c for c in price_ax.collections if type(c) is PolyCollection]
    (series,) = [line for line in ax.get_lines() if len(line.get_xdata()) > 100]
    assert np.asarray(series.get_ydata(), float)[-1] == pytest.approx(history["atr14"].iloc[-1])
    last = [mdates.date2num(history["timestamp"].iloc[-1]), history["atr14"].iloc[-1]]
    assert any(
        np.allclose(c.get_offsets(), [last])
        for c in ax.collections
        if isinstance(c, PathCollection)
    )
    date = result.table["date"].iloc[0]
    expected = f"atr14 now: {history['atr14'].iloc[-1]:,.2f} points ({date})"
    assert chart_headline(result) == expected
    assert expected.startswith(title(fig))  # its first line, when it takes two
    ru = chart_headline(result, "ru")
    assert ru is not None and ru.startswith("atr14 сейчас: ") and ru.endswith(f"пункта ({date})")


def test_the_time_of_the_days_high_reads_as_a_clock(sample_settings) -> None:
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024",
        "map": {"tod": "hour() * 60 + minute()"},
        "group_by": "date()",
        "select": "arg_max(tod, high) as high_tod",
        "then": {"group_by": "high_tod", "select": "count()"},
    }
    result = run(query, sample_settings)
    fig = figure(result)
    (ax,) = fig.axes
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and all(re.fullmatch(r"\d\d:\d\d", t) for t in ticks), ticks
    assert "09:30" in title(fig)
    # Every 5-minute slot from the first high to the last is a group, those with none at 0.
    highs = result.source_rows["high_tod"]  # type: ignore[index]
    slots = range(int(highs.min()), int(highs.max()) + 1, 5)
    expected = highs.value_counts().reindex(slots, fill_value=0)
    assert (expected == 0).any()
    np.testing.assert_array_equal(bar_heights(ax), expected.to_numpy())


def test_a_cumulative_return_by_date_is_drawn_over_time(sample_settings, con) -> None:
    """select date() and a running total: the dates are the x axis (it used to be a
    histogram of the running total's values), and the headline is the year's end value."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "map": {"ret": "(close / prev(close) - 1) * 100", "cum": "cumsum(ret)"},
        "select": ["date()", "cum"],
    }
    result = run(query, sample_settings)
    closes = con.execute(
        f"""
        SELECT trading_date AS d, arg_max(close, timestamp) AS close FROM nq WHERE {RTH}
        GROUP BY 1 ORDER BY 1
        """
    ).df()
    returns = closes["close"].pct_change() * 100
    total = returns[closes["d"].dt.year == 2024].sum()
    fig = figure(result)
    (ax,) = fig.axes
    first, last = ax.get_xlim()  # the year's days, a margin either side
    assert first <= mdates.date2num(pd.Timestamp("2024-01-02")) < first + 10
    assert last - 10 < mdates.date2num(pd.Timestamp("2024-12-31")) <= last
    assert ax.get_xlabel() != "cum"  # not a histogram of cum's values
    # A level that crosses zero now and then, drawn as a line, not as 259 thin bars.
    assert any(len(line.get_xdata()) >= 259 for line in ax.get_lines())
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert title(fig) == f"cum last: {as_read(total)}% (2024-12-31)"  # a sum of percents


def test_two_averaged_columns_are_both_distributions(sample_settings, con) -> None:
    """ "Overnight vs RTH range in 2025": both columns' distributions, each answer marked;
    it used to draw the overnight one only."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "map": {"on_range": "session_high('OVERNIGHT') - session_low('OVERNIGHT')"},
        "select": ["mean(on_range) as overnight_range", "mean(range) as rth_range"],
    }
    fig = figure(run(query, sample_settings))
    (ax,) = fig.axes
    (outline,) = [p for p in ax.patches if isinstance(p, StepPatch)]
    counts, edges = outline.get_data()[:2]
    ranges = con.execute(
        f"""
        SELECT max(high) - min(low) AS r FROM nq WHERE {RTH} AND year(trading_date) = 2025
        GROUP BY trading_date
        """
    ).df()["r"]
    assert list(counts) == list(np.histogram(ranges, bins=edges)[0])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:2] == ["on_range", "range"]
    assert ax.get_xlabel() == "on_range · range (points)"


def test_the_outlines_cut_tail_is_counted_too(sample_settings, con) -> None:
    """ "Range and direction from 20:00 to 02:00 in 2025": the move's outline over the range
    lost its 3 largest down nights with nothing said (p33c #13); every value below the axis,
    of either column, is counted in the legend by its column. Moves from DuckDB: the window
    from the evening before each trading date, first open to last close."""
    query = {
        "session": "20:00-02:00",
        "from": "daily",
        "period": "2025",
        "map": {"move": "close - open"},
        "select": ["mean(range)", "mean(move)"],
    }
    fig = figure(run(query, sample_settings))
    (ax,) = fig.axes
    lo = ax.get_xlim()[0]
    moves = con.execute(
        """
        SELECT arg_max(close, timestamp) - arg_min(open, timestamp) AS m FROM nq
        WHERE (hour(timestamp) >= 20 OR hour(timestamp) < 2) AND year(trading_date) = 2025
        GROUP BY trading_date
        """
    ).df()["m"]
    outline = next(p for p in ax.patches if isinstance(p, StepPatch))
    first_edge = outline.get_data()[1][0]
    cut = int((moves < first_edge).sum())
    assert cut > 0 and first_edge >= lo  # the premise: the axis leaves some nights out
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    (said,) = [t for t in legend if t.startswith("move: ")]
    count, below = re.fullmatch(r"move: (\d+) days below (\S+) not drawn", said).groups()
    # The edge it names is the cut's: no move lies between it and the first bin.
    assert int(count) == cut == int((moves < float(below.replace("\u2212", "-"))).sum())


def test_groups_keyed_by_month_read_as_months_and_bare_numbers_name_their_key(
    sample_settings, days
) -> None:
    """A key mapped from ``month()`` under any name reads Jan…Dec; a bare number that is not
    a year (day of the month) names its key, so "highest 5 10 days" cannot be misread."""
    by_month = run(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "map": {"m": "month()"},
            "group_by": "m",
            "select": "count()",
        },
        sample_settings,
    )
    dates = days.index[days.index.year == 2024].to_series()
    per_month = dates.dt.month.value_counts().sort_index()
    names = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    def extreme(value: int) -> str:
        tied = [names[m - 1] for m in per_month.index[per_month == value]]
        if len(tied) == 1:
            return f"{tied[0]} {value} days"
        return f"{value} days (tie: {', '.join(tied)})"  # no month is "the" highest

    assert chart_headline(by_month) == (
        f"number of days: most often {extreme(per_month.max())}, "
        f"least often {extreme(per_month.min())}"
    )

    by_day = run(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "map": {"d": "day()"},
            "group_by": "d",
            "select": "count()",
        },
        sample_settings,
    )
    assert figure(by_month).axes[0].get_xticklabels()[0].get_text() == "Jan"
    per_day = dates.dt.day.value_counts().sort_index()
    assert (per_day == per_day.min()).sum() == 1  # one lowest day: named with its key
    tied = int((per_day == per_day.max()).sum())
    assert tied > 3
    assert chart_headline(by_day) == (
        f"number of days: most often {per_day.max()} days ({tied} groups tied), "
        f"least often d {per_day.idxmin()} ({per_day.min()} days)"
    )


def test_groups_keyed_by_quarter_read_q1_to_q4_in_either_language(sample_settings, days) -> None:
    """quarter() under any name: "Q3", never "quarter 3" in a Russian headline."""
    result = run(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "map": {"q": "quarter()"},
            "group_by": "q",
            "select": "count()",
        },
        sample_settings,
    )
    dates = days.index[days.index.year == 2024].to_series()
    per = dates.dt.quarter.value_counts().sort_index()
    high, low = per.idxmax(), per.idxmin()
    assert chart_headline(result, "ru").startswith(
        f"количество дней: чаще всего Q{high} {per.max()} "
    )
    assert f"реже всего Q{low} {per.min()} " in chart_headline(result, "ru")
    assert chart_headline(result) == (
        f"number of days: most often Q{high} {per.max()} days, least often Q{low} {per.min()} days"
    )


def test_a_list_sorted_by_a_column_it_did_not_select_ranks_by_what_it_shows(
    sample_settings, con
) -> None:
    """Sorted by abs_move, showing move: the headline names what it ranks by, the first
    row's bar and its move, and the bars are the five moves in that order (not a calendar of
    five slivers)."""
    result = run(BIGGEST_5M_MOVES_2024, sample_settings)
    moves = biggest_5m_moves_2024(con)
    top = moves.iloc[0]
    headline = chart_headline(result)
    assert headline.startswith(
        f"#1 by abs_move: {top['b']:%Y-%m-%d %H:%M}, move "
    ) and headline.endswith(" points")
    shown = float(headline.split()[-2].replace(",", "").replace("−", "-"))
    assert shown == pytest.approx(top["move"], abs=0.05)
    (ax,) = figure(result).axes
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    ends = [p.vertices[:, 0] for p in bars.get_paths()]
    widths = sorted((x[np.argmax(np.abs(x))] for x in ends), key=abs, reverse=True)
    np.testing.assert_allclose(widths, moves["move"].to_numpy(), atol=1e-9)
