"""The query's columns over time, in a panel under the price: one column as bars, stems or a
line, whatever fits it; a few columns in one unit (NQ's and ES's returns) together, each in
its colour and named in a legend, side by side as bars or as lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from barb.charts.axes import headroom, legend, whole_number_ticks
from barb.charts.bars import draw_bars, mark_zero_bars
from barb.charts.columns import floats
from barb.charts.line_points import LINE_POINTS, broken_envelope, broken_line, decimate
from barb.charts.price import MAX_MARKERS
from barb.charts.short_weeks import hatch_bars
from barb.charts.style import (
    ACCENT,
    ACCENT_LIGHT,
    AXIS,
    DOWN,
    LEGEND_ROW_PX,
    MUTED,
    OVERLAY_COLORS,
    UP,
)
from barb.charts.time_axis import bar_slot
from barb.charts.value_text import TickFormatter
from barb.charts.words import ENGLISH, Words

MAX_BAR_SERIES = 400  # consecutive values drawn as bars up to this many
MAX_TOGETHER = 3  # columns in one unit drawn in one panel
MAX_SIDE_BY_SIDE = 120  # bars of several columns, all together, drawn up to this many
# Bars with no value (a first year with no close before it) marked "n/a", up to this many: a
# warm-up's run of empty bars is plain as a run.
MAX_NO_VALUE_MARKS = 5
NO_VALUE_PT = 10
SERIES_COLORS = (ACCENT, *OVERLAY_COLORS)


def draw_series(
    ax: Axes,
    x: np.ndarray,
    columns: pd.DataFrame,
    *,
    consecutive: bool,
    step: float,
    words: Words = ENGLISH,
    value_unit: str | None = None,
    hollow: int | None = None,
    running: frozenset[str] = frozenset(),
    hatched: Sequence[int] = (),
    levels: frozenset[str] = frozenset(),
) -> None:
    """The columns of ``columns`` (one, or a few in ``value_unit``) over ``x``; as bars, the
    row ``hollow`` (a bar not over yet) is drawn as an outline and the rows ``hatched`` (a
    week with a holiday in it) hatched (``as_bars`` says which way). The columns ``running`` (a
    running total, ``cumsum(pnl)``) are lines through every row, as a sum's running total
    is drawn (``barb.charts.aggregates``): a level carried from one row to the next, not a
    value of each row on its own (850 Mondays' equity was drawn as 850 red and green
    stems). The columns ``levels`` (a price, one price over another) are lines or dots on an
    axis fitted to them, as the price is: as bars from zero, NQ/ES's swing from 3.58 to 3.23
    and back to 3.63 looked flat."""
    if columns.shape[1] == 1:
        series = columns.iloc[:, 0]
        if series.name in running:
            _draw_running(ax, x, floats(series), consecutive=consecutive)
        else:
            _draw_one(
                ax,
                x,
                series,
                consecutive=consecutive,
                step=step,
                hollow=hollow,
                words=words,
                hatched=hatched,
                level=series.name in levels,
            )
    else:
        _draw_several(
            ax,
            x,
            columns,
            consecutive=consecutive,
            step=step,
            hollow=hollow,
            words=words,
            running=running,
            hatched=hatched,
            levels=levels,
        )
    values = np.concatenate([floats(columns[c]) for c in columns.columns])
    ax.yaxis.set_major_formatter(TickFormatter(words, value_unit))
    ax.yaxis.set_major_locator(MaxNLocator(nbins=4))
    whole_number_ticks(ax.yaxis, values, nbins=4)


def as_bars(
    columns: pd.DataFrame,
    *,
    consecutive: bool,
    running: frozenset[str],
    levels: frozenset[str] = frozenset(),
) -> bool:
    """Whether ``draw_series`` draws ``columns`` as bars (else as lines or dots)."""
    first = floats(columns.iloc[:, 0])
    if (running | levels).intersection(columns.columns):
        return False
    if columns.shape[1] == 1:
        return _as_bars(first, consecutive)
    # Side by side, each column's bars are a fraction of a slot: only while they stay
    # visible bars, else lines.
    few = len(first) * columns.shape[1] <= MAX_SIDE_BY_SIDE
    return few and _as_bars(first, consecutive) and not running.intersection(columns.columns)


def _as_bars(values: np.ndarray, consecutive: bool) -> bool:
    """Bars for changes around zero (or a handful of values); a level such as RSI or ATR
    reads better as a line, and so does a running total that crosses zero now and then (a
    cumulative return): changes flip sign every other bar or so, a level seldom."""
    finite = values[np.isfinite(values)]
    signed = finite.size > 0 and finite.min() < 0 < finite.max()
    flips = np.count_nonzero(np.diff(np.sign(finite)) != 0) / max(finite.size - 1, 1)
    changes = signed and flips >= 0.2
    return consecutive and len(values) <= MAX_BAR_SERIES and (changes or len(values) <= 60)


def _draw_one(
    ax: Axes,
    x: np.ndarray,
    series: pd.Series,
    *,
    consecutive: bool,
    step: float,
    hollow: int | None = None,
    words: Words = ENGLISH,
    hatched: Sequence[int] = (),
    level: bool = False,
) -> None:
    """One column: bars, stems or a line, whatever fits; a ``level`` (a price, a ratio of
    two) never stands on zero: a line, or dots."""
    values = floats(series)
    finite = values[np.isfinite(values)]
    signed = finite.size > 0 and finite.min() < 0 < finite.max()
    colors = np.where(values < 0, DOWN, UP) if signed else ACCENT
    # Bars for changes around zero (or a handful of values); a level such as RSI or ATR
    # reads better as a line, and so does a running total that crosses zero now and then
    # (a cumulative return): changes flip sign every other bar or so, a level seldom.
    if not level and _as_bars(values, consecutive):
        _outlined_bars(ax, x, values, 0.8 * bar_slot(x, step), colors, hollow, words, hatched)
    elif not consecutive and len(values) <= MAX_MARKERS:
        if not level:
            ax.vlines(x, 0, np.nan_to_num(values), colors=colors, linewidth=2.0)
        ax.scatter(x, values, s=28 if len(values) > 100 else 55, color=colors, zorder=3)
    elif len(values) > 3 * LINE_POINTS:
        # Too dense for a line to mean anything: the spread per slice, and its middle.
        bx, lo, mid, hi = broken_envelope(x, values, step=step)
        ax.fill_between(bx, lo, hi, color=ACCENT_LIGHT, linewidth=0)
        ax.plot(bx, mid, color=ACCENT, linewidth=1.6)
    else:
        ax.plot(*broken_line(x, values, step=step), color=ACCENT, linewidth=1.8)
    if signed or (not consecutive and not level):
        ax.axhline(0, color=AXIS, linewidth=1.2)
    if (
        "rsi" in str(series.name).lower()
        and finite.size
        and 0 <= finite.min() <= finite.max() <= 100
    ):
        for level in (30, 70):  # the usual overbought/oversold lines
            ax.axhline(level, color=MUTED, linewidth=1.3, linestyle="--")
        ax.set_ylim(0, 100)


def _draw_running(ax: Axes, x: np.ndarray, values: np.ndarray, *, consecutive: bool) -> None:
    """A running total: one line through its rows, unbroken (it holds between them)."""
    ax.plot(*decimate(x, values), color=ACCENT, linewidth=1.8)
    finite = values[np.isfinite(values)]
    if not consecutive or (finite.size and finite.min() < 0 < finite.max()):
        ax.axhline(0, color=AXIS, linewidth=1.2)


def _outlined_bars(
    ax: Axes,
    x: np.ndarray,
    values: Any,
    width: float,
    colors: Any,
    hollow: int | None,
    words: Words = ENGLISH,
    hatched: Sequence[int] = (),
) -> None:
    """Bars in their colours, but white inside the bar ``hollow`` (the unfinished one) and
    hatched white over the bars ``hatched`` (weeks with a holiday in them). A zero is a stub
    on the base and a bar with no value says so: the data's first year, with no close before
    it, was an empty slot like a flat year's (ES 2008 and 2011)."""
    edges = list(np.broadcast_to(np.asarray(colors, dtype=object), (len(values),)))
    faces = list(edges)
    if hollow is not None:
        faces[hollow] = "white"
    draw_bars(
        ax,
        x,
        np.nan_to_num(values),
        width=width,
        color=faces,
        edgecolor=edges,
        linewidth=0 if hollow is None else 1.6,
    )
    if len(hatched):
        at = np.asarray(hatched, dtype=int)
        hatch_bars(ax, x[at], np.asarray(values)[at], width)
    mark_zero_bars(ax, x, values, width=width, color=edges)
    empty = np.flatnonzero(np.isnan(values))
    if 0 < len(empty) <= MAX_NO_VALUE_MARKS:
        for at in x[empty]:
            ax.annotate(
                words("no_value"),
                (at, 0),
                (0, 4),
                textcoords="offset points",
                ha="center",
                va="bottom",
                rotation=90,
                fontsize=NO_VALUE_PT,
                color=MUTED,
            )


def _draw_several(
    ax: Axes,
    x: np.ndarray,
    columns: pd.DataFrame,
    *,
    consecutive: bool,
    step: float,
    hollow: int | None = None,
    words: Words = ENGLISH,
    running: frozenset[str] = frozenset(),
    hatched: Sequence[int] = (),
    levels: frozenset[str] = frozenset(),
) -> None:
    """A few columns in one unit, each in its colour (up and down colours would not tell
    them apart): bars side by side in each bar's slot, dots, or lines; a running total
    always a line (with one, all are lines or dots: bars beside a line read as one)."""
    names = list(columns.columns)
    series = [floats(columns[name]) for name in names]
    bars = as_bars(columns, consecutive=consecutive, running=running, levels=levels)
    width = 0.8 * bar_slot(x, step) / len(names)  # a day's group stays within its day
    handles: list[Any] = []
    for i, (name, values, color) in enumerate(zip(names, series, SERIES_COLORS, strict=False)):
        if bars:
            at = x + (i - (len(names) - 1) / 2) * width
            _outlined_bars(ax, at, values, width, color, hollow, words, hatched)
            handles.append(Patch(color=color, label=name))
        elif name in running:
            (line,) = ax.plot(*decimate(x, values), color=color, linewidth=1.8)
            line.set_label(name)
            handles.append(line)
        elif not consecutive and len(values) <= MAX_MARKERS:
            handles.append(ax.scatter(x, values, s=40, color=color, zorder=3, label=name))
        else:
            (line,) = ax.plot(*broken_line(x, values, step=step), color=color, linewidth=1.8)
            line.set_label(name)
            handles.append(line)
    every = np.concatenate(series)
    finite = every[np.isfinite(every)]
    apart = not consecutive and not levels.issuperset(names)  # dots of a change, off zero
    if apart or (finite.size and finite.min() < 0 < finite.max()):
        ax.axhline(0, color=AXIS, linewidth=1.2)
    headroom(ax, every, px=LEGEND_ROW_PX + 20, floor=bars)
    legend(ax, handles, loc="upper left", ncol=len(handles))
