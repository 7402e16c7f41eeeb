"""A category axis too crowded for every label, even in the smallest font, steps evenly: 53
week-of-year groups with the highest and lowest named (W30, W43) had come back labelled
W1, W6, W11, W16, W21, W30, W36, W43, W51 (steps 5, 5, 5, 5, 9, 6, 7, 8; p46w #9). The
named bars get a bold tick of their own, unlabelled, between the labelled ones."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from barb.charts.axes import NAMED_TICK_WIDTH, category_ticks, plot_axes
from barb.charts.style import new_figure

WEEKS = [f"W{i}" for i in range(1, 54)]
NAMED = [29, 42]  # W30 and W43, the headline's highest and lowest


@pytest.mark.parametrize("width_px", [360, 720])
def test_weeks_that_do_not_all_fit_are_labelled_every_step(width_px: int) -> None:
    fig = new_figure(width_px)
    FigureCanvasAgg(fig)
    ax = plot_axes(fig)
    ax.bar(np.arange(len(WEEKS)), np.ones(len(WEEKS)))
    category_ticks(ax, WEEKS, rotate=0, step=5, keep=NAMED)
    shown = [
        (t, label.get_text())
        for t, label in zip(ax.get_xticks(), ax.get_xticklabels(), strict=True)
    ]
    places = np.array([t for t, _ in shown])
    assert [text for _, text in shown] == WEEKS[::5]  # W1, W6 … W51
    assert set(np.diff(places)) == {5}
    minor = ax.xaxis.get_minor_ticks()
    assert list(ax.get_xticks(minor=True)) == NAMED
    assert all(t.tick1line.get_markeredgewidth() == NAMED_TICK_WIDTH for t in minor)
    assert not any(t.label1.get_text() for t in minor)


def test_labels_that_fit_smaller_are_each_drawn() -> None:
    """Twelve months with the named ones off the step fit level in a smaller font: every
    one is labelled, as before."""
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    fig = new_figure(360)
    FigureCanvasAgg(fig)
    ax = plot_axes(fig)
    category_ticks(ax, months, rotate=0, step=2, keep=[7])
    assert [label.get_text() for label in ax.get_xticklabels()] == months
    assert len(ax.get_xticks(minor=True)) == 0
