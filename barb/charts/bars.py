"""Bars as one artist, and the value written beyond each bar's end.

``ax.bar`` makes a Rectangle artist per bar, each about 0.3 ms to build and draw, and a
chart has up to 150 bars (120 candles, 50 histogram bins). One PolyCollection with the same
corners, colours, edges and base draws the same picture for a fraction of that. The labels
go where ``ax.bar_label`` puts them: ``padding`` points beyond the end, away from zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.colors import is_color_like
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.transforms import ScaledTranslation
from numpy.typing import ArrayLike

from barb.charts.style import INK, PX_PER_PT
from barb.charts.value_text import format_all
from barb.charts.words import ENGLISH, Words

SMALLEST_LEVEL_PT = 9.0  # value labels smaller than this are not read on a phone
LEVEL_GAP_PT = 3.0  # between neighbouring level labels, so "1.64%1.64%" never touch


def draw_bars(
    ax: Axes,
    at: ArrayLike,
    length: ArrayLike,
    *,
    width: ArrayLike,
    base: ArrayLike = 0.0,
    color: Any,
    edgecolor: Any = "none",
    linewidth: float = 0.0,
    horizontal: bool = False,
    from_edge: bool = False,
) -> PolyCollection:
    """Bars centred on ``at`` (or starting there, ``from_edge``), ``length`` long from ``base``:
    drawn, autoscaled and stuck to their base as ``ax.bar`` / ``ax.barh`` would. A missing
    ``length`` (NaN) draws nothing: its outline at the base read as a bar at 0 (2026's n/a
    5-day return after its biggest drops, p39b Q2)."""
    at, length, width, base = np.broadcast_arrays(
        np.asarray(at, dtype="float64"), np.asarray(length, dtype="float64"), width, base
    )
    missing = np.isnan(length)
    if missing.any():
        length = np.where(missing, 0.0, length)
        color, edgecolor = (_none_where(missing, c) for c in (color, edgecolor))
    start = at if from_edge else at - width / 2
    end, tip = start + width, base + length
    # Corners in a Rectangle's order, across the bar then along it.
    across = np.stack((start, end, end, start), axis=1)
    along = np.stack((base, base, tip, tip), axis=1)
    corners = np.stack((along, across) if horizontal else (across, along), axis=2)
    bars = PolyCollection(
        corners,
        facecolors=color,
        edgecolors=edgecolor,
        linewidths=linewidth,
        joinstyle="miter",  # a Rectangle's corners
    )
    (bars.sticky_edges.x if horizontal else bars.sticky_edges.y).extend(base)
    ax.add_collection(bars)
    ax.autoscale(enable=None)  # as ax.bar: the limits follow the data at draw time
    return bars


def _none_where(missing: np.ndarray, colors: Any) -> list[Any]:
    """``colors`` (one for all bars, or one each) with "none" for the ``missing`` bars."""
    each = [colors] * len(missing) if is_color_like(colors) else list(colors)
    return ["none" if gone else c for c, gone in zip(each, missing, strict=True)]


def label_bars(
    ax: Axes,
    at: np.ndarray,
    values: np.ndarray,
    unit: str | None,
    *,
    size: float,
    bold: bool = True,
    horizontal: bool = False,
    padding: float = 3,
    upright: bool = False,
    words: Words = ENGLISH,
    texts: list[str] | None = None,
    backed: bool = False,
) -> None:
    """Each bar's value ``padding`` points beyond its end (at zero for a missing value);
    ``upright`` turns the labels of narrow vertical bars to run along them; ``backed`` puts
    each on white, so a line drawn across the bars (the answer) passes behind it."""
    weight = "bold" if bold else "normal"
    box = {"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none"}
    texts = texts if texts is not None else format_all(values, unit, words)
    for pos, end, text in zip(at, np.nan_to_num(values), texts, strict=True):
        away = -1 if end < 0 else 1
        if horizontal:
            xy, offset = (end, pos), (away * padding, 0)
            ha, va = ("right" if end < 0 else "left"), "center"
        else:
            xy, offset = (pos, end), (0, away * padding)
            ha, va = "center", ("top" if end < 0 else "bottom")
        ax.annotate(
            text,
            xy,
            offset,
            textcoords="offset points",
            ha=ha,
            va=va,
            fontsize=size,
            color=INK,
            fontweight=weight,
            rotation=90 if upright and not horizontal else 0,
            bbox=box if backed else None,
            zorder=4 if backed else 3,
        )


# The thickness of a zero bar's stub, in points: a mark on the zero line, not a bar. At 5
# December's 0% fill share, coloured as the lowest, read as a small bar (p48f M6).
_STUB_PT = 2.5


def mark_zero_bars(
    ax: Axes, at: np.ndarray, values: np.ndarray, *, width: float, color: Any, caret: bool = False
) -> None:
    """A flat stub at the base of each bar whose value is zero: a 0% week is a bar the
    eye can find (and the headline's "lowest 0%" is one), not a gap like a missing one.
    ``caret``: bars too narrow for a stub (a hundred weeks) get a caret on the base too.
    The stub lies on the zero line, not across it: centred there, its lower half hung below
    the axis, and 0% years read as small negative bars (p44a Q05)."""
    zero = np.isfinite(values) & (values == 0)
    if not zero.any():
        return
    colors = np.broadcast_to(np.asarray(color, dtype=object), values.shape)[zero]
    lifted = ax.transData + ScaledTranslation(0, _STUB_PT / 2 / 72, ax.figure.dpi_scale_trans)
    for x, c in zip(at[zero], colors, strict=True):
        ax.plot(
            [x - width / 2, x + width / 2],
            [0, 0],
            color=c,
            linewidth=_STUB_PT,
            solid_capstyle="butt",
            clip_on=False,
            zorder=3,
            transform=lifted,
        )
        if caret:  # a stub one bar of a hundred wide is a dot
            ax.plot([x], [0], marker=6, markersize=11, color=c, clip_on=False, zorder=3)


def upright_label_px(texts: list[str], size: float) -> float:
    """How far the longest value label, run along its bar, reaches above the bar's end."""
    longest = max((len(t) for t in texts), default=0)
    # Bold digits, a minus and "%" run up to 0.7 em each ("−8,2 %" is 0.66 em a character):
    # at 0.6 em the label under a falling bar's end reached the axis and the months below.
    return longest * size * 0.7 * PX_PER_PT + 12


def widest_label_pt(fig: Figure, texts: list[str], size: float) -> float:
    """The longest of the value labels as drawn, bold at ``size``, in points: bold "1.64%"
    is 3.5 ems, not the 5 × 0.6 a count of characters gives."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    font = FontProperties(size=size, weight="bold")
    widest_px = max(
        (renderer.get_text_width_height_descent(t, font, False)[0] for t in texts if t),
        default=0.0,
    )
    return widest_px * 72 / fig.dpi


def level_size(fig: Figure, texts: list[str], slot_pt: float, size: float) -> float | None:
    """The largest font, from ``size`` down to ``SMALLEST_LEVEL_PT``, at which the labels
    stand level within their bars' slots with a gap between them; None when even the
    smallest is too wide."""
    widest_pt = widest_label_pt(fig, texts, size)  # text widths scale with the font
    room_pt = slot_pt - LEVEL_GAP_PT
    for candidate in np.arange(size, SMALLEST_LEVEL_PT - 0.01, -0.5):
        if widest_pt * candidate / size <= room_pt:
            return float(candidate)
    return None


def labels_upright(values: np.ndarray, unit: str | None, slot_pt: float, size: float) -> bool:
    """Whether value labels are wider than the bars' slots and must run along the bars."""
    longest = max((len(t) for t in format_all(values, unit)), default=0)
    return longest * size * 0.6 > slot_pt * 0.95
