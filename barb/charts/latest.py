"""A value "now" (``last(rsi14)``, or the latest bar of ``sort: timestamp desc``): the series
it is the latest value of, with that value marked and written beside it, under the price
(each bar's range, the close through it). A single candle says nothing about whether 412 is
high or low for ATR; the series does. The rows drawn are those ``kinds.latest`` chose: the
whole period, or the latest bars when nothing but the value now was asked."""

from __future__ import annotations

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from barb.charts.axes import headroom, plot_axes, value_label, whole_number_ticks
from barb.charts.columns import axis_text, bar_labels, floats, is_number, timeframe, unit
from barb.charts.kinds import Latest, is_now
from barb.charts.line_points import broken_envelope, broken_line
from barb.charts.style import (
    ACCENT,
    ACCENT_LIGHT,
    ANSWER_COLORS,
    LABEL_PT,
    MUTED,
    PANEL_GAP,
    PANEL_SPLIT,
)
from barb.charts.tick_values import unit_text
from barb.charts.time_axis import MAX_LABELLED_BARS, bar_step, date_axis, label_axis
from barb.charts.value_text import TickFormatter, date_text
from barb.charts.words import ENGLISH, Words
from barb.result import Result


def draw_latest(fig: Figure, result: Result, now: Latest, words: Words = ENGLISH) -> bool:
    rows, at = now.rows, now.at
    x = mdates.date2num(rows[now.time].to_numpy())
    step = bar_step(x, timeframe(result))
    values = floats(rows[now.column])
    with_price = now.column != "close" and "close" in rows.columns
    if with_price:
        price_ax = plot_axes(fig, bottom=PANEL_SPLIT)
        ax = plot_axes(fig, top=PANEL_SPLIT - PANEL_GAP, sharex=price_ax)
        close = floats(rows["close"])
        _bar_ranges(price_ax, x, rows, step)
        price_ax.plot(*broken_line(x, close, step=step), color=ACCENT_LIGHT, linewidth=1.8)
        price_ax.scatter([x[at]], [close[at]], s=70, color=ACCENT, zorder=3)
        price_ax.yaxis.set_major_formatter(TickFormatter(words))
        price_ax.yaxis.set_major_locator(MaxNLocator(nbins=4))
        price_ax.tick_params(axis="x", labelbottom=False)
        value_label(price_ax, words("price"))
    else:
        ax = plot_axes(fig)
    levels = values
    if now.column == "close":  # the price itself: its bars' ranges behind it, in view
        levels = np.concatenate((values, _bar_ranges(ax, x, rows, step)))
    ax.plot(*broken_line(x, values, step=step), color=ACCENT, linewidth=2.0)
    value = now.value if np.isfinite(now.value) else values[at]
    mark_value(ax, x[at], value)
    column_unit = unit(now.column, result)
    text = unit_text(value, column_unit, result, words)
    # The value "now" beside the series' name, above the plot: over the line it would hide
    # the very bars it ends. The last of rows a filter picked is not "now": it says its date.
    if not is_now(result, now):
        date = date_text(rows[now.time].iloc[at])
        # With no name: "last: 25,400 (2025)", «последнее 25 400 (2025)»
        marked = words("last_value", name="", value=text, date=date).strip(" :")
    else:
        marked = words("now", name="", value=text).strip()
    ax.annotate(
        marked,
        (1, 1),
        xycoords="axes fraction",
        xytext=(0, 7),
        textcoords="offset points",
        ha="right",
        va="bottom",
        fontsize=LABEL_PT,
        fontweight="bold",
        color=ANSWER_COLORS[0],
    )
    headroom(ax, levels, px=40, floor=False)
    _levels(ax, now.column, values)
    ax.yaxis.set_major_formatter(TickFormatter(words, column_unit))
    ax.yaxis.set_major_locator(MaxNLocator(nbins=4))
    whole_number_ticks(ax.yaxis, values, nbins=4)
    value_label(ax, axis_text(now.column, result, words))
    names = bar_labels(rows, result)
    if names is None or len(rows) > MAX_LABELLED_BARS:  # years or months, not two days
        date_axis(ax, x, step, words)
    else:
        label_axis(ax, x, names, step, words)
    return True


def _bar_ranges(ax: Axes, x: np.ndarray, rows: pd.DataFrame, step: float) -> np.ndarray:
    """Each bar's low to high, faint behind the close (per slice of the axis, its lowest low
    and highest high, when the bars are more than it holds); the levels drawn. A close line
    alone never went down to the lowest low the headline named (CL's 11.93 of 2020-04-24)."""
    if not all(c in rows.columns and is_number(rows[c]) for c in ("low", "high")):
        return np.empty(0)
    bx, low, _, _ = broken_envelope(x, floats(rows["low"]), step=step)
    _, _, _, high = broken_envelope(x, floats(rows["high"]), step=step)
    ax.fill_between(bx, low, high, color=ACCENT_LIGHT, alpha=0.45, linewidth=0)
    return np.concatenate((low, high))


def mark_value(ax: Axes, x: float, value: float) -> None:
    """A value on its series: a dot, and a dashed line across at its level."""
    ax.axhline(value, color=ANSWER_COLORS[0], linewidth=1.2, linestyle="--", alpha=0.8)
    ax.scatter([x], [value], s=130, color=ANSWER_COLORS[0], edgecolor="white", zorder=4)


def _levels(ax: Axes, column: str, values: np.ndarray) -> None:
    """RSI's usual overbought and oversold lines, on its 0–100 scale."""
    finite = values[np.isfinite(values)]
    if "rsi" in column.lower() and finite.size and 0 <= finite.min() <= finite.max() <= 100:
        for level in (30, 70):
            ax.axhline(level, color=MUTED, linewidth=1.2, linestyle=":")
        ax.set_ylim(0, 118)  # the scale, and room for the legend above it
