"""Charts that drew a number on an axis of another unit (p29 play): a percentile of the range
in a contract's dollars stood as a line at 8,983 on the "range (points)" axis, the histogram
squeezed into its left 5%; the time of an intraday RSI low was a dot at 41 on a price axis
of 23,400, its time cut off at the right edge; and a histogram's rarest buckets read "least
often 1 (7 tied)", taken for the 1% bucket. Expected values from pandas and TA-Lib over the
bars built here from the minute file, never through Barb."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import talib
from asking import ask
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.text import Annotation
from rth_bars import rth_daily, rth_minutes

from barb.charts import chart_headline, draw_chart
from barb.result import Result

LANGUAGES = ("en", "ru")
DAY = "2024-03-27"


def _figure(result: Result, language: str) -> Figure:
    fig = draw_chart(result, language=language)
    assert fig is not None
    fig.canvas.draw()
    return fig


def _vertical_lines(fig: Figure) -> list[float]:
    (ax,) = fig.axes
    return sorted(
        float(line.get_xdata()[0])
        for line in ax.get_lines()
        if len(line.get_xdata()) == 2 and line.get_xdata()[0] == line.get_xdata()[1]
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_dollar_percentile_is_written_not_drawn_on_the_points_axis(
    engine_settings, minutes, language: str
) -> None:
    daily = rth_daily(minutes)
    ranges = daily["high"] - daily["low"]
    p90 = float(np.percentile(ranges, 90))
    query = {
        "session": "RTH",
        "from": "daily",
        "select": ["percentile(range, 90) as p90", "percentile(range, 90) * 20 as p90_usd"],
    }
    result = ask(query, engine_settings)
    assert result.summary.values["p90_usd"] == pytest.approx(p90 * 20)
    fig = _figure(result, language)
    (ax,) = fig.axes
    np.testing.assert_allclose(_vertical_lines(fig), [p90])
    # The axis spans the days' ranges, not the dollars: 779 would squeeze them to the left.
    assert ax.get_xlim()[1] < ranges.max() * 1.2 < p90 * 20
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(t.startswith("p90_usd = ") for t in legend)  # said, in its own unit


def _rth_rsi(minutes: pd.DataFrame) -> pd.Series:
    """TA-Lib RSI(14) of 15-minute RTH closes chained day to day, by the bar's open."""
    rth = rth_minutes(minutes)
    closes = rth.groupby(rth["timestamp"].dt.floor("15min"))["close"].last()
    return pd.Series(talib.RSI(closes.to_numpy(), 14), index=closes.index)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_time_of_an_intraday_rsi_low_is_marked_on_the_rsi(
    engine_settings, minutes, language: str
) -> None:
    rsi = _rth_rsi(minutes).loc[DAY]
    low_at = rsi.idxmin()
    query = {
        "session": "RTH",
        "from": "15m",
        "period": DAY,
        "map": {"rsi14": "rsi(close, 14)"},
        "select": ["arg_min(time(), rsi14) as t_min", "min(rsi14)", "last(time()) as t_last"],
    }
    result = ask(query, engine_settings)
    assert result.summary.values["t_min"] == f"{low_at:%H:%M}"
    fig = _figure(result, language)
    (ax,) = fig.axes
    (line,) = [line for line in ax.get_lines() if len(line.get_ydata()) == len(rsi)]
    np.testing.assert_allclose(line.get_ydata(), rsi.to_numpy(), atol=0.01)
    # The dots sit on the RSI: its low, and the day's last bar at its own RSI.
    dots = sorted(
        float(y)
        for c in ax.collections
        if isinstance(c, PathCollection)
        for _, y in c.get_offsets()
    )
    np.testing.assert_allclose(dots, sorted([rsi.min(), rsi.iloc[-1]]), atol=0.01)
    low, high = ax.get_ylim()
    assert 0 <= low <= rsi.min() and rsi.max() <= high <= 100
    # Each time under its bar is whole, the last bar's (16:45) too.
    width = fig.bbox.width
    tags = {a.get_text(): a for a in ax.texts if isinstance(a, Annotation)}
    for when in (f"{low_at:%H:%M}", f"{rsi.index[-1]:%H:%M}"):
        box = tags[when].get_window_extent()
        assert box.x0 >= 0 and box.x1 <= width, when


@pytest.mark.parametrize(
    ("language", "tie"),
    [
        ("en", "{value} day ({count} buckets tied)"),
        ("ru", "{value} день (одинаково у {count} интервалов)"),
    ],
)
def test_rarest_buckets_read_as_a_count_of_days_in_so_many_buckets(
    engine_settings, minutes, language: str, tie: str
) -> None:
    daily = rth_daily(minutes)
    ret = (daily["close"] / daily["close"].shift() - 1) * 100
    counts = np.floor(ret.dropna() / 0.05).value_counts()
    rarest = counts[counts == counts.min()]
    assert counts.min() == 1 and len(rarest) > 3  # counted, not named
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"ret": "(close / prev(close) - 1) * 100", "bucket": "floor(ret, 0.05)"},
        "group_by": "bucket",
        "select": "count() as days",
    }
    result = ask(query, engine_settings)
    assert sorted(result.table["days"]) == sorted(counts)
    head = chart_headline(result, language) or ""
    assert head.endswith(tie.format(value=1, count=len(rarest))), head
