"""The price over time: candles for a few consecutive bars, else a line (a faint path with a
dot per matched bar when a filter picked the rows), and the query's price-like columns and
event flags drawn over it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from barb.charts.axes import headroom, legend
from barb.charts.bars import draw_bars
from barb.charts.columns import PRICE_COLUMNS, floats, is_number
from barb.charts.line_points import broken_line, decimate
from barb.charts.style import (
    ACCENT,
    ACCENT_LIGHT,
    DOWN,
    LEGEND_ROW_PX,
    OVERLAY_COLORS,
    UP,
)
from barb.charts.time_axis import bar_slot
from barb.charts.value_text import TickFormatter
from barb.charts.words import ENGLISH, Words

MAX_CANDLES = 120  # consecutive bars drawn as candles up to this many
MAX_MARKERS = 1_500  # never scatter more points than this
MAX_EVENT_LINES = 120  # event days (a join's flag) drawn as vertical lines up to this many


def draw_price(
    ax: Axes,
    x: np.ndarray,
    table: pd.DataFrame,
    *,
    consecutive: bool,
    step: float,
    words: Words = ENGLISH,
    hollow: int | None = None,
) -> None:
    """``hollow``: the row of a bar not over yet, its candle drawn as an outline."""
    close = floats(table["close"])
    has_ohlc = all(c in table.columns and is_number(table[c]) for c in PRICE_COLUMNS)
    if consecutive and has_ohlc and len(table) <= MAX_CANDLES:
        _draw_candles(ax, x, table, width=0.65 * bar_slot(x, step), hollow=hollow)
    elif consecutive:
        ax.plot(*broken_line(x, close, step=step), color=ACCENT, linewidth=2.2)
    else:
        # Matched rows only: a faint line for the path, a dot on each matched bar.
        ax.plot(*decimate(x, close), color=ACCENT_LIGHT, linewidth=1.4)
        if len(x) <= MAX_MARKERS:
            size = 70 if len(x) <= 100 else 22
            ax.scatter(x, close, s=size, color=ACCENT, edgecolor="white", linewidth=0.8, zorder=3)
    ax.yaxis.set_major_formatter(TickFormatter(words))
    ax.yaxis.set_major_locator(MaxNLocator(nbins=5))


def draw_overlays(
    ax: Axes,
    x: np.ndarray,
    table: pd.DataFrame,
    overlays: list[str],
    flags: list[str],
    *,
    step: float,
) -> None:
    """Price-like columns of the query as lines; event flags as markers on the close."""
    handles: list[Any] = []
    for name, color in zip(overlays, OVERLAY_COLORS, strict=False):
        lx, ly = broken_line(x, floats(table[name]), step=step)
        (line,) = ax.plot(lx, ly, color=color, linewidth=2.2, label=name)
        handles.append(line)
    close = floats(table["close"])
    for name, color in zip(flags, OVERLAY_COLORS[::-1], strict=False):
        marked = table[name].fillna(False).to_numpy(dtype=bool)
        count = int(marked.sum())
        if 0 < count <= MAX_EVENT_LINES:
            # Event days as full-height lines: a marker on the close hides in the line.
            ax.vlines(
                x[marked],
                0,
                1,
                transform=ax.get_xaxis_transform(),
                colors=color,
                linewidth=1.6,
                alpha=0.55,
                zorder=1,
            )
            handles.append(Line2D([], [], color=color, linewidth=2, label=name))
        elif count <= MAX_MARKERS:
            dots = ax.scatter(x[marked], close[marked], s=40, marker="v", color=color, zorder=4)
            dots.set_label(name)
            handles.append(dots)
    if handles:
        # Room for the legend above every line drawn, not only the close: sma200 below
        # the closes ran off the bottom.
        levels = np.concatenate([close, *(floats(table[name]) for name in overlays)])
        headroom(ax, levels, px=LEGEND_ROW_PX + 25, floor=False)
        legend(ax, handles, loc="upper left", ncol=min(len(handles), 2))


def _draw_candles(
    ax: Axes, x: np.ndarray, table: pd.DataFrame, *, width: float, hollow: int | None
) -> None:
    o, h, low, c = (floats(table[k]) for k in PRICE_COLUMNS)
    colors = np.where(c >= o, UP, DOWN)
    ax.vlines(x, low, h, colors=colors, linewidth=1.6 if len(x) > 60 else 2.2)
    # A doji still gets a visible body: a hair of the bar's range.
    body = np.where(c != o, c - o, (h - low) * 0.02 + 1e-9)
    faces = colors.astype(object)
    if hollow is not None:  # not over yet: an outline, as a grouped chart's open year
        faces[hollow] = "white"
    edge = 1.6 if hollow is not None else 0.8
    draw_bars(ax, x, body, base=o, width=width, color=faces, edgecolor=colors, linewidth=edge)
