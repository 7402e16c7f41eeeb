"""Long lines: thinned keeping their extremes, and broken only where the bars really pause."""

from __future__ import annotations

import chart_factories as make
import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from barb.charts.line_points import (
    LINE_POINTS,
    broken_envelope,
    broken_line,
    decimate,
    pauses,
)
from barb.charts.rows import draw_table
from barb.charts.style import new_figure
from barb.result import Result


def drawn_lines(result: Result) -> list[Line2D]:
    """The data lines of the result's chart (not the 30/70 or zero reference lines)."""
    fig = new_figure(1280)
    assert draw_table(fig, result)
    return [line for ax in fig.axes for line in ax.lines if len(line.get_xdata()) > 2]


def breaks(line: Line2D) -> int:
    return int(np.isnan(np.asarray(line.get_xdata(), dtype="float64")).sum())


def days(stamps: pd.DatetimeIndex | pd.Series) -> np.ndarray:
    return mdates.date2num(pd.DatetimeIndex(stamps).to_numpy())


def test_a_long_daily_series_is_drawn_without_breaks() -> None:
    """4,500 daily bars are thinned; the price and the RSI must not come out dashed."""
    lines = drawn_lines(make.table_with_indicator(4_500))
    assert len(lines) == 2  # price above, rsi below
    assert all(len(line.get_xdata()) < 4_500 for line in lines)  # thinned
    assert [breaks(line) for line in lines] == [0, 0]


def test_daily_bars_never_pause_at_weekends_or_holidays() -> None:
    trading = pd.bdate_range("2001-01-02", "2002-12-31")
    closed = pd.to_datetime(["2001-07-04", "2001-11-22", "2001-12-25", "2002-03-29"])
    closed = closed.append(pd.bdate_range("2001-09-11", "2001-09-14"))  # a week-long closure
    x = days(trading.difference(closed))
    assert pauses(x, step=1.0).size == 0
    weekly = days(pd.date_range("2001-01-05", periods=300, freq="W-FRI"))
    assert pauses(weekly, step=7.0).size == 0


def test_a_hole_of_weeks_in_daily_bars_breaks_the_line() -> None:
    trading = pd.bdate_range("2020-01-02", "2022-12-30")
    hole = pd.bdate_range("2021-03-01", "2021-05-31")
    x = days(trading.difference(hole))
    y = np.arange(len(x), dtype="float64")
    lx, _ = broken_line(x, y, step=1.0)
    assert np.isnan(lx).sum() == 1


def test_a_regular_session_series_breaks_every_night_and_weekend() -> None:
    """Five RTH days of 5-minute bars: five pieces, not straight lines across the nights."""
    result = make.table_rth_intraday(days=5)
    assert result.table is not None
    closes = result.table.groupby(result.table["timestamp"].dt.date)["timestamp"].max()
    price, sma = drawn_lines(result)
    assert breaks(price) == breaks(sma) == 4
    # Each piece ends on the day's last bar.
    x = np.asarray(price.get_xdata(), dtype="float64")
    before_breaks = x[np.flatnonzero(np.isnan(x)) - 1]
    np.testing.assert_allclose(before_breaks, days(closes.iloc[:-1]))


def test_the_maintenance_hour_is_no_pause() -> None:
    """ETH 5-minute bars, Monday to Thursday, with the 17:00–18:00 halt each day."""
    stamps = pd.date_range("2025-03-02 18:00", "2025-03-06 17:00", freq="5min")
    stamps = stamps[stamps.hour != 17]
    assert pauses(days(stamps), step=5 / 1440).size == 0


def test_a_decimated_intraday_line_breaks_exactly_at_the_pauses() -> None:
    """Two months of RTH bars are thinned; each weekend still cuts the line at its ends."""
    result = make.table_rth_intraday(days=60)
    assert result.table is not None
    x, y = days(result.table["timestamp"]), result.table["close"].to_numpy(dtype="float64")
    assert len(x) > LINE_POINTS
    expected = pauses(x, step=5 / 1440)
    weekends = int((np.diff(x) > 2).sum())
    assert weekends >= 8 and expected.size == weekends  # nights join at this scale
    lx, ly = broken_line(x, y, step=5 / 1440)
    gaps = np.flatnonzero(np.isnan(lx))
    assert len(lx) - gaps.size <= LINE_POINTS + 2 * expected.size
    np.testing.assert_array_equal(lx[gaps - 1], x[expected - 1])
    np.testing.assert_array_equal(lx[gaps + 1], x[expected])
    assert np.isnan(ly[gaps]).all()


def test_a_long_intraday_series_is_not_dashed() -> None:
    """Nine months of RTH bars: a weekend is a hole of a few pixels, so the line stays whole."""
    result = make.table_rth_intraday(days=270)
    assert result.table is not None
    assert [breaks(line) for line in drawn_lines(result)] == [0, 0]


def test_a_dense_envelope_breaks_after_each_pause() -> None:
    x = np.concatenate((np.arange(10_000), np.arange(10_000) + 20_000)) / 1440
    y = np.sin(np.arange(x.size) / 50.0)
    bx, lo, mid, hi = broken_envelope(x, y, step=1 / 1440)
    assert np.isnan(bx).sum() == 1
    assert all(np.isnan(a).sum() == 1 for a in (lo, mid, hi))


def test_long_lines_are_decimated_keeping_the_extremes() -> None:
    rng = np.random.default_rng(3)
    y = np.cumsum(rng.normal(size=50_000))
    x = np.arange(y.size, dtype="float64")
    dx, dy = decimate(x, y)
    assert len(dx) <= LINE_POINTS
    assert dy.max() == y.max() and dy.min() == y.min()
    assert np.all(np.diff(dx) > 0)


def test_short_lines_are_left_alone() -> None:
    x = np.arange(10, dtype="float64")
    dx, dy = decimate(x, x * 2)
    assert dx is x and len(dy) == 10
