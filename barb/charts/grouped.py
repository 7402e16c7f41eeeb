"""A grouped result: one bar per group, the highest and lowest in their own colours; each
aggregate of the select in its own panel, stacked (the figure is portrait); hundreds of
groups (one per date, say) become a line with the extremes as dots.

A count per group shows its empty groups as zero: a year, weekday, hour or minute of the
day in which nothing matched is missing from the engine's table, and a chart without it
hides exactly the answer "never". Times of day read ``09:30``, not ``570``.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from barb.charts.axes import (
    MAX_VALUE_LABELS,
    category_ticks,
    headroom,
    label_fit,
    legend,
    plot_axes,
    value_label,
    whole_number_ticks,
)
from barb.charts.bars import (
    SMALLEST_LEVEL_PT,
    draw_bars,
    label_bars,
    level_size,
    mark_zero_bars,
    upright_label_px,
    widest_label_pt,
)
from barb.charts.block_axis import NAME_OFFSET_PT, Blocks, block_ticks, blocks_of
from barb.charts.buckets import Buckets, number_line, numeric_buckets
from barb.charts.columns import (
    axis_text,
    csv_names,
    dated_by_label,
    floats,
    is_number,
    keys_text,
    time_column,
    unit,
    zoned,
)
from barb.charts.date_groups import date_group_ticks, set_date_group_ticks
from barb.charts.header import unjudged_notes, wrap
from barb.charts.kinds import sorted_by_time
from barb.charts.line_points import decimate
from barb.charts.many_groups import Thinned, thin_groups, tied
from barb.charts.run_labels import run_start_labels
from barb.charts.short_bars import ShortBar, short_bar
from barb.charts.short_weeks import hatch_bars, short_week_rows, short_weeks_note, week_labels
from barb.charts.side_by_side import SideBySide, series_extremes, side_by_side
from barb.charts.style import (
    ACCENT,
    BAND,
    FIG_H_IN,
    FIG_W_IN,
    FOOTER_PT,
    HIGH,
    LABEL_PT,
    LEFT,
    LEGEND_ROW_PX,
    LOW,
    MARGIN_X,
    MUTED,
    NEUTRAL,
    PANEL_GAP,
    PLOT_BOTTOM,
    PLOT_TOP,
    RIGHT,
    TICK_PT,
    VALUE_PT,
)
from barb.charts.tick_values import unit_numbers
from barb.charts.time_of_day import (
    BarGrid,
    bar_grid,
    calendar_part,
    calendar_text,
    clock_axis,
    clock_kind,
    time_kind,
    time_text,
    value_kind,
)
from barb.charts.value_text import TickFormatter, date_text, number_text
from barb.charts.words import ENGLISH, Words
from barb.i18n import N_
from barb.instruments import load_instrument
from barb.lineage import (
    Lineage,
    called_key_names,
    group_key_names,
    where_reads_key,
    written_key_texts,
)
from barb.period_rows import still_open
from barb.result import Metadata, Result, ShortWeek
from barb.script import ast
from barb.time_keys import (
    from_the_open,
    is_minute_of_hour,
    key_call,
    minutes_of_day,
    text_clock_zone,
    zoned_clock,
    zoned_clock_column,
    zoned_hour,
    zoned_hour_column,
)

MAX_GROUP_BARS = 150  # more groups than this are drawn as a line
MAX_HOUR_GROUPS = 24  # groups of times of day this few are hours or longer
MAX_PANELS = 4  # aggregates drawn, one panel each
MAX_NOTE_LINES = 2  # a note under the group axis wraps to this many lines, then is cut
# Labels run along bars may take up this much of a panel's height, above and below zero.
UPRIGHT_SHARE = 0.5
UPRIGHT_PAD_PT = 3.0  # between a bar's end and its label, as label_bars pads it
LEVEL_SHRINK_PT = 2.0  # level labels this much smaller are read before labels run upright
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
CLOCK_TICK_MINUTES = (15, 30, 60, 120, 180, 240, 360)
MAX_FILLED_SHARE = 4  # empty groups are added up to this many times the groups present
# Keys that are a part of the year or week (``month()``): the period's every one is a group.
_PERIOD_PARTS = frozenset({"month", "quarter", "dayofweek"})
# With several keys, every other block of the first key is shaded while there are this few:
# the dates of date × hour made a grey wall of 2,328 stripes (3 s of drawing).
MAX_SHADED_BLOCKS = 60
# The extreme an arg_max or arg_min names the group of: max(ret) and arg_max(month(), ret).
_ARG_OF = {"max": "arg_max", "min": "arg_min"}


@dataclass(frozen=True)
class Groups:
    """A grouped table as drawn: its rows in order (empty groups added), keys, values, labels."""

    table: pd.DataFrame
    by: list[str]
    columns: list[str]
    labels: list[str]
    # Positions of the round times of day (09:00, 09:30 …) when the key is a time of day.
    round_times: list[int] | None = None
    # Sort and limit kept the first few groups: they are ranked, not the highest and lowest.
    ranked: bool = False
    # Values past the panels drawn, named under the chart: never dropped without a word.
    left_out: tuple[str, ...] = ()
    # The group of the session's short last bar (16:30-17:00 of hourly RTH bars).
    short: ShortBar | None = None
    # The group the data's end cuts short (2026's 4 days by year): drawn hollow, noted.
    # Of several keys, each of its groups: 2026's Mon … Fri by year and weekday.
    open_at: tuple[int, ...] = ()
    open_label: str = ""  # what the note calls it: "2026", not one of its groups
    # Groups the period's edges or the data's start cut (the 1-day week "last_2_weeks"
    # begins in): drawn hollow, noted, not ranked, like the open one.
    cut_at: tuple[int, ...] = ()
    # Of ``cut_at``, those whole in the data whose value the data's start left over at most
    # half their rows (2008's share above the 200-day mean: 60 of 259), with those counts.
    begun: Mapping[int, tuple[int, int]] = field(default_factory=dict)
    # Which groups the result holds; the others are empty groups added as zero.
    listed: tuple[bool, ...] = ()
    # Groups of too few rows to compare (``Metadata.few_groups``): drawn, never crowned.
    few: tuple[int, ...] = ()
    # Two keys, the second a few values: bars side by side, coloured by the second key.
    layout: SideBySide | None = None
    # The column whose values name the groups in place of the key's: a run's first day.
    named_by: str = ""
    # Of tens of thousands of groups, the few thousand drawn (``barb.charts.many_groups``).
    thinned: Thinned | None = None
    # Buckets of a number (``floor(ret_pct, 0.5)``): each bar at its place on a number line.
    buckets: Buckets | None = None
    # Two keys, an hour and its minute, that name one time of day (``15:15``): highest and
    # lowest are the grid's, not each minute's series' ("15 ▲15:00 12,416" was 15:15's).
    one_clock: bool = False
    # Of a count, the positions of its most (fewest) counted group and of those within its
    # noise, an end each, its group first (``Metadata.near_groups``): named and coloured
    # together.
    near: Mapping[str, tuple[tuple[int, ...], ...]] = field(default_factory=dict)
    # The columns whose groups differ by no more than noise (``Metadata.even_groups``): no
    # bar of theirs is singled out, and the headline says the spread is noise.
    even: frozenset[str] = frozenset()
    # Of those, the ones no test compared: a calendar part's groups, one stretch each
    # (``Metadata.untested_groups``); the headline says so, not "within noise".
    untested: frozenset[str] = frozenset()
    # What the groups are when a calendar key makes them ("yearly": years), for a tie too
    # many to name: "100.0% (9 years tied)", where "9 groups tied" named no unit.
    rows: str | None = None
    # Two keys whose first makes a few blocks (weekday × hour): its names once under each
    # block, the second key's at a round step inside them.
    blocks: Blocks | None = None

    def compared(self, values: np.ndarray) -> np.ndarray:
        """Which groups highest and lowest compare: finite values of groups the result
        holds, not the open one."""
        ok = np.isfinite(values)
        if self.listed:
            ok &= np.array(self.listed)
        ok[list(self.part_rows())] = False
        return ok

    def crowned(self, values: np.ndarray) -> np.ndarray:
        """Which groups may be named highest or lowest: those compared, less the groups of
        too few rows (February's 4 gaps, 75% filled, was no month's answer; p48f M6), while
        two others are left to crown: 47,000 date × hour groups of a bar each are all "too
        few", and their highest and lowest bars still answer."""
        ok = self.compared(values)
        enough = ok.copy()
        enough[list(self.few)] = False
        return enough if enough.sum() >= 2 else ok

    def part_rows(self) -> tuple[int, ...]:
        """The groups that hold only part of their week, month or year."""
        return self.open_at + self.cut_at

    def extremes(
        self, values: np.ndarray, shown: Sequence[str] | None = None
    ) -> tuple[list[int], list[int]]:
        """The positions of the highest and of the lowest value, each tie in full, among the
        groups the result holds and that are whole: an empty group added as zero, or a year
        of 4 days, is no answer to "which year was lowest". Empty when fewer than two are
        left to compare, or when the highest and lowest read the same as ``shown``.

        A group is tied with the extreme when it equals it at the precision the model's
        summary gives (``short_value``): "lowest Mon 49.9%" beside Tue's 49.9% (0.498925 and
        0.498932, both 0.4989 to the model) named a winner nobody could check. Not at the
        chart's coarser precision: "lowest 15.8% (tie: 2015, 2019, 2022)" of 15.8149,
        15.8178 and 15.8138 called a tie what the model read as 15.81, 15.82, 15.81."""
        ok = self.crowned(values)
        if ok.sum() < 2:
            return [], []
        top, bottom = values[ok].max(), values[ok].min()
        if top == bottom:
            return [], []
        at = np.flatnonzero(ok)
        high, low = tied(values, at, top), tied(values, at, bottom)
        if shown is not None and shown[high[0]] == shown[low[0]]:  # all alike as written
            return [], []
        return high, low

    def within_noise(self, column: str, at: list[int]) -> list[int]:
        """The groups within noise of the one extreme at ``at`` by ``column``, as the model
        is told: 'high only' 1,607 has the most, but 'low only' 1,568 is within noise of it
        (p = 0.5); of a tie at the extreme, the others within noise of it. Empty where no
        such test named the extreme."""
        for near in self.near.get(column, ()):
            if near[0] in at:
                return [i for i in near[1:] if i not in at]
        return []

    def tie_counts(self, column: str, high: list[int], low: list[int]) -> tuple[int, int]:
        """How many groups tie at ``column``'s highest and at its lowest: those found
        (``high``, ``low``), or, of a thinned table, those among all its groups."""
        if self.thinned is None or column not in self.thinned.ties:
            return len(high), len(low)
        return self.thinned.ties[column]

    def ranks(self, values: pd.Series | None = None) -> list[int | None]:
        """Each group's place in the ranking, from 1: a thinned table's skip, and the open
        group has none (2026's 4 days, first by corr, are not "1.": 2021 is). Groups of
        equal ``values`` (the column ranked) share the first one's place, as the model's
        text ties them: "6. Mon 09:00, 7. Mon 10:00, 8. Mon 12:00" of three groups at 8
        weeks each read as three places (p48c Q35); they are 6., 6., 6."""
        rows = np.arange(len(self.table)) if self.thinned is None else self.thinned.rows
        parts = sorted(int(rows[at]) for at in self.part_rows())
        places: list[int | None] = [
            None if int(i) in parts else int(i) + 1 - int(np.searchsorted(parts, int(i)))
            for i in rows
        ]
        if values is None or self.thinned is not None:
            return places
        shown = values.tolist()
        before = None  # the last ranked group's position
        for at, place in enumerate(places):
            if place is None:
                continue
            if before is not None and shown[at] == shown[before]:
                places[at] = places[before]
            before = at
        return places

    def first_ranked(self) -> int:
        """The position of the group a ranking's headline names: the first whole one."""
        parts = set(self.part_rows())
        whole = [at for at in range(len(self.table)) if at not in parts]
        return whole[0] if whole else 0

    def named(self, at: int, words: Words, *, listed: bool = False) -> str:
        """The label of the group at ``at`` as the headline names it: ``16:30 (30 min)``
        for the short bar, ranked against full hours, ``16:30 — 30 min`` ``listed`` in a
        tie's brackets (``(tie: 11:30, 16:30 (30 min))`` closed two at once); a label of
        several keys held in one line of the title (``held_label``)."""
        label = held_label(self.labels[at])
        if self.short is None or self.short.at != at:
            return label
        key = N_("short_bar_listed") if listed else N_("short_bar_label")
        return words(key, label=label, minutes=self.short.minutes)


def held_label(label: str) -> str:
    """A label of several keys (``Ср · 23:00``, ``2022 · Ср``) held in one line by no-break
    spaces: a Russian title broke it as «▼ Ср ·» | «23:00 4 810», the hour at the start of
    the next line read as a group of its own."""
    return label.replace(" · ", "\u00a0·\u00a0")


def below_zero(values: np.ndarray) -> bool:
    """Whether every value drawn is at or below zero, some below it: a drawdown, a loss. Its
    highest is the smallest of them, and the answer is the lowest: the headline leads with
    it and its bar takes the answer's colour (the deepest monthly drawdown, not December's
    −1.1%, was the bar to see)."""
    finite = values[np.isfinite(values)]
    return bool(finite.size) and bool((finite <= 0).all() and (finite < 0).any())


def extreme_colors(values: np.ndarray) -> tuple[str, str]:
    """The colours of the highest and the lowest: the answer's (``HIGH``) is the lowest's
    when every value is ``below_zero``."""
    return (LOW, HIGH) if below_zero(values) else (HIGH, LOW)


def read_groups(result: Result, words: Words = ENGLISH) -> Groups | None:
    """The groups to draw, or None when there is no value to draw."""
    table = result.table
    if table is None or table.empty:
        return None
    by = group_keys(result)
    table = _clocks_as_minutes(table, by, result.query)
    # A month or quarter number (``arg_max(month(), ret)``) names a group, it is no magnitude:
    # as a bar it drew December as the year's "highest".
    numbers = [
        c
        for c in table.columns
        if c not in by and is_number(table[c]) and calendar_part(c, result.query) is None
    ]
    numbers = _answer_first(numbers, result)
    columns, left_out = numbers[:MAX_PANELS], tuple(numbers[MAX_PANELS:])
    left_out += _texts_not_drawn(table, by)
    if not columns:
        return None
    listed: tuple[bool, ...] = ()
    by_value = sorted_by_value(result, table)
    if not by_value:  # a sort by the date or year key is the calendar's order, drawn so
        table = calendar_order(table, by)
        counts = [c for c in columns if is_count(c, result)]
        if len(by) == 1 and counts and "sort" not in _stage(result):
            present = table[by[0]].tolist()
            table = with_empty_groups(table, by[0], counts, result)
            table, never = _session_hours(table, by[0], counts, present, result)
            listed = _ranked_groups(table[by[0]].tolist(), present, by[0], never)
    grid = bar_grid(result)
    if grid is not None and grid.crosses_midnight and not by_value:
        table, listed = _from_the_open(table, listed, by, result.query, grid)
    open_at = _open_rows(table, by, result)
    ranked = cut_by_limit(result, table)  # of the table's length, before it is thinned
    if ranked and open_at:
        table = _with_first_whole(table, by, result)
    cut_at = _cut_rows(table, result, open_at) + _part_only_rows(table, result, columns)
    begun = _begun_rows(table, result, (*open_at, *cut_at))
    cut_at = tuple(sorted({*cut_at, *begun}))
    few_at = _few_rows(table, result)
    thinned = _thinned(table, columns, listed, (*open_at, *cut_at), result)
    if thinned is not None:  # everything past here costs by the group
        table = table.iloc[thinned.rows].reset_index(drop=True)
        listed = tuple(listed[i] for i in thinned.rows) if listed else ()
        open_at = tuple(int(np.searchsorted(thinned.rows, at)) for at in open_at)
        cut_at = tuple(int(np.searchsorted(thinned.rows, at)) for at in cut_at)
        begun = {int(np.searchsorted(thinned.rows, at)): n for at, n in begun.items()}
        few_at = tuple(int(i) for i in np.flatnonzero(np.isin(thinned.rows, few_at)))
    near = _near_rows(table, result)
    meta = result.metadata
    even = frozenset((meta.even_groups or ()) if meta is not None else ())
    # Months of one year, each a stretch of its own, are untested: crowned no more than
    # groups within noise (May 371.59 orange over Jan 369.51 the text could not compare).
    untested = frozenset((meta.untested_groups or ()) if meta is not None else ())
    even |= untested
    keys = key_labels(table, by, result.query, words, grid)
    labels = [" · ".join(parts) for parts in zip(*keys, strict=True)] if by else []
    labels = labels or group_labels(table, by)
    named_by, starts = run_start_labels(table, by, result)
    clock = _hour_and_minute(table, by, result.query)
    labels = starts or clock or labels
    open_label = _open_label(by, keys, labels, open_at, result)
    short = short_bar(result, table, by)
    if ranked:
        return Groups(
            table,
            by,
            columns,
            labels,
            ranked=True,
            left_out=left_out,
            short=short,
            open_at=open_at,
            open_label=open_label,
            cut_at=cut_at,
            begun=begun,
            few=few_at,
            named_by=named_by,
            thinned=thinned,
            even=even,
            untested=untested,
            rows=tied_rows(by, result),
        )
    few = not by_value and len(table) <= MAX_GROUP_BARS
    layout = side_by_side(table, by, keys) if few else None
    round_times = _round_times(table, by, result.query, labels)
    buckets = numeric_buckets(result, table, by) if few and thinned is None else None
    blocks = None
    if layout is None and buckets is None and thinned is None and not by_value and not clock:
        blocks = blocks_of(keys, labels)
    if buckets is not None:  # the headline names a bucket by its range: "0 … 0.5%"
        key_unit = unit(by[0], result)
        labels = [buckets.label(i, key_unit, words) for i in range(len(table))]
    return Groups(
        table,
        by,
        columns,
        labels,
        round_times,
        left_out=left_out,
        short=short,
        open_at=open_at,
        open_label=open_label,
        cut_at=cut_at,
        begun=begun,
        few=few_at,
        listed=listed,
        layout=layout,
        named_by=named_by,
        thinned=thinned,
        buckets=buckets,
        one_clock=clock is not None,
        near=near,
        even=even,
        untested=untested,
        rows=tied_rows(by, result),
        blocks=blocks,
    )


#: The timeframe whose rows a group of a calendar key is (``Words.of_rows``).
_KEY_ROWS = {"year": "yearly", "quarter": "quarterly", "month": "monthly", "week": "weekly",
             "date": "daily"}  # fmt: skip


def tied_rows(by: list[str], result: Result) -> str | None:
    """What one key's groups are, when a calendar call makes them (years, days); None for
    any other key (hours, weekdays: groups)."""
    if len(by) != 1:
        return None
    return _KEY_ROWS.get(key_call(by[0], result.query) or "")


def _hour_and_minute(table: pd.DataFrame, by: list[str], query: dict[str, Any]) -> list[str] | None:
    """The time of day each group of ``hour()`` and ``minute()`` keys names (hour 15,
    minute 15: ``15:15``), else None: joined as "15:00 · 15" it read as the 15:00 bar."""
    if len(by) != 2 or clock_kind(by[0], table[by[0]], query) != "hour":
        return None
    if not is_minute_of_hour(by[1], query):
        return None
    hours = pd.to_numeric(table[by[0]], errors="coerce").to_numpy(dtype="float64")
    minutes = pd.to_numeric(table[by[1]], errors="coerce").to_numpy(dtype="float64")
    return [time_text(m, "minute") for m in hours * 60 + minutes]


def _with_first_whole(table: pd.DataFrame, by: list[str], result: Result) -> pd.DataFrame:
    """A ranking cut to the open group alone ("lowest corr by year", limit 1: 2026's 4
    days) with the first whole group after it, as the engine found it among all the groups
    before the limit (``Metadata.first_whole``): the headline names that one. Its times of
    day are read as the table's are (``_clocks_as_minutes``)."""
    meta = result.metadata
    row = meta.first_whole if meta is not None else None
    if len(table) != 1 or row is None or any(c not in row for c in table.columns):
        return table
    whole = _clocks_as_minutes(pd.DataFrame([row]), by, result.query)[list(table.columns)]
    try:
        whole = whole.astype(table.dtypes.to_dict())
    except (TypeError, ValueError):  # a value the table's column cannot hold: not drawn
        return table
    return pd.concat([table, whole], ignore_index=True)


def _clocks_as_minutes(table: pd.DataFrame, by: list[str], query: dict[str, Any]) -> pd.DataFrame:
    """``time()``'s 'HH:MM' values (``arg_max(time(), high) as high_time``) as their minute
    of the day, drawn on a clock like any time of day: as text they were left off the chart,
    though the tester's "at what time was each day's high" asked for nothing else."""
    found = {}
    for name in table.columns:
        if name in by or is_number(table[name]) or time_kind(str(name), query) != "minute":
            continue
        minutes = minutes_of_day(str(name), table[name], query)
        if minutes is not None:
            found[str(name)] = minutes
    return table.assign(**found) if found else table


def _texts_not_drawn(table: pd.DataFrame, by: list[str]) -> tuple[str, ...]:
    """The text and yes/no values the bars cannot draw (``arg_max(dayname(), high)``), to
    name under the chart with the values past its panels: never dropped without a word."""
    return tuple(
        str(name)
        for name in table.columns
        if name not in by
        and not is_number(table[name])
        and not pd.api.types.is_datetime64_any_dtype(table[name])
    )


def _thinned(
    table: pd.DataFrame,
    columns: list[str],
    listed: tuple[bool, ...],
    parts: tuple[int, ...],
    result: Result,
) -> Thinned | None:
    """The groups drawn of tens of thousands (``barb.charts.many_groups``): those compared
    for highest and lowest as ``Groups.compared`` picks them, the part groups kept."""
    compared = np.array(listed) if listed else np.ones(len(table), dtype=bool)
    compared[list(parts)] = False
    meta = result.metadata
    total = meta.spread_over if meta is not None else None  # a table the engine spread
    return thin_groups(table, columns, compared, keep=parts, total=total)


def _session_hours(
    table: pd.DataFrame, key: str, counts: list[str], present: list[Any], result: Result
) -> tuple[pd.DataFrame, bool]:
    """A count by hour of the day over every hour the session has bars in, 0 where none
    matched, and whether those zeros are a real "never" to rank: the where read something
    else than the hour. ``range > 120`` by hour on ETH drew 19:00 and 20:00 as 0 (between
    the first and last hour found) but left 22:00 … 01:00 off, and ranked none of them:
    "least often 03:00 1 bar" stood beside four bars of 0 (p46t D). An hour the session
    trades no bar in is never added: ETH has no 17:00, and "17:00 0 days" headlined the
    lowest hour. A where on the hour itself (``hour() >= 9``) empties the others on
    purpose: they are left as found, not ranked."""
    grid = bar_grid(result)
    if grid is None or clock_kind(key, table[key], result.query) != "hour":
        return table, False
    seen = set(present)
    if where_reads_key(_stage(result), key):
        keep = [v in seen or grid.has_hour(int(v)) for v in table[key]]
        return table[keep].reset_index(drop=True), False
    kind = type(present[0]) if present else int
    hours = {int(v) for v in seen} | {h for h in range(24) if grid.has_hour(h)}
    full = table.set_index(key).reindex([kind(h) for h in sorted(hours)])
    full[counts] = full[counts].fillna(0)
    return full.rename_axis(key).reset_index(), True


def _from_the_open(
    table: pd.DataFrame,
    listed: tuple[bool, ...],
    by: list[str],
    query: dict[str, Any],
    grid: BarGrid,
) -> tuple[pd.DataFrame, tuple[bool, ...]]:
    """Times of day of a session that crosses midnight in the session's order, from its
    18:00 open, as the engine lists them (``barb.time_keys.from_the_open``): the empty
    hours a count adds come back in key order. Which groups are ranked (``listed``) moves
    with its rows: left in key order, it had 14:00 and 15:00 unranked, and "most often
    09:00 171" was headlined beside 15:00's 175 (p46t A)."""
    order = from_the_open(table, by, query, grid.start)
    if order is None:
        return table, listed
    moved = tuple(listed[i] for i in order) if listed else ()
    return table.iloc[order].reset_index(drop=True), moved


def _ranked_groups(
    keys: list[Any], present: list[Any], name: str, never: bool = False
) -> tuple[bool, ...]:
    """Which groups highest and lowest compare: those in the result, and the empty ones that
    are a real "never" (a weekday, a month, a year of the data without a match, an hour of
    the session: ``never``). An empty bucket of ``round(ret)`` is a number nobody grouped
    by."""
    seen = set(present)
    return tuple(never or key in seen or isinstance(key, str) or "year" in name for key in keys)


def _cut_rows(table: pd.DataFrame, result: Result, open_at: tuple[int, ...]) -> tuple[int, ...]:
    """The rows of the groups the engine found cut by the period's edges or the data's start
    (``Metadata.cut_groups``), other than the open one."""
    meta = result.metadata
    found = (_row_of(table, keys) for keys in (meta.cut_groups if meta is not None else ()))
    return tuple(sorted({at for at in found if at is not None and at not in open_at}))


def _part_only_rows(table: pd.DataFrame, result: Result, columns: Sequence[str]) -> tuple[int, ...]:
    """The rows of the groups whose drawn count is a part group alone (``PartCounted`` with
    nothing without it): "month of each year's high" by month counted 2026's 4 days as
    January's 1 year, drawn and tied like a whole year's (p44a Q29). Hollow and not ranked,
    as the part group itself is; its note says which (``_part_counted_notes``)."""
    meta = result.metadata
    found = (
        _row_of(table, counted.keys)
        for counted in (meta.part_counted if meta is not None else ())
        if counted.without == 0 and counted.column in columns
    )
    return tuple(sorted({at for at in found if at is not None}))


def _few_rows(table: pd.DataFrame, result: Result) -> tuple[int, ...]:
    """The rows of the groups a warning called too few to compare (``Metadata.few_groups``),
    each key column read as text once: 47,000 date × hour groups of one bar each are as many
    groups too few, and a search of the table for each took minutes."""
    meta = result.metadata
    few = meta.few_groups if meta is not None else []
    if not few:
        return ()
    names = list(few[0])
    if any(name not in table.columns for name in names):
        return ()
    texts = [_key_strings(table[name]) for name in names]
    rows = {key: at for at, key in enumerate(zip(*texts, strict=True))}
    found = (rows.get(tuple(keys.get(name) for name in names)) for keys in few)
    return tuple(sorted({at for at in found if at is not None}))


def _key_strings(column: pd.Series) -> list[str]:
    """A key column's values as ``_key_mask`` reads them: dates as 2025-12-22, whole
    numbers without a point."""
    if pd.api.types.is_datetime64_any_dtype(column):
        return column.dt.strftime("%Y-%m-%d").tolist()
    return [str(int(v)) if _is_whole(v) else str(v) for v in column]


def _begun_rows(
    table: pd.DataFrame, result: Result, parts: Sequence[int]
) -> dict[int, tuple[int, int]]:
    """The rows of the groups whose value the data's start left over at most half their
    rows (``Metadata.begun_groups``), with those counts, other than the ``parts`` already
    marked."""
    meta = result.metadata
    found = {}
    for keys, size, rows in meta.begun_groups if meta is not None else ():
        at = _row_of(table, keys)
        if at is not None and at not in parts:
            found[at] = (size, rows)
    return found


def _near_rows(table: pd.DataFrame, result: Result) -> dict[str, tuple[tuple[int, ...], ...]]:
    """By column, the rows of a count's most (fewest) counted group and of those within its
    noise, an end each (``Metadata.near_groups``), of the ends whose groups are all drawn."""
    meta = result.metadata
    found = {}
    for column, ends in ((meta.near_groups if meta is not None else None) or {}).items():
        if column not in table.columns:
            continue
        drawn = []
        for groups in ends:
            rows = [_row_of(table, keys) for keys in groups]
            if all(at is not None for at in rows):
                drawn.append(tuple(int(at) for at in rows if at is not None))
        if drawn:
            found[column] = tuple(drawn)
    return found


def _row_of(table: pd.DataFrame, keys: dict[str, str]) -> int | None:
    """The one row whose key columns read ``keys`` (values as text, dates as 2025-12-22)."""
    found = np.flatnonzero(_key_mask(table, keys))
    return int(found[0]) if len(found) == 1 else None


def _key_mask(table: pd.DataFrame, keys: dict[str, str]) -> np.ndarray:
    """Which rows' key columns read ``keys``: none when a key is not a column."""
    mask = np.zeros(len(table), dtype=bool)
    if not keys or any(k not in table.columns for k in keys):
        return mask
    mask[:] = True
    for name, value in keys.items():
        column = table[name]
        mask &= np.array(_key_strings(column), dtype=object) == value
    return mask


def _open_rows(table: pd.DataFrame, by: list[str], result: Result) -> tuple[int, ...]:
    """The rows of the group the data's end cuts short, as the engine found it (2026, by
    year; by year and weekday, 2026's Mon … Fri, each 1 day: "lowest 2026 · Tue 0 days"
    named one of them against whole years' 52); or the empty year added for the data's last
    year while it is still open (``where holiday()`` by year matched nothing in 2026's first
    4 days: no year without a holiday)."""
    meta = result.metadata
    keys = meta.open_group if meta is not None else None
    if not keys and meta is not None and meta.period_end is not None and len(by) == 1:
        year = meta.period_end.year
        if (
            "year" in by[0]
            and table[by[0]].iloc[-1] == year
            and not _judged_whole(result, by[0], year)
            and _still_open(meta)
        ):
            return (len(table) - 1,)
    return tuple(int(at) for at in np.flatnonzero(_key_mask(table, keys))) if keys else ()


def _open_label(
    by: list[str],
    keys: list[list[str]],
    labels: list[str],
    open_at: tuple[int, ...],
    result: Result,
) -> str:
    """What the open group is called: its row's label, or of several rows the labels of the
    keys it is a value of (``2026`` of 2026's weekdays)."""
    if len(open_at) <= 1:
        return labels[open_at[0]] if open_at else ""
    meta = result.metadata
    named = (meta.open_group if meta is not None else None) or {}
    return " · ".join(keys[i][open_at[0]] for i, name in enumerate(by) if name in named)


def _judged_whole(result: Result, key: str, year: int) -> bool:
    """Whether the engine listed the year's group and found it holds every day the query
    keeps of it ("the first 4 trading days of each year" with 2026's four in the data): only
    a first stage's groups are judged so, and an empty year the chart adds never is."""
    table = result.table
    if result.query.get("then") or not result.query.get("group_by") or table is None:
        return False
    return key in table.columns and bool((table[key] == year).any())


def _still_open(meta: Metadata) -> bool:
    """Whether the year the data ends in has trading days left (on the exchange's calendar)."""
    assert meta.period_end is not None
    try:
        calendar = load_instrument(meta.instrument).calendar
    except Exception:  # an instrument file gone since the query ran: say nothing
        return False
    return still_open(np.datetime64(meta.period_end, "ns"), "yearly", calendar)


def _is_whole(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and float(value).is_integer()


def ranked_column(groups: Groups, result: Result) -> str:
    """The column ranked groups are ranked by: the sort column, else the answer's."""
    sort = str(_stage(result).get("sort") or "").split(",")[0].split()
    return sort[0] if sort and sort[0] in groups.columns else answer_column(groups, result)


def cut_by_limit(result: Result, table: pd.DataFrame) -> bool:
    """Whether sort and limit kept only the first groups: the lowest of 5 months left is the
    5th lowest of all, never the "highest"."""
    limit = _stage(result).get("limit")
    return sorted_by_value(result, table) and isinstance(limit, int) and len(table) >= limit


def sorted_by_value(result: Result, table: pd.DataFrame) -> bool:
    """Whether the groups are in the order of a value the query sorted them by; a sort by
    their date, time or year key is time order (``kinds.sorted_by_time``)."""
    return "sort" in _stage(result) and not sorted_by_time(result, table)


def group_keys(result: Result) -> list[str]:
    """The columns that name each row: a grouped result's keys, or the first stage's keys
    that a second stage selected as plain columns (``"then": {"select": ["sy", "ret_pct"]}``
    keeps one row per year, named by ``sy``)."""
    table, summary = result.table, result.summary
    if table is None or summary is None:
        return []
    if summary.type == "grouped":
        return [b for b in summary.by or [] if b in table.columns]
    then = result.query.get("then")
    if summary.type != "table" or not isinstance(then, dict) or not then or then.get("group_by"):
        return []
    return [k for k in group_key_names(result.query) if k in table.columns]


def keyed_rows(result: Result) -> bool:
    """A second stage's rows that are still the groups, named by their keys and not by a
    time: drawn as groups (a bar per year), never as a histogram of the year column."""
    table = result.table
    if table is None or len(table) < 2 or result.summary is None:
        return False
    if result.summary.type != "table" or not group_keys(result):
        return False
    return time_column(table) is None and dated_by_label(table, result) is None


def answer_column(groups: Groups, result: Result) -> str:
    """The column the headline is about and whose extremes are coloured: the first value
    that is not a count, preferring one the second stage's map made from the groups (the
    return ``(end / start - 1) * 100``, not the ``start`` price it was made of).
    ``mean(range), count()`` by FOMC day is a question about the range; the count is there
    to say how many days each mean rests on. Of values some of which differ by no more
    than noise and others do, the first that differs: "or_pct: highest fomc: no 0.491%"
    headed FOMC days' 15-minute range, which the warning called noise, over their share of
    days with both sides broken, 71.4% against 58.0%."""
    values = [c for c in groups.columns if not is_count(c, result)] or groups.columns
    then = result.query.get("then")
    made = then.get("map") or {} if isinstance(then, dict) else {}
    first = next((c for c in values if c in made), values[0])
    meta = result.metadata
    if meta is None or first not in (meta.even_groups or ()):
        return first
    return next((c for c in values if c in (meta.apart_groups or ())), first)


def _round_times(
    table: pd.DataFrame, by: list[str], query: dict[str, Any], labels: list[str]
) -> list[int] | None:
    """Ticks at round times of day, as many as fit: every 15, 30 or 60 minutes or more. Of
    ``time()``'s text ('09:30') too: 450 minutes of RTH were ticked every 63rd, 10:33,
    11:36, 12:39 (p48i 7)."""
    minutes = minutes_of_day(by[0], table[by[0]], query) if len(by) == 1 else None
    if minutes is None or not (np.diff(minutes) > 0).all():  # sorted by value: every label
        return None
    _, step = label_fit(labels)
    room = max(2, math.ceil(len(labels) / step))
    for every in CLOCK_TICK_MINUTES:
        at = [i for i, m in enumerate(minutes) if np.isfinite(m) and m % every == 0]
        if at and len(at) <= room:
            return at
    return None


def _keeps_named(step: int, round_times: list[int] | None, n: int) -> bool:
    """Whether thinned ticks make room for the bars the headline names: always for every
    n-th label; among round times of day only over hours (09:30, the busiest), not over
    5-minute bars, whose axis reads as a clock only at round times."""
    if round_times is not None:
        return n <= MAX_HOUR_GROUPS
    return step > 1


def _answer_first(numbers: list[str], result: Result) -> list[str]:
    """A second stage's own columns, when it selects none, ahead of the first stage's: they
    are the answer (a year's return from its first and last close), yet the table lists them
    last, and four first-stage values had pushed the return off the chart into "+ 2 more
    values in the CSV" under a headline about a helper column."""
    then = result.query.get("then")
    if not isinstance(then, dict) or "select" in then or not then.get("map"):
        return numbers
    made = set(then["map"])
    return [c for c in numbers if c in made] + [c for c in numbers if c not in made]


def _stage(result: Result) -> dict[str, Any]:
    then = result.query.get("then")
    return then if isinstance(then, dict) and then else result.query


def is_count(column: str, result: Result) -> bool:
    """A count of rows: zero where a group has none (a mean there has no value). Followed
    back through a second stage that only passes the count on (``"select": ["sy", "days"]``)."""
    found = Lineage(result.query).definition(column)
    if found is not None:
        expr = found[0]
        return isinstance(expr, ast.Call) and expr.name.lower() == "count"
    return column == "count" or column.startswith("count_")


def with_counted_zeros(result: Result) -> pd.DataFrame | None:
    """The result's table with the empty groups its chart draws at zero (``read_groups``),
    for the CSV: years 2019, 2021, 2023 and 2025 with no day of range > 700 were drawn and
    counted in "least often 0 days (tie of 4 groups)", and the file held 2020, 2022 and 2024
    alone (p48i 5). The table as it is for any other result."""
    table = result.table
    if table is None or table.empty or "sort" in _stage(result):
        return table
    by = group_keys(result)
    if len(by) != 1 or sorted_by_value(result, table):
        return table
    counts = [c for c in table.columns if c not in by and is_number(table[c])]
    counts = [c for c in counts if is_count(c, result)]
    return with_empty_groups(table, by[0], counts, result) if counts else table


def with_empty_groups(
    table: pd.DataFrame, key: str, counts: list[str], result: Result
) -> pd.DataFrame:
    """Every group from the first to the last (a year over the whole period), with a count
    of zero where nothing matched; other values of an added group are missing."""
    slots = _all_groups(table[key], key, result)
    if slots is None or len(slots) <= len(table):
        return table
    full = table.set_index(key).reindex(slots)
    full[counts] = full[counts].fillna(0)
    return full.rename_axis(key).reset_index()


def _all_groups(keys: pd.Series, name: str, result: Result) -> list[Any] | None:
    present = keys.dropna()
    if present.empty or len(present) < len(keys):  # a group of missing keys has no slot
        return None
    if name == "week" and name in called_key_names(result.query):
        return _period_weeks(present, result)
    names = set(present.astype(str))
    for calendar in (WEEKDAYS, MONTHS):
        if names <= set(calendar):
            first, last = min(map(calendar.index, names)), max(map(calendar.index, names))
            if calendar is WEEKDAYS:  # the trading week, whatever matched
                first, last = 0, max(last, 4)
            return [calendar[i] for i in range(first, last + 1)]
    if not pd.api.types.is_integer_dtype(present) and not _whole(present):
        return None
    values = sorted(int(v) for v in present.unique())
    kind = type(present.iloc[0])
    if "year" in name:
        lo, hi = _year_span(values, result)
        return [kind(v) for v in range(lo, hi + 1)]
    if name in _PERIOD_PARTS and name in called_key_names(result.query):
        return [kind(v) for v in _period_parts(name, values, result)]
    step = reduce(math.gcd, (b - a for a, b in pairwise(values)), 0) or 1
    size = (values[-1] - values[0]) // step + 1
    if size > min(MAX_GROUP_BARS, MAX_FILLED_SHARE * len(values) + 10):
        return None
    return [kind(v) for v in range(values[0], values[-1] + 1, step)]


def _year_span(values: list[int], result: Result) -> tuple[int, int]:
    """Every year of the period the bars cover, as the summary's warning about the years
    ``where`` emptied counts them: years are consecutive, so matches in 2020, 2022 and 2024
    are no reason to skip the odd years (a gcd step did), and one matching year still shows
    the years without any."""
    lo, hi = values[0], values[-1]
    meta = result.metadata
    if meta and meta.period_start and meta.period_end:
        end = meta.period_end
        if meta.timeframe == "weekly":
            # A week is in the year of its Monday, its label: the week of 2025-12-29 ends
            # on 2026-01-02 and is 2025's, and the empty "2026" added was in no table.
            end -= dt.timedelta(days=end.weekday())
        lo, hi = min(lo, meta.period_start.year), max(hi, end.year)
    return lo, hi


def _period_parts(name: str, values: list[int], result: Result) -> list[int]:
    """Every month, quarter or weekday (``month()``, ``quarter()``, ``dayofweek()``) the
    period's trading days fall on, as the summary's warning about the groups ``where``
    emptied lists them, with those found: 2024's inside days by month() end in October,
    and an axis to Oct read as data ending there ("no row passed where in 6, 11, 12")."""
    found = set(values)
    if name == "dayofweek":  # the trading week, whatever matched
        return sorted(found | set(range(5)))
    meta = result.metadata
    if meta is not None and meta.period_start and meta.period_end:
        months = pd.period_range(meta.period_start, meta.period_end, freq="M")
        found |= set(months.month if name == "month" else months.quarter)
    return sorted(found)


def _period_weeks(present: pd.Series, result: Result) -> list[Any] | None:
    """Every week from the period's first to its last, with those found: inside days by
    week() listed the 8 weeks that had one of 26, and "least often 1 day" hid the 18 weeks
    with none. A week found is named as ``week()`` names it (its first trading date,
    2024-01-02 in New Year's week); one not found, by its Monday."""
    if not pd.api.types.is_datetime64_any_dtype(present):
        return None
    meta = result.metadata
    lo, hi = present.min(), present.max()
    if meta is not None and meta.period_start and meta.period_end:
        lo = min(lo, pd.Timestamp(meta.period_start))
        hi = max(hi, pd.Timestamp(meta.period_end))
    mondays = pd.date_range(lo - pd.Timedelta(days=lo.dayofweek), hi, freq="W-MON")
    found = pd.DatetimeIndex(present)
    # A week found after its Monday (a holiday) is its one slot, not two.
    named = found - pd.to_timedelta(found.dayofweek, unit="D")
    slots = mondays[~mondays.isin(named)].union(found)
    if len(slots) > min(MAX_GROUP_BARS, MAX_FILLED_SHARE * len(present) + 10):
        return None
    return list(slots)


def _whole(values: pd.Series) -> bool:
    if not pd.api.types.is_float_dtype(values):
        return False
    floats_ = values.to_numpy(dtype="float64")
    return bool(np.all(floats_ == np.round(floats_)))


def draw_grouped(fig: Figure, result: Result, words: Words = ENGLISH) -> bool:
    groups = read_groups(result, words)
    if groups is None:
        return False
    labels, n, layout = groups.labels, len(groups.table), groups.layout
    if groups.ranked:  # as ranked rows are: "1. 2023 · Sep"
        places = groups.ranks(groups.table[ranked_column(groups, result)])
        labels = [
            label if i is None else f"{i}. {label}" for i, label in zip(places, labels, strict=True)
        ]
    if layout is not None:  # a slot per first key; the legend names the second
        labels = layout.slots
    rotate, step = label_fit(labels, in_order=not sorted_by_value(result, groups.table))
    if groups.buckets is not None:  # the number line ticks its own numbers
        rotate, step = 0, 1
    # Days in time order drawn as a line, too many to name each: level ticks on month or
    # year starts (bars keep a label each, or every few, under them).
    dated = (
        n > MAX_GROUP_BARS
        and (rotate or step > 1)
        and layout is None
        and not groups.ranked
        and groups.round_times is None
        and date_group_ticks(labels)
    )
    if dated or groups.blocks is not None:
        rotate, step = 0, 1
    bottom = PLOT_BOTTOM + (0.0105 * max(len(s) for s in labels) if rotate else 0.0)
    # Weeks with a holiday in them (group_by week()), their bars hatched.
    short = _short_weeks(groups, result) if n <= MAX_GROUP_BARS else {}
    notes = _notes(groups, result, words)
    if short:
        notes.append(short_weeks_note(list(short.values()), words))
    notes = fitted_notes(fig, notes)
    if groups.blocks is not None:  # the blocks' names, a row under the inner labels
        bottom += 1.3 * NAME_OFFSET_PT / (fig.get_figheight() * 72)
    bottom += len(notes) * FOOTER_PT * 1.4 / (fig.get_figheight() * 72)  # under the axis name
    panels = _panels(fig, len(groups.columns), bottom)
    positions = np.arange(n, dtype="float64")
    if groups.thinned is not None:  # each group at its place among all of them
        positions = groups.thinned.rows.astype("float64")
    width = 0.72
    if layout is not None:
        positions, width = layout.positions(), layout.width * 0.9
    slot_pt = (RIGHT - LEFT) * FIG_W_IN * 72 / max(n, 1)
    buckets = groups.buckets
    if buckets is not None:  # a bucket as wide as its step, a gap where one is empty
        positions, width = buckets.centres(), buckets.width * 0.92
        span = buckets.starts[-1] + buckets.width - buckets.starts[0]
        slot_pt = (RIGHT - LEFT) * FIG_W_IN * 72 * buckets.width / (span + buckets.width)
    answer = ranked_column(groups, result) if groups.ranked else answer_column(groups, result)
    # The headline's column on top, where the eye lands after reading it.
    columns = [answer, *(c for c in groups.columns if c != answer)]
    named: list[int] = []  # the bars the headline names keep their labels when thinned
    if not groups.ranked and layout is None:
        answer_values = floats(groups.table[answer])
        kind = value_kind(answer, result, answer_values)
        shown = value_texts(answer_values, unit(answer, result), kind, words, result)
        high, low = groups.extremes(answer_values, shown)
        named = [*high, *low] if len(high) + len(low) <= 2 else []
    for ax, column in zip(panels, columns, strict=True):
        if len(groups.by) > 1 and layout is None:
            _shade_blocks(ax, groups.table[groups.by[0]].tolist(), positions)
        values = floats(groups.table[column])
        value_unit = unit(column, result)
        kind = value_kind(column, result, values)
        extremes = column == answer and not groups.ranked
        upright = False
        above_px = 30.0  # a level label over its bar
        if n > MAX_GROUP_BARS:
            _draw_group_line(ax, positions, values, groups.compared(values))
        else:  # each bar's value written out, only for bars (thousands took a second)
            numbers = value_texts(values, value_unit, kind, words, result)
            texts = with_parts(numbers, groups, column, result, words)
            colors = _extreme_colors(values, groups, numbers, column) if extremes else [ACCENT] * n
            if layout is not None:  # each second key in its colour, named in the legend
                colors = layout.colors()
            faces = list(colors)
            for at in groups.part_rows():  # hollow: part of its period
                faces[at] = "white"
            draw_bars(
                ax,
                positions,
                values,
                width=width,
                color=faces,
                edgecolor=colors,
                linewidth=1.6,
            )
            if short:
                at = np.array(sorted(short))
                hatch_bars(ax, positions[at], values[at], width)
            mark_zero_bars(
                ax, positions, values, width=width, color=colors, caret=n > MAX_VALUE_LABELS
            )
            if n <= MAX_VALUE_LABELS:
                size, upright, texts = _label_layout(
                    ax,
                    texts,
                    slot_pt,
                    VALUE_PT if n <= 12 else VALUE_PT - 1.5,
                    _extremes_only(texts, values, groups if extremes else None, numbers, column),
                    bool((values < 0).any()),
                )
                if upright:  # "2 465 207" along the bar reaches well above it
                    above_px = upright_label_px(texts, size)
                label_bars(
                    ax,
                    positions,
                    values,
                    value_unit,
                    size=size,
                    upright=upright,
                    words=words,
                    texts=texts,
                )
        if buckets is not None:
            number_line(ax, buckets, words, unit(groups.by[0], result))
        elif groups.blocks is not None:
            block_ticks(ax, groups.blocks, positions)
        else:
            category_ticks(
                ax,
                labels,
                rotate=rotate,
                step=step,
                words=words,
                at=groups.round_times,
                keep=named if _keeps_named(step, groups.round_times, n) else (),
                x=None if groups.thinned is None else positions,
            )
            if dated:
                set_date_group_ticks(ax, labels, positions)
        if ax is not panels[-1]:
            ax.tick_params(axis="x", labelbottom=False)
        # No legend for the colored extremes: the headline above names them ("highest Jul
        # 152.5, lowest Oct 127.5"), and a legend box covered the tallest bars' labels.
        # The series' legend is one row, above the bars and their labels.
        top_px = 10.0
        # Labels hang under bars below zero: of values all under it (drawdowns, losses)
        # nothing stands over zero, and the room of a label over its bar was left empty
        # above the axis's 0. A zero or a missing value's label still stands over it.
        if (np.nan_to_num(values) >= 0).any():
            top_px += above_px
        if layout is not None and ax is panels[0]:
            legend(ax, layout.handles(), loc="upper right", ncol=len(layout.names))
            top_px += LEGEND_ROW_PX + 6
        # A line of times of day spans the times it holds: from 00:00, the highs of a year
        # of RTH days (09:30-16:59) filled the top half of the panel, midnight to 08:00 empty.
        clock_line = kind is not None and n > MAX_GROUP_BARS
        headroom(ax, values, px=top_px, below_px=above_px, floor=not clock_line)
        if kind is not None:  # each group's time of day (the hour of its high, say)
            clock_axis(ax.yaxis, *ax.get_ylim(), kind)
        else:
            ax.yaxis.set_major_formatter(TickFormatter(words, value_unit))
            whole_number_ticks(ax.yaxis, values)
        label = axis_text(column, result, words)
        value_label(ax, zoned(label, result, column, words) if kind is not None else label)
    named = groups.by if layout is None else groups.by[:1]
    if groups.named_by:  # the runs' first days, not their counter
        named = [groups.named_by]
    key_text = keys_text(named, result, words)
    if buckets is not None:  # the number line's unit: "bucket (%)"
        key_text = axis_text(groups.by[0], result, words)
    elif any(
        minutes_of_day(k, groups.table[k], result.query) is not None
        or zoned_clock_column(k, groups.table[k], result.query) is not None
        for k in named
        if k in groups.table
    ):
        # "t (ET)": the exchange's clock, unless the one key is on its own ("t (Moscow)").
        key_text = zoned(key_text, result, named[0] if len(named) == 1 else None, words)
    elif len(named) == 1 and named[0] in groups.table:
        zone = zoned_hour_column(named[0], groups.table[named[0]], result.query)
        if zone is not None:  # hour('MSK') alone: "hour (MSK)", as hour() is "hour (ET)"
            key_text = f"{words.key('hour')} ({words.clock(zone)})"
    # Under the blocks' names when they have a row of their own.
    pad = NAME_OFFSET_PT - TICK_PT if groups.blocks is not None else None
    panels[-1].set_xlabel(key_text, fontsize=LABEL_PT, labelpad=pad)
    if notes:
        write_notes(panels[-1], notes)
    return True


def _short_weeks(groups: Groups, result: Result) -> dict[int, ShortWeek]:
    """The groups by week() alone that hold fewer trading days than a full week, by row."""
    meta = result.metadata
    if meta is None or not meta.short_weeks or len(groups.by) != 1:
        return {}
    if groups.layout is not None or groups.buckets is not None:
        return {}
    return short_week_rows(week_labels(groups.table[groups.by[0]]), result)


def _label_layout(
    ax: Axes,
    texts: list[str],
    slot_pt: float,
    size: float,
    extremes_only: list[str],
    negative: bool,
) -> tuple[float, bool, list[str]]:
    """The value labels' size, whether they run along the bars, and the labels written.

    Level at about full size if they fit their slots as drawn; else along the bars where
    the panel is tall enough (four stacked panels are not: the labels ran over the panel
    above); else level and smaller; else only the highest and lowest, and the axis reads
    the rest."""
    fig = ax.get_figure()
    assert isinstance(fig, Figure)
    level = level_size(fig, texts, slot_pt, size)
    if level is not None and level >= size - LEVEL_SHRINK_PT:
        return level, False, texts
    # Run along the bars, a label is as tall as it is long: the room above the bars (and
    # as much below, when some fall under zero) is at most half the panel (``headroom``).
    height_pt = ax.get_position().height * FIG_H_IN * 72
    tall_pt = widest_label_pt(fig, texts, size) + UPRIGHT_PAD_PT
    if tall_pt * (2 if negative else 1) <= UPRIGHT_SHARE * height_pt:
        return size, True, texts
    if level is not None:
        return level, False, texts
    return (
        level_size(fig, extremes_only, slot_pt * 2, size) or SMALLEST_LEVEL_PT,
        False,
        extremes_only,
    )


def _extremes_only(
    texts: list[str], values: np.ndarray, groups: Groups | None, shown: list[str], column: str
) -> list[str]:
    """The labels of the highest and lowest bars alone (as the answer's panel colours them,
    ties as written included, else the plain maximum and minimum) and of the missing ones;
    the axis reads the others."""
    if groups is not None and groups.layout is not None:
        found = series_extremes(values, groups.layout, groups.crowned(values))
        keep = {i for _, high, low in found for i in (*high, *low)}
    elif groups is not None:
        high, low = groups.extremes(values, shown)
        near = (*groups.within_noise(column, high), *groups.within_noise(column, low))
        keep = {*high, *low, *near}
    elif np.isfinite(values).any():
        keep = {int(np.nanargmax(values)), int(np.nanargmin(values))}
    else:
        keep = set()
    # A missing value draws no bar: its "n/a" at the base tells it from a group not listed.
    keep |= {int(i) for i in np.flatnonzero(np.isnan(values))}
    return [text if i in keep else "" for i, text in enumerate(texts)]


def _notes(groups: Groups, result: Result, words: Words) -> list[str]:
    """Lines under the group axis's name: the short bar's group (``16:30: a 30-minute bar
    (the session ends at 17:00)``), and the select's values past the panels a portrait
    figure holds (``+ 1 more value in the CSV: p90``)."""
    notes = []
    if groups.open_at:
        notes.append(words("open_group_note", label=groups.open_label))
    counted = _part_only_rows(groups.table, result, groups.columns)  # said by their note
    for at in groups.cut_at:
        if at in counted:
            continue
        if at in groups.begun:
            size, rows = groups.begun[at]
            label = groups.labels[at]
            # «из 21 строки», «из 5 строк»
            notes.append(
                words("begun_group_note", label=label, size=size, rows=rows, plural_of=rows)
            )
        else:
            notes.append(words("cut_group_note", label=groups.labels[at]))
    if groups.short is not None:
        short = groups.short
        label = groups.labels[short.at]
        notes.append(words("short_bar_note", label=label, minutes=short.minutes, end=short.end))
    values = groups.table[groups.columns[0]].to_numpy(dtype=float, na_value=np.nan)
    if groups.few and groups.crowned(values).sum() < groups.compared(values).sum():
        # drawn, not crowned: "Feb, Mar, Jun: too few rows to compare"
        names = ", ".join(groups.labels[at] for at in groups.few[:6])
        names += f" +{len(groups.few) - 6}" if len(groups.few) > 6 else ""
        notes.append(words("few_groups_note", names=names))
    notes += _part_counted_notes(groups, result, words)
    notes += limit_tie_notes(groups, result, words)
    notes += unjudged_notes(result, words)
    if groups.thinned is not None:
        notes.append(_thinned_note(groups.thinned, words))
    names = groups.left_out
    if names:
        count = len(names)
        notes.append(
            words("left_out", plural_of=count, count=count, names=csv_names(names, result, words))
        )
    return notes


# The note under a bar counting a part group, by what cuts the group (``PartCounted.cut``):
# the data's first week is whole in the market, and "unfinished" it was not (p43f M2).
_PART_COUNTED_NOTES = {
    "open": N_("part_counted_note"),
    "data_start": N_("part_counted_data_start_note"),
    "period": N_("part_counted_period_note"),
}


def _part_counted_notes(groups: Groups, result: Result, words: Words) -> list[str]:
    """A line for each bar whose count takes in a first-stage group that holds only part of
    its week (month, year), as the warning says (``Metadata.part_counted``): "high first:
    463 includes an unfinished period (week of 2026-01-05); 462 without it", "Thu: 141
    includes a period the data starts inside (week of 2007-12-31); 140 without it". The
    headline's "most often high first 463" was the warning's number, with no word of its
    part week."""
    meta = result.metadata
    notes = []
    for counted in meta.part_counted if meta is not None else ():
        at = _row_of(groups.table, counted.keys)
        if at is None or counted.column not in groups.columns:
            continue
        value = float(groups.table[counted.column].iloc[at])
        part = words("week_of", label=counted.label) if counted.unit == "week" else counted.label
        texts = (number_text(v, 0, words) for v in (value, counted.without))
        notes.append(
            words(
                _PART_COUNTED_NOTES.get(counted.cut, _PART_COUNTED_NOTES["open"]),
                label=groups.labels[at],
                value=next(texts),
                part=part,
                without=next(texts),
            )
        )
    return notes


def limit_tie_notes(groups: Groups, result: Result, words: Words) -> list[str]:
    """A line naming the groups tied with the last bar that the limit left out
    (``Metadata.limit_tie``): "Also 8, cut by the limit: Fri · 09:00, Fri · 14:00". The
    text warned that ``limit 8`` cut a tie of 5; the chart ranked three of them as places
    6, 7 and 8, and the other two were nowhere (p48c Q35)."""
    meta = result.metadata
    tie = meta.limit_tie if meta is not None else None
    if tie is None or not groups.ranked or groups.table.empty:
        return []
    value = float(groups.table[ranked_column(groups, result)].iloc[-1])
    shown = number_text(value, 0 if value.is_integer() else 2, words)
    names = ", ".join(" · ".join(parts) for parts in tie_key_texts(tie.left, groups, result, words))
    more = tie.left_count - len(tie.left)
    if more > 0:
        return [words("limit_tie_more_note", value=shown, names=names, count=more)]
    return [words("limit_tie_note", value=shown, names=names)]


def tie_key_texts(
    left: list[dict[str, str]], groups: Groups, result: Result, words: Words
) -> list[list[str]]:
    """Each tied group past the limit named as its bar would be: month() 10 is "Oct" ("окт"),
    never "10", which under "Also 14, cut by the limit:" read as ten more groups (p48i 1).
    The tie holds its keys as text; a numeric key column reads them back as numbers. A time
    on another clock than the exchange's names it, as the headline's groups do: "Also 16,
    cut by the limit: 20:00" under «№1 22:00 (МСК)» read as New York's 20:00."""
    grid = bar_grid(result)
    query = result.query or {}
    texts = []
    for name in left[0] if left else {}:
        column = pd.Series([keys.get(name, "") for keys in left], dtype=object)
        if name in groups.table.columns and is_number(groups.table[name]):
            column = pd.to_numeric(column, errors="coerce")
        said = _key_texts(column, name, query, words, grid)
        zone = zoned_clock(name, query) or text_clock_zone(name, query) or zoned_hour(name, query)
        if zone is not None:
            said = [f"{text} ({words.clock(zone)})" for text in said]
        texts.append(said)
    return [list(parts) for parts in zip(*texts, strict=True)]


def _thinned_note(thinned: Thinned, words: Words) -> str:
    """``chart: 2,013 of 106,436 groups, the highest and lowest among them``."""
    return words(
        "thinned_groups",
        drawn=number_text(len(thinned.rows), 0, words),
        total=number_text(thinned.total, 0, words),
        groups=words.of_rows("", thinned.total, groups=True),
    )


def fitted_notes(
    fig: Figure, notes: list[str], left: float = LEFT, right: float = RIGHT
) -> list[str]:
    """The notes' lines, each note wrapped to fit across the figure centred under the group
    axis's name (of axes from ``left`` to ``right``), where they are written: the Russian
    "2026: период не завершён (полый столбец), не участвует в сравнении" ran off the
    figure's right edge."""
    centre = (left + right) / 2
    room_px = 2 * min(centre - MARGIN_X, 1 - MARGIN_X - centre) * fig.get_figwidth() * fig.dpi
    return [
        line
        for note in notes
        for part in note.split("\n")
        for line in wrap(fig, part, FOOTER_PT, MAX_NOTE_LINES, room_px=room_px)
    ]


def write_notes(ax: Axes, notes: list[str]) -> None:
    """``notes`` centred under the axis's name, a line each."""
    ax.annotate(
        "\n".join(notes),
        (0.5, 0),
        xycoords=ax.xaxis.label,
        xytext=(0, -3),
        textcoords="offset points",
        fontsize=FOOTER_PT,
        color=MUTED,
        ha="center",
        va="top",
        linespacing=1.2,
    )


def _panels(fig: Figure, count: int, bottom: float) -> list[Axes]:
    """``count`` axes stacked from ``bottom`` to the plot's top, sharing the group axis."""
    height = (PLOT_TOP - bottom - PANEL_GAP * (count - 1)) / count
    axes: list[Axes] = []
    for i in range(count):
        top = PLOT_TOP - i * (height + PANEL_GAP)
        axes.append(plot_axes(fig, bottom=top - height, top=top, sharex=axes[0] if axes else None))
    return axes


def calendar_order(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Weekday and month names in calendar order, not alphabetical (Fri before Mon)."""
    keys = []
    for name in by:
        col = table[name]
        # Of each distinct key once: the dates of 50,000 groups written out took 0.15 s.
        names = set(pd.Series(col.dropna().unique()).astype(str))
        if names and names <= set(WEEKDAYS):
            keys.append(col.astype(str).map(WEEKDAYS.index).to_numpy())
        elif names and names <= set(MONTHS):
            keys.append(col.astype(str).map(MONTHS.index).to_numpy())
        else:
            keys.append(col.to_numpy())
    if not keys:
        return table
    order = pd.DataFrame(dict(enumerate(keys))).sort_values(list(range(len(keys))), kind="stable")
    return table.iloc[order.index].reset_index(drop=True)


def group_labels(
    table: pd.DataFrame,
    by: list[str],
    query: dict[str, Any] | None = None,
    words: Words = ENGLISH,
    grid: BarGrid | None = None,
) -> list[str]:
    """One label per group; several keys join into one: ``2024 · Mon``."""
    if not by:
        return [str(i + 1) for i in range(len(table))]
    texts = key_labels(table, by, query, words, grid)
    return [" · ".join(parts) for parts in zip(*texts, strict=True)]


def key_labels(
    table: pd.DataFrame,
    by: list[str],
    query: dict[str, Any] | None = None,
    words: Words = ENGLISH,
    grid: BarGrid | None = None,
) -> list[list[str]]:
    """Each key's label of every group, key by key."""
    return [_key_texts(table[name], name, query or {}, words, grid) for name in by]


def _key_texts(
    column: pd.Series, name: str, query: dict[str, Any], words: Words, grid: BarGrid | None
) -> list[str]:
    clock = clock_kind(name, column, query)
    if clock == "hour" and grid is not None:
        # The hour's first bar as the clock shows it: RTH's hour 15 is the 15:30 bar, never
        # "15:00", which is another hour (the busiest one read 40,050 for 58,401).
        return [
            time_text(grid.first_in_hour(int(v)), "minute") if np.isfinite(v) else str(v)
            for v in pd.to_numeric(column, errors="coerce")
        ]
    if clock is not None:
        return [time_text(v, clock) for v in column]
    if zoned_clock_column(name, column, query) is not None:
        # hour('MSK') * 60 + minute('MSK'): 16:30 on that clock, as the CSV writes it,
        # not "990" (the axis names the clock)
        return [time_text(v, "minute") for v in column]
    if zoned_hour_column(name, column, query) is not None:  # hour('MSK'): 22:00, not 22
        return [time_text(v, "hour") for v in column]
    part = calendar_part(name, query)
    # A yes/no key made of a condition is named by it: "fh > 0: no", never "fh_0: no".
    shown = written_key_texts(query).get(name, name)
    return [_key_text(shown, v, words, part) for v in column]


def key_words(result: Result, words: Words = ENGLISH, rows: int = 20) -> dict[str, dict[str, str]]:
    """Of each group key of the table's first ``rows``, the values the chart writes as a
    word and not as the value itself (``Mon`` → «Пн», ``dayofweek`` 2 → "Wed", ``month`` 3
    → "Mar", ``quarter`` 3 → "Q3"), by the value as text (``key_text``): ``/query``'s
    Russian table read "Mon" and 0 to 4 beside a chart of «Пн» to «Пт». A minute of the
    day is its time, on whichever clock (570 → "09:30", as the chart and the CSV write it:
    the table read 570 and «1 050» under a headline of «09:30»); so is an hour, as its
    first bar (RTH's hour 9 → "09:30", as the axis and a Russian CSV write it: the table
    read 9 under a headline of «09:30»); yes/no keys stay as the table writes them."""
    summary, table = result.summary, result.table
    if summary is None or table is None:
        return {}
    shown = table.head(rows)
    found: dict[str, dict[str, str]] = {}
    grid = bar_grid(result)
    for name in summary.by or ():
        if name not in shown:
            continue
        clock = clock_kind(name, shown[name], result.query)
        if clock == "hour" and grid is not None:
            hours = shown[name].dropna().unique()
            [texts] = key_labels(pd.DataFrame({name: hours}), [name], result.query, words, grid)
            found[name] = {key_text(v): said for v, said in zip(hours, texts, strict=True)}
            continue
        if clock == "minute" or (
            clock is None and zoned_clock_column(name, shown[name], result.query) is not None
        ):
            found[name] = {
                key_text(v): time_text(v, "minute") for v in shown[name].dropna().unique()
            }
            continue
        if clock is not None:
            continue
        part = calendar_part(name, result.query)
        said = {}
        for value in shown[name].dropna().unique():
            if isinstance(value, bool | np.bool_) or not isinstance(
                value, str | int | float | np.integer | np.floating
            ):
                continue
            written = _key_text(name, value, words, part)
            if written != key_text(value):
                said[key_text(value)] = written
        if said:
            found[name] = said
    return found


def key_text(value: Any) -> str:
    """A key's value as text, the same of a whole float as of its integer (2.0 and 2: "2"),
    as a table's JSON rows may hold either."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def value_texts(
    values: np.ndarray, value_unit: str | None, kind: str | None, words: Words, result: Result
) -> list[str]:
    """Each group's value as written by its bar and in the headline: a time of day on the
    clock, else a number (a price at the instrument's tick)."""
    if kind is not None:
        return [time_text(v, kind) if np.isfinite(v) else words("no_value") for v in values]
    return unit_numbers(values, value_unit, result, words)


def with_parts(
    texts: list[str], groups: Groups, column: str, result: Result, words: Words
) -> list[str]:
    """Each group's value with the month (or quarter) it fell in, when the select found that
    too: ``max(ret) as best`` beside ``arg_max(month(), ret) as best_month`` reads
    ``Oct 25.9%``. The month is the answer to "which month", and it is no bar of its own."""
    parts = _paired_parts(groups, column, result, words)
    if parts is None:
        return texts
    return [f"{p} {t}" if p else t for p, t in zip(parts, texts, strict=True)]


def _paired_parts(groups: Groups, column: str, result: Result, words: Words) -> list[str] | None:
    lineage = Lineage(result.query)
    found = lineage.definition(column)
    expr = found[0] if found is not None else None
    if not isinstance(expr, ast.Call) or expr.name not in _ARG_OF or len(expr.args) != 1:
        return None
    for name in groups.table.columns:
        part = calendar_part(name, result.query)
        other = lineage.definition(name) if part is not None and name not in groups.by else None
        call = other[0] if other is not None else None
        if (
            isinstance(call, ast.Call)
            and call.name == _ARG_OF[expr.name]
            and len(call.args) == 2
            and call.args[1] == expr.args[0]
        ):
            return [
                "" if pd.isna(v) else _key_text(name, v, words, part) for v in groups.table[name]
            ]
    return None


def _key_text(name: str, value: Any, words: Words, part: str | None) -> str:
    if isinstance(value, (bool, np.bool_)):
        return words.flag(name, value)
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return date_text(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    placed = calendar_text(value, part, words) if part is not None else None
    if placed is not None:
        return placed
    if isinstance(value, str) and value in WEEKDAYS:
        return words.weekdays[WEEKDAYS.index(value)]
    if isinstance(value, str) and value in MONTHS:
        return words.months[MONTHS.index(value)]
    return str(value)


def _draw_group_line(
    ax: Axes, positions: np.ndarray, values: np.ndarray, compared: np.ndarray
) -> None:
    """Hundreds of groups (one per date, say): a line, with the extremes as dots, of the
    groups ``compared`` as the headline names them (not the open one)."""
    ax.plot(*decimate(positions, values), color=NEUTRAL, linewidth=1.6)
    if compared.sum() >= 2:
        ranked = np.where(compared, values, np.nan)
        high, low = extreme_colors(values)
        for index, color in ((np.nanargmax(ranked), high), (np.nanargmin(ranked), low)):
            ax.scatter(
                [positions[index]], [values[index]], s=110, color=color, zorder=3, clip_on=False
            )


def _shade_blocks(ax: Axes, first_key: list[Any], positions: np.ndarray) -> None:
    """With several keys, every other block of the first key (a year, say) is shaded; a
    group at each of ``positions``."""
    starts = [i for i in range(len(first_key)) if i == 0 or first_key[i] != first_key[i - 1]]
    if len(starts) > MAX_SHADED_BLOCKS:
        return
    ends = [*starts[1:], len(first_key)]
    edges = np.append(positions, positions[-1] + 1) - 0.5  # each group's left edge, and the end
    for block, (start, end) in enumerate(zip(starts, ends, strict=True)):
        if block % 2:
            ax.axvspan(edges[start], edges[end], color=BAND, zorder=0, linewidth=0)


def _extreme_colors(values: np.ndarray, groups: Groups, shown: list[str], column: str) -> list[str]:
    """The highest in the answer's colour, the lowest in the other, each with the groups
    within its noise (``Groups.within_noise``): one orange bar of two within noise of each
    other picked a winner the text said there was none of. None of a column whose groups
    differ by no more than noise (NQ's RTH range by weekday of 2025, p = 0.9: Friday
    orange and Monday blue read as "Friday is the widest day"), nor an end that with those
    within its noise holds half the groups or more (6 of 8 hours "least often" is no end)."""
    colors = [NEUTRAL] * len(values)
    if column in groups.even:
        return colors
    high, low = groups.extremes(values, shown)
    high_color, low_color = extreme_colors(values)
    compared = int(groups.compared(values).sum())
    for end, color in ((low, low_color), (high, high_color)):
        marked = (*end, *groups.within_noise(column, end))
        if len(marked) > 1 and 2 * len(marked) >= compared:
            continue
        for at in marked:
            colors[at] = color
    return colors
