"""A legend as wide as the picture allows: columns stacked, then long labels wrapped.

A legend anchored at a plot's corner grows away from it as wide as its longest label, and
a long one ran off the picture's right edge at phone width ("доля дней, где high_time >=
'15:00' = 30,78 %"). The box is measured as drawn: first fewer columns side by side, then
each label too wide broken into lines at its spaces, so every word stays on the chart and
the legend only grows taller (``legend_room`` then clears the data under it)."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable

from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.figure import Figure
from matplotlib.legend import Legend

from barb.charts.style import MARGIN_X

MAX_ROUNDS = 4  # a wrapped label's width is known only once measured: a few tries
MIN_LINE_CHARS = 8  # a label is not broken into lines shorter than this
SIGNS = frozenset({"=", "≈", "·", "–", "—"})


def fit_columns(ax: Axes, make: Callable[[int], Legend], ncol: int) -> Legend:
    """The legend ``make(n)`` draws with the most columns, up to ``ncol``, that fit the
    picture's width, its labels wrapped if even one column is too wide."""
    renderer = _renderer(ax)
    box = make(ncol)
    while ncol > 1 and not _fits(ax, box, renderer):
        ncol -= 1
        box = make(ncol)
    fit_labels(ax, box, renderer)
    return box


def fit_legends(fig: Figure) -> bool:
    """Every legend of ``fig`` wrapped to lie inside the picture (after plots moved right
    for their tick labels); whether any label changed."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    changed = False
    for ax in fig.axes:
        box = ax.get_legend()
        if box is not None:
            changed |= fit_labels(ax, box, renderer)
    return changed


def fit_labels(ax: Axes, box: Legend, renderer: RendererBase | None = None) -> bool:
    """The widest labels of ``box`` broken into lines until it lies inside the picture;
    whether any was."""
    renderer = renderer or _renderer(ax)
    changed = False
    for _ in range(MAX_ROUNDS):
        over = _overflow(ax, box, renderer)
        if over <= 0:
            break
        texts = box.get_texts()
        widths = [t.get_window_extent(renderer).width for t in texts]
        target = max(widths) - over
        wrapped = False
        for text, width in zip(texts, widths, strict=True):
            if width <= target or width <= 0:
                continue
            # Split at spaces and line breaks only: a no-break space holds "4 496" together.
            label = " ".join(w for w in re.split(r"[ \n]+", text.get_text()) if w)
            longest = max(len(line) for line in text.get_text().split("\n"))
            chars = max(MIN_LINE_CHARS, math.floor(longest * target / width))
            lines = _hanging(textwrap.wrap(label, chars, break_on_hyphens=False))
            if len(lines) > 1 and "\n".join(lines) != text.get_text():
                text.set_text("\n".join(lines))
                wrapped = True
        if not wrapped:
            break
        changed = True
    return changed


def _hanging(lines: list[str]) -> list[str]:
    """A sign left at a line's end ("… >= '15:00' =") starts the next line instead, with
    the value it introduces."""
    out = list(lines)
    for i in range(len(out) - 1):
        head, _, last = out[i].rpartition(" ")
        if head and last in SIGNS:
            out[i], out[i + 1] = head, f"{last} {out[i + 1]}"
    return out


def _renderer(ax: Axes) -> RendererBase:
    fig = ax.get_figure()
    assert fig is not None
    return fig.canvas.get_renderer()  # type: ignore[attr-defined]


def _fits(ax: Axes, box: Legend, renderer: RendererBase) -> bool:
    return _overflow(ax, box, renderer) <= 0


def _overflow(ax: Axes, box: Legend, renderer: RendererBase) -> float:
    """How many pixels the legend reaches past its room: the plot's left edge (a legend
    over the tick labels hides them) to the picture's right margin."""
    fig = ax.get_figure()
    assert fig is not None
    extent = box.get_window_extent(renderer)
    left = ax.get_window_extent(renderer).x0
    right = fig.bbox.width * (1 - MARGIN_X)
    return max(extent.x1 - right, left - extent.x0)
