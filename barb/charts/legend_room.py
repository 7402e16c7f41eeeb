"""Room for a legend: the axis stretched until no bar, line or value label lies under it.

Each chart reserves room for its legend as a guess in pixels (``headroom``), and the guess
fell short where the data reaches higher than it counted: upright value labels ("75,0 %"
ran under the box of six answers), a compared outline taller than the histogram's own bars
(ES's peak hidden under NQ's legend), or a legend more than half the panel tall (the room
is capped there). Measured once the figure is laid out, the limit is moved just far enough:
up, for a legend at the top, down for one at the bottom."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Annotation

GAP_PX = 6.0  # between the legend's box and the data nearest it
MAX_ROUNDS = 3  # text labels keep their size in pixels: the limit is found in a few steps
MAX_STRETCH = 4.0  # the axis grows to at most this many times its span: a box over all of it


def clear_legends(fig: Figure) -> None:
    """Every legend of ``fig`` clear of its axes' data, the axes' limits widened for it."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    for ax in fig.axes:
        if ax.get_legend() is not None:
            _clear(ax, renderer)


def _clear(ax: Axes, renderer: RendererBase) -> None:
    legend = ax.get_legend()
    assert legend is not None
    for _ in range(MAX_ROUNDS):
        box = legend.get_window_extent(renderer)
        frame = ax.get_window_extent(renderer)
        top = box.y0 + box.height / 2 > frame.y0 + frame.height / 2
        edges = _data_edges(ax, renderer, box.x0, box.x1, top=top)
        if not edges:
            return
        lo, hi = ax.get_ylim()
        height = frame.height
        if top:
            room = box.y0 - GAP_PX - frame.y0
            need = [(v, px) for v, px in edges if px > room]
            if not need:
                return
            # A value v at pixel h * (v - lo) / (hi - lo), plus a label's fixed offset,
            # comes down to the legend's foot with the top at hi.
            hi = max(
                lo + height * (v - lo) / max(room - (px - _at(v, lo, hi, height)), 1.0)
                for v, px in need
            )
            ax.set_ylim(lo, min(hi, lo + MAX_STRETCH * (ax.get_ylim()[1] - lo)))
        else:
            room = frame.y1 - (box.y1 + GAP_PX)
            need = [(v, px) for v, px in edges if height - px > room]
            if not need:
                return
            lo = min(
                hi - height * (hi - v) / max(room - (_at(v, lo, hi, height) - px), 1.0)
                for v, px in need
            )
            ax.set_ylim(max(lo, hi - MAX_STRETCH * (hi - ax.get_ylim()[0])), hi)


def _at(value: float, lo: float, hi: float, height: float) -> float:
    """Where ``value`` stands, in pixels from the axes' foot."""
    return height * (value - lo) / (hi - lo)


def _data_edges(
    ax: Axes, renderer: RendererBase, x0: float, x1: float, *, top: bool
) -> list[tuple[float, float]]:
    """The data under the legend's width, from ``x0`` to ``x1`` pixels: each artist's value
    nearest the legend and its edge in pixels from the axes' foot (a label stands a few
    pixels past its value)."""
    foot = ax.get_window_extent(renderer).y0
    found: list[tuple[float, float]] = []
    to_px = ax.transData
    for collection in ax.collections:
        if not isinstance(collection, PolyCollection) or collection.get_transform() != to_px:
            continue
        for path in collection.get_paths():
            xs, ys = path.vertices[:, 0], path.vertices[:, 1]
            px = to_px.transform(np.column_stack([xs, ys]))
            if px[:, 0].max() < x0 or px[:, 0].min() > x1:
                continue
            v = float(ys.max() if top else ys.min())
            found.append((v, float(px[:, 1].max() if top else px[:, 1].min()) - foot))
    for line in ax.lines:
        found += _line_edges(ax, line, x0, x1, foot, top=top)
    for text in ax.texts:
        if not isinstance(text, Annotation) or text.xycoords != "data" or not text.get_text():
            continue
        box = text.get_window_extent(renderer)
        if box.x1 < x0 or box.x0 > x1:
            continue
        v = float(text.xy[1])
        found.append((v, (box.y1 if top else box.y0) - foot))
    return [(v, px) for v, px in found if np.isfinite(v) and np.isfinite(px)]


def _line_edges(
    ax: Axes, line: Line2D, x0: float, x1: float, foot: float, *, top: bool
) -> list[tuple[float, float]]:
    """A line's highest (or lowest) point under the legend: a line across the axes (a
    mean's ``axhline``) lies under any legend; one up the axes (``axvline``) is left to the
    legend to cover, as it spans every height."""
    xs = np.asarray(line.get_xdata(), dtype="float64")
    ys = np.asarray(line.get_ydata(), dtype="float64")
    if not len(ys) or not line.get_visible():
        return []
    transform = line.get_transform()
    if transform == ax.transData:
        px = transform.transform(np.column_stack([xs, ys]))
        under = (px[:, 0] >= x0) & (px[:, 0] <= x1) & np.isfinite(px[:, 1])
        if not under.any():
            return []
        at = int(
            np.nanargmax(np.where(under, ys, -np.inf))
            if top
            else np.nanargmin(np.where(under, ys, np.inf))
        )
        return [(float(ys[at]), float(px[at, 1]) - foot)]
    if transform == ax.get_yaxis_transform():  # axhline: axes x, data y
        v = float(np.nanmax(ys) if top else np.nanmin(ys))
        return [(v, float(ax.transData.transform((0, v))[1]) - foot)]
    return []
