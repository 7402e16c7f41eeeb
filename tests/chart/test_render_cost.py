"""What makes a chart cheaper to render must not change it: bars as one collection, their
value labels, ticks pinned before drawing and the PNG writer each give the pixels that
matplotlib's own way gives; and a rendered figure leaves no garbage for a full collection."""

from __future__ import annotations

import gc
import io
from collections.abc import Callable

import chart_factories as make
import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.ticker import MaxNLocator
from PIL import Image

from barb.charts import render_chart
from barb.charts.axes import fix_ticks, plot_axes
from barb.charts.bars import draw_bars, label_bars
from barb.charts.png import canvas_png
from barb.charts.style import new_figure
from barb.charts.time_axis import date_axis
from barb.charts.value_text import TickFormatter, format_all

VALUES = np.array([3.5, -1.25, 0.0, 7.0, 2.75, -4.5])
EDGES = np.array([0.0, 1.5, 2.0, 4.0, 4.5])
COUNTS = np.array([5, 9, 2, 0])
COLORS = ["#15803d", "#dc2626", "#9ca3af", "#ea580c", "#1d4ed8", "#2563eb"]


def pixels(draw: Callable[[Axes], None], *, pinned: bool = False) -> np.ndarray:
    """The RGBA pixels of a chart-sized figure with one plot drawn by ``draw``."""
    fig = new_figure(1280)
    canvas = FigureCanvasAgg(fig)
    draw(plot_axes(fig))
    if pinned:
        fix_ticks(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


def assert_same_pixels(ours: Callable[[Axes], None], theirs: Callable[[Axes], None]) -> None:
    np.testing.assert_array_equal(pixels(ours), pixels(theirs))


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        pytest.param(
            lambda ax: draw_bars(
                ax, np.arange(6), VALUES, width=0.72, color=COLORS, edgecolor=COLORS, linewidth=1
            ),
            lambda ax: [
                bar.set_color(color)
                for bar, color in zip(ax.bar(np.arange(6), VALUES, width=0.72), COLORS, strict=True)
            ],
            id="grouped bars",
        ),
        pytest.param(
            lambda ax: draw_bars(
                ax, np.arange(6), VALUES, width=0.7, color=COLORS, horizontal=True
            ),
            lambda ax: ax.barh(np.arange(6), VALUES, height=0.7, color=COLORS),
            id="ranked bars",
        ),
        pytest.param(
            lambda ax: draw_bars(
                ax,
                EDGES[:-1],
                COUNTS,
                width=np.diff(EDGES),
                from_edge=True,
                color="#93b4f5",
                edgecolor="white",
                linewidth=0.8,
            ),
            lambda ax: ax.bar(
                EDGES[:-1],
                COUNTS,
                width=np.diff(EDGES),
                align="edge",
                color="#93b4f5",
                edgecolor="white",
                linewidth=0.8,
            ),
            id="histogram bins",
        ),
        pytest.param(
            lambda ax: draw_bars(
                ax,
                np.arange(6) + 19_000.0,
                VALUES,
                base=100 + VALUES[::-1],
                width=0.65,
                color=COLORS,
                edgecolor=COLORS,
                linewidth=0.8,
            ),
            lambda ax: ax.bar(
                np.arange(6) + 19_000.0,
                VALUES,
                bottom=100 + VALUES[::-1],
                width=0.65,
                color=COLORS,
                edgecolor=COLORS,
                linewidth=0.8,
            ),
            id="candle bodies",
        ),
    ],
)
def test_bars_draw_as_matplotlib_bars_do(
    ours: Callable[[Axes], None], theirs: Callable[[Axes], None]
) -> None:
    """Same corners, colours, edges and autoscaled limits (the base stays sticky)."""
    assert_same_pixels(ours, theirs)


@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
def test_bar_labels_sit_where_bar_label_puts_them(horizontal: bool) -> None:
    values = np.array([3.5, -1.25, np.nan, 7.0])
    at = np.arange(len(values))
    heights = np.nan_to_num(values)

    def ours(ax: Axes) -> None:
        draw_bars(ax, at, heights, width=0.7, color="#1d4ed8", horizontal=horizontal)
        label_bars(ax, at, values, "%", size=12.5, horizontal=horizontal)

    def theirs(ax: Axes) -> None:
        bar = ax.barh if horizontal else ax.bar
        bars = bar(at, heights, 0.7, color="#1d4ed8")
        ax.bar_label(
            bars,
            labels=format_all(values, "%"),
            padding=3,
            fontsize=12.5,
            color="#111827",
            fontweight="bold",
        )

    assert_same_pixels(ours, theirs)


def test_pinned_ticks_draw_the_same_axes() -> None:
    """Dates on x, a value axis on y: pinned, only the ticks in view remain, drawn the same."""
    x = mdates.date2num(pd.date_range("2024-01-02", periods=90, freq="B").to_numpy())
    y = 18_000 + np.cumsum(np.random.default_rng(3).normal(0, 40, len(x)))
    fig = new_figure(1280)
    ax = plot_axes(fig)

    def draw(ax: Axes) -> None:
        ax.plot(x, y)
        ax.yaxis.set_major_locator(MaxNLocator(nbins=6))
        ax.yaxis.set_major_formatter(TickFormatter())
        date_axis(ax, x)

    draw(ax)
    located = len(ax.get_xticks()) + len(ax.get_yticks())
    fix_ticks(fig)
    assert len(ax.get_xticks()) + len(ax.get_yticks()) < located
    for axis in (ax.xaxis, ax.yaxis):
        lo, hi = sorted(axis.get_view_interval())
        assert all(lo <= loc <= hi for loc in axis.get_majorticklocs())
    np.testing.assert_array_equal(pixels(draw, pinned=True), pixels(draw))


def test_the_png_holds_exactly_the_drawn_pixels() -> None:
    fig = new_figure(1280)
    canvas = FigureCanvasAgg(fig)
    ax = plot_axes(fig)
    ax.plot([0, 1, 2], [3, 1, 2])
    png = canvas_png(canvas)
    drawn = np.asarray(canvas.buffer_rgba())
    decoded = Image.open(io.BytesIO(png))
    assert decoded.mode == "RGB"
    assert (drawn[..., 3] == 255).all()  # opaque: dropping alpha loses nothing
    np.testing.assert_array_equal(np.asarray(decoded), drawn[..., :3])


def test_a_rendered_figure_leaves_no_garbage_behind() -> None:
    """Without the young collection in render_chart, a chart leaves ~3,400 objects in
    reference cycles, which ends in full collections of the whole process."""
    result = make.scalar_mean()
    render_chart(result)
    gc.collect()
    render_chart(result)
    assert gc.collect() < 100
