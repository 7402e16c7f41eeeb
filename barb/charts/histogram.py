"""How a column is distributed: a histogram with every answer about it as a vertical line,
the median or mean for reference, and far tails cut (and counted in the legend)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from barb.charts.answers import Aggregate, answer_text
from barb.charts.axes import headroom, legend, plot_axes, text_handle, value_label
from barb.charts.bars import draw_bars
from barb.charts.columns import axis_text, floats, row_word, unit
from barb.charts.style import ACCENT_LIGHT, ANSWER_COLORS, INK, LABEL_PT, LEGEND_ROW_PX
from barb.charts.time_of_day import clock_axis, time_kind
from barb.charts.value_text import (
    TickFormatter,
    format_value,
    is_finite_number,
    with_unit,
)
from barb.charts.words import ENGLISH, Words
from barb.i18n import N_
from barb.result import Result

MAX_HIST_BINS = 50
HIST_TAIL = 0.5  # percent of values cut from each end of a histogram's x range


def draw_histogram(
    fig: Figure,
    result: Result,
    rows: pd.DataFrame,
    column: str,
    aggs: list[Aggregate],
    words: Words = ENGLISH,
) -> bool:
    """How the column is distributed, with every answer about it as a vertical line."""
    values = floats(rows[column])
    values = values[np.isfinite(values)]
    if values.size == 0:
        return False
    marked = [
        a for a in aggs if a.column == column and a.func != "count" and is_finite_number(a.value)
    ]
    lo, hi = _histogram_range(values, [float(a.value) for a in marked])
    inside = values[(values >= lo) & (values <= hi)]
    edges = np.histogram_bin_edges(inside, bins="auto")
    if len(edges) - 1 > MAX_HIST_BINS:
        edges = np.histogram_bin_edges(inside, bins=MAX_HIST_BINS)
    counts, edges = np.histogram(inside, bins=edges)

    ax = plot_axes(fig)
    draw_bars(
        ax,
        edges[:-1],
        counts,
        width=np.diff(edges),
        from_edge=True,
        color=ACCENT_LIGHT,
        edgecolor="white",
        linewidth=0.8,
    )
    value_unit = unit(column, result)
    handles: list[Any] = []
    for agg, color in zip(marked, ANSWER_COLORS, strict=False):
        ax.axvline(float(agg.value), color=color, linewidth=3.2)
        handles.append(
            Line2D([], [], color=color, linewidth=3.2, label=answer_text(agg, result, words))
        )
    funcs = {a.func for a in marked}
    if "median" not in funcs and (funcs & {"mean", "avg"} or not aggs):
        median = float(np.median(values))
        handles.append(_reference_line(ax, words("median"), median, value_unit, words))
    elif "median" in funcs and not funcs & {"mean", "avg"}:
        mean = float(np.mean(values))
        handles.append(_reference_line(ax, words("mean"), mean, value_unit, words))
    handles += [text_handle(answer_text(a, result, words)) for a in aggs if a not in marked]
    word = row_word(result, words)
    for key, count, edge in (
        (N_("below_not_drawn"), int((values < lo).sum()), lo),
        (N_("above_not_drawn"), int((values > hi).sum()), hi),
    ):
        if count:
            text = words(
                key,
                count=format_value(count, words=words),
                rows=word,
                value=format_value(edge, value_unit, words=words),
            )
            handles.append(text_handle(text))
    headroom(ax, counts.astype("float64"), px=LEGEND_ROW_PX * len(handles) + 45)
    kind = time_kind(column, result.query)
    if kind is not None:  # times of the day on a clock: 09:30, 12:00
        clock_axis(ax.xaxis, float(edges[0]), float(edges[-1]), kind)
    else:
        ax.xaxis.set_major_formatter(TickFormatter(words))
    ax.yaxis.set_major_formatter(TickFormatter(words))
    ax.set_xlabel(axis_text(column, result, words), fontsize=LABEL_PT)
    value_label(ax, words("number_of", rows=word))
    legend(ax, handles, loc="upper right")
    return True


def _histogram_range(values: np.ndarray, marks: list[float]) -> tuple[float, float]:
    """The x range to draw: a far tail would squeeze the bulk into a few bars, so it is cut
    (and counted in the legend); the answers themselves always stay in view."""
    lo, hi = float(values.min()), float(values.max())
    inner_lo, inner_hi = np.percentile(values, [HIST_TAIL, 100 - HIST_TAIL])
    stretch = 0.25 * ((inner_hi - inner_lo) or 1.0)
    if inner_lo - lo > stretch:
        lo = float(inner_lo)
    if hi - inner_hi > stretch:
        hi = float(inner_hi)
    return min([lo, *marks]), max([hi, *marks])


def _reference_line(
    ax: Axes, label: str, value: float, value_unit: str | None, words: Words
) -> Line2D:
    ax.axvline(value, color=INK, linewidth=2.0, linestyle="--")
    text = with_unit(f"{label} = {format_value(value, value_unit, words=words)}", value_unit, words)
    return Line2D([], [], color=INK, linewidth=2.0, linestyle="--", label=text)
