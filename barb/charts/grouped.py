"""A grouped result: one bar per group, the highest and lowest in their own colours; hundreds
of groups (one per date, say) become a line with the extremes as dots."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from barb.charts.axes import (
    MAX_VALUE_LABELS,
    category_ticks,
    headroom,
    label_fit,
    legend,
    plot_axes,
)
from barb.charts.bars import draw_bars, label_bars
from barb.charts.columns import floats, is_number, timeframe, unit
from barb.charts.line_points import decimate
from barb.charts.style import (
    BAND,
    HIGH,
    LABEL_PT,
    LEGEND_ROW_PX,
    LOW,
    NEUTRAL,
    PLOT_BOTTOM,
    VALUE_PT,
)
from barb.charts.value_text import date_text, format_all
from barb.proof_names import axis_label
from barb.result import Result

MAX_GROUP_BARS = 150  # more groups than this are drawn as a line
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def draw_grouped(fig: Figure, result: Result) -> bool:
    table, summary = result.table, result.summary
    assert summary is not None
    if table is None or table.empty:
        return False
    by = [b for b in summary.by or [] if b in table.columns]
    column = next((c for c in table.columns if c not in by and is_number(table[c])), None)
    if column is None:
        return False
    if "sort" not in result.query:
        table = calendar_order(table, by)
    labels = group_labels(table, by)
    values = floats(table[column])
    value_unit = unit(column, result)

    rotate, step = label_fit(labels)
    bottom = PLOT_BOTTOM + (0.0115 * max(len(s) for s in labels) if rotate else 0.0)
    ax = plot_axes(fig, bottom=bottom)
    if len(by) > 1:
        _shade_blocks(ax, table[by[0]].tolist())
    positions = np.arange(len(values), dtype="float64")
    if len(values) > MAX_GROUP_BARS:
        _draw_group_line(ax, positions, values)
    else:
        colors = _extreme_colors(values)
        draw_bars(
            ax,
            positions,
            np.nan_to_num(values),
            width=0.72,
            color=colors,
            edgecolor=colors,
            linewidth=1.0,
        )
        if len(values) <= MAX_VALUE_LABELS:
            size = VALUE_PT if len(values) <= 12 else VALUE_PT - 2.5
            label_bars(ax, positions, values, value_unit, size=size)
    category_ticks(ax, labels, rotate=rotate, step=step)
    headroom(ax, values, px=LEGEND_ROW_PX + 50)
    ax.set_xlabel(" · ".join(by), fontsize=LABEL_PT)
    ax.set_ylabel(axis_label(column, timeframe(result), result.query), fontsize=LABEL_PT)
    if np.isfinite(values).sum() >= 2:
        hi, lo = int(np.nanargmax(values)), int(np.nanargmin(values))
        texts = format_all(values, value_unit)
        handles = [
            Patch(color=HIGH, label=f"highest: {labels[hi]}  {texts[hi]}"),
            Patch(color=LOW, label=f"lowest: {labels[lo]}  {texts[lo]}"),
        ]
        legend(ax, handles, loc="upper left", ncol=2)
    return True


def calendar_order(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Weekday and month names in calendar order, not alphabetical (Fri before Mon)."""
    keys = []
    for name in by:
        col = table[name]
        names = set(col.dropna().astype(str))
        if names and names <= set(WEEKDAYS):
            keys.append(col.astype(str).map(WEEKDAYS.index).to_numpy())
        elif names and names <= set(MONTHS):
            keys.append(col.astype(str).map(MONTHS.index).to_numpy())
        else:
            keys.append(col.to_numpy())
    if not keys:
        return table
    order = pd.DataFrame(dict(enumerate(keys))).sort_values(list(range(len(keys))), kind="stable")
    return table.iloc[order.index].reset_index(drop=True)


def group_labels(table: pd.DataFrame, by: list[str]) -> list[str]:
    """One label per group; several keys join into one: ``2024 · Mon``."""
    if not by:
        return [str(i + 1) for i in range(len(table))]
    rows = zip(*(table[name].tolist() for name in by), strict=True)
    return [" · ".join(_key_text(n, v) for n, v in zip(by, row, strict=True)) for row in rows]


def _key_text(name: str, value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return name if value else f"no {name}"
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return date_text(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    if name.lower() == "month" and isinstance(value, (int, np.integer)) and 1 <= value <= 12:
        return MONTHS[int(value) - 1]
    return str(value)


def _draw_group_line(ax: Axes, positions: np.ndarray, values: np.ndarray) -> None:
    """Hundreds of groups (one per date, say): a line, with the extremes as dots."""
    ax.plot(*decimate(positions, values), color=NEUTRAL, linewidth=1.6)
    if np.isfinite(values).sum() >= 2:
        for index, color in ((np.nanargmax(values), HIGH), (np.nanargmin(values), LOW)):
            ax.scatter(
                [positions[index]], [values[index]], s=110, color=color, zorder=3, clip_on=False
            )


def _shade_blocks(ax: Axes, first_key: list[Any]) -> None:
    """With several keys, every other block of the first key (a year, say) is shaded."""
    starts = [i for i in range(len(first_key)) if i == 0 or first_key[i] != first_key[i - 1]]
    ends = [*starts[1:], len(first_key)]
    for block, (start, end) in enumerate(zip(starts, ends, strict=True)):
        if block % 2:
            ax.axvspan(start - 0.5, end - 0.5, color=BAND, zorder=0, linewidth=0)


def _extreme_colors(values: np.ndarray) -> list[str]:
    colors = [NEUTRAL] * len(values)
    if np.isfinite(values).sum() >= 2:
        colors[int(np.nanargmin(values))] = LOW
        colors[int(np.nanargmax(values))] = HIGH
    return colors
