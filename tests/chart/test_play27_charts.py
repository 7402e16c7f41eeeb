"""Charts a tester found unclear while asking about "now" and the recent past (p27b): the time
of today's high and low drawn as a histogram of minute prices, Russian price ticks that ran
together, and more below. Expected values from DuckDB over the sample's minute bars, never
the engine."""

from __future__ import annotations

from itertools import pairwise

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, figure, run
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.figure import Figure

from barb.charts import chart_headline

pytestmark = pytest.mark.slow

DAY = "2026-01-07"  # the sample's last trading date


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def x_tick_labels(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_xticklabels() if t.get_text()]


# --- C1: the time of the day's high and low is drawn on the day's clock ----------------------


@pytest.fixture(scope="module")
def day_extremes(con) -> dict[str, tuple[pd.Timestamp, float]]:
    """The first RTH minute of the day's high and of its low, with the level."""
    high = con.execute(
        f"SELECT timestamp, high FROM nq WHERE {RTH} AND trading_date = DATE '{DAY}' "
        "ORDER BY high DESC, timestamp LIMIT 1"
    ).fetchone()
    low = con.execute(
        f"SELECT timestamp, low FROM nq WHERE {RTH} AND trading_date = DATE '{DAY}' "
        "ORDER BY low, timestamp LIMIT 1"
    ).fetchone()
    assert high is not None and low is not None
    return {"high": (pd.Timestamp(high[0]), high[1]), "low": (pd.Timestamp(low[0]), low[1])}


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_times_of_the_days_high_and_low_are_marked_on_its_price(
    sample_settings, day_extremes, language
) -> None:
    query = {
        "session": "RTH",
        "from": "1m",
        "period": DAY,
        "select": [
            "arg_max(time(), high) as high_time",
            "max(high) as high",
            "arg_min(time(), low) as low_time",
            "min(low) as low",
        ],
    }
    fig = figure(run(query, sample_settings), language)
    (ax,) = fig.axes
    # No histogram of the minute highs: the price over the day's clock.
    assert not [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_paths()][1:]
    assert not ax.patches
    dots = np.concatenate(
        [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection)]
    )
    for when, level in day_extremes.values():
        assert [mdates.date2num(when), level] in dots.tolist()
        assert f"{when:%H:%M}" in texts(fig)  # the time written at the marked bar
    ticks = x_tick_labels(fig)
    assert ticks and all(len(t) == 5 and t[2] == ":" for t in ticks)  # 11:00, a clock


def test_russian_price_ticks_stand_an_em_apart(sample_settings) -> None:
    """A histogram of the day's minute highs: "25 500 25 550 25 600" read as one number."""
    query = {"session": "RTH", "from": "1m", "period": DAY, "select": ["mean(high) as m"]}
    fig = figure(run(query, sample_settings), "ru")
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = sorted(
        (t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()),
        key=lambda b: b.x0,
    )
    assert len(boxes) >= 3
    em = renderer.points_to_pixels(ax.get_xticklabels()[0].get_fontsize())
    assert min(b.x0 - a.x1 for a, b in pairwise(boxes)) >= em * 0.99


# --- C2: one row of all history says which row, of how many -----------------------------------


@pytest.mark.parametrize(
    ("language", "weekday", "one_of"),
    [("en", "Wed", "one row of {n} days"), ("ru", "Ср", "одна строка из {n} дней")],
)
def test_the_latest_row_of_all_history_names_its_day_and_the_rows_it_is_one_of(
    sample_settings, con, language, weekday, one_of
) -> None:
    """ "Where is NQ against its SMA20/50 now": the header's whole period and the footer's
    4,649 of 4,649 days made the row's values look like whole-history figures."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"sma20": "rolling_mean(close, 20)", "sma50": "rolling_mean(close, 50)"},
        "sort": "timestamp desc",
        "limit": 1,
        "select": ["close", "sma20", "sma50"],
    }
    last, days = con.execute(
        f"SELECT max(trading_date), count(DISTINCT trading_date) FROM nq WHERE {RTH}"
    ).fetchone()
    fig = figure(run(query, sample_settings), language)
    head = next(t for t in texts(fig) if f"{last:%Y-%m-%d}" in t)
    lines = head.split("\n")
    assert lines[0] == f"{weekday} {last:%Y-%m-%d}"
    total = f"{days:,}".replace(",", " " if language == "ru" else ",")
    assert " ".join(lines[1].split()) == one_of.format(n=total)  # any space as a space


# --- C4: a weekly bar's label is its week, not the close's date --------------------------------


@pytest.mark.parametrize(
    ("language", "said"),
    [("en", "close last: {close} (week of {week})"), ("ru", "(неделя с {week})")],
)
def test_the_last_weekly_close_is_dated_by_its_week(sample_settings, con, language, said) -> None:
    """ "Last week against this week", weekly bars: «close последнее: 57,41 (2026-01-05)»
    gave the week's label as the close's date (the close was 2026-01-07's)."""
    query = {"session": "RTH", "from": "weekly", "period": "last_2_bars", "select": ["close"]}
    first, close = con.execute(
        f"""
        WITH week AS (SELECT * FROM nq WHERE {RTH} AND date_trunc('week', trading_date) =
                      (SELECT date_trunc('week', max(trading_date)) FROM nq))
        SELECT min(trading_date), arg_max(close, timestamp) FROM week
        """
    ).fetchone()
    headline = chart_headline(run(query, sample_settings), language)
    assert headline is not None
    expected = said.format(close=f"{close:,.2f}", week=f"{first:%Y-%m-%d}")
    assert headline.endswith(expected) if language == "ru" else headline == expected
