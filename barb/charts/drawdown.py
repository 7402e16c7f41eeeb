"""The lowest or highest value of a column measured from a running extreme (``min(dd)`` with
``dd`` = ``close / cummax(close) - 1``): the column over time, the answer marked on the bar
it fell on and dated, and, for a fall from the running high (or a rise from the running
low), the bar that high was set on, the span between them shaded. A histogram of the
drawdown said how deep it went, never when; the curve says both."""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from barb.charts.answers import Aggregate, answer_text, read_aggregates
from barb.charts.axes import headroom, legend, plot_axes, text_handle, value_label
from barb.charts.columns import (
    axis_text,
    bar_labels,
    floats,
    is_number,
    time_column,
    timeframe,
    unit,
)
from barb.charts.kinds import in_time_order, rows_picked
from barb.charts.latest import mark_value
from barb.charts.line_points import broken_line
from barb.charts.style import (
    ACCENT,
    ACCENT_LIGHT,
    ANSWER_COLORS,
    AXIS,
    BAND,
    FIG_H_IN,
    FIG_W_IN,
    INK,
    LEGEND_ROW_PX,
)
from barb.charts.time_axis import MAX_LABELLED_BARS, bar_step, date_axis, label_axis
from barb.charts.value_text import TickFormatter, date_text, is_finite_number
from barb.charts.words import ENGLISH, Words
from barb.i18n import N_
from barb.lineage import calls_behind
from barb.result import Result
from barb.script import ast

# The running extremes a column is measured from, and the answer that is its far end: the
# deepest fall from the running high is a min, the highest rise from the running low a max.
FROM_EXTREME = {"cummax": "min", "cummin": "max"}
DOT_PX = 14  # the answer's dot's radius and its white edge, with a pixel or two to spare


@dataclass(frozen=True)
class RunningExtreme:
    """A min or max of ``answer.column``, a column made with ``running`` (``cummax(close)``)."""

    answer: Aggregate
    running: ast.Call


def running_extreme(result: Result) -> RunningExtreme | None:
    """The first min or max answered of a column of the rows over time that was made with a
    running high or low."""
    rows = result.source_rows
    if rows is None or rows.empty or time_column(rows) is None:
        return None
    for agg in read_aggregates(result):
        column = agg.column
        if agg.func not in ("min", "max") or column is None or not is_finite_number(agg.value):
            continue
        if column not in rows.columns or not is_number(rows[column]):
            continue
        calls = calls_behind(result.query, column)
        running = next((c for c in calls if c.name.lower() in FROM_EXTREME), None)
        if running is not None:
            return RunningExtreme(agg, running)
    return None


def draw_running_extreme(
    fig: Figure, result: Result, extreme: RunningExtreme, words: Words = ENGLISH
) -> bool:
    rows, answer = result.source_rows, extreme.answer
    assert rows is not None and answer.column is not None
    time_col = time_column(rows)
    assert time_col is not None
    rows = in_time_order(rows, time_col)
    values = floats(rows[answer.column])
    if not np.isfinite(values).any():
        return False
    x = mdates.date2num(rows[time_col].to_numpy())
    step = bar_step(x, timeframe(result))
    # The first bar with the answer's value: the day the trough was reached.
    at = int(np.nanargmin(values) if answer.func == "min" else np.nanargmax(values))
    ax = plot_axes(fig)
    handles: list[Line2D] = []
    start = _started_from(rows, extreme, at, result)
    if start is not None:
        ax.axvspan(x[start], x[at], color=BAND, linewidth=0)
        ax.scatter([x[start]], [values[start]], s=110, color=INK, marker="D", zorder=4)
        fell = extreme.running.name.lower() == "cummax"
        key = N_("fell_from") if fell else N_("rose_from")
        when = date_text(rows[time_col].iloc[start])
        handles.append(
            Line2D([], [], color=INK, marker="D", linestyle="none", label=words(key, date=when))
        )
    line_x, line_y = broken_line(x, values, step=step)
    finite = values[np.isfinite(values)]
    if finite.max() <= 0 or finite.min() >= 0:  # under (or over) zero: the area to it
        ax.fill_between(line_x, line_y, 0, color=ACCENT_LIGHT, alpha=0.6, linewidth=0)
    ax.plot(line_x, line_y, color=ACCENT, linewidth=1.8)
    ax.axhline(0, color=AXIS, linewidth=1.2)
    mark_value(ax, x[at], values[at])
    when = date_text(rows[time_col].iloc[at])
    text = words("answer_on", answer=answer_text(answer, result, words), date=when)
    handles.insert(
        0,
        # The dot and dashed line ``mark_value`` draws.
        Line2D(
            [], [], color=ANSWER_COLORS[0], marker="o", markersize=9, linestyle="--", label=text
        ),
    )
    others = [a for a in read_aggregates(result) if a.name != answer.name]
    handles += [text_handle(answer_text(a, result, words)) for a in others]
    room_px = LEGEND_ROW_PX * len(handles) + 30
    under = finite.max() <= 0
    if under:  # a fall never rises above zero: the legend goes under the deepest point
        _room_under(ax, float(finite.min()), room_px)
    else:
        headroom(ax, np.append(finite, 0.0), px=room_px, floor=False)
    ax.yaxis.set_major_formatter(TickFormatter(words, unit(answer.column, result)))
    value_label(ax, axis_text(answer.column, result, words))
    if len(rows) > MAX_LABELLED_BARS or bar_labels(rows, result) is None:
        date_axis(ax, x, step, words)  # years or months, not two bars' labels
    else:
        label_axis(ax, x, bar_labels(rows, result), step, words)
    _room_for_dot(ax, x[at])
    legend(ax, handles, loc="lower left" if under else "upper left")
    return True


def _room_under(ax: Axes, lowest: float, px: float) -> None:
    """The axis from ``px`` pixels under ``lowest`` to a little over zero: room for the
    legend under the curve, none for values above zero that a fall never reaches."""
    height_px = ax.get_position().height * FIG_H_IN * 100
    below = min(px / height_px, 0.5)
    above = 0.03
    whole = (-lowest or 1.0) / (1 - below - above)
    ax.set_ylim(lowest - below * whole, above * whole)


def _room_for_dot(ax: Axes, at: float) -> None:
    """The answer's dot whole inside the plot when it falls on the first or last bar (a
    year that ended at its low had half the dot cut off at the right edge)."""
    lo, hi = ax.get_xlim()
    width_px = ax.get_position().width * FIG_W_IN * 100
    margin = DOT_PX / width_px * (hi - lo)
    ax.set_xlim(min(lo, at - margin), max(hi, at + margin))


def _started_from(
    rows: pd.DataFrame, extreme: RunningExtreme, at: int, result: Result
) -> int | None:
    """The bar the running high (or low) in force at the answer was set on: for
    ``cummax(close)`` the highest close up to the trough. Only for one running extreme of
    a column over every bar of the period (not per year, not over the rows a filter kept),
    and for the answer at its far end (the deepest fall, not the smallest)."""
    call = extreme.running
    name = call.name.lower()
    if FROM_EXTREME[name] != extreme.answer.func or len(call.args) != 1 or rows_picked(result):
        return None
    arg = call.args[0]
    if not isinstance(arg, ast.Column) or arg.name not in rows.columns:
        return None
    source = floats(rows[arg.name])[: at + 1]
    if not np.isfinite(source).any():
        return None
    return int(np.nanargmax(source) if name == "cummax" else np.nanargmin(source))
