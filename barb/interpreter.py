"""The interpreter: shape → parse → bind and plan → evaluate, each stage small and named.

The pipeline (seed 001's order, with one correction): session → from → join → map →
**period** → where → group_by → select → sort → limit, then an optional second stage
(``then``) over the result table. The period selects rows; it never cuts the history that
``prev()``, rolling windows, indicators and patterns read (``barb.period_rows``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from barb.bar_times import absent_time_caveat
from barb.caveats.bounded_conditions import bounded_condition_caveat
from barb.caveats.calendar import (
    groups_weeks,
    holiday_caveat,
    holiday_shift,
    iso_week_caveat,
    missing_days_caveat,
    period_cuts,
    split_week_caveat,
    unnumbered_holidays_caveat,
    weekend_date_caveat,
)
from barb.caveats.channels import same_bar_channel_caveat
from barb.caveats.counted_dates import counted_dates_caveat
from barb.caveats.cut_bar_rows import cut_rows_text
from barb.caveats.early_close_bars import (
    early_close_bar_caveat,
    early_close_pick_caveat,
    early_close_row_caveat,
)
from barb.caveats.early_close_clocks import early_close_clock_caveat
from barb.caveats.evening_extremes import evening_after_caveat, evening_extreme_caveat
from barb.caveats.events import no_event_day_caveat
from barb.caveats.full_days import (
    calendar_extreme_caveat,
    full_day_caveat,
    full_day_indicator_caveat,
)
from barb.caveats.gap_sizes import sizeless_gap_caveat
from barb.caveats.holiday_closes import holiday_close_caveat, long_break_caveat
from barb.caveats.joined_bars import joined_bar_caveat
from barb.caveats.joined_points import mixed_points_caveat
from barb.caveats.kept_days import KeptDays
from barb.caveats.lookahead import then_past_period_caveat
from barb.caveats.lookback import lookback_caveat
from barb.caveats.open_runs import began_run_caveat, held_in_caveat, open_run_caveat
from barb.caveats.open_units import open_unit_caveat
from barb.caveats.part_day_picks import picked_short_caveat
from barb.caveats.part_group_feeds import say_fed
from barb.caveats.price_level_comparisons import Bars, comparison_caveat
from barb.caveats.price_levels import (
    price_level_caveat,
    running_total_caveat,
    then_level_caveat,
)
from barb.caveats.ranked_groups import PartGroups, cut_group, part_groups
from barb.caveats.run_edges import holiday_run_caveat, run_past_period_caveat
from barb.caveats.running_history import history_beyond_caveat, run_from_history
from barb.caveats.scale_mixups import oscillator_of, rank_of, scale_caveat
from barb.caveats.scope import (
    OpenGroup,
    last_whole_label,
    open_group,
    open_group_caveat,
    scope_caveats,
    unjudged_last_caveat,
)
from barb.caveats.sessions import (
    bar_window,
    part_of_day,
    session_clock,
    session_gap_caveat,
    session_hours,
    session_note,
    window_vwap_caveat,
)
from barb.caveats.short_bar_picks import short_pick_caveat
from barb.caveats.short_day_groups import short_day_group_caveat
from barb.caveats.short_session_groups import short_group_caveat
from barb.caveats.short_sessions import (
    after_window_close_caveat,
    low_tail_caveat,
    mother_bar_caveat,
    part_day_share_caveat,
    short_next_caveat,
    short_sessions_caveat,
)
from barb.caveats.short_weeks import short_weeks_caveat
from barb.caveats.stock_days import stock_days_caveat
from barb.caveats.then_history import day_key, then_history_caveat
from barb.caveats.then_row_order import then_order_caveat
from barb.caveats.then_runs import then_runs_caveat
from barb.caveats.then_short_sessions import then_short_sessions_caveat
from barb.caveats.weekday_neighbours import weekday_neighbour_caveat
from barb.caveats.yardsticks import same_bar_yardstick_caveat
from barb.caveats.zone_clock_groups import zone_group_caveat
from barb.caveats.zone_midnight import (
    clock_columns,
    own_clock_caveat,
    text_clock_zones,
    zone_clock_answers,
    zone_clock_columns,
    zone_midnight_caveat,
)
from barb.caveats.zone_window_groups import zone_window_group_caveat
from barb.caveats.zones import zone_window_caveat
from barb.closed_days import no_trading_error
from barb.column_units import first_map_unit, then_map_unit, then_rows_unit
from barb.errors import (
    BarbError,
    DataError,
    ExecutionError,
    QueryError,
    out_of_memory,
    stopped_from_outside,
)
from barb.events.rules import us_market_closed
from barb.frames import take_rows
from barb.lineage import nodes, through_map, week_names
from barb.long_results import BuiltOnce, spread_rows
from barb.notes import CSV_FIRST_ROWS, NO_BARS, TABLE_FIRST_ROWS, Note
from barb.outcome_groups import possible_outcomes
from barb.period_rows import Scope, bars_in_scope, event_filtered, listed_open_bar, no_rows
from barb.planning import Plan, plan_query, session_name
from barb.process_memory import memory_ceiling
from barb.result import (
    EDGE_ROWS,
    Metadata,
    PartGroup,
    Result,
    RowsBuilder,
    Summary,
    compare_whole_groups,
    sort_order,
)
from barb.script import ast
from barb.script.bars_before import BarsBefore
from barb.script.clock_order import NightSession
from barb.script.context import EvalContext
from barb.script.daily_calls import DAILY_ARGUMENTS
from barb.script.evaluator import evaluate
from barb.script.event_history import (
    HistoryCut,
    ShortHistory,
    history_cut,
    reaches,
    with_back,
)
from barb.script.query import Query, parse_query
from barb.settings import EngineSettings, default_settings
from barb.short_bars import last_full_window_text, short_bar_caveat, short_bar_row_caveat
from barb.stage_output import (
    StageOutput,
    counted_columns,
    query_columns,
    rows_counted,
    sort_keys,
)
from barb.stages import DayOpen, run_stage
from barb.time_keys import CLOCK_NAMES, minute_clocks
from barb.time_zones import short_name

log = logging.getLogger(__name__)

# What a chart draws in place of a table or rows cut for display, None when nothing was cut.
Drawn = pd.DataFrame | RowsBuilder | None

__all__ = ["Plan", "check", "execute", "plan_query", "run", "run_on"]


def execute(
    query: dict[str, Any] | Query,
    instrument: str = "NQ",
    *,
    settings: EngineSettings | None = None,
) -> Result:
    """Run a Barb Script query. Bad queries come back as ``Result.error``, never as raises;
    only what stops it from outside (a worker's time limit, ``stops_from_outside``) is
    raised on to the worker."""
    started = time.perf_counter()
    raw = query.to_json() if isinstance(query, Query) else query
    try:
        parsed = parse_query(query).with_instrument(instrument)
        raw = parsed.to_json()
        settings = settings or default_settings()
        plan = plan_query(parsed, instrument, settings)
        result = run(plan, settings)
    except QueryError as exc:
        return Result(query=raw if isinstance(raw, dict) else {}, error=exc)
    except DataError as exc:
        return Result(
            query=raw if isinstance(raw, dict) else {},
            error=ExecutionError(str(exc), step="data", hint="Run `barb data sample`."),
        )
    except MemoryError:  # past the worker's ceiling (``barb.process_memory``): the query's size
        log.warning("query ran out of memory (ceiling %s bytes): %r", memory_ceiling(), raw)
        return Result(
            query=raw if isinstance(raw, dict) else {}, error=out_of_memory(memory_ceiling())
        )
    except (BarbError, Exception) as exc:  # a bug: log it, never crash the caller
        if stopped_from_outside(exc):  # a worker's time limit: its worker says so
            raise
        ref = uuid.uuid4().hex[:8]
        log.error("query failed (ref %s): %r", ref, raw, exc_info=exc)
        return Result(
            query=raw if isinstance(raw, dict) else {},
            error=ExecutionError(
                f"Internal error while running the query (reference {ref}).", step="execute"
            ),
        )
    assert result.metadata is not None
    result.metadata.elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    return result


def check(
    query: dict[str, Any],
    instrument: str = "NQ",
    *,
    settings: EngineSettings | None = None,
) -> Result | None:
    """What ``execute`` would refuse whatever the data holds: the query parsed, its names
    bound and planned (syntax, fields, functions, their arguments, columns, sessions,
    periods), then its first stage evaluated over no bar (``_dry_run``: hour() on daily
    bars, mean(dayname()), session_high('NOPE')). Milliseconds once the instrument is loaded; no
    bar of the period is built. The same ``Result.error`` as ``execute`` gives, or None if it
    can run; a closed day is left for the run, and a failure of the data or of Barb itself
    raises (the caller shows the plan, and the run says what went wrong in its own words).

    >>> check({"session": "RTH", "map": {"r": "rsi(close, 14"}}).error.error_type
    'SyntaxError'
    >>> check({"session": "RTH", "from": "daily", "group_by": "hour()"}).error.error_type
    'ArgumentError'
    """
    try:
        parsed = parse_query(query).with_instrument(instrument)
        _dry_run(plan_query(parsed, instrument, settings or default_settings()))
    except QueryError as exc:
        return Result(query=query, error=exc)
    return None


# --- running --------------------------------------------------------------------------------


def run(plan: Plan, settings: EngineSettings) -> Result:
    if plan.event_reach is None:
        return run_on(plan, settings, bars_in_scope(plan), None)
    # A count since an event reads back to its event before the period, not to the data's
    # first bar: rows further back each time one is not found (``barb.script.event_history``).
    back = plan.event_reach.back
    assert back is not None
    for reads in reaches(back):
        scope = bars_in_scope(dataclasses.replace(plan, reach=with_back(plan.event_reach, reads)))
        try:
            return run_on(plan, settings, scope, history_cut(scope.in_period, scope.earlier, back))
        except ShortHistory:
            continue
    raise AssertionError("unreachable: the data's first bar is read at last")


def run_on(
    plan: Plan, settings: EngineSettings, scope: Scope, cut: HistoryCut | None = None
) -> Result:
    """``plan`` run over ``scope``'s rows; ``cut``: where the counts since an event must
    find theirs, when those rows begin after the data's first bar."""
    dataset = plan.dataset
    if not scope.in_period.any():
        # A holiday, a weekend: said, rather than an empty result read as missing data.
        closed = no_trading_error(plan)
        if closed is not None:
            raise closed
    frame = scope.frame
    night = _night(plan)
    ctx = _context(plan, frame, night)
    ctx.history_cut = cut
    if cut is not None and len(frame):
        ctx.bars_before = BarsBefore(
            dataset,
            plan.session,
            plan.timeframe.name,
            frame["timestamp"].to_numpy()[0],
            frame["trading_date"].to_numpy()[0],
        )
    keep = event_filtered(plan, frame, scope.in_period)
    # An event filter that kept none of the period's bars: the bars scanned are the
    # period's, as a where's are ("Scanned 0 bars, no bars" read as missing data).
    no_event_day = no_event_day_caveat(plan, scope, keep)
    scanned = keep if no_event_day is None else scope.in_period
    rows_scanned = int(np.count_nonzero(scanned))
    # A weekly or longer bar begins at its timestamp (its first trading date) and ends at
    # its trading date (its last): the period covered runs from one to the other.
    begins = frame["timestamp" if plan.timeframe.calendar else "trading_date"].to_numpy()
    covered = _covered(begins, frame["trading_date"].to_numpy(), scanned)

    day_open = _day_open(night, plan)
    bars = _StageBars(plan, frame, night, keep, scope.in_period, day_open)
    output = bars.first_stage(plan, ctx, frame)
    # The answer as its stage gave it, before the warnings below name whole groups in it:
    # what a statistic run again counted another way is compared with (``own_clock_caveat``).
    answer = _as_given(plan, output.summary)
    # Run again only when a running high or low met higher (lower) bars before the period:
    # on a copy, so the caveats below read this run's columns; its then stage too, whose
    # answer is the one compared.
    from_history = run_from_history(
        ctx,
        lambda again: _answer(
            plan, bars.first_stage(plan, again, frame.copy(deep=False)), again, day_open
        ),
    )
    rows_matched = output.rows_kept
    cut_rows = partial(cut_rows_text, plan, ctx, scope, output.summary, run_stage)
    warnings = list(plan.warnings) + scope_caveats(plan, scope, output.kept_dates, cut_rows)
    past_end, past_end_at = plan.past_end, len(plan.warnings)
    if rows_matched == 0:
        warnings.append(no_event_day or Note.of(NO_BARS))
        instrument = dataset.instrument
        warnings += absent_time_caveat(
            plan.first.where,
            dict(plan.first.map_exprs),
            plan.timeframe,
            plan.session,
            instrument.session(plan.session),
            instrument,
        )
        warnings += same_bar_channel_caveat(plan.first)
        warnings += weekend_date_caveat(plan)
        warnings += early_close_clock_caveat(plan, scope)
    warnings += output.warnings
    warnings += unjudged_last_caveat(plan, scope, output.last_unjudged)
    levels = price_level_caveat(plan, ctx, output)  # before a then stage moves ctx
    warnings += levels
    warnings += mixed_points_caveat(plan, output.kept)
    # Weighed over the first stage's own answer only: a then stage shows other values.
    shift = None
    if plan.then is None and output.kept is not None:
        shift = partial(
            holiday_shift,
            plan.first,
            ctx,
            output.kept,
            even=frozenset(output.even_columns),
            shown=output.aggregates,
        )
    warnings += holiday_caveat(plan, output.kept_dates, shift)
    if plan.then is None:  # else said of the rows the then stage lists
        warnings += short_sessions_caveat(plan, output.table, _rows_shown(output))
    said, short_weeks = short_weeks_caveat(plan, output)
    warnings += said
    closes = holiday_close_caveat(plan, output.kept, frame, whole=output.summary.whole)
    warnings += closes
    # Weighed on the answer the model reads: a then stage's, once it has run (below).
    stock_days = None
    if not closes and cut is None:  # else the rows after the holidays are said already
        stock_days = partial(_stock_days_only, bars, ctx, day_open)
    if stock_days is not None and plan.then is None:
        warnings += stock_days_caveat(
            plan, output.kept_dates(), answer, output.table, stock_days, output.kept
        )
    warnings += joined_bar_caveat(plan, output.kept)
    warnings += long_break_caveat(plan, ctx, output.kept)
    warnings += low_tail_caveat(plan, ctx, output.kept)
    picked = picked_short_caveat(plan, ctx, frame, keep, output)
    warnings += picked
    # Groups mostly of short sessions are named; else the share over all the rows is said.
    kept_days = KeptDays(dataset, output.kept)  # their dates, read once for both
    warnings += short_group_caveat(
        plan, output.kept, own_said=bool(picked), kept_days=kept_days
    ) or (part_day_share_caveat(plan, ctx, output.kept, own_said=bool(picked), kept_days=kept_days))
    warnings += mother_bar_caveat(plan, ctx, frame, output.kept)
    warnings += short_next_caveat(plan, ctx, frame, output.kept)
    warnings += after_window_close_caveat(plan, ctx, output.kept)
    warnings += full_day_caveat(plan, output.kept)
    warnings += full_day_indicator_caveat(plan, ctx, output.kept, scope)
    # The group of the data's unfinished week, month or year, which group_by's note names.
    cut_short = None
    if plan.first.shape == "grouped":
        cut_short = open_group(plan, output.table, output.kept_dates)
    warnings += open_unit_caveat(plan, ctx, output.kept, cut_short)
    warnings += calendar_extreme_caveat(plan, output.kept)
    warnings += evening_extreme_caveat(plan, output.kept)
    warnings += evening_after_caveat(plan, output.kept)
    warnings += counted_dates_caveat(plan, output.kept)
    warnings += short_pick_caveat(plan, output.kept)
    warnings += missing_days_caveat(plan, scope, ctx, _listed_dates(plan, output))
    warnings += unnumbered_holidays_caveat(plan, scope, ctx, output.passed)
    warnings += session_gap_caveat(plan)
    warnings += window_vwap_caveat(plan)
    warnings += zone_window_caveat(plan, covered)
    warnings += zone_midnight_caveat(plan, covered)
    # Where the day-edge warning goes, said once a then stage's rows are known (the days whose
    # answer it changes are counted among them).
    looked_at = len(warnings)
    if output.passed is not None:  # the rows the where kept, among the bars read around them
        warnings += weekday_neighbour_caveat(plan, frame, output.passed)
        warnings += same_bar_yardstick_caveat(plan, ctx, frame, keep, output.passed)
        warnings += bounded_condition_caveat(plan, ctx, frame, keep, output.passed)
    warnings += sizeless_gap_caveat(plan, frame, keep)
    # A percentile compared with a fraction (rank(range) > 0.95), counted by the where.
    query_json = plan.query.to_json()
    warnings += scale_caveat(
        plan.first,
        lambda expr: first_map_unit(expr, query_json),
        lambda expr: oscillator_of(expr, query_json, then=False),
        output.rows_kept,
        int(np.count_nonzero(keep)),
    )
    # The answer against the one read from all history, before compare_whole_groups below
    # renames this run's highest and lowest to the whole groups' (the re-run's never are:
    # NQ's max(hi) by year() over 2020-06:2023-06 was told cummax() started at the period
    # though all history gave the same); a then stage's once it has run.
    history_beyond = history_beyond_caveat(from_history, output) if plan.then is None else []
    whole_first = None
    cut_groups: list[OpenGroup] = []
    # Groups holding part of their week, month or year (the data's end or the period's
    # edges cut them), with their warnings, put here once a ranking in either stage is known.
    parts, parts_at = PartGroups([], []), len(warnings)
    group_said: list[str] = []  # of the first stage's groups, one by one
    if plan.first.shape == "grouped":
        cuts = period_cuts(plan, scope, output.kept_dates)
        cut_groups = [g for g in (cut_group(plan, c) for c in cuts) if g is not None]
        said = open_group_caveat(plan, cut_short, output.kept, cut=cut_groups)
        past_end = past_end if cut_short is None or not said else None
        parts = part_groups(plan, cut_short, said, cuts)
        if plan.then is None and output.table is not None:  # the model's highest and lowest
            table = output.table
            found = {g.label: g for g in parts.groups if g is not None}
            whole = [PartGroup(g.label, g.unit, g.rows(table)) for g in found.values()]
            compare_whole_groups(output.summary, table, whole)
        keys = [name for name, _ in plan.first.group_keys]
        ranked = parts.rank(plan.first.sort, keys, output.groups)
        if ranked is not None and ranked.group is cut_short:
            whole_first = ranked.first
        parts_at = len(warnings)
        warnings += iso_week_caveat(plan, output.kept)
        warnings += split_week_caveat(plan, output.kept_dates)
        group_said = early_close_bar_caveat(plan, output.kept)
        warnings += group_said
    then_rows, first = None, output
    kept_none = False  # a then where that kept none of the first stage's rows
    dropped: set[str] = set()  # what was said of its groups, then
    outcomes = _outcomes(plan, first, ctx)
    if plan.then is not None:
        given = output.table
        output = _second_stage(plan, output, ctx, day_open, outcomes)
        answer = _as_given(plan, output.summary)
        if stock_days is not None:
            warnings += stock_days_caveat(
                plan, first.kept_dates(), answer, output.table, stock_days, output.kept
            )
        history_beyond = history_beyond_caveat(from_history, output)
        record = first.record_rows  # the data's first year's highs, in rows then drops
        if record is not None and _keeps_none(record[1], output.passed) and record[0] in warnings:
            warnings.remove(record[0])
        warnings += output.warnings
        warnings += early_close_pick_caveat(plan, given, output.passed)
        warnings += short_sessions_caveat(plan, output.table, _rows_shown(output))
        warnings += picked_short_caveat(plan, ctx, frame, keep, first, output)
        warnings += then_order_caveat(plan, first.order)
        warnings += then_past_period_caveat(plan, output.table)
        if plan.then.where is not None and given is not None:
            then_rows = (output.rows_kept, len(given))
            kept_none = output.rows_kept == 0 and len(given) > 0
            if kept_none:
                # As a first stage's where keeping no bar: said, and nothing said of the
                # first stage's groups (their noise, their short days, a year not over),
                # none of which the answer holds.
                dropped = {*first.noise, *group_said}  # left out at the end: no index moves
                rows = then_rows_unit(query_json, plan.timeframe.name) or "groups"
                warnings.append(f"No {rows} matched the then where: the result is empty.")
        # A share compared with a percent (mean_up > 55), counted by the then where.
        warnings += scale_caveat(
            plan.then,
            lambda expr: then_map_unit(expr, query_json),
            lambda expr: oscillator_of(expr, query_json, then=True),
            output.rows_kept,
            len(given) if given is not None else None,
            lambda expr: rank_of(expr, query_json),
        )
        # A ranking of the first stage's groups, or of groups made of them.
        keys = [name for name, _ in plan.then.group_keys or plan.first.group_keys]
        parts.rank(plan.then.sort, keys, output.groups)
        if output.kept is not None:  # a statistic over the groups, a part one among them
            say_fed(parts, plan.then, ctx, output.kept, plan.query.to_json())
    # Day groups of intraday bars holding a holiday's or an early close's part day.
    if not kept_none:
        warnings += short_day_group_caveat(
            plan,
            first,
            output if plan.then else None,
            warnings,
            ctx=ctx,
            then_without=(
                _then_without(plan, first, ctx, day_open, outcomes) if plan.then else None
            ),
        )
    if plan.then is not None and not kept_none:  # daily rows of short sessions it aggregates
        warnings += then_short_sessions_caveat(
            plan, first, output, ctx, _then_without(plan, first, ctx, day_open, outcomes), warnings
        )
    # Groups by another zone's clock, whose exchange hours move with daylight saving.
    warnings += zone_group_caveat(plan, first, output if plan.then else None)
    # A window on another zone's clock, grouped by the exchange's.
    warnings += zone_window_group_caveat(plan, first)
    few = output.few_groups if output is first else None
    few_keys: list[dict[str, str]] = []  # the groups said to be too few, for the chart
    if few is not None and few.text in warnings:  # an unfinished year's 4 days are said
        opened = [g.keys for g in parts.groups if g is not None]
        few_keys = [
            g.keys for g in few.groups if not any(k.items() <= g.keys.items() for k in opened)
        ]
        left = few.without(opened) if opened else few.text
        at = warnings.index(few.text)
        warnings[at : at + 1] = [left] if left else []
        parts_at -= left is None and at < parts_at
    warnings[parts_at:parts_at] = [] if kept_none else parts.texts
    # looked_at <= parts_at: inserted after the parts' texts, whose place counted without it.
    warnings[looked_at:looked_at] = lookback_caveat(
        plan, ctx, frame, first, output if plan.then is not None else None
    )
    if past_end is not None:  # in its place among the plan's, once no index above moves
        warnings.insert(past_end_at, past_end)
    warnings += began_run_caveat(plan, frame, scope.in_period, first, output)
    warnings += held_in_caveat(plan, frame, scope.in_period, first, output)
    warnings += run_past_period_caveat(plan, ctx, scope, frame, first)
    warnings += holiday_run_caveat(plan, ctx, scope.in_period, frame, first)
    warnings += open_run_caveat(plan, frame, scope.in_period, first, output)
    percent_ranks: dict[str, float] = {}
    running = running_total_caveat(plan, first, output)
    if plan.then is not None and not levels and not running:  # a then stage's statistics
        running = then_level_caveat(plan, ctx, first, output)
    warnings += running
    if not levels and not running:  # one word per result that its points blend prices
        # The period's first and last trading dates bound the closes it can compare.
        dates = frame["trading_date"].to_numpy()
        closes = Bars(frame, keep, scope.in_period, _covered(dates, dates, scope.in_period))
        level = comparison_caveat(plan, ctx, closes, first, output)
        warnings += level.warnings
        percent_ranks = level.percent_ranks

    if output.summary.type == "grouped" and plan.timeframe.intraday:  # the short last bar
        window, by = bar_window(plan), output.summary.by or []
        query, stage = plan.query.to_json(), plan.then or plan.first
        # A count of the bars themselves holds as many short bars as full ones a day.
        bars_counted = [] if plan.then is not None else rows_counted(stage)
        warnings += short_bar_caveat(
            plan.timeframe.name,
            window.hours,
            output.table,
            by,
            query,
            output.groups,
            stage.sort,
            stage.limit,
            bars_counted,
            zone=window.zone,
        )
    elif (
        output.summary.type == "table"
        and plan.then is not None
        and plan.timeframe.intraday
        and plan.first.group_keys
        and not plan.then.group_keys
    ):
        # A second stage's rows are the first stage's groups: volume by time(), then each
        # hour's share of the day (then.map: vol / sum(vol) * 100) listed the 16:30 bar's
        # half hour at 0.82% beside full hours, and CASH's 15:30 as its "last hour" (12.32%
        # where 15:00-16:00 holds 20.43%), with no word.
        window = bar_window(plan)
        said = short_bar_caveat(
            plan.timeframe.name,
            window.hours,
            output.table,
            [name for name, _ in plan.first.group_keys],
            plan.query.to_json(),
            None,
            plan.then.sort,
            plan.then.limit,
            zone=window.zone,
        )
        if said:
            warnings += [
                said[0] + last_full_window_text(plan.timeframe.name, window.hours, window.zone)
            ]
    elif output.summary.type == "table" and plan.then is None and plan.timeframe.intraday:
        window = bar_window(plan)
        warnings += short_bar_row_caveat(
            plan.timeframe.name, window.hours, output.table, window.zone
        )
        warnings += early_close_row_caveat(plan, output.table, _rows_shown(output))
    output.summary.clocks = _clocks(plan, output)
    # A statistic of the exchange's clock over a session across its midnight, run again
    # counted from the open: said when the answer changes.
    # Both read a clock's uses in the query: none without an hour() or time() (``_clocked``).
    if _clocked(plan):
        counted = partial(bars.counted, settings, ctx, first)
        warnings += own_clock_caveat(plan, covered, answer, counted)
        # Another zone's clock across its midnight: its form's answer beside the advice.
        warnings = zone_clock_answers(plan, covered, answer, counted, warnings)
    table, source_rows, drawn, truncated = _bounded(output, settings, warnings)
    warnings += [w for w in [*history_beyond, *ctx.warnings] if w not in warnings]
    # A fact two caveats found is said once; none of the groups a then where dropped all of.
    warnings = [w for w in dict.fromkeys(warnings) if w not in dropped]
    metadata = Metadata(
        instrument=dataset.instrument.symbol,
        session=plan.session,
        session_hours=session_hours(plan),
        session_note=session_note(plan),
        session_clock=session_clock(plan),
        timeframe=plan.timeframe.name,
        period_requested=plan.period.text,
        period_start=covered[0],
        period_end=covered[1],
        rows_scanned=rows_scanned,
        rows_matched=rows_matched,
        warnings=warnings,
        data_source=dataset.meta.source,
        data_description=dataset.meta.source_label(),
        data_last=dataset.last_date,
        truncated=truncated,
        open_group=cut_short.keys if cut_short is not None else None,
        cut_groups=[g.keys for g in cut_groups] if plan.then is None else [],
        begun_groups=output.begun_groups if plan.then is None else [],
        few_groups=few_keys,
        # A second stage's table holds other rows: only the first stage's groups are named.
        first_whole=(
            whole_first.to_dict() if whole_first is not None and plan.then is None else None
        ),
        then_rows=then_rows,
        open_bar=listed_open_bar(plan, scope),
        short_weeks=short_weeks,
        even_groups=output.even_columns or None,
        apart_groups=list(output.apart_columns) or None,
        untested_groups=output.untested_columns or None,
        near_groups=output.near_groups or None,
        limit_tie=output.limit_tie,
        same_runs=output.same_runs if plan.then is None else None,
        unjudged_last=last_whole_label(plan, scope, first.last_unjudged),
        unjudged_rows=first.last_unjudged,
        percent_ranks=percent_ranks or None,
        part_counted=parts.counted,
        cut_runs=[run for said, run in ctx.cut_runs.items() if said in warnings],
        record_run=output.record_text,
        baselines=output.baselines,
    )
    return Result(
        query=plan.query.to_json(),
        summary=output.summary,
        table=table,
        source_rows=source_rows,
        metadata=metadata,
        focus_columns=output.focus,
        drawn_rows=drawn,
        run_rows=output.run_rows,
    )


@dataclasses.dataclass(frozen=True)
class _StageBars:
    """What a run's first stage reads (the bars, those kept, the period) and is told, for
    running it again over the same bars: read from all history (``run_from_history``), or
    a clock counted another way (``counted``)."""

    plan: Plan
    frame: pd.DataFrame
    night: NightSession | None
    keep: np.ndarray
    period: np.ndarray
    day_open: DayOpen | None

    def first_stage(
        self, plan: Plan, ctx: EvalContext, frame: pd.DataFrame, *, checks: bool = True
    ) -> StageOutput:
        """``plan``'s first stage over ``frame``; the events focused and the columns hidden
        are the run's own plan's; ``checks`` False: its numbers alone (``run_stage``)."""
        return run_stage(
            plan.first,
            frame,
            ctx,
            self.keep,
            focus=[j.source for j in self.plan.events if j.source is not None],
            hide=_hidden(self.plan),
            period=self.period,
            picked=any(j.filter is not None for j in plan.events),
            day_open=self.day_open,
            query=plan.query,
            checks=checks,
        )

    def counted(
        self,
        settings: EngineSettings,
        ctx: EvalContext,
        first: StageOutput,
        query: dict[str, Any],
    ) -> Summary | None:
        """``query`` (the plan's but for how it counts a clock) answered over this run's
        bars: its first stage run again only where it differs, a then stage over ``first``,
        the run's first stage's output."""
        symbol = self.plan.dataset.instrument.symbol
        try:
            again = plan_query(parse_query(query), symbol, settings)
        except QueryError:
            return None
        fresh = {"warnings": [], "row_warnings": [], "history_beyond": [], "cut_runs": {}}
        if _stage_query(query) == _stage_query(self.plan.query.to_json()):  # the then stage's
            return _answer(again, first, replace(ctx, **fresh), self.day_open).summary
        again_ctx = _context(again, self.frame, self.night)
        # The stage writes its map's columns into its frame.
        again_first = self.first_stage(again, again_ctx, self.frame.copy(deep=False))
        return _answer(again, again_first, again_ctx, self.day_open).summary


def _as_given(plan: Plan, summary: Summary) -> Summary:
    """``summary`` as its stage gave it, for ``own_clock_caveat`` and ``zone_clock_answers``
    to compare an answer counted another way with: a copy, as the warnings rename its
    groups after. Both read a clock of intraday bars alone (``_clocked``): else the summary
    is never read, and its deep copy (0.05-0.1 ms, a tenth of a daily question) not made."""
    return summary.model_copy(deep=True) if _clocked(plan) else summary


def _stock_days_only(
    bars: _StageBars, ctx: EvalContext, day_open: DayOpen | None
) -> StageOutput | None:
    """The first stage's answer over its bars without the US holiday sessions
    (``stock_days_caveat``): prev() then reads the last stock-market close by itself."""
    frame = bars.frame
    if "trading_date" not in frame.columns:
        return None
    open_days = ~us_market_closed(frame["trading_date"].to_numpy().astype("datetime64[D]"))
    rows = take_rows(frame, open_days)
    again = replace(bars, frame=rows, keep=bars.keep[open_days], period=bars.period[open_days])
    fresh = {"warnings": [], "row_warnings": [], "history_beyond": [], "cut_runs": {}}
    quiet = replace(ctx, frame=rows, **fresh)
    try:
        # Its numbers alone are compared: none of its own warnings weighed.
        output = again.first_stage(bars.plan, quiet, rows.copy(deep=False), checks=False)
    except BarbError:
        return None
    return _answer(bars.plan, output, quiet, day_open)


def _stage_query(query: dict[str, Any]) -> dict[str, Any]:
    """A query's first stage: all of it but its then stage."""
    return {key: value for key, value in query.items() if key != "then"}


def _clocks(plan: Plan, output: StageOutput) -> dict[str, str]:
    """The answer's value columns that hold minutes of the day, by their clock's zone ("ET",
    "MSK"): ``Summary.clocks``."""
    if not plan.timeframe.intraday:
        return {}
    summary, table = output.summary, output.table
    if summary.type == "scalar":
        columns = {(summary.columns or ["value"])[0]: pd.Series([summary.value])}
    elif summary.type == "dict":
        columns = {name: pd.Series([value]) for name, value in (summary.values or {}).items()}
    elif table is not None:
        keys = {*(summary.by or []), *([summary.label] if summary.label else [])}
        columns = {
            str(name): table[name]
            for name in summary.shown or []
            if name in table.columns and name not in keys
        }
    else:
        return {}
    if not plan.reads_clock and CLOCK_NAMES.isdisjoint(columns):
        return {}  # a minute of the day is hour() * 60 + minute(), time(), or by its name
    home = short_name(plan.dataset.instrument.timezone)
    found = {name: home for name in minute_clocks(columns, plan.query.to_json())}
    zoned = zone_clock_columns(plan) if plan.reads_clock else {}
    for name, zone in zoned.items():  # hour('MSK') * 60 + minute('MSK')
        values = columns.get(name)
        if values is not None and pd.api.types.is_numeric_dtype(values):
            found.setdefault(name, zone)
    return found


def _context(plan: Plan, frame: pd.DataFrame, night: NightSession | None) -> EvalContext:
    """What the first stage's expressions are evaluated with, over ``frame``."""
    dataset = plan.dataset
    return EvalContext(
        frame=frame,
        timeframe=plan.timeframe.name,
        session_bars=lambda name: dataset.session_daily(session_name(dataset, name)),
        step="map",
        calendar=dataset.instrument.calendar,
        timezone=dataset.instrument.timezone,
        trading_dates=dataset.trading_dates,
        day_session=dataset.instrument.default_session,
        night=None if _zoned_clocks_only(plan) else night,
        session=plan.session,
        period_unit=plan.period.calendar_unit,
        # Read by daily(), weekly() and monthly() alone (what they say on a part of the day).
        part_of_day=part_of_day(plan) if plan.first.calls & DAILY_ARGUMENTS.keys() else None,
        clock_columns=clock_columns(plan) if _clocked(plan) else {},
        text_zones=text_clock_zones(plan) if _clocked(plan) else {},
        week_columns=_week_columns(plan),
    )


def _week_columns(plan: Plan, *, then: bool = False) -> frozenset[str]:
    """The columns of the first stage's rows (``then``: the second stage's) that hold week()
    labels: a map's ``"wk": "week()"``, the first stage's week key or the weekly bars' label,
    so that ``wk == '2024-01-01'`` means that date's week as ``week() == '2024-01-01'`` does."""
    first, weekly = plan.first, plan.timeframe.name == "weekly"
    mapped = dict(first.map_exprs)
    weeks = week_names(first.map_exprs, mapped, weekly_bars=weekly)
    if not then or plan.then is None:
        return weeks
    named = [*first.group_keys, *((item.name, item.expr) for item in first.select)]
    shown = week_names(named, mapped, weeks, weekly_bars=weekly)
    if weekly and first.label and first.shape == "table":
        shown |= {first.label}  # the weekly bar's own label: its week's first trading date
    then_map = plan.then.map_exprs
    return shown | week_names(then_map, dict(then_map), shown, weekly_bars=weekly)


def _clocked(plan: Plan) -> bool:
    """Whether a clock's columns and uses are looked for: of intraday bars, when a stage
    calls hour() or time(), where each begins (``barb.caveats.zone_midnight``)."""
    return plan.timeframe.intraday and plan.reads_clock


def _dry_run(plan: Plan) -> None:
    """The first stage evaluated as ``run`` evaluates it, over no bar (``no_rows``): what
    each function and operator refuses whatever the data holds (hour() on daily bars,
    session_high('NOPE'), mean(dayname()), date() >= 'notadate') is raised here by the
    same code, the bars left unread. A closed day is the run's to say
    (``no_trading_error``), with the dates around it."""
    frame = no_rows(plan)
    night = _night(plan)
    ctx = _context(plan, frame, night)
    none = np.zeros(0, dtype=bool)
    day_open = _day_open(night, plan)
    run_stage(plan.first, frame, ctx, none, hide=_hidden(plan), period=none, day_open=day_open)
    # Not the then stage: over no row the first stage's table has no values to type its
    # columns by, nor its aggregates ("t == max(t)" was refused as text against 'None' where
    # every real table runs it, r47g). The run judges it; planning has checked its names.


def _hidden(plan: Plan) -> tuple[str, ...]:
    """The engine's columns a stage's rows leave out: a daily bar's trading_date is its date."""
    return ("trading_date",) if plan.timeframe.name == "daily" else ()


def _second_stage(
    plan: Plan,
    first: StageOutput,
    ctx: EvalContext,
    day_open: DayOpen | None,
    outcomes: dict[str, list[Any]],
) -> StageOutput:
    """``then``: the first stage's table is the second stage's rows; ``outcomes``, what its
    count's key could take (``_outcomes``)."""
    assert plan.then is not None and first.table is not None
    rows = first.table.copy(deep=False)
    ctx.rows_are_weeks = groups_weeks(plan.first)
    ctx.week_columns = _week_columns(plan, then=True)
    ctx.rows_are_groups = plan.first.shape == "grouped"
    ctx.row_dates = day_key(plan.first)
    ctx.bar_clock_columns = _bar_clock_columns(plan)
    ctx.clock_columns = clock_columns(plan, then=True) if _clocked(plan) else {}
    ctx.text_zones = text_clock_zones(plan, then=True) if _clocked(plan) else {}
    output = _then_stage(
        plan, rows, first.order, ctx, day_open, query=plan.query, outcomes=outcomes
    )
    output.warnings += then_history_caveat(
        plan, rows, first.kept, first.passed, ctx.trading_dates, output.passed
    )
    output.warnings += then_runs_caveat(plan, ctx, rows, output.passed, first.order)
    if output.summary.type != "table" and output.passed is not None:
        # What the second stage's numbers rest on: the first stage's rows its where kept
        # (the weeks that opened down, not every week), with the columns its map made.
        mapped = [name for name, _ in plan.then.map_exprs if name not in first.table.columns]
        shown = rows[[*first.table.columns, *mapped]]
        output.source_rows = take_rows(shown, output.passed)
        if output.runs_at is not None:  # a streak record's runs, as those rows show them
            output.run_rows = shown.iloc[output.runs_at].reset_index(drop=True)
    if plan.then.shape == "table" and not plan.then.sort and plan.first.sort:
        # Rows listed keep the first stage's order, not time order.
        output.summary.order = sort_order(sort_keys(plan.first))
    return output


def _answer(
    plan: Plan, first: StageOutput, ctx: EvalContext, day_open: DayOpen | None
) -> StageOutput:
    """The query's answer from its first stage's ``first``: the then stage's over its
    table, or ``first`` itself."""
    if plan.then is None or first.table is None:
        return first
    return _second_stage(plan, first, ctx, day_open, _outcomes(plan, first, ctx))


def _rows_shown(output: StageOutput) -> np.ndarray | None:
    """Which rows of a table too long to show whole the model is shown (the first and the
    last ``EDGE_ROWS``, ``barb.result``); None when it is shown all of them."""
    table = output.table
    if table is None or output.summary.whole:
        return None
    shown = np.zeros(len(table), dtype=bool)
    shown[:EDGE_ROWS] = shown[-EDGE_ROWS:] = True
    return shown


def _keeps_none(rows: np.ndarray | None, passed: np.ndarray | None) -> bool:
    """Whether the then stage's where (``passed``) keeps none of the first stage's ``rows``."""
    if rows is None or passed is None or len(rows) != len(passed):
        return False
    return not np.any(rows & passed)


def _bar_clock_columns(plan: Plan) -> frozenset[str]:
    """The columns of a listing of intraday bars that are each bar's own time(): a second
    stage's "where": "t >= '20:00'" over them is the evening of each bar, as the first
    stage's "time() >= '20:00'" is, not the time of an event (each day's high) that the
    session's order reads otherwise. Over ETH it was told it left out 370 of 502 bars."""
    if not plan.timeframe.intraday or plan.first.shape != "table":
        return frozenset()
    mapped = dict(plan.first.map_exprs)
    return frozenset(
        item.name
        for item in plan.first.select
        if not item.aggregate and _is_bar_clock(through_map(item.expr, mapped))
    )


def _is_bar_clock(expr: ast.Expr) -> bool:
    return isinstance(expr, ast.Call) and expr.name == "time" and not expr.args


def _then_stage(
    plan: Plan,
    rows: pd.DataFrame,
    order: np.ndarray | None,
    ctx: EvalContext,
    day_open: DayOpen | None,
    query: Query | None = None,
    outcomes: dict[str, list[Any]] | None = None,
) -> StageOutput:
    """The then stage over ``rows`` of the first stage's table (``order``: their places in
    time or key order); ``query`` None: its single row is not tested against no edge;
    ``outcomes``: its count's key's values none of the rows picked are listed at 0."""
    assert plan.then is not None
    return run_stage(
        plan.then,
        rows,
        ctx,
        np.ones(len(rows), dtype=bool),
        prefix="then.",
        row_keys=tuple(name for name, _ in plan.first.group_keys),
        order=order,
        day_open=day_open,
        carried=query_columns(plan.first) if plan.first.shape == "table" else (),
        counts=counted_columns(plan.first),
        query=query,
        outcomes=outcomes,
    )


def _then_without(
    plan: Plan,
    first: StageOutput,
    ctx: EvalContext,
    day_open: DayOpen | None,
    outcomes: dict[str, list[Any]],
) -> Callable[[np.ndarray], StageOutput]:
    """The then stage run again over the first stage's table less the rows a mask marks,
    saying nothing: the answer a caveat compares with (the 497 full days of 517)."""

    def again(drop: np.ndarray) -> StageOutput:
        assert first.table is not None
        rows = first.table[~drop].reset_index(drop=True)
        order = first.order[~drop] if first.order is not None else None
        aside = dataclasses.replace(ctx, warnings=[], row_warnings=[], history_beyond=[])
        return _then_stage(plan, rows, order, aside, day_open, outcomes=outcomes)

    return again


def _outcomes(plan: Plan, first: StageOutput, ctx: EvalContext) -> dict[str, list[Any]]:
    """Every value the then stage's count's key could take: what the first stage's arg_max
    or arg_min reads over its rows kept (``barb.outcome_groups``); {} when not such a
    count. Before ``ctx`` is set for the then stage's rows."""
    kept, table = first.kept, first.table
    if plan.then is None or kept is None or table is None:
        return {}

    def values(expr: ast.Expr, rows: pd.DataFrame) -> Any:
        aside = dataclasses.replace(
            ctx, frame=rows, period=None, warnings=[], row_warnings=[], history_beyond=[]
        )
        return evaluate(expr, aside)

    keys = [name for name, _ in plan.then.group_keys]
    picked = table[keys[0]] if len(keys) == 1 and keys[0] in table.columns else None
    return possible_outcomes(plan.first, plan.then, kept, picked, values)


def _listed_dates(plan: Plan, output: StageOutput) -> np.ndarray | None:
    """The trading dates of the first stage's rows when the model reads them one by one (a
    table shown whole, ``Summary.whole``; no second stage); else None."""
    kept = output.kept
    if plan.then is not None or plan.first.shape != "table" or kept is None:
        return None
    if not output.summary.whole or "trading_date" not in kept.columns:
        return None
    return kept["trading_date"].to_numpy()


def _night(plan: Plan) -> NightSession | None:
    """Intraday bars of a session that crosses midnight (ETH, OVERNIGHT, '20:00-02:00'),
    else None."""
    if not plan.timeframe.intraday:
        return None
    spec = plan.dataset.instrument.session(plan.session)
    if (
        not spec.crosses_midnight or spec.zone is not None
    ):  # a window on another clock is other exchange hours on other dates
        return None
    return NightSession(plan.session, spec.hours, spec.start_minute, spec.length_minutes)


def _zoned_clocks_only(plan: Plan) -> bool:
    """Whether every time() the query calls reads another zone's clock (time('MSK')): its
    times are not the session's, whose order from the exchange's open the text-order
    warnings judge by (ETH from 18:00 ET is 01:00-00:00 in a Moscow summer, nearly the
    text order), so those warnings do not apply; the zone's midnight inside the session is
    ``barb.caveats.zone_midnight``'s to say."""
    calls = [
        node
        for stage in (plan.first, plan.then)
        if stage is not None and "time" in stage.calls
        for expr in stage.expressions
        for node in nodes(expr, dict(stage.map_exprs))
        if isinstance(node, ast.Call) and node.name == "time"
    ]
    return bool(calls) and all(call.args for call in calls)


def _day_open(night: NightSession | None, plan: Plan) -> DayOpen | None:
    """Over a session that crosses midnight its trading day starts at its open, and times
    of day are listed from there."""
    return None if night is None else DayOpen(night.open, plan.query.to_json())


def _bounded(
    output: StageOutput, settings: EngineSettings, warnings: list[str]
) -> tuple[pd.DataFrame | None, pd.DataFrame | RowsBuilder | None, Drawn, bool]:
    """The table and rows kept for display, at most ``max_table_rows`` each (their first
    rows), and what the chart draws instead when they were cut (``barb.long_results``)."""
    table, source_rows, truncated = output.table, output.source_rows, False
    drawn: Drawn = None
    limit = settings.max_table_rows
    if table is not None and len(table) > limit:
        warnings.append(Note.of(TABLE_FIRST_ROWS, rows=str(len(table)), held=str(limit)))
        # Groups go to the chart whole: it thins them itself (``barb.charts.many_groups``)
        # and counts the ties its headline names over all of them ("least often 2 bars (38
        # tied)" read "(11 tied)" of a spread).
        drawn = table if output.summary.type == "grouped" else spread_rows(table, limit)
        table, truncated = table.iloc[:limit], True
    if callable(source_rows):  # rows built when read: behind a number, or a table's chart
        # Behind a number, one per row the stage kept; a table's (its period's closes, the
        # bars before "ATR now") are the chart's, never more than the table says.
        if output.table is None and output.rows_kept > limit:
            rows = BuiltOnce(source_rows, limit)
            source_rows, drawn, truncated = rows.first, rows.every, True
            if output.runs_at is None:  # a streak record's CSV holds its runs, whole
                warnings.append(Note.of(CSV_FIRST_ROWS, rows=output.rows_kept, held=limit))
    elif source_rows is not None and len(source_rows) > limit:
        drawn = source_rows
        source_rows, truncated = source_rows.iloc[:limit], True
    return table, source_rows, drawn, truncated


def _covered(
    begins: np.ndarray, ends: np.ndarray, keep: np.ndarray
) -> tuple[dt.date | None, dt.date | None]:
    """The trading dates actually covered by the period's bars, before where filters them:
    where the first kept bar begins and the last one ends.

    Read at the first and last kept row: no copy of millions of minute bars' dates.
    """
    if not keep.any():
        return None, None
    first = int(keep.argmax())
    last = _last_true(keep)
    day = "datetime64[D]"
    return begins[first].astype(day).tolist(), ends[last].astype(day).tolist()


def _last_true(mask: np.ndarray, chunk: int = 4096) -> int:
    """Position of the last true value, read back from the end a chunk at a time: argmax of
    the reversed view would first copy all of it (milliseconds on minute bars)."""
    stop = len(mask)
    while stop > 0:
        start = max(0, stop - chunk)
        hits = np.flatnonzero(mask[start:stop])
        if len(hits):
            return start + int(hits[-1])
        stop = start
    raise ValueError("no true value")
