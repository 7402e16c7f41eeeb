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
from barb.charts.axes import headroom, legend, plot_axes, text_handle
from barb.charts.bars import draw_bars
from barb.charts.columns import floats, row_word, timeframe, unit
from barb.charts.style import ACCENT_LIGHT, ANSWER_COLORS, INK, LABEL_PT, LEGEND_ROW_PX
from barb.charts.value_text import TickFormatter, format_value, is_finite_number, with_unit
from barb.proof_names import axis_label
from barb.result import Result

MAX_HIST_BINS = 50
HIST_TAIL = 0.5  # percent of values cut from each end of a histogram's x range


def draw_histogram(
    fig: Figure, result: Result, rows: pd.DataFrame, column: str, aggs: list[Aggregate]
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
        handles.append(Line2D([], [], color=color, linewidth=3.2, label=answer_text(agg, result)))
    funcs = {a.func for a in marked}
    if "median" not in funcs and (funcs & {"mean", "avg"} or not aggs):
        handles.append(_reference_line(ax, "median", float(np.median(values)), value_unit))
    elif "median" in funcs and not funcs & {"mean", "avg"}:
        handles.append(_reference_line(ax, "mean", float(np.mean(values)), value_unit))
    handles += [text_handle(answer_text(a, result)) for a in aggs if a not in marked]
    word = row_word(result)
    if below := int((values < lo).sum()):
        handles.append(
            text_handle(f"{below:,} {word} below {format_value(lo, value_unit)} not drawn")
        )
    if above := int((values > hi).sum()):
        handles.append(
            text_handle(f"{above:,} {word} above {format_value(hi, value_unit)} not drawn")
        )
    headroom(ax, counts.astype("float64"), px=LEGEND_ROW_PX * len(handles) + 30)
    ax.xaxis.set_major_formatter(TickFormatter())
    ax.yaxis.set_major_formatter(TickFormatter())
    ax.set_xlabel(axis_label(column, timeframe(result), result.query), fontsize=LABEL_PT)
    ax.set_ylabel(f"number of {row_word(result)}", fontsize=LABEL_PT)
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


def _reference_line(ax: Axes, label: str, value: float, value_unit: str | None) -> Line2D:
    ax.axvline(value, color=INK, linewidth=2.0, linestyle="--")
    text = with_unit(f"{label} = {format_value(value, value_unit)}", value_unit)
    return Line2D([], [], color=INK, linewidth=2.0, linestyle="--", label=text)
