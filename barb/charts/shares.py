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

from barb.charts.answers import (
    Aggregate,
    answer_text,
    baseline,
    read_aggregates,
    select_items,
)
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
from barb.charts.bars import (
    draw_bars,
    label_bars,
    labels_upright,
    mark_zero_bars,
    upright_label_px,
)
from barb.charts.columns import counted_dates, row_word, timeframe, unit
from barb.charts.select_calls import call_args
from barb.charts.style import (
    ACCENT,
    ANSWER_COLORS,
    BASELINE_LINE,
    FIG_H_IN,
    FIG_W_IN,
    INK,
    LEFT,
    LEGEND_ROW_PX,
    MUTED,
    PLOT_BOTTOM,
    PX_PER_PT,
    RIGHT,
    VALUE_PT,
)
from barb.charts.value_text import TickFormatter, format_all, format_value, is_finite_number
from barb.charts.words import ENGLISH, Words
from barb.column_units import SHARE
from barb.instruments import load_instrument
from barb.period_rows import still_open
from barb.result import Result
from barb.row_values import held, row_values
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
        values = row_values(args[0], rows, result) if len(args) == 1 else None
        condition = held(values) if values is not None else None
        if condition is not None and np.isclose(np.nanmean(condition), float(agg.value), atol=1e-9):
            return Share(agg, condition)
    return None


def draw_share(fig: Figure, result: Result, share: Share, words: Words = ENGLISH) -> bool:
    rows = result.source_rows
    assert rows is not None
    dates = counted_dates(rows, result)
    if dates is None:
        return False
    start, end = _span(dates, result)
    intraday = timeframe_spec(timeframe(result)).intraday
    per, periods, labels = _parts(dates, start, end, intraday, words)
    held = pd.Series(share.held, index=periods)
    counts = held.groupby(level=0, sort=True).count()
    shares = held.groupby(level=0, sort=True).mean()
    slots = _slots(counts.index, per, labels)
    kept = held.groupby(level=0, sort=True).size().reindex(slots, fill_value=0).to_numpy()
    counts = counts.reindex(slots, fill_value=0).to_numpy()
    values = shares.reindex(slots).to_numpy(dtype="float64")
    labels = [labels[p] for p in slots]

    # Every month named: a month left unnamed beside an empty one read as missing data.
    rotate, step = label_fit(labels, thin=per != "month")
    bottom = PLOT_BOTTOM + (0.0105 * max(len(s) for s in labels) if rotate else 0.0)
    ax = plot_axes(fig, bottom=bottom)
    positions = np.arange(len(values), dtype="float64")
    faces = [ACCENT] * len(values)
    if _last_open(result, per, slots[-1]):  # hollow: the data ends inside it (2026's 4 days)
        faces[-1] = "white"
    drawn = np.isfinite(values)  # a period with no rows has no share: no bar, not 0%
    draw_bars(
        ax,
        positions[drawn],
        values[drawn],
        width=0.72,
        color=[f for f, d in zip(faces, drawn, strict=True) if d],
        edgecolor=ACCENT,
        linewidth=1.6,
    )
    mark_zero_bars(ax, positions, values, width=0.72, color=ACCENT)
    answer = float(share.answer.value)
    color = ANSWER_COLORS[0]
    ax.axhline(answer, color=color, linewidth=3.0, zorder=2)
    handles = [
        Line2D([], [], color=color, linewidth=3.0, label=answer_text(share.answer, result, words))
    ]
    lines = [answer]
    base = baseline(share.answer, result, words)
    if base is not None:  # the share over all the period's rows: is the answer above it?
        ax.axhline(base[0], **BASELINE_LINE, zorder=2)
        handles.append(Line2D([], [], **BASELINE_LINE, label=base[1]))
        lines.append(base[0])
    others = [a for a in read_aggregates(result) if a.name != share.answer.name]
    handles += [text_handle(answer_text(a, result, words)) for a in others]
    labelled = len(values) <= MAX_VALUE_LABELS
    upright = False
    room = LEGEND_ROW_PX * len(handles) + 45
    if labelled:
        slot_pt = (RIGHT - LEFT) * FIG_W_IN * 72 / len(values)
        upright = labels_upright(values, SHARE, slot_pt, VALUE_PT)
        if upright:
            texts = format_all(values, SHARE, words)
            room += upright_label_px(texts, VALUE_PT)
        else:
            room += 25
    headroom(ax, np.append(values, lines), px=room)
    if labelled:
        texts = format_all(values, SHARE, words)
        label_pt = upright_label_px(texts, VALUE_PT) / PX_PER_PT if upright else VALUE_PT * 1.4
        # A label the answer's line would strike through goes inside its bar's top.
        count_pt = max(len(t) for t in _count_texts(counts, result, words)) * COUNT_PT * 0.62
        inside = _crossed(ax, values, lines, label_pt, count_pt)
        shown = np.isfinite(values) & ~inside
        label_bars(
            ax,
            positions[shown],
            values[shown],
            SHARE,
            size=VALUE_PT,
            bold=False,
            upright=upright,
            words=words,
            texts=[texts[i] for i in np.flatnonzero(shown)],
            backed=True,  # one the line still crosses (a bar too short to hold it) is legible
        )
        for i in np.flatnonzero(inside):
            ax.annotate(
                texts[i],
                (positions[i], values[i]),
                xytext=(0, -4),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=VALUE_PT,
                color=INK if faces[i] == "white" else "white",
                rotation=90 if upright else 0,
                zorder=4,
            )
        bars = _Bars(positions, values, counts, kept, faces, inside, label_pt)
        _write_counts(ax, bars, result, words)
    category_ticks(ax, labels, rotate=rotate, step=step, words=words)
    # A share never passes 100%: no tick above it (``axes.fix_ticks``).
    ax.yaxis.set_major_formatter(TickFormatter(words, SHARE))
    value_label(ax, words("share_per", rows=row_word(result, words), per=words.per(per)))
    legend(ax, handles, loc="upper left")
    return True


@dataclass(frozen=True)
class _Bars:
    """The share chart's bars: each one's value, rows counted (those with a value), rows
    kept, face, whether its value label is inside it, and how tall value labels stand
    (points)."""

    positions: np.ndarray
    values: np.ndarray
    counts: np.ndarray
    kept: np.ndarray
    faces: list[str]
    inside: np.ndarray
    label_pt: float


def _px_per_unit(ax: Axes) -> float:
    lo, hi = ax.get_ylim()
    return ax.get_position().height * FIG_H_IN * 100 / (hi - lo)


def _crossed(
    ax: Axes, values: np.ndarray, lines: list[float], label_pt: float, count_pt: float
) -> np.ndarray:
    """The bars whose value label, standing on the bar's end, a line across them (the
    answer's, the baseline's) crosses, and that are tall enough to hold the label inside
    instead, over their count."""
    per_px = 1 / _px_per_unit(ax)
    label = (label_pt + 3) * PX_PER_PT * per_px
    line = 3 * PX_PER_PT * per_px  # half the line's width and a little
    finite = np.isfinite(values)
    tip = np.where(finite, values, 0.0)
    crossed = np.zeros(len(values), dtype=bool)
    for at in lines:
        crossed |= finite & (tip - line <= at) & (at <= tip + label + line)
    room = label + (count_pt + 18) * PX_PER_PT * per_px
    return crossed & (tip >= room)


def _count_texts(counts: np.ndarray, result: Result, words: Words) -> list[str]:
    """The rows each bar counts, as written along it ("21 days")."""
    return [
        words(
            "counted",
            count=format_value(int(c), words=words),
            rows=row_word(result, words, int(c)),
        )
        for c in counts
    ]


def _write_counts(ax: Axes, bars: _Bars, result: Result, words: Words) -> None:
    """The rows each bar counts ("21 days"), along the bar from its base; over a bar too
    short to hold it (a 0% week), above the bar's value label, where the axis has room."""
    lo, hi = ax.get_ylim()
    px = _px_per_unit(ax)
    label_px = (bars.label_pt + 6) * PX_PER_PT
    texts = _count_texts(bars.counts, result, words)
    rows = zip(
        bars.positions,
        bars.values,
        bars.counts,
        bars.kept,
        bars.faces,
        bars.inside,
        texts,
        strict=True,
    )
    for at, value, count, kept, face, inside, text in rows:
        if not np.isfinite(value) or not count:
            _write_no_share(ax, at, int(kept), result, words)
            continue
        needed_px = len(text) * COUNT_PT * 0.62 * PX_PER_PT + 12
        room_px = (value - max(lo, 0.0)) * px - (label_px if inside else 0.0)
        if room_px >= needed_px:
            base, offset, color = 0.0, 6.0, INK if face == "white" else "white"
        elif not inside and (hi - value) * px - label_px >= needed_px:
            base, offset, color = value, bars.label_pt + 6, INK
        else:
            continue
        ax.annotate(
            text,
            (at, base),
            xytext=(0, offset),
            textcoords="offset points",
            rotation=90,
            ha="center",
            va="bottom",
            fontsize=COUNT_PT,
            color=color,
        )


def _write_no_share(ax: Axes, at: float, rows: int, result: Result, words: Words) -> None:
    """What stands in a period with no share, along its empty slot from the base: "no days"
    where no row was kept (June 2024 had no inside day), "n/a" where the rows kept have no
    value (the data's last day, with no next close). Not a 0% bar: nothing was 0%."""
    text = words("no_rows", rows=row_word(result, words, 0)) if not rows else words("no_value")
    ax.annotate(
        text,
        (at, 0.0),
        xytext=(0, 6),
        textcoords="offset points",
        rotation=90,
        ha="center",
        va="bottom",
        fontsize=COUNT_PT,
        color=MUTED,
        # The answer's line passes behind it, as behind the shares written on white.
        bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none"},
        zorder=4,
    )


def _last_open(result: Result, per: str, last: pd.Period) -> bool:
    """Whether the rows end inside the last period drawn, ``last`` (the data's end, or the
    query's period): a year, month or week with trading days still to come on the
    exchange's calendar. Only when the end falls in that period: June days to 2026-01-07
    end at June 2025, a whole year, and 2025 was drawn hollow. Not for weekly bars: the
    week that begins at a year's end is the next year's, and 2024 over weekly bars is whole
    though 30 and 31 December trade."""
    meta = result.metadata
    unit = {"year": "yearly", "month": "monthly", "week": "weekly"}.get(per)
    if meta is None or meta.period_end is None or unit is None:
        return False
    if not last.start_time <= pd.Timestamp(meta.period_end) <= last.end_time:
        return False
    if not timeframe_spec(timeframe(result)).intraday and timeframe(result) != "daily":
        return False
    try:
        calendar = load_instrument(meta.instrument).calendar
    except Exception:  # an instrument file gone since the query ran: say nothing
        return False
    return still_open(np.datetime64(meta.period_end, "ns"), unit, calendar)


def _span(dates: pd.DatetimeIndex, result: Result) -> tuple[pd.Timestamp, pd.Timestamp]:
    """The span the breakdown covers: the query's period (its first and last trading date),
    as the count chart spans it, not only the rows kept. The inside days of 2024 end on
    10-29, and a month axis cut there read as data ending in October. Over weekly bars the
    last week is placed by its Monday, as its label names it."""
    start, end = dates.min(), dates.max()
    meta = result.metadata
    if meta is None or meta.period_start is None or meta.period_end is None:
        return start, end
    last = pd.Timestamp(meta.period_end)
    if timeframe(result) == "weekly":
        last -= pd.Timedelta(days=last.dayofweek)
    return min(start, pd.Timestamp(meta.period_start)), max(end, last)


def _parts(
    dates: pd.DatetimeIndex, start: pd.Timestamp, end: pd.Timestamp, intraday: bool, words: Words
) -> tuple[str, np.ndarray, dict[pd.Period, str]]:
    """The period each row falls in, by the span from ``start`` to ``end``: years over two
    years or more, months over three months or more, days for intraday bars over less than
    three weeks, else weeks; with the label of each period of the span."""
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
    for period in pd.period_range(start.to_period(freq), end.to_period(freq), freq=freq):
        first = period.start_time
        if per == "year":
            labels[period] = str(period.year)
        elif per == "month":
            month = names[period.month - 1]
            labels[period] = month if one_year else f"{month} {period.year}"
        else:  # "Mar 04", "4 мар": the order and the day's form are the language's
            labels[period] = words(
                "day_month", month=names[first.month - 1], day=f"{first.day:02d}"
            )
    return per, np.asarray(periods), labels


def _slots(found: pd.Index, per: str, span: dict[pd.Period, str]) -> list[pd.Period]:
    """Every period of the span (``span``'s keys, the period's first to its last): a year,
    month or week with no row is an empty slot, not left out; a day with none (a weekend)
    is left out."""
    if per == "day":
        return list(found)
    return list(span)
