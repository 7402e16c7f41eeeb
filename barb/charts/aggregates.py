"""A number or a few numbers, drawn from the rows behind them: a histogram of the averaged
column with each answer marked; for a sum, the running total ending at the answer; for
``count()``, when the counted rows occurred (per year, per month, per day, or one dot each)."""

from __future__ import annotations

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from barb.charts.answers import Aggregate, answer_text, read_aggregates
from barb.charts.axes import (
    MAX_VALUE_LABELS,
    category_ticks,
    headroom,
    label_fit,
    legend,
    plot_axes,
    text_handle,
)
from barb.charts.bars import draw_bars, label_bars
from barb.charts.columns import (
    bar_labels,
    floats,
    is_number,
    row_word,
    time_column,
    timeframe,
)
from barb.charts.histogram import draw_histogram
from barb.charts.line_points import decimate
from barb.charts.price import draw_price
from barb.charts.style import (
    ACCENT,
    ANSWER_COLORS,
    AXIS,
    LABEL_PT,
    LEGEND_ROW_PX,
    PLOT_BOTTOM,
    VALUE_PT,
)
from barb.charts.time_axis import bar_step, date_axis, label_axis
from barb.charts.value_text import TickFormatter
from barb.proof_names import axis_label
from barb.result import Result

MAX_COUNTED_DOTS = 60  # counted bars in a short period shown one dot each up to this many


def draw_aggregate(fig: Figure, result: Result) -> bool:
    rows = result.source_rows
    if rows is None or rows.empty:
        return False
    aggs = read_aggregates(result)
    main = next(
        (a for a in aggs if a.func != "count" and a.column in rows and is_number(rows[a.column])),
        None,
    )
    if main is None or main.column is None:
        return _draw_counts(fig, result, rows, aggs)
    if main.func == "sum" and time_column(rows) is not None:
        return _draw_running_total(fig, result, rows, main, aggs)
    return draw_histogram(fig, result, rows, main.column, aggs)


def _draw_counts(fig: Figure, result: Result, rows: pd.DataFrame, aggs: list[Aggregate]) -> bool:
    """When the counted rows occurred: per year, per month, or one mark per row."""
    date_col = "trading_date" if "trading_date" in rows.columns else time_column(rows)
    if date_col is None:
        return False
    dates = pd.DatetimeIndex(rows[date_col])
    meta = result.metadata
    assert meta is not None
    start = pd.Timestamp(meta.period_start) if meta.period_start else dates.min()
    end = pd.Timestamp(meta.period_end) if meta.period_end else dates.max()
    months = (end.year - start.year) * 12 + end.month - start.month + 1
    if end.year - start.year >= 2:
        freq, per, label = "Y", "year", "%Y"
    elif months >= 3:
        freq, per, label = "M", "month", "%b %Y"
    elif len(rows) > MAX_COUNTED_DOTS:  # intraday bars: how many each day
        freq, per, label = "B", "day", "%b %d"
    else:
        return _draw_counted_days(fig, result, rows, aggs)
    values, labels = _count_per(dates, start, end, freq, label)

    rotate, step = label_fit(labels)
    ax = plot_axes(fig, bottom=PLOT_BOTTOM + (0.09 if rotate else 0.0))
    positions = np.arange(len(values))
    draw_bars(ax, positions, values, width=0.72, color=ACCENT)
    if len(values) <= MAX_VALUE_LABELS:
        label_bars(ax, positions, values, None, size=VALUE_PT, bold=False)
    category_ticks(ax, labels, rotate=rotate, step=step)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=6))
    ax.yaxis.set_major_formatter(TickFormatter())
    headroom(ax, values, px=LEGEND_ROW_PX * len(aggs) + 50)
    ax.set_ylabel(f"matched {row_word(result)} per {per}", fontsize=LABEL_PT)
    legend(ax, [text_handle(answer_text(a, result)) for a in aggs], loc="upper left")
    return True


def _count_per(
    dates: pd.DatetimeIndex, start: pd.Timestamp, end: pd.Timestamp, freq: str, label: str
) -> tuple[np.ndarray, list[str]]:
    """Rows per year, month or business day from start to end, empty periods included."""
    if freq == "B":
        slots = pd.bdate_range(start.normalize(), end.normalize())
        counts = dates.normalize().value_counts().reindex(slots, fill_value=0)
    else:
        slots = pd.period_range(start, end, freq=freq)
        counts = dates.to_period(freq).value_counts().reindex(slots, fill_value=0)
    return counts.to_numpy(dtype="float64"), [s.strftime(label) for s in slots]


def _draw_counted_days(
    fig: Figure, result: Result, rows: pd.DataFrame, aggs: list[Aggregate]
) -> bool:
    """A short period: the close of every counted bar, on its date."""
    time_col = time_column(rows)
    if time_col is None or "close" not in rows.columns:
        return False
    x = mdates.date2num(rows[time_col].to_numpy())
    ax = plot_axes(fig)
    step = bar_step(x, timeframe(result))
    draw_price(ax, x, rows, consecutive=False, step=step)
    headroom(ax, floats(rows["close"]), px=LEGEND_ROW_PX * len(aggs) + 30, floor=False)
    ax.set_ylabel(f"close on counted {row_word(result)}", fontsize=LABEL_PT)
    _time_axis(ax, x, rows, result, step)
    legend(ax, [text_handle(answer_text(a, result)) for a in aggs], loc="upper left")
    return True


def _draw_running_total(
    fig: Figure, result: Result, rows: pd.DataFrame, main: Aggregate, aggs: list[Aggregate]
) -> bool:
    """A sum as the running total over time, ending at the answer."""
    time_col = time_column(rows)
    assert time_col is not None and main.column is not None
    x = mdates.date2num(rows[time_col].to_numpy())
    total = np.nancumsum(floats(rows[main.column]))
    ax = plot_axes(fig)
    ax.plot(*decimate(x, total), color=ACCENT, linewidth=2.4)
    ax.scatter([x[-1]], [total[-1]], s=90, color=ANSWER_COLORS[0], zorder=3)
    ax.axhline(0, color=AXIS, linewidth=1.2)
    ax.yaxis.set_major_formatter(TickFormatter())
    headroom(ax, total, px=LEGEND_ROW_PX * len(aggs) + 30, floor=False)
    label = axis_label(main.column, timeframe(result), result.query)
    ax.set_ylabel(f"running total of {label}", fontsize=LABEL_PT)
    _time_axis(ax, x, rows, result, bar_step(x, timeframe(result)))
    legend(ax, [text_handle(answer_text(a, result)) for a in aggs], loc="upper left")
    return True


def _time_axis(ax: Axes, x: np.ndarray, rows: pd.DataFrame, result: Result, step: float) -> None:
    """Dates under the rows, named by their bar labels when they have them."""
    names = bar_labels(rows, result)
    if names is None:
        date_axis(ax, x, step)
    else:
        label_axis(ax, x, names, step)
