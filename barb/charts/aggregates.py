"""A number or a few numbers, drawn from the rows behind them: a histogram of the averaged
column with each answer marked; for a sum, the running total ending at the answer; for
a count, when the counted rows occurred (per year, per month, per day, or one dot each);
for a ``then`` stage, the first stage's groups (those its where kept) as bars with the answer
across them; for a share of rows, the share per period (``shares.py``); for a min or max
measured from a running high or low, the curve over time (``drawdown.py``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from barb.charts.answers import Aggregate, answer_text, read_aggregates, select_items
from barb.charts.axes import (
    MAX_VALUE_LABELS,
    category_ticks,
    count_ticks,
    headroom,
    label_fit,
    legend,
    plot_axes,
    text_handle,
    value_label,
)
from barb.charts.bars import draw_bars, label_bars, labels_upright
from barb.charts.columns import (
    axis_text,
    bar_labels,
    counted_dates,
    floats,
    is_number,
    keys_text,
    row_word,
    time_column,
    timeframe,
    zoned,
)
from barb.charts.drawdown import draw_running_extreme, running_extreme
from barb.charts.grouped import MAX_GROUP_BARS, below_zero, group_labels
from barb.charts.histogram import draw_histogram
from barb.charts.line_points import decimate
from barb.charts.price import draw_price
from barb.charts.select_calls import call_args
from barb.charts.shares import draw_share, share_of_rows
from barb.charts.side_by_side import MAX_SERIES, SERIES_COLORS, SLOT_WIDTH
from barb.charts.style import (
    ACCENT,
    ANSWER_COLORS,
    AXIS,
    FIG_W_IN,
    LABEL_PT,
    LEFT,
    LEGEND_ROW_PX,
    NEUTRAL,
    PLOT_BOTTOM,
    RIGHT,
    VALUE_PT,
)
from barb.charts.time_axis import bar_step, date_axis, label_axis
from barb.charts.time_of_day import clock_axis, value_kind
from barb.charts.value_text import TickFormatter, is_finite_number
from barb.charts.words import ENGLISH, Words
from barb.errors import BarbError
from barb.lineage import group_key_names
from barb.result import Result
from barb.row_values import counted, row_values, statistic_arguments
from barb.script.parser import parse_expression
from barb.timeframes import TIMEFRAMES

MAX_COUNTED_DOTS = 60  # counted bars in a short period shown one dot each up to this many


def draw_aggregate(fig: Figure, result: Result, words: Words = ENGLISH) -> bool:
    rows = result.source_rows
    if rows is None or rows.empty:
        return False
    aggs = read_aggregates(result)
    main = _main(rows, aggs)
    if main is None:
        # A statistic of an expression, drawn as the mapped form is: mean(range / open *
        # 100) drew nothing where mean(range_pct) drew the histogram of range_pct.
        rows, aggs = _with_arguments(rows, aggs, result)
        main = _main(rows, aggs)
    # A then stage's groups with a number of their own beside the share (the week's change
    # and its share up) are drawn by that number: bars or its histogram over the groups.
    then = result.metadata is not None and result.metadata.then_rows is not None
    share = share_of_rows(result, rows) if main is None or not then else None
    if share is not None and main is not None and _written_after(share.answer, main, aggs):
        # A share written after the number asked for is a side figure: "mean(share) as
        # mean_pct, ..., mean(share == 100)" drew the 2.6% full-range days per year, and
        # nothing on the chart showed the 58% mean share.
        share = None
    if share is not None and draw_share(fig, result, share, words):  # rows with dates
        return True
    extreme = running_extreme(result)
    if extreme is not None:
        return draw_running_extreme(fig, result, extreme, words)
    if main is None or main.column is None:
        # Rows per month prove a count only: beside arg_max(date(), range) or a share
        # (mean(close > open)) they read as the answer (all days per month as up days).
        counted = any(a.func == "count" for a in aggs)
        if not counted:
            return False
        column = _stage_value(result, rows)
        if column is not None:  # the 6 months a then stage counted, each its own bar
            return _draw_stage_rows(fig, result, rows, column, aggs, words)
        return _draw_counts(fig, result, rows, aggs, words)
    if time_column(rows) is None and len(rows) <= MAX_GROUP_BARS and len(rows.columns) > 1:
        return _draw_stage_rows(fig, result, rows, main.column, aggs, words)
    if main.func == "sum" and time_column(rows) is not None:
        return _draw_running_total(fig, result, rows, main, aggs, words)
    return draw_histogram(fig, result, rows, main.column, aggs, words)


def _main(rows: pd.DataFrame, aggs: list[Aggregate]) -> Aggregate | None:
    """The first statistic of a numeric column of the rows: what the chart draws."""
    return next(
        (a for a in aggs if a.func != "count" and a.column in rows and is_number(rows[a.column])),
        None,
    )


def _with_arguments(
    rows: pd.DataFrame, aggs: list[Aggregate], result: Result
) -> tuple[pd.DataFrame, list[Aggregate]]:
    """The rows with the values each statistic of an expression took (a column named by the
    expression, ``range / open * 100``), and those statistics reading that column."""
    found = statistic_arguments(rows, result)
    if not found:
        return rows, aggs
    texts = select_items(result.query)
    read = []
    for i, agg in enumerate(aggs):
        _, args = call_args(texts[i] if i < len(texts) else agg.name)
        name = _expression_text(args[0]) if args and agg.column is None else None
        read.append(replace(agg, args=(name, *agg.args[1:])) if name in found else agg)
    return rows.assign(**found), read


def _expression_text(text: str) -> str | None:
    """An argument as the engine writes it back (``range/open*100`` -> ``range / open *
    100``), the name ``statistic_arguments`` gives its values."""
    try:
        return parse_expression(text).to_text()
    except BarbError:
        return None


def _written_after(answer: Aggregate, main: Aggregate, aggs: list[Aggregate]) -> bool:
    """Whether the query selected ``answer`` after ``main``."""
    names = [a.name for a in aggs]
    return names.index(answer.name) > names.index(main.name)


def _draw_counts(
    fig: Figure, result: Result, rows: pd.DataFrame, aggs: list[Aggregate], words: Words
) -> bool:
    """When the counted rows occurred: per year, per month, or one mark per row. Several
    counts are drawn side by side, each in its colour and named in the legend: of the
    Bollinger touches (upper, close below lower, lower) only the first was drawn, under
    "days per month", and read as all of them."""
    series = _counted_series(result, rows)
    if not series:
        return False
    found = [counted_dates(counted, result) for _, counted in series]
    if any(d is None for d in found):
        return False
    dates = pd.DatetimeIndex(np.concatenate([np.asarray(d) for d in found if d is not None]))
    meta = result.metadata
    assert meta is not None
    if dates.empty and not (meta.period_start and meta.period_end):
        return False
    start = pd.Timestamp(meta.period_start) if meta.period_start else dates.min()
    end = pd.Timestamp(meta.period_end) if meta.period_end else dates.max()
    tf = timeframe(result)
    if tf == "weekly":  # the last week is counted by its label, its Monday on
        end = max(dates.max(), end - pd.Timedelta(days=end.dayofweek))
    months = (end.year - start.year) * 12 + end.month - start.month + 1
    counted_rows = sum(len(counted) for _, counted in series)
    if end.year - start.year >= 2:
        freq, per = "Y", "year"
    elif months >= 3:
        freq, per = "M", "month"
    elif counted_rows > MAX_COUNTED_DOTS or (len(series) > 1 and TIMEFRAMES[tf].intraday):
        freq, per = "B", "day"  # intraday bars: how many each day
    elif len(series) > 1:  # days side by side: how many each week (of a day, 0 or 1)
        freq, per = "W", "week"
    else:
        return _draw_counted_days(fig, result, series[0][1], aggs, words)
    per_series = [_count_per(pd.DatetimeIndex(d), start, end, freq, words) for d in found]
    labels = per_series[0][1]

    rotate, step = label_fit(labels)
    ax = plot_axes(fig, bottom=PLOT_BOTTOM + (0.09 if rotate else 0.0))
    k = len(series)
    width = SLOT_WIDTH / k if k > 1 else 0.72
    slots = np.arange(len(labels), dtype="float64")
    every = np.concatenate([values for values, _ in per_series])
    handles: list[Any] = []
    upright = False
    for j, ((agg, _), (values, _)) in enumerate(zip(series, per_series, strict=True)):
        positions = slots + (j - (k - 1) / 2) * width
        color = ACCENT if k == 1 else SERIES_COLORS[j]
        draw_bars(ax, positions, values, width=width, color=color)
        if k > 1:
            handles.append(Patch(facecolor=color, label=answer_text(agg, result, words)))
        if len(every) <= MAX_VALUE_LABELS:
            slot_pt = (RIGHT - LEFT) * FIG_W_IN * 72 / len(every)
            upright = upright or labels_upright(every, None, slot_pt, VALUE_PT)
            label_bars(
                ax, positions, values, None, size=VALUE_PT, bold=False, upright=upright, words=words
            )
    category_ticks(ax, labels, rotate=rotate, step=step, words=words)
    count_ticks(ax.yaxis, nbins=6)
    ax.yaxis.set_major_formatter(TickFormatter(words))
    headroom(ax, every, px=LEGEND_ROW_PX * len(aggs) + (70 if upright else 50))
    text = words("count_per", rows=row_word(result, words), per=words.per(per))
    if k == 1 and len(aggs) > 1:  # which of the counts the bars are
        text = words("count_per_named", name=series[0][0].name, counts=text)
    value_label(ax, text)
    drawn = [agg for agg, _ in series] if k > 1 else []
    handles += [text_handle(answer_text(a, result, words)) for a in aggs if a not in drawn]
    legend(ax, handles, loc="upper left")
    return True


def _counted_series(result: Result, rows: pd.DataFrame) -> list[tuple[Aggregate, pd.DataFrame]]:
    """Each count of the select with the rows it counted (``_counted_rows``), those the rows
    cannot tell left out; ``count()`` of every row beside counts of a condition is their
    whole, not one of them (259 days a year against 40 touches), and is left to the legend."""
    texts = select_items(result.query)
    found = []
    for i, agg in enumerate(read_aggregates(result)):
        if agg.func != "count":
            continue
        kept = _counted_rows(agg, texts[i] if i < len(texts) else agg.name, rows, result)
        if kept is not None:
            found.append((agg, kept, kept is rows))
    conditions = [(agg, kept) for agg, kept, every in found if not every]
    if conditions:
        return conditions[:MAX_SERIES]
    return [(agg, kept) for agg, kept, _ in found[:1]]


def _counted_rows(
    agg: Aggregate, text: str, rows: pd.DataFrame, result: Result
) -> pd.DataFrame | None:
    """The rows a count of the select counted: every row behind the number for ``count()``,
    those where the condition is true for ``count(cond)``, those with a value for
    ``count(col)``; None when the rows cannot tell which (a condition on earlier bars), or
    they do not add up to the answer. Every row behind 646 strong days drew all 4,649."""
    _, args = call_args(text)
    if not args:
        return rows
    values = row_values(args[0], rows, result) if len(args) == 1 else None
    if values is None:
        return None
    kept = counted(values)
    return rows[kept] if is_finite_number(agg.value) and kept.sum() == agg.value else None


def _count_per(
    dates: pd.DatetimeIndex, start: pd.Timestamp, end: pd.Timestamp, freq: str, words: Words
) -> tuple[np.ndarray, list[str]]:
    """Rows per year, month, week (from Monday) or business day from start to end, empty
    periods included."""
    months = words.months

    def day(s: pd.Timestamp) -> str:
        return words("day_month", month=months[s.month - 1], day=f"{s.day:02d}")

    if freq == "B":
        slots = pd.bdate_range(start.normalize(), end.normalize())
        counts = dates.normalize().value_counts().reindex(slots, fill_value=0)
        labels = [day(s) for s in slots]
    else:
        periods = pd.period_range(start, end, freq=freq)
        counts = dates.to_period(freq).value_counts().reindex(periods, fill_value=0)
        if freq == "Y":
            labels = [str(p.year) for p in periods]
        elif freq == "W":
            labels = [day(p.start_time) for p in periods]
        else:
            labels = [f"{months[p.month - 1]} {p.year}" for p in periods]
    return counts.to_numpy(dtype="float64"), labels


def _draw_counted_days(
    fig: Figure, result: Result, rows: pd.DataFrame, aggs: list[Aggregate], words: Words
) -> bool:
    """A short period: the close of every counted bar, on its date."""
    time_col = time_column(rows)
    if time_col is None or "close" not in rows.columns or rows.empty:
        return False
    x = mdates.date2num(rows[time_col].to_numpy())
    ax = plot_axes(fig)
    step = bar_step(x, timeframe(result))
    draw_price(ax, x, rows, consecutive=False, step=step, words=words)
    headroom(ax, floats(rows["close"]), px=LEGEND_ROW_PX * len(aggs) + 30, floor=False)
    value_label(ax, words("close_on_counted", rows=row_word(result, words)))
    _time_axis(ax, x, rows, result, step, words)
    legend(ax, [text_handle(answer_text(a, result, words)) for a in aggs], loc="upper left")
    return True


def _draw_running_total(
    fig: Figure,
    result: Result,
    rows: pd.DataFrame,
    main: Aggregate,
    aggs: list[Aggregate],
    words: Words,
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
    ax.yaxis.set_major_formatter(TickFormatter(words))
    headroom(ax, total, px=LEGEND_ROW_PX * len(aggs) + 30, floor=False)
    value_label(ax, words("running_total", label=axis_text(main.column, result, words)))
    _time_axis(ax, x, rows, result, bar_step(x, timeframe(result)), words)
    legend(ax, [text_handle(answer_text(a, result, words)) for a in aggs], loc="upper left")
    return True


def _stage_value(result: Result, rows: pd.DataFrame) -> str | None:
    """The first stage's first number, when a ``then`` stage's few groups lie behind a
    count: the groups it kept, drawn by that number."""
    then = result.query.get("then")
    if not (isinstance(then, dict) and then) or time_column(rows) is not None:
        return None
    if len(rows) > MAX_GROUP_BARS:
        return None
    keys = set(group_key_names(result.query))
    return next(
        (c for c in rows.columns if c not in keys and is_number(rows[c])),
        None,
    )


def _draw_stage_rows(
    fig: Figure,
    result: Result,
    rows: pd.DataFrame,
    column: str,
    aggs: list[Aggregate],
    words: Words,
) -> bool:
    """A number over a first stage's groups (``then``): one bar per group of ``column``, the
    answer as a line across them (the mean of each year's highest close over the years)."""
    keys = [c for c in rows.columns if c != column and not is_number(rows[c])]
    keys = keys or [c for c in rows.columns if c != column][:1]
    labels = group_labels(rows, keys[:2], result.query, words)
    values = floats(rows[column])
    # Years a then stage's where skipped (the 12 up years of 18) imply none between: each
    # is named, turned if need be. Thinned to every other, 2025, the tallest, went unnamed
    # and the axis read as a time line with gaps (p48i 8).
    rotate, step = label_fit(labels, thin=not _gapped(labels))
    bottom = PLOT_BOTTOM + (0.0105 * max(len(s) for s in labels) if rotate else 0.0)
    ax = plot_axes(fig, bottom=bottom)
    positions = np.arange(len(values), dtype="float64")
    draw_bars(ax, positions, np.nan_to_num(values), width=0.72, color=NEUTRAL)
    handles: list[Line2D] = []
    marked = [a for a in aggs if a.column == column and a.func != "count"]
    for agg, color in zip(marked, ANSWER_COLORS, strict=False):
        if isinstance(agg.value, (int, float)) and np.isfinite(agg.value):
            ax.axhline(float(agg.value), color=color, linewidth=3.0)
            text = answer_text(agg, result, words)
            handles.append(Line2D([], [], color=color, linewidth=3.0, label=text))
    category_ticks(ax, labels, rotate=rotate, step=step, words=words)
    # Values all at or under zero (pullback depths) hang from it: the axis ends at zero and
    # the legend's room is under the deepest, not a +40% band over nothing.
    under = below_zero(values)
    headroom(ax, values, px=10 if under else LEGEND_ROW_PX * max(len(aggs), 1) + 30)
    kind = value_kind(column, result, values)
    if kind is not None:  # bars of times of day, from 00:00
        clock_axis(ax.yaxis, 0.0, float(np.nanmax(values)), kind)
    label = axis_text(column, result, words)
    value_label(ax, zoned(label, result, column, words) if kind is not None else label)
    ax.set_xlabel(keys_text(keys[:2], result, words), fontsize=LABEL_PT)
    handles += [text_handle(answer_text(a, result, words)) for a in aggs if a not in marked]
    legend(ax, handles, loc="lower right" if under else "upper left")
    return True


def _gapped(labels: list[str]) -> bool:
    """Whether ``labels`` are whole numbers (years) with some skipped: 2009, 2011, 2013."""
    if not labels or not all(label.isdigit() for label in labels):
        return False
    return bool((np.diff([int(label) for label in labels]) != 1).any())


def _time_axis(
    ax: Axes, x: np.ndarray, rows: pd.DataFrame, result: Result, step: float, words: Words
) -> None:
    """Dates under the rows, named by their bar labels when they have them."""
    names = bar_labels(rows, result)
    if names is None:
        date_axis(ax, x, step, words)
    else:
        label_axis(ax, x, names, step, words)
