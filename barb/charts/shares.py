"""A share of rows (``mean(close > open)``, ``mean(up)``): the share in each natural part of
the rows' span (per year over years, per month over months, per week, per day for a few
weeks of intraday bars) as bars in percent, the answer as a line across them, and in each
bar the rows it counts. Rows per month beside the answer read as all days being up days;
the shares per year show whether 47% is every year's share or an average of 30% and 60%.

The condition's value on each row is the mapped column the mean reads, or the condition
itself evaluated again by the engine's evaluator over the rows behind the number (only a
condition that reads each row alone: one that reads earlier bars would see the kept rows'
neighbours, not the bars'). The shares are drawn only when they average to the answer."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from barb.charts.answers import Aggregate, answer_text, read_aggregates, select_items
from barb.charts.axes import (
    MAX_VALUE_LABELS,
    category_ticks,
    headroom,
    label_fit,
    legend,
    plot_axes,
    text_handle,
    value_label,
)
from barb.charts.bars import draw_bars, label_bars, labels_upright, upright_label_px
from barb.charts.columns import counted_dates, row_word, timeframe, unit
from barb.charts.select_calls import call_args
from barb.charts.style import (
    ACCENT,
    ANSWER_COLORS,
    FIG_H_IN,
    FIG_W_IN,
    LEFT,
    LEGEND_ROW_PX,
    PLOT_BOTTOM,
    PX_PER_PT,
    RIGHT,
    VALUE_PT,
)
from barb.charts.value_text import TickFormatter, format_value, is_finite_number
from barb.charts.words import ENGLISH, Words
from barb.column_units import SHARE
from barb.errors import BarbError, UnknownSession
from barb.result import Result
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate
from barb.script.parser import parse_expression
from barb.script.reach import reach
from barb.timeframes import timeframe as timeframe_spec

MEANS = frozenset({"mean", "avg"})
COUNT_PT = VALUE_PT - 1  # the rows a bar counts, written along it


@dataclass(frozen=True)
class Share:
    """The answer, and whether its condition held on each row behind it (NaN: unknown)."""

    answer: Aggregate
    held: np.ndarray


def share_of_rows(result: Result, rows: pd.DataFrame) -> Share | None:
    """The first answer that is the mean of a condition whose value on each row is known
    and averages to the answer."""
    texts = select_items(result.query)
    for i, agg in enumerate(read_aggregates(result)):
        if agg.func not in MEANS or not is_finite_number(agg.value):
            continue
        if unit(agg.name, result) != SHARE:
            continue
        _, args = call_args(texts[i] if i < len(texts) else agg.name)
        held = _condition(args[0], rows, result) if len(args) == 1 else None
        if held is not None and np.isclose(np.nanmean(held), float(agg.value), atol=1e-9):
            return Share(agg, held)
    return None


def _condition(text: str, rows: pd.DataFrame, result: Result) -> np.ndarray | None:
    """The condition's value on each row, 1.0 or 0.0 (NaN where unknown)."""
    try:
        expr = parse_expression(text)
        if isinstance(expr, ast.Column) and expr.name in rows.columns:
            values = rows[expr.name]
        elif reach(expr).local:
            ctx = EvalContext(
                frame=rows, timeframe=timeframe(result), session_bars=_no_sessions, step="select"
            )
            values = evaluate(expr, ctx)
        else:
            return None
    except BarbError:
        return None
    if not pd.api.types.is_bool_dtype(values):
        return None
    known = values.notna().to_numpy()
    return np.where(known, values.to_numpy(dtype=bool, na_value=False), np.nan)


def _no_sessions(name: str) -> pd.DataFrame:
    raise UnknownSession(f"no session bars behind a chart: {name}")


def draw_share(fig: Figure, result: Result, share: Share, words: Words = ENGLISH) -> bool:
    rows = result.source_rows
    assert rows is not None
    dates = counted_dates(rows, result)
    if dates is None:
        return False
    per, periods, labels = _parts(dates, timeframe_spec(timeframe(result)).intraday, words)
    held = pd.Series(share.held, index=periods)
    counts = held.groupby(level=0, sort=True).count()
    shares = held.groupby(level=0, sort=True).mean()
    slots = _slots(counts.index, per)
    counts = counts.reindex(slots, fill_value=0).to_numpy()
    values = shares.reindex(slots).to_numpy(dtype="float64")
    labels = [labels[p] for p in slots]

    rotate, step = label_fit(labels)
    ax = plot_axes(fig, bottom=PLOT_BOTTOM + (0.09 if rotate else 0.0))
    positions = np.arange(len(values), dtype="float64")
    draw_bars(ax, positions, np.nan_to_num(values), width=0.72, color=ACCENT)
    answer = float(share.answer.value)
    color = ANSWER_COLORS[0]
    ax.axhline(answer, color=color, linewidth=3.0)
    handles = [
        Line2D([], [], color=color, linewidth=3.0, label=answer_text(share.answer, result, words))
    ]
    others = [a for a in read_aggregates(result) if a.name != share.answer.name]
    handles += [text_handle(answer_text(a, result, words)) for a in others]
    labelled = len(values) <= MAX_VALUE_LABELS
    upright = False
    room = LEGEND_ROW_PX * len(handles) + 45
    if labelled:
        slot_pt = (RIGHT - LEFT) * FIG_W_IN * 72 / len(values)
        upright = labels_upright(values, SHARE, slot_pt, VALUE_PT)
        if upright:
            texts = [format_value(v, SHARE, words=words) for v in values]
            room += upright_label_px(texts, VALUE_PT)
        else:
            room += 25
    headroom(ax, np.append(values, answer), px=room)
    if labelled:
        shown = np.isfinite(values)
        label_bars(
            ax,
            positions[shown],
            values[shown],
            SHARE,
            size=VALUE_PT,
            bold=False,
            upright=upright,
            words=words,
        )
        _write_counts(ax, positions, values, counts, result, words)
    category_ticks(ax, labels, rotate=rotate, step=step, words=words)
    ax.yaxis.set_major_formatter(TickFormatter(words, SHARE))
    value_label(ax, words("share_per", rows=row_word(result, words), per=words.per(per)))
    legend(ax, handles, loc="upper left")
    return True


def _write_counts(
    ax: Axes,
    positions: np.ndarray,
    values: np.ndarray,
    counts: np.ndarray,
    result: Result,
    words: Words,
) -> None:
    """The rows each bar counts ("21 days"), along the bar from its base, where it fits."""
    lo, hi = ax.get_ylim()
    height_px = ax.get_position().height * FIG_H_IN * 100
    for at, value, count in zip(positions, values, counts, strict=True):
        if not np.isfinite(value) or not count:
            continue
        text = words(
            "counted",
            count=format_value(int(count), words=words),
            rows=row_word(result, words, int(count)),
        )
        needed_px = len(text) * COUNT_PT * 0.62 * PX_PER_PT + 12
        if value / (hi - lo) * height_px < needed_px:
            continue
        ax.annotate(
            text,
            (at, 0),
            xytext=(0, 6),
            textcoords="offset points",
            rotation=90,
            ha="center",
            va="bottom",
            fontsize=COUNT_PT,
            color="white",
        )


def _parts(
    dates: pd.DatetimeIndex, intraday: bool, words: Words
) -> tuple[str, np.ndarray, dict[pd.Period, str]]:
    """The period each row falls in, by the rows' span: years over two years or more,
    months over three months or more, days for intraday bars over less than three weeks,
    else weeks; with each period's label."""
    start, end = dates.min(), dates.max()
    months = (end.year - start.year) * 12 + end.month - start.month + 1
    if end.year - start.year >= 2:
        per, freq = "year", "Y"
    elif months >= 3:
        per, freq = "month", "M"
    elif intraday and (end - start).days < 21:
        per, freq = "day", "D"
    else:
        per, freq = "week", "W"
    periods = dates.to_period(freq)
    names = words.months
    one_year = start.year == end.year
    labels: dict[pd.Period, str] = {}
    for period in pd.period_range(periods.min(), periods.max(), freq=freq):
        first = period.start_time
        if per == "year":
            labels[period] = str(period.year)
        elif per == "month":
            month = names[period.month - 1]
            labels[period] = month if one_year else f"{month} {period.year}"
        else:
            labels[period] = f"{names[first.month - 1]} {first.day:02d}"
    return per, np.asarray(periods), labels


def _slots(found: pd.Index, per: str) -> list[pd.Period]:
    """Every period from the first to the last with rows: a year or month with none is an
    empty slot, not left out; a day with none (a weekend) is left out."""
    if per == "day":
        return list(found)
    return list(pd.period_range(found.min(), found.max(), freq=found[0].freq))
