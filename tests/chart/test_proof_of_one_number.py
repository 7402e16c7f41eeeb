"""One-number answers whose chart must prove them: a share of days (the mean of a condition)
as the share per year or month with the answer across, and the deepest drawdown from the
running high as the curve over time with the trough and the high it fell from marked and
dated. Expected numbers come from pandas over DuckDB's RTH days of the same Parquet bars,
never the engine."""

from __future__ import annotations

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from engine_results import bar_heights, figure, run
from matplotlib.collections import PathCollection
from matplotlib.text import Text

from barb.charts import render_chart

pytestmark = pytest.mark.slow


def answer_line(ax) -> float:
    """The level of the one horizontal line drawn across the whole axes."""
    (level,) = {
        float(line.get_ydata()[0])
        for line in ax.get_lines()
        if len(line.get_ydata()) == 2 and line.get_ydata()[0] == line.get_ydata()[1]
    }
    return level


def bar_texts(ax) -> list[str]:
    """The texts written along the bars (the rows each counts), left to right: in white
    inside a bar, in ink in a hollow one or above a 0% bar; a share ("51.0%") moved into
    its bar, off the answer's line, is no count."""
    texts = [t for t in ax.texts if t.get_rotation() == 90 and not t.get_text().endswith("%")]
    return [t.get_text() for t in sorted(texts, key=lambda t: t.xy[0])]


def russian_days(n: int) -> str:
    if n % 10 == 1 and n % 100 != 11:
        return "день"
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return "дня"
    return "дней"


# --- a share of days ---------------------------------------------------------------------------


def test_a_mapped_share_of_up_days_is_drawn_per_year(sample_settings, days) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"up": "close > open"},
        "select": "mean(up)",
    }
    result = run(query, sample_settings)
    up = (days["close"] > days["open"]).astype(float)
    years = pd.DatetimeIndex(days.index).year
    expected = up.groupby(years).mean()
    counted = up.groupby(years).count()
    assert len(expected) > 10 and expected.std() > 0.01  # years really differ

    for language in ("en", "ru"):
        fig = figure(result, language)
        (ax,) = fig.axes
        np.testing.assert_allclose(bar_heights(ax), expected.to_numpy(), rtol=1e-12)
        assert answer_line(ax) == pytest.approx(up.mean(), abs=1e-12)
        labels = [t.get_text() for t in ax.get_xticklabels()]
        assert set(labels) <= {str(y) for y in expected.index} and labels[0] == "2008"
        # Each bar says how many days it counts, where it fits (the short last year's
        # bar is as tall as the others: every bar has room).
        if language == "en":
            assert bar_texts(ax) == [f"{n} days" for n in counted]
        else:
            assert bar_texts(ax) == [f"{n} {russian_days(n)}" for n in counted]
            assert "доля дней за год" in {t.get_text() for t in fig.findobj(Text)}


def test_a_share_of_a_condition_in_the_select_is_drawn_per_month(sample_settings, days) -> None:
    query = {"session": "RTH", "from": "daily", "period": "2024", "select": "mean(close > open)"}
    result = run(query, sample_settings)
    year = days[pd.DatetimeIndex(days.index).year == 2024]
    up = (year["close"] > year["open"]).astype(float)
    expected = up.groupby(pd.DatetimeIndex(year.index).month).mean()
    assert len(expected) == 12

    fig = figure(result)
    (ax,) = fig.axes
    np.testing.assert_allclose(bar_heights(ax), expected.to_numpy(), rtol=1e-12)
    assert answer_line(ax) == pytest.approx(up.mean(), abs=1e-12)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [f"share of days where close > open = {up.mean() * 100:.1f}%"]
    # The value over each bar, as the axis ticks it, in percent.
    shares = sorted((t for t in ax.texts if t.get_text().endswith("%")), key=lambda t: t.xy[0])
    assert [t.get_text() for t in shares] == [f"{v * 100:.1f}%" for v in expected]
    assert ax.texts[-1].get_text() == "share of days per month"  # the axis's name, above it
    assert render_chart(result) is not None


def test_a_share_whose_condition_reads_earlier_bars_is_not_guessed(sample_settings) -> None:
    """``close > prev(close)`` over the kept rows alone would read the wrong neighbours: no
    share chart is drawn from it (and the CLI says why there is no chart)."""
    from barb.cli import _no_chart_reason

    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "select": "mean(close > prev(close))",
    }
    result = run(query, sample_settings)
    assert render_chart(result) is None
    assert "no rows" not in _no_chart_reason(result)


# --- the deepest drawdown ----------------------------------------------------------------------


@pytest.mark.parametrize("period", [None, "2022:2023"])
def test_the_deepest_drawdown_is_the_curve_with_its_trough_and_high(
    sample_settings, days, period
) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"dd": "close / cummax(close) - 1"},
        "select": "min(dd)",
    }
    if period:
        query["period"] = period
    result = run(query, sample_settings)
    close = days["close"]
    if period:
        close = close[pd.DatetimeIndex(close.index).year.isin([2022, 2023])]
    dd = close / close.cummax() - 1
    trough = pd.Timestamp(dd.idxmin())
    high = pd.Timestamp(close[:trough].idxmax())
    assert high < trough

    fig = figure(result)
    (ax,) = fig.axes
    points = np.concatenate(
        [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection)]
    )
    marked = {(round(float(x), 6), round(float(y), 12)) for x, y in points}
    assert (round(mdates.date2num(trough), 6), round(dd.min(), 12)) in marked
    assert (round(mdates.date2num(high), 6), 0.0) in marked
    (curve,) = [line for line in ax.get_lines() if len(line.get_xdata()) > 100]
    assert np.nanmin(np.asarray(curve.get_ydata(), float)) == pytest.approx(dd.min())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[0].endswith(f" on {trough:%Y-%m-%d}")
    assert legend[1] == f"fell from the high of {high:%Y-%m-%d}"
    ru = [t.get_text() for t in figure(result, "ru").axes[0].get_legend().get_texts()]
    assert ru[0].endswith(f", {trough:%Y-%m-%d}")
    assert ru[1] == f"падение от максимума {high:%Y-%m-%d}"
