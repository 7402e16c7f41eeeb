"""The session's last intraday bar when it is shorter than the rest: bars start at the
session's open, so NQ's hourly RTH bars (09:30-17:00) end in a half-hour bar, 16:30-17:00,
CL's (09:00-14:30) in 14:00-14:30, and ETH's 4-hour bars (18:00-17:00) in 14:00-17:00, three
hours. Grouped by its time of day, on the bars or on times a second stage took from them
(``arg_min(time(), low) as low_time``, then ``group_by low_time``), that bar's group is ranked
against full ones: the "least volume" or "least often" hour by construction. The engine warns
the model, and the chart marks the group; both find it here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from barb.instruments import format_clock, parse_clock
from barb.lineage import Lineage, called_key_names, key_expressions
from barb.ranking import in_sort_order, order_text
from barb.script import ast
from barb.script.query import SortKey
from barb.summary_text import value_text
from barb.time_keys import CARRIES_VALUE, MINUTES_PER_DAY, clock_kind, minutes_of_day
from barb.time_zones import zone_name
from barb.timeframes import TIMEFRAMES


@dataclass(frozen=True)
class ShortBar:
    """The session's short last bar: the minute of the day it opens at (990), its length
    and the other bars' in minutes, and the session's end as its hours write it."""

    start: int
    minutes: int
    step: int
    end: str
    # Minutes of the day at which the session's full bars open.
    full_starts: frozenset[int]
    # The zone whose clock a window's hours are on ('08:00-16:30 Europe/London'); None for
    # the exchange's. Its bars' times are read on that clock only: time('London').
    zone: str | None = None

    @property
    def label(self) -> str:
        """``16:30``."""
        return f"{self.start // 60:02d}:{self.start % 60:02d}"

    @property
    def span(self) -> str:
        """``16:30-17:00``; ``16:00-16:30 Europe/London`` on another zone's clock."""
        return f"{self.label}-{self.end}" + (f" {self.zone}" if self.zone else "")


def session_short_bar(
    timeframe: str, hours: str | None, zone: str | None = None
) -> ShortBar | None:
    """The short last bar of ``timeframe``'s bars over a session of ``hours``
    (``"09:30-17:00"``, a named session's or a window's: 09:45-12:00's hourly bars end in
    11:45-12:00), on ``zone``'s clock for a window written on it; None for daily and longer
    bars, or bars that fill the session."""
    found = TIMEFRAMES.get(timeframe)
    span = _session(hours)
    if found is None or found.minutes is None or span is None:
        return None
    open_, length, end = span
    step = found.minutes
    short = length % step
    if not short:
        return None
    start = (open_ + length - short) % MINUTES_PER_DAY
    starts = frozenset((open_ + k * step) % MINUTES_PER_DAY for k in range(length // step))
    return ShortBar(start, short, step, end, starts, zone)


def short_bar_rows(
    short: ShortBar, table: pd.DataFrame, key: str, query: Mapping[str, Any]
) -> np.ndarray | None:
    """Which rows of ``table`` are the short bar's group by ``key``; None when ``key`` holds
    no time of day: ``time()`` (its text, "16:30", also taken by a first stage's arg_max or
    first), a minute of the day, or an hour of the day that holds no other bar (RTH's
    hour 16, the 16:30 bar alone)."""
    if key not in table.columns:
        return None
    values = table[key]
    on_its_clock = _is_time_text(key, query, short.zone)
    if short.zone is not None and not on_its_clock:  # only time('London') names its bars
        return None
    if on_its_clock:
        # Each distinct time read once: a day by time holds thousands of rows of a few times.
        times = pd.Series(values.dropna().unique())
        minutes = minutes_of_day(key, times, query)
        if minutes is None:
            return None
        return values.isin(times[minutes == short.start]).to_numpy()
    kind = clock_kind(key, values, dict(query))
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype="float64")
    if kind == "minute":
        return np.mod(numbers, MINUTES_PER_DAY) == short.start
    if kind == "hour" and not any(s // 60 == short.start // 60 for s in short.full_starts):
        return numbers == short.start // 60
    return None


def short_bar_caveat(
    timeframe: str,
    hours: str | None,
    table: pd.DataFrame | None,
    by: list[str],
    query: Mapping[str, Any],
    groups: pd.DataFrame | None = None,
    sort: Sequence[SortKey] = (),
    limit: int | None = None,
    counted: Sequence[str] = (),
    *,
    zone: str | None = None,
) -> list[str]:
    """The warning when a group of the result's ``table`` by a time of day (a key of ``by``)
    is the short bar's, beside groups of full bars: "The 16:30 bar is half an hour
    (16:30-17:00), the others an hour: …". Asked which hour has the least volume, the model
    answered 16:30. When the stage's ``sort`` ranks it first among all its ``groups``
    (before the limit), the first full-length group is named too; unsorted, so is the
    full-length one at each end the short bar's group holds in a column, but a count of
    the bars themselves (``counted``), which their length does not make smaller. A window
    on another ``zone``'s clock has its short bar there."""
    short = session_short_bar(timeframe, hours, zone)
    if short is None or table is None or not len(table):
        return []
    every = groups if groups is not None else table
    for key in by:
        rows = short_bar_rows(short, table, key, query)
        if rows is None or not rows.any():
            continue
        # Beside full bars: among all the groups, when a limit kept the short one alone.
        beside = short_bar_rows(short, every, key, query)
        if beside is not None and not beside.all():
            return [
                f"The {short.label} bar is {length_text(short.minutes)} "
                f"({short.span}), the others {length_text(short.step)}: its sums, "
                "counts and ranges are not "
                "comparable with theirs."
                + (
                    _ranked(short, key, by, every, sort, query, limit)
                    or _extremes(short, key, by, every, query, counted)
                )
            ]
    return []


def short_bar_row_caveat(
    timeframe: str, hours: str | None, table: pd.DataFrame | None, zone: str | None = None
) -> list[str]:
    """The warning when the short bar is among a table's rows of bars: "the last hour of
    today's session" as RTH 1h last_1_bars gave the 16:30 bar, half an hour (NQ range 23,
    volume 1,772, where 16:00-17:00 held 37.25 and 5,824), and nothing said so. Names its
    length and the window session that gives the session's last full bar. Rows are listed
    at the exchange's times: a window on another ``zone``'s clock is not looked at."""
    short = session_short_bar(timeframe, hours)
    if (
        short is None
        or zone is not None
        or table is None
        or "timestamp" not in table.columns
        or not len(table)
    ):
        return []
    stamps = pd.to_datetime(table["timestamp"], errors="coerce")
    if not ((stamps.dt.hour * 60 + stamps.dt.minute) == short.start).any():
        return []
    start = format_clock((short.start + short.minutes - short.step) % MINUTES_PER_DAY)
    full = length_text(short.step)
    return [
        f"The {short.label} bar is {length_text(short.minutes)} ({short.span}), the "
        f"others {full}: its range, volume and move cover {short.minutes} minutes, not "
        f"{short.step}. The session's last "
        f'{full.removeprefix("an ")}, {start}-{short.end}: "from": "daily", "session": '
        f'"{start}-{short.end}".'
    ]


def last_full_window_text(timeframe: str, hours: str | None, zone: str | None = None) -> str:
    """' The session's last hour, 15:00-16:00: "from": "daily", "session": "15:00-16:00".'
    when ``timeframe``'s bars over ``hours`` end in a short bar; else "": the last hour a
    trader asks about is not the bar that holds the close."""
    short = session_short_bar(timeframe, hours, zone)
    if short is None or zone is not None:
        return ""
    start = format_clock((short.start + short.minutes - short.step) % MINUTES_PER_DAY)
    full = length_text(short.step).removeprefix("an ")
    window = f"{start}-{short.end}"
    return f' The session\'s last {full}, {window}: "from": "daily", "session": "{window}".'


def _ranked(
    short: ShortBar,
    key: str,
    by: list[str],
    groups: pd.DataFrame,
    sort: Sequence[SortKey],
    query: Mapping[str, Any],
    limit: int | None,
) -> str:
    """' Sorted by vol ascending, it ranks first: the first full-length one is 12:30 (vol
    1,234).' when the sort by a value puts the short bar's group at the top of the ranking
    (the answer to "which hour has the least volume") or at its bottom, listed."""
    if not sort or sort[0].column in by or any(k.column not in groups for k in sort):
        return ""
    ranked = in_sort_order(groups, sort).reset_index(drop=True)
    rows = short_bar_rows(short, ranked, key, query)
    if rows is None or rows.all():
        return ""
    full = np.flatnonzero(~rows)
    if rows[0]:
        place, at = "first", int(full[0])
    elif rows[-1] and (limit is None or limit >= len(ranked)):  # its last row is listed too
        place, at = "last", int(full[-1])
    else:
        return ""
    row = ranked.iloc[at]
    # A time of day reads alone ("12:30"), a number with its key's name ("hour 12").
    named = " ".join(
        value_text(row[k]) if isinstance(row[k], str) else f"{k} {value_text(row[k])}" for k in by
    )
    order = order_text(sort)
    return (
        f" Sorted by {order}, it ranks {place}: the {place} full-length one is {named} "
        f"({sort[0].column} {value_text(row[sort[0].column])})."
    )


def _extremes(
    short: ShortBar,
    key: str,
    by: list[str],
    groups: pd.DataFrame,
    query: Mapping[str, Any],
    counted: Sequence[str] = (),
) -> str:
    """' Its mean_range is the lowest of the groups: the lowest full-length one is 12:30
    (23.24).' for each column whose highest or lowest group (as the chart heads them) is the
    short bar's alone: ES's 2025 "range by hour" headed "lowest 16:30 (30 min) 6.68", where
    the quietest hour a trader takes away is 12:30, 23.24 (p47c E)."""
    rows = short_bar_rows(short, groups, key, query)
    if rows is None or rows.all() or not rows.any():
        return ""
    said = []
    for column in groups.columns:
        if column in by or column in counted:
            continue
        if not pd.api.types.is_numeric_dtype(groups[column]):
            continue
        if pd.api.types.is_bool_dtype(groups[column]):
            continue
        values = groups[column].to_numpy(dtype=np.float64)
        full = np.flatnonzero(~rows & np.isfinite(values))
        if not len(full):
            continue
        mine = values[rows]
        for side, pick, beyond in (
            ("lowest", np.argmin, np.less),
            ("highest", np.argmax, np.greater),
        ):
            at = int(full[pick(values[full])])
            if not np.all(beyond(mine, values[at])):
                continue
            row = groups.iloc[at]
            named = " ".join(
                value_text(row[k]) if isinstance(row[k], str) else f"{k} {value_text(row[k])}"
                for k in by
            )
            said.append(
                f"its {column} is the {side}: the {side} full-length one is {named} "
                f"({value_text(values[at])})"
            )
    if not said:
        return ""
    text = "; ".join(said)
    return f" {text[0].upper()}{text[1:]}."


def length_text(minutes: int) -> str:
    """``half an hour``, ``an hour``, ``3 hours``, ``90 minutes``."""
    if minutes == 30:
        return "half an hour"
    if minutes == 60:
        return "an hour"
    if minutes % 60 == 0:
        return f"{minutes // 60} hours"
    return f"{minutes} minutes"


def _is_time_text(key: str, query: Mapping[str, Any], zone: str | None = None) -> bool:
    """Whether ``key`` holds ``time()``'s text: the key ``time()`` made, or a column whose
    values are ``time()``'s, through the map and the aggregates that return one of them;
    with ``zone``, ``time('London')``'s text on that zone's clock."""
    if zone is None and key == "time" and key in called_key_names(query):
        return True
    source = Lineage(query).values_of(key, CARRIES_VALUE)
    if source is None:  # a key the engine named after its call: time('London') → time_london
        source = key_expressions(query).get(key)
    if not (isinstance(source, ast.Call) and source.name.lower() == "time"):
        return False
    if zone is None:
        return not source.args
    written = ast.literal_value(source.args[0]) if len(source.args) == 1 else None
    return isinstance(written, str) and zone_name(written) == zone


def _session(hours: str | None) -> tuple[int, int, str] | None:
    """The session's open (a minute of the day), its length in minutes and its end text."""
    try:
        first, last = str(hours).split("-")
        open_, close = parse_clock(first.strip()), parse_clock(last.strip())
    except (AttributeError, ValueError):
        return None
    length = (close - open_) % MINUTES_PER_DAY or MINUTES_PER_DAY
    return open_, length, last.strip()
