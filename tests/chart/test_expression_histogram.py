"""A statistic of an expression is drawn as its mapped form is (p38c B3): ``mean(range /
open * 100)`` drew no chart, where ``mean(range_pct)`` with ``range_pct`` mapped drew the
histogram of range_pct. Expected values from pandas over DuckDB's RTH days."""

from __future__ import annotations

import numpy as np
import pytest
from engine_results import figure, run
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D

pytestmark = pytest.mark.slow

WRITTEN = {
    "session": "RTH",
    "from": "daily",
    "period": "2024",
    "select": "mean(range / open * 100)",
}
MAPPED = {**WRITTEN, "map": {"range_pct": "range / open * 100"}, "select": "mean(range_pct)"}


def _bars(fig) -> tuple[np.ndarray, np.ndarray]:
    ax = fig.axes[0]
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    paths = bars.get_paths()
    edges = np.array([p.vertices[0, 0] for p in paths] + [paths[-1].vertices[2, 0]])
    heights = np.array([p.vertices[2, 1] - p.vertices[0, 1] for p in paths])
    return edges, heights


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_mean_of_an_expression_draws_its_histogram(sample_settings, days, language) -> None:
    year = days[[str(d).startswith("2024") for d in days.index]]
    pct = ((year["high"] - year["low"]) / year["open"] * 100).to_numpy()
    written = figure(run(WRITTEN, sample_settings), language)
    edges, heights = _bars(written)
    inside = pct[(pct >= edges[0]) & (pct <= edges[-1])]
    np.testing.assert_array_equal(heights, np.histogram(inside, bins=edges)[0])
    # The mean marked where it is, and the axis named by the expression, in percent.
    ax = written.axes[0]
    marks = [line.get_xdata()[0] for line in ax.get_lines() if isinstance(line, Line2D)]
    assert any(abs(at - pct.mean()) < 1e-9 for at in marks)
    assert ax.get_xlabel() == "range / open * 100 (%)"
    # The same bars as the mapped form's.
    np.testing.assert_array_equal(heights, _bars(figure(run(MAPPED, sample_settings), language))[1])
