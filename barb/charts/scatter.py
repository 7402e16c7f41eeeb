"""A correlation: each row as a point of its two columns, the least-squares line through
them, and r (the engine's answer) in the headline above."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from barb.charts.axes import headroom, legend, plot_axes, value_label
from barb.charts.columns import axis_text, floats, row_word
from barb.charts.kinds import Correlation
from barb.charts.style import ACCENT, HIGH, LABEL_PT, LEGEND_ROW_PX
from barb.charts.value_text import TickFormatter, format_value
from barb.charts.words import ENGLISH, Words
from barb.result import Result

MAX_POINTS = 6_000  # more rows than this are drawn as an even sample of them


def draw_scatter(
    fig: Figure, result: Result, correlation: Correlation, words: Words = ENGLISH
) -> bool:
    rows = result.source_rows
    assert rows is not None
    x, y = floats(rows[correlation.x]), floats(rows[correlation.y])
    both = np.isfinite(x) & np.isfinite(y)
    x, y = x[both], y[both]
    if x.size < 3 or np.ptp(x) == 0:
        return False
    ax = plot_axes(fig, grid_axis="both")
    shown = np.linspace(0, x.size - 1, min(x.size, MAX_POINTS)).astype(int)
    size = 46 if x.size <= 200 else 18 if x.size <= 2_000 else 9
    alpha = 0.8 if x.size <= 200 else 0.45
    ax.scatter(x[shown], y[shown], s=size, color=ACCENT, alpha=alpha, linewidth=0)
    slope, intercept = np.polyfit(x, y, 1)
    ends = np.array([x.min(), x.max()])
    ax.plot(ends, slope * ends + intercept, color=HIGH, linewidth=3.0)
    count = format_value(int(x.size), words=words)
    handles = [
        Line2D([], [], color=HIGH, linewidth=3.0, label=words("fit_line")),
        Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            color=ACCENT,
            label=words("n_points", count=count, rows=row_word(result, words)),
        ),
    ]
    headroom(ax, y, px=LEGEND_ROW_PX * len(handles) + 30, floor=False)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(MaxNLocator(nbins=5))
        axis.set_major_formatter(TickFormatter(words))
    ax.set_xlabel(axis_text(correlation.x, result, words), fontsize=LABEL_PT)
    value_label(ax, axis_text(correlation.y, result, words))
    legend(ax, handles, loc="upper left")
    return True
