"""``render_chart``: the result's shape picks the drawing, the frame goes around it, and the
figure is encoded as a PNG."""

from __future__ import annotations

import gc
from collections.abc import Callable

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from barb.charts.aggregates import draw_aggregate
from barb.charts.axes import fix_ticks
from barb.charts.grouped import draw_grouped
from barb.charts.png import canvas_png
from barb.charts.rows import draw_table
from barb.charts.style import decorate, new_figure
from barb.result import Result

DRAW_BY_SHAPE: dict[str, Callable[[Figure, Result], bool]] = {
    "grouped": draw_grouped,
    "table": draw_table,
    "scalar": draw_aggregate,
    "dict": draw_aggregate,
}


def render_chart(result: Result, *, width_px: int = 1280) -> bytes | None:
    """PNG bytes for the result, or None for an error or when there is nothing to draw."""
    if not result.ok or result.summary is None or result.metadata is None:
        return None
    png = _draw(result, width_px)
    # The figure's few thousand artists hold references to one another, so only the cyclic
    # garbage collector frees them. Collected now, while young, that takes about a
    # millisecond; left to age, they set off a full collection of the whole process
    # (~80 ms with the engine loaded) every dozen charts.
    gc.collect(1)
    return png


def _draw(result: Result, width_px: int) -> bytes | None:
    assert result.summary is not None
    fig = new_figure(width_px)
    canvas = FigureCanvasAgg(fig)
    if not DRAW_BY_SHAPE[result.summary.type](fig, result):
        return None
    decorate(fig, result)
    fix_ticks(fig)
    return canvas_png(canvas)
