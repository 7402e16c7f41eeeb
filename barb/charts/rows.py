"""A table of rows: over time, the price with the query's columns on it or in a panel below;
a short ranked or filtered list of days, one horizontal bar per day (it reads better than a
few dots spread over 18 years), unless the values are price levels, which go on the price
axis together; one row, a card of its values; without a time column, the values'
distribution."""

from __future__ import annotations

import re

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from barb.charts.axes import plot_axes, value_label, whole_number_ticks
from barb.charts.bars import draw_bars, label_bars
from barb.charts.columns import (
    PRICE_COLUMNS,
    axis_text,
    bar_labels,
    csv_names,
    dated_by_label,
    first_numeric,
    floats,
    is_number,
    open_bar_row,
    price_like,
    time_column,
    timeframe,
    unit,
)
from barb.charts.events import draw_events, read_events
from barb.charts.grouped import (
    draw_grouped,
    fitted_notes,
    keyed_rows,
    limit_tie_notes,
    read_groups,
    write_notes,
)
from barb.charts.header import unjudged_notes
from barb.charts.histogram import draw_histogram
from barb.charts.kinds import (
    calendar_labels,
    in_time_order,
    rows_picked,
    running_columns,
    sorted_by_time,
    sorted_column,
)
from barb.charts.one_row import draw_one_row
from barb.charts.price import MAX_CANDLES, draw_overlays, draw_price
from barb.charts.series import MAX_TOGETHER, as_bars, draw_series
from barb.charts.short_weeks import short_week_label, short_week_rows, short_weeks_note
from barb.charts.style import (
    ACCENT,
    AXIS,
    DOWN,
    FIG_W_IN,
    FOOTER_PT,
    LABEL_PT,
    MUTED,
    NEUTRAL,
    PANEL_GAP,
    PANEL_SPLIT,
    PLOT_BOTTOM,
    PLOT_TOP,
    RIGHT,
    TICK_PT,
    UP,
    VALUE_PT,
)
from barb.charts.tick_values import unit_numbers
from barb.charts.time_axis import bar_step, date_axis, label_axis
from barb.charts.time_of_day import calendar_part, calendar_text
from barb.charts.value_text import TickFormatter, date_text, number_text
from barb.charts.words import ENGLISH, Words
from barb.column_units import PERCENT, PERCENT_POINTS, PERCENTILE, PRICE, price_ratio
from barb.lineage import Lineage
from barb.result import Result
from barb.timeframes import timeframe as timeframe_spec

MAX_RANKED = 40  # a sorted+limited list drawn as ranked bars up to this many rows
MAX_FILTERED_LIST = 25  # a where-filtered list drawn as one bar per day up to this many
LABEL_EM = 0.7  # the width of a bold value label's character, in ems
MAX_LABEL_SHARE = 0.45  # of the axes' width, for the value labels of bars one way
MAX_LABEL_SHARE_BOTH = 0.3  # for each side's labels, with bars both ways
ROW_FILL = 0.92  # of a ranked row's height, its labels' font at most: digits are 0.73 em tall
PERCENTILE_TOP = 100.0  # where a percentile's axis ends


def draw_table(fig: Figure, result: Result, words: Words = ENGLISH) -> bool:
    table = result.table
    if table is None or table.empty:
        return False
    if len(table) == 1:  # a row reads as its values: a line needs two points
        return draw_one_row(fig, result, words)
    time_col = time_column(table)
    if time_col is None:
        dated = dated_by_label(table, result)
        if dated is None and keyed_rows(result):
            return draw_grouped(fig, result, words)
        if dated is None:
            return _draw_undated(fig, result, table, words)
        table, time_col = dated, "timestamp"
    ranked = _ranked_column(result, table)
    if ranked is not None:
        _draw_ranked(fig, result, table, time_col, ranked, words)
        return True
    events = read_events(result, words)
    if events is not None:  # a few picked days, on the period's closes
        return draw_events(fig, result, events, words)
    return _draw_timeline(fig, result, table, time_col, words)


def _draw_undated(fig: Figure, result: Result, table: pd.DataFrame, words: Words) -> bool:
    """Rows with no date to draw them over: one bar per row when a selected calendar key
    names each row once (monthly 2025 with ``month()``: its label gave way to the month's
    number, and the chart was a histogram of 1 … 12, "median = 6.50"), else the values'
    distribution, never the distribution of a year or month column."""
    labels = calendar_labels(result, list(table.columns))
    focus = [c for c in result.focus_columns if c not in labels and c not in PRICE_COLUMNS]
    values = [c for c in focus if c in table.columns and is_number(table[c])]
    if values and len(table) <= MAX_RANKED and calendar_names(result, table, words):
        _draw_ranked(fig, result, table, None, values[0], words)
        return True
    column = first_numeric(table.drop(columns=list(labels)), values)
    return column is not None and draw_histogram(fig, result, table, column, [], words)


def _ranked_column(result: Result, table: pd.DataFrame) -> str | None:
    """The column to rank days by when the table is a short list rather than a series."""
    query = result.query
    ranked = sorted_column(result, table)
    if ranked is not None and len(table) <= MAX_RANKED:
        return ranked
    if rows_picked(result) and len(table) <= MAX_FILTERED_LIST:
        # The selected values the where does not read first: "next-day return after each
        # day with range > 600" drew range, the filter's column, and the next_ret asked
        # for was only named under the axis (p48i 6).
        filtered = re.findall(r"[A-Za-z_]\w*", str(query.get("where") or ""))
        candidates = [c for c in result.focus_columns if c not in PRICE_COLUMNS]
        candidates = [c for c in candidates if c not in filtered] + [
            c for c in candidates if c in filtered
        ]
        candidates += filtered
        candidates = [c for c in candidates if c in table.columns and is_number(table[c])]
        labels = calendar_labels(result, candidates)  # a row's year is its name, no length
        candidates = [c for c in candidates if c not in labels]
        # A level (sma50, a close) drawn as a bar from zero shows nothing: levels go on the
        # price axis over time, together; a running total (an equity curve) is a line.
        running = running_columns(result, candidates)
        return next(
            (c for c in candidates if unit(c, result) != "price" and c not in running), None
        )
    return None


def _draw_ranked(
    fig: Figure,
    result: Result,
    table: pd.DataFrame,
    time_col: str | None,
    column: str,
    words: Words,
) -> None:
    """One horizontal bar per row, labelled with its date (``time_col``; None: rows named by
    a selected calendar key alone), the first row on top."""
    values = floats(table[column])
    n = len(values)
    names = bar_labels(table, result)
    labels_by = calendar_names(result, table, words)
    if labels_by is not None:  # the year selected to name each row: "2008", as asked
        dates = labels_by
    elif time_col is None:
        raise ValueError("rows with neither a date nor a calendar key to name them")
    elif names is None:
        dates = [date_text(t, weekday=True, words=words) for t in table[time_col]]
    else:  # the bar label, as the CSV has it; a day also says its weekday
        daily = timeframe(result) == "daily"
        weekdays = words.weekdays
        days = [weekdays[pd.Timestamp(t).dayofweek] for t in table[time_col]]
        dates = [f"{d} {n}" if daily else str(n) for d, n in zip(days, names, strict=True)]
        # A week with a holiday in it says its days: "2025-12-22 (4 days)" ranked quietest.
        for at, week in short_week_rows(names, result).items():
            dates[at] = short_week_label(dates[at], week, words)
    # Numbered as a ranking only when sorted by a value: a list sorted by its dates is in
    # time order, whose "1." is no place.
    ranked = bool(result.query.get("sort")) and not sorted_by_time(result, table)
    places = tied_places(values) if ranked else []
    labels = [f"{places[i]}. {d}" if ranked else d for i, d in enumerate(dates)]
    # The selected values not drawn are named under the axis ("+ 1 more value in the CSV:
    # range_pct"), as a grouped chart names them: a top 25 by range with range_pct said
    # nothing of it.
    left_out = [
        c
        for c in result.focus_columns
        if c != column and c in table.columns and c not in PRICE_COLUMNS and is_number(table[c])
    ]
    left_out = [c for c in left_out if c not in calendar_labels(result, left_out)]
    notes = unjudged_notes(result, words)
    repeats = _earlier_run_rows(result, n)
    if repeats.any():  # "4 bars are 2 runs": a run's earlier days greyed, said why
        runs = len({run for run in (result.metadata.same_runs or []) if run >= 0})
        notes.append(words("same_run_note", bars=n, runs=runs, plural_of=runs))
    if ranked:
        notes += _limit_tie_rows_note(result, values, words)
    if left_out:
        count = len(left_out)
        notes.append(
            words(
                "left_out", plural_of=count, count=count, names=csv_names(left_out, result, words)
            )
        )
    said = notes
    notes = fitted_notes(fig, said)
    bottom = PLOT_BOTTOM + len(notes) * FOOTER_PT * 1.4 / (fig.get_figheight() * 72)
    size = _row_label_pt(n, (PLOT_TOP - bottom) * fig.get_figheight() * 72 / n)
    left = 0.04 + max(len(s) for s in labels) * size * 0.6 / 72 / FIG_W_IN
    if said:  # centred under these axes, wide labels to the left: wrapped again to fit
        notes = fitted_notes(fig, said, left=left)
        bottom = PLOT_BOTTOM + len(notes) * FOOTER_PT * 1.4 / (fig.get_figheight() * 72)
    value_unit = unit(column, result)
    # Digits enough to tell the rows apart: rank(range)'s top 100, 99.98 and 99.96 all
    # read "100.0", as if tied.
    texts = unit_numbers(values, value_unit, result, words, distinct=True)
    # Room for the value labels beyond the bars' ends: a label's share of the axes' width,
    # in the chart's language ("−26,6 %" is a character longer than "−26.6%") and bold.
    label_pt = max(len(t) for t in texts) * size * LABEL_EM + 8
    finite = values[np.isfinite(values)]
    lo, hi = min(0.0, float(finite.min(initial=0))), max(0.0, float(finite.max(initial=0)))
    # A percentile ends at 100: its labels go in room beside the axes, where an axis padded
    # for them ran to 120 percentile.
    bounded = value_unit == PERCENTILE and lo >= 0 and hi <= PERCENTILE_TOP
    right = RIGHT - 0.03 - (label_pt / (FIG_W_IN * 72) if bounded else 0.0)
    ax = plot_axes(fig, left=left, bottom=bottom, right=right, grid_axis="x")
    # Signed values (a change, a gap) read by colour: red down, green up.
    signed = bool(np.isfinite(values).any() and np.nanmin(values) < 0)
    rows = np.arange(n)
    colors = np.where(np.nan_to_num(values) < 0, DOWN, UP) if signed else np.full(n, ACCENT)
    colors = np.where(repeats, NEUTRAL, colors)
    draw_bars(
        ax,
        rows,
        values,
        width=0.7,
        color=colors,
        edgecolor=colors,
        linewidth=1.0,
        horizontal=True,
    )
    label_bars(ax, rows, values, value_unit, size=size, horizontal=True, words=words, texts=texts)
    # Before set_yticks, so the ticks are made this way rather than changed one by one.
    ax.tick_params(axis="y", labelsize=size, length=0, pad=10)
    ax.set_yticks(rows, labels)
    ax.set_ylim(n - 0.4, -0.6)
    if bounded:
        ax.set_xlim(0, PERCENTILE_TOP)
    else:
        sides = int(lo < 0) + int(hi > 0)
        # Bars one way can give their labels more of the axes: beside dates as long as
        # "10. Чт 2020-07-02" the axes are narrow, and a 0.3 share cut "−12,60 %" into
        # the date beside it.
        cap = MAX_LABEL_SHARE if sides < 2 else MAX_LABEL_SHARE_BOTH
        share = min(label_pt / ((right - left) * FIG_W_IN * 72), cap)
        pad = _label_pad(hi - lo or 1.0, share, sides=sides)
        ax.set_xlim(lo - (pad if lo < 0 else 0), hi + (pad if hi > 0 else 0))
    ax.axvline(0, color=AXIS, linewidth=1.2)
    ax.xaxis.set_major_formatter(TickFormatter(words, value_unit))
    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
    whole_number_ticks(ax.xaxis, values, nbins=4)
    ax.set_xlabel(axis_text(column, result, words), fontsize=LABEL_PT)
    if notes:
        write_notes(ax, notes)


def tied_places(values: np.ndarray) -> list[int]:
    """Each ranked row's place, from 1, rows of an equal value sharing the first one's, as
    the text ties them: NQ's longest losing streaks 11, 11, 10, 10 are places 1, 1, 3, 3,
    not "2. 2018-11-05" behind an equal 11 (p48f M5)."""
    places: list[int] = []
    for at, value in enumerate(values):
        same = at and (value == values[at - 1] or (np.isnan(value) and np.isnan(values[at - 1])))
        places.append(places[-1] if same else at + 1)
    return places


def _earlier_run_rows(result: Result, n: int) -> np.ndarray:
    """Which of the ``n`` rows drawn are rows of a run a bar above already draws
    (``Metadata.same_runs``): 2008-04-30 (10) is an earlier day of 2008-05-01's 11."""
    runs = result.metadata.same_runs if result.metadata is not None else None
    repeats = np.zeros(n, dtype=bool)
    if runs is None or len(runs) != n:
        return repeats
    seen: set[int] = set()
    for at, run in enumerate(runs):
        repeats[at] = run >= 0 and run in seen
        seen.add(run)
    return repeats


def _limit_tie_rows_note(result: Result, values: np.ndarray, words: Words) -> list[str]:
    """The rows tied with the last bar that the limit left out (``Metadata.limit_tie``), by
    their dates, as a grouped chart names its groups: "Also 10, cut by the limit:
    2024-06-27" under a top 4 of up streaks whose third 10 the text warned of (p48f M5)."""
    tie = result.metadata.limit_tie if result.metadata is not None else None
    if tie is None or not len(values) or not np.isfinite(values[-1]):
        return []
    value = float(values[-1])
    shown = number_text(value, 0 if value.is_integer() else 2, words)
    names = ", ".join(" · ".join(keys.values()) for keys in tie.left)
    more = tie.left_count - len(tie.left)
    if more > 0:
        return [words("limit_tie_more_note", value=shown, names=names, count=more)]
    return [words("limit_tie_note", value=shown, names=names)]


def limit_tie_note(result: Result, words: Words = ENGLISH) -> str | None:
    """The note the chart writes under a ranking whose limit cut a tie, for the CSV to say it
    too: "Also 14, cut by the limit: Oct" of "two months with the most up days" was under the
    chart, and the file held Dec and Sep alone. None when no tie was cut."""
    meta = result.metadata
    table = result.table
    if meta is None or meta.limit_tie is None or table is None or table.empty:
        return None
    groups = read_groups(result, words)
    if groups is not None and groups.ranked and groups.by:
        notes = limit_tie_notes(groups, result, words)
    else:
        column = sorted_column(result, table)
        if column is None or column not in table.columns or not is_number(table[column]):
            return None
        notes = _limit_tie_rows_note(result, floats(table[column]), words)
    return notes[0] if notes else None


def calendar_names(result: Result, table: pd.DataFrame, words: Words) -> list[str] | None:
    """Each row's name when the query selected a place in the calendar that names every row
    once (``year()`` of one week a year: ``2008`` … ``2025``, never "2,008"), else None: a
    year shared by four weeks names none of them."""
    numbers = [c for c in result.focus_columns if c in table.columns and is_number(table[c])]
    for column in numbers:
        if column not in calendar_labels(result, [column]):
            continue
        part = calendar_part(column, result.query)
        texts = [None if part is None else calendar_text(v, part, words) for v in table[column]]
        if all(texts) and len(set(texts)) == len(texts):
            return [str(t) for t in texts]
    return None


def _row_label_pt(rows: int, slot_pt: float) -> float:
    """The font of a ranked list's dates and values, ``rows`` of them ``slot_pt`` apart:
    smaller as they crowd, but no smaller than a grouped chart's value labels (``VALUE_PT``
    less 1.5) while the rows leave room for them. 25 rows at the old 10 pt were 7 px tall on
    a phone, under the 11.5 pt every other chart writes its smallest numbers in."""
    if rows <= 10:
        return TICK_PT + 1
    if rows <= 20:
        return TICK_PT - 1
    return max(TICK_PT - 3.5, min(VALUE_PT - 1.5, round(slot_pt * ROW_FILL * 2) / 2))


def _label_pad(span: float, share: float, sides: int) -> float:
    """The data width beyond the bars' ends that makes a label ``share`` of the axes on each
    padded side: with bars both ways, both pads widen the axes, and a pad worked out for one
    side let a falling day's label run into its date ("Fri 2024-08-02−3.85%")."""
    return span * share / (1 - max(sides, 1) * share)


def headline_columns(result: Result, table: pd.DataFrame, time_col: str) -> list[str]:
    """The columns a table's headline names, those its chart draws: the ranked one of a
    short list, else, over time, those in the panel under the price, else the close. The
    first column selected was a raw ``open``: "open last: 6,351" over a chart of the move."""
    ranked = _ranked_column(result, table)
    if ranked is not None:
        return [ranked]
    _, lower = _timeline_columns(result, table, time_col)
    # A curve's answer is where it ends: "pnl = −28.00 points · equity = 3,637.50 points"
    # led an equity curve with its last day's pnl.
    running = running_columns(result, lower)
    if running:
        return [c for c in lower if c in running]
    if lower:
        return lower
    return ["close"] if "close" in table.columns and is_number(table["close"]) else []


def plain_candles(result: Result, table: pd.DataFrame, time_col: str) -> bool:
    """Whether the chart is the bars' candles with at most their own volume under them, the
    query having made no column: "show me 2025-11-28 in 5-minute bars". Its answer is the
    span the candles draw (its high, low and close), not the last bar's volume ("volume
    last: 2,504 contracts (2025-11-28 13:10)"). Bars of a day or shorter, whose span is
    their dates: a weekly bar's label is its first day, not its last."""
    if timeframe_spec(timeframe(result)).calendar:
        return False
    if not all(c in table.columns and is_number(table[c]) for c in PRICE_COLUMNS):
        return False
    if rows_picked(result) or len(table) > MAX_CANDLES:
        return False
    overlays, lower = _timeline_columns(result, table, time_col)
    if overlays or not set(lower) <= {"volume"}:
        return False
    lineage = Lineage(result.query)
    return all(lineage.definition(c) is None for c in result.focus_columns)


def _timeline_columns(
    result: Result, table: pd.DataFrame, time_col: str
) -> tuple[list[str], list[str]]:
    """The query's columns a timeline draws: the price-like ones on the price, and those in
    the panel under it (a few in the unit of the first together, NQ's and ES's returns)."""
    has_close = "close" in table.columns and is_number(table["close"])
    focus = [c for c in result.focus_columns if c in table.columns and c != time_col]
    numeric = [c for c in focus if is_number(table[c]) and c not in PRICE_COLUMNS]
    labels = calendar_labels(result, numeric)  # the row's year or hour names it, no series
    numeric = [c for c in numeric if c not in labels]
    overlays = [c for c in numeric if has_close and price_like(table[c], table["close"])]
    lower = [c for c in numeric if c not in overlays]
    # A column the query made goes before another market's plain price: with "ratio":
    # "close / es_close" selected beside es_close, es_close was drawn and headlined, and the
    # ratio asked for was not drawn at all.
    lineage = Lineage(result.query)
    made = [c for c in lower if lineage.definition(c) is not None]
    if made:
        lower = [c for c in lower if c in made or unit(c, result) != PRICE]
    # One value on every row (a then.map's "cur": "last(range)", the yardstick of "since
    # when") is no series: drawn, it was three equal bars where the weeks' ranges differ.
    # Then the table's own columns stand in for it: the range it is compared with.
    if len(table) > 1 and lower:
        varying = [c for c in lower if table[c].nunique(dropna=True) > 1]
        others = [
            c
            for c in table.columns
            if c not in (time_col, *lower, *overlays, *PRICE_COLUMNS)
            and is_number(table[c])
            and table[c].nunique(dropna=True) > 1
        ]
        lower = varying or others or lower
    if not has_close and not lower:
        # The prices asked for without a close (RTH's monthly high and low): drawn together;
        # the first alone had left the low asked for out (p47g q25).
        prices = [c for c in focus if c in PRICE_COLUMNS and is_number(table[c])]
        if len(prices) > 1:
            return overlays, prices[:MAX_TOGETHER]
        first = first_numeric(table, [])
        return overlays, [first] if first is not None else []
    if not lower:
        return overlays, []
    first_unit = unit(lower[0], result)
    shared = [c for c in lower if first_unit and _one_axis(unit(c, result), first_unit)]
    return overlays, shared[:MAX_TOGETHER] if len(shared) > 1 else lower[:1]


def _one_axis(a: str | None, b: str) -> bool:
    """Whether columns of units ``a`` and ``b`` are drawn on one axis: the same unit, or
    percents with a difference of them in percentage points. NQ's and ES's monthly returns
    were drawn and "rel": "nq_ret - es_ret", the relative strength asked for, left to the
    CSV (p37a #16)."""
    return a == b or {a, b} == {PERCENT, PERCENT_POINTS}


def _draw_timeline(
    fig: Figure, result: Result, table: pd.DataFrame, time_col: str, words: Words
) -> bool:
    """Price (or the query's main column) over time, with the query's columns beside it."""
    table = in_time_order(table, time_col)  # newest first is still drawn left to right
    x = mdates.date2num(table[time_col].to_numpy())
    has_close = "close" in table.columns and is_number(table["close"])
    focus = [c for c in result.focus_columns if c in table.columns and c != time_col]
    flags = [c for c in focus if pd.api.types.is_bool_dtype(table[c])]
    overlays, lower = _timeline_columns(result, table, time_col)
    if not has_close and not lower:
        return False
    consecutive = not rows_picked(result)
    step = bar_step(x, timeframe(result))
    open_at = open_bar_row(table, result)

    names = bar_labels(table, result)
    running = running_columns(result, lower)
    # Prices and ratios of two prices are levels: lines on an axis fitted to them.
    levels = frozenset(c for c in lower if unit(c, result) == PRICE or price_ratio(c, result.query))
    # Weeks with a holiday in them, hatched when their values are bars.
    short = short_week_rows(names, result) if lower else {}
    if short and not as_bars(table[lower], consecutive=consecutive, running=running, levels=levels):
        short = {}
    # Room under the dates for the notes on the hollow bar and on the hatched ones, their
    # lines as a grouped chart's.
    notes = [_open_bar_note(result, words)] if open_at is not None else []
    if short:
        notes.append(short_weeks_note(list(short.values()), words))
    notes += unjudged_notes(result, words)
    # Never dropped without a word: es_close beside the ratio of NQ to it, a second unit.
    drawn = {*overlays, *lower, *flags, *calendar_labels(result, focus)}
    left_out = [
        c for c in focus if c not in drawn and c not in PRICE_COLUMNS and is_number(table[c])
    ]
    if left_out:
        count = len(left_out)
        notes.append(
            words(
                "left_out", plural_of=count, count=count, names=csv_names(left_out, result, words)
            )
        )
    note = "\n".join(fitted_notes(fig, notes)) if notes else None
    lines = note.count("\n") + 1 if note is not None else 0
    bottom = PLOT_BOTTOM + lines * FOOTER_PT * 1.4 / (fig.get_figheight() * 72)
    price_ax = lower_ax = None
    if has_close and lower:
        price_ax = plot_axes(fig, bottom=PANEL_SPLIT)
        lower_ax = plot_axes(fig, bottom=bottom, top=PANEL_SPLIT - PANEL_GAP, sharex=price_ax)
        price_ax.tick_params(axis="x", labelbottom=False)
    elif has_close:
        price_ax = plot_axes(fig, bottom=bottom)
    else:
        lower_ax = plot_axes(fig, bottom=bottom)

    if price_ax is not None:
        draw_price(
            price_ax, x, table, consecutive=consecutive, step=step, words=words, hollow=open_at
        )
        draw_overlays(price_ax, x, table, overlays, flags, step=step)
        value_label(price_ax, words("price"))
    if lower_ax is not None:
        first_unit = unit(lower[0], result)
        draw_series(
            lower_ax,
            x,
            table[lower],
            consecutive=consecutive,
            step=step,
            words=words,
            value_unit=first_unit,
            hollow=open_at,
            running=running,
            hatched=sorted(short),
            levels=levels,
        )
        value_label(lower_ax, axis_text(lower[0], result, words, lower[1:]))
    bottom_ax = lower_ax if lower_ax is not None else price_ax
    assert bottom_ax is not None
    if names is None:
        date_axis(bottom_ax, x, step, words)
    else:
        label_axis(bottom_ax, x, names, step, words)
    if note is not None:
        bottom_ax.set_xlabel(note, fontsize=FOOTER_PT, color=MUTED, labelpad=6)
    return True


def _open_bar_note(result: Result, words: Words) -> str:
    """What the hollow bar is: the data's last week (month, year) not over yet, and the days
    it covers, in the words a grouped chart notes its open year with."""
    assert result.metadata is not None and result.metadata.open_bar is not None
    bar = result.metadata.open_bar
    return words("open_bar_note", label=bar.label, first=bar.first, last=bar.last)
