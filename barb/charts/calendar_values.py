"""Groups whose only value is a place in the calendar: "in which year was each month's best
day" (``group_by: month()``, ``arg_max(year(), ret) as best_year``). A year is a label, not
a magnitude, so it is never a bar's height; without another number the groups had no chart
at all. Here each group is a dot at its year (or month, quarter) on an axis of those, the
label written by it, and the headline says which one comes up most often."""

from __future__ import annotations

from collections import Counter

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator

from barb.charts.axes import MAX_VALUE_LABELS, category_ticks, label_fit, plot_axes, value_label
from barb.charts.columns import floats, is_number, keys_text
from barb.charts.grouped import group_keys, group_labels
from barb.charts.style import (
    ACCENT,
    FIG_W_IN,
    GRID,
    INK,
    LABEL_PT,
    LEFT,
    PLOT_BOTTOM,
    RIGHT,
    TICK_PT,
)
from barb.charts.time_of_day import calendar_part, calendar_text
from barb.charts.words import ENGLISH, Words
from barb.result import Result


def calendar_column(result: Result) -> tuple[str, str] | None:
    """The grouped table's first value column that is a place in the calendar, and which
    part it is (``year``), when no other number is there to draw."""
    table = result.table
    if table is None or table.empty:
        return None
    by = set(group_keys(result))
    values = [c for c in table.columns if c not in by and is_number(table[c])]
    parts = [(c, calendar_part(c, result.query)) for c in values]
    if not parts or any(part is None for _, part in parts):
        return None  # another number is drawn as bars (grouped.py)
    column, part = parts[0]
    assert part is not None
    return column, part


def draw_calendar_values(fig: Figure, result: Result, words: Words = ENGLISH) -> bool:
    """Each group a dot at its value, on an axis that reads as the calendar (2008 … 2026,
    Jan … Dec), with the value written above it when there are few groups."""
    found = calendar_column(result)
    table = result.table
    if found is None or table is None:
        return False
    column, part = found
    by = group_keys(result)
    labels = group_labels(table, by, result.query, words)
    values = floats(table[column])
    if not np.isfinite(values).any():
        return False
    rotate, step = label_fit(labels)
    bottom = PLOT_BOTTOM + (0.0105 * max(len(s) for s in labels) if rotate else 0.0)
    ax = plot_axes(fig, bottom=bottom)
    x = np.arange(len(values), dtype="float64")
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    ax.vlines(x, lo - 1, values, color=GRID, linewidth=2.0, zorder=1)
    ax.scatter(x, values, s=110, color=ACCENT, edgecolor="white", zorder=3)
    if len(values) <= MAX_VALUE_LABELS:
        texts = [calendar_text(v, part, words) for v in values]
        # Level labels when each fits its group's slot; else upright, as neighbours of the
        # same year (four months of 2020) ran into one another.
        slot_pt = (RIGHT - LEFT) * FIG_W_IN * 72 / len(values)
        widest = max(len(t) for t in texts if t is not None) if any(texts) else 0
        upright = widest * (TICK_PT - 1) * 0.62 + 4 > slot_pt
        for xi, v, text in zip(x, values, texts, strict=True):
            if text is None:
                continue
            ax.annotate(
                text,
                (xi, v),
                (0, 9),
                textcoords="offset points",
                ha="center",
                va="bottom",
                rotation=90 if upright else 0,
                fontsize=TICK_PT - 1,
                fontweight="bold",
                color=INK,
            )
    category_ticks(ax, labels, rotate=rotate, step=step, words=words)
    span = max(hi - lo, 1.0)
    ax.set_ylim(lo - 0.08 * span - 0.5, hi + 0.25 * span + 0.8)  # room for the labels
    # Round places that are places in the calendar: no month 0 or 13 under a month's axis.
    ticks = MaxNLocator(nbins=6, integer=True).tick_values(lo, hi)
    ax.yaxis.set_major_locator(
        FixedLocator([t for t in ticks if calendar_text(t, part, words) is not None])
    )
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: calendar_text(v, part, words) or ""))
    value_label(ax, column)
    ax.set_xlabel(keys_text(by, result, words), fontsize=LABEL_PT)
    return True


def calendar_headline(result: Result, words: Words) -> str | None:
    """``best_year: most often 2020 (4 of 12)``, when one value comes up most often; None
    when there is no such column or the most frequent values tie."""
    found = calendar_column(result)
    table = result.table
    if found is None or table is None:
        return None
    column, part = found
    counts = Counter(v for v in floats(table[column]) if np.isfinite(v))
    top = counts.most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    value, count = top[0]
    text = calendar_text(value, part, words)
    if text is None:
        return None
    return words("calendar_mode", name=column, value=text, count=count, total=len(table))
