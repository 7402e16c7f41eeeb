"""``render_chart``: what the number means picks the drawing (a correlation's scatter, a value
"now" over its series, else the result's shape), the frame goes around it with the headline,
and the figure is encoded as a PNG; ``render_answer`` gives that headline too, the caption."""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from barb.charts.aggregates import draw_aggregate
from barb.charts.axes import (
    drop_clipped_ticks,
    fill_height,
    fix_ticks,
    keep_y_labels_inside,
    space_number_ticks,
)
from barb.charts.calendar_values import draw_calendar_values
from barb.charts.extreme_times import draw_extreme_times, extreme_times
from barb.charts.grouped import draw_grouped
from barb.charts.header import decorate
from barb.charts.headline import headline_forms
from barb.charts.kinds import Window, correlation, latest
from barb.charts.latest import draw_latest
from barb.charts.legend_room import clear_legends
from barb.charts.legend_width import fit_legends
from barb.charts.many_groups import too_many_to_draw
from barb.charts.picked import draw_picked, read_picked
from barb.charts.png import canvas_png
from barb.charts.rows import draw_table
from barb.charts.scatter import draw_scatter
from barb.charts.style import DEFAULT_WIDTH_PX, new_figure
from barb.charts.words import Words, words_for
from barb.result import Result

Draw = Callable[[Figure, Result, Words], bool]


def _draw_groups(fig: Figure, result: Result, words: Words) -> bool:
    """Groups drawn by their numbers, or, when their only value is a year or a month, each
    group at its place in the calendar."""
    return draw_grouped(fig, result, words) or draw_calendar_values(fig, result, words)


DRAW_BY_SHAPE: dict[str, Draw] = {
    "grouped": _draw_groups,
    "table": draw_table,
    "scalar": draw_aggregate,
    "dict": draw_aggregate,
}


@dataclass(frozen=True)
class RenderedChart:
    """An answer's chart and its caption, drawn together: the headline is computed once."""

    png: bytes | None  # None when there is nothing to draw
    headline: str | None  # the headline in full, the photo's caption; None for an error
    # Why there is no chart though there are numbers ("No chart: 6,382,050 groups …").
    note: str | None = None


def render_answer(
    result: Result, *, width_px: int = DEFAULT_WIDTH_PX, language: str | None = "en"
) -> RenderedChart:
    """The PNG and the headline of ``result``, as a worker sends them: the caption is the
    first of the forms the chart's title is fitted from, worked out once for both (apart,
    ``render_chart`` and ``chart_headline`` each read the groups and wrote every value)."""
    if not result.ok or result.summary is None:
        return RenderedChart(None, None)
    too_many = too_many_to_draw(result)
    if too_many is not None:  # its headline reads every group too: the summary's line serves
        return RenderedChart(None, None, too_many)
    shown = result.for_chart()  # a table cut for display: its rows over the whole period
    words = words_for(language)
    forms = headline_forms(shown, words)
    fig = _drawn(shown, words, width_px, forms) if result.metadata is not None else None
    return RenderedChart(_png(fig), forms[0])


def render_chart(
    result: Result, *, width_px: int = DEFAULT_WIDTH_PX, language: str | None = "en"
) -> bytes | None:
    """PNG bytes for the result, or None for an error or when there is nothing to draw."""
    return _png(draw_chart(result, width_px=width_px, language=language))


def _png(fig: Figure | None) -> bytes | None:
    png = canvas_png(FigureCanvasAgg(fig)) if fig is not None else None
    # The figure's few thousand artists hold references to one another, so only the cyclic
    # garbage collector frees them. Collected now, while young, that takes about a
    # millisecond; left to age, they set off a full collection of the whole process
    # (~80 ms with the engine loaded) every dozen charts.
    del fig
    gc.collect(1)
    return png


def draw_chart(
    result: Result, *, width_px: int = DEFAULT_WIDTH_PX, language: str | None = "en"
) -> Figure | None:
    """The chart's figure, drawn and framed but not rendered; None when there is none."""
    if not result.ok or result.summary is None or result.metadata is None:
        return None
    if too_many_to_draw(result) is not None:
        return None
    result = result.for_chart()  # a table cut for display: its rows over the whole period
    words = words_for(language)
    return _drawn(result, words, width_px)


def _drawn(
    result: Result, words: Words, width_px: int, forms: list[str] | None = None
) -> Figure | None:
    """``result`` (as its chart reads it) drawn and framed with its headline's ``forms``,
    worked out here when not given once something is drawn; None when nothing is."""
    fig = new_figure(width_px)
    draw, window = choose(result)
    if not draw(fig, result, words):
        return None
    if forms is None:
        forms = headline_forms(result, words)
    header_bottom = decorate(fig, result, words, forms, window)
    fill_height(fig, header_bottom)
    clear_legends(fig)  # measured as laid out: the panels' heights are final
    fix_ticks(fig)
    keep_y_labels_inside(fig)
    # A plot moved right for its tick labels takes its legend with it: wrapped again, the
    # taller box cleared again (rare; the ticks stay pinned, the axis only grows).
    if fit_legends(fig):
        clear_legends(fig)
    space_number_ticks(fig)
    drop_clipped_ticks(fig)
    return fig


def choose(result: Result) -> tuple[Draw, Window | None]:
    """The drawing for what the number means, else for the result's shape; and the latest
    bars it draws, when it leaves earlier ones out."""
    assert result.summary is not None
    pair = correlation(result)
    if pair is not None:
        return (lambda fig, result, words: draw_scatter(fig, result, pair, words)), None
    now = latest(result)
    if now is not None:
        return (lambda fig, result, words: draw_latest(fig, result, now, words)), now.window
    times = extreme_times(result)
    if times is not None:
        return (lambda fig, result, words: draw_extreme_times(fig, result, times, words)), None
    picked = read_picked(result)
    if picked is not None:
        return (lambda fig, result, words: draw_picked(fig, result, picked, words)), None
    return DRAW_BY_SHAPE[result.summary.type], None
