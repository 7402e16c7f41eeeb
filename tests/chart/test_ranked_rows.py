"""Short ranked lists of days: a ranking by a column the query did not select says what it
ranks by (the headline "close: #1 2024-02-27 14,115" called a close the top of a ranking by
range); the day that made a week's high is drawn among the week's days. Expected rows from
DuckDB over the sample's minute bars (``conftest.py``'s ``days``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, bar_heights, figure, run
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Text

from barb.charts import chart_headline
from barb.charts.style import ACCENT
from barb.charts.words import words_for

pytestmark = pytest.mark.slow

WIDEST_2024 = {
    "session": "RTH",
    "from": "daily",
    "period": "2024",
    "map": {"d": "dayname()"},
    "sort": "range desc",
    "limit": 5,
    "select": ["d", "close"],
}


def headline_drawn(fig: Figure) -> str:
    """The chart's bold headline as drawn, its lines joined by spaces."""
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    size = max(t.get_fontsize() for t in texts)
    lines = [t for t in texts if t.get_fontsize() == size]
    return " ".join(t.get_text() for t in sorted(lines, key=lambda t: -t.get_position()[1]))


def _days_2024(con):
    return con.execute(
        f"""
        SELECT trading_date AS day, max(high) - min(low) AS range,
               arg_max(close, timestamp) AS close, sum(volume) AS volume
        FROM nq WHERE {RTH} AND year(trading_date) = 2024 GROUP BY 1
        """
    ).df()


def test_a_ranking_by_a_column_not_selected_names_what_it_ranks_by(sample_settings, con) -> None:
    result = run(WIDEST_2024, sample_settings)
    top = _days_2024(con).sort_values("range", ascending=False).iloc[0]
    expected = f"#1 by range: {top['day']:%Y-%m-%d}, close {top['close']:,.2f}"  # NQ's tick
    assert chart_headline(result) == expected
    assert headline_drawn(figure(result)) == expected
    ru = (
        f"№1 по range: {top['day']:%Y-%m-%d}, закрытие "  # the column in words, the sort as written
    )
    assert chart_headline(result, "ru").startswith(ru)


def test_a_lowest_first_ranking_by_a_column_not_selected_says_lowest(sample_settings, con) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "sort": "volume",
        "limit": 3,
        "select": ["close", "range"],
    }
    result = run(query, sample_settings)
    quietest = _days_2024(con).sort_values("volume").iloc[0]
    headline = chart_headline(result)
    close = f"{quietest['close']:,.2f}"  # at NQ's tick
    assert headline == f"lowest volume: {quietest['day']:%Y-%m-%d}, close {close}"
    assert "#1" not in headline


def _last_week(days: pd.DataFrame) -> pd.DataFrame:
    """The RTH days of the whole week before the data's last (unfinished) one."""
    dates = pd.DatetimeIndex(days.index)
    monday = dates[-1] - pd.Timedelta(days=dates[-1].weekday() + 7)
    week = days[(dates >= monday) & (dates < monday + pd.Timedelta(days=7))]
    return week.reset_index()


def _marked(ax) -> np.ndarray:
    (dots,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    return dots.get_offsets()


WEEK_HIGH_QUERIES = {
    "top row": {
        "session": "RTH",
        "from": "daily",
        "period": "last_week",
        "map": {"d": "dayname()"},
        "sort": "high desc",
        "limit": 1,
        "select": ["d", "high"],
    },
    "arg_max": {
        "session": "RTH",
        "from": "daily",
        "period": "last_week",
        "map": {"d": "dayname()"},
        "select": "arg_max(d, high)",
    },
    "max and arg_max": {
        "session": "RTH",
        "from": "daily",
        "period": "last_week",
        "select": ["max(high)", "arg_max(dayname(), high)"],
    },
}


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("asked", list(WEEK_HIGH_QUERIES))
def test_the_day_that_made_the_weeks_high_is_marked_among_the_weeks_bars(
    sample_settings, days, asked, language
) -> None:
    """ "Which day made last week's high" was a histogram of five highs, a card of one number
    or no chart at all: it is the week's daily candles, each day named, the top high marked."""
    week = _last_week(days)
    result = run(WEEK_HIGH_QUERIES[asked], sample_settings)
    fig = figure(result, language)
    (ax,) = fig.axes
    (bodies,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bodies.get_paths()) == len(week)  # one candle a day
    top = int(week["high"].to_numpy().argmax())
    np.testing.assert_allclose(_marked(ax), [[top, week["high"].iloc[top]]])
    weekdays = words_for(language).weekdays
    shown = [t.get_text() for t in ax.get_xticklabels()]
    assert shown == [f"{weekdays[d.dayofweek]}\n{d:%m-%d}" for d in week["d"]]


def test_the_widest_day_of_a_month_is_marked_among_its_days(sample_settings, days, con) -> None:
    """A value that is no price: one bar per day, the top one in colour."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025-12",
        "sort": "range desc",
        "limit": 1,
    }
    december = days[(days.index >= "2025-12-01") & (days.index < "2026-01-01")]
    ranges = (december["high"] - december["low"]).to_numpy()
    (ax,) = figure(run(query, sample_settings)).axes
    np.testing.assert_allclose(bar_heights(ax), ranges)
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    colours = [to_hex(c) for c in bars.get_facecolors()]
    assert [i for i, c in enumerate(colours) if c == to_hex(ACCENT)] == [int(ranges.argmax())]


def test_a_longer_ranking_is_still_drawn_as_the_ranking(sample_settings) -> None:
    """The top 3 of a week keep their ranked bars, 1. 2. 3., not the week's candles."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "last_week",
        "sort": "range desc",
        "limit": 3,
        "select": ["range"],
    }
    (ax,) = figure(run(query, sample_settings)).axes
    assert [t.get_text()[:2] for t in ax.get_yticklabels()] == ["1.", "2.", "3."]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_worst_days_labels_stay_off_their_dates(sample_settings, days, language) -> None:
    """ "The 10 worst days since 2008" in Russian: beside dates as long as "10. Чт
    2020-05-28" the bars' labels had 0.3 of narrow axes, and "−12,60 %" ran over the axis
    into its date. Every label lies inside the axes, the bars the worst closes (DuckDB)."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2008:2025",
        "map": {"ret": "(close / prev(close) - 1) * 100"},
        "sort": "ret asc",
        "limit": 10,
        "select": ["timestamp", "ret"],
    }
    ret = days["close"].pct_change() * 100
    worst = ret[pd.DatetimeIndex(ret.index).year >= 2008].nsmallest(10)
    fig = figure(run(query, sample_settings), language)
    ax = fig.axes[0]
    widths = np.array([p.vertices[2, 0] - p.vertices[0, 0] for p in bar_paths(ax)])
    np.testing.assert_allclose(np.sort(widths), np.sort(worst.to_numpy()), atol=1e-9)
    box = ax.get_window_extent()
    labels = [t for t in ax.texts if "%" in t.get_text()]
    assert len(labels) == 10
    for label in labels:
        assert label.get_window_extent().x0 >= box.x0, label.get_text()


def bar_paths(ax):
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return bars.get_paths()
