"""How a column is distributed: a histogram with every answer about it as a vertical line,
the median or mean for reference, and far tails cut (and counted in the legend)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from barb.charts.answers import Aggregate, answer_text, answer_value, baseline
from barb.charts.axes import count_ticks, headroom, legend, plot_axes, text_handle, value_label
from barb.charts.bars import draw_bars
from barb.charts.columns import (
    axis_text,
    column_name,
    floats,
    row_word,
    timeframe,
    unit,
    zoned,
)
from barb.charts.style import (
    ACCENT_LIGHT,
    ANSWER_COLORS,
    BASELINE_LINE,
    INK,
    LABEL_PT,
    LEGEND_ROW_PX,
)
from barb.charts.tick_values import unit_text
from barb.charts.time_of_day import clock_axis, time_text, value_kind
from barb.charts.value_text import (
    TickFormatter,
    format_value,
    is_finite_number,
)
from barb.charts.words import ENGLISH, Words
from barb.column_units import column_unit
from barb.i18n import N_
from barb.lineage import Lineage
from barb.result import Result
from barb.script import ast

MAX_HIST_BINS = 50
HIST_TAIL = 0.5  # percent of values cut from each end of a histogram's x range
# Answers that are values the column takes, and so a place on its axis. A sum (94,422 points
# of range in a year), a spread (std = 133) or a count is no such place: drawn as a line it
# stretched the axis until the histogram vanished, or read as a range of 133 points.
POSITIONS = frozenset({"mean", "avg", "median", "percentile", "min", "max", "first", "last"})
_ARG_OF = {"max": "arg_max", "min": "arg_min"}  # the row of an extreme, its other value


def draw_histogram(
    fig: Figure,
    result: Result,
    rows: pd.DataFrame,
    column: str,
    aggs: list[Aggregate],
    words: Words = ENGLISH,
) -> bool:
    """How the column is distributed, with every answer about it as a vertical line; when
    the answers also average another column in the same unit (the overnight range beside
    the RTH range), that column's distribution is drawn over it as an outline."""
    values = floats(rows[column])
    values = values[np.isfinite(values)]
    if values.size == 0:
        return False
    value_unit = unit(column, result)
    other = _compared_column(rows, column, aggs, value_unit, result)
    compared = [column] if other is None else [column, other]
    marked = [
        a for a in aggs if a.column in compared and _is_position(a) and _in_axis_unit(a, result)
    ]
    other_values = np.array([]) if other is None else floats(rows[other])
    other_values = other_values[np.isfinite(other_values)]
    # A where's mean over all the period's rows, beside the answer over the rows it kept.
    bases = [(a, found) for a in marked if (found := baseline(a, result, words)) is not None]
    lo, hi = _histogram_range(
        np.concatenate([values, other_values]),
        [float(a.value) for a in marked] + [at for _, (at, _) in bases],
    )
    inside = values[(values >= lo) & (values <= hi)]
    drawn = np.concatenate([inside, other_values[(other_values >= lo) & (other_values <= hi)]])
    kind = value_kind(column, result, values)  # times of the day: every statistic on the clock
    whole = kind is None and _whole_numbers(drawn)
    if whole:
        edges = _whole_number_edges(drawn)
    else:
        edges = np.histogram_bin_edges(drawn, bins="auto")
        if len(edges) - 1 > MAX_HIST_BINS:
            edges = np.histogram_bin_edges(inside, bins=MAX_HIST_BINS, range=(lo, hi))
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
    handles: list[Any] = []
    if other is not None:
        other_counts, _ = np.histogram(other_values, bins=edges)
        ax.stairs(other_counts, edges, color=INK, linewidth=2.0)
        counts = np.maximum(counts, other_counts)
        # Named as the axis names them: "high", "low" in a Russian chart's legend were the
        # engine's, under an axis reading «максимум · минимум».
        handles += [
            Patch(color=ACCENT_LIGHT, label=column_name(column, result, words)),
            Line2D([], [], color=INK, linewidth=2.0, label=column_name(other, result, words)),
        ]
    for agg, color in zip(marked, ANSWER_COLORS, strict=False):
        at, label = float(agg.value), answer_text(agg, result, words)
        signed = _signed_partner(agg, aggs, result) if other is not None else None
        if signed is not None:  # max(absret) is the −3.79% day, marked where it fell
            at = float(signed.value)
            name = column_name(agg.name, result, words)
            label = words("answer", name=name, value=f"|{answer_value(signed, result, words)}|")
        ax.axvline(at, color=color, linewidth=3.2)
        handles.append(Line2D([], [], color=color, linewidth=3.2, label=label))
    for _, (at, label) in bases:
        ax.axvline(at, **BASELINE_LINE)
        handles.append(Line2D([], [], **BASELINE_LINE, label=label))
    funcs = {a.func for a in marked}
    # With two columns drawn, each answer is marked: a median line would not say whose it is.
    # Beside a baseline, the mean of all days is the reference: a median line by the two
    # (+0.105% by +0.0996% and +0.0676%) was a third dashed line in the same place.
    referenced = other is None and not bases
    if referenced and "median" not in funcs and (funcs & {"mean", "avg"} or not aggs):
        median = float(np.median(values))
        handles.append(
            _reference_line(ax, words("median"), median, value_unit, result, words, kind)
        )
    elif referenced and "median" in funcs and not funcs & {"mean", "avg"}:
        mean = float(np.mean(values))
        handles.append(_reference_line(ax, words("mean"), mean, value_unit, result, words, kind))
    handles += [text_handle(answer_text(a, result, words)) for a in aggs if a not in marked]
    # Each drawn column's cut tail is counted: the outline's own (the 3 largest down nights
    # of a move drawn over the range, -314.5 to -229.75) had gone unsaid (p33c #13).
    drawn_columns = [(column, values)] + ([] if other is None else [(other, other_values)])
    for name, column_values in drawn_columns:
        for key, count, edge in (
            (N_("below_not_drawn"), int((column_values < lo).sum()), lo),
            (N_("above_not_drawn"), int((column_values > hi).sum()), hi),
        ):
            if count:
                text = words(
                    key,
                    plural_of=count,  # «1 день … вне графика», «4 дня … не показаны»
                    count=format_value(count, words=words),
                    rows=row_word(result, words, count),
                    value=time_text(edge, kind)
                    if kind is not None
                    else format_value(edge, value_unit, words=words),
                )
                handles.append(text_handle(text if other is None else f"{name}: {text}"))
    headroom(ax, counts.astype("float64"), px=LEGEND_ROW_PX * len(handles) + 45)
    if kind is not None:  # times of the day on a clock: 09:30, 12:00
        clock_axis(ax.xaxis, float(edges[0]), float(edges[-1]), kind)
    else:
        ax.xaxis.set_major_formatter(TickFormatter(words, value_unit))
        if whole:  # a count of bars or days has no 2.5
            count_ticks(ax.xaxis)
    # The height is a count of rows: 12 CPI bars ticked 0,5 / 1,5 / 2,5 "bars".
    count_ticks(ax.yaxis)
    ax.yaxis.set_major_formatter(TickFormatter(words))
    label = axis_text(column, result, words, compared[1:])
    ax.set_xlabel(
        zoned(label, result, column, words) if kind is not None else label, fontsize=LABEL_PT
    )
    value_label(ax, words("number_of", rows=row_word(result, words)))
    legend(ax, handles, loc="upper right")
    return True


def _signed_partner(agg: Aggregate, aggs: list[Aggregate], result: Result) -> Aggregate | None:
    """The signed value selected beside an extreme of an absolute value: of ``max(absret)``
    with ``absret = abs(ret)``, ``arg_max(ret, absret)``. Drawn with the signed column, the
    biggest move's line stood at +3.79 while the day fell 3.79%."""
    if agg.func not in _ARG_OF or agg.column is None:
        return None
    found = Lineage(result.query).definition(agg.column)
    expr = found[0] if found is not None else None
    if not (isinstance(expr, ast.Call) and expr.name == "abs" and len(expr.args) == 1):
        return None
    inner = expr.args[0]
    if not isinstance(inner, ast.Column):
        return None
    for other in aggs:
        if (
            other.func == _ARG_OF[agg.func]
            and other.args == (inner.name, agg.column)
            and is_finite_number(other.value)
            and abs(abs(float(other.value)) - abs(float(agg.value)))
            <= 1e-9 * max(1.0, abs(float(agg.value)))
        ):
            return other
    return None


def _is_position(agg: Aggregate) -> bool:
    """Whether the answer is a value of its column's distribution, drawn as a line on it;
    the others are written in the legend only."""
    return agg.func in POSITIONS and is_finite_number(agg.value)


def _in_axis_unit(agg: Aggregate, result: Result) -> bool:
    """Whether the answer is in its column's own unit, so a place on the column's axis.
    ``percentile(range, 90) * 20 as p90_usd`` is a contract's dollars: its line stood at
    8,983 on a "range (points)" axis of 150 to 650, the histogram squeezed into its left 5%.
    The bare units are compared (CL's range is in points, its ``range * 1000`` in a
    contract's dollars, though the charts write both as dollars)."""
    frame = timeframe(result)
    return column_unit(agg.name, frame, result.query) == column_unit(
        str(agg.column), frame, result.query
    )


def _compared_column(
    rows: pd.DataFrame, column: str, aggs: list[Aggregate], value_unit: str | None, result: Result
) -> str | None:
    """Another column the answers aggregate, in the same unit as ``column``."""
    for agg in aggs:
        name = agg.column
        if (
            name is not None
            and name != column
            and agg.func not in ("count", "correlation")
            and name in rows.columns
            and pd.api.types.is_numeric_dtype(rows[name])
            and not pd.api.types.is_bool_dtype(rows[name])
            and unit(name, result) == value_unit
        ):
            return name
    return None


def _whole_numbers(values: np.ndarray) -> bool:
    """Whether every value is a whole number (a streak's length, bars since, a count)."""
    return bool(values.size) and bool(np.all(values == np.round(values)))


def _whole_number_edges(values: np.ndarray) -> np.ndarray:
    """Bins of whole numbers, each centred on its numbers: one per number, or k numbers
    each when there are more than ``MAX_HIST_BINS``. "auto" bins of run lengths 1 to 9 sat
    at 1.2, 2.0, 2.9…, the bar of 2 right of a median line at 2."""
    lo, hi = float(values.min()), float(values.max())
    width = max(1.0, float(np.ceil((hi - lo + 1) / MAX_HIST_BINS)))
    return np.arange(lo - 0.5, hi + 0.5 + width, width)


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
    ax: Axes,
    label: str,
    value: float,
    value_unit: str | None,
    result: Result,
    words: Words,
    kind: str | None,
) -> Line2D:
    ax.axvline(value, color=INK, linewidth=2.0, linestyle="--")
    text = f"{label} = {_value_text(value, value_unit, result, words, kind)}"
    return Line2D([], [], color=INK, linewidth=2.0, linestyle="--", label=text)


def _value_text(
    value: float, value_unit: str | None, result: Result, words: Words, kind: str | None
) -> str:
    """A value of the column as its answers are written: a time of day on the clock (the
    mean beside a median of 09:53 read "651.1"), else the number with its unit (a price at
    the tick)."""
    if kind is not None:
        return time_text(value, kind)
    return unit_text(value, value_unit, result, words)
