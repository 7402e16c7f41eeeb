"""Several counts without a group_by: the Bollinger touches of 2024 (upper, close below the
lower band, lower) were drawn as one series, the first count's, per month, under "days per
month" with no name, and read as all of them. Each count is its own series, in its colour and
named in the legend; a single count drawn beside others is named over its panel. Expected
counts are pandas over the sample's RTH days (DuckDB, ``conftest.py``), never the engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import figure, run
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex
from matplotlib.patches import Patch

from barb.charts import chart_headline

pytestmark = pytest.mark.slow

TOUCHES = {
    "session": "RTH",
    "from": "daily",
    "period": "2024",
    "map": {"up": "bollinger_upper()", "lo": "bollinger_lower()"},
    "select": [
        "count(high >= up) as touch_upper",
        "count(close < lo) as close_below_lower",
        "count(low <= lo) as touch_lower",
        "count()",
    ],
}
PER_MONTH = {"en": "days per month", "ru": "дней за месяц"}
DAYS = {"en": "days", "ru": "дней"}


@pytest.fixture(scope="module")
def touches(days: pd.DataFrame) -> pd.DataFrame:
    """Each 2024 day's touches of the 20-day Bollinger bands (2 population deviations)."""
    mean = days["close"].rolling(20).mean()
    spread = 2 * days["close"].rolling(20).std(ddof=0)
    flags = pd.DataFrame(
        {
            "touch_upper": days["high"] >= mean + spread,
            "close_below_lower": days["close"] < mean - spread,
            "touch_lower": days["low"] <= mean - spread,
        }
    )
    flags.index = pd.to_datetime(flags.index)
    return flags.loc["2024"]


def series_heights(ax) -> list[tuple[str, np.ndarray]]:
    """Each bar series drawn: its colour and its bars' heights, left to right."""
    found = []
    for bars in ax.collections:
        if isinstance(bars, PolyCollection):
            heights = np.array([p.vertices[2, 1] - p.vertices[0, 1] for p in bars.get_paths()])
            found.append((to_hex(bars.get_facecolors()[0]), heights))
    return found


@pytest.mark.parametrize("language", ["en", "ru"])
def test_each_count_is_a_series_per_month_named_in_the_legend(
    sample_settings, touches, language
) -> None:
    result = run(TOUCHES, sample_settings)
    per_month = touches.groupby(touches.index.month).sum()
    assert per_month.shape == (12, 3) and per_month.sum().tolist() == [
        result.summary.values[c] for c in per_month.columns
    ]
    (ax,) = figure(result, language).axes
    drawn = series_heights(ax)
    assert len(drawn) == 3  # count() of every day is their whole, left to the legend
    for (_, heights), column in zip(drawn, per_month.columns, strict=True):
        np.testing.assert_array_equal(heights, per_month[column].to_numpy())
    legend = ax.get_legend()
    named = {
        text.get_text(): handle
        for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True)
    }
    for (color, _), column in zip(drawn, per_month.columns, strict=True):
        label = f"{column} = {per_month[column].sum()} {DAYS[language]}"
        assert isinstance(named[label], Patch), named
        assert to_hex(named[label].get_facecolor()) == color
    assert len({color for color, _ in drawn}) == 3
    assert any(t.get_text() == PER_MONTH[language] for t in ax.texts)
    assert chart_headline(result, language)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_one_count_drawn_beside_others_is_named_over_its_panel(
    sample_settings, touches, language
) -> None:
    """``count(high >= up)`` beside ``count()``: the touches are drawn, named as such."""
    query = {**TOUCHES, "select": ["count(high >= up) as touch_upper", "count()"]}
    result = run(query, sample_settings)
    (ax,) = figure(result, language).axes
    [(_, heights)] = series_heights(ax)
    expected = touches["touch_upper"].groupby(touches.index.month).sum()
    np.testing.assert_array_equal(heights, expected.to_numpy())
    assert any(t.get_text() == f"touch_upper: {PER_MONTH[language]}" for t in ax.texts)
