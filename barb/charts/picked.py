"""The few bars an answer picked one of, with the pick marked: "which day made last week's
high" (``"sort": "high desc", "limit": 1``, or ``arg_max(dayname(), high)``, or
``max(high)``) is the week's daily candles with Friday's high marked, not a histogram of five
highs or a card of one number, which prove nothing about the other days. A column that is no
price (the range, the volume) is one bar per day, the picked ones in colour.

The engine keeps the bars the top one was picked from when they are few (``source_rows`` of
a table sorted by a value with ``"limit": 1``); the rows behind a number are kept anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from barb.charts.answers import final_stage, read_aggregates
from barb.charts.axes import category_ticks, headroom, label_fit, plot_axes, value_label
from barb.charts.bars import draw_bars, label_bars
from barb.charts.columns import (
    PRICE_COLUMNS,
    axis_text,
    bar_labels,
    floats,
    is_number,
    time_column,
    timeframe,
    unit,
)
from barb.charts.kinds import TIME_SORT_COLUMNS, ranked_lowest_first
from barb.charts.price import draw_price
from barb.charts.style import ACCENT, HIGH, INK, LEGEND_ROW_PX, NEUTRAL, TICK_PT
from barb.charts.tick_values import unit_number
from barb.charts.words import ENGLISH, Words
from barb.result import Result

MAX_PICKED_FROM = 31  # bars drawn one by one with the pick marked, up to a month of days
MAX_VALUES_SHOWN = 8  # bars that each show their value; past this only the picked ones do
# Aggregates that pick a row: the largest or smallest value of their (last) column.
PICKING = {"max": True, "min": False, "arg_max": True, "arg_min": False}


@dataclass(frozen=True)
class Picked:
    """The bars picked from (``rows``, in time order), the column compared, and the
    positions in ``rows`` of the bars picked, the first of them the answer."""

    rows: pd.DataFrame
    column: str
    at: list[int]


def read_picked(result: Result) -> Picked | None:
    """The bars and the pick, when the answer picks one (or a few) of at most
    ``MAX_PICKED_FROM`` bars by the largest or smallest value of a column; else None."""
    summary, meta = result.summary, result.metadata
    if summary is None or meta is None or meta.truncated:
        return None
    rows = result.source_rows
    if rows is None or not 2 <= len(rows) <= MAX_PICKED_FROM or time_column(rows) is None:
        return None
    if summary.type == "table":
        return _ranked(result, rows)
    if summary.type in ("scalar", "dict"):
        return _extreme(result, rows)
    return None


def _ranked(result: Result, rows: pd.DataFrame) -> Picked | None:
    """The one row a sorted table listed ("limit": 1), among the bars it was ranked from."""
    table = result.table
    stage = final_stage(result.query)
    sort = str(stage.get("sort") or "").split(",")[0].split()
    if table is None or not sort or not stage.get("limit") or sort[0] in TIME_SORT_COLUMNS:
        return None
    column = sort[0]
    if column not in rows.columns or not is_number(rows[column]) or len(table) != 1:
        return None  # a longer list is drawn as the ranking it is
    keys, listed = _row_keys(rows, result), _row_keys(table, result)
    if keys is None or listed is None:
        return None
    where = {key: i for i, key in enumerate(keys)}
    at = [where[key] for key in listed if key in where]
    return Picked(_in_time_order(rows), column, at) if len(at) == len(listed) else None


def _extreme(result: Result, rows: pd.DataFrame) -> Picked | None:
    """The bar whose value a max, min, arg_max or arg_min answered."""
    for agg in read_aggregates(result):
        largest = PICKING.get(agg.func)
        column = agg.args[-1] if agg.args else None
        if largest is None or column is None or column not in rows.columns:
            continue
        if not is_number(rows[column]):
            continue
        ordered = _in_time_order(rows)
        values = floats(ordered[column])
        if not np.isfinite(values).any():
            continue
        best = np.nanmax(values) if largest else np.nanmin(values)
        # The earliest of equal values, as arg_max answers.
        return Picked(ordered, column, [int(np.flatnonzero(values == best)[0])])
    return None


def _row_keys(frame: pd.DataFrame, result: Result) -> list[str] | None:
    """What names each row in the table and in the bars alike: its bar label (a date, a
    week), else its time."""
    names = bar_labels(frame, result)
    if names is not None:
        return [str(n) for n in names]
    time_col = time_column(frame)
    return None if time_col is None else [str(t) for t in pd.to_datetime(frame[time_col])]


def _in_time_order(rows: pd.DataFrame) -> pd.DataFrame:
    time_col = time_column(rows)
    assert time_col is not None
    return rows.sort_values(time_col, kind="stable").reset_index(drop=True)


def draw_picked(fig: Figure, result: Result, picked: Picked, words: Words = ENGLISH) -> bool:
    """The bars one per slot in time order, the pick marked with its day and value."""
    rows, column = picked.rows, picked.column
    x = np.arange(len(rows), dtype="float64")
    values = floats(rows[column])
    ax = plot_axes(fig)
    value_unit = unit(column, result)
    texts = [unit_number(v, value_unit, result, words) for v in values]
    has_ohlc = all(c in rows.columns and is_number(rows[c]) for c in PRICE_COLUMNS)
    if has_ohlc and column in PRICE_COLUMNS:
        # A price level: the candles, on the price's own scale, the picked level marked.
        draw_price(ax, x, rows, consecutive=True, step=1.0, words=words)
        ax.scatter(x[picked.at], values[picked.at], s=120, color=HIGH, edgecolor="white", zorder=4)
        for i in picked.at:
            below = column == "low" or (column != "high" and ranked_lowest_first(result, column))
            ax.annotate(
                texts[i],
                (x[i], values[i]),
                (0, -12 if below else 12),
                textcoords="offset points",
                ha="center",
                va="top" if below else "bottom",
                fontsize=TICK_PT,
                fontweight="bold",
                color=INK,
            )
        levels = np.concatenate([floats(rows["low"]), floats(rows["high"])])
        headroom(ax, levels, px=LEGEND_ROW_PX + 10, floor=False)
        value_label(ax, words("price"))
    else:
        colors = np.full(len(rows), NEUTRAL, dtype=object)
        colors[picked.at] = ACCENT
        draw_bars(ax, x, np.nan_to_num(values), width=0.7, color=list(colors))
        # A month of values over 22 narrow bars ran into each other: then the picks only.
        shown = x if len(x) <= MAX_VALUES_SHOWN else x[picked.at]
        label_bars(
            ax,
            shown,
            values[shown.astype(int)],
            unit(column, result),
            size=TICK_PT - 1,
            words=words,
        )
        headroom(ax, values, px=LEGEND_ROW_PX)
        value_label(ax, axis_text(column, result, words))
    _bar_ticks(ax, rows, result, words, picked.at)
    return True


def _bar_ticks(ax: Axes, rows: pd.DataFrame, result: Result, words: Words, keep: list[int]) -> None:
    """Each bar named under it: a day by its weekday over its date (``Fri`` / ``01-02``),
    a longer bar by its label, an intraday bar by its time."""
    time_col = time_column(rows)
    assert time_col is not None
    times = pd.to_datetime(rows[time_col])
    names = bar_labels(rows, result)
    tf = timeframe(result)
    if tf == "daily":
        labels = [f"{words.weekdays[t.dayofweek]}\n{t:%m-%d}" for t in times]
    elif names is not None:
        labels = [str(n) for n in names]
    elif times.dt.normalize().nunique() == 1:
        labels = [f"{t:%H:%M}" for t in times]
    else:
        labels = [f"{t:%m-%d}\n{t:%H:%M}" for t in times]
    widest = [max(label.split("\n"), key=len) for label in labels]
    rotate, step = label_fit(widest)
    category_ticks(ax, labels, rotate=rotate, step=step, words=words, keep=keep)
