"""A value "now" drawn over what the answer was computed on: the whole period when the query
names one, asks for more than the value now (``first(open)``, ``min(low)``) or reads the whole
period (a drawdown from the running high, a rank); only the latest bars when nothing but the
value now was asked, and then the header says which. A tester's "drawdown since 2020 and
now" was drawn over its last 500 bars under a subtitle of the whole period: the drawdown
started at -52%, and the headline's lowest low was nowhere on the chart.

Also: a table's headline names the columns its chart draws, not a raw ``open`` selected
first, and a rank reads as a percentile. Expected numbers come from DuckDB over the sample's
minute bars (``days``)."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from engine_results import as_read, figure, run, title
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text

from barb.charts import chart_headline

pytestmark = pytest.mark.slow


def day_text(day: object) -> str:
    return pd.Timestamp(day).strftime("%Y-%m-%d")


def tick_points(value: float) -> str:
    """A value in points as every chart writes it: at NQ's tick, two decimals."""
    shown = Decimal(str(value)).quantize(Decimal("0.01"), ROUND_HALF_UP)
    return f"{shown:,} points".replace("-", "\u2212")


def panels(fig: Figure) -> list[Axes]:
    """The plots, top to bottom."""
    return sorted(fig.axes, key=lambda ax: -ax.get_position().y0)


def series(ax: Axes) -> Line2D:
    """The longest line of a panel: the series (the value's level is a two-point line)."""
    return max(ax.get_lines(), key=lambda line: len(line.get_xdata()))


def frame_texts(fig: Figure) -> list[str]:
    """The header's and footer's texts, a wrapped one on one line."""
    return [" ".join(t.get_text().split()) for t in fig.texts if isinstance(t, Text)]


def assert_spans(line: Line2D, first: object, last: object) -> None:
    """The line runs from the bar ``first`` to the bar ``last``, and the axis shows both."""
    x = np.asarray(line.get_xdata(), float)
    assert np.nanmin(x) == pytest.approx(mdates.date2num(pd.Timestamp(first)))
    assert np.nanmax(x) == pytest.approx(mdates.date2num(pd.Timestamp(last)))
    low, high = line.axes.get_xlim()
    assert low <= np.nanmin(x) and np.nanmax(x) <= high


def assert_in_view(ax: Axes, *values: float) -> None:
    low, high = ax.get_ylim()
    for value in values:
        assert low <= value <= high, (value, low, high)


def test_a_drawdown_since_2020_and_now_draws_every_day_since_2020(sample_settings, days):
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2020:",
        "map": {"dd": "(close / cummax(close) - 1) * 100"},
        "select": [
            "min(dd) as max_dd",
            "arg_min(date(), dd) as dd_day",
            "min(low) as lowest",
            "last(dd) as dd_now",
        ],
    }
    result = run(query, sample_settings)
    period = days[days.index >= pd.Timestamp("2020-01-01")]
    dd = (period["close"] / period["close"].cummax() - 1) * 100
    first, last = period.index[0], period.index[-1]
    for language in ("en", "ru"):
        fig = figure(result, language)
        price_ax, ax = panels(fig)
        curve = series(ax)
        assert_spans(curve, first, last)
        drawn = np.asarray(curve.get_ydata(), float)
        # The trough (-52% in 2022-23, outside the last 500 days) and the high it fell from.
        assert np.nanmin(drawn) == pytest.approx(dd.min())
        assert np.nanmax(drawn) == pytest.approx(0.0)
        assert_in_view(ax, dd.min(), 0.0)
        assert_spans(series(price_ax), first, last)
        # Each day's low to high behind the close: the headline's lowest low is on screen.
        (band,) = [c for c in price_ax.collections if isinstance(c, PolyCollection)]
        edges = np.concatenate([p.vertices[:, 1] for p in band.get_paths()])
        assert edges.min() == pytest.approx(period["low"].min())
        assert edges.max() == pytest.approx(period["high"].max())
        assert_in_view(price_ax, period["low"].min(), period["high"].max())
        texts = frame_texts(fig)
        assert any(f"{day_text(first)} — {day_text(last)}" in t for t in texts)
        assert not any("500" in t for t in texts)
    assert title(figure(result)).startswith(f"max_dd = {as_read(dd.min())}%".replace("-", "\u2212"))


def test_first_open_to_now_draws_the_close_from_the_first_day(sample_settings, days):
    """ "NQ since 2020": the headline's start (8,683) is where the line starts."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2020:",
        "select": ["first(open) as start", "last(close) as end", "max(high) as top"],
    }
    result = run(query, sample_settings)
    period = days[days.index >= pd.Timestamp("2020-01-01")]
    fig = figure(result)
    (ax,) = panels(fig)
    line = series(ax)
    assert_spans(line, period.index[0], period.index[-1])
    assert np.asarray(line.get_ydata(), float)[0] == pytest.approx(period["close"].iloc[0])
    assert_in_view(ax, period["low"].min(), period["high"].max())


def test_a_rank_now_draws_all_the_history_it_ranks_against(sample_settings, days):
    """A rank is among all the period's days, so all of them are drawn, with no period named
    and nothing asked but the value now."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"range_rank": "rank(range)"},
        "select": "last(range_rank)",
    }
    result = run(query, sample_settings)
    rank = (days["high"] - days["low"]).rank(method="max", pct=True) * 100
    fig = figure(result)
    _, ax = panels(fig)
    line = series(ax)
    assert_spans(line, days.index[0], days.index[-1])
    drawn = np.asarray(line.get_ydata(), float)
    assert np.nanmin(drawn) == pytest.approx(rank.min())
    assert np.nanmax(drawn) == pytest.approx(100.0)
    assert not any("500" in t for t in frame_texts(fig))


def test_only_a_value_now_draws_the_latest_500_bars_and_says_so(sample_settings, days):
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"spread": "high - low"},
        "select": "last(spread)",
    }
    result = run(query, sample_settings)
    shown = days.iloc[-500:]
    spread = shown["high"] - shown["low"]
    scope = f"{day_text(shown.index[0])} — {day_text(shown.index[-1])}"
    for language, note in (("en", "chart: the last 500"), ("ru", "на графике последние 500")):
        fig = figure(result, language)
        _, ax = panels(fig)
        line = series(ax)
        assert_spans(line, shown.index[0], shown.index[-1])
        np.testing.assert_allclose(np.asarray(line.get_ydata(), float), spread.to_numpy())
        texts = frame_texts(fig)
        assert any(t.endswith(scope) for t in texts)  # the scope line: the days drawn
        assert any(note in t for t in texts)
        assert not any(day_text(days.index[0]) in t for t in texts)


def test_a_table_headline_names_the_columns_drawn_not_the_open(sample_settings, days):
    """ "How did NQ do yesterday" selected open first: "open last: 25,760" headed a chart
    of the range and the change."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "last_2_bars",
        "map": {"chg": "close - prev(close)"},
        "select": ["open", "high", "low", "close", "range", "chg"],
    }
    result = run(query, sample_settings)
    day = days.index[-1]
    spread = days["high"].iloc[-1] - days["low"].iloc[-1]
    chg = days["close"].iloc[-1] - days["close"].iloc[-2]
    expected = f"range = {tick_points(spread)} · chg = {tick_points(chg)} ({day_text(day)})"
    assert chart_headline(result) == expected
    assert title(figure(result)).startswith("range = ")  # the first of its two lines


def test_a_filtered_list_headline_names_the_column_its_bars_show(sample_settings, days):
    """The last three down days, open and close selected before the move the bars show."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"move": "close - open"},
        "where": "close < open",
        "sort": "timestamp desc",
        "limit": 3,
        "select": ["timestamp", "open", "close", "move"],
    }
    result = run(query, sample_settings)
    down = days[days["close"] < days["open"]]
    last = down.index[-1]
    move = down["close"].iloc[-1] - down["open"].iloc[-1]
    assert chart_headline(result) == f"move last: {tick_points(move)} ({day_text(last)})"
    assert chart_headline(result, "ru").startswith("move: последнее ")


def test_a_rank_reads_as_a_percentile_not_points(sample_settings, days):
    """The latest day's range and its rank among 2025's days: "range_rank 59.7" on a card
    beside "314.5 points" read as points."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "map": {"range_rank": "rank(range)"},
        "sort": "timestamp desc",
        "limit": 1,
        "select": ["timestamp", "range", "range_rank"],
    }
    result = run(query, sample_settings)
    year = days[days.index.year == 2025]
    spread = year["high"] - year["low"]
    rank = float(spread.rank(method="max", pct=True).iloc[-1] * 100)
    day = day_text(year.index[-1])
    headline = chart_headline(result)
    assert headline is not None
    spread_text = re.escape(tick_points(spread.iloc[-1]))
    # A whole rank as an ordinal ("67th percentile"), a fraction as "66.93 of 100".
    ends = r"(?:(?:st|nd|rd|th) percentile| of 100)"
    pattern = rf"range = {spread_text} · range_rank = ([\d.]+){ends} \({day}\)"
    found = re.fullmatch(pattern, headline)
    assert found is not None, headline
    assert float(found.group(1)) == pytest.approx(rank, abs=0.05)
    ru = chart_headline(result, "ru")
    assert ru is not None and ("перцентил" in ru or "из 100" in ru)
    card = [t.get_text() for ax in figure(result, "ru").axes for t in ax.texts]
    # the card's value: an ordinal of a whole rank, "из 100" of a fraction
    assert any(t.endswith(("-й перцентиль", " из 100")) for t in card)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_period_that_ended_before_the_data_gives_its_last_value_not_now(
    sample_settings, days, language
) -> None:
    """p28g F2: "z now: 1.54" was the period 2025's last value, where the data ran on to
    2026-01-07 (z 0.998 there). A period reaching the data's end is still "now"."""
    closes = days["close"]
    in_2025 = closes[pd.DatetimeIndex(closes.index).year == 2025]
    ended = run({"session": "RTH", "from": "daily", "period": "2025", "select": "last(close)"},
                sample_settings)  # fmt: skip
    value = f"{in_2025.iloc[-1]:,.2f}" if language == "en" else None
    headline = chart_headline(ended, language)
    last_word = {"en": "close last:", "ru": "закрытие: последнее"}[language]
    assert headline.startswith(last_word) and headline.endswith(f"({day_text(in_2025.index[-1])})")
    if value is not None:
        assert f" {value} " in headline
    current = run(
        {"session": "RTH", "from": "daily", "period": "last_2_years", "select": "last(close)"},
        sample_settings,
    )
    now_word = {"en": "close now:", "ru": "закрытие сейчас:"}[language]
    assert chart_headline(current, language).startswith(now_word)
    assert chart_headline(current, language).endswith(f"({day_text(closes.index[-1])})")
