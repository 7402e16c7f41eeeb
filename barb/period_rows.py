"""The bars a query evaluates on: the period's bars plus the history its expressions read.

The period selects rows; it never cuts history. So the planner's ``Reach`` widens the
period's slice of the cached (session, timeframe) frame backwards (and forwards, for
``next()``), intraday slices to whole trading dates (VWAP and the day's first bar need them),
and marks which rows are the period's own. Weekly and longer bars are kept
only when they lie wholly inside the period; those cut by its edges are left out and kept
(``CutBar``), so the result can name them.

The data's last weekly or longer bar is unfinished while the exchange still trades in its
week, month, quarter or year. One rule, whatever N: ``last_N_bars`` is the last N bars as
they are, the unfinished one included (and said); ``last_N_weeks`` on weekly bars
(``last_N_months`` on monthly, ``last_N_years`` on yearly) is the last N whole bars, the
unfinished one left out (and said); any other period counts whole bars only, and gives the
unfinished bar only when it is all the period holds (``wtd``, ``mtd``, ``ytd``, ``2026``).
Left out, it is no bar's next() either, though the period ends before it (``2008:2025``).

The data's first weekly or longer bar is likewise part of one when the exchange traded in its
week, month, quarter or year before the data begins (the sample starts on Wednesday
2008-01-02; Monday 2007-12-31 traded): outside ``last_N_bars`` it is left out, counted and
said like a bar the period's start cuts (``data_start_cut``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np
import pandas as pd

from barb.bar_labels import label_column, unit_label
from barb.errors import DataError
from barb.events import join_events
from barb.events.rules import RULE_COVERAGE, trading_days
from barb.frames import Dataset, DayIndex, last_weekday_of_period, period_start, with_range
from barb.notes import START_ROW, Note
from barb.planning import JOINED_BAR_COLUMNS, JoinedInstrument, Plan
from barb.result import UnfinishedBar
from barb.script.periods import Period
from barb.script.query import JoinSpec
from barb.script.warmup import Reach
from barb.timeframes import TIMEFRAMES, Timeframe

_Fact = TypeVar("_Fact")


@dataclass(frozen=True)
class Scope:
    # The slice evaluated on, with a RangeIndex and joins applied.
    frame: pd.DataFrame
    # Which of its rows are the period's own (the others are history).
    in_period: np.ndarray
    # Weekly and longer bars left out because the period's edges cut them.
    cut: tuple[CutBar, ...] = ()
    # Bars left out by instrument joins because the other side had no bar: the period's,
    # and those its rows read across (prev() on the Monday after a Good Friday left out).
    unmatched: tuple[Unmatched, ...] = ()
    # The period's last weekly or longer bar when the data ends before its week, month,
    # quarter or year does, and whether it was kept (see the module's docstring).
    open_bar: OpenBar | None = None
    # That unfinished bar when it lies after the period ("period": "2025" in January 2026)
    # and next() of the period's last bars would have read it: empty there instead.
    open_after: OpenBar | None = None
    # The data's first bar, left out because its week, month or year began before the data.
    start_cut: StartCut | None = None
    # Its label as the result names bars ("2008-01-02").
    start_cut_label: str | None = None
    # Whether the data holds bars before ``frame``'s first.
    earlier: bool = False


@dataclass(frozen=True)
class CutBar:
    """A weekly or longer bar the period's edges cut, left out: its label as the result names
    bars ("2025-12-29") and the trading dates it holds, from its first to its last."""

    label: str
    first_date: np.datetime64
    last_date: np.datetime64


@dataclass(frozen=True)
class Unmatched:
    symbol: str  # whose bars were left out
    partner: str  # the instrument that had no bar to match them
    count: int
    # The first few bars left out, named as the person reads them (2024-03, 2024-03-29).
    names: tuple[str, ...]
    # The row after the first one left out and the row its prev() reads instead (the one
    # before it): ("2023-01-03", "2022-12-30"); None when no row lies on both sides.
    lag: tuple[str, str] | None = None
    # How many of them lie outside the period, among the bars its rows read (a Good Friday
    # before it, read by prev() on the Monday).
    outside: int = 0
    # Whether the first named lies after the period, read across by next() (of ``lag``'s
    # second row) rather than prev().
    ahead: bool = False


@dataclass(frozen=True)
class OpenBar:
    label: str
    first_date: np.datetime64
    last_date: np.datetime64
    kept: bool


@dataclass(frozen=True)
class StartCut:
    """The data's first week, month, quarter or year when the exchange traded in it before
    the data begins: its ``unit`` (``week``), the day it ``begins`` (its Monday, its 1st),
    the trading days the data holds of it and the exchange's calendar has in it."""

    unit: str
    begins: np.datetime64
    days: int
    calendar_days: int

    def row_note(self, days: int) -> Note:
        """'The week 2007-12-31 began before the data starts: its row counts only 3 of its 4
        days.' (``days``: the days of it the row counts)."""
        label = unit_label(self.begins, self.unit)
        return Note.of(START_ROW, unit=self.unit, label=label, held=days, total=self.calendar_days)


def data_start_cut(dataset: Dataset, timeframe: str) -> StartCut | None:
    """The data's first week, month, quarter or year (``timeframe``: weekly … yearly) when
    the exchange's calendar has trading days in it before the data's first date; None when
    it has none, or the calendar is unknown or does not reach back to its start."""
    first = np.datetime64(dataset.first_date, "D")
    begins = np.datetime64(period_start(np.array([first]), timeframe)[0], "D")
    end = np.datetime64(last_weekday_of_period(first, timeframe), "D")
    try:
        days = trading_days(dataset.instrument.calendar)
    except DataError:
        return None
    if not len(days) or begins < days[0] or end > days[-1]:
        return None
    before = int(np.searchsorted(days, first) - np.searchsorted(days, begins))
    if before <= 0:
        return None
    total = int(np.searchsorted(days, end, side="right") - np.searchsorted(days, begins))
    dates = np.asarray(dataset.trading_dates(), dtype="datetime64[D]")
    held = int(np.searchsorted(dates, end, side="right") - np.searchsorted(dates, begins))
    return StartCut(TIMEFRAMES[timeframe].label, begins, held, max(total, held))


def bars_in_scope(plan: Plan) -> Scope:
    """The period's rows and the history its expressions read, joins applied.

    A join keeps only the rows both instruments have, so it can leave fewer rows before
    the period than prev() and rolling windows read: NQ's ETH daily bars of 2024-04-01 and
    the one before, joined with CL, hold no row before the period (CL has no Good Friday
    session), and prev(close) read nothing. The rows are then read again further back
    (and ahead, for next()) until the joined rows reach as far as the query reads, so a
    period's answer is the same joined computation over all history, restricted to it.
    """
    more = (0, 0)
    while True:
        rows = _rows(plan, more)
        frame = rows.frame
        for join in plan.events:
            assert join.source is not None
            frame = join_events(
                frame, join.source, plan.dataset.instrument, intraday=plan.timeframe.intraday
            )
        joins, in_period = [], rows.in_period
        for joined in plan.instruments:
            before, before_in_period = frame, in_period
            frame, kept, orphans = join_instrument(
                frame, joined.join, joined.dataset, joined.session, plan.timeframe
            )
            in_period = in_period[kept]
            joins.append(_Joined(joined, before, before_in_period, kept, orphans))
        wider = _wider(plan, rows, frame, in_period, more) if joins else None
        if wider is None:
            break
        more = wider
    unmatched = _unmatched(plan, rows, frame, in_period, joins) if joins else ()
    return Scope(
        frame,
        in_period,
        rows.cut,
        unmatched,
        rows.open_bar,
        rows.open_after,
        rows.start_cut,
        rows.start_label,
        rows.earlier,
    )


def no_rows(plan: Plan) -> pd.DataFrame:
    """The columns ``bars_in_scope`` gives the first stage, joins applied, with their dtypes
    and no row: what a query's expressions are checked on before it runs (each function's
    and operator's own rules refuse hour() on daily bars or mean(dayname()) on no data)."""
    dataset, tf = plan.dataset, plan.timeframe
    frame = dataset.no_bars(plan.session, tf.name)
    if plan.reads_range and "range" not in frame.columns:
        frame = with_range(frame.copy())
    for join in plan.events:
        assert join.source is not None
        frame = join_events(frame, join.source, dataset.instrument, intraday=tf.intraday)
    for joined in plan.instruments:
        other = joined.dataset.no_bars(joined.session, tf.name)
        frame, _, _ = join_instrument(frame, joined.join, joined.dataset, joined.session, tf, other)
    return frame


def event_filtered(plan: Plan, frame: pd.DataFrame, in_period: np.ndarray) -> np.ndarray:
    """The period's rows (``in_period``, over ``frame``) an event join's filter keeps: on
    FOMC days only ("filter": "only"), or all but them ("exclude")."""
    keep = in_period
    for join in plan.events:
        if join.filter is not None:
            assert join.source is not None
            marked = frame[join.source].fillna(False).to_numpy(dtype=bool)
            keep = keep & (marked if join.filter == "only" else ~marked)
    return keep


@dataclass(frozen=True)
class _Rows:
    """The rows loaded for a period (``_cached_rows``, ``_sliced_rows``), before joins."""

    frame: pd.DataFrame
    in_period: np.ndarray
    cut: tuple[CutBar, ...] = ()
    open_bar: OpenBar | None = None
    open_after: OpenBar | None = None
    start_cut: StartCut | None = None
    start_label: str | None = None
    # Whether the data holds bars before (after) the rows loaded: more can be read.
    earlier: bool = False
    later: bool = False


@dataclass(frozen=True)
class _Joined:
    """One instrument join: the rows it was applied to, which of them the period holds,
    the positions of those kept, and the other's bars no row matched."""

    joined: JoinedInstrument
    before: pd.DataFrame
    in_period: np.ndarray
    kept: np.ndarray
    orphans: pd.DataFrame


def _rows(plan: Plan, more: tuple[int, int] = (0, 0)) -> _Rows:
    if plan.dataset.sliced(plan.session, plan.timeframe.name):
        return _sliced_rows(plan, more, ranged=plan.reads_range)
    return _cached_rows(plan, more)


def _wider(
    plan: Plan, rows: _Rows, joined: pd.DataFrame, in_period: np.ndarray, more: tuple[int, int]
) -> tuple[int, int] | None:
    """The rows to load beyond the reach (``more``, before and after) when the joined rows
    (``joined``) around the period are fewer than the query reads and the data holds more;
    None when they are enough. Each try at least doubles what it adds, so a join that drops
    many bars (minutes one market lacks) needs few."""
    at = np.flatnonzero(in_period)
    if not len(at):
        return None
    reached = _joined_reach_start(plan, joined, int(at[0]))
    short_back = -reached if reached is not None and rows.earlier else 0
    last = reach_end(int(at[-1]), plan.reach, _unit_end(joined, plan.timeframe))
    short_ahead = last - (len(in_period) - 1) if rows.later else 0
    if short_back <= 0 and short_ahead <= 0:
        return None
    before, after = more
    if short_back > 0:
        before += max(short_back, before)
    if short_ahead > 0:
        after += max(short_ahead, after)
    return before, after


def _unmatched(
    plan: Plan, rows: _Rows, frame: pd.DataFrame, in_period: np.ndarray, joins: list[_Joined]
) -> tuple[Unmatched, ...]:
    """Each join's left-out bars that the period holds or its rows read: those between the
    first and last joined rows its prev(), next() and rolling windows read (2024-03-29,
    NQ's Good Friday, when the period 2024-04-05 reads 20 daily rows back), so a value read
    across the gap is said however the period is cut. A count since an event reads all
    history: only the period's own are said there."""
    tf = plan.timeframe
    keys = _join_key(frame, tf)
    span = _read_span(plan, frame, keys, in_period)
    at = np.flatnonzero(in_period)
    joined = _JoinedRows(frame, keys, keys[at[0]] if len(at) else None)
    symbol = plan.dataset.instrument.symbol
    found = []
    for join in joins:
        other = join.joined.dataset.instrument.symbol
        dropped = join.in_period | _within(_join_key(join.before, tf), span)
        dropped[join.kept] = False
        found.append(_left_out(plan, symbol, other, join.before, dropped, join.in_period, joined))
        # The other market's bars in the period that ours lack are left out too (its holiday
        # session on a day ours is shut), and its prev() on the next row skips them.
        orphans = join.orphans
        theirs = _other_in_period(orphans, plan, join.before[join.in_period])
        keep = theirs | _within(_join_key(orphans, tf), span)
        if rows.open_bar is not None and not rows.open_bar.kept:
            # Its week, unfinished, is left out.
            keep &= _first_dates(orphans, tf) < rows.open_bar.first_date
        if rows.start_cut is not None:  # so is the data's first, part week: the other's too
            begins = period_start(_first_dates(orphans, tf), tf.name)
            keep &= begins.astype("datetime64[D]") != rows.start_cut.begins
        found.append(_left_out(plan, other, symbol, orphans, keep, theirs, joined))
    return tuple(found)


@dataclass(frozen=True)
class _JoinedRows:
    """The rows evaluated on, all joins applied, with their join keys, and the key of the
    period's first row (None when it holds none)."""

    frame: pd.DataFrame
    keys: np.ndarray
    period_start: object


def _left_out(
    plan: Plan,
    symbol: str,
    partner: str,
    bars: pd.DataFrame,
    out: np.ndarray,
    in_period: np.ndarray,
    joined: _JoinedRows,
) -> Unmatched:
    """``symbol``'s ``bars`` marked ``out`` (the period's own, ``in_period``, named first),
    and the joined rows on either side of the first named."""
    tf = plan.timeframe
    rows = _period_first(np.flatnonzero(out), in_period)
    named = bars.iloc[rows[:UNMATCHED_NAMED]]
    first = _join_key(named.iloc[:1], tf)
    lag = _around(joined.frame, joined.keys, first, plan)
    # One after the period is read across by next() of the row before it.
    ahead = bool(len(rows)) and not in_period[rows[0]]
    ahead = ahead and joined.period_start is not None and bool(first[0] > joined.period_start)
    outside = int(np.count_nonzero(~in_period[rows]))
    return Unmatched(symbol, partner, len(rows), _bar_names(named, tf), lag, outside, ahead)


def _period_first(rows: np.ndarray, in_period: np.ndarray) -> np.ndarray:
    """``rows`` (positions, in time order) with the period's own first: those the warning
    names and whose prev() it follows are the period's when it has any."""
    inside = in_period[rows]
    return np.concatenate([rows[inside], rows[~inside]])


def _read_span(
    plan: Plan, frame: pd.DataFrame, keys: np.ndarray, in_period: np.ndarray
) -> tuple[object, object] | None:
    """The join keys (``keys``, of the joined rows ``frame``) of the first and last joined
    rows the period's rows read: its own, widened by the reach (by none before it when the
    reach is all history); None when the period holds no row."""
    at = np.flatnonzero(in_period)
    if not len(at):
        return None
    reached = _joined_reach_start(plan, frame, int(at[0]))
    first = int(at[0]) if reached is None else max(0, reached)
    read = reach_end(int(at[-1]), plan.reach, _unit_end(frame, plan.timeframe))
    last = min(len(keys) - 1, read)
    return keys[first], keys[last]


def _joined_reach_start(plan: Plan, joined: pd.DataFrame, row: int) -> int | None:
    """``reach_start`` of ``row`` among the joined rows: a unit's first row is the first
    both markets have."""
    return reach_start(row, plan.reach, _unit_start(joined, plan.timeframe))


def _within(keys: np.ndarray, span: tuple[object, object] | None) -> np.ndarray:
    """Which ``keys`` lie strictly between the span's ends: a bar left out there is one a
    joined row's prev(), next() or window reads across."""
    if span is None:
        return np.zeros(len(keys), dtype=bool)
    return (keys > span[0]) & (keys < span[1])


def _other_in_period(bars: pd.DataFrame, plan: Plan, ours: pd.DataFrame) -> np.ndarray:
    """Which of the other market's ``bars`` lie in the period: its dates, or for the last N
    bars the dates of ours (``ours``, the period's own bars)."""
    period, tf = plan.period, plan.timeframe
    keep = np.ones(len(bars), dtype=bool)
    if period.everything or not len(bars):
        return keep
    start: object = period.start
    end: object = period.end
    if start is None and end is None:
        if not len(ours):
            return ~keep
        start, end = _first_dates(ours, tf)[0], ours["trading_date"].to_numpy()[-1]
    if start is not None:
        keep &= _first_dates(bars, tf) >= np.datetime64(start, "ns")
    if end is not None:
        keep &= bars["trading_date"].to_numpy() <= np.datetime64(end, "ns")
    return keep


def _first_dates(bars: pd.DataFrame, tf: Timeframe) -> np.ndarray:
    """Each bar's first trading date: a calendar bar's timestamp, otherwise its date."""
    return bars["timestamp" if tf.calendar else "trading_date"].to_numpy()


# How many of the bars a join left out the warning names: enough for a year's holidays one
# market keeps and the other does not (with 3, "the days CL traded and NQ did not" could
# name only 3 of the 7 Good Fridays, p32a Q18).
UNMATCHED_NAMED = 8


def _around(
    frame: pd.DataFrame, keys: np.ndarray, left_out: np.ndarray, plan: Plan
) -> tuple[str, str] | None:
    """The joined rows on either side of a bar a join left out (its key, ``left_out``, one
    or none): the row after it, whose prev() reads the row before it."""
    if not len(left_out):
        return None
    at = int(np.searchsorted(keys, left_out[0]))
    if at == 0 or at >= len(keys):
        return None
    after, before = _bar_names(frame.iloc[[at, at - 1]], plan.timeframe)
    return after, before


def _bar_names(bars: pd.DataFrame, tf: Timeframe) -> tuple[str, ...]:
    labelled = label_column(bars, tf.name)
    if labelled is not None:
        return tuple(str(name) for name in labelled[1])
    return tuple(pd.DatetimeIndex(bars["timestamp"]).strftime("%Y-%m-%d %H:%M"))


# The first (last) row of the calendar unit (``daily`` … ``yearly``) that a row lies in.
UnitStart = Callable[[int, str], int]
UnitEnd = Callable[[int, str], int]


def _window(
    lo: int,
    hi: int,
    n: int,
    plan: Plan,
    more: tuple[int, int],
    unit_start: UnitStart,
    unit_end: UnitEnd,
) -> tuple[int, int]:
    """Rows ``start:stop`` to evaluate on: the period ``lo:hi``, the reach around it and
    ``more`` rows before and after (for the rows a join leaves out)."""
    reached = reach_start(lo, plan.reach, unit_start)
    start = 0 if reached is None else max(0, reached - more[0])
    last = reach_end(hi - 1, plan.reach, unit_end) if hi > lo else hi - 1 + plan.reach.ahead
    return start, min(n, last + 1 + more[1])


def reach_start(row: int, reach: Reach, unit_start: UnitStart) -> int | None:
    """The first row that the rows from ``row`` on read: ``reach.back`` rows before it, then
    back to the first row of each of its units in turn (``Reach.units``), ``back`` rows
    further each time, as the reach does not say on which side of a unit its bars are read
    (prev(cummax(high, 'week')) reads the week of the bar before, cummax(prev(high), 'week')
    the bar before the week); None for all of them. Negative when that lies before the rows
    ``unit_start`` knows, by as many rows as are missing. The period 2024-03 of daily bars
    reads from Friday 02-23 for prev(cummax(high, 'week')): the bar before Friday 03-01 is
    Thursday 02-29, whose week began on Monday 02-26, and one bar before it."""
    back = reach.back
    if back is None:
        return None
    start = row - back
    for unit in reach.units:
        if start < 0:
            break
        start = unit_start(start, unit) - back
    return start


def reach_end(row: int, reach: Reach, unit_end: UnitEnd) -> int:
    """The last row that the rows up to ``row`` read: ``reach.ahead`` rows after it, then on
    to the last row of each of its ``Reach.ahead_units`` in turn, ``ahead`` rows further each
    time. rank(range, 'month') over a period ending on 2024-04-15 reads April's last day."""
    end = row + reach.ahead
    for unit in reach.ahead_units:
        end = unit_end(end, unit) + reach.ahead
    return end


def _unit_start(bars: pd.DataFrame, tf: Timeframe) -> UnitStart:
    """``UnitStart`` over ``bars`` (in time order), their dates read only when asked: most
    queries restart nothing."""
    return lambda row, unit: _unit_first(_first_dates(bars, tf), row, unit)


def _unit_end(bars: pd.DataFrame, tf: Timeframe) -> UnitEnd:
    """``UnitEnd`` over ``bars``, as ``_unit_start``."""
    return lambda row, unit: _unit_last(_first_dates(bars, tf), row, unit)


def _unit_last(dates: np.ndarray, row: int, unit: str) -> int:
    """The last of the rows dated ``dates`` in the calendar ``unit`` that row ``row`` lies
    in; ``row`` itself past the last row."""
    day = dates[row : row + 1]
    if not len(day):
        return row
    following = _next_unit(day[0], unit).astype(dates.dtype)
    return int(np.searchsorted(dates, following, side="left")) - 1


def _next_unit(day: np.datetime64, unit: str) -> np.datetime64:
    """The first date of the calendar ``unit`` (``daily`` … ``yearly``) after ``day``'s."""
    if unit == "daily":
        return day.astype("datetime64[D]") + np.timedelta64(1, "D")
    begins = period_start(np.array([day], dtype="datetime64[ns]"), unit)[0]
    if unit == "weekly":
        return begins.astype("datetime64[D]") + np.timedelta64(7, "D")
    months = {"monthly": 1, "quarterly": 3, "yearly": 12}[unit]
    return begins.astype("datetime64[M]") + np.timedelta64(months, "M")


def _unit_first(dates: np.ndarray, row: int, unit: str) -> int:
    """The first of the rows dated ``dates`` (in order; a calendar bar's first date) in the
    calendar ``unit`` that row ``row`` lies in."""
    day = dates[row : row + 1]
    if not len(day):  # an empty period after the last row
        return row
    begins = day if unit == "daily" else period_start(day, unit)
    return int(np.searchsorted(dates, begins[0], side="left"))


def _cached_rows(plan: Plan, more: tuple[int, int] = (0, 0)) -> _Rows:
    """The rows of a cached whole-history frame: a view of the slice evaluated on."""
    full = plan.dataset.frame(plan.session, plan.timeframe.name)
    period, tf = plan.period, plan.timeframe
    whole = whole_bars(period, tf)
    cut: tuple[CutBar, ...] = ()
    if whole is not None:
        lo, hi = max(0, len(full) - whole), len(full)
    else:
        lo, hi, cut_rows = period_positions(full, period, tf)
        if cut_rows:  # no empty take: on most periods it cost more than the rest here
            cut = _cut_bars(full.iloc[cut_rows], tf)
    start_cut, start_label = None, None
    if tf.calendar and period.bars is None and lo == 0 and hi > 1:
        # (Kept when it is all the period holds, like the unfinished last bar.)
        # The data's first bar, part of its week or year: left out like one the period's
        # start cuts, though it stays history for prev().
        start_cut, start_label = _frame_fact(plan, "start_cut", lambda: _start_cut(plan, full))
        if start_cut is not None:
            lo += 1
    open_bar = None
    if tf.calendar:
        calendar = plan.dataset.instrument.calendar
        open_bar = _frame_fact(plan, "open_bar", lambda: _open_bar(full, tf, calendar))
    open_after = None
    usable = len(full)
    if open_bar is not None and (hi != len(full) or lo >= hi):
        # After the period: never the next bar of its last whole ones either ("after a
        # month up 10%" in 2008:2025 must not read January 2026's four days as December's
        # next month).
        usable -= 1
        if lo < hi and hi + plan.reach.ahead + more[1] >= len(full):
            open_after = open_bar
        open_bar = None
    if open_bar is not None:
        # The last N bars include it; the last N whole weeks do not; any other period only
        # when it holds nothing else ("this month so far").
        kept = period.bars is not None or (whole is None and hi - lo == 1)
        open_bar = replace(open_bar, kept=kept)
    if open_bar is not None and not open_bar.kept:
        if whole is not None:  # the N whole bars before it
            lo = max(0, lo - 1)
        hi -= 1
        # Left out means left out of what the whole bars read too: next() of the last
        # whole month must not be this month's first days.
        usable -= 1
    start, stop = _window(lo, hi, usable, plan, more, _unit_start(full, tf), _unit_end(full, tf))
    if plan.timeframe.intraday and start < len(full):
        # Whole trading dates: the day's first bar and VWAP's reset are then always there.
        dates = full["trading_date"].to_numpy()
        start = int(np.searchsorted(dates, dates[start], side="left"))
    frame = full.iloc[start:stop].copy(deep=False)
    frame.index = pd.RangeIndex(len(frame))
    in_period = _in_period(len(frame), lo - start, hi - start)
    return _Rows(
        frame,
        in_period,
        cut,
        open_bar,
        open_after,
        start_cut,
        start_label,
        earlier=start > 0,
        later=stop < usable,
    )


def _frame_fact(plan: Plan, name: str, build: Callable[[], _Fact]) -> _Fact:
    """A fact of the whole-history frame of the plan's session and timeframe (its unfinished
    last bar, its part first one), built once per named session: the labels and calendars
    they are read from cost a weekly question a quarter of a millisecond each time. A time
    window's frame is open-ended, and the fact is built again."""
    dataset = plan.dataset
    if plan.session not in dataset.instrument.sessions:
        return build()
    key = f"{name}:{plan.session}:{plan.timeframe.name}"
    found: tuple[_Fact] = dataset.derived(key, lambda: (build(),))  # None is a fact too
    return found[0]


def _start_cut(plan: Plan, full: pd.DataFrame) -> tuple[StartCut | None, str | None]:
    """The data's first bar when its week or year began before the data, and its label."""
    start_cut = data_start_cut(plan.dataset, plan.timeframe.name)
    if start_cut is None:
        return None, None
    label = label_column(full.iloc[:1], plan.timeframe.name)
    return start_cut, str(label[1][0]) if label is not None else None


def listed_open_bar(plan: Plan, scope: Scope) -> UnfinishedBar | None:
    """The unfinished bar kept in a table of bars, for the chart to mark: a grouped result
    or a ``then`` stage's rows are not bars, and their open group is ``open_group``'s."""
    bar = scope.open_bar
    if bar is None or not bar.kept or plan.first.shape != "table" or plan.then is not None:
        return None
    first, last = (pd.Timestamp(d).date() for d in (bar.first_date, bar.last_date))
    dates = plan.dataset.trading_dates()
    days = _search(dates, bar.last_date, "right") - _search(dates, bar.first_date, "left")
    total = calendar_days(bar.last_date, plan.timeframe.name, plan.dataset.instrument.calendar)
    return UnfinishedBar(
        label=bar.label,
        first=first,
        last=last,
        days=days,
        calendar_days=total if total is not None and total >= days else None,
    )


def calendar_days(last: np.datetime64, unit: str, calendar: str | None) -> int | None:
    """The trading days the exchange's calendar has in the week, month, quarter or year
    (``unit``: weekly … yearly) that ``last`` lies in; None beyond its published years or
    for an instrument without a known calendar."""
    start = np.datetime64(period_start(np.array([last], dtype="datetime64[ns]"), unit)[0], "D")
    end = np.datetime64(last_weekday_of_period(last, unit), "D")
    if calendar is None or end > np.datetime64(RULE_COVERAGE[1]):
        return None
    try:
        days = trading_days(calendar)
    except DataError:
        return None
    return int(np.searchsorted(days, end, side="right") - np.searchsorted(days, start))


def whole_bars(period: Period, tf: Timeframe) -> int | None:
    """N when ``period`` is last_N_<unit>s on bars of that unit (last_2_months on monthly
    bars): the last N whole bars, not the whole bars inside N months of calendar days back
    (which the unfinished month and the month those days start in would leave at none)."""
    if tf.calendar and period.unit is not None and period.unit == tf.label:
        return period.count
    return None


def _open_bar(full: pd.DataFrame, tf: Timeframe, calendar: str) -> OpenBar | None:
    """The data's last bar, if its calendar span is not over yet: a year of four days is no
    year to average with the others (``kept`` is decided by the caller)."""
    if not tf.calendar or not len(full):
        return None
    last = full["trading_date"].to_numpy()[-1]
    if not still_open(last, tf.name, calendar):
        return None
    label = label_column(full.iloc[-1:], tf.name)
    assert label is not None
    first = full["timestamp"].to_numpy()[-1]
    return OpenBar(str(label[1][0]), first, last, kept=False)


def _sliced_rows(plan: Plan, more: tuple[int, int] = (0, 0), *, ranged: bool = False) -> _Rows:
    """The same rows as ``_cached_rows`` would give, built from the trading dates they lie on
    (``Dataset.sliced``): positions come from the day index, so nothing outside them is
    built. ``ranged``: with the bars' range, which 1-minute bars have only when read."""
    index = plan.dataset.day_index(plan.session, plan.timeframe.name)
    n, period = index.rows, plan.period
    if period.bars is not None:
        hi = _day_start(index, period.end, "right") if period.end else n
        lo = max(0, hi - period.bars)
    else:
        lo = _day_start(index, period.start, "left") if period.start else 0
        hi = _day_start(index, period.end, "right") if period.end else n
    start, stop = _window(lo, hi, n, plan, more, _day_unit_start(index), _day_unit_end(index))
    if start >= stop:
        first = last = 0
    else:
        # Whole trading dates, as for cached frames.
        first = int(np.searchsorted(index.starts, start, side="right")) - 1
        last = int(np.searchsorted(index.starts, stop, side="left"))
        start = int(index.starts[first])
    frame = plan.dataset.frame_for_days(
        plan.session, plan.timeframe.name, first, last, ranged=ranged
    )
    frame = frame.iloc[: max(0, stop - start)].copy(deep=False)
    frame.index = pd.RangeIndex(len(frame))
    in_period = _in_period(len(frame), lo - start, hi - start)
    return _Rows(frame, in_period, earlier=start > 0, later=stop < n)


def _day_unit_start(index: DayIndex) -> UnitStart:
    """``UnitStart`` over the bars a day index places: the first bar of a row's date's
    unit is the first of the first date in it."""

    def first_row(row: int, unit: str) -> int:
        if row >= index.rows:  # an empty period after the last row
            return row
        day = int(np.searchsorted(index.starts, row, side="right")) - 1
        return int(index.starts[_unit_first(index.dates, day, unit)])

    return first_row


def _day_unit_end(index: DayIndex) -> UnitEnd:
    """``UnitEnd`` over the bars a day index places: the last bar of the last date in a
    row's date's unit."""

    def last_row(row: int, unit: str) -> int:
        if row >= index.rows:
            return row
        day = int(np.searchsorted(index.starts, row, side="right")) - 1
        following = _unit_last(index.dates, day, unit) + 1  # the next unit's first date
        return int(index.starts[following]) - 1

    return last_row


def _day_start(index: DayIndex, day: object, side: str) -> int:
    """Position of the first bar on (``left``) or after (``right``) ``day``."""
    return int(index.starts[_search(index.dates, day, side)])


def _in_period(length: int, lo: int, hi: int) -> np.ndarray:
    in_period = np.zeros(length, dtype=bool)
    in_period[max(0, lo) : max(0, hi)] = True
    return in_period


def _cut_bars(bars: pd.DataFrame, tf: Timeframe) -> tuple[CutBar, ...]:
    labelled = label_column(bars, tf.name)
    if labelled is None or not len(bars):
        return ()
    firsts, lasts = bars["timestamp"].to_numpy(), bars["trading_date"].to_numpy()
    return tuple(
        CutBar(str(label), first, last)
        for label, first, last in zip(labelled[1], firsts, lasts, strict=True)
    )


def period_positions(
    frame: pd.DataFrame, period: Period, tf: Timeframe
) -> tuple[int, int, list[int]]:
    """Rows ``lo:hi`` of ``frame`` in the period, and the rows of the bars its edges cut."""
    n = len(frame)
    if period.bars is not None:
        hi = n
        if period.end is not None:  # pinned: a calendar bar ends where it began
            hi = _search(
                frame["timestamp" if tf.calendar else "trading_date"].to_numpy(),
                period.end,
                "right",
            )
        return max(0, hi - period.bars), hi, []
    if period.start is None and period.end is None:
        return 0, n, []
    last = frame["trading_date"].to_numpy()
    if not tf.calendar:
        lo = _search(last, period.start, "left") if period.start else 0
        hi = _search(last, period.end, "right") if period.end else n
        return lo, hi, []
    # A calendar bar holds the trading dates from its timestamp (the first) to trading_date.
    first = frame["timestamp"].to_numpy()
    lo = _search(first, period.start, "left") if period.start else 0
    hi = _search(last, period.end, "right") if period.end else n
    touching_lo = _search(last, period.start, "left") if period.start else 0
    touching_hi = _search(first, period.end, "right") if period.end else n
    whole = max(0, hi - lo)
    cut = [row for row in range(touching_lo, touching_hi) if not lo <= row < lo + whole]
    return lo, lo + whole, cut


def still_open(last: np.datetime64, unit: str, calendar: str) -> bool:
    """Whether the week, month, quarter or year (``unit``: weekly … yearly) that ``last``
    lies in still has trading days after it."""
    return _days_left(last, last_weekday_of_period(last, unit), calendar)


def _days_left(last: np.datetime64, period_end: np.datetime64, calendar: str) -> bool:
    """Whether the exchange trades after ``last`` up to ``period_end``: a month whose data
    ends on the Thursday before Good Friday is over. Beyond the calendar's published years,
    every weekday counts."""
    if last >= period_end:
        return False
    end = np.datetime64(period_end, "D")
    if end > np.datetime64(RULE_COVERAGE[1]):
        return True
    try:
        days = trading_days(calendar)
    except DataError:  # an instrument without a known calendar: weekdays
        return True
    after = int(np.searchsorted(days, np.datetime64(last, "D"), side="right"))
    return after < len(days) and bool(days[after] <= end)


def _search(values: np.ndarray, day: object, side: str) -> int:
    return int(np.searchsorted(values, np.datetime64(day, "ns"), side=side))  # type: ignore[call-overload]


def join_instrument(
    frame: pd.DataFrame,
    join: JoinSpec,
    other: Dataset,
    session: str,
    tf: Timeframe,
    bars: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame]:
    """``frame``'s rows that the other instrument also has a bar for, with its bars as
    ``<symbol>_open`` … columns; the positions of those rows in ``frame``; and the other's
    bars (of those read) that no row of ``frame`` matched.

    Bars are matched on their time (intraday), trading date (daily) or the week, month,
    quarter or year they stand for (weekly and longer): two markets' months need not end on
    the same day (CL has no Good Friday session, ES a short one). Both sides are in time
    order with one bar per key, so the match is one sorted intersection. ``bars``: the
    other's bars to match (None: those of ``frame``'s dates).
    """
    if bars is None:
        bars = _other_bars(other, session, tf, frame["trading_date"].to_numpy())
    ours, theirs = _join_key(frame, tf), _join_key(bars, tf)
    _, kept, matched = np.intersect1d(ours, theirs, assume_unique=True, return_indices=True)
    merged = frame.iloc[kept].copy(deep=False)
    merged.index = pd.RangeIndex(len(merged))
    for name in JOINED_BAR_COLUMNS:
        merged[join.prefix + name] = bars[name].to_numpy()[matched]
    alone = np.ones(len(bars), dtype=bool)
    alone[matched] = False
    return merged, kept, bars[alone]


def _join_key(bars: pd.DataFrame, tf: Timeframe) -> np.ndarray:
    if tf.intraday:
        return bars["timestamp"].to_numpy()
    dates = bars["trading_date"].to_numpy()
    return period_start(dates, tf.name) if tf.calendar else dates


def _other_bars(other: Dataset, session: str, tf: Timeframe, dates: np.ndarray) -> pd.DataFrame:
    """The other instrument's bars a join can match: its cached frame, or when that is built
    per query, its bars on the trading dates of ``dates`` (sorted) only."""
    if not other.sliced(session, tf.name):
        return other.frame(session, tf.name)
    index = other.day_index(session, tf.name)
    if len(dates) == 0:
        return other.frame_for_days(session, tf.name, 0, 0)
    first = int(np.searchsorted(index.dates, dates[0], side="left"))
    stop = int(np.searchsorted(index.dates, dates[-1], side="right"))
    return other.frame_for_days(session, tf.name, first, stop)
