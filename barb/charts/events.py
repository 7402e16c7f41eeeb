"""A few bars a where picked (golden and death crosses, RSI exits, hourly breakouts): the
period's close as a line, each picked bar a marker on it, coloured by the table's yes/no or
text column (golden or not) with a legend; the headline counts them (days, weeks, bars).

Drawn as a series of their own, ten crosses over six years were lines joining the picked
days, read as a price history, and "close last: 20,021 (2025-10-16)" as today's price.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

from barb.charts.axes import headroom, legend, plot_axes, value_label
from barb.charts.columns import dated_by_label, floats, is_number, time_column, timeframe
from barb.charts.kinds import rows_picked
from barb.charts.line_points import decimate
from barb.charts.style import ACCENT, HIGH, LEGEND_ROW_PX, NEUTRAL, OVERLAY_COLORS
from barb.charts.time_axis import bar_step, date_axis
from barb.charts.value_text import TickFormatter, format_value
from barb.charts.words import ENGLISH, Words
from barb.result import Result

MAX_EVENTS = 60
MAX_KINDS = 4  # colours a text column is drawn in; more kinds are one colour
# Bars that are calendar periods: a few of them a where picked are counted, as days are.
PERIOD_BARS = frozenset({"weekly", "monthly", "quarterly", "yearly"})
KIND_COLORS = (HIGH, ACCENT, *OVERLAY_COLORS[2:])


@dataclass(frozen=True)
class Events:
    """The picked days (``when``), the period's closes behind them, and what kind each is."""

    when: pd.DatetimeIndex
    closes: pd.DataFrame  # timestamp, close: every day of the period
    kinds: list[str] | None  # each day's kind, in the table's order
    names: list[str]  # the kinds in the legend's order
    flag: str | None = None  # the yes/no column the kinds are, if they are


def read_events(result: Result, words: Words = ENGLISH) -> Events | None:
    """The picked bars when the result is a few bars a where picked and the engine kept the
    period's closes for them (``barb.stages.MAX_EVENT_CLOSES``); else None."""
    table, rows = result.table, result.source_rows
    if table is None or rows is None or result.summary is None:
        return None
    if result.summary.type != "table" or not rows_picked(result) or result.query.get("sort"):
        return None
    if not 2 <= len(table) <= MAX_EVENTS:
        return None
    rows_time, table_time = time_column(rows), time_column(table)
    if table_time is None:
        dated = dated_by_label(table, result)
        table, table_time = (dated, "timestamp") if dated is not None else (table, None)
    if rows_time is None or table_time is None or "close" not in rows.columns:
        return None
    closes = pd.DataFrame(
        {"timestamp": pd.to_datetime(rows[rows_time]), "close": floats(rows["close"])}
    )
    kinds, names, flag = _kinds(table, result, words)
    # Each pick at its bar among the closes: a month is labelled by its 1st (2022-05), its
    # bar by its first trading date (2022-05-02), where May's RSI > 70 had no marker.
    stamps = pd.DatetimeIndex(closes["timestamp"])
    at = stamps.searchsorted(pd.DatetimeIndex(table[table_time]))
    when = stamps[np.minimum(at, len(stamps) - 1)]
    return Events(when, closes, kinds, names, flag)


def _kinds(
    table: pd.DataFrame, result: Result, words: Words
) -> tuple[list[str] | None, list[str], str | None]:
    """Each day's kind from the query's first yes/no column ("golden: yes", "golden: no",
    and the column's name) or text column of a few values (``kind``)."""
    for name in result.focus_columns:
        if name not in table.columns or is_number(table[name]):
            continue
        column = table[name]
        known = column.dropna()
        if pd.api.types.is_bool_dtype(column) or (
            len(known) and all(isinstance(v, (bool, np.bool_)) for v in known)
        ):
            # An unknown day (next() past the data's end) is a kind of its own, "up: n/a".
            texts = [words.flag(name, None if pd.isna(v) else bool(v)) for v in column]
            present = set(texts)
            names = [t for t in (words.flag(name, v) for v in (True, False, None)) if t in present]
            return texts, names, name
        if pd.api.types.is_datetime64_any_dtype(column):
            continue
        texts = [str(v) for v in column]
        names = list(dict.fromkeys(texts))
        if len(names) <= MAX_KINDS:
            return texts, names, None
    return None, [], None


def draw_events(fig: Figure, result: Result, events: Events, words: Words = ENGLISH) -> bool:
    closes = events.closes
    x = mdates.date2num(closes["timestamp"].to_numpy())
    close = closes["close"].to_numpy(dtype="float64")
    ax = plot_axes(fig)
    ax.plot(*decimate(x, close), color=NEUTRAL, linewidth=1.6, zorder=2)
    at = closes.set_index("timestamp")["close"]
    event_close = at.reindex(events.when).to_numpy(dtype="float64")
    event_x = mdates.date2num(events.when.to_numpy())
    handles: list[PathCollection] = []
    groups = [(None, np.ones(len(event_x), dtype=bool), ACCENT)]
    if events.kinds is not None:
        kinds = np.array(events.kinds)
        groups = [
            (name, kinds == name, KIND_COLORS[i % len(KIND_COLORS)])
            for i, name in enumerate(events.names)
        ]
    for name, mask, color in groups:
        dots = ax.scatter(
            event_x[mask],
            event_close[mask],
            s=90,
            color=color,
            edgecolor="white",
            linewidth=1.2,
            zorder=3,
        )
        if name is not None:
            dots.set_label(f"{name} ({format_value(int(mask.sum()), words=words)})")
            handles.append(dots)
    ax.yaxis.set_major_formatter(TickFormatter(words))
    headroom(ax, close, px=LEGEND_ROW_PX * len(handles) + 20, floor=False)
    value_label(ax, words("price"))
    date_axis(ax, x, bar_step(x, timeframe(result)), words)
    legend(ax, handles, loc="upper left")
    return True


def events_headline(result: Result, events: Events, words: Words) -> str:
    """``10 days: death 4, golden 6``; of a yes/no column ``10 days, golden: yes 5, no 5``."""
    return _counted(result, len(events.when), events.kinds, events.names, events.flag, words)


def picked_periods_headline(result: Result, words: Words = ENGLISH) -> str | None:
    """The headline of a few weeks, months, quarters or years a where picked, as a few
    picked days have it: ``5 weeks, up: yes 3, no 2``. Else None: the five weekly MACD crosses
    of 2025 were headlined "hist last: 43.0 points (2025-08-04)", the last cross's value,
    beside "14 days" of the daily ones."""
    table, summary = result.table, result.summary
    if table is None or summary is None or summary.type != "table":
        return None
    if not rows_picked(result) or result.query.get("sort"):
        return None
    if timeframe(result) not in PERIOD_BARS or not 2 <= len(table) <= MAX_EVENTS:
        return None
    kinds, names, flag = _kinds(table, result, words)
    return _counted(result, len(table), kinds, names, flag, words)


def _counted(
    result: Result,
    count: int,
    kinds: list[str] | None,
    names: list[str],
    flag: str | None,
    words: Words,
) -> str:
    rows = words.rows(timeframe(result), count=count)
    text = words("counted", count=format_value(count, words=words), rows=rows)
    if kinds is None or len(names) < 2:
        return text
    if flag is not None:  # the column named once: "golden: yes 5, no 5"
        answers = {
            words.flag(flag, True): words("flag.yes"),
            words.flag(flag, False): words("flag.no"),
            words.flag(flag, None): words("no_value"),
        }
        parts = [f"{answers[n]} {format_value(kinds.count(n), words=words)}" for n in names]
        return f"{text}, {flag}: {', '.join(parts)}"
    parts = [f"{name} {format_value(kinds.count(name), words=words)}" for name in names]
    return f"{text}: {', '.join(parts)}"
