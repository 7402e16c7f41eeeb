"""A table of one row, read as its values: a card with the row's day on top and each number
of the row on a line of its own, its name on the left and its value, with the unit, on the
right; a condition's value (``broke_down``) reads yes or no.

Drawn over time, one row was a price panel with nothing in it (a line needs two points) and
a single bar whose axis ticked 0.6, 1.2, 1.8 days; the values themselves are the answer.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from barb.charts.axes import plot_axes
from barb.charts.columns import (
    bar_labels,
    column_name,
    csv_names,
    is_number,
    open_bar_row,
    time_column,
    timeframe,
    unit,
)
from barb.charts.header import wrap
from barb.charts.short_weeks import short_week_days, short_week_rows
from barb.charts.style import FOOTER_PT, GRID, INK, LABEL_PT, MARGIN_X, MUTED, TITLE_PT
from barb.charts.tick_values import unit_text
from barb.charts.time_of_day import part_text
from barb.charts.value_text import date_text, number_text, with_unit
from barb.charts.words import ENGLISH, Words
from barb.i18n import N_
from barb.result import Result

VALUE_PT = TITLE_PT + 3  # the values are the answer: as large as the headline, or larger
MAX_CARD_VALUES = 8  # the row's numbers shown, in the order of the table's columns
LINE_HEIGHT = 0.115  # of the plot's height, a name and its value
LABEL_COLUMNS = frozenset({"date", "timestamp", "trading_date"})


def card_values(table: pd.DataFrame, result: Result) -> list[str]:
    """The columns of the row to show: its numbers and its true/false values (broke_up,
    broke_down: "did it break the opening range" was the question, and the card showed only
    the range), the columns the query asked for first."""
    return _card_columns(table, result)[:MAX_CARD_VALUES]


def _card_columns(table: pd.DataFrame, result: Result) -> list[str]:
    values = [
        c
        for c in table.columns
        if c not in LABEL_COLUMNS and (is_number(table[c]) or _is_flag(table[c]))
    ]
    asked = [c for c in result.focus_columns if c in values]
    return list(dict.fromkeys([*asked, *values]))


def value_text(table: pd.DataFrame, column: str, result: Result, words: Words) -> str:
    """``25,850.75`` · ``2 days`` · ``44.5%`` · ``yes``: the row's value of ``column`` with
    its unit; a price, or points, at the instrument's tick (``tick_values``); a year as a
    label; a condition yes or no."""
    value = table[column].iloc[0]
    if _is_flag(table[column]):
        if value is None or value is pd.NA or value != value:
            return words("no_value")
        return words("flag.yes") if value else words("flag.no")
    placed = part_text(column, value, result, words)
    return placed if placed is not None else unit_text(value, unit(column, result), result, words)


def _is_flag(column: pd.Series) -> bool:
    """True/false values: a bool column, or one of bools with gaps (object)."""
    if pd.api.types.is_bool_dtype(column):
        return True
    if column.dtype != object:
        return False
    present = column.dropna()
    return bool(len(present)) and all(isinstance(v, (bool, np.bool_)) for v in present)


# What the card says of the data's unfinished last bar, by its timeframe.
_SO_FAR = {
    "weekly": N_("so_far.weekly"),
    "monthly": N_("so_far.monthly"),
    "quarterly": N_("so_far.quarterly"),
    "yearly": N_("so_far.yearly"),
}


def _row_date(table: pd.DataFrame, time_col: str, result: Result, words: Words) -> str:
    """The row's day (``Mon 2026-01-05``); of the data's unfinished last bar, the days it
    covers so far and, on a line of its own, how many of its trading days that is (``Week
    so far: 2026-01-05 — 2026-01-07``, ``3 of 5 days``): the week of 2026-01-05 read
    "-0.26%" as if it were a whole week, and its dates alone left the reader to count how
    much of it was still to come."""
    key = _SO_FAR.get(timeframe(result))
    if key is not None and open_bar_row(table, result) == 0:
        assert result.metadata is not None and result.metadata.open_bar is not None
        bar = result.metadata.open_bar
        dates = words(key, first=bar.first, last=bar.last)
        if bar.calendar_days is None:
            return dates
        total = bar.calendar_days
        rows = words.of_rows("daily", total)
        held = words("so_far_days", days=bar.days, total=total, rows=rows)
        return f"{dates}\n{held}"
    return date_text(table[time_col].iloc[0], weekday=True, words=words)


def _card_head(table: pd.DataFrame, result: Result, words: Words) -> list[str]:
    """What stands above the values: the row's day, from its time or its bar label, and,
    when it is one row of many ("sort": "timestamp desc", "limit": 1 over all history),
    which one of how many. Without them the header's "2008-01-02 — 2026-01-07" and the
    footer's "4,649 of 4,649" made the row's SMAs read as whole-history figures."""
    time_col = time_column(table)
    names = bar_labels(table, result)
    if time_col is not None:
        date: str | None = _row_date(table, time_col, result, words)
    elif names is not None and names[0] is not None:
        date = _label_date(names[0], result, words)
    else:
        date = None
    head = [] if date is None else [date]
    for week in short_week_rows(names, result).values():  # a week with a holiday in it
        head.append(short_week_days(week, words))
    meta = result.metadata
    matched = meta.rows_matched if meta is not None else 0
    if matched <= 1:
        return head
    tf = timeframe(result)
    rows = words.of_rows(tf, matched) or words.rows(tf)
    return [*head, words("card_one_of", total=number_text(matched, 0, words), rows=rows)]


def _label_date(label: str, result: Result, words: Words) -> str:
    """A daily bar's label with its weekday (``Wed 2026-01-07``); a longer bar's as the
    table names it (a week by its first trading date, ``2026-01``)."""
    if timeframe(result) == "daily":
        try:
            return date_text(pd.Timestamp(label), weekday=True, words=words)
        except ValueError:
            return label
    return label


def draw_one_row(fig: Figure, result: Result, words: Words = ENGLISH) -> bool:
    table = result.table
    if table is None or len(table) != 1:
        return False
    columns = card_values(table, result)
    if not columns:
        return False
    # Across the figure (no tick labels to leave room for), in the middle of the plot's height.
    ax = plot_axes(fig, left=MARGIN_X, right=1 - MARGIN_X * 2)
    ax.set_axis_off()
    ax.set(xlim=(0, 1), ylim=(0, 1))
    head = _card_head(table, result, words)
    # The head's room: 0.7 of a value's line, and 0.45 more for each line it runs to.
    lines = sum(1 + text.count("\n") for text in head)
    date_height = 0.0 if not head else 0.7 + 0.45 * (lines - 1)
    height = LINE_HEIGHT * (len(columns) + date_height)
    top = min(0.97, 0.5 + height / 2)
    y = top
    for text in head:  # each its own text: the day, then which row of how many
        ax.text(0, y, text, fontsize=LABEL_PT, color=MUTED, va="top", linespacing=1.3)
        y -= LINE_HEIGHT * 0.45 * (1 + text.count("\n"))
    top -= LINE_HEIGHT * date_height
    for i, column in enumerate(columns):
        y = top - (i + 0.5) * LINE_HEIGHT
        name = column_name(column, result, words)
        ax.text(0, y, name, fontsize=LABEL_PT + 2, color=MUTED, va="center")
        text = value_text(table, column, result, words)
        ax.text(
            1, y, text, fontsize=VALUE_PT, fontweight="bold", color=INK, ha="right", va="center"
        )
        ax.axhline(y - LINE_HEIGHT / 2, color=GRID, linewidth=1.2)
    notes = _percent_rank_notes(columns, result, words)
    left_out = _card_columns(table, result)[len(columns) :]
    if left_out:  # never dropped without a word
        count = len(left_out)
        notes.append(
            words(
                "left_out", plural_of=count, count=count, names=csv_names(left_out, result, words)
            )
        )
    room_px = ax.get_position().width * fig.get_figwidth() * fig.dpi
    lines = [line for note in notes for line in wrap(fig, note, FOOTER_PT, 2, room_px=room_px)]
    if lines:
        y = top - len(columns) * LINE_HEIGHT - 0.03
        ax.text(0, y, "\n".join(lines), fontsize=FOOTER_PT, color=MUTED, va="top")
    return True


def _percent_rank_notes(columns: list[str], result: Result, words: Words) -> list[str]:
    """A line under the card for each rank of a distance in points over blended price
    levels, with the rank in percent of the price the warning gives (``Metadata.
    percent_ranks``): "atr_rank in % of the price: percentile rank 1.95". NQ's ATR(14)
    ranked 66.93 in points over a year the price ran from 16,234 to 25,851, and 1.95 in
    percent: the card said only the first, and the warning reached the model alone."""
    meta = result.metadata
    ranks = (meta.percent_ranks if meta is not None else None) or {}
    return [
        words(
            "percent_rank_note",
            name=column_name(column, result, words),
            # at the warning's two decimals: "1.95", not the card's "1.946"
            value=with_unit(
                number_text(ranks[column], 2, words), unit(column, result), words, ranks[column]
            ),
        )
        for column in columns
        if column in ranks
    ]
