"""When in the day something happened: "at what time were today's high and low"
(``arg_max(time(), high)``, ``arg_min(time(), low)``, ``first(time())`` of the matched bars)
is the day's price over time with each answer's bar marked at its time, not a histogram of
the minute highs, which shows what the prices were but never when. The time of the lowest
RSI (``arg_min(time(), rsi14)``) is the RSI over the day with its bar marked: on the price
axis the dot stood at 41 under a price line flat at 23,400."""

from __future__ import annotations

from dataclasses import dataclass, replace

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from barb.charts.answers import Aggregate, answer_text, answer_value, read_aggregates
from barb.charts.axes import headroom, legend, plot_axes, text_handle, value_label
from barb.charts.columns import axis_text, floats, is_number, time_column, timeframe, zoned
from barb.charts.kinds import rows_picked
from barb.charts.line_points import decimate
from barb.charts.style import (
    ACCENT,
    ACCENT_LIGHT,
    ANSWER_COLORS,
    LABEL_PT,
    LEGEND_ROW_PX,
    TICK_PT,
)
from barb.charts.time_of_day import time_kind, time_text
from barb.charts.value_text import TickFormatter
from barb.charts.words import ENGLISH, Words
from barb.column_units import PRICE, column_unit
from barb.result import Result
from barb.timeframes import TIMEFRAMES

# Answers that name the time of one bar: the bar of the largest or smallest value of their
# last column, or the first or last bar of the rows.
PICKS_BY_VALUE = {"arg_max": True, "arg_min": False}
PICKS_BY_PLACE = {"first": 0, "last": -1}


@dataclass(frozen=True)
class TimeMark:
    """An answer that is a time of day, and the bar it is the time of: its position in the
    rows and the price level marked there (the high for the high's time)."""

    answer: Aggregate
    at: int
    level: float
    column: str | None = None  # the column whose extreme it picked (None: first, last)


@dataclass(frozen=True)
class ExtremeTimes:
    rows: pd.DataFrame  # intraday bars in time order, fresh index
    time: str
    marks: list[TimeMark]
    series: str = "close"  # the line drawn: the price, or the one other column picked from


def extreme_times(result: Result) -> ExtremeTimes | None:
    """The bars whose times of day the answers are, when the rows behind them are one day's
    consecutive intraday bars (a filter's matches drawn as a path join bars hours apart; over
    several days a time of day names no one bar) and each marked bar's clock reads the
    answer."""
    summary, meta, rows = result.summary, result.metadata, result.source_rows
    if summary is None or summary.type not in ("scalar", "dict") or meta is None:
        return None
    if rows is None or rows.empty or meta.truncated or "close" not in rows.columns:
        return None
    tf = TIMEFRAMES.get(timeframe(result))
    time_col = time_column(rows)
    if tf is None or not tf.intraday or time_col != "timestamp":
        return None
    days = rows["trading_date"] if "trading_date" in rows.columns else rows[time_col].dt.date
    if pd.Series(days).nunique() != 1 or rows_picked(result):
        return None
    ordered = rows.sort_values(time_col, kind="stable").reset_index(drop=True)
    marks = [m for a in read_aggregates(result) if (m := _mark(a, ordered, result)) is not None]
    if not marks:
        return None
    series = _series(marks, result)
    # Each mark sits on the line drawn: a first bar's close, or the close of the bar an
    # RSI pick names when prices are drawn beside it (its 41 is no price).
    line = floats(ordered[series])
    marks = [
        m
        if m.column == series or (series == "close" and _on_price(m.column, result))
        else replace(m, level=float(line[m.at]))
        for m in marks
    ]
    return ExtremeTimes(ordered, time_col, marks, series)


def _on_price(column: str | None, result: Result) -> bool:
    """Whether the picked column is a price (the high, a moving average) or none was."""
    if column is None:
        return True
    return column_unit(column, timeframe(result), result.query) == PRICE


def _series(marks: list[TimeMark], result: Result) -> str:
    """The line to draw: the one column off the price's scale every pick by value reads
    (the RSI of ``arg_min(time(), rsi14)``), else the close."""
    picked = {m.column for m in marks if m.column is not None}
    if len(picked) == 1 and not _on_price(next(iter(picked)), result):
        return picked.pop()
    return "close"


def _mark(agg: Aggregate, rows: pd.DataFrame, result: Result) -> TimeMark | None:
    """The bar ``agg`` (a time of day) names, when its clock reads the answer."""
    kind = time_kind(agg.name, result.query, [agg.value])
    if kind is None:
        return None
    column = agg.args[-1] if agg.args else None
    if agg.func in PICKS_BY_VALUE and column in rows.columns and is_number(rows[column]):
        values = floats(rows[column])
        if not np.isfinite(values).any():
            return None
        best = np.nanmax(values) if PICKS_BY_VALUE[agg.func] else np.nanmin(values)
        at = int(np.flatnonzero(values == best)[0])  # the earliest of equal values
        level = float(best)
        column = str(column)
    elif agg.func in PICKS_BY_PLACE and len(agg.args) == 1 and agg.column is None:
        at = PICKS_BY_PLACE[agg.func] % len(rows)
        level = float(floats(rows["close"])[at])
        column = None
    else:
        return None
    when = pd.Timestamp(rows["timestamp"].iloc[at])
    clock = when.hour * 60 + when.minute
    drawn = time_text(clock if kind == "minute" else when.hour, kind)
    # The answer as the engine wrote it ('09:32', or 572 minutes): the bar found must be it.
    return TimeMark(agg, at, level, column) if drawn == time_text(agg.value, kind) else None


def draw_extreme_times(
    fig: Figure, result: Result, found: ExtremeTimes, words: Words = ENGLISH
) -> bool:
    """The bars' high-low band and close over time (or the one other column picked from,
    the RSI), each answer's bar marked at its level with its time and value, and a dashed
    line down to the time axis."""
    rows = found.rows
    x = mdates.date2num(pd.to_datetime(rows[found.time]).to_numpy())
    line = floats(rows[found.series])
    prices = found.series == "close"
    ax = plot_axes(fig)
    if prices and {"high", "low"} <= set(rows.columns):
        ax.fill_between(x, floats(rows["low"]), floats(rows["high"]), color=ACCENT_LIGHT, lw=0)
    ax.plot(*decimate(x, line), color=ACCENT, linewidth=1.6)
    handles: list[Line2D] = []
    levels = [line]
    _clock_axis(ax, x)
    for mark, color in zip(found.marks, ANSWER_COLORS, strict=False):
        at_x = x[mark.at]
        ax.axvline(at_x, color=color, linewidth=1.6, linestyle=(0, (4, 3)), zorder=2)
        ax.scatter([at_x], [mark.level], s=110, color=color, edgecolor="white", zorder=4)
        _time_tag(ax, at_x, mark, result, words, color)
        text = answer_text(mark.answer, result, words)
        # A dashed line through a dot, as on the chart (a dot alone reads as a text row).
        handles.append(Line2D([], [], color=color, marker="o", ls=(0, (4, 3)), label=text))
        levels.append(np.array([mark.level]))
    marked = [m.answer.name for m in found.marks]
    others = [a for a in read_aggregates(result) if a.name not in marked]
    handles += [text_handle(answer_text(a, result, words)) for a in others]
    for column in ("high", "low") if prices else ():
        if column in rows.columns:
            levels.append(floats(rows[column]))
    ax.yaxis.set_major_formatter(TickFormatter(words))
    headroom(ax, np.concatenate(levels), px=LEGEND_ROW_PX * len(handles) + 30, floor=False)
    value_label(ax, words("price") if prices else axis_text(found.series, result, words))
    ax.set_xlabel(zoned(words.key("time"), result), fontsize=LABEL_PT)  # "time (ET)"
    legend(ax, handles, loc="upper left")
    return True


def _time_tag(
    ax: Axes, at_x: float, mark: TimeMark, result: Result, words: Words, color: str
) -> None:
    """The time of day under the marked bar, on the axis's foot, in the answer's colour;
    left of a bar near the right edge (right of the 16:30 bar, "16:3" was cut off)."""
    lo, hi = ax.get_xlim()
    right = (at_x - lo) / ((hi - lo) or 1.0) > 0.75
    ax.annotate(
        answer_value(mark.answer, result, words),
        (at_x, 0),
        xycoords=("data", "axes fraction"),
        xytext=(-4 if right else 4, 5),
        textcoords="offset points",
        ha="right" if right else "left",
        va="bottom",
        fontsize=TICK_PT,
        fontweight="bold",
        color=color,
        zorder=5,
    )


def _clock_axis(ax: Axes, x: np.ndarray) -> None:
    """Times of day under the day's bars (``11:00``), on whole hours."""
    span = float(x.max() - x.min()) if len(x) else 0.0
    pad = max(span * 0.02, 1 / 1440)
    ax.set_xlim(float(x.min()) - pad, float(x.max()) + pad)
    hours = span * 24
    step = next((h for h in (1, 2, 3, 4, 6) if hours / h <= 5), 12)
    ax.xaxis.set_major_locator(mdates.HourLocator(interval=step))
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M"))
