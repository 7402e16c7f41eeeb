"""Axes at fixed places and what goes on them besides the data: category ticks, value labels
on bars, room for a legend, and the legend itself."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedFormatter, FixedLocator, MaxNLocator

from barb.charts.legend_width import fit_columns
from barb.charts.style import (
    AXIS,
    FIG_H_IN,
    FIG_W_IN,
    GRID,
    INK,
    LABEL_PT,
    LEFT,
    LEGEND_PT,
    MARGIN_X,
    PLOT_BOTTOM,
    PLOT_TOP,
    PX_PER_PT,
    RIGHT,
    TICK_PT,
)
from barb.charts.value_text import TickFormatter
from barb.charts.words import ENGLISH, Words

# A tick label that is a number as a chart writes it: 25 500, −1,5 %, 2.4M.
_NUMBER = re.compile(r"[−\-+]?[\d\s\u202f\u00a0.,]+\s?(%|M|млн)?")
MAX_VALUE_LABELS = 20  # bars labelled with their value up to this many
# The smallest font a category axis's level labels are shrunk to, so that each group has
# its label where thinned ones would step unevenly.
MIN_TICK_PT = 10.0
# The tick under a named bar between the labelled ones: as long as theirs (a longer one ran
# into the label beside it at 360 px), bolder.
NAMED_TICK_WIDTH = 2.6
CHAR_PX = TICK_PT * PX_PER_PT * 0.62  # a tick label's character, about


def plot_axes(
    fig: Figure,
    *,
    left: float = LEFT,
    right: float = RIGHT,
    bottom: float = PLOT_BOTTOM,
    top: float = PLOT_TOP,
    grid_axis: str = "y",
    sharex: Axes | None = None,
) -> Axes:
    """Axes at a fixed place: faster than a layout engine, and every chart lines up."""
    ax = fig.add_axes((left, bottom, right - left, top - bottom), sharex=sharex)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set(color=AXIS, linewidth=1.2)
    ax.tick_params(labelsize=TICK_PT, colors=INK, length=5, width=1.2)
    ax.xaxis.label.set_color(INK)
    ax.yaxis.label.set_color(INK)
    ax.grid(True, axis=grid_axis, color=GRID, linewidth=1.0)
    ax.set_axisbelow(True)
    return ax


def value_label(ax: Axes, text: str) -> None:
    """The name of the values, level above the plot's top-left corner: a narrow figure has
    no width to spare for a rotated y label."""
    ax.annotate(
        text,
        (0, 1),
        xycoords="axes fraction",
        xytext=(-ax.get_position().x0 * FIG_W_IN * 72 + MARGIN_X * FIG_W_IN * 72, 7),
        textcoords="offset points",
        fontsize=LABEL_PT,
        color=INK,
        ha="left",
        va="bottom",
    )


def legend(ax: Axes, handles: list[Any], *, loc: str, ncol: int = 1) -> None:
    """The legend at ``loc``, with as many of ``ncol`` columns and its labels wrapped as the
    picture's width holds (``legend_width``)."""
    if not handles:
        return
    text_only = all(isinstance(h, Line2D) and h.get_linestyle() == "None" for h in handles)

    def make(columns: int) -> Legend:
        box = ax.legend(
            handles=handles,
            loc=loc,
            ncol=columns,
            fontsize=LEGEND_PT,
            frameon=True,
            handlelength=0 if text_only else 1.6,
            handletextpad=0 if text_only else 0.8,
            borderpad=0.5,
            labelspacing=0.4,
            columnspacing=1.6,
        )
        box.get_frame().set(edgecolor=GRID, linewidth=1.0, alpha=0.95)
        for text in box.get_texts():
            text.set_color(INK)
        return box

    fit_columns(ax, make, ncol)


def text_handle(label: str) -> Line2D:
    """A legend row with no line: a value that has no place on the axes."""
    return Line2D([], [], linestyle="none", marker="none", label=label)


def label_fit(labels: list[str], *, in_order: bool = True, thin: bool = True) -> tuple[int, int]:
    """How far category labels are turned (0, 40 or 90 degrees), and every how many to show,
    so none overlap.

    Labels in their own order (years, hours) can be thinned: the missing ones are implied.
    Labels in the order of a value (years sorted by range) cannot, so they stand upright,
    one line height each, rather than be dropped. ``thin=False``: short labels are turned
    rather than thinned while turning fits them all (the 12 months of a year beside an
    empty one, which unnamed read as missing data)."""
    slot = slot_px(labels)
    longest = max(len(s) for s in labels)
    widest = longest * CHAR_PX + 10
    if widest <= slot:
        return 0, 1
    # Turned labels need about two line heights each, and more than ~24 is a wall of text.
    step = max(math.ceil(TICK_PT * PX_PER_PT * 1.9 / slot), math.ceil(len(labels) / 24))
    if not in_order and step > 1:
        return 90, max(1, math.ceil(TICK_PT * PX_PER_PT * 1.25 / slot))
    if longest <= 5 and in_order and (thin or step > 1):  # years, hours: thinned, level
        return 0, math.ceil(widest / slot)
    return 40, max(1, step)


def slot_px(labels: list[str]) -> float:
    """The width of one group's place on a category axis, in pixels at 100 dpi."""
    return (RIGHT - LEFT) * FIG_W_IN * 100 / max(len(labels), 1)


def category_ticks(
    ax: Axes,
    labels: list[str],
    *,
    rotate: int,
    step: int,
    words: Words = ENGLISH,
    at: list[int] | None = None,
    keep: Sequence[int] = (),
    x: np.ndarray | None = None,
) -> None:
    """Every ``step``-th label, or the labels ``at`` those positions (round times of day);
    the labels at ``keep`` (the bars the headline names) always, the thinned ones beside
    them left out so they do not overlap. ``x`` is where each label's group sits when the
    groups are not one apart (a few thousand drawn of many keep their places): as many
    ticks, evenly along the axis."""
    positions = np.asarray(at, dtype=int) if at is not None else np.arange(0, len(labels), step)
    if x is not None and at is None:
        even = np.linspace(x[0], x[-1], len(positions))
        positions = np.unique(np.minimum(np.searchsorted(x, even), len(x) - 1))
    kept = sorted({int(k) for k in keep if 0 <= k < len(labels)})
    # Level labels take their own width; turned ones the step they were thinned to.
    width = math.ceil(max(map(len, labels)) * CHAR_PX / slot_px(labels)) if not rotate else step
    positions = _keeping(positions, kept, width if x is None else None)
    # The named bars' labels broke the step (Jan, Mar, May, Aug, Oct; 09:30 … 13:30, 16:30
    # with 15:30 left out), and a reader counts along labels that do not step evenly: every
    # group is labelled, level, in a smaller font, where one down to ``MIN_TICK_PT`` fits.
    shrunk = None
    marked: list[int] = []
    if x is None and not rotate and len(set(np.diff(positions))) > 1:
        shrunk = _level_fit_pt(ax, labels)
        if shrunk >= MIN_TICK_PT:
            positions = np.arange(len(labels))
        else:
            # Not every label fits (53 weeks: W1 … W21, W30, W36, W43 stepped 5, 9, 6, 7;
            # p46w #9): every step-th, evenly, and the named bars a bold tick of their
            # own, unlabelled; the headline names them and their colour shows them.
            shrunk = None
            positions = np.arange(0, len(labels), step)
            marked = [k for k in kept if k not in set(positions.tolist())]
    places = positions if x is None else x[positions]
    ax.set_xticks(places, [labels[i] for i in positions])
    if marked:
        ax.set_xticks(marked, minor=True)
        ax.tick_params(axis="x", which="minor", length=5, width=NAMED_TICK_WIDTH, color=INK)
    if shrunk is not None:
        for text in ax.get_xticklabels():
            text.set_fontsize(min(TICK_PT, shrunk))
    if rotate:  # degrees; upright labels hang under their bar, centred on it
        for text in ax.get_xticklabels():
            text.set(rotation=rotate, ha="right", rotation_mode="anchor")
            if rotate == 90:
                text.set(va="center")
    first, last = (0, len(labels) - 1) if x is None else (float(x[0]), float(x[-1]))
    ax.set_xlim(first - 0.6, last + 0.6)
    ax.yaxis.set_major_formatter(TickFormatter(words))


def _level_fit_pt(ax: Axes, labels: list[str]) -> float:
    """The font size at which every one of ``labels`` fits level in its group's slot with
    half an em between neighbours, measured with the figure's renderer (Cyrillic months,
    "июнь июль", are wider than their letters count)."""
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    font = FontProperties(size=TICK_PT)
    lines = [line for label in labels for line in label.split("\n")]  # "2024\n03" is two lines
    widest = max(renderer.get_text_width_height_descent(t, font, ismath=False)[0] for t in lines)
    slot = ax.get_window_extent(renderer).width / (len(labels) + 0.2)  # the limits' ±0.6
    gap = renderer.points_to_pixels(TICK_PT / 2)
    return TICK_PT * max(slot - gap, 0.0) / max(widest, 1.0)


def _keeping(positions: np.ndarray, keep: list[int], width: int | None = None) -> np.ndarray:
    """``positions`` with ``keep`` added, less those nearer a kept one than the thinned
    ticks stand apart (09:30, the highest hour, in place of 10:30 beside it). The first
    is kept too, where the axis starts, unless a kept one stands nearer it than a label's
    ``width`` (in groups): ETH's hours run from 18:00, and 21:00, the lowest, had taken
    the 18:00 tick off, leaving the session's open to be guessed."""
    if not keep:
        return positions
    gap = int(np.diff(positions).min()) if len(positions) > 1 else 1
    kept = set(keep)
    if width is not None and len(positions):
        first = int(positions[0])
        if all(abs(first - k) >= width for k in keep):
            kept.add(first)
    spaced = [p for p in positions if all(p == k or abs(p - k) >= gap for k in kept)]
    return np.asarray(sorted({*spaced, *kept}), dtype=int)


#: Steps between whole-number ticks: 1, 2 or 5 times a power of ten. Matplotlib's integer
#: ticks otherwise step by 6, 8 or 80 ("0, 80, 160, 240 days", a histogram's "0, 8 … 48").
WHOLE_STEPS = [1, 2, 5, 10]


def count_ticks(axis: Axis, nbins: int | str = "auto") -> None:
    """Ticks for an axis that counts: whole numbers, stepping roundly."""
    axis.set_major_locator(MaxNLocator(nbins=nbins, steps=WHOLE_STEPS, integer=True))


def whole_number_ticks(axis: Axis, values: np.ndarray, nbins: int | str = "auto") -> None:
    """Ticks at whole numbers only when every value is one: a count of days ticks 0, 1, 2,
    never 0.6, 1.2, 1.8. Other values keep the axis's own ticks."""
    finite = values[np.isfinite(values)]
    if finite.size and np.all(finite == np.round(finite)):
        count_ticks(axis, nbins)


def headroom(
    ax: Axes, values: np.ndarray, *, px: float, floor: bool = True, below_px: float = 0
) -> None:
    """Room above the data for value labels and a legend, ``px`` pixels tall, and
    ``below_px`` under bars that go below zero (their labels hang under them)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return
    lo, hi = float(finite.min()), float(finite.max())
    if floor:  # bars start at zero
        lo, hi = min(0.0, lo), max(0.0, hi)
    span = (hi - lo) or abs(hi) or 1.0
    height_px = ax.get_position().height * FIG_H_IN * 100
    above = min(px / height_px, 0.5)
    below = max(0.06, below_px / height_px) if lo < 0 or not floor else 0.0
    # Both margins are shares of the whole axis, room and data together: a share of the
    # data's span alone came out short, and the labels under the lowest bars ran over the
    # month names below the axis.
    whole = span / max(1 - above - below, 0.3)
    ax.set_ylim(lo - below * whole, hi + above * whole)


def fix_ticks(fig: Figure) -> None:
    """Every axis's ticks pinned where its locator put them and labelled as its formatter
    did, keeping only those in view; called last, when the limits are final.

    Matplotlib asks a locator for its ticks three times a draw (the axis, its label's place,
    the spine's extent) and makes a tick, two lines and two texts, for every place returned,
    in view or not; pinned, the same picture draws in less time."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            locs = np.asarray(axis.get_majorticklocs(), dtype="float64")
            labels = axis.major.formatter.format_ticks(locs)
            if axis.major.formatter.get_offset():  # an offset ("1e6") is drawn beside them
                continue
            lo, hi = sorted(axis.get_view_interval())
            slack = (hi - lo) * 1e-10  # the tolerance matplotlib draws ticks with
            shares = isinstance(axis.major.formatter, TickFormatter) and axis.major.formatter.share
            top = min(hi, 1.0) if shares and axis is ax.yaxis else hi
            keep = np.flatnonzero((locs >= lo - slack) & (locs <= top + slack))
            axis.set_major_locator(FixedLocator(locs[keep]))
            axis.set_major_formatter(FixedFormatter([labels[i] for i in keep]))
            if top < hi:
                # A share never passes 100%: the room above it holds the bars' labels (run
                # upright, they took the axis to 120-180%), so the axis ends at 100%.
                ax.spines["left"].set_bounds(lo, top)


def fill_height(fig: Figure, header_bottom: float) -> None:
    """The plots stretched up to just under the header (leaving room for the name above
    the top plot): a one-line headline leaves no empty band under it, and a three-line one
    (``fit_headline``) pushes them down, where the axis's name ran over the noise note."""
    if not fig.axes:
        return
    gap = (7 + LABEL_PT * 1.3 + 8) / (fig.get_figheight() * 72)
    top = header_bottom - gap
    low = min(ax.get_position().y0 for ax in fig.axes)
    high = max(ax.get_position().y1 for ax in fig.axes)
    if top == high or top <= low:
        return
    scale = (top - low) / (high - low)
    for ax in fig.axes:
        box = ax.get_position()
        ax.set_position((box.x0, low + (box.y0 - low) * scale, box.width, box.height * scale))


def drop_clipped_ticks(fig: Figure) -> None:
    """Level date labels near the ends of a narrow axis would run off the picture: those
    ticks go (after ``fix_ticks``, when the ticks are pinned and the limits final)."""
    for ax in fig.axes:
        locator, formatter = ax.xaxis.get_major_locator(), ax.xaxis.get_major_formatter()
        if not isinstance(locator, FixedLocator) or not isinstance(formatter, FixedFormatter):
            continue
        locs, labels = np.asarray(locator.locs), list(formatter.seq)
        keep = [i for i, loc in enumerate(locs) if _inside_figure(ax, loc, labels[i])]
        if len(keep) < len(locs):
            ax.xaxis.set_major_locator(FixedLocator(locs[keep]))
            ax.xaxis.set_major_formatter(FixedFormatter([labels[i] for i in keep]))


def space_number_ticks(fig: Figure) -> None:
    """Every other level number under an axis dropped until neighbours stand an em apart
    (after ``fix_ticks`` and ``keep_y_labels_inside``, when labels and widths are final).
    Russian writes thousands with a thin space: "25 500 25 550 25 600" read as one number."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    for ax in fig.axes:
        locator, formatter = ax.xaxis.get_major_locator(), ax.xaxis.get_major_formatter()
        if not isinstance(locator, FixedLocator) or not isinstance(formatter, FixedFormatter):
            continue
        locs, labels = np.asarray(locator.locs, dtype="float64"), [str(t) for t in formatter.seq]
        ticks = ax.xaxis.get_major_ticks()
        if len(locs) < 3 or not ticks or ticks[0].label1.get_rotation():
            continue
        if not all(_NUMBER.fullmatch(label) for label in labels):
            continue
        font = ticks[0].label1.get_fontproperties()
        widths = [renderer.get_text_width_height_descent(t, font, ismath=False)[0] for t in labels]
        at = ax.transData.transform(np.column_stack([locs, np.zeros_like(locs)]))[:, 0]
        gap_px = renderer.points_to_pixels(TICK_PT)
        every = 1
        while every < len(locs) and not _apart_by(at[::every], widths[::every], gap_px):
            every += 1
        if every > 1:
            keep = np.arange(0, len(locs), every)
            ax.xaxis.set_major_locator(FixedLocator(locs[keep]))
            ax.xaxis.set_major_formatter(FixedFormatter([labels[i] for i in keep]))


def _apart_by(centres: np.ndarray, widths: list[float], gap: float) -> bool:
    """Whether labels of these widths centred there leave ``gap`` between neighbours."""
    halves = np.asarray(widths, dtype="float64") / 2
    return bool(np.all(np.diff(centres) - halves[:-1] - halves[1:] >= gap))


def keep_y_labels_inside(fig: Figure) -> None:
    """Plots moved right (their right edge kept) when their widest y tick label would start
    off the figure's left edge ("−0.0150" on a 5-minute drawdown lost its minus and first
    digit); plots side by side or stacked move together, so they still line up. Called
    after ``fix_ticks``, when the labels are final."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    fig_px = fig.bbox.width
    needed = 0.0
    for ax in fig.axes:
        formatter = ax.yaxis.get_major_formatter()
        if not isinstance(formatter, FixedFormatter) or not ax.yaxis.get_visible():
            continue
        ticks = ax.yaxis.get_major_ticks()
        labels = [str(t) for t in formatter.seq if str(t)]
        if not ticks or not labels or not ticks[0].label1.get_visible():
            continue
        font = ticks[0].label1.get_fontproperties()
        widest = max(
            renderer.get_text_width_height_descent(t, font, ismath=False)[0] for t in labels
        )
        # The tick mark and its pad (5 + 3.5 pt), and a few pixels of margin.
        room = widest + renderer.points_to_pixels(8.5) + 6
        needed = max(needed, room / fig_px - ax.get_position().x0)
    if needed <= 0:
        return
    for ax in fig.axes:
        box = ax.get_position()
        ax.set_position((box.x0 + needed, box.y0, box.width - needed, box.height))


def _inside_figure(ax: Axes, loc: float, label: str) -> bool:
    """Whether a level tick label centred at ``loc`` stays inside the figure's width, less
    the margin the header's text keeps (``MARGIN_X``)."""
    ticks = ax.xaxis.get_major_ticks()
    if not label or not ticks or ticks[0].label1.get_rotation():
        return True
    fig = ax.get_figure()
    assert fig is not None
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    font = ticks[0].label1.get_fontproperties()
    # A label of two lines (a weekday over its date) is as wide as its wider line.
    width = max(
        renderer.get_text_width_height_descent(line, font, ismath=False)[0]
        for line in label.split("\n")
    )
    x = ax.transData.transform((loc, 0))[0]
    # Inside the text's own margin, not the picture's edge: a "2026" ending on the last
    # pixel read as cut off (p48i 11).
    margin = MARGIN_X * fig.bbox.width
    return x - width / 2 >= margin and x + width / 2 <= fig.bbox.width - margin
