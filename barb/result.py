"""The result contract (seed 001): a compact ``summary`` for the model, full data for people.

The model only ever reads ``render_summary(result)`` (``barb.summary_text``). A small result
(up to 20 rows, or 60 of at most 100 value cells: 25 rows of 4, 40 of 2) is in its summary
whole, a row per line; a bigger one is summarized as seed 001 decided (stats of the query's
columns, each min and max named by its row, the extreme groups) plus its top and bottom rows
in the table's own order.
``table`` and ``source_rows`` are for the person (chart, CSV), ``metadata`` says what was
scanned and where the data came from (a synthetic sample is always marked as such).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field, computed_field

from barb.bar_labels import REPLACED_COLUMNS, bar_label, table_label
from barb.errors import QueryError
from barb.instruments import Instrument, load_instrument
from barb.notes import NoteSpec, NoteText, note_specs
from barb.timeframes import timeframe as timeframe_of

ResultType = Literal["scalar", "dict", "table", "grouped"]
# A result this small is shown to the model whole: a header and a line of cells per row,
# 450-650 o200k tokens for 25 rows of 4 prices or ratios (docs/benchmarks.md).
WHOLE_MAX_ROWS = 25
WHOLE_MAX_VALUES = 4
# The budget is the value cells listed, whatever their shape (the keys naming a row cost a
# few tokens, its values 3-5 each): 40 weekday × hour cells of 2 values are read whole, where
# the first and last five hid Wednesday's 13:30, the FOMC hour (p40e Q27); so are 18 years
# of 5 values, or a histogram's 37 buckets of one count. Up to this many rows.
WHOLE_MAX_CELLS = WHOLE_MAX_ROWS * WHOLE_MAX_VALUES
WHOLE_MAX_NARROW_ROWS = 60
# Up to this many rows, a result is whole however many columns it has (up to
# MAX_SHOWN_VALUES): its summary, the first and last five, the two extreme groups and a line
# of extremes per column, costs more than the rows it leaves out. 18 years of 7 columns read
# 868 o200k tokens summarized, 788 whole (docs/benchmarks.md).
WHOLE_ANY_ROWS = 20
# A bigger one: this many rows from each end, in the table's order ...
EDGE_ROWS = 5
# ... with at most this many value columns each (the rest are only named).
MAX_SHOWN_VALUES = 8
# What a table of bars shows when the query made no column of its own.
BAR_VALUES = ("open", "high", "low", "close")


class ColumnStats(BaseModel):
    """A column's extremes and mean; each extreme named by the row it is on (its bar label
    or group keys, ``["2020"]``) and by how many other rows tie with it, so that "the worst
    day, -12.6" comes with its year where the rows holding it are not listed (p40e Q11)."""

    min: float | None
    max: float | None
    mean: float | None
    min_at: list[Any] | None = None
    max_at: list[Any] | None = None
    min_ties: int = 0
    max_ties: int = 0


class Summary(BaseModel):
    """What the model is told. Values are JSON scalars, rounded to quotable digits.

    Rows of a table or of groups are lists of values under ``shown`` (the bar label or the
    group keys first): all of them in ``top`` when ``whole``, else the first and the last
    ``EDGE_ROWS`` in ``top`` and ``bottom``, in the table's ``order``.
    """

    type: ResultType
    value: Any = None
    values: dict[str, Any] | None = None
    # A single row's statistics taken over fewer rows than were kept (the others empty):
    # how many rows each is over (``barb.caveats.sample_sizes``).
    samples: dict[str, int] = Field(default_factory=dict)
    rows: int | None = None
    columns: list[str] | None = None
    by: list[str] | None = None
    # The column naming each bar (date, week, month, quarter, year; timestamp intraday).
    label: str | None = None
    shown: list[str] | None = None
    # Value columns the rows leave out (beyond MAX_SHOWN_VALUES): named, so none is missed.
    unlisted: list[str] = Field(default_factory=list)
    order: str | None = None
    # A table's rows before its limit cut them (504 gaps, 3 listed): its mean line is of
    # the rows listed, and says so.
    limited_from: int | None = None
    whole: bool = False
    top: list[list[Any]] | None = None
    bottom: list[list[Any]] | None = None
    # A table's query columns, a grouped result's value columns (the compared one first).
    stats: dict[str, ColumnStats] = Field(default_factory=dict)
    # Grouped results: the groups with the smallest and largest compared value (seed 001).
    min: dict[str, Any] | None = None
    max: dict[str, Any] | None = None
    # The part groups (of the data's unfinished year) that min, max and stats leave out,
    # each said with its values: "2026's 4 groups (part of their year; up_days 0 to 1)".
    left_out: list[str] = Field(default_factory=list)
    # The value columns that hold a time of day as minutes (hour() * 60 + minute(), a
    # day's arg_max of it, their mean or median: ``time_keys.time_kind``), by the clock's
    # zone ("ET"): the model reads each value with its clock beside it, 551.1 as 09:11, not a
    # bare 551.1 it may quote as "551" or guess at.
    clocks: dict[str, str] = Field(default_factory=dict)


class ShortWeek(BaseModel):
    """A week listed that holds fewer trading days than a full week: its label as the table
    writes it (a weekly bar's first trading date, a week() group's Monday), the days it holds
    and the weekdays it did not trade. A chart marks its bar."""

    label: str
    days: int
    closed: list[dt.date]


class Baseline(BaseModel):
    """A mean over the rows a where or an event filter picked, taken over all the period's
    rows instead (``barb.caveats.setup_noise``): NQ's next day was up after 3 down days on
    0.4952 of 517 days, and on 0.5245 of all 4,648 (``value``, ``rows``: those with a
    value). The warning says it in words; a chart draws it beside the answer's line."""

    value: float
    rows: int


class LimitTie(BaseModel):
    """A limit that cuts through a tie of a ranked table (``barb.caveats.limits``): ``tied``
    rows share the sort's value, the limit keeps the first ``kept`` of them, and those past
    it are named by their keys as text (``{"hi_day": "Fri", "hi_time": "09:00"}``), a few at
    most (``left_count`` in all). The warning says it; a chart numbers the tied bars as one
    place and notes the others."""

    tied: int
    kept: int
    left: list[dict[str, str]]
    left_count: int


class PartCounted(BaseModel):
    """A second stage's value of one group that counts a first-stage group holding only part
    of its week, month or year (``barb.caveats.part_group_feeds``): the group's keys as text
    (``{"outcome": "high first"}``), the column, its value without the part group, and that
    group's unit and label ("week", "2026-01-05"), and what cuts it (``OpenGroup.cut``: "open"
    not over yet, "data_start" begun before the data, "period" cut by the query's dates). The
    warning says it; a chart notes it."""

    keys: dict[str, str]
    column: str
    without: float
    unit: str
    label: str
    cut: str = "open"


class CutRun(BaseModel):
    """A streak run the period cuts, as its warning says it (``streak()``'s at the period's
    start, ``run_edges``' at its end): the run as counted (7, ending "2025-01-02"), and
    either the day it began before the period with the period's own longest run (began
    "2024-12-23"; 6, ending "2025-05-22") or what it went on to after the period's last row
    (7 on "2025-01-02"; ``still`` going at the data's end). A chart says it under its
    subtitle: "max_run = 7 days" over a 2025 axis had read as 2025's own (p46f Q17)."""

    length: int
    ended: str
    began: str | None = None
    inside: int | None = None
    inside_end: str | None = None
    whole: int | None = None
    whole_end: str | None = None
    still: bool = False


class UnfinishedBar(BaseModel):
    """The data's unfinished last weekly or longer bar, listed in a table of bars (weekly
    last_4_bars ending on Wednesday 2026-01-07): its label as the table writes it and the
    trading dates it covers. The warning says it in words; a chart marks its bar."""

    label: str
    first: dt.date
    last: dt.date
    # The trading days it holds so far, and those its week (month…) has on the exchange's
    # calendar ("3 of 5 days"); None where the calendar is not known for those dates.
    days: int = 0
    calendar_days: int | None = None


class Metadata(BaseModel):
    instrument: str
    session: str
    # A named session's hours on this instrument ("09:00-14:30" for CL's RTH): the model
    # knows the chat instrument's sessions, not another's.
    session_hours: str | None = None
    # A window's day, where its label does not say it ("the evening before each date").
    session_note: str | None = None
    # The clock the session's hours are on, the exchange's ("ET"); None for a window that
    # names its own zone ('10:00-11:00 Europe/Moscow'). A Moscow reader took "ASIAN
    # (18:00-03:00)" for Moscow hours (p34d).
    session_clock: str | None = None
    timeframe: str
    period_requested: str
    period_start: dt.date | None
    period_end: dt.date | None
    rows_scanned: int
    rows_matched: int
    # Plain sentences and notes (``barb.notes``): each is its English, what the model reads.
    warnings: list[NoteText] = Field(default_factory=list)
    data_source: Literal["synthetic", "imported"]
    data_description: str
    elapsed_ms: float | None = None
    truncated: bool = False
    # The group the data's end cuts short (the 4 days of 2026 by year), by its key columns'
    # values as text (``{"year": "2026"}``): a chart leaves it out of highest and lowest.
    # The warning says it in words; this is for the chart only, not in the answer's JSON.
    open_group: dict[str, str] | None = Field(default=None, exclude=True)
    # When that group tops the stage's sort: the first whole group's row among all the
    # groups, read before the limit (2021's, where 2026's 4 days rank first), so a chart
    # cut to one group still names a whole one. For the chart only, like open_group.
    first_whole: dict[str, Any] | None = Field(default=None, exclude=True)
    # The first stage's groups that the period's edges or the data's start cut (the 1-day
    # week "last_2_weeks" begins in), named like open_group: part groups a chart can draw
    # hollow and leave out of highest and lowest, as it does the open one. For the chart only.
    cut_groups: list[dict[str, str]] = Field(default_factory=list, exclude=True)
    # The first stage's groups whose statistic the data's start leaves over at most half of
    # their rows (2008's days above the 200-day mean: 60 of 259), named like cut_groups,
    # with those rows and all of theirs: drawn hollow and not ranked. For the chart only.
    begun_groups: list[tuple[dict[str, str], int, int]] = Field(default_factory=list, exclude=True)
    # The groups a warning calls too few rows to compare, by their keys as text: a chart
    # crowns none of them highest or lowest (p48f M6: February's 4 gaps, 75% filled, headed
    # a chart whose text said groups under 5 were too few). For the chart only.
    few_groups: list[dict[str, str]] = Field(default_factory=list, exclude=True)
    # A then stage's where: the first stage's rows it kept and those it was given (the weeks
    # that opened with a down Monday, of all the weeks); the chart's footer says so. For the
    # chart only, like open_group.
    then_rows: tuple[int, int] | None = Field(default=None, exclude=True)
    # The unfinished last bar a table of bars lists ("period": "last_N_bars"): the chart
    # draws it hollow and the one-row card says it is so far. For the chart only.
    open_bar: UnfinishedBar | None = Field(default=None, exclude=True)
    # The weeks listed that hold fewer trading days than a full week (a holiday in them),
    # by their label: the warning says it in words, a chart marks their bars. Chart only.
    short_weeks: list[ShortWeek] = Field(default_factory=list, exclude=True)
    # A table cut for display and drawn as rows spread over all of it: how many rows that
    # is (106,436), for the chart's footer. Set on the result the chart reads only.
    spread_over: int | None = Field(default=None, exclude=True)
    # Grouped means whose highest and lowest groups differ by less than two standard errors
    # (``barb.caveats.group_noise``; the warning says it in words): a chart says so on a line under
    # its headline, which still names the highest and the lowest. For the chart only.
    even_groups: list[str] | None = Field(default=None, exclude=True)
    # The columns whose groups are a calendar part's, each a stretch of time or few (one
    # year of months), which no test compared: no group is crowned, as of ``even_groups``.
    untested_groups: list[str] | None = Field(default=None, exclude=True)
    # The grouped means checked the same way whose groups do differ: a chart's headline
    # leads with one of them rather than one within noise. For the chart only.
    apart_groups: list[str] | None = Field(default=None, exclude=True)
    # A count's most counted group and those within its noise (the exact binomial test of
    # the two counts), and its fewest counted and those within its noise, by their keys as
    # text, by column, an end each: a chart names them together, never the first alone as
    # "most often" (p43b Q17: 1,607 'high only' beside 1,568 'low only', p = 0.5) or "least
    # often" (p43f M2: Wed 137 beside Thu 141 and Tue 142). For the chart only.
    near_groups: dict[str, list[list[dict[str, str]]]] | None = Field(default=None, exclude=True)
    # A limit that cut through a tie of the rows ranked (p48c Q35: 5 groups at 8 weeks, 3
    # kept, numbered "6., 7., 8." as places). For the chart only.
    limit_tie: LimitTie | None = Field(default=None, exclude=True)
    # Of rows ranked by a run count (streak), the run each is a row of, numbered from the
    # first, when two rows listed share one (p48f M5: 4 bars, 2 runs). For the chart only.
    same_runs: list[int] | None = Field(default=None, exclude=True)
    # The label of the period's last whole bar when the where could not judge it, next()
    # reading no bar after it (p48c Q13: "last week of the year" by year without 2025's
    # 2025-12-29, which the text warned of and the chart did not). For the chart only.
    unjudged_last: str | None = Field(default=None, exclude=True)
    # How many bars that label spans ("2024-03-26 — 2024-03-28": 3, next(close, 3)'s).
    unjudged_rows: int = Field(default=0, exclude=True)
    # Of a rank of a distance listed on one row over blended price levels, the row's rank in
    # percent of the price by column (atr_rank 66.93 in points is 1.95 in percent): the card
    # gives it under the rank, as the warning does. For the chart only.
    percent_ranks: dict[str, float] | None = Field(default=None, exclude=True)
    # A second stage's values by group that count a part week (month, year) of the first
    # stage among their rows: "high first 463 weeks" with 2026-01-05's 3 days (462 without).
    # A chart says so under its bars, as the warning does. For the chart only.
    part_counted: list[PartCounted] = Field(default_factory=list, exclude=True)
    # Streak runs the period's start or end cuts, each as a warning says it: a chart says
    # so under its subtitle. For the chart only.
    cut_runs: list[CutRun] = Field(default_factory=list, exclude=True)
    # When a streak record's longest run happened, said under the answer ("the run of 14
    # (run) ended 2020-11-10, began 2020-10-22"); None for any other answer.
    record_run: str | None = Field(default=None, exclude=True)
    # The data's last trading date: a value on an earlier row (a period that ended before
    # it) is that period's last, not "now". For the chart only.
    data_last: dt.date | None = Field(default=None, exclude=True)
    # The first stage's means under a where or an event filter, each over all the period's
    # rows too, by the answer's name: a chart draws that line beside the answer's, so the
    # person sees the 49.5% after 3 down days sits under the 52.4% of all days (p40a C3).
    # For the chart only.
    baselines: dict[str, Baseline] = Field(default_factory=dict, exclude=True)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def notes(self) -> dict[str, NoteSpec]:
        """The warnings that are notes, by their English, with their keys and values:
        ``/query`` says them in the chat's language from the answer's JSON."""
        return note_specs(self.warnings)


RowsBuilder = Callable[[], "pd.DataFrame | None"]


class _BuiltWhenRead:
    """A frame field that may be given as a function building it: built on its first read,
    then kept. The rows behind a single number are wanted for the CSV and the chart only,
    not for the answer the model reads, so ``execute`` does not pay for them."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, obj: object, owner: type) -> pd.DataFrame | None:
        if obj is None:
            return None  # the dataclass default
        value = obj.__dict__[self.slot]
        if callable(value):
            value = obj.__dict__[self.slot] = value()
        return value

    def __set__(self, obj: object, value: pd.DataFrame | RowsBuilder | None) -> None:
        obj.__dict__[self.slot] = value


@dataclass
class Result:
    """Either a computed answer or an error value; ``execute`` never raises for bad queries."""

    query: dict[str, Any]
    summary: Summary | None = None
    table: pd.DataFrame | None = None
    # The rows behind a single number, or the bars the latest rows were taken from; may be
    # given as a function that builds them (``_BuiltWhenRead``).
    source_rows: pd.DataFrame | RowsBuilder | None = _BuiltWhenRead()  # type: ignore[assignment]
    metadata: Metadata | None = None
    error: QueryError | None = None
    # Columns the query itself made (map, join, group keys, select names): stats and charts.
    focus_columns: list[str] = field(default_factory=list)
    # When the table or the rows behind a number were cut to their first rows for display:
    # what the chart draws instead, over the whole period (``barb.long_results``).
    drawn_rows: pd.DataFrame | RowsBuilder | None = _BuiltWhenRead()  # type: ignore[assignment]
    # A streak record's proof: its longest runs with the bar either side (``barb.record_runs``),
    # the CSV's rows in place of every row behind the number; None for any other answer.
    run_rows: pd.DataFrame | RowsBuilder | None = _BuiltWhenRead()  # type: ignore[assignment]

    @property
    def ok(self) -> bool:
        return self.error is None

    def for_chart(self) -> Result:
        """The result as its chart reads it: a table cut for display replaced by its rows
        spread over all of it, the rows behind a number by all of them; else itself. The
        rows are not built here when they are built when read."""
        drawn = self.__dict__.get("_drawn_rows")
        if drawn is None or self.metadata is None:
            return self
        runs = self.__dict__.get("_run_rows")
        if self.table is not None:
            total = self.summary.rows if self.summary is not None else None
            # Groups come whole (the chart thins them and says so itself): no sample.
            whole = isinstance(drawn, pd.DataFrame) and total is not None and len(drawn) >= total
            spread = None if whole else total
            meta = self.metadata.model_copy(update={"truncated": False, "spread_over": spread})
            rows = self.__dict__.get("_source_rows")
            return replace(
                self, table=drawn, metadata=meta, drawn_rows=None, source_rows=rows, run_rows=runs
            )
        meta = self.metadata.model_copy(update={"truncated": False})
        return replace(self, source_rows=drawn, metadata=meta, drawn_rows=None, run_rows=runs)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the data; ``barb query --json`` adds the text the model reads."""
        if self.error is not None:
            return {**self.error.to_dict(), "query": self.query}
        assert self.summary is not None and self.metadata is not None
        return {
            "summary": self.summary.model_dump(mode="json", exclude_none=True),
            "table": records(self.table) if self.table is not None else None,
            "source_rows": records(self.source_rows) if self.source_rows is not None else None,
            "metadata": self.metadata.model_dump(mode="json"),
            "query": self.query,
        }


def json_value(value: Any) -> Any:
    """A cell as a JSON scalar: NaN -> None, timestamps -> ISO dates, numpy -> Python."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (pd.Timestamp, dt.datetime)):
        ts = pd.Timestamp(value)
        if ts.hour == 0 and ts.minute == 0 and ts.second == 0:
            return ts.strftime("%Y-%m-%d")
        return ts.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, np.datetime64):
        return json_value(pd.Timestamp(value))
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return None if math.isnan(f) or math.isinf(f) else f
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    columns = list(frame.columns)
    return [
        {c: json_value(v) for c, v in zip(columns, row, strict=True)}
        for row in frame.itertuples(index=False, name=None)
    ]


def short_value(value: Any) -> Any:
    """Round for the model's eyes: enough digits to quote, no float noise."""
    value = json_value(value)
    if isinstance(value, float):
        if value == 0:  # -0.0 too: "-0" would read as a small loss
            return 0.0
        if abs(value) >= 100:
            return round(value, 2)
        digits = max(2, 3 - math.floor(math.log10(abs(value))))
        return round(value, digits)
    return value


def _row(frame: pd.DataFrame, position: int, columns: list[str]) -> dict[str, Any]:
    return {c: short_value(_values(frame[c])[position]) for c in columns if c in frame.columns}


def _values(series: pd.Series) -> Any:
    """The column's values as an array: numpy for plain dtypes, else pandas' own array.

    Reading cells from it costs a fraction of ``iloc`` and ``itertuples`` on the few rows a
    summary lists, which is most of a small result's fixed cost.
    """
    return series.to_numpy() if isinstance(series.dtype, np.dtype) else series.array


def _stats(
    series: pd.Series, frame: pd.DataFrame | None = None, keys: Sequence[str] = ()
) -> ColumnStats | None:
    """Min, max and mean of a numeric column; with ``keys``, each extreme named by the keys'
    values on its first row in ``frame`` and the count of other rows equal to it."""
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return None
    # numpy on the float values: the same sums and extremes as pandas' skipna reductions,
    # without their per-call overhead (a summary reads a few small columns).
    values = series.to_numpy(dtype="float64", na_value=np.nan)
    missing = np.isnan(values)
    count = len(values) - int(missing.sum())
    if not count:
        return ColumnStats(min=None, max=None, mean=None)
    # The mean as pandas takes it: missing values summed as zeros, divided by the count.
    total = np.where(missing, 0.0, values).sum() if count < len(values) else values.sum()
    low, high = int(np.nanargmin(values)), int(np.nanargmax(values))
    stats = ColumnStats(
        min=short_value(values[low]),
        max=short_value(values[high]),
        mean=short_value(total / count),
    )
    if frame is not None and keys:
        stats.min_at, stats.max_at = _key_values(frame, low, keys), _key_values(frame, high, keys)
        stats.min_ties = int((values == values[low]).sum()) - 1
        stats.max_ties = int((values == values[high]).sum()) - 1
    return stats


def _own_dates(table: pd.DataFrame) -> str | None:
    """The table's first column when it is dates that name each row once (a daily listing's
    ``date()``), else None."""
    if not len(table.columns):
        return None
    first = table[table.columns[0]]
    dated = pd.api.types.is_datetime64_any_dtype(first)
    return str(table.columns[0]) if dated and first.notna().all() and first.is_unique else None


def _key_values(frame: pd.DataFrame, position: int, keys: Sequence[str]) -> list[Any]:
    return [short_value(_values(frame[k])[position]) for k in keys]


def sort_order(sort: Sequence[tuple[str, bool]]) -> str:
    """``sorted by chg_pct ascending, then date descending``."""
    keys = [f"{name} {'descending' if descending else 'ascending'}" for name, descending in sort]
    return "sorted by " + ", then ".join(keys)


def _list_rows(summary: Summary, table: pd.DataFrame, keys: list[str], values: list[str]) -> None:
    """All rows when the result is small, else the first and the last few, in table order;
    each row its keys (bar label, group keys) and at most MAX_SHOWN_VALUES values."""
    n = len(table)
    shown = keys + values[:MAX_SHOWN_VALUES]
    summary.shown, summary.unlisted = shown, values[MAX_SHOWN_VALUES:]
    # The value cells alone are counted, not the keys: CPI days' mean range by hour and by
    # cpi (2 keys, 46 rows) hid the 08:00 rows the question was about when they were.
    cells = n * (len(shown) - len(keys))
    summary.whole = n <= WHOLE_ANY_ROWS or (n <= WHOLE_MAX_NARROW_ROWS and cells <= WHOLE_MAX_CELLS)
    if summary.whole:
        summary.top = _cells(table, shown, 0, n)
    else:
        summary.top = _cells(table, shown, 0, EDGE_ROWS)
        summary.bottom = _cells(table, shown, n - EDGE_ROWS, n)


def _cells(frame: pd.DataFrame, columns: list[str], start: int, stop: int) -> list[list[Any]]:
    # Column by column, only the rows listed: a big table's columns are never copied.
    values = [_values(frame[c])[start:stop] for c in columns]
    return [[short_value(v) for v in row] for row in zip(*values, strict=True)]


def summarize_table(
    table: pd.DataFrame,
    stat_columns: list[str],
    value_columns: list[str],
    *,
    timeframe: str | None = None,
    sort: Sequence[tuple[str, bool]] = (),
) -> Summary:
    """Rows result: count, stats of the query's own columns, and the rows themselves (all of
    a small table; the top and bottom of a big one, in its order).

    ``value_columns`` are the query's columns (its select, or its map and sort columns); a
    table of plain bars shows their open, high, low and close. Each row is named by the bar
    label that ``barb.bar_labels`` put first (intraday: the timestamp).
    """
    label = table_label(table, timeframe) if timeframe else None
    if label is None and "timestamp" in table.columns:
        label = "timestamp"
    hidden = set(REPLACED_COLUMNS) if label and label != "timestamp" else set()
    values = [c for c in dict.fromkeys(value_columns) if c in table.columns]
    values = [c for c in values if c != label and c not in hidden]
    if not values:
        values = [c for c in BAR_VALUES if c in table.columns]
    if not values:
        values = [c for c in table.columns if c != label and c not in hidden]
    # Each extreme named by its bar: "max=23.95" alone left the month out (p40e Q15); by the
    # query's own date() where it stands first in place of the label ("max=10" of a listing
    # that selected date() named no day).
    named_by = label or _own_dates(table)
    stats = {}
    for name in dict.fromkeys(stat_columns):
        if name in table.columns and name not in hidden and name not in (label, named_by):
            col_stats = _stats(table[name], table, [named_by] if named_by else ())
            if col_stats is not None:
                stats[name] = col_stats
    summary = Summary(
        type="table",
        rows=len(table),
        columns=list(table.columns),
        label=label,
        order=sort_order(sort) if sort else "in time order",
        stats=stats,
    )
    if len(table):
        _list_rows(summary, table, [label] if label else [], values)
        if label == "timestamp" and timeframe and timeframe_of(timeframe).intraday:
            _with_midnight_clock(summary)
    return summary


def _with_midnight_clock(summary: Summary) -> None:
    """Intraday rows name their bar by date and time, 00:00 too: a cell reads a midnight
    timestamp as a date, and the hourly row "2026-01-06" between 23:00 and 01:00 read as a
    day."""
    at = [s.min_at for s in summary.stats.values()] + [s.max_at for s in summary.stats.values()]
    for row in [*(summary.top or []), *(summary.bottom or []), *(a for a in at if a)]:
        if isinstance(row[0], str) and len(row[0]) == len("2026-01-06"):
            row[0] += " 00:00"


def summarize_grouped(
    table: pd.DataFrame,
    by: list[str],
    value_columns: list[str],
    *,
    sort: Sequence[tuple[str, bool]] = (),
    counts: Collection[str] = (),
    made: Collection[str] = (),
) -> Summary:
    """Groups result: how many, every group when they are few; otherwise the groups with the
    smallest and largest value of the column the question is about (``_compared_column``),
    every value column's stats with the groups of its extremes (that column first), and the
    first and last groups in order. Years of mean range, std, worst and best day named their
    extremes by the mean range alone: 2020's -12.6% worst day was in no line (p40e Q11)."""
    order = sort_order(sort) if sort else "ordered by " + ", ".join(by)
    summary = Summary(
        type="grouped", rows=len(table), by=by, columns=list(table.columns), order=order
    )
    if not len(table):
        return summary
    values = [c for c in value_columns if c in table.columns and c not in by]
    _list_rows(summary, table, list(by), values)
    if not values:
        return summary
    main = _compared_column(table, values, sort, counts, made)
    numeric = table[main]
    if numeric.dtype.kind == "f":  # numbers already: no conversion, no Series of flags
        known = not np.isnan(numeric.to_numpy()).all()
    else:
        numeric = pd.to_numeric(numeric, errors="coerce")
        known = bool(numeric.notna().any())
    if known:
        col_stats = _stats(numeric, table, by)
        if col_stats is not None:
            summary.stats = {main: col_stats}
        floats = numeric.to_numpy(dtype="float64")
        shown = summary.shown or []
        summary.min = _row(table, int(np.nanargmin(floats)), shown)
        summary.max = _row(table, int(np.nanargmax(floats)), shown)
    if not summary.whole:  # listed whole, every extreme is in sight
        for name in (summary.shown or [])[len(by) :]:
            col_stats = None if name in summary.stats else _stats(table[name], table, by)
            if col_stats is not None and col_stats.min is not None:
                summary.stats[name] = col_stats
    return summary


@dataclass(frozen=True)
class PartGroup:
    """Groups holding part of their period (the data's unfinished year), as the summary
    names them: ``label`` 2026, ``unit`` year, and which of the table's rows they are."""

    label: str
    unit: str
    rows: np.ndarray


def compare_whole_groups(summary: Summary, table: pd.DataFrame, parts: Sequence[PartGroup]) -> None:
    """Name the highest and lowest of whole groups only, when a part group would be one, and
    say which were left out: year by weekday named "lowest up_days: year=2026, wd=Tue,
    up_days=0, days=1", a 1-day group, where the whole years' lowest was 17 of 52 days."""
    if not parts or summary.type != "grouped" or not summary.stats or summary.min is None:
        return  # no part group: the highest and lowest named are whole groups'
    column = next(iter(summary.stats))
    if column not in table.columns:
        return
    values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype="float64")
    part = np.zeros(len(table), dtype=bool)
    for group in parts:
        part |= group.rows
    whole = ~part & np.isfinite(values)
    if not whole.any() or not (part & np.isfinite(values)).any():
        return
    lo, hi = values[whole].min(), values[whole].max()
    if not ((values[part] < lo) | (values[part] > hi)).any():
        return  # no part group is an extreme: nothing named changes
    shown = summary.shown or []
    at = np.flatnonzero(whole)
    summary.min = _row(table, int(at[np.argmin(values[at])]), shown)
    summary.max = _row(table, int(at[np.argmax(values[at])]), shown)
    # Every column's figures across groups, of the whole groups alone.
    kept = table[~part].reset_index(drop=True)
    keys = [k for k in summary.by or [] if k in kept.columns]
    for name in list(summary.stats):
        if name in kept.columns:
            stats = _stats(kept[name], kept, keys)
            if stats is not None:
                summary.stats[name] = stats
    cells = _values(table[column])  # as the rows print them: 0, not 0.0
    for group in parts:
        held = np.flatnonzero(group.rows & np.isfinite(values))
        if not len(held):
            continue
        low = short_value(cells[held[np.argmin(values[held])]])
        high = short_value(cells[held[np.argmax(values[held])]])
        span = f"{low}" if low == high else f"{low} to {high}"
        count = int(group.rows.sum())
        name = group.label if count == 1 else f"{group.label}'s {count} groups"
        summary.left_out.append(f"{name} (part of their {group.unit}; {column} {span})")


def _compared_column(
    table: pd.DataFrame,
    values: list[str],
    sort: Sequence[tuple[str, bool]] = (),
    counts: Collection[str] = (),
    made: Collection[str] = (),
) -> str:
    """The value column whose highest and lowest group a grouped summary names: the sort's
    (the order the question asked for), else the first number that is not a count of rows,
    one a second stage's map ``made`` from the groups first; as the chart's headline picks
    it. Weeks with ``count() as days, first(before) as start, last(close) as finish`` and
    ``then.map ret_pct``, sorted by ret_pct, read "lowest days: week=2024-12-30 …
    ret_pct=0.8137" (its 2 days) while the worst week lost 5.893%."""
    numbers = [
        c
        for c in values
        if pd.api.types.is_numeric_dtype(table[c]) and not pd.api.types.is_bool_dtype(table[c])
    ]
    sorted_by = [name for name, _ in sort[:1] if name in numbers]
    uncounted = [c for c in numbers if c not in counts]
    found = [*sorted_by, *(c for c in uncounted if c in made), *uncounted]
    return found[0] if found else values[0]


def label_meaning(summary: Summary, timeframe: str) -> str | None:
    """What the bar label names, when that is not obvious from its values."""
    label = bar_label(timeframe)
    if label is None or summary.label not in (label.column, label.beside):
        return None
    return label.meaning


def result_instrument(result: Result) -> Instrument | None:
    """The instrument ``result`` was computed on; None when it is not known, or its file is
    gone since the query ran (charts and exports then go without it)."""
    if result.metadata is None:
        return None
    try:
        return load_instrument(result.metadata.instrument)
    except Exception:
        return None
