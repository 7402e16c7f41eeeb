"""Bind and plan: a query's names checked against an instrument, and how it will run.

Binding resolves every name (instrument, session, timeframe, period, joins, columns,
functions) and collects every problem before any data is touched. Planning decides, one
function per clause, what runs where: which expressions are evaluated on the bars around the
period (map, where, group keys, row selections, and the order-dependent parts of aggregates,
so ``prev()`` and indicators see the history before the period) and how far back that
history must go (``Reach``).
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import Any

import numpy as np
import pandas as pd

from barb.bar_labels import bar_label
from barb.bar_times import hour_where_caveat
from barb.errors import (
    ArgumentError,
    DataError,
    InvalidPeriod,
    InvalidSession,
    NoData,
    QueryError,
    QueryTooLarge,
    UnknownColumn,
    UnknownEvent,
    UnknownSession,
    UnknownTimeframe,
    raise_collected,
)
from barb.events import resolve_event
from barb.frames import BAR_COLUMNS, Dataset, get_dataset
from barb.instruments import (
    Instrument,
    SessionSpec,
    available_instruments,
    format_clock,
    load_instrument,
    parse_clock,
)
from barb.lineage import (
    Lineage,
    emptied_off,
    kept_by_own_run,
    nodes,
    number_comparisons,
    through_map,
)
from barb.notes import DEFAULT_SESSION, NO_FROM, WHOLE_DAY, Note
from barb.plan_warnings import (
    other_point_value_caveat,
    restarted_in_first,
    running_across_groups,
)
from barb.script.ast import (
    Call,
    Column,
    Compare,
    Expr,
    Node,
    default_name,
    literal_value,
    walk,
    with_children,
)
from barb.script.columns_read import columns_read
from barb.script.daily_calls import DAILY_ARGUMENTS, UNIT_WORDS
from barb.script.hoisting import hoist
from barb.script.library import contains_aggregate, lookup
from barb.script.parser import parse_expression, parse_select_item
from barb.script.periods import Period, parse_period
from barb.script.query import JoinSpec, Query, SortKey, Stage
from barb.script.reach import map_reach, reach, reads_other_bars
from barb.script.validator import FirstStageColumns, SelectNames, bind_arguments, validate
from barb.script.warmup import ROW, Reach
from barb.session_concepts import missing_session_text
from barb.session_times import SessionTimes
from barb.settings import EngineSettings
from barb.time_keys import CARRIES_VALUE
from barb.timeframes import (
    DAILY_AND_LONGER,
    TIMEFRAMES,
    Timeframe,
    session_without_one,
    timeframe,
)
from barb.value_ranges import out_of_range

# Names of the columns an instrument join adds, after the symbol's prefix ("es_close").
JOINED_BAR_COLUMNS = ("open", "high", "low", "close", "volume")
# Prefix of internal columns; it cannot start a Barb Script name, so no query can reach them.
HIDDEN = "·"


# What ``StagePlan.derived`` holds for a key not built yet (None is a fact too).
_MISSING = object()


@dataclass(frozen=True)
class SelectItem:
    expr: Expr
    name: str
    aggregate: bool


@dataclass(frozen=True)
class StagePlan:
    """One stage's clauses, checked against the columns it starts from."""

    map_exprs: tuple[tuple[str, Expr], ...]
    where: Expr | None
    group_keys: tuple[tuple[str, Expr], ...]
    select: tuple[SelectItem, ...]
    sort: tuple[SortKey, ...]
    limit: int | None
    # Order-dependent parts of aggregates' arguments, computed per row before rows are cut.
    hoisted: tuple[tuple[str, Expr], ...] = ()
    # The bar label column a row result starts with, if its bars have one.
    label: str | None = None

    @property
    def shape(self) -> str:
        if self.group_keys:
            return "grouped"
        if self.select and all(item.aggregate for item in self.select):
            return "scalar" if len(self.select) == 1 else "dict"
        return "table"

    @property
    def picks_rows(self) -> bool:
        """Whether the answer is some of the period's rows: those a where keeps, or the
        bars a table's limit lists ("the last 3 FOMC days"). What is said of the rows kept
        is said of those."""
        return self.where is not None or (self.shape == "table" and self.limit is not None)

    @cached_property
    def calls(self) -> frozenset[str]:
        """Every function the stage calls (lower case), through its map's names: read by the
        caveats of each run, worked out once per plan."""
        return frozenset(call.name.lower() for call in self.call_nodes())

    @cached_property
    def reading_other_bars(self) -> frozenset[str]:
        """The functions the stage calls that read bars before or after their own (prev(),
        rsi(), rolling_mean()…): on the bars of a part of the day they read across days."""
        return frozenset(call.name.lower() for call in self.call_nodes() if reads_other_bars(call))

    @cached_property
    def comparisons(self) -> frozenset[str]:
        """Every comparison operator the stage uses (``<``, ``==``), through its map's
        names: a caveat about a threshold asks it before it walks the query."""
        mapped = dict(self.map_exprs)
        return frozenset(
            node.op
            for expr in self.expressions
            for node in nodes(expr, mapped)
            if isinstance(node, Compare)
        )

    @cached_property
    def names_read(self) -> frozenset[str]:
        """The column names the stage reads, through its map's names, and its sort keys: of
        a then stage, which of the first stage's columns it uses."""
        mapped = dict(self.map_exprs)
        named = {
            node.name
            for expr in self.expressions
            for node in nodes(expr, mapped)
            if isinstance(node, Column)
        }
        return frozenset(named | {key.column for key in self.sort})

    @cached_property
    def reads_ahead(self) -> bool:
        """Whether the where reads bars after its own (next(), through the map): then it
        has no value on the period's last rows, which a run counts."""
        if self.where is None:
            return False
        return reach(self.where, map_reach(self.map_exprs)).ahead > 0

    def derived(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """A fact of the stage's expressions alone, built at its plan's first run and kept
        with the plan (``plan_query`` keeps plans of queries asked again): the parts of a
        where each run reads its groups' sizes by, the sides it lists beside its rows, the
        units of the columns it summarises. ``key`` names the fact and what it is of."""
        found = self._derived.get(key, _MISSING)
        if found is _MISSING:
            found = self._derived.setdefault(key, build())
        return found

    @cached_property
    def _derived(self) -> dict[Hashable, Any]:
        return {}

    def number_comparisons(self, is_value: Callable[[Node], bool]) -> list[Compare] | None:
        """The comparisons with a number the stage reads the value ``is_value`` picks through
        (``barb.lineage.number_comparisons``); None when it reads the value itself, in an
        expression, a sort or a table that lists every column."""
        if self.shape == "table" and not self.select:
            return None  # every column listed, the value's among them
        # What the answer reads: the map's entries through the names it reads them by.
        exprs = [expr for _, expr in self.group_keys] + [item.expr for item in self.select]
        exprs += [self.where] if self.where is not None else []
        exprs += [Column(key.column) for key in self.sort]
        mapped = dict((*self.map_exprs, *self.hoisted))
        return number_comparisons(exprs, mapped, is_value)

    def call_nodes(self) -> Iterator[Call]:
        """Every call of the stage's expressions, through its map's names."""
        mapped = dict(self.map_exprs)
        for expr in self.expressions:
            for node in nodes(expr, mapped):
                if isinstance(node, Call):
                    yield node

    @property
    def expressions(self) -> tuple[Expr, ...]:
        """Every expression of the stage: those evaluated row by row, then its select's."""
        return (*self.row_exprs, *(item.expr for item in self.select))

    @property
    def row_exprs(self) -> tuple[Expr, ...]:
        """Every expression evaluated row by row before the rows are cut."""
        exprs = [e for _, e in self.map_exprs] + [e for _, e in self.group_keys]
        exprs += [e for _, e in self.hoisted]
        exprs += [s.expr for s in self.select if not s.aggregate]
        return tuple(exprs) + ((self.where,) if self.where is not None else ())

    def output_columns(self, columns: set[str]) -> set[str]:
        if self.group_keys:
            return {name for name, _ in self.group_keys} | {s.name for s in self.select}
        if self.select and self.select[0].aggregate:
            return {s.name for s in self.select}
        rows = {s.name for s in self.select} if self.select else set(columns)
        return rows | ({self.label} if self.label else set())


@dataclass(frozen=True)
class JoinedInstrument:
    """Another instrument joined bar by bar, and the session its bars are read in."""

    join: JoinSpec
    dataset: Dataset
    # The query's session name read with this instrument's own hours (CL's RTH is not NQ's),
    # or, when the query wrote a time window, the same clock hours.
    session: str


@dataclass(frozen=True)
class Plan:
    """A query bound to its data: everything needed to run it."""

    query: Query
    dataset: Dataset
    session: str
    timeframe: Timeframe
    period: Period
    events: tuple[JoinSpec, ...]
    instruments: tuple[JoinedInstrument, ...]
    first: StagePlan
    then: StagePlan | None
    # How many bars before and after the period the row expressions read.
    reach: Reach
    warnings: tuple[str, ...]
    # "The period 2025:2026 is only partly covered …" when the period runs past the data's
    # end alone: said unless a group the data's end cuts is said instead ("The year 2026 is
    # not over …", its days against a whole year's), which says the same (p48d C6).
    past_end: str | None = None
    # Whether the bars' range is read or shown: built per query, 1-minute bars have it
    # only then (``barb.period_rows``).
    reads_range: bool = True
    # ``reach`` when it is all history only for counts since an event (streak, bars_since,
    # ffill), with those read as their own row: the rest's reach, the first stage then run
    # on rows back to each one's event (``barb.script.event_history``). None otherwise.
    event_reach: Reach | None = None

    @cached_property
    def reads_clock(self) -> bool:
        """Whether a stage calls hour() or time() (by any of their names): the clock
        readings ``barb.caveats.zone_midnight`` finds all begin at one, so a query calling
        neither has no clock column to name (RSI of 5-minute bars, an EMA cross), and its
        intraday runs skip reading for them."""
        stages = (self.first, self.then) if self.then is not None else (self.first,)
        called = {name for stage in stages for name in stage.calls}
        return any(name in CLOCK_READINGS or _canonical(name) in CLOCK_READINGS for name in called)

    @property
    def point_values(self) -> frozenset[float]:
        """A contract's dollars per point of the instrument and of each joined one (NQ's 20,
        ES's 50): points times one of them are dollars (``barb.column_units``)."""
        instruments = [self.dataset.instrument, *(j.dataset.instrument for j in self.instruments)]
        return frozenset(i.point_value for i in instruments)


# The calls a clock reading begins at (``barb.caveats.zone_midnight``'s ``_CLOCKS``; a
# minute of the day, ``barb.time_keys.time_kind``'s, reads one of them too).
CLOCK_READINGS = frozenset({"hour", "time"})


def _canonical(name: str) -> str:
    """A function's own name for ``name``, one of its aliases (as a call is looked up)."""
    spec = lookup(name)
    return spec.name if spec is not None else name.lower()


# Plans of queries asked before, by (data directory, query text, limit), while their
# dataset is the one loaded: a repeated question (a benchmark's repeats, "again, for 2023"
# after a retry) binds nothing twice. When a data or instrument file changes, its dataset is
# a new object and every plan is dropped, so none keeps the old data alive.
_PLANS: dict[tuple[str, str, int], Plan] = {}
_PLANNED_ON: dict[tuple[str, str], Dataset] = {}
_MAX_PLANS = 512


def plan_query(query: Query, symbol: str, settings: EngineSettings) -> Plan:
    """Bind ``query`` (run on ``symbol`` unless it names its own instrument) and plan it."""
    query = query.with_instrument(symbol)
    assert query.instrument is not None
    dataset = get_dataset(query.instrument, settings)
    data_dir = str(settings.data_dir)
    if _PLANNED_ON.get((data_dir, query.instrument)) is not dataset:
        _PLANS.clear()
        _PLANNED_ON[(data_dir, query.instrument)] = dataset
    key = (data_dir, json.dumps(query.to_json(), sort_keys=True), settings.max_limit)
    cached = _PLANS.get(key)
    if cached is not None:
        return cached
    plan = _plan(query, dataset, settings)
    if not plan.instruments:  # another instrument's data may be reloaded apart from this one
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def _plan(query: Query, dataset: Dataset, settings: EngineSettings) -> Plan:
    errors: list[QueryError] = []
    warnings: list[str] = []

    tf, session = _timeframe_and_session(query, dataset, warnings)
    period = parse_period(
        query.period, dataset.last_date, dataset.first_date, lambda: _day_before_last(dataset)
    )
    if period.note:
        warnings.append(period.note)
    past_end = _check_coverage(period, dataset, warnings)
    period = period.within(dataset.first_date, dataset.last_date)

    columns = set(BAR_COLUMNS)
    events = _bind_events(query, dataset, columns, errors)
    instruments = _bind_instruments(query, dataset, session, settings, columns, errors)
    warnings += _session_hours_differ(dataset, session, instruments)
    label = bar_label(tf.name)
    first = _plan_stage(
        query,
        columns,
        errors,
        settings,
        prefix="",
        label=label.column if label else None,
        instrument=dataset.instrument,
        timeframe=tf,
    )
    then = None
    if query.then is not None:
        then = _plan_then(query.then, first, columns, errors, settings, dataset.instrument)
    errors += _daily_off_intraday(first, tf)
    raise_collected(_follows_a_failed_join(errors))
    check_volumes(dataset, first, period)
    warnings += _fractional_percentiles(first, then)
    joined = {j.dataset.instrument.symbol for j in instruments}
    warnings += _windows_at_another_open(query.session, dataset, settings, joined, first, then)
    warnings += _running_across_groups(first, then, period, dataset)
    bars = dataset.instrument.session(session)
    warnings += _hours_off_the_clock(query, first, then, tf, bars)
    warnings += hour_where_caveat(first.where, dict(first.map_exprs), tf, bars, dataset.instrument)
    warnings += _running_before_where(first)
    warnings += other_point_value_caveat(
        (*first.map_exprs, *((item.name, item.expr) for item in first.select)),
        dataset.instrument,
        joined,
        query.to_json(),
        settings,
    )

    mapped = map_reach(first.map_exprs)
    needed = ROW
    for expr in first.row_exprs:
        needed = needed.widest(reach(expr, mapped))
    event_reach = None
    if needed.back is None and not instruments:
        # (A join's rows before the period are read another way: ``bars_in_scope``.)
        to_event = map_reach(first.map_exprs, to_event=True)
        event_reach = ROW
        for expr in first.row_exprs:
            event_reach = event_reach.widest(reach(expr, to_event, to_event=True))
        if event_reach.back is None or event_reach.units:
            event_reach = None
    return Plan(
        query=query,
        dataset=dataset,
        session=session,
        timeframe=tf,
        period=period,
        events=events,
        instruments=instruments,
        first=first,
        then=then,
        reach=needed,
        warnings=tuple(warnings),
        past_end=past_end,
        reads_range="range" in _bar_columns_read(first),
        event_reach=event_reach,
    )


def _daily_off_intraday(first: StagePlan, tf: Timeframe) -> list[QueryError]:
    """daily() brings a daily value onto intraday rows, weekly() and monthly() theirs onto
    daily or intraday rows; on bars of the call's own unit it would be the expression itself,
    lagged (prev()), and on longer bars (or a month's on weekly bars, whose weeks may lie in
    two months) a date inside each bar: one way to write each, so it is refused with the form
    to use."""
    errors: list[QueryError] = []
    seen: set[str] = set()
    for expr in _stage_exprs(first):
        for node in walk(expr):
            if not (isinstance(node, Call) and node.name in DAILY_ARGUMENTS and node.args):
                continue
            if tf.intraday or (tf.name == "daily" and node.name != "daily"):
                continue
            if node.to_text() in seen:
                continue
            seen.add(node.to_text())
            inner = node.args[0].to_text()
            unit = UNIT_WORDS[node.name]
            daily_bars = 'compute it on daily bars ("from": "daily")'
            if tf.name == node.name:
                hint = f"on {tf.name} bars write {inner} itself; the {unit} before's: prev({inner})"
            elif DAILY_AND_LONGER.index(tf.name) > DAILY_AND_LONGER.index(node.name):
                hint = f"{daily_bars}, or as {inner} on these"
            else:  # a month's value on weekly bars
                hint = f"{daily_bars}: a week can lie in two months"
            shorter = (
                "intraday rows (1m … 4h)" if node.name == "daily" else "daily or intraday rows"
            )
            errors.append(
                ArgumentError(
                    f"{node.to_text()} brings a value of the session's {node.name} bars onto "
                    f"{shorter}; these rows are {tf.name} bars.",
                    step="from",
                    hint=hint,
                )
            )
    return errors


def _fractional_percentiles(*stages: StagePlan | None) -> list[str]:
    """percentile(x, 0.9) is the 0.9th percentile: p runs 0 to 100, and a fraction there is
    nearly always the 90th written as a share."""
    warnings = []
    for stage in stages:
        for item in stage.select if stage is not None else ():
            for node in walk(item.expr):
                if not (isinstance(node, Call) and node.name == "percentile" and node.args[1:]):
                    continue
                p = literal_value(node.args[1])
                if isinstance(p, int | float) and 0 < p < 1:
                    warnings.append(
                        f"{node.to_text()} is the {p:g}th percentile (p runs 0 to 100); for "
                        f"the {p * 100:g}th write percentile({node.args[0].to_text()}, "
                        f"{p * 100:g})."
                    )
    return warnings


def _running_across_groups(
    first: StagePlan, then: StagePlan | None, period: Period, dataset: Dataset
) -> list[str]:
    """cummax(close) grouped by year() runs from the period's start, not each year's; in
    then.map, from the first stage's first row. Not said where the period is one group: in
    the first stage one that begins where its unit does (the restart reads a unit's days
    before the period), in then any (it reads nothing before the first stage's rows)."""
    warnings = []
    for stage, over, whole in ((first, "the whole period", True), (then, _THEN_ROWS, False)):
        if stage is None or not stage.group_keys:
            continue
        read = [item.expr for item in stage.select]
        read += [stage.where] if stage.where is not None else []
        mapped = dict(stage.map_exprs) | dict(stage.hoisted)
        keys, restart = stage.group_keys, None
        if not whole:  # a then key names a first-stage column: month() there (p46t C)
            keys = tuple((name, _through_first(key, mapped, first)) for name, key in keys)
            if not _rows_dated(first):
                restart = partial(restarted_in_first, where=first.where is not None)
        warnings += running_across_groups(
            keys,
            read,
            mapped,
            over=over,
            one_group=lambda unit, whole=whole: _one_group(period, dataset, unit, whole=whole),
            restart=restart,
        )
    return warnings


def _through_first(key: Expr, mapped: dict[str, Expr], first: StagePlan) -> Expr:
    """A then stage's group key as the first stage made it: ``month`` selected there from
    its map's ``month()`` is month(). Barb's own hint for a then stage's month() (map it in
    the first stage and group by it) had hidden the month() from the warning that cumsum(1)
    runs over every row of the first stage, and "22, 43, 63 … 259 trading days" by month
    was listed without a word (p46t C)."""
    expr = through_map(key, mapped)
    if not isinstance(expr, Column):
        return expr
    made = {item.name: item.expr for item in first.select if not item.aggregate}
    made |= dict(first.group_keys)  # a key the select names ("month") is the key's
    if not first.select and not first.group_keys:  # the bars pass through, map columns too
        made |= dict(first.map_exprs)
    found = made.get(expr.name)
    return key if found is None else through_map(found, dict(first.map_exprs))


def _rows_dated(first: StagePlan) -> bool:
    """Whether a then stage's rows have dates a running call can restart by: the bars
    themselves (the first stage neither selects nor groups), or the trading dates the first
    stage grouped by (``date()``, ``barb.caveats.then_history.day_key``)."""
    if not first.select and not first.group_keys:
        return True
    if len(first.group_keys) != 1:
        return False
    key = through_map(first.group_keys[0][1], dict(first.map_exprs))
    return isinstance(key, Call) and key.name.lower() == "date" and not key.args


# What a then stage's running function runs over.
_THEN_ROWS = "every row of the first stage"
# The pandas periods of the calendar units a running function restarts at (weeks from Monday).
_UNIT_PERIODS = {"day": "D", "week": "W-SUN", "month": "M", "quarter": "Q", "year": "Y"}


def _one_group(period: Period, dataset: Dataset, unit: str, *, whole: bool) -> bool:
    """Whether the period's trading dates lie in one ``unit`` (2024 in one year) and, when
    ``whole``, the data has no trading date of that unit before the period's first (2024's
    first is 2024-01-02; from 2024-06-03 cummax(close, 'year') reads January to May)."""
    if period.bars is not None:
        return False
    start = max(period.start or dataset.first_date, dataset.first_date)
    end = min(period.end or dataset.last_date, dataset.last_date)
    group = pd.Period(start, _UNIT_PERIODS[unit])
    if group != pd.Period(end, _UNIT_PERIODS[unit]):
        return False
    if not whole:
        return True
    dates = dataset.trading_dates()
    begins = np.datetime64(group.start_time.date(), "ns")
    return not ((dates >= begins) & (dates < np.datetime64(start, "ns"))).any()


# Running functions a trader reaches for to follow trades: an equity (cumsum of each trade's
# points) and a losing streak. Over the bars a where keeps they are buy-and-hold numbers.
_TRADE_RUNS = frozenset({"cumsum", "streak"})


def _running_before_where(first: StagePlan) -> list[str]:
    """cumsum() or streak() under a where: they run over every bar, before where keeps rows.
    "Equity of the RSI(2) < 10 trades" as cumsum(pts) with that where read +19,009 points,
    the market's; the trades' own is −4,317. Said, with the then form that follows them.
    A where that reads the run itself ("where": "run >= 5", or a run_end made from it) keeps
    rows by the run's value over every bar, which is what it asks: not said. Nor is a streak
    whose own condition the where reads: "above and not next(above)" keeps each run's last
    day, where streak(above) is the run's length (p39b Q23: the then form it pointed to
    numbered the run ends). Nor one whose argument is empty on the bars the where drops
    (cumsum(if(rsi2 < 10, pts, 0 / 0)) under "where": "rsi2 < 10"): it skips them."""
    if first.where is None or not first.select:
        return []
    mapped = dict(first.map_exprs) | dict(first.hoisted)
    filtered_on = {node.to_text() for node in nodes(first.where, mapped) if isinstance(node, Call)}
    calls: dict[str, Call] = {}
    ranks: dict[str, Call] = {}
    for item in first.select:
        for node in nodes(item.expr, mapped):
            if not (isinstance(node, Call) and node.args) or node.to_text() in filtered_on:
                continue
            if node.name.lower() == "streak" and kept_by_own_run(first.where, node, mapped):
                continue
            if emptied_off(first.where, node, mapped):  # the kept rows' own run
                continue
            if node.name.lower() in _TRADE_RUNS:
                calls.setdefault(node.to_text(), node)
            elif node.name.lower() == "rank":
                ranks.setdefault(node.to_text(), node)
    if not calls:
        return _rank_before_where(ranks)
    text, call = next(iter(calls.items()))
    columns = _then_select(call)
    return [
        f"{', '.join(calls)} ran over every bar, before where kept the rows: not the kept "
        "rows' own (a strategy's equity or losing streak). For those, select the columns it "
        f'reads and run it in then: "select": [{columns}], "then": {{"map": {{"run": '
        f'"{text}"}}, "select": …}}.'
    ]


def _rank_before_where(ranks: dict[str, Call]) -> list[str]:
    """rank() under a where ranks every bar of the period, the where's rows among them:
    "today's range percentile among regular days" (not holiday() and not early_close())
    read 22.09, ranked over all 258 days, where among the 247 kept it is 20.65 (p33d M3).
    Said, both ways: a where that picks today wants its place among every day."""
    if not ranks:
        return []
    text, call = next(iter(ranks.items()))
    columns = _then_select(call)
    return [
        f"{text} ranks every bar of the period, before where kept the rows: each kept row's "
        "place among all of them (right for today's place in all history). Among the kept "
        f'rows only, select what it reads and rank in then: "select": [{columns}], "then": '
        f'{{"map": {{"rk": "{text}"}}, …}}.'
    ]


def _then_select(call: Call) -> str:
    """The first stage's select a then stage needs to run ``call`` over the kept rows: the
    date and the columns its first argument reads ('"date()", "pts"')."""
    read = sorted({n.name for n in walk(call.args[0]) if isinstance(n, Column)})
    return ", ".join(f'"{name}"' for name in ["date()", *read])


def _hours_off_the_clock(
    query: Query, first: StagePlan, then: StagePlan | None, tf: Timeframe, session: SessionSpec
) -> list[str]:
    """hour() as a group key on bars that do not start on the hour: RTH's 1h bars start at
    09:30, so "hour 15" is the bar 15:30-16:30 and a chart read it as 15:00 (the busiest hour,
    15:00-16:00, came out as 40,050 contracts for 58,401); 5m bars' hour 9 holds only 09:30-
    09:59. So is a second stage's key that holds a first stage's hour(): "which hour makes
    the day's high" as arg_max(hour(), high) as h by date(), then group_by h, listed 9 … 16
    for the bars from 09:30 … 16:30 (p32c #25)."""
    offset = session.start_minute % 60
    if not tf.intraday or not offset:
        return []
    mapped = dict(first.map_exprs)
    for _, key in first.group_keys:
        expr = through_map(key, mapped)
        if isinstance(expr, Call) and expr.name.lower() == "hour" and not expr.args:
            return [_off_the_clock_text(tf, session, "hour", "hour() is", "Group by time()")]
    lineage = Lineage(query.to_json())
    for name, _ in then.group_keys if then is not None else ():
        source = lineage.values_of(name, CARRIES_VALUE)
        if not (isinstance(source, Call) and source.name.lower() == "hour" and not source.args):
            continue
        found = lineage.definition(name)
        made = _hour_as_time(found[0]) if found is not None else None
        fix = f"Select {made.to_text()} as {name}" if made else "Take time() for hour()"
        return [_off_the_clock_text(tf, session, name, f"{name} is hour(),", fix)]
    return []


def _off_the_clock_text(
    tf: Timeframe, session: SessionSpec, key: str, subject: str, fix: str
) -> str:
    """What hour() names on bars from a session open off the hour, said of ``subject``
    ("hour() is", "h is hour(),") and its values (``key`` 9), and ``fix``, the form that
    names each bar by its start: "hour 9 is the bar 09:30-10:30, …, hour 16 the bar
    16:30-17:00"."""
    opens, step = session.start_minute, tf.minutes or 60
    first_hour = opens // 60
    if step % 60:
        return (
            f"{subject} the clock hour a bar starts in, and the session starts at "
            f"{session.start}: {key} {first_hour} holds only the bars from {session.start}."
        )
    last = opens + (session.length_minutes - 1) // step * step
    bars = f"{key} {first_hour} is the bar {session.start}-{format_clock(opens + step)}"
    if last > opens:
        end = opens + session.length_minutes
        bars += f", …, {key} {last // 60 % 24} the bar {format_clock(last)}-{format_clock(end)}"
    return (
        f"{subject} the clock hour a bar starts in, and these {tf.name} bars start at "
        f":{opens % 60:02d} ({session.start}, …): {bars}. {fix} to name each bar by its start."
    )


def _hour_as_time(expr: Expr) -> Expr | None:
    """``expr`` with time() for each hour() in it (arg_max(hour(), high) → arg_max(time(),
    high)); None when it calls no hour() itself (it reads a map column of one)."""
    if isinstance(expr, Call) and expr.name.lower() == "hour" and not expr.args:
        return replace(expr, name="time")
    changed = with_children(expr, lambda child: _hour_as_time(child) or child)
    return changed if changed != expr else None


# Functions that read the bars' volume inside, without a column argument to name it.
_VOLUME_CALLS = frozenset({"vwap", "mfi", "obv", "session_volume"})


def _computes_volume(first: StagePlan) -> bool:
    """Whether the first stage computes from the bars' volume (not only shows it)."""
    exprs = (*first.row_exprs, *(item.expr for item in first.select))
    return (
        bool(first.calls & _VOLUME_CALLS)
        or any(key.column == "volume" for key in first.sort)
        or any("volume" in columns_read(expr) for expr in exprs)
    )


def check_volumes(dataset: Dataset, first: StagePlan, period: Period | None = None) -> None:
    """A question of volume on data imported without it (a file with no volume column,
    stored with volume 0 on every bar) is refused: "mean(volume)" answered 0, with no word
    that the data holds no volumes. So is one over the dates of such data that a file with
    volumes was added to before the mix was refused: their zeros were averaged in without
    a word. Only imported data is looked at, once per data file."""
    if dataset.meta.source != "imported" or not _computes_volume(first):
        return
    volume = dataset.bars.frame["volume"]
    meta = dataset.meta
    if not dataset.derived("has_volume", lambda: bool(volume.to_numpy().any())):
        raise NoData(
            f"{dataset.instrument.symbol} data holds no volumes: it was imported from "
            f"{meta.source_file or 'a file'} without a volume column, and every bar's volume "
            "is stored as 0, so volume cannot be answered from it.",
            step="select",
            hint="Answer from prices only and say that the data has no volumes; a file with a "
            "volume column, imported with --replace, brings them.",
        )
    silent = dataset.derived("dates_without_volume", lambda: _dates_without_volume(dataset))
    inside = _within_period(silent, period, dataset)
    if inside.size == 0:
        return
    days = [str(pd.Timestamp(d).date()) for d in inside]
    named = ", ".join(days[:5]) + (f" … {days[-1]}" if len(days) > 5 else "")
    raise NoData(
        f"{dataset.instrument.symbol} data holds no volumes on {len(days)} trading "
        f"date{'s' if len(days) > 1 else ''} of the period ({named}): they were imported "
        "without a volume column and stored as 0, so a volume statistic over them would "
        "count them as bars without trades.",
        step="select",
        # The way to mend the data, for the operator the answer is passed on to.
        hint="Ask again over a period without those dates and say that they have no volumes; "
        f"`barb data import FILE -i {dataset.instrument.symbol} --fill-volumes` fills them in "
        "from a file that has them.",
    )


def _dates_without_volume(dataset: Dataset) -> np.ndarray:
    """The trading dates (datetime64[ns]) whose every bar has volume 0."""
    frame = dataset.bars.frame
    traded = frame["volume"].to_numpy() != 0
    dates = frame["trading_date"].to_numpy()
    starts = np.flatnonzero(np.r_[True, dates[1:] != dates[:-1]])
    any_traded = np.maximum.reduceat(traded.astype(np.int8), starts) if len(dates) else []
    return dates[starts][np.asarray(any_traded) == 0]


def _within_period(dates: np.ndarray, period: Period | None, dataset: Dataset) -> np.ndarray:
    """``dates`` the period may reach: from ``start`` to ``end``; a last-N-bars period
    as its last N trading dates (N bars of any timeframe span at most N dates back, or N
    whole calendar units: then every date up to ``end``)."""
    if period is None:
        return dates
    keep = np.ones(dates.size, dtype=bool)
    if period.end is not None:
        keep &= dates <= np.datetime64(period.end, "ns")
    if period.start is not None:
        keep &= dates >= np.datetime64(period.start, "ns")
    elif period.bars is not None and period.unit is None:
        all_dates = dataset.trading_dates()
        if period.end is not None:
            all_dates = all_dates[all_dates <= np.datetime64(period.end, "ns")]
        if all_dates.size > period.bars:
            keep &= dates >= all_dates[-period.bars]
    return dates[keep]


def _bar_columns_read(first: StagePlan) -> set[str]:
    """The bar columns the first stage reads or shows: all of them when it shows bars
    whole (a table of rows, or the rows behind a single number)."""
    if first.shape in ("scalar", "dict") or (first.shape == "table" and not first.select):
        return set(BAR_COLUMNS)
    read = {key.column for key in first.sort}
    for expr in (*first.row_exprs, *(item.expr for item in first.select)):
        read |= columns_read(expr)
    return read


# --- instrument, session, timeframe, period ---------------------------------------------


def _timeframe_and_session(
    query: Query, dataset: Dataset, warnings: list[str]
) -> tuple[Timeframe, str]:
    name = query.timeframe
    if name is None:
        name = "daily"
        warnings.append(Note.of(NO_FROM))
    tf = timeframe(name)
    check_interval(dataset, tf)
    if query.session:
        session = session_name(dataset, query.session)
    elif tf.intraday:
        session = session_without_one(tf, dataset.instrument.default_session)
        warnings.append(
            Note.of(WHOLE_DAY, timeframe=tf.name, default=dataset.instrument.default_session)
        )
    else:
        session = session_without_one(tf, dataset.instrument.default_session)
        warnings.append(Note.of(DEFAULT_SESSION, timeframe=tf.name, session=session))
    check_session_edges(dataset, session, tf.intraday)
    return tf, session


def check_interval(dataset: Dataset, tf: Timeframe) -> None:
    """Bars finer than the data's own (imported with --interval) cannot be built from it."""
    have = dataset.meta.interval_minutes
    if have == 1 or tf.minutes is None or tf.minutes % have == 0:
        return
    coarser = [t for t in TIMEFRAMES.values() if t.minutes is not None and t.minutes % have == 0]
    raise UnknownTimeframe(
        f"{dataset.instrument.symbol} data holds {have}-minute bars, so {tf.name} bars cannot "
        "be built from it.",
        step="from",
        hint=f"Use {', '.join(t.name for t in coarser)} or daily and longer.",
    )


def _bar_offset(dataset: Dataset, have: int) -> int:
    """The minute (modulo the bar length) at which most of the data's bars open: 0 for
    hourly bars on the hour, 30 for hourly bars on the half hour."""
    minute = dataset.bars.frame["minute"].to_numpy()
    return int(np.bincount(minute % have, minlength=have).argmax())


def check_session_edges(dataset: Dataset, session: str, intraday: bool = False) -> None:
    """A session that starts or ends inside the data's bars (imported with --interval)
    cannot be taken from them: a bar belongs to the session it opens in, so NQ's RTH
    (09:30-17:00) on hourly bars on the hour read 10:00-17:00, and its daily range left out
    the opening half hour without a word (Monday's mean 327.33 where the minute bars give
    329.92). An edge whose bar trades only on the session's side of it (the rest lies in
    the daily break) cuts nothing: ETH (18:00-17:00) on hourly bars on the half hour, the
    first of which trades 18:00-18:30, was refused. Its ``intraday`` bars are still
    refused: they are counted from the session's start (18:00, 19:00 …), between the
    data's bars."""
    have = dataset.meta.interval_minutes
    if have == 1:
        return
    spec = dataset.instrument.session(session)
    if spec.zone is not None:  # its exchange hours move with two clocks: checked by bar
        return
    offset = dataset.derived(f"bar_offset_{have}", partial(_bar_offset, dataset, have))
    day = 24 * 60
    brk = dataset.instrument.maintenance_break
    shut = (parse_clock(brk.start), parse_clock(brk.end)) if brk is not None else None

    def closed(start: int, length: int) -> bool:
        """Whether the ``length`` minutes from ``start`` lie in the daily break."""
        return shut is not None and (start - shut[0]) % day + length <= (shut[1] - shut[0]) % day

    def fits(minute: int, how: str) -> bool:
        """Whether an edge at ``minute`` cuts no bar's trading: it is on the bars' edges,
        or the part of its bar beyond it lies in the daily break (hourly bars on the half
        hour hold 17:30-18:30, but trade only from 18:00: ETH starts on that bar whole)."""
        into = (minute - offset) % have
        if into == 0:
            return True
        if how == "starts":
            return not intraday and closed(minute - into, into)
        return closed(minute, have - into)

    edges = [("starts", spec.start_minute), ("ends", spec.end_minute)]
    inside = [(how, minute) for how, minute in edges if not fits(minute, how)]
    if not inside:
        return
    how, edge = inside[0]
    bar = (edge - (edge - offset) % have) % day
    symbol = dataset.instrument.symbol
    fitting = [
        f"{name} ({named.hours})"
        for name, named in dataset.instrument.sessions.items()
        if named.zone is None
        and fits(named.start_minute, "starts")
        and fits(named.end_minute, "ends")
    ]
    start, end = spec.start_minute, spec.end_minute
    down = (start - (start - offset) % have) % day
    up = (end + (offset - end) % have) % day
    window = f"'{format_clock(down)}-{format_clock(up)}'"
    if intraday and how == "starts" and closed(bar, (edge - bar) % day):
        raise InvalidSession(
            f"{symbol} data holds {have}-minute bars opening at {format_clock(bar)}, "
            f"{format_clock((bar + have) % day)} and so on; intraday bars of session "
            f"{session} ({spec.hours}) are counted from its {format_clock(edge)} start, "
            "between the data's bars, so they cannot be built from them.",
            step="session",
            hint=f"Use daily bars of {session} (these bars hold its hours whole), or a "
            f"session the bars start on: {', '.join(fitting) or 'none'}; and say so in the "
            "answer.",
        )
    raise InvalidSession(
        f"{symbol} data holds {have}-minute bars opening at {format_clock(bar)}, "
        f"{format_clock((bar + have) % day)} and so on; session {session} ({spec.hours}) "
        f"{how} at {format_clock(edge)}, inside the {format_clock(bar)} bar, so its hours "
        "cannot be taken from these bars.",
        step="session",
        hint=f"Use a session on the bars' edges: {', '.join(fitting)}, or the window "
        f"{window}, which holds {spec.hours}; and say so in the answer.",
    )


def session_name(dataset: Dataset, name: str) -> str:
    """The session's one spelling; UnknownSession names the real ones, InvalidSession a bad
    time window. A session another instrument has (CASH on CL) is told what to use instead."""
    try:
        return dataset.instrument.session_key(name)
    except UnknownSession as exc:
        instead = missing_session_text(name, SessionTimes(dataset.instrument))
        if instead is None:
            raise
        raise UnknownSession(exc.message, step=exc.step, hint=instead, details=exc.details) from exc


def _day_before_last(dataset: Dataset) -> dt.date | None:
    """The data's trading date before its last one: "yesterday" as the data counts it."""
    dates = dataset.trading_dates()
    at = int(np.searchsorted(dates, np.datetime64(dataset.last_date, "ns")))
    return dates[at - 1].astype("datetime64[D]").item() if at > 0 else None


def _check_coverage(period: Period, dataset: Dataset, warnings: list[str]) -> str | None:
    """A period outside the data is an error naming what exists; one partly outside, a
    warning, returned instead when the period runs past the data's end alone (``Plan.past_end``)."""
    first, last = dataset.first_date, dataset.last_date
    covers = f"data covers {first} to {last}"
    symbol = dataset.instrument.symbol
    if (period.start is not None and period.start > last) or (
        period.end is not None and period.end < first
    ):
        raise InvalidPeriod(
            f"No {symbol} data in {period.text}; {covers}.",
            step="period",
            hint=f"Ask about a period between {first} and {last}.",
        )
    starts_before = period.start is not None and _weekdays_between(period.start, first) > 1
    ends_after = period.end is not None and _weekdays_between(last, period.end) > 1
    said = f"The period {period.text} is only partly covered: {covers}."
    if starts_before:
        warnings.append(said)
    return said if ends_after and not starts_before else None


def _weekdays_between(start: dt.date, end: dt.date) -> int:
    return int(np.busday_count(np.datetime64(start, "D"), np.datetime64(end, "D")))


# Functions whose first argument is a session or a time window.
_SESSION_FUNCTIONS = frozenset(f"session_{part}" for part in JOINED_BAR_COLUMNS)


def _windows_at_another_open(
    session: str | None,
    dataset: Dataset,
    settings: EngineSettings,
    joined: set[str],
    *stages: StagePlan | None,
) -> list[str]:
    """A window starting at another instrument's open but not this one's is most likely that
    instrument's times carried over (NQ's opening range '09:30-09:45' written for CL, whose
    RTH opens 09:00): said, with this instrument's own open. Not when that instrument is
    joined: then its hours are meant (CL with NQ joined over NQ's '09:30-17:00'); nor when
    the query also reads the window that ends where it starts: a row of clock hours
    ('08:00-09:00' and '09:00-10:00' on NQ, 13:00 UTC in winter and in summer), not another
    instrument's open."""
    written = [session] if session else []
    for stage in stages:
        for expr in _stage_exprs(stage):
            for node in walk(expr):
                if isinstance(node, Call) and node.name in _SESSION_FUNCTIONS and node.args:
                    value = literal_value(node.args[0])
                    if isinstance(value, str):
                        written.append(value)
    ours = dataset.instrument
    own_open = ours.sessions[ours.default_session].start
    others = [load_instrument(s, settings) for s in available_instruments(settings)]
    warnings = []
    windows = [w for w in dict.fromkeys(_window_hours(ours, text) for text in written) if w]
    ends = {window.split("-")[1] for window in windows}
    for window in windows:
        start = window.split("-")[0]
        if start == own_open or start in ends:
            continue
        opened = [i for i in others if i.sessions[i.default_session].start == start]
        if opened and not joined & {i.symbol for i in opened}:
            names = ", ".join(f"{i.symbol}'s {i.default_session}" for i in opened)
            warnings.append(
                f"'{window}' starts at the open of {names} ({start}), not {ours.symbol}'s: "
                f"{ours.symbol}'s {ours.default_session} opens at {own_open} (its first 15 "
                f"minutes are '{ours.window_example}'). A clock hour meant as written "
                "(another time zone's, in ET) is right as it is."
            )
    return warnings


def _stage_exprs(stage: StagePlan | None) -> tuple[Expr, ...]:
    if stage is None:
        return ()
    return stage.row_exprs + tuple(item.expr for item in stage.select)


def _window_hours(instrument: Instrument, text: str) -> str | None:
    """``text`` as 'HH:MM-HH:MM' when it is a valid time window; a bad one has its own error."""
    try:
        return instrument.written_window(text)
    except QueryError:
        return None


# --- joins ----------------------------------------------------------------------------------


def _bind_events(
    query: Query, dataset: Dataset, columns: set[str], errors: list[QueryError]
) -> tuple[JoinSpec, ...]:
    events = []
    for join in query.join:
        if join.source is None:
            continue
        try:
            resolve_event(join.source, dataset.instrument, step="join")
        except QueryError as exc:
            errors.append(exc)
        # Named even when the event is unknown, so its one error is not followed by one per
        # use of its column (a name with a space fails to parse: see _follows_a_failed_join).
        columns |= {join.source, f"{join.source}_minutes"}
        events.append(join)
    return tuple(events)


def _follows_a_failed_join(errors: list[QueryError]) -> list[QueryError]:
    """``errors`` without those that only repeat an unknown event's: "join": "fomc meeting"
    with "group_by": "fomc meeting" also read "Syntax error … unexpected name 'meeting'"
    and its hint on combining conditions, beside the join's did-you-mean (p34c C2)."""
    failed = [e.details.get("event", "") for e in errors if isinstance(e, UnknownEvent)]
    if not failed:
        return errors
    return [
        e
        for e in errors
        if e.step == "join" or not any(name and name in e.message for name in failed)
    ]


def _bind_instruments(
    query: Query,
    dataset: Dataset,
    session: str,
    settings: EngineSettings,
    columns: set[str],
    errors: list[QueryError],
) -> tuple[JoinedInstrument, ...]:
    # A window the query wrote is clock hours for every instrument; only a name it wrote (or
    # the default) is read with each instrument's own hours.
    window = dataset.instrument.written_window(query.session) if query.session else None
    bound = []
    for join in query.join:
        if join.instrument is None:
            continue
        # Named even when the join fails, so its one error is not followed by one per use.
        columns |= {join.prefix + name for name in JOINED_BAR_COLUMNS}
        if join.instrument == dataset.instrument.symbol:
            errors.append(
                ArgumentError(
                    f"The query already runs on {join.instrument}; join another instrument.",
                    step="join",
                    hint='e.g. {"instrument": "NQ", "join": {"instrument": "ES"}}',
                )
            )
            continue
        try:
            other = get_dataset(join.instrument, settings)
            if join.session is None:
                theirs = _joined_session(dataset, other, window or session)
            else:
                theirs = _own_joined_session(other, join.session, query.timeframe or "daily")
            check_interval(other, timeframe(query.timeframe or "daily"))
            check_session_edges(other, theirs, timeframe(query.timeframe or "daily").intraday)
        except QueryError as exc:
            errors.append(exc)
            continue
        except DataError:
            errors.append(
                NoData(
                    f"No {join.instrument} data is loaded, so it cannot be joined.",
                    step="join",
                    hint=f"Load it with `barb data sample --instrument {join.instrument}` or "
                    f"`barb data import FILE --instrument {join.instrument}`.",
                )
            )
            continue
        bound.append(JoinedInstrument(join, other, theirs))
    return tuple(bound)


def _joined_session(dataset: Dataset, other: Dataset, session: str) -> str:
    """``session`` on the joined instrument; a name it lacks is an error whose hint gives the
    hours to write as a window instead."""
    try:
        return session_name(other, session)
    except UnknownSession as exc:
        ours = dataset.instrument.sessions.get(session)
        if ours is None:
            raise
        raise UnknownSession(
            f"{exc.message} The join reads the query's session on {other.instrument.symbol} "
            "by name.",
            step="join",
            hint=f"For the same clock hours on both, write the session as the window "
            f"'{ours.hours}' ({session}'s hours on {dataset.instrument.symbol}).",
        ) from exc


def _own_joined_session(other: Dataset, session: str, tf: str) -> str:
    """A session the join names for its instrument: daily and longer bars are matched on the
    date (or week …), so another session's bars line up; intraday bars are matched on their
    time, which another session's do not share."""
    if timeframe(tf).intraday:
        raise ArgumentError(
            f"A join's own session needs daily or longer bars; {tf} bars are matched on their "
            "time.",
            step="join",
            hint='Use "from": "daily" (e.g. CL\'s OVERNIGHT beside NQ\'s RTH day: "session": '
            '"RTH", "join": {"instrument": "CL", "session": "OVERNIGHT"}), or drop the '
            "join's session.",
        )
    try:
        return session_name(other, session)
    except (UnknownSession, InvalidSession) as exc:
        # A new error naming the join's step: the instrument caches its resolution, errors
        # too, so the one raised is shared with the next query's session (step "session").
        raise type(exc)(exc.message, step="join", hint=exc.hint, details=exc.details) from exc


def _session_hours_differ(
    dataset: Dataset, session: str, instruments: tuple[JoinedInstrument, ...]
) -> list[str]:
    """A session name is read with each instrument's own hours (CL's RTH is 09:00-14:30, NQ's
    09:30-17:00): said, so a comparison is read for what it is. A window has the same hours
    on both sides."""
    ours = dataset.instrument.session(session)
    warnings = []
    for joined in instruments:
        theirs = joined.dataset.instrument.session(joined.session)
        # Another session asked for: said, not warned of (the same name is read as usual).
        if joined.join.session is not None and joined.session != session:
            other = joined.dataset.instrument
            # A window's own text is its hours; one from the trading day's start on is the
            # evening before each date (CL's 20:00-02:00 beside NQ's RTH of the 5th is the
            # night of the 4th), which a name like OVERNIGHT says and a window does not.
            hours = "" if joined.session == theirs.hours else f" ({theirs.hours})"
            window = joined.session not in other.sessions and theirs.zone is None
            if window and theirs.start_minute >= other.trading_day_start_minute:
                hours += ", from the evening before each date"
            warnings.append(
                f"{other.symbol}'s bars are its {joined.session}{hours}, matched to "
                f"{dataset.instrument.symbol}'s {session} ({ours.hours}) bars by date: a "
                "different session, as the join asked."
            )
        elif theirs.hours != ours.hours:
            warnings.append(
                f"{session} is {ours.hours} for {dataset.instrument.symbol} but "
                f"{theirs.hours} for {joined.dataset.instrument.symbol}: the joined bars "
                f"cover different hours (write the window '{ours.hours}' for the same clock "
                "hours on both)."
            )
    return warnings


# --- stages ---------------------------------------------------------------------------------


def _plan_stage(
    stage: Stage,
    columns: set[str],
    errors: list[QueryError],
    settings: EngineSettings,
    *,
    prefix: str,
    label: str | None = None,
    instrument: Instrument | None = None,
    first_stage: FirstStageColumns | None = None,
    timeframe: Timeframe | None = None,
) -> StagePlan:
    """Check one stage's clauses against ``columns`` (which gains the map names).

    ``label`` is the bar label a row result starts with (``date``, ``month``…): rows can be
    sorted by it, and a second stage can read it. ``first_stage``: a second stage's, what
    the first stage's rows held, which its table may not. ``timeframe``: the first stage's,
    the bars' (a second stage's rows are its groups).
    """

    def step(name: str) -> str:
        return prefix + name

    map_exprs: list[tuple[str, Expr]] = []
    # A second stage's rows are the first stage's table: an aggregate in its map is over all
    # of them (a share of the total). The first stage's map reads bars and the history
    # before the period, which no aggregate there could tell apart.
    over_all = bool(prefix)
    # A second stage's map runs before its select: a name the select makes is not there yet.
    later = SelectNames(_select_names(stage), stage.group_by) if over_all else None
    for name, text in stage.map.items():
        expr = _parse(text, step("map"), errors)
        if expr is not None:
            errors += validate(
                expr,
                columns,
                step=step("map"),
                allow_aggregates=False,
                aggregates_over_all=over_all,
                instrument=instrument,
                later=later,
                first_stage=first_stage,
            )
            map_exprs.append((name, expr))
        columns.add(name)

    where = _parse(stage.where, step("where"), errors) if stage.where else None
    if where is not None:
        errors += validate(
            where,
            columns,
            step=step("where"),
            allow_aggregates=False,
            instrument=instrument,
            first_stage=first_stage,
        )

    group_keys: list[tuple[str, Expr]] = []
    for text in stage.group_by:
        expr = _parse(text, step("group_by"), errors)
        if expr is None:
            continue
        errors += validate(
            expr,
            columns,
            step=step("group_by"),
            allow_aggregates=False,
            instrument=instrument,
            first_stage=first_stage,
        )
        name = expr.name if isinstance(expr, Column) else default_name(expr)
        if all(name != known for known, _ in group_keys):  # a key named twice groups once
            group_keys.append((name, expr))

    select = _plan_select(
        stage, columns, group_keys, errors, step("select"), instrument, first_stage
    )
    mapped = dict(map_exprs)
    for name, exprs in (
        ("map", [expr for _, expr in map_exprs]),
        ("where", [where] if where is not None else []),
        ("group_by", [expr for _, expr in group_keys]),
        ("select", [item.expr for item in select]),
    ):
        for expr in exprs:
            errors += out_of_range(expr, mapped, step(name))
            if timeframe is not None and not timeframe.intraday:
                errors += _time_of_day_windows(expr, timeframe, step(name))
    hoisted: list[tuple[str, Expr]] = []
    # What an aggregate reads across rows is computed per row, with history, before the cut.
    select = [
        replace(item, expr=hoist(item.expr, hoisted, HIDDEN)) if item.aggregate else item
        for item in select
    ]

    plan = StagePlan(
        map_exprs=tuple(map_exprs),
        where=where,
        group_keys=tuple(group_keys),
        select=tuple(select),
        sort=tuple(stage.sort),
        limit=stage.limit,
        hoisted=tuple(hoisted),
        label=label,
    )
    _check_sort(plan, columns, errors, step("sort"))
    if stage.limit is not None and stage.limit > settings.max_limit:
        errors.append(
            QueryTooLarge(
                f"limit {stage.limit} is above the maximum of {settings.max_limit}.",
                step=step("limit"),
                hint="Aggregate with select/group_by, or ask for fewer rows.",
            )
        )
    return plan


def _time_of_day_windows(expr: Expr, tf: Timeframe, step: str) -> list[QueryError]:
    """by='time' reads the last n bars at a bar's own time of day; daily and longer bars have
    one time, midnight, so rolling_mean(volume, 20, 'time') on them was the plain 20-bar
    window, said nowhere, for a question about a time of day's volume."""
    errors: list[QueryError] = []
    for node in walk(expr):
        spec = lookup(node.name) if isinstance(node, Call) else None
        if spec is None or not any(p.name == "by" and p.choices for p in spec.params):
            continue
        assert isinstance(node, Call)
        bound, _ = bind_arguments(spec, node.args, step=step)
        if not any(p.name == "by" and str(value).lower() == "time" for p, value in bound):
            continue
        plain = Call(node.name, node.args[:-1]).to_text()
        errors.append(
            ArgumentError(
                f"{node.to_text()} compares bars at the same time of day, and {tf.name} bars "
                f"have one time each (midnight), so it is the plain window {plain}.",
                step=step,
                hint=f"On {tf.name} bars write {plain}; to compare a time of day across days "
                f'use intraday bars, e.g. "from": "5m" with {node.to_text()}.',
            )
        )
    return errors


def _select_names(stage: Stage) -> frozenset[str]:
    """The names of the columns ``stage``'s select makes (its errors are reported there)."""
    names = set()
    for text in stage.select:
        try:
            expr, alias = parse_select_item(text, step="select")
        except QueryError:
            continue
        names.add(alias or default_name(expr))
    return frozenset(names)


def _plan_select(
    stage: Stage,
    columns: set[str],
    group_keys: list[tuple[str, Expr]],
    errors: list[QueryError],
    step: str,
    instrument: Instrument | None = None,
    first_stage: FirstStageColumns | None = None,
) -> list[SelectItem]:
    select: list[SelectItem] = []
    texts = stage.select or (["count()"] if stage.group_by else [])
    key_names = {name for name, _ in group_keys}
    for text in texts:
        try:
            expr, alias = parse_select_item(text, step=step)
        except QueryError as exc:
            errors.append(exc)
            continue
        if isinstance(expr, Column) and expr.name in key_names and alias is None:
            continue  # selecting the group key itself: it is in the output anyway
        errors += validate(
            expr,
            columns,
            step=step,
            allow_aggregates=True,
            instrument=instrument,
            first_stage=first_stage,
        )
        select.append(SelectItem(expr, alias or default_name(expr), contains_aggregate(expr)))

    if select and group_keys and not all(s.aggregate for s in select):
        bad = next(s for s in select if not s.aggregate)
        errors.append(
            ArgumentError(
                f"With group_by, every select item must be an aggregate; '{bad.expr.to_text()}' "
                "is not.",
                step=step,
                hint="Use e.g. mean(range), count(), max(volume).",
            )
        )
    elif select and len({s.aggregate for s in select}) > 1:
        errors.append(
            ArgumentError(
                "select mixes aggregates with plain columns; use one kind or add group_by.",
                step=step,
                hint='e.g. "select": ["count()", "mean(range)"] or ["timestamp", "range"]',
            )
        )
    return select


def _check_sort(plan: StagePlan, columns: set[str], errors: list[QueryError], step: str) -> None:
    """Sort keys must be result columns; a row selection may also sort by any bar column."""
    available = plan.output_columns(columns)
    if plan.shape == "table":
        available = available | columns
    for key in plan.sort:
        if key.column not in available:
            errors.append(_unknown_sort(key.column, available, plan, step))


def _unknown_sort(column: str, available: set[str], plan: StagePlan, step: str) -> UnknownColumn:
    names = sorted(available)
    close = difflib.get_close_matches(column, names, n=1)
    if close:
        hint = f"Did you mean '{close[0]}'?"
    elif plan.shape in ("grouped", "scalar", "dict"):
        hint = f'Add it to select, e.g. "mean(range) as {column}", or sort by one of the results.'
    else:
        hint = None
    return UnknownColumn(
        f"Cannot sort by '{column}': no such column in the result. Available: {', '.join(names)}.",
        step=step,
        hint=hint,
    )


def _plan_then(
    then: Stage,
    first: StagePlan,
    columns: set[str],
    errors: list[QueryError],
    settings: EngineSettings,
    instrument: Instrument | None = None,
) -> StagePlan | None:
    if first.shape in ("scalar", "dict"):
        errors.append(
            ArgumentError(
                "then works on the first stage's table, but the first stage gives a single row.",
                step="then",
                hint='Give the first stage a group_by (e.g. "group_by": "year()") or a row '
                "select, then aggregate its rows in then.",
            )
        )
        return None
    if not then.model_fields_set:
        errors.append(
            ArgumentError(
                "then is empty: say what to compute over the first stage's table.",
                step="then",
                hint='e.g. "then": {"select": "mean(ymax)"}',
            )
        )
        return None
    # The first stage's bar and map columns: a name of those that its table does not hold
    # is pointed to the first stage's select, not to a map ("up" made there, then read here).
    read = FirstStageColumns(
        frozenset(columns), frozenset(n for n, _ in first.map_exprs), first.shape == "grouped"
    )
    return _plan_stage(
        then,
        first.output_columns(set(columns)),
        errors,
        settings,
        prefix="then.",
        instrument=instrument,
        first_stage=read,
    )


def _parse(text: str, step: str, errors: list[QueryError]) -> Expr | None:
    try:
        return parse_expression(text, step=step)
    except QueryError as exc:
        errors.append(exc)
        return None
