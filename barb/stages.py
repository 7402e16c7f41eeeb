"""Running a stage: rows computed, rows kept, then the answer's shape.

A stage first evaluates everything that works row by row (map, the where condition, group
keys, row selections, hoisted parts of aggregates) on all the rows it was given, then keeps
the rows that pass, and only then groups, aggregates, sorts and limits. For the first stage
the rows given are the period's bars plus their history (``barb.period_rows``), so a
condition such as ``rsi(close, 14) < 30`` is computed with the bars before the period; for a
second stage (``then``) they are the first stage's result table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, partial
from typing import Any

import numpy as np
import pandas as pd

from barb.bar_labels import label_column, label_name, row_label, with_bar_label
from barb.caveats.data_start import (
    DataStart,
    listed_caveat,
    picked_caveat,
    record_rows,
    running_caveat,
    where_caveat,
)
from barb.caveats.empty_rows import notable
from barb.caveats.filled_means import filled_statistic_caveat
from barb.caveats.group_noise import (
    CountedNoise,
    counted_noise,
    even_groups,
    picks_by_values,
    sizes_before,
    stretch_shares,
)
from barb.caveats.groups import empty_groups, keyless_rows
from barb.caveats.limits import NAMED_ROWS, cut_tie, tie_at_limit
from barb.caveats.lookahead import lookahead_caveats
from barb.caveats.no_edge import no_edge_caveat
from barb.caveats.open_runs import open_run_end_caveat
from barb.caveats.overlapping_windows import (
    group_windows,
    grouped_overlap_caveat,
    overlap_caveat,
)
from barb.caveats.same_run_rows import listed_runs, same_run_caveat
from barb.caveats.sample_sizes import (
    BegunGroup,
    few_values_caveat,
    sample_caveats,
    sample_sizes,
    true_count_caveat,
)
from barb.caveats.setup_noise import SetupMean, setup_noise, setup_sentences
from barb.column_units import COUNTED_ROWS, PRICE, column_units
from barb.errors import TypeMismatch
from barb.events.names import minutes_compare_hint
from barb.frames import MINUTE_OF_DAY, masked_values, take_rows
from barb.lineage import conjuncts, inputs, nodes, through_map
from barb.outcome_groups import listed_index, outcomes_of, with_outcomes
from barb.planning import HIDDEN, StagePlan
from barb.ranking import in_sort_order
from barb.record_runs import (
    noted_before,
    record_columns,
    record_run_positions,
    record_run_text,
)
from barb.result import LimitTie, Summary, summarize_grouped, summarize_table
from barb.script.ast import Call, Column, Compare, Expr, Node
from barb.script.clock_order import sort_caveat
from barb.script.conditions import known_true
from barb.script.context import EvalContext, RowGroups
from barb.script.evaluator import RowsOverAll, SelectValue, evaluate, evaluate_select
from barb.script.functions import KIND_NAMES, value_kind
from barb.script.library import lookup
from barb.script.query import Query
from barb.stage_output import SINGLE_ROW, StageOutput, counted_columns, query_columns, sort_keys
from barb.summary_text import value_text
from barb.time_keys import calendar_part, from_the_open, period_keys
from barb.timeframes import timeframe as timeframe_spec
from barb.where_values import where_sides, with_where_values

# The calls whose comparisons ``record_rows`` reads as record tests, as they are written.
RUNNING_EXTREMES = frozenset({"cummax", "cummin"})
# A table of the latest bars keeps this many bars before them, to show the series it ends.
LATEST_HISTORY_ROWS = 1_000
# A where's table of at most this many days keeps the period's closes, to draw them on.
MAX_EVENT_ROWS = 60
# The most bars whose closes are kept to draw them on: a year of 15-minute ETH bars (23,600).
MAX_EVENT_CLOSES = 25_000
# The top bar of at most this many (limit 1) keeps them all, for the chart to draw it among
# them ("which day made last week's high": the week's bars, Friday's marked).
MAX_RANKED_FROM = 31


@dataclass(frozen=True)
class DayOpen:
    """Intraday bars of a session that crosses midnight: its trading day opens at ``minute``
    (ETH's 18:00), so groups by a time of day are listed from there, not from 00:00, as the
    chart draws them. ``query`` is the whole query, whose names say which key is a time."""

    minute: int
    query: dict[str, Any]

    def order(self, table: pd.DataFrame, by: Sequence[str]) -> np.ndarray | None:
        """The positions that put ``table``'s rows in the session's order when its first key
        is a time of day; else None."""
        return from_the_open(table, by, self.query, self.minute)

    def order_text(self, by: Sequence[str]) -> str:
        """What the summary says of that order: ``ordered by t from the 18:00 open``."""
        clock = f"{self.minute // 60:02d}:{self.minute % 60:02d}"
        return f"ordered by {', '.join(by)} from the session's {clock} open"


def run_stage(
    stage: StagePlan,
    frame: pd.DataFrame,
    ctx: EvalContext,
    keep: np.ndarray,
    *,
    prefix: str = "",
    focus: list[str] | None = None,
    hide: tuple[str, ...] = (),
    period: np.ndarray | None = None,
    row_keys: tuple[str, ...] = (),
    order: np.ndarray | None = None,
    picked: bool = False,
    day_open: DayOpen | None = None,
    carried: Sequence[str] = (),
    counts: Sequence[str] = (),
    query: Query | None = None,
    outcomes: Mapping[str, Sequence[Any]] | None = None,
    checks: bool = True,
) -> StageOutput:
    """Run ``stage`` over ``frame``; ``keep`` marks the rows it may answer from.

    ``period`` marks the period's own rows (None: all of them); ``hide`` names columns that
    are internal to this frame and never shown; ``row_keys`` name what each row is when the
    rows are groups (a second stage over the first stage's groups: year, date); ``order``
    gives each row's place in time (or key) order when the rows are not in it (a second stage
    over a sorted table): aggregates read them in that order. ``picked``: an event join's
    filter (``"filter": "only"``) already picked the rows in ``keep``, as a where would.
    ``day_open``: the bars' session crosses midnight; groups by a time of day start at its
    open unless the stage sorts them. ``carried``: a second stage's rows are the first
    stage's table, whose own columns (its select) it lists before the ones it makes.
    ``counts``: the rows' columns that count rows (a first stage's ``count() as days``).
    ``query``: the whole query, whose names say what a single row's means are of (a
    result's, tested against no edge); None: not tested. ``outcomes``: a second stage's
    count by what the first stage's rows picked, every value its key could take
    (``barb.outcome_groups``): those no row took are listed at 0. ``checks`` False: the
    answer's numbers alone, none of the warnings weighed (a caveat's run again over other
    rows, ``barb.caveats.stock_days``, reads only its numbers).
    """
    ctx.frame, ctx.period = frame, period
    ctx.streak_reads = partial(_streak_reads, stage) if period is not None else None
    # A second stage's map (see barb.planning): its aggregates are over all its rows.
    over_all = RowsOverAll(order) if prefix else None
    for name, expr in stage.map_exprs:
        frame[name] = _evaluate(expr, ctx, prefix + "map", over_all)
    given, condition = keep, None
    if stage.where is not None:
        condition = _evaluate(stage.where, ctx, prefix + "where")
        keep = keep & _as_condition(condition, prefix + "where", stage.where.to_text())
    for name, expr in stage.group_keys:
        if not (isinstance(expr, Column) and expr.name == name):
            frame[name] = _evaluate(expr, ctx, prefix + "group_by")
    for name, expr in stage.hoisted:
        frame[name] = _evaluate(expr, ctx, prefix + "select")
    selected = None
    if stage.shape == "table" and stage.select:
        selected = {s.name: _evaluate(s.expr, ctx, prefix + "select") for s in stage.select}

    every_row, frame = frame, take_rows(frame, keep)
    if order is not None and stage.shape != "table":
        # "The earliest row" of first()/last() and of arg_max's ties is the earliest in
        # time, not the first in the order a sort put the rows in; rows listed keep theirs.
        frame = _in_order(frame, order[keep])
    ctx.frame, ctx.period = frame, None
    start, said, records = None, [], None
    # A part evaluated again over every row, as the stage evaluated it (a caveat's).
    again = None
    if period is not None and checks:
        again = partial(evaluate, ctx=_aside(ctx, every_row, period))
    before = None
    if again is not None and condition is not None and stage.shape == "grouped":
        # A first stage's count under a where is read against its groups' rows before it
        # (weekdays hold different numbers of days): counted only when a count is there.
        before = _sizes_before(stage, every_row, given, condition, again, keep)
    if period is not None and checks:  # the first stage: the empty values the data start emptied
        start = DataStart(stage, every_row, keep, ctx.timeframe, ctx.trading_dates, values=again)
        if condition is not None:
            said = where_caveat(start, given, condition)
            rows = int(np.count_nonzero(keep))
            said += open_run_end_caveat(
                stage, every_row, condition, period, again, ctx.timeframe, rows
            )
        said += running_caveat(start, period)
        # Records against a running high or low: none without a cummax() or cummin().
        if stage.calls & RUNNING_EXTREMES:
            records = record_rows(start, period)
        said += [records[0]] if records is not None else []
    setup: dict[str, SetupMean] = {}
    judged = period
    if again is not None and (condition is not None or picked) and stage.shape in SINGLE_ROW:
        # Rows a where or an event filter picked, read as a setup: its means' noise beside
        # the period's own value (``period``: its rows before either), over the rows the
        # where can judge when it could not judge a notable part: NQ 2008-2009 above its
        # SMA200 had been set against "the other 297" days, 199 of them before the SMA.
        judged = _judged(period, condition)
        scope = "the where can judge" if judged is not period else ""
        same_time = _same_time_rows(stage, every_row, keep, again) if ctx.intraday else None
        if same_time is not None:
            # "cpi and time() == '09:30'" on 5m bars: the 09:30 bars of the other days, not
            # every bar of the day (22,827, their mean volume a third of any 09:30 bar's).
            judged, scope = judged & same_time, "at the same times of day"
        setup = setup_noise(stage, again, judged, keep, ctx.timeframe, judged=scope)
    no_edge = None
    kept = partial(_kept_values, ctx, every_row, period, keep)
    if query is not None and stage.shape in SINGLE_ROW and checks:
        spoken = [name for name, found in setup.items() if found.tested]
        # The rows' places in bars, to count values read ahead one at a time: a first
        # stage's rows in time order only.
        places = np.flatnonzero(keep) if period is not None and order is None else None
        no_edge = partial(
            no_edge_caveat,
            stage,
            query,
            kept,
            then=bool(prefix),
            said=spoken,
            ahead=None if places is None else (places, ctx.timeframe),
            month=period is not None and _within_a_month(every_row, period),
        )
    # As the aggregates read the rows kept: in time order where a sort had moved them.
    read = partial(_in_read_order, kept, None if order is None else order[keep])
    output = _answer(
        stage,
        frame,
        ctx,
        keep,
        selected,
        prefix,
        hide,
        row_keys,
        day_open,
        carried,
        counts,
        start,
        no_edge=no_edge,
        row_values=read,
        query=None if query is None else query.to_json(),
        before=before,
        outcomes=outcomes,
        checks=checks,
    )
    if not checks:
        return _settled(stage, frame, ctx, keep, output, focus)
    output.warnings[:0] = said
    if again is not None and stage.where is not None and stage.shape in SINGLE_ROW:
        # The where's indicators, beside the rows it kept.
        sides = stage.derived("where_sides", partial(where_sides, stage.where))
        if sides and callable(output.source_rows):
            output.source_rows = partial(with_where_values, output.source_rows, sides, again, keep)
    if stage.shape in SINGLE_ROW and record_columns(stage):
        # A run begun before the period is proved by its rows there, read as history.
        history = None
        if period is not None and period.any():
            history = np.arange(len(period)) < int(np.argmax(period))
        output.runs_at = record_run_positions(stage, every_row, given, keep, order, history)
        if output.runs_at is not None:
            shown = shown_rows(every_row, ctx.timeframe, hide, output.runs_at)
            before = None if history is None else history[output.runs_at]
            output.run_rows = noted_before(shown, before)
        named = partial(row_label, every_row, timeframe=ctx.timeframe)
        output.record_text = record_run_text(stage, every_row, given, keep, named, order)
    if condition is not None and period is not None and len(period) and period[-1]:
        # The where's value on the period's last row: none when it reads a next() past the
        # data's last whole bar (the week of 2025-12-29 is no "last week of the year").
        assert stage.where is not None
        if stage.reads_ahead:
            # The rows at the period's end it had no value on: next(close, 3)'s last three.
            unknown = condition.isna().to_numpy()[::-1] & period[::-1]
            output.last_unjudged = int(np.argmin(unknown)) if not unknown.all() else len(unknown)
    if records is not None and output.table is not None:
        output.record_rows = (
            records[0],
            _table_rows_of(stage, every_row, keep, records[1], output),
        )
    output.warnings += setup_sentences(setup)
    # A chart names the baseline "all days": none when it is of the days the where judged.
    if judged is period:
        output.baselines = {name: found.baseline for name, found in setup.items()}
    if stage.shape == "grouped" and output.table is not None:
        keys = list(stage.group_keys)
        daily = ctx.timeframe == "daily"
        output.warnings += keyless_rows(frame, keys, ctx.intraday, ctx.trading_dates, daily)
        # Every group, not the limit's few: "range > 500 by year, top 2" had named 2020,
        # 2021, 2023 and 2025 (12, 5, 3 and 18 such days) among the years the where emptied.
        listed = output.groups if output.groups is not None else output.table
        calendar = None
        if again is not None and stage.where is not None:  # its parts on the calendar alone
            parts = stage.derived("calendar_parts", partial(_calendar_parts, stage))
            calendar = partial(_kept_by, parts, again) if parts else None
        output.warnings += empty_groups(
            every_row,
            keys,
            given,
            listed,
            stage.where,
            dict(stage.map_exprs),
            focus or (),
            calendar=calendar,
        )
    # The rows listed are the answer ("the last 3 FOMC days"): what is said of the rows
    # kept is said of them, in time order.
    listed = None
    if stage.shape == "table" and stage.limit is not None and output.order is not None:
        listed = np.zeros(len(keep), dtype=bool)
        listed[np.flatnonzero(keep)[output.order]] = True
        dates = ctx.trading_dates if period is not None else None  # bars, up to the data's end
        output.warnings += same_run_caveat(stage, every_row, selected, listed, ctx.timeframe, dates)
        table_rows = np.flatnonzero(keep)[output.order]  # in the table's order
        output.same_runs = listed_runs(stage, every_row, selected, table_rows)
    if period is not None:  # the first stage: its rows are bars, up to the data's end
        calendar = timeframe_spec(ctx.timeframe).calendar
        output.warnings += lookahead_caveats(
            stage,
            every_row,
            keep if listed is None else listed,
            intraday=ctx.intraday,
            calendar=calendar,
        )
        if again is not None and stage.shape != "table":
            chosen = condition is not None or picked
            told = {name: found.sentence for name, found in setup.items()}
            output.warnings += overlap_caveat(
                stage, keep, again, picked=chosen, timeframe=ctx.timeframe, told=told
            )
        if _events(stage, output, period, picked):
            output.source_rows = partial(period_closes, every_row, period, ctx.timeframe)
    if listed is not None:
        assert output.order is not None
        output.kept, output.listed_from = frame.iloc[np.sort(output.order)], frame
    return _settled(stage, frame, ctx, keep, output, focus, listed)


def _settled(
    stage: StagePlan,
    frame: pd.DataFrame,
    ctx: EvalContext,
    keep: np.ndarray,
    output: StageOutput,
    focus: list[str] | None,
    listed: np.ndarray | None = None,
) -> StageOutput:
    """``output`` with the rows it kept (``frame``, ``keep``), the row warnings that concern
    them (``listed``: the rows a limit listed, when it did) said."""
    output.rows_kept = len(frame)
    if listed is None:
        output.kept = frame
    ctx.settle_row_warnings(keep if listed is None else listed)
    output.passed = keep
    if not output.focus:  # rows, or a number: what the query itself added to the bars
        mapped = [name for name, _ in stage.map_exprs]
        output.focus = list(dict.fromkeys([*mapped, *(focus or [])]))
    return output


def _begun_keys(
    begun: Sequence[BegunGroup], answers: Mapping[str, SelectValue]
) -> list[tuple[dict[str, str], int, int]]:
    """The ``begun`` groups by their key values as text ({"year": "2008"}), as a chart
    finds its rows."""
    if not begun or not answers:
        return []
    index = next(iter(answers.values())).rows.index
    if index is None:
        return []
    found = []
    for group in begun:
        values = index[group.at] if isinstance(index, pd.MultiIndex) else (index[group.at],)
        keys = {str(k): value_text(v) for k, v in zip(index.names, values, strict=True)}
        found.append((keys, group.size, group.rows))
    return found


def _by_outcome(stage: StagePlan, row_keys: Sequence[str]) -> bool:
    """Whether a second stage groups the first stage's rows by what each row picked (its
    select's arg_max weekday, an up-or-down flag), not by the first stage's own keys (the
    year of its months): a count by an outcome is chance's, by a key the calendar's."""
    mapped = dict(stage.map_exprs)
    for _, expr in stage.group_keys:
        read = {node.name for node in nodes(expr, mapped) if isinstance(node, Column)}
        if not read - set(mapped) or read & set(row_keys):
            return False
    return True


# Calls that read only the bar's clock: a where's part made of them picks a time of day.
CLOCK_CALLS = frozenset({"time", "hour", "minute"})


def _same_time_rows(
    stage: StagePlan, every_row: pd.DataFrame, keep: np.ndarray, again: Callable[[Expr], Any]
) -> np.ndarray | None:
    """The intraday rows a where's setup is read against: those its time-of-day parts keep
    (``time() == '09:30'`` of "cpi and time() == '09:30'"), when it has other parts too;
    or, when it picks the minutes after a release (``fomc_minutes < 60``), the rows at the
    clock times its kept rows hold (NQ 2024's hour after each FOMC statement: 14:00-14:59,
    whose 1m bars averaged 35.44 points beside 10.31 over every minute of the day, the
    quiet night's too). None when no part, or every part, is of the clock: the 09:30 bar
    against all bars is then what was asked."""
    if stage.where is None:
        return None
    mapped = dict(stage.map_exprs)
    parts = conjuncts(stage.where)
    clock = [part for part in parts if _of_the_clock(part, mapped)]
    if clock:
        return None if len(clock) == len(parts) else _kept_by(clock, again)
    releases = {
        node.name
        for node in nodes(stage.where, mapped)
        if isinstance(node, Column)
        and node.name.endswith("_minutes")
        and node.name not in mapped
        and node.name in every_row.columns
    }
    if not releases or MINUTE_OF_DAY not in every_row.columns:
        return None
    minutes = every_row[MINUTE_OF_DAY].to_numpy()
    return np.isin(minutes, np.unique(minutes[keep]))


def _of_the_clock(part: Expr, mapped: Mapping[str, Expr]) -> bool:
    """Whether ``part`` reads the bar's clock alone (through the map): hour() < 11, not
    hour() < 11 and close > open, nor fomc_minutes < 60."""
    calls = False
    for node in nodes(part, mapped):
        if isinstance(node, Call):
            if node.name.lower() not in CLOCK_CALLS:
                return False
            calls = True
        elif isinstance(node, Column) and node.name not in mapped:
            return False
    return calls


def _kept_by(parts: Sequence[Expr], again: Callable[[Expr], Any]) -> np.ndarray | None:
    """The rows every one of the where's ``parts`` keeps (month() == 12 of "month() == 12
    and close > open"), each evaluated again over the stage's rows; None when none is a
    true-or-false value."""
    rows = None
    for part in parts:
        values = again(part)
        if isinstance(values, pd.Series) and pd.api.types.is_bool_dtype(values):
            kept = values.fillna(False).to_numpy(dtype=bool)
            rows = kept if rows is None else rows & kept
    return rows


# The longest a calendar month runs, first trading date to last.
_MONTH_DAYS = 30


def _within_a_month(frame: pd.DataFrame, period: np.ndarray) -> bool:
    """Whether the period's rows (``period``, a mask over ``frame``) lie within a month's
    span of days: December 2025, the last 30 days, a week."""
    if not period.any():
        return False
    # The first and the last row only: argmax stops at the first True, and over 1-minute
    # bars a mask's copy of every date cost a third of a millisecond per query.
    first, last = int(period.argmax()), len(period) - 1 - int(period[::-1].argmax())
    dates = frame["trading_date"].to_numpy()
    return bool(dates[last] - dates[first] <= np.timedelta64(_MONTH_DAYS, "D"))


def _streak_reads(stage: StagePlan, cond: str) -> list[Compare] | None:
    """The comparisons with a number ``stage`` reads streak(cond) through, ``cond`` as
    written (``StagePlan.number_comparisons``); None where it reads the count itself."""

    def is_streak(node: Node) -> bool:
        return (
            isinstance(node, Call)
            and node.name.lower() == "streak"
            and len(node.args) == 1
            and node.args[0].to_text() == cond
        )

    return stage.number_comparisons(is_streak)


def _sizes_before(
    stage: StagePlan,
    frame: pd.DataFrame,
    given: np.ndarray,
    condition: pd.Series,
    again: Callable[[Expr], Any],
    keep: np.ndarray,
) -> Before | None:
    """Each group's rows before the where, counted when first asked (``sizes_before``): the
    rows ``given`` the where can judge (``_judged``) that pass its conjuncts on the calendar
    alone ("chg < -3 and year() >= 2020" counts the weekdays since 2020); and of groups that
    are stretches of time, each stretch's share of those rows the where kept (``keep``,
    ``stretch_shares``). None when the where picks by the calendar or a schedule alone,
    whose counts are the calendar's, or by the values the groups are keyed by alone: "open
    != pwc" under "group_by": "open > pwc" keeps every gap-up week and all but 4 gap-down
    ones, and "476 of 476 days against 460 of 464, Fisher p = 0.059" had tested how often
    a gap was none (p48c Q36). Such a part is read as the calendar's is: it narrows the
    rows each group is of."""
    narrowing = stage.derived("narrowing", partial(_narrowing, stage))
    if narrowing is None:
        return None
    keys = [name for name, _ in stage.group_keys]

    @cache
    def judged() -> np.ndarray:
        rows = _judged(given, condition)
        kept = _kept_by(narrowing, again)
        return rows if kept is None else rows & kept

    grouped = cache(lambda: RowGroups.by_keys(frame, keys))  # found once for both
    return Before(
        cache(lambda: sizes_before(frame, keys, judged(), grouped)),
        cache(lambda: stretch_shares(grouped(), judged(), keep)),
    )


def _calendar_parts(stage: StagePlan) -> list[Expr]:
    """The where's parts that keep rows by the calendar or a schedule alone."""
    assert stage.where is not None
    mapped = dict(stage.map_exprs)
    return [part for part in conjuncts(stage.where) if not picks_by_values(part, mapped)]


def _narrowing(stage: StagePlan) -> list[Expr] | None:
    """The where's parts read as the calendar's, which narrow the rows each group is of
    (``_sizes_before``); None when every part that picks by values is of a key."""
    assert stage.where is not None
    mapped = dict(stage.map_exprs)
    of_keys = partial(_of_a_key, [expr for _, expr in stage.group_keys], mapped)
    picking = [part for part in conjuncts(stage.where) if picks_by_values(part, mapped)]
    if all(of_keys(part) for part in picking):
        return None
    return [
        part
        for part in conjuncts(stage.where)
        if not picks_by_values(part, mapped) or of_keys(part)
    ]


def _of_a_key(keys: Sequence[Expr], mapped: Mapping[str, Expr], part: Expr) -> bool:
    """Whether the where's ``part`` is a condition on what a group key is of: it compares
    the same two sides as a key (open != pwc under open > pwc), or reads just what a key
    reads (close - open > -30 under close > open), map columns read through. Not a part
    reading some of a key's columns only: close > open under gap_up = open > prev(close)
    is the day's outcome, tested as shares of the groups' days (r48c #2)."""
    reads = _raw_inputs(part, mapped)
    sides = _sides(part, mapped)
    return any(
        reads == _raw_inputs(key, mapped) or (sides is not None and sides == _sides(key, mapped))
        for key in keys
    )


def _raw_inputs(expr: Expr, mapped: Mapping[str, Expr]) -> set[str]:
    """The bar columns and functions ``expr`` reads, the map columns' names left out: the
    same whether a where names a map column or writes its expression out. Scalar functions
    (abs, floor, round…) are left out too: they reshape a value, not what it is of, so
    "abs(gap) >= 0.25" reads what the bucket "floor(abs(gap), 0.25)" reads, and gap fills
    by gap size had each bucket's days all kept ("1,069 of its 1,069") and tested."""
    return {
        name
        for name in inputs(expr, mapped) - set(mapped)
        if not (name.endswith("()") and _scalar(name.removesuffix("()")))
    }


def _scalar(name: str) -> bool:
    spec = lookup(name)
    return spec is not None and spec.category == "scalar"


def _sides(expr: Expr, mapped: Mapping[str, Expr]) -> frozenset[Expr] | None:
    """The two sides of a comparison (``open > pwc``: open and prev(close), map columns
    read through), whatever its operator; None when ``expr`` is no comparison."""
    expr = through_map(expr, mapped)
    if not isinstance(expr, Compare):
        return None
    return frozenset((through_map(expr.left, mapped), through_map(expr.right, mapped)))


@dataclass(frozen=True)
class Before:
    """A first stage's groups before its where, each counted when first asked: their rows
    (``sizes``) and, of stretches of time, each stretch's share the where kept
    (``stretches``)."""

    sizes: Callable[[], pd.Series | None]
    stretches: Callable[[], pd.Series | None]


def _kept_values(
    ctx: EvalContext, frame: pd.DataFrame, period: np.ndarray | None, keep: np.ndarray, expr: Expr
) -> np.ndarray | None:
    """``expr``'s numbers at the rows kept, evaluated again (a caveat's) over every row the
    stage was given, as its map was: ``next(close)`` reads the day after, kept or not. A
    column is read, not copied, when every row was kept. None when it is no number per
    row."""
    values = evaluate(expr, _aside(ctx, frame, period))
    if not isinstance(values, pd.Series) or not pd.api.types.is_numeric_dtype(values.dtype):
        return None
    if values.dtype == np.float64:  # a price column as it is, no pass for empty values
        numbers = values.to_numpy()
    else:
        numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
    return numbers if keep.all() else numbers[keep]


def _in_read_order(
    values: Callable[[Expr], np.ndarray | None], order: np.ndarray | None, expr: Expr
) -> np.ndarray | None:
    """``values``' numbers of ``expr`` at the rows kept, in the order the stage's aggregates
    read them: by ``order`` (each kept row's place in time), as ``_in_order`` puts them."""
    numbers = values(expr)
    if numbers is None or order is None or len(order) < 2 or bool((np.diff(order) >= 0).all()):
        return numbers
    return numbers[np.argsort(order, kind="stable")]


def _aside(ctx: EvalContext, frame: pd.DataFrame, period: np.ndarray | None) -> EvalContext:
    """``ctx`` over ``frame`` for evaluating a part again (a caveat's), its warnings kept
    apart from the answer's."""
    return replace(ctx, frame=frame, period=period, warnings=[], row_warnings=[], history_beyond=[])


def _answer(
    stage: StagePlan,
    frame: pd.DataFrame,
    ctx: EvalContext,
    keep: np.ndarray,
    selected: dict[str, pd.Series] | None,
    prefix: str,
    hide: tuple[str, ...],
    row_keys: tuple[str, ...] = (),
    day_open: DayOpen | None = None,
    carried: Sequence[str] = (),
    counts: Sequence[str] = (),
    start: DataStart | None = None,
    *,
    no_edge: Callable[[Mapping[str, SelectValue]], list[str]] | None = None,
    row_values: Callable[[Expr], np.ndarray | None] | None = None,
    query: dict[str, Any] | None = None,
    before: Before | None = None,
    outcomes: Mapping[str, Sequence[Any]] | None = None,
    checks: bool = True,
) -> StageOutput:
    """The stage's answer from the rows kept. ``row_values`` gives an expression's numbers
    at those rows as the aggregates read them (a caveat's; None: not read); ``query``, the
    whole query, says which columns are a row's year or hour (None: not known); ``before``,
    a first stage's groups' rows before its where (``group_noise.sizes_before``)."""
    warnings: list[str] = []
    filled = partial(filled_statistic_caveat, stage.select, stage.hoisted, dict(stage.map_exprs))
    shape = stage.shape
    if shape == "grouped":
        ctx.step = prefix + "select"
        by = [name for name, _ in stage.group_keys]
        answers = {s.name: evaluate_select(s.expr, ctx, by) for s in stage.select}
        columns = {name: answer.value for name, answer in answers.items()}
        table = pd.DataFrame(columns).reset_index()
        groups = np.arange(len(table))  # each row's group, in key order (-1: an outcome added)
        possible = outcomes_of(outcomes, by)
        if possible:  # the hours no day's low fell in, at 0 (``barb.outcome_groups``)
            table, groups = with_outcomes(table, by[0], possible, list(columns))
        # Before the limit: "the first 3 hours" of ETH start at 18:00.
        opened = day_open.order(table, by) if day_open and not stage.sort else None
        if opened is not None:
            table, groups = table.iloc[opened].reset_index(drop=True), groups[opened]
        every_group = table
        table, order, warnings, limit_tie = sort_limit(table, stage, by)
        warnings += sort_caveat(ctx.night, every_group, stage.sort)
        names = [s.name for s in stage.select]
        summary = summarize_grouped(
            table, by, names, sort=sort_keys(stage), counts=counted_columns(stage)
        )
        if day_open and opened is not None:
            summary.order = day_open.order_text(by)
        focus = by + [s.name for s in stage.select]
        if not checks:
            return StageOutput(
                summary,
                table=table,
                focus=focus,
                order=order,
                groups=every_group,
                aggregates=answers,
            )
        shown = groups[order]
        sampled, begun = sample_caveats(stage.select, ctx, answers, shown[shown >= 0], start)
        # Not of groups a second stage reads: it keeps whole seasons alone, as the Santa
        # rally's "days == 7" drops the season the data begins in, n/a start and all.
        if start is not None and query is not None and not query.get("then"):
            warnings += picked_caveat(start, stage.select, answers)
        warnings += sampled
        warnings += true_count_caveat(stage.select, answers)
        if row_values is not None:
            warnings += filled(answers, row_values)
        # A second stage's rows are the first's groups, not the timeframe's bars.
        rows = "rows" if prefix else COUNTED_ROWS.get(ctx.timeframe, "bars")
        # The first stage's rows are bars: a value read ahead over a group's overlapping
        # windows is said, and its groups' noise judged on the rows one at a time.
        ahead = {} if prefix else group_windows(stage, answers, keep)
        overlapping = {name: found for name, found in ahead.items() if found.overlapping}
        if overlapping:
            index = next(iter(answers.values())).rows.index
            assert index is not None
            warnings += grouped_overlap_caveat(stage, overlapping, index, ctx.timeframe)
        # A month of the year's days are stretches of time: tested a stretch at a time.
        part = calendar_part(by[0], query) if len(by) == 1 and query is not None else None
        even = even_groups(stage.select, answers, stage.sort, rows, overlapping, part)
        counted = CountedNoise()
        if prefix and _by_outcome(stage, row_keys):
            listed = listed_index(every_group, by[0]) if possible else None
            counted = counted_noise(stage.select, answers, stage.sort, listed=listed)
        elif before is not None:  # the where's hits as shares of each group's rows
            counted = counted_noise(
                stage.select, answers, stage.sort, before.sizes, rows, before.stretches, part
            )
        warnings += counted.warnings
        return StageOutput(
            summary,
            table=table,
            focus=focus,
            order=order,
            warnings=warnings + even.warnings,
            groups=every_group,
            even_columns=even.columns + counted.columns,
            apart_columns=even.apart,
            untested_columns=even.untested + counted.untested,
            near_groups={**even.near, **counted.near},
            limit_tie=limit_tie,
            few_groups=even.few,
            noise=even.warnings + counted.warnings,
            begun_groups=_begun_keys(begun, answers),
            aggregates=answers,
        )
    if shape in SINGLE_ROW:
        ctx.step = prefix + "select"
        answers = {s.name: evaluate_select(s.expr, ctx, None) for s in stage.select}
        values = {name: _python(answer.value) for name, answer in answers.items()}
        if stage.sort or stage.limit:
            warnings.append("sort and limit do not apply to a single-row result and were ignored.")
        if not checks:
            return StageOutput(_single_row(shape, values), aggregates=answers)
        samples, said = sample_sizes(stage.select, ctx, answers, start)
        warnings += said + few_values_caveat(stage.select, ctx, answers)
        if start is not None:
            warnings += picked_caveat(start, stage.select, answers)
        warnings += true_count_caveat(stage.select, answers)
        if row_values is not None:
            warnings += filled(answers, row_values)
        if no_edge is not None:
            warnings += no_edge(answers)
        summary = _single_row(shape, values, samples)
        # Built when read (for the CSV and the chart), not for the number.
        rows = partial(shown_rows, frame, ctx.timeframe, hide)
        return StageOutput(
            summary,
            source_rows=rows,
            warnings=warnings,
            aggregates=answers,
        )

    history, unsorted, limit_tie = None, None, None
    # The columns a table lists, told of the rows the data's start leaves empty (a first
    # stage's), once the rows listed are known.
    listed: dict[str, tuple[Expr, pd.Series]] = {}
    # The first stage's rows are bars (a second stage's, "then.", are the first's table).
    if not prefix and _ranked_from_few(stage, len(frame)):
        history = shown_rows(frame, ctx.timeframe, hide)
        for name, values in (selected or {}).items():  # a sort by a selected alias
            if name not in history.columns:
                history[name] = masked_values(values, keep)
    if selected is not None:
        names = [s.name for s in stage.select]
        table = pd.DataFrame({n: masked_values(v, keep) for n, v in selected.items()})
        table = with_bar_label(table, frame, ctx.timeframe)
        # A sort key not selected is shown after the selected columns: "sorted by ret"
        # over closes alone read as the five best days with no return to say.
        extra = [k.column for k in stage.sort if k.column not in table.columns]
        for name in extra:
            table[name] = masked_values(frame[name], slice(None))
        unsorted, listed_at, rows_before_limit = table, len(warnings), len(table)
        if start is not None:
            listed = {s.name: (s.expr, selected[s.name]) for s in stage.select}
        table, order, ties, limit_tie = sort_limit(table, stage, [table.columns[0]])
        warnings += ties + sort_caveat(ctx.night, unsorted, stage.sort)
        focus = names
    else:
        listed_at, rows_before_limit = len(warnings), len(frame)
        if start is not None:
            listed = {name: (Column(name), start.frame[name]) for name, _ in stage.map_exprs}
        # Order the rows by their keys alone, then label and show only the rows kept: a
        # person's columns for 10 of 4,500 bars, not for all of them.
        order, ties = _ordered_positions(frame, stage, stage.label, ctx.timeframe)
        warnings += ties + sort_caveat(ctx.night, frame, stage.sort)
        table = shown_rows(frame, ctx.timeframe, hide, at=order)
        focus = []
        if row_keys:  # groups kept and sorted: each still named by its keys ("2022, 391")
            if start is not None:
                warnings[listed_at:listed_at] = listed_caveat(start, listed, order)
            keys = [k for k in row_keys if k in table.columns]
            values = [c for c in table.columns if c not in keys]
            made = [name for name, _ in stage.map_exprs]
            summary = summarize_grouped(
                table, keys, values, sort=sort_keys(stage), counts=counts, made=made
            )
            return StageOutput(
                summary,
                table=table,
                focus=keys + values,
                warnings=warnings,
                order=order,
                groups=frame,  # every group, before the sort and limit
            )
        if _latest_first(stage):  # "ATR now": the bars it is the latest of, for the chart
            latest = frame.iloc[-LATEST_HISTORY_ROWS:]
            history = partial(shown_rows, latest, ctx.timeframe, hide)  # built when read
    stat_cols = [*carried, *(n for n, _ in stage.map_exprs), *(k.column for k in stage.sort)]
    stat_cols += [s.name for s in stage.select]
    # A first stage's group key selected again in then names its rows: its mean is noise.
    stat_cols = [c for c in stat_cols if c not in row_keys]
    # So does a row's year or month selected beside its values: "mean: ret_pct=21.71,
    # year=2016.5" summarised 18 yearly returns' labels as a number. A trading_day() is a
    # value: where in the month the rows lie.
    if query is not None:
        keyed = ("period_keys", tuple(stat_cols), ctx.timeframe)
        labels = stage.derived(keyed, partial(period_keys, query, stat_cols, ctx.timeframe))
        stat_cols = [c for c in stat_cols if c not in labels]
    # A then.map adds to the first stage's columns: "ret_pct" selected there stays listed
    # next to "pct_rank = rank(ret_pct)", as the table and the CSV hold it.
    value_cols = query_columns(stage) if stage.select else [*carried, *query_columns(stage)]
    summary = summarize_table(
        table,
        list(dict.fromkeys(stat_cols)),
        list(dict.fromkeys(value_cols)),
        timeframe=ctx.timeframe,
        sort=sort_keys(stage),
    )
    _unaveraged(summary, stage, query, ctx.timeframe)
    if len(table) < rows_before_limit:
        summary.limited_from = rows_before_limit
    if start is not None:  # said of the rows listed, and of a mean only where one is given
        averaged = [name for name, stats in summary.stats.items() if stats.mean is not None]
        averaged = averaged if not summary.whole or len(table) > 1 else []
        warnings[listed_at:listed_at] = listed_caveat(start, listed, order, averaged)
    return StageOutput(
        summary,
        table=table,
        source_rows=history,
        focus=focus,
        warnings=warnings,
        order=order,
        # A second stage's selected rows are groups: all of them, before the sort and limit.
        groups=unsorted if row_keys else None,
        limit_tie=limit_tie,
    )


def _single_row(
    shape: str, values: dict[str, Any], samples: dict[str, int] | None = None
) -> Summary:
    """A single row's summary: one value (``scalar``), or several by name."""
    if shape == "scalar":
        name, value = next(iter(values.items()))
        return Summary(type="scalar", value=value, columns=[name], samples=samples or {})
    return Summary(type="dict", values=values, samples=samples or {})


def _events(stage: StagePlan, output: StageOutput, period: np.ndarray, picked: bool) -> bool:
    """A few bars a where (or an event join's filter) picked (crosses, signals, NFP days):
    the chart draws them on the period's closes, so they are not read as a price history of
    their own. Of any bars: eleven hourly Keltner breakouts had been a line joining them
    over two months, headlined "close last: 19,006 (2025-02-25 10:30)"; not over more than
    ``MAX_EVENT_CLOSES`` bars, whose closes a phone-width line cannot show."""
    return (
        stage.shape == "table"
        and (stage.where is not None or picked)
        and not stage.sort  # "the last golden cross": a ranked row, not the days picked
        and output.source_rows is None
        and output.table is not None
        and 2 <= len(output.table) <= MAX_EVENT_ROWS
        and np.count_nonzero(period) <= MAX_EVENT_CLOSES
    )


def period_closes(frame: pd.DataFrame, period: np.ndarray, timeframe: str) -> pd.DataFrame:
    """The period's daily closes, each named by its bar label (built when read)."""
    columns = [c for c in ("timestamp", "trading_date", "close") if c in frame.columns]
    return shown_rows(take_rows(frame[columns], period), timeframe)


def _ranked_from_few(stage: StagePlan, rows: int) -> bool:
    """The top bar by a value, of a few bars ("which day made last week's high": sort by
    high, limit 1): the bars are kept with it, so that the chart shows what it beat. A
    longer list is drawn as the ranking it is."""
    return bool(
        stage.sort
        and stage.limit == 1
        and 1 < rows <= MAX_RANKED_FROM
        and not _latest_first(stage)
        and stage.sort[0].column not in ("timestamp", "trading_date", "date")
    )


def _unaveraged(
    summary: Summary, stage: StagePlan, query: dict[str, Any] | None, timeframe: str
) -> None:
    """No mean under a listing where it means nothing: of a ranking's top rows (the five
    biggest days' mean change is the mean of a pick by that change), or of a price (the mean
    close of the last 5 days). "top 5 NQ days in %" had ended "mean: chg_pct=9.025,
    close=4069.45" (p44a Q25), and the 40 worst days, summarised by column, "close: …,
    mean=15905.51" (p45d #7); a listing in time order keeps its values' means."""
    ranked = stage.limit is not None and any(
        key.column not in ("timestamp", "trading_date", "date") for key in stage.sort
    )
    # A ranking's means all go: no column's unit is read (the query's names parsed again).
    units = {}
    if query is not None and not ranked:  # the whole query's: the same on each run of it
        names = list(summary.stats)
        keyed = ("column_units", tuple(names), timeframe)
        units = stage.derived(keyed, partial(column_units, names, timeframe, query))
    for name, stats in summary.stats.items():
        if ranked or units.get(name) == PRICE:
            stats.mean = None


def _latest_first(stage: StagePlan) -> bool:
    """The latest bars first, a few of them: a question about "now"."""
    return bool(
        stage.sort
        and stage.limit is not None
        and stage.sort[0].descending
        and stage.sort[0].column in ("timestamp", "trading_date", "date")
    )


def shown_rows(
    frame: pd.DataFrame,
    timeframe: str,
    hide: tuple[str, ...] = (),
    at: np.ndarray | None = None,
) -> pd.DataFrame:
    """The rows as a person reads them (those at positions ``at`` when given, in that
    order): named by their bar label first, no internal columns.

    Built column by column into a new frame (no copy of the values): cheaper than dropping
    and inserting columns on the thousands of rows behind a number, or than taking every
    column, hidden ones too, for the ten rows listed.
    """
    columns: dict[str, Any] = {}
    labelled = label_column(frame, timeframe, at)
    # A month() of the query's own beside repeating months: the label beside it (bar_month).
    called = label_name(frame, timeframe)
    if labelled is not None and called is not None:
        columns[called] = labelled[1]
    for name in frame.columns:
        if name.startswith(HIDDEN) or name == MINUTE_OF_DAY or name in hide:
            continue
        series = frame[name]
        values = series.to_numpy() if isinstance(series.dtype, np.dtype) else series.array
        columns[name] = values if at is None else values.take(at)
    return pd.DataFrame(columns, copy=False)


def _ordered_positions(
    frame: pd.DataFrame, stage: StagePlan, label: str | None, timeframe: str
) -> tuple[np.ndarray, list[str]]:
    """Row positions in the stage's sort order, cut to its limit (a stable sort), and the
    warning of a tie the limit cuts through.

    The bar label names bars in time order, so sorting by it is sorting by the timestamp.
    """
    positions = np.arange(len(frame))
    ties: list[str] = []
    if stage.sort:
        names = [
            "timestamp" if k.column == label and k.column not in frame.columns else k.column
            for k in stage.sort
        ]
        ascending = [not k.descending for k in stage.sort]
        if names == ["timestamp"] and _in_time_order(frame):
            # Bars each at its own time, in order ("ATR now"): no sort, no ties to find.
            ordered_positions = positions if ascending[0] else positions[::-1]
            return ordered_positions[: stage.limit], ties
        if len(names) == 1:  # one key: the same stable order, without a frame of keys
            positions = _stable_order(frame[names[0]].to_numpy(), ascending[0])
        else:
            keys = pd.DataFrame({f"k{i}": frame[name].to_numpy() for i, name in enumerate(names)})
            ordered = keys.sort_values(
                list(keys.columns), ascending=ascending, kind="stable", na_position="last"
            )
            positions = ordered.index.to_numpy()
        if stage.limit is not None and len(positions) > stage.limit:
            columns = [frame[name].to_numpy() for name in names]

            def keys_at(at: int) -> list[object]:
                return [column[positions[at]] for column in columns]

            ties = tie_at_limit(
                keys_at,
                [k.column for k in stage.sort],
                len(positions),
                stage.limit,
                partial(_row_name, frame, timeframe, positions),
            )
    if stage.limit is not None:
        positions = positions[: stage.limit]
    return positions, ties


def _stable_order(values: np.ndarray, ascending: bool) -> np.ndarray:
    """The positions ``pd.Series(values).sort_values(kind="stable", na_position="last")``
    puts ``values`` in (its index), for numbers as pandas' ``nargsort`` orders them: a
    descending sort is the ascending one of the reversed values, reversed, so that equal
    values keep their order; the empty ones last, in theirs. Other values (dates, text) are
    left to pandas. Without the Series and its sorted copy: a third of a ranking's cost."""
    if values.dtype.kind not in "iuf":
        key = pd.Series(values)
        ordered = key.sort_values(ascending=ascending, kind="stable", na_position="last")
        return ordered.index.to_numpy()
    empty = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), dtype=bool)
    at = np.arange(len(values))
    filled, filled_at = values[~empty], at[~empty]
    if not ascending:
        filled, filled_at = filled[::-1], filled_at[::-1]
    order = filled_at[filled.argsort(kind="stable")]
    if not ascending:
        order = order[::-1]
    return np.concatenate([order, np.flatnonzero(empty)])


def _in_time_order(frame: pd.DataFrame) -> bool:
    """Each row later than the one before (a first stage's bars; not a then stage's rows)."""
    stamps = frame["timestamp"].to_numpy()
    return stamps.dtype.kind == "M" and bool((stamps[1:] > stamps[:-1]).all())


def _row_name(frame: pd.DataFrame, timeframe: str, positions: np.ndarray, at: int) -> str:
    """The row at sorted position ``at`` by its label (date, week…; its time intraday; a then
    stage's row by its first column)."""
    return row_label(frame, int(positions[at]), timeframe)


def sort_limit(
    table: pd.DataFrame, stage: StagePlan, named_by: Sequence[str] = ()
) -> tuple[pd.DataFrame, np.ndarray, list[str], LimitTie | None]:
    """The table sorted and cut, with each kept row's position in the table as given, the
    warning of a tie the limit cuts through (its rows named by ``named_by`` columns), and
    that tie for a chart (the rows past the limit by their ``named_by`` keys)."""
    if not _numbered(table):
        table = table.reset_index(drop=True)
    if not stage.sort and stage.limit is None:
        return table, np.arange(len(table)), [], None  # nothing to order or cut
    ties: list[str] = []
    cut = None
    if stage.sort:
        keys = [k.column for k in stage.sort]
        table = in_sort_order(table, stage.sort)
        if stage.limit is not None:
            columns = [table[key].to_numpy() for key in keys]
            named = [table[column].to_numpy() for column in named_by]

            def keys_at(at: int) -> list[object]:
                return [column[at] for column in columns]

            def name(at: int) -> str:
                return " ".join(value_text(column[at]) for column in named)

            ties = tie_at_limit(keys_at, keys, len(table), stage.limit, name if named_by else None)
            if ties and named_by:
                cut = _limit_tie(table, keys_at, stage.limit, named_by)
    if stage.limit is not None:
        table = table.head(stage.limit)
    return table.reset_index(drop=True), table.index.to_numpy(dtype=np.int64), ties, cut


def _limit_tie(
    table: pd.DataFrame,
    keys_at: Callable[[int], Sequence[object]],
    limit: int | None,
    named_by: Sequence[str],
) -> LimitTie | None:
    """The tie ``tie_at_limit`` warned of, in ``table``'s sort order: its rows past the
    limit by their ``named_by`` keys as text, the first few (``NAMED_ROWS``)."""
    found = cut_tie(keys_at, len(table), limit)
    if found is None or limit is None:
        return None
    first, last = found
    past = range(limit, min(last, limit + NAMED_ROWS - 1) + 1)
    left = [{str(k): value_text(table[k].iloc[at]) for k in named_by} for at in past]
    return LimitTie(
        tied=last - first + 1, kept=limit - first, left=left, left_count=last + 1 - limit
    )


def _numbered(table: pd.DataFrame) -> bool:
    """Whether the rows are already numbered 0, 1, 2…"""
    index = table.index
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def _in_order(frame: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
    """``frame``'s rows by ``order`` (a stable sort), unless they already are."""
    if len(order) < 2 or bool((np.diff(order) >= 0).all()):
        return frame
    out = frame.iloc[np.argsort(order, kind="stable")]
    out.index = pd.RangeIndex(len(out))
    return out


def _judged(period: np.ndarray, condition: pd.Series | None) -> np.ndarray:
    """The period's rows less those its where's condition has no value on (neither kept nor
    left: the 199 days before an SMA200 exists), when they are a notable part of it; else
    the period's rows (the data's first day, with no previous close, changes nothing)."""
    if condition is None or not isinstance(condition.dtype, pd.BooleanDtype):
        return period
    unknown = condition.isna().to_numpy() & period
    if not notable(int(np.count_nonzero(unknown)), int(np.count_nonzero(period))):
        return period
    return period & ~unknown


def _as_condition(values: pd.Series, step: str, text: str) -> np.ndarray:
    if pd.api.types.is_bool_dtype(values):
        return known_true(values)
    # "where": "fomc_minutes" read "gives float64 values" (a dtype) and "Compare it, e.g.
    # 'gap > 0'": a count of minutes, which a model took for the FOMC minutes' days.
    raise TypeMismatch(
        f"'{text}' in {step} gives {KIND_NAMES[value_kind(values)]} per row, not true/false.",
        step=step,
        hint=minutes_compare_hint(text) or f"Compare it, e.g. '{text} > 0'.",
    )


def _evaluate(
    expr: Expr, ctx: EvalContext, step: str, over_all: RowsOverAll | None = None
) -> pd.Series:
    ctx.step = step
    return evaluate(expr, ctx, over_all)


def _python(value: Any) -> Any:
    # A missing date (first(week()) under a where that kept no row) is JSON's null: pandas'
    # NaT is neither a number nor a date the summary can write.
    if value is pd.NaT or (isinstance(value, np.datetime64) and np.isnat(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def _table_rows_of(
    stage: StagePlan,
    every_row: pd.DataFrame,
    keep: np.ndarray,
    bars: np.ndarray,
    output: StageOutput,
) -> np.ndarray | None:
    """Which rows of a first stage's table hold the ``bars`` (a mask over ``every_row``): a
    listing's rows are the bars kept, a grouping's the groups of them, both in time or key
    order before the stage's sort (``output.order``). None: other shapes."""
    table = output.table
    assert table is not None
    kept = every_row[keep]
    if stage.shape == "grouped":
        keys = [name for name, _ in stage.group_keys]
        if any(name not in kept.columns for name in keys):
            return None
        places = kept.groupby(keys, sort=True, dropna=True).ngroup().to_numpy()
    elif stage.shape == "table":
        places = np.arange(len(kept))
    else:
        return None
    held = np.unique(places[bars[keep]])
    at = output.order if output.order is not None else np.arange(len(table))
    if len(at) != len(table):
        return None
    return np.isin(at, held[held >= 0])
