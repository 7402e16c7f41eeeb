"""``render_chart``: the result's shape picks the drawing, the frame goes around it, and the
figure is encoded as a PNG."""

from __future__ import annotations

import io
from collections.abc import Callable

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from barb.charts.aggregates import draw_aggregate
from barb.charts.grouped import draw_grouped
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
    fig = new_figure(width_px)
    FigureCanvasAgg(fig)
    if not DRAW_BY_SHAPE[result.summary.type](fig, result):
        return None
    decorate(fig, result)
    buffer = io.BytesIO()
    # No "Software" text chunk: the same result always gives the same bytes.
    fig.savefig(buffer, format="png", dpi=fig.dpi, metadata={"Software": None})
    return buffer.getvalue()
