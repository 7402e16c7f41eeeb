"""A histogram of whole numbers (run lengths, bars since, counts) has a bar per number,
centred on it, and whole-number ticks (p28b F4): "auto" bins of up-runs 1 to 9 sat at 1.2,
2.0, 2.9…, the bar of 2 right of the median line at 2, and the axis read "2,5". Expected
runs from pandas over DuckDB's RTH days, never the engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import figure, run
from matplotlib.collections import PolyCollection

pytestmark = pytest.mark.slow


def _up_runs(close: pd.Series) -> pd.Series:
    """The length of every run of up closes that ended (a down or flat close after it),
    each counted once."""
    up = (close > close.shift()).to_numpy()
    runs, length = [], 0
    for is_up in up:
        if is_up:
            length += 1
        elif length:
            runs.append(length)
            length = 0
    return pd.Series(runs)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_run_lengths_get_a_bar_per_number(sample_settings, days, language) -> None:
    runs = _up_runs(days["close"])
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "up": "close > prev(close)",
            "run": "streak(up)",
            "run_end": "run > 0 and next(run) == 0",
        },
        "where": "run_end",
        "select": ["count() as runs", "mean(run) as avg_run"],
    }
    result = run(query, sample_settings)
    assert result.summary.values["runs"] == len(runs)
    fig = figure(result, language)
    ax = fig.axes[0]
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    spans = np.array([(p.vertices[0, 0], p.vertices[2, 0]) for p in bars.get_paths()])
    heights = np.array([p.vertices[2, 1] - p.vertices[0, 1] for p in bars.get_paths()])
    centres = spans.mean(axis=1)
    np.testing.assert_allclose(centres, np.round(centres))  # each bar on its number
    np.testing.assert_allclose(spans[:, 1] - spans[:, 0], 1.0)
    counts = runs.value_counts()
    for at, height in zip(np.round(centres).astype(int), heights, strict=True):
        assert height == counts.get(at, 0)
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert all(float(t).is_integer() for t in ticks)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_histograms_count_axis_ticks_whole_bars(sample_settings, language) -> None:
    """12 CPI opening bars drawn by volume: no bin holds more than 2, and the count axis
    read 0,5 / 1,5 / 2,5 «баров». Its ticks are whole counts, and the bars add up to the
    rows behind the answer."""
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024",
        "join": "cpi",
        "where": "cpi and time() == '09:30'",
        "select": ["mean(volume)", "count()"],
    }
    result = run(query, sample_settings)
    fig = figure(result, language)
    ax = fig.axes[0]
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    heights = np.array([p.vertices[2, 1] - p.vertices[0, 1] for p in bars.get_paths()])
    assert heights.sum() == result.summary.values["count"] == 12
    low, high = ax.get_ylim()
    ticks = [t for t in ax.get_yticks() if low <= t <= high]
    assert len(ticks) >= 2
    assert all(float(t).is_integer() for t in ticks)
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert not any("," in text or "." in text for text in labels), labels


def test_a_histograms_count_axis_steps_roundly(sample_settings, days) -> None:
    """Whole counts step by 1, 2 or 5 times a power of ten: "average daily range in 2024"
    counted its 259 days 0, 8, 16 … 48 (and 0, 6, 12 … 54 before)."""
    result = run(
        {"session": "RTH", "from": "daily", "period": "2024", "select": "mean(range)"},
        sample_settings,
    )
    year = days[pd.DatetimeIndex(days.index).year == 2024]
    assert result.summary.value == pytest.approx((year.high - year.low).mean(), abs=0.01)
    ax = figure(result, "ru").axes[0]
    low, high = ax.get_ylim()
    ticks = np.array([t for t in ax.get_yticks() if low <= t <= high])
    (step,) = set(np.diff(ticks).tolist())
    power = 10 ** np.floor(np.log10(step))
    assert step / power in (1, 2, 5)


def test_a_count_beside_a_mean_steps_roundly(sample_settings, days) -> None:
    """ "Average daily return and number of days by month": the count panel read 0, 80, 160,
    240 days. Its ticks step by 1, 2 or 5 times a power of ten, its bars the days of each
    month (DuckDB's RTH days)."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2015:2025",
        "map": {"ret": "(close / prev(close) - 1) * 100"},
        "group_by": "month()",
        "select": ["mean(ret)", "count()"],
    }
    fig = figure(run(query, sample_settings), "ru")
    ax = fig.axes[-1]
    index = pd.DatetimeIndex(days.index)
    per_month = index[(index.year >= 2015) & (index.year <= 2025)].month.value_counts()
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    heights = [p.vertices[2, 1] - p.vertices[0, 1] for p in bars.get_paths()]
    assert heights == per_month.sort_index().tolist()
    low, high = ax.get_ylim()
    ticks = np.array([t for t in ax.get_yticks() if low <= t <= high])
    (step,) = set(np.diff(ticks).tolist())
    assert step / 10 ** np.floor(np.log10(step)) in (1, 2, 5)
