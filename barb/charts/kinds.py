"""What a number means, read from the query and the result's shape, where that decides the
chart: a correlation (a scatter of its two columns), or a value "now" (the series it is the
latest value of: over the whole period, unless nothing but the value now was asked)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from barb.bar_labels import bar_label
from barb.charts.answers import CORRELATION, Aggregate, final_stage, read_aggregates
from barb.charts.columns import PRICE_COLUMNS, is_number, latest_known, time_column
from barb.charts.value_text import is_finite_number
from barb.lineage import Lineage, calls_behind, group_key_names
from barb.result import Result
from barb.script import ast
from barb.time_keys import calendar_keys, calendar_part, minutes_of_day

TIME_SORT_COLUMNS = ("timestamp", "trading_date", "date")
BETA = "beta"  # beta(col, market): the slope of col on market
# A value "now" and nothing else (``last(rsi14)`` over all data) is drawn over this many bars
# up to it: eighteen years of 5-minute RSI squeezed into a phone's width show nothing.
VIEW_BARS = 500
# A column made by one of these is a running total or extreme: a level carried from row to
# row, drawn as a line even through rows a where picked (an equity curve over the Mondays).
RUNNING = frozenset({"cummax", "cummin", "cumsum", "cumprod"})
# Columns made by these read the whole period (the drawdown from the period's high, the
# rank among its days): their value now is read against all of it, so all of it is drawn.
PERIOD_WIDE = RUNNING | {"rank"}


@dataclass(frozen=True)
class Window:
    """The latest bars a chart draws when it leaves the earlier ones out: its first and last
    day and how many bars, said in the chart's header."""

    start: dt.date
    end: dt.date
    bars: int


@dataclass(frozen=True)
class Correlation:
    answer: Aggregate
    x: str
    y: str


@dataclass(frozen=True)
class Latest:
    """A value "now": the series ``column`` over ``rows`` (in time order), ending at the
    answer ``value`` on the row ``at`` (a position in ``rows``)."""

    column: str
    rows: pd.DataFrame
    time: str
    value: float
    at: int
    # The rows were picked by a filter: the latest of them is the last match, not "now".
    picked: bool = False
    left_out: int = 0  # rows behind the answer that ``rows`` leaves out, not drawn

    @property
    def window(self) -> Window | None:
        """The bars drawn, when others were left out."""
        if not self.left_out:
            return None
        times = pd.to_datetime(self.rows[self.time])
        return Window(times.min().date(), times.max().date(), len(self.rows))


def is_now(result: Result, now: Latest) -> bool:
    """Whether the value is today's: not the last of rows a filter picked (the last golden
    cross), nor the last of a period that ended before the data's last trading date ("z
    now: 1.54" was the period 2025's last value, the data ran on to 2026-01-07)."""
    if now.picked:
        return False
    last = result.metadata.data_last if result.metadata is not None else None
    column = "trading_date" if "trading_date" in now.rows.columns else now.time
    if last is None or column not in now.rows.columns:
        return True
    return pd.Timestamp(now.rows[column].iloc[now.at]).date() >= last


def rows_picked(result: Result) -> bool:
    """Whether a where or an event filter picked the rows: not consecutive bars, and the
    latest of them is not the latest bar."""
    if result.query.get("where"):
        return True
    joins = result.query.get("join") or []
    return any(isinstance(j, dict) and j.get("filter") in ("only", "exclude") for j in joins)


def running_columns(result: Result, names: list[str]) -> frozenset[str]:
    """Those of ``names`` made by a running total or extreme (``RUNNING``), through names
    and a scaling or shift by a number (``"equity_usd": "cumsum(pnl) * 20"``), in either
    stage: ``equity`` of a then stage's ``cumsum(pnl)``."""
    lineage = Lineage(result.query)
    running = set()
    for name in names:
        expr = lineage.values_of(name, frozenset())
        while isinstance(expr, ast.Binary) and expr.op in ("+", "-", "*", "/"):
            if ast.literal_value(expr.right) is not None:
                expr = expr.left
            elif expr.op in ("+", "*") and ast.literal_value(expr.left) is not None:
                expr = expr.right
            else:
                break
        if isinstance(expr, ast.Call) and expr.name.lower() in RUNNING:
            running.add(name)
    return frozenset(running)


def calendar_labels(result: Result, names: list[str]) -> frozenset[str]:
    """Those of ``names`` that are their row's own place in the calendar or on the clock
    (``barb.time_keys.calendar_keys``): a label of the row, never a value to draw.
    ``"select": ["year()", "ret_pct", "rng_pct"]`` on weekly bars drew 18 equal bars reading
    "2,008" … "2,025" and left the returns to the CSV."""
    return calendar_keys(result.query, names)


def in_time_order(rows: pd.DataFrame, time_col: str) -> pd.DataFrame:
    """The rows oldest first (a series is drawn left to right), with a fresh index."""
    if not rows[time_col].is_monotonic_increasing:
        rows = rows.sort_values(time_col, kind="stable")
    return rows.reset_index(drop=True)


def correlation(result: Result) -> Correlation | None:
    """The correlation answered, when both its arguments are columns of the rows behind it.
    A ``beta(col, market)`` puts the market on x, so the fit line drawn is the beta: drawn
    the other way (``correlation(nq_ret, es_ret)``'s order) its slope was 0.64 for a beta
    of 1.31."""
    rows = result.source_rows
    if result.summary is None or result.summary.type not in ("scalar", "dict") or rows is None:
        return None
    found: Correlation | None = None
    for agg in read_aggregates(result):
        pair = _two_columns(agg, rows)
        if pair is None:
            continue
        if agg.func == BETA:
            return Correlation(agg, x=pair[1], y=pair[0])
        if agg.func in CORRELATION and found is None:
            found = Correlation(agg, *pair)
    return found


def _two_columns(agg: Aggregate, rows: pd.DataFrame) -> tuple[str, str] | None:
    """A two-column call's arguments, when both are numeric columns of ``rows``."""
    if len(agg.args) != 2 or not all(agg.args):
        return None
    x, y = agg.args
    assert x is not None and y is not None
    if all(c in rows.columns and is_number(rows[c]) for c in (x, y)):
        return x, y
    return None


def latest(result: Result) -> Latest | None:
    """``last(rsi14)`` over bars, or the latest bar (``sort: timestamp desc``, ``limit: 1``)
    with the bars before it: the series, ending at the value asked for."""
    summary, rows = result.summary, result.source_rows
    if summary is None or rows is None or rows.empty:
        return None
    if result.metadata is not None and result.metadata.truncated:
        # The rows kept are the first 50,000 of more: "now" is not among them, and the value
        # was marked on 2010's bars under the headline "close now: 25,600 (2010-03-16)".
        return None
    time_col = time_column(rows)
    if time_col is None:
        return None
    if summary.type in ("scalar", "dict"):
        for agg in read_aggregates(result):
            if agg.func == "last" and agg.column in rows.columns and is_number(rows[agg.column]):
                rows = in_time_order(rows, time_col)
                at = latest_known(rows, agg.column, time_col)
                value = agg.value if is_finite_number(agg.value) else np.nan
                at = len(rows) - 1 if at is None else at
                aggs = read_aggregates(result)
                names = [n for a in aggs for n in (a.name, *a.args) if n is not None]
                now = Latest(agg.column, rows, time_col, value, at, rows_picked(result))
                return _shown(now, whole=_history_asked(result, names, aggs))
        return None
    table = result.table
    stage = final_stage(result.query)
    sort = str(stage.get("sort") or "").split()
    if summary.type != "table" or table is None or len(table) != 1 or not sort:
        return None  # "the last 10 days" are the 10 rows the person got, not 500 bars before
    if sort[0] not in TIME_SORT_COLUMNS:
        return None  # the top day by a value is no "now": the bars kept are those it beat
    column = next(
        (
            c
            for c in result.focus_columns
            if c in table.columns
            and c in rows.columns
            and c not in PRICE_COLUMNS
            and is_number(rows[c])
        ),
        "close" if "close" in rows.columns else None,
    )
    if column is None or time_col not in table.columns:
        return None
    when = table[time_col].max()  # the latest row, however the table is sorted
    rows = in_time_order(rows, time_col)
    matches = (rows[time_col] == when).to_numpy().nonzero()[0]
    if not len(matches):
        return None
    at = int(matches[-1])
    value = float(rows[column].iloc[at])
    now = Latest(column, rows, time_col, value, at, rows_picked(result))
    return _shown(now, whole=_history_asked(result, [column, *result.focus_columns], []))


def _history_asked(result: Result, names: list[str], answers: list[Aggregate]) -> bool:
    """Whether the answer reads the whole period, so that all of it is drawn: the query names
    a period, an answer is not a value now (``first(open)``, ``min(low)``, a median), or one
    is made with a running extreme, total or rank over the period. Drawn over its last 500
    bars, "the drawdown since 2020 and now" started at -52% and never showed 2020's low."""
    if result.query.get("period"):
        return True
    if any(answer.func != "last" for answer in answers):
        return True
    calls = (call for name in names for call in calls_behind(result.query, name))
    return any(call.name.lower() in PERIOD_WIDE for call in calls)


def _shown(now: Latest, *, whole: bool) -> Latest:
    """``now`` over the rows drawn: all of them, or the latest ``VIEW_BARS`` up to its row."""
    if whole:
        return now
    start = max(0, now.at - VIEW_BARS + 1)
    rows = now.rows.iloc[start : now.at + 1].reset_index(drop=True)
    left_out = len(now.rows) - len(rows)
    return replace(now, rows=rows, at=now.at - start, left_out=left_out)


def sorted_by_time(result: Result, table: pd.DataFrame) -> bool:
    """Whether the final stage sorts by a time: the bars' own, or a group key holding dates
    (``date()``, ``week()``), times of day (``time()``, ``hour()``) or years, months and
    quarters. That order is the calendar's, not a ranking: the last ten days grouped by
    ``date()`` and sorted "date desc" were headlined "day_high: #1 2026-01-07" and numbered
    "1. … 10." like a top ten, though 2026-01-06's high was higher."""
    sort = str(final_stage(result.query).get("sort") or "").split(",")[0].split()
    if not sort:
        return False
    name = sort[0]
    if name in TIME_SORT_COLUMNS:
        return True
    then = result.query.get("then")
    stages = [result.query, then] if isinstance(then, dict) and then else [result.query]
    if name not in table.columns or all(name not in group_key_names(s) for s in stages):
        return False
    column = table[name]
    if pd.api.types.is_datetime64_any_dtype(column):
        return True
    query = result.query
    return minutes_of_day(name, column, query) is not None or calendar_part(name, query) is not None


def latest_asked(result: Result, table: pd.DataFrame) -> bool:
    """Whether a listing asks for its latest rows, so that the latest row's values are its
    answer: sorted by time, newest first, and cut to a few ("the last three down days"), or
    a period counted in bars back from the data's end ("how did NQ do yesterday",
    ``last_2_bars``). Any other listing's answer is its extremes: "range = 751.25 points
    (2025-12-10)" headed all 89 FOMC days, the widest being 796.5 on 2021-04-28."""
    stage = final_stage(result.query)
    sort = str(stage.get("sort") or "").split(",")[0].split()
    label = bar_label(result.metadata.timeframe) if result.metadata is not None else None
    newest = len(sort) == 2 and sort[1].lower() == "desc" and bool(stage.get("limit"))
    by_time = sorted_by_time(result, table) or (label is not None and sort[:1] == [label.column])
    if newest and by_time:  # "week desc": the weekly bars' label
        return True
    period = str(result.query.get("period") or "")
    return period.startswith("last_") and period.endswith("_bars")


def sorted_column(result: Result, table: pd.DataFrame) -> str | None:
    """The column a sorted short list (sort and limit) ranks by: the sort column, or, when
    the query sorted by a column it did not select ("sort": "abs_move desc" with "select":
    ["move", "range"]), the first number it did select, shown in that order."""
    stage = final_stage(result.query)
    sort = str(stage.get("sort") or "").split(",")[0].split()
    if not sort or not stage.get("limit") or (len(table) < 2 and sort[0] not in table.columns):
        return None
    if sorted_by_time(result, table):  # the last 3 years by year(): time order, no rank
        return None
    if sort[0] in table.columns and not _listed_beside(result, sort[0]):
        return sort[0] if is_number(table[sort[0]]) else None
    if sort[0] in TIME_SORT_COLUMNS:
        return None
    shown = [c for c in result.focus_columns if c in table.columns and is_number(table[c])]
    return shown[0] if shown else None


def unshown_sort(result: Result, table: pd.DataFrame) -> tuple[str, bool] | None:
    """The column a sorted short list ranks by when the query did not select it, and whether
    it ranks from the lowest ("sort": "range desc" with "select": ["d", "close"]): the rows'
    order is that column's, the values shown are another's."""
    sort = str(final_stage(result.query).get("sort") or "").split(",")[0].split()
    if not sort or sort[0] in TIME_SORT_COLUMNS:
        return None
    if sort[0] in table.columns and not _listed_beside(result, sort[0]):
        return None
    return sort[0], len(sort) == 1 or sort[1].lower() == "asc"


def _listed_beside(result: Result, column: str) -> bool:
    """Whether ``column`` is a sort key the table lists after what the query selected (for
    the model to read the order), not one of the selected: the chart draws the selection."""
    return bool(final_stage(result.query).get("select")) and column not in result.focus_columns


def ranked_lowest_first(result: Result, column: str) -> bool:
    """Whether a sorted short list ranks ``column`` from its lowest value: "sort": "avg_vol
    asc" puts the quietest hour first, and "#1 20:00 4,635 contracts" read as the busiest."""
    sort = str(final_stage(result.query).get("sort") or "").split(",")[0].split()
    return len(sort) >= 1 and sort[0] == column and (len(sort) == 1 or sort[1].lower() == "asc")
