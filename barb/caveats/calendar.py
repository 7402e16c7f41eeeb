"""Warnings about which days a daily answer counts: US holiday sessions among the rows of a
weekday or turn-of-month question, or left out by not holiday() beside a day's place among
the exchange's days (its month then has no row), trading dates a session window has no
bars on (which prev() and next() step over), a week, month or year group the period's edge
cuts, a weekofyear() group that holds two different weeks, and weeks that a year, quarter
or month key beside week() splits in two."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from pandas.tseries.holiday import GoodFriday

from barb.bar_labels import unit_label
from barb.caveats.empty_rows import notable
from barb.caveats.read_rows import rows_read
from barb.errors import BarbError, DataError
from barb.events.names import resolve_event
from barb.events.rules import OPTIONS_CALENDAR, closure_name, early_close_days, us_market_closed
from barb.events.schedule import join_arrays
from barb.frames import last_weekday_of_period, period_start
from barb.instruments import format_clock
from barb.lineage import conjuncts, nodes, through_map
from barb.notes import (
    HOLIDAY_ROWS,
    ONLY_DAYS_SHORT,
    SOME_SHORT,
    TRADED_IN_FULL,
    TRADED_SHORT,
    Note,
)
from barb.period_rows import Scope, StartCut, data_start_cut
from barb.planning import Plan, SelectItem, StagePlan
from barb.script import ast
from barb.script.calendar_functions import UNITS
from barb.script.context import EvalContext, RowGroups
from barb.script.evaluator import SelectValue, evaluate, evaluate_aggregate, evaluate_select
from barb.script.library import is_aggregate_call
from barb.short_days import close_clock, day_edges, short_days, window_edges
from barb.stage_output import SINGLE_ROW, counted_columns
from barb.summary_text import group_name

# Functions that name a day by its place in the calendar: a holiday Monday is a 'Mon', the
# first row of a month, the last of a week.
WEEKDAY_FUNCTIONS = frozenset({"dayname", "dayofweek", "week"})
NAMED_WEEKDAYS = frozenset({"dayname", "dayofweek"})
CALENDAR_FUNCTIONS = frozenset(
    {"dayname", "dayofweek", "week", "day", "month", "quarter", "year", "weekofyear", "dayofyear"}
)
STEPPING_FUNCTIONS = frozenset({"prev", "next"})
# Functions that read the rows before or after a row by position.
ROW_STEPPING = frozenset({"prev", "next", "streak", "bars_since"})
# Holiday sessions named as the short ones among holidays of a window that are mostly not.
NAMED_DAYS = 3
# A weekday question's holiday rows are said when leaving them out moves a shown value by
# this share of its size or more: of itself, or of a mean's, median's or sum's over the
# values' sizes (``_size``) where those are signed.
HOLIDAY_SHIFT = 0.05
# The statistics whose size is the same statistic of the sizes: a mean return near 0 moves
# by "254 % of itself" (NQ's 2025 Thursdays, -0.0042 % -> -0.015 %) when its holiday rows
# move it by 1 % of a day's move.
_SIZED = frozenset({"mean", "median", "sum"})
# ... or changes which group is highest or lowest by moving that group this much.
RANK_SHIFT = HOLIDAY_SHIFT / 2


@dataclass(frozen=True)
class HolidayShift:
    """What leaving the holiday sessions out does to the shown values: the most one moves,
    as a share of its size (``holiday_shift``), and the groups that then head a column in
    another's place ("range_pct's lowest is 'Fri' 1.809 without them, not 'Mon' 1.79")."""

    most: float
    ends: list[str] = field(default_factory=list)

    def notable(self) -> bool:
        return self.most >= HOLIDAY_SHIFT or bool(self.ends)


def holiday_shift(
    stage: StagePlan,
    ctx: EvalContext,
    kept: pd.DataFrame,
    closed: np.ndarray,
    *,
    even: frozenset[str] = frozenset(),
    shown: Mapping[str, SelectValue] | None = None,
) -> HolidayShift | None:
    """How the shown values move when the rows of the holiday sessions ``closed`` are left
    out: each selected aggregate (not count(), which falls by the rows left out) over the
    ``kept`` rows with and without them, per group, as ``barb.caveats.early_close_bars``
    measures a cut bar's group (1.0 for a group only they made). NQ's 2025 Mondays' mean
    close - open moved 0.216 % → 0.283 % (+31 %); its mean range 309.4 → 310.4 (+0.3 %).
    A mean of signed values (returns) is measured against the mean size of its values, the
    same yardstick a mean of sizes (range, volume) is against itself: NQ's 2025 weekday
    returns moved by 3 % of a day's mean move (Monday 0.175 % -> 0.207 %, its days moving
    1.0 % on average), its ranges by 1 %, and the note was under the returns alone (p48d
    C5). A move under ``HOLIDAY_SHIFT`` can still change which group is highest or lowest: NQ's
    RTH range % by weekday over all history read Monday lowest (1.790) only through its 80
    holiday half days; without them Friday is (1.809), Monday 1.836 (+2.5 %, p47c D). A
    column whose groups are within noise of each other (``even``, said so already) has no
    highest or lowest worth naming: ES's 2025 range by weekday, Wed 74.23 or Thu 75.32. None
    when no value can be compared (a listing).

    ``shown``: the stage's own values over ``kept``, by name (``StageOutput.aggregates``),
    taken as the values with the holidays rather than evaluated again; an item it lacks is
    evaluated. Without a holiday row among ``kept`` nothing moves, and nothing is evaluated
    without them either."""
    if stage.shape != "grouped" and stage.shape not in SINGLE_ROW:
        return None
    if "trading_date" not in kept.columns:
        return None
    drop = _on_days(kept["trading_date"].to_numpy().astype("datetime64[D]"), closed)
    picked = [
        item
        for item in stage.select
        if is_aggregate_call(item.expr) and item.expr.name.lower() != "count"  # type: ignore[union-attr]
    ]
    items = [item.expr for item in picked]
    if not items or drop.all() or len(items) < len(stage.select) - len(counted_columns(stage)):
        return None  # an expression of aggregates: not weighed here
    shown = shown or {}
    # Means of sizes the holiday rows barely move: told by their sums, none evaluated again.
    barely = _barely_moved(stage, kept, drop, picked, shown) if drop.any() else None
    if barely is not None:
        return HolidayShift(barely)
    by = [name for name, _ in stage.group_keys] or None
    quiet = {"warnings": [], "row_warnings": [], "period": None}
    # Read in place: the stage's rows carry a fresh RangeIndex (``take_rows``) already.
    plain = isinstance(kept.index, pd.RangeIndex) and kept.index.equals(pd.RangeIndex(len(kept)))
    before = dataclasses.replace(ctx, frame=kept if plain else kept.reset_index(drop=True), **quiet)
    after = (
        dataclasses.replace(ctx, frame=rows_read(kept, ~drop, items, by), **quiet)
        if drop.any()
        else None
    )
    kept_rows = np.flatnonzero(~drop)
    most, ends = 0.0, []
    try:
        for name, expr in ((item.name, item.expr) for item in picked):
            answer = shown.get(name) or evaluate_select(expr, before, by)
            was_values = pd.Series(answer.value)
            index = was_values.index
            was = _numbers(was_values)
            # The answer's groups, read again for the rows without the holidays: their keys
            # are not hashed and sorted twice more.
            groups = answer.rows if by is not None and answer.rows.length == len(kept) else None
            now = was
            if after is not None:
                taken = groups.taken(kept_rows, after.warn) if groups is not None else None
                now = _numbers(
                    pd.Series(evaluate_aggregate(expr, after, by, groups=taken)).reindex(index)
                )
            if _unsigned(expr, answer):  # its values are their own sizes
                size = np.abs(was)
            else:
                mine = None if groups is None else dataclasses.replace(groups, warn=before.warn)
                size = np.maximum(np.abs(was), _size(expr, before, by, index, mine).to_numpy())
            held = ~np.isnan(was) & (size != 0)
            with np.errstate(invalid="ignore"):  # inf - inf: NaN, as a group they made
                moved = np.abs((now[held] - was[held]) / size[held])
            moved[np.isnan(moved)] = 1.0  # a group only the holidays made
            most = max(most, float(moved.max()) if len(moved) else 0.0)
            if by is not None and name not in even:
                ends += _moved_ends(name, index, was, now, size)
    except BarbError:
        return None
    return HolidayShift(most, ends)


def _barely_moved(
    stage: StagePlan,
    kept: pd.DataFrame,
    drop: np.ndarray,
    picked: list[SelectItem],
    shown: Mapping[str, SelectValue],
) -> float | None:
    """The most a shown value moves, as a share of itself, when the rows ``drop`` are left
    out of ``kept``, when that is surely under ``RANK_SHIFT``: each statistic ``picked`` a
    mean of a column of sizes (range, volume: no negative or missing value), its groups'
    sums and counts with and without those rows read by ``np.bincount`` over the answer's
    own group numbers. No value moved so is moved by ``HOLIDAY_SHIFT``, and no group takes
    an end from one moved so little: nothing is evaluated again. NQ's RTH range by weekday
    over all history moves 2.0 % at most (Mondays, without their share of the 114 holiday
    sessions), and its evaluation without them had cost 0.8 ms of the question's 2.4 ms of
    checks. None whenever this cannot tell (another
    statistic, a signed column, a group only the dropped rows make, a move near the bound)."""
    codes = np.zeros(len(kept), dtype=np.int64)
    if stage.group_keys:
        answer = shown.get(picked[0].name)
        if answer is None or answer.rows.codes is None or answer.rows.length != len(kept):
            return None
        codes = answer.rows.codes
    grouped = codes >= 0
    width = int(codes.max()) + 1 if grouped.any() else 0
    rows = np.bincount(codes[grouped], minlength=width)
    left = rows - np.bincount(codes[grouped & drop], minlength=width)
    if (left[rows > 0] == 0).any():  # a group only the dropped rows make
        return None
    most = 0.0
    for item in picked:
        expr = item.expr
        if not (isinstance(expr, ast.Call) and expr.name.lower() == "mean" and len(expr.args) == 1):
            return None
        column = expr.args[0]
        if not isinstance(column, ast.Column) or column.name not in kept.columns:
            return None
        values = kept[column.name].to_numpy()
        if not isinstance(values.dtype, np.dtype) or values.dtype.kind not in "iuf":
            return None
        values = values.astype(np.float64)
        if np.isnan(values).any() or (values < 0).any():
            return None
        sums = np.bincount(codes[grouped], values[grouped], minlength=width)
        held = np.bincount(codes[grouped & ~drop], values[grouped & ~drop], minlength=width)
        has = (rows > 0) & (sums > 0)  # a mean of 0 has no size to move against
        was = sums[has] / rows[has]
        moved = np.abs(held[has] / left[has] - was) / was
        if not len(moved):
            continue
        # Far from the bound by more than the last digits two ways of adding differ in.
        if moved.max() >= RANK_SHIFT - 1e-9:
            return None
        most = max(most, float(moved.max()))
    return most


def _on_days(days: np.ndarray, closed: np.ndarray) -> np.ndarray:
    """Which of ``days`` are among the sorted, distinct ``closed``: a binary search in the
    few closed days, where np.isin sorts the thousands of rows' days too."""
    if not len(closed):
        return np.zeros(len(days), dtype=bool)
    found = np.searchsorted(closed, days).clip(max=len(closed) - 1)
    return closed[found] == days


def _numbers(values: pd.Series) -> np.ndarray:
    """A statistic's values as numbers, NaN where none: a yes/no statistic's as 0 and 1
    (max(close > open) by weekday had failed the query: booleans cannot be subtracted)."""
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.dtype.kind == "b" or isinstance(numbers.dtype, pd.api.extensions.ExtensionDtype):
        return numbers.to_numpy(dtype=float, na_value=np.nan)
    return numbers.to_numpy()


def _unsigned(expr: ast.Expr, answer: SelectValue) -> bool:
    """Whether a mean, median or sum read no negative value (a range, a volume): the same
    statistic of its values' sizes is itself then, and ``_size`` need not evaluate it."""
    if not (isinstance(expr, ast.Call) and expr.name.lower() in _SIZED and len(expr.args) == 1):
        return False
    sampled = answer.samples.get(expr)
    if sampled is None or len(sampled) != 1:
        return False
    values = sampled[0]
    if not isinstance(values, pd.Series | np.ndarray) or not isinstance(values.dtype, np.dtype):
        return False
    return values.dtype.kind in "iuf" and not bool((np.asarray(values) < 0).any())


def _size(
    expr: ast.Expr,
    ctx: EvalContext,
    by: list[str] | None,
    index: pd.Index,
    groups: RowGroups | None = None,
) -> pd.Series:
    """The same mean, median or sum over the sizes of its values (abs() of its argument), on
    ``index``: what a move of a signed statistic is weighed against. 0 for another
    statistic, or one whose argument has no size (a condition's share is its own).
    ``groups``: the rows' groups by ``by``, when known."""
    none = pd.Series(0.0, index=index)
    if not (isinstance(expr, ast.Call) and expr.name.lower() in _SIZED and len(expr.args) == 1):
        return none
    sized = ast.Call(expr.name, (ast.Call("abs", expr.args),))
    try:
        value = pd.Series(evaluate_aggregate(sized, ctx, by, groups=groups)).reindex(index)
    except BarbError:
        return none
    return pd.to_numeric(value, errors="coerce").fillna(0.0)


def _moved_ends(
    name: str, index: pd.Index, was: np.ndarray, now: np.ndarray, size: np.ndarray
) -> list[str]:
    """ "range_pct's lowest is 'Fri' 1.809 without them, not 'Mon' 1.79" for each end of
    ``name``'s groups (``index``, values ``was``) that another group takes without the
    holiday rows (``now``), among the groups with a value both ways, when the holidays moved
    the displaced group by ``RANK_SHIFT`` or more of its size (``size``): ranks swapped by a
    hair between near-equal groups are noise (NQ's ETH range 2020-2025, Wed 396.2 then Fri
    397.4), ES's Monday volume moved +3.5 % (lowest 8.949e+05, then Friday's 9.263e+05) by
    its holiday sessions."""
    both = ~np.isnan(was) & ~np.isnan(now)
    if int(both.sum()) < 2:
        return []
    index, was, now, size = index[both], was[both], now[both], size[both]
    said = []
    for side, pick in (("highest", np.argmax), ("lowest", np.argmin)):
        before, after = int(pick(was)), int(pick(now))
        if before == after or was[after] == was[before]:
            continue  # the same group, or a tie it only broke
        old, new = float(was[before]), float(now[before])
        scale = float(size[before])  # its size, as ``holiday_shift`` weighs it
        if scale == 0 or abs(new - old) / scale < RANK_SHIFT:
            continue
        said.append(
            f"{name}'s {side} is {group_name(index, after, text_alone=True)} "
            f"{float(now[after]):.4g} without them, not "
            f"{group_name(index, before, text_alone=True)} {float(was[before]):.4g}"
        )
    return said


def holiday_caveat(
    plan: Plan,
    kept_dates: Callable[[], np.ndarray | None],
    shift: Callable[[np.ndarray], float | None] | None = None,
) -> list[str]:
    """Daily rows that include US holiday sessions, in a query that reads the weekday, steps
    to the previous or next row's month, year or weekday (turn of the month, the day after),
    or numbers the exchange's days (trading_day(), trading_days_left()): those sessions count
    as a Monday or a month's first or last day. "The first trading day of September" as
    trading_day('month') == 1 on NQ's RTH kept 18 days, 8 of them Labor Day's 13:00
    sessions: +0.17%, where the stock market's first days (the 'stocks' form) gave +0.51%.

    A weekday question is told only when leaving the holidays out moves a shown value by
    ``HOLIDAY_SHIFT`` or more, or changes which group is highest or lowest (``shift``, given
    the holiday dates), said with the group that heads it then: NQ's 2025 weekday ranges
    moved by 0.3 % at most, and the note was noise in 3 of 4 queries (p46e)."""
    if plan.timeframe.name != "daily":
        return []
    calls = plan.first.calls
    if "holiday" in calls:  # the query already says what it does with them
        return []
    places = exchange_places(plan.first)
    if not places:
        weekdays = _weekday_calls(plan.first)
        if plan.session == "ETH" and not weekdays & NAMED_WEEKDAYS:
            # The futures' whole day: a holiday session is one of its days (the Sunday reopen
            # before a holiday Monday is that week's weekend gap), unless a weekday is named
            # or a day's place in its month is (the turn of the month is the stock market's).
            return []
        steps = calls & STEPPING_FUNCTIONS and calls & CALENDAR_FUNCTIONS
        if not (weekdays & WEEKDAY_FUNCTIONS or (steps and _steps_over_calendar(plan.first))):
            return []
    dates = kept_dates()
    if dates is None or not len(dates):
        return []
    days = dates.astype("datetime64[D]")  # daily rows: one per trading date
    closed = np.unique(days[us_market_closed(days)])
    if not len(closed):
        return []
    moved = shift(closed) if not places and shift is not None else None
    if moved is not None and not moved.notable():
        return []
    reordered = f" {'; '.join(moved.ends)}." if moved is not None and moved.ends else ""
    short = short_days(plan.dataset, plan.session, closed)
    if not places and not plan.dataset.instrument.stock_index:
        return _own_holidays(plan, closed, short, reordered)
    traded = _hours_traded(plan, closed, short)
    are = "is a US holiday session" if len(closed) == 1 else "are US holiday sessions"
    # The example is one of the sessions the words name: data with a holiday traded in full
    # (a sample made before Barb's calendar closed ES at 09:30 on 2025-01-09, a day of
    # mourning) had it first of 2025's 8, read as one of the 7 short ones.
    example = closed[short][0] if 2 * short.sum() >= len(closed) else closed[~short][0]
    if places:
        # "where": "not holiday()" would leave the month without a first day: the day after
        # Labor Day is numbered 2 among the exchange's days.
        place = places[0]
        name = closure_name(OPTIONS_CALENDAR, closed[0])
        return [
            f"{len(closed)} of the {len(np.unique(days))} rows {are} (the "
            f"stock market closed, {traded}), e.g. {closed[0]}{f' ({name})' if name else ''}: "
            f"{place.text()} counts them among the exchange's days; {place.text('stocks')} "
            "counts the stock market's days, which leaves them out."
        ]
    # Not advice to drop them: the Sunday reopen after a holiday Monday is that week's
    # weekend gap, and Asian hours trade as usual. Only a stock-market question wants them out.
    if not reordered:
        return [Note.of(HOLIDAY_ROWS, count=str(len(closed)), traded=traded, example=str(example))]
    return [
        f"{len(closed)} of the rows {are} (the stock market closed, "
        f"{traded}), e.g. {example}{'.' + reordered if reordered else ':'} "
        '"where": "not holiday()" leaves them out when the question is about the stock '
        "market's days."
    ]


def _weekday_calls(stage: StagePlan) -> set[str]:
    """The weekday functions among the stage's calls that read a weekday: dayofweek() as a
    term of arithmetic counts days (day() - dayofweek() - 1 is the date of the Sunday before,
    the US daylight-saving flag of the utc concept) and names no weekday, so a clock hour of
    every futures day is not told that holiday sessions are among its Mondays."""
    if not stage.calls & WEEKDAY_FUNCTIONS:
        return set()
    mapped = dict(stage.map_exprs)
    walked = [node for expr in stage.expressions for node in nodes(expr, mapped)]
    reckoned = {
        id(term) for node in walked if isinstance(node, ast.Binary) for term in node.children()
    }
    return {
        node.name.lower()
        for node in walked
        if isinstance(node, ast.Call)
        and node.name.lower() in WEEKDAY_FUNCTIONS
        and not (node.name.lower() == "dayofweek" and id(node) in reckoned)
    }


def _own_holidays(
    plan: Plan, closed: np.ndarray, short: np.ndarray, reordered: str = ""
) -> list[str]:
    """The holiday sessions of an instrument that is no stock index (CL): its own days, of
    which only the short ones are part days; the stock market's days are not its question.
    CL's RTH over 2015-2025 held 74, 46 of them 13:00 closes, 28 (2017-01-02, and all from
    2022 on) its full 09:00-14:30. None said when every one traded in full. ``reordered``:
    the groups that head the ranking without them (" mean_volume's lowest is 'Thu' …."),
    said when it is why the note is there (CL 2020's weekday volume moved < 5 %)."""
    if not short.any():
        return []
    dataset = plan.dataset
    symbol, n = dataset.instrument.symbol, len(closed)
    _, ends = day_edges(dataset, closed[short][:1])
    example = f"e.g. {closed[short][0]}, closed {close_clock(dataset, int(ends[0]))}"
    are = "is a US stock-market holiday" if n == 1 else "are US stock-market holidays"
    full = closed[~short]
    if not len(full):
        traded = f"{symbol} traded short hours on {'it' if n == 1 else 'all'} ({example})"
        return [
            f'{n} of the rows {are}: {traded}.{reordered} "where": "not holiday()" leaves out '
            "these part days."
        ]
    spec = dataset.instrument.sessions.get(plan.session)
    hours = plan.session if spec is None else spec.hours
    k = int(short.sum())
    were = "was a short session" if k == 1 else "were short sessions"
    return [
        f"{n} of the rows {are}, which {symbol} trades as its own days: {k} {were} "
        f"({example}), {len(full)} traded the full {hours} (e.g. "
        f'{full[0]}).{reordered} "where": "not holiday()" leaves out the short ones\' part '
        "days, and the full ones with them."
    ]


def _hours_traded(plan: Plan, closed: np.ndarray, is_short: np.ndarray) -> Note:
    """What the session's own window traded on the holidays, as the bars show: short hours
    where the futures closed inside it (RTH, after 13:00), in full where they closed after
    it (the overnight hours before a holiday's RTH; only Good Friday's stopped at 09:15).
    ``is_short``: which of ``closed`` are short (``barb.short_days``)."""
    short = closed[is_short]
    if len(short) == len(closed):
        return Note.of(TRADED_SHORT)
    if not len(short):
        return Note.of(TRADED_IN_FULL, hours=plan.dataset.instrument.session(plan.session).hours)
    # No longer than the words for all of them: RTH's 116 holidays hold 4 the sample trades
    # in full (NYSE closures such as Hurricane Sandy's).
    if len(short) <= NAMED_DAYS:
        return Note.of(ONLY_DAYS_SHORT, days=", ".join(str(day) for day in short))
    return Note.of(SOME_SHORT, count=str(len(short)))


def missing_days_caveat(
    plan: Plan, scope: Scope, ctx: EvalContext, listed: np.ndarray | None = None
) -> list[str]:
    """A session with no bars on some trading dates of the period (a window after an early
    close's end): the result holds none of those dates ("248 matched" of 2025's 258 days for
    16:00-17:00, with no word of the 10 early closes), and in a query whose prev(), next(),
    rolling windows or streaks step by row, they step over them to the nearest one that has
    bars. ``ctx``: the first stage's, how its where is evaluated.

    Said only where it can matter: a notable share of the period's trading dates (the rule
    of empty rows, ``barb.caveats.empty_rows.notable``), or beside a row the model reads one by one
    (``listed``: their trading dates) whose prev() or next() steps over one. The Good
    Fridays of CASH or a morning window (1 of 258 days, 7 of 4,656) were said under four
    of 40 answers and never changed one."""
    if plan.timeframe.name != "daily" or not scope.in_period.any():
        return []
    instrument = plan.dataset.instrument
    places = exchange_places(plan.first)
    placed = {place.name for place in places}
    if plan.session == "ETH" or (plan.session == instrument.default_session and not placed):
        # A day without RTH bars did not trade RTH (Good Friday): a daily series steps over
        # it as over a weekend. A window steps over days that traded, only not in it. Only
        # a row's place among the exchange's dates counts it (trading_days_left()).
        return []
    calls = plan.first.calls
    steps = bool(calls & ROW_STEPPING or any(name.startswith("rolling_") for name in calls))
    # Daily rows are one per date, in order, and every one a trading date: the dates they
    # lack are told by a count before any is looked for (most queries stop there).
    session_days = scope.frame["trading_date"].to_numpy()[scope.in_period]
    every = plan.dataset.trading_dates()
    lo = int(np.searchsorted(every, session_days[0], side="left"))
    hi = int(np.searchsorted(every, session_days[-1], side="right"))
    if hi - lo <= len(session_days):
        return []
    inside = every[lo:hi]
    held = np.zeros(len(inside), dtype=bool)
    held[np.searchsorted(inside, session_days)] = True
    missing = inside[~held]
    symbol = ""
    if plan.instruments:
        # A date ours has bars on that a join left out (the other market shut) is the
        # join's, said by its own warning: only the dates ours lacks are the window's.
        own = plan.dataset.frame(plan.session, "daily")["trading_date"].to_numpy()
        missing = missing[~np.isin(missing, own)]
        if not len(missing):
            return []
        symbol = f"{plan.dataset.instrument.symbol} "
    if not (steps or placed):
        # An event filter (or a where on the event's flag) keeps its days only, or all but
        # them: a window's missing early closes among the others are no row the result
        # would have held (FOMC days in 14:00-17:00 had been told of 11 such days, none of
        # them an FOMC day).
        chosen = event_days_kept(plan, inside)
        if chosen is not None:
            inside = inside[chosen]
            missing = missing[np.isin(missing, inside)]
            if not len(missing):
                return []
    missing = missing.astype("datetime64[D]")
    if placed and not _numbering_reaches(plan, ctx, scope, missing, places):
        placed = set()
        if plan.session == instrument.default_session:
            return []
    beside = steps and _steps_beside(inside, missing, listed)
    if not (placed or beside or notable(len(missing), len(inside))):
        return []
    spec = plan.dataset.instrument.sessions.get(plan.session)
    hours = plan.session if spec is None else spec.hours
    noun = "trading day has" if len(missing) == 1 else "trading days have"
    effect = (
        "prev() and next() step over them to the nearest day that has"
        if steps
        else f"the result holds {'no row of it' if len(missing) == 1 else 'none of them'}"
    )
    if placed:
        # Each such date is a place of the exchange's: the session's last day before it
        # reads 1 left, and its quarter has no row with 0 (2024-Q1 lost its last RTH day).
        called = " and ".join(f"{name}()" for name in sorted(placed))
        reads = []
        if "trading_days_left" in placed:
            reads.append(f"the last {plan.session} day before one reads 1 left, not 0")
        if "trading_day" in placed:
            reads.append(f"the {plan.session} day after one is numbered 2, not 1")
        counts = (
            f"{called} count{'' if len(placed) > 1 else 's'} them, so {' and '.join(reads)} "
            "(a week, month or quarter can lose its last or first day); with 'stocks' "
            f"({places[0].text('stocks')}) the stock market's days are counted"
        )
        default = plan.session == instrument.default_session
        effect = counts if default else f"{effect}; {counts}"
    return [
        f"{len(missing)} {noun} no {symbol}bars in {hours} ({_why_missing(plan, missing)}e.g. "
        f"{missing[0]}): {effect}."
    ]


def event_days_kept(plan: Plan, dates: np.ndarray) -> np.ndarray | None:
    """Which of ``dates`` (trading dates) the query's event joins keep, by the events'
    calendars: "filter": "only" (or a where with the event's flag as one of its "and"
    parts, "where": "fomc") its days alone, "exclude" all but them; None when no join picks
    days."""
    instrument = plan.dataset.instrument
    where = plan.first.where
    flags = set()
    if where is not None:
        flags = {part.name for part in conjuncts(where) if isinstance(part, ast.Column)}
    days = np.asarray(dates).astype("datetime64[D]")
    kept = None
    for join in plan.events:
        if join.source is None:
            continue
        picks = join.filter or ("only" if join.source in flags else None)
        if picks is None:
            continue
        spec = resolve_event(join.source, instrument)
        on = np.isin(days, join_arrays(spec, instrument).days.astype("datetime64[D]"))
        chosen = on if picks == "only" else ~on
        kept = chosen if kept is None else kept & chosen
    return kept


def _steps_beside(inside: np.ndarray, missing: np.ndarray, listed: np.ndarray | None) -> bool:
    """Whether a listed row's trading date is next to a ``missing`` one among the period's
    trading dates (``inside``, sorted): its prev() or next() steps over it."""
    if listed is None or not len(listed):
        return False
    dates = np.asarray(listed).astype(inside.dtype)
    at = np.searchsorted(inside, dates)
    found = (at < len(inside)) & (inside[np.minimum(at, len(inside) - 1)] == dates)
    at = at[found]
    gone = np.isin(inside, missing.astype(inside.dtype))
    before = gone[np.maximum(at - 1, 0)] & (at > 0)
    after = gone[np.minimum(at + 1, len(inside) - 1)] & (at + 1 < len(inside))
    return bool((before | after).any())


@dataclass(frozen=True)
class Place:
    """A call that numbers a date among the exchange's trading dates of its period
    (trading_day('month'), no 'stocks' argument): its function and unit ('month' unless
    named; None when the unit is no literal)."""

    name: str
    unit: str | None

    def text(self, days: str | None = None) -> str:
        """The call as written, or with ``days`` ('stocks') for the other count."""
        unit = f"'{self.unit}'" if self.unit is not None else "unit"
        return f"{self.name}({unit}{f', {days!r}' if days else ''})"

    def call(self) -> ast.Call:
        """The call itself, to evaluate (its unit a literal)."""
        assert self.unit is not None
        return ast.Call(self.name, (ast.String(self.unit),))


def exchange_places(stage: StagePlan, exprs: tuple[ast.Expr, ...] | None = None) -> list[Place]:
    """trading_day() and trading_days_left() among the stage's calls (or those of ``exprs``,
    through the stage's map) that count the exchange's dates (no 'stocks' argument), each
    once, in the order written."""
    if not stage.calls & PLACE_FUNCTIONS:  # no walk of the query for the many without them
        return []
    mapped = dict(stage.map_exprs)
    found: dict[Place, None] = {}
    for expr in stage.expressions if exprs is None else exprs:
        for node in nodes(expr, mapped):
            if not isinstance(node, ast.Call):
                continue
            name = node.name.lower()
            if name not in PLACE_FUNCTIONS:
                continue
            if any(ast.literal_value(arg) == "stocks" for arg in node.args):
                continue
            unit = ast.literal_value(node.args[0]) if node.args else "month"
            key = unit.strip().lower() if isinstance(unit, str) else None
            found[Place(name, key if key in UNITS else None)] = None
    return list(found)


# The functions that number a date among the exchange's trading dates of its period.
PLACE_FUNCTIONS = frozenset({"trading_day", "trading_days_left"})


def _numbering_reaches(
    plan: Plan, ctx: EvalContext, scope: Scope, missing: np.ndarray, places: list[Place]
) -> bool:
    """Whether the where keeps other rows when its places count the session's own days
    instead of the exchange's, which hold the dates the session lacks (``missing``): only
    then did a period lose, or gain, the row a place picks. "month() == 9 and
    trading_day('month') == 1" keeps no row of the months holding RTH's Good Fridays (March,
    April), and "trading_day('month') == 1 and month() in (1, 10)" keeps 2025-01-02 either
    way, 2025-01-09 (a day of mourning) being January's 6th: their note was noise. March
    2024's last RTH day reads 1 left, not 0, so trading_days_left('month') == 0 loses it.
    Any doubt (a where that cannot be read again, a unit that is no literal) says yes."""
    where = plan.first.where
    if where is None or any(place.unit is None for place in places):
        return True
    frame = scope.frame  # every row, with the map's columns (ctx's frame is the rows kept)
    if "trading_date" not in frame.columns:
        return True
    dates = frame["trading_date"].to_numpy()
    near = np.zeros(len(frame), dtype=bool)
    for unit in {place.unit for place in places}:
        period = UNITS[unit]
        near |= np.isin(period_start(dates, period), period_start(missing, period))
    near &= scope.in_period
    if not near.any():  # most queries stop here, before the where is read again
        return False
    # The session's own days, as trading_day() would count them without the missing ones.
    own = np.unique(plan.dataset.frame(plan.session, "daily")["trading_date"].to_numpy())
    quiet = replace(
        ctx, frame=frame, period=scope.in_period, warnings=[], row_warnings=[], step="where"
    )
    counted = replace(quiet, frame=frame.copy(), trading_dates=lambda: own)
    mapped = dict(plan.first.map_exprs)
    try:
        # The map's columns that read a place, again over the session's days, in order.
        for name, expr in plan.first.map_exprs:
            if name in frame.columns and _reads_place(expr, mapped):
                counted.frame[name] = evaluate(expr, counted).to_numpy()
        kept = evaluate(where, quiet)
        kept_own = evaluate(where, counted)
    except BarbError:
        return True
    if not (pd.api.types.is_bool_dtype(kept) and pd.api.types.is_bool_dtype(kept_own)):
        return True
    kept = kept.fillna(False).to_numpy(dtype=bool)
    kept_own = kept_own.fillna(False).to_numpy(dtype=bool)
    return bool((near & (kept != kept_own)).any())


def _reads_place(expr: ast.Expr, mapped: dict[str, ast.Expr]) -> bool:
    """Whether ``expr`` (through the map's columns it names) calls trading_day() or
    trading_days_left()."""
    return any(
        isinstance(node, ast.Call) and node.name.lower() in PLACE_FUNCTIONS
        for node in nodes(expr, mapped)
    )


def unnumbered_holidays_caveat(
    plan: Plan, scope: Scope, ctx: EvalContext, passed: np.ndarray | None
) -> list[str]:
    """A where that picks a place among the exchange's days and drops the holiday sessions:
    "month() == 9 and trading_day('month') == 1 and not holiday()" on NQ's RTH kept 10 rows
    for 18 Septembers, as 8 first days were Labor Day's short sessions and the day after
    each is numbered 2. Said when the rows kept share one number (1) and holiday sessions
    of the period that pass the where's other terms have it: read from the rows, not the
    text. ``ctx``: the first stage's; ``passed``: the rows its where kept, over
    ``scope.frame``."""
    stage = plan.first
    if plan.timeframe.name != "daily" or stage.where is None or passed is None:
        return []
    if "holiday" not in stage.calls:  # most queries stop here, before any place is read
        return []
    places = [p for p in exchange_places(stage, (stage.where,)) if p.unit is not None]
    if not places:
        return []
    mapped = dict(stage.map_exprs)
    terms = _and_terms(stage.where, mapped)
    others = [term for term in terms if not _drops_holidays(term, mapped)]
    frame = scope.frame
    if len(others) == len(terms) or len(passed) != len(frame) or "trading_date" not in frame:
        return []
    days = frame["trading_date"].to_numpy().astype("datetime64[D]")
    dropped = scope.in_period & us_market_closed(days)
    quiet = replace(
        ctx, frame=frame, period=scope.in_period, warnings=[], row_warnings=[], step="where"
    )
    # The holiday sessions the where would have kept but for not holiday(): a term that
    # cannot be read again here is taken as true of them.
    for term in others:
        if not dropped.any():
            return []
        try:
            values = evaluate(term, quiet)
        except BarbError:
            continue
        if pd.api.types.is_bool_dtype(values):
            dropped &= values.fillna(False).to_numpy(dtype=bool)
    if not dropped.any():
        return []
    for place in places:
        try:
            numbers = evaluate(place.call(), quiet).to_numpy(dtype=float)
        except BarbError:
            continue
        # The rows kept name the number; with none kept, the holidays dropped may.
        held = numbers[passed] if passed.any() else numbers[dropped]
        values = np.unique(held[~np.isnan(held)])
        if len(values) != 1:
            continue
        lost = days[dropped & (numbers == values[0])]
        if not len(lost):
            continue
        n, unit, number = len(lost), place.unit, int(values[0])
        name = closure_name(OPTIONS_CALENDAR, lost[0])
        return [
            f"not holiday() left out {n} day{'s' if n > 1 else ''} that {place.text()} "
            f"numbers {number} (e.g. {lost[0]}{f', {name}' if name else ''}), and no other "
            f"day of {'their' if n > 1 else 'its'} {unit} has that number: "
            f"{f'those {n} {unit}s have' if n > 1 else f'that {unit} has'} no row. "
            f"{place.text('stocks')} numbers the stock market's days, which skip holidays."
        ]
    return []


def _and_terms(expr: ast.Expr, mapped: dict[str, ast.Expr]) -> list[ast.Expr]:
    """The terms of a chain of and, through the map's names ("where": "first and traded",
    with "traded": "not holiday()")."""
    terms = []
    for term in conjuncts(through_map(expr, mapped)):
        inner = through_map(term, mapped)
        if isinstance(inner, ast.Logical) and inner.op == "and":
            terms += _and_terms(inner, mapped)
        else:
            terms.append(inner)
    return terms


def _drops_holidays(term: ast.Expr, mapped: dict[str, ast.Expr]) -> bool:
    """Whether ``term`` is not holiday() (through the map's names)."""
    if not isinstance(term, ast.Not):
        return False
    inner = through_map(term.operand, mapped)
    return isinstance(inner, ast.Call) and inner.name.lower() == "holiday" and not inner.args


def _why_missing(plan: Plan, missing: np.ndarray) -> str:
    """Why a window has no bars on trading dates, as the bars show it: the futures closed
    before it opened. Good Friday is no early close of CASH: the stock market was shut and
    the futures stopped at 09:15, before 09:30."""
    dataset = plan.dataset
    _, closed = day_edges(dataset, missing)
    start, _ = window_edges(dataset, plan.session)
    if (closed < 0).any() or (closed > start).any():  # not a close before it: say nothing
        return ""
    years = pd.DatetimeIndex(missing[[0, -1]]).year
    if np.isin(missing, _good_fridays(int(years[0]), int(years[1]))).all():
        kind = "Good Fridays: "
    elif np.isin(missing, _early_closes(plan)).all():
        kind = "early closes: "
    else:
        kind = ""
    last = int(closed.max())
    when = "at" if (closed == last).all() else "by"
    return f"{kind}the futures closed {when} {close_clock(dataset, last)}, "


@functools.cache
def _good_fridays(first_year: int, last_year: int) -> np.ndarray:
    """Good Friday of each year from ``first_year`` to ``last_year``: pandas' holiday rule
    costs a millisecond a call, on every window query whose period holds one."""
    dates = GoodFriday.dates(pd.Timestamp(first_year, 1, 1), pd.Timestamp(last_year, 12, 31))
    return dates.to_numpy().astype("datetime64[D]")


def _early_closes(plan: Plan) -> np.ndarray:
    try:
        return early_close_days(plan.dataset.instrument.calendar)
    except DataError:  # an instrument without a known calendar
        return np.array([], dtype="datetime64[D]")


def _steps_over_calendar(stage: StagePlan) -> bool:
    """prev() or next() of something that reads the month, year or weekday (month() !=
    next(month()) flags a month's last row)."""
    mapped = dict(stage.map_exprs)
    for expr in stage.expressions:
        for node in nodes(expr, mapped):
            if isinstance(node, ast.Call) and node.name.lower() in STEPPING_FUNCTIONS:
                inner = {
                    n.name.lower()
                    for arg in node.args
                    for n in nodes(arg, mapped)
                    if isinstance(n, ast.Call)
                }
                if inner & CALENDAR_FUNCTIONS:
                    return True
    return False


# Group-key functions whose groups are calendar periods, and the timeframe naming each.
PERIOD_KEYS = {"week": "weekly", "month": "monthly", "quarter": "quarterly", "year": "yearly"}
YEAR_DAYS = np.timedelta64(366, "D")


@dataclass(frozen=True)
class PeriodCut:
    """A group the period's start or end cuts: its ``unit`` (the finest calendar key), the
    day its week, month or year begins (``start``), and the warning ``text``; ``edge``
    "data_start" for the data's first group, which the exchange traded in before the data
    begins (complete in the market, not unfinished), "period" for one the query's dates cut."""

    unit: str
    start: np.datetime64
    text: str
    edge: str = "period"


def period_cuts(
    plan: Plan, scope: Scope, kept_dates: Callable[[], np.ndarray | None]
) -> list[PeriodCut]:
    """Daily or intraday bars grouped by week(), month(), quarter() or year() where the
    period's start or end cuts a group: its row counts only the days inside the period, though
    it reads as the whole week. The data's first group is cut so too when the exchange traded
    in it before the data begins (the week of Monday 2007-12-31, 3 of its 4 days in the data;
    its 5-minute bars' volume was listed beside whole weeks with no word, p46a #5). (A group
    cut by the data's end is open_group_caveat's.) Each with its unit and start, so that a
    ranking it tops can name the first whole group (``barb.caveats.ranked_groups``)."""
    if plan.timeframe.calendar:
        return []
    if not scope.in_period.any() or plan.period.text is None:
        return []
    mapped = dict(plan.first.map_exprs)
    units = []
    for _, key in plan.first.group_keys:
        if _flag(key, mapped):
            continue
        for node in nodes(key, mapped):
            if isinstance(node, ast.Call) and not node.args and node.name.lower() in PERIOD_KEYS:
                units.append(node.name.lower())
    if not units:
        return []
    unit = min(units, key=list(PERIOD_KEYS).index)  # the finest: week before month
    timeframe = PERIOD_KEYS[unit]
    dates = scope.frame["trading_date"].to_numpy()[scope.in_period].astype("datetime64[D]")
    # The days a group has are the session's own: a Good Friday without RTH bars is no day
    # of March's RTH, and a holiday no day of a window after its early close.
    session_days = plan.dataset.session_daily(plan.session).index.to_numpy()
    every = session_days.astype("datetime64[D]")
    # The period's own bounds, not its first and last bars: a period starting on Labor Day
    # has no 16:00 bar that day, and still begins there.
    period = plan.period
    lo = np.datetime64(period.start, "D") if period.start is not None else dates[0]
    hi = np.datetime64(period.end, "D") if period.end is not None else dates[-1]
    first_cut = _data_start_group(plan, timeframe, dates[0])
    if lo <= every[0] and hi >= every[-1] and first_cut is None:
        return []  # the period is all the data: only the data's own end cuts a group
    kept_rows = kept_dates()
    if kept_rows is None or not len(kept_rows):
        return []
    kept = np.unique(kept_rows.astype("datetime64[D]"))
    cuts: list[PeriodCut] = []
    # The period's own days of a cut group are what its row stands for; the days a where
    # kept of them are another count, said apart (the week 2024-02-26 of a period ending
    # 2024-02-29 has 4 of its 5 days, though close > open kept 3 of them).
    first_day, last_day = max(lo, dates[0]), min(hi, dates[-1])
    if first_cut is not None:
        end = np.datetime64(last_weekday_of_period(dates[0], timeframe), "D")
        inside = kept[kept <= end]
        if len(inside):
            # Named as its row is: the data's first week by its first date in the data.
            named = dataclasses.replace(
                first_cut, begins=_week_named(unit, first_cut.begins, every)
            )
            days = every[(every >= first_day) & (every <= min(end, last_day))]
            dropped = _where_dropped(plan, inside, days)
            if dropped:  # in English alone: the where's part has no catalog words yet
                text = (
                    f"The {unit} {unit_label(named.begins, unit)} began before the data "
                    f"starts: the data holds only {len(days)} of its {named.calendar_days} "
                    f"days{dropped}."
                )
            else:
                text = named.row_note(len(days))
            cuts.append(PeriodCut(unit, named.begins, text, "data_start"))
    for edge, day in (("start", max(lo, dates[0])), ("end", min(hi, dates[-1]))):
        # Labelled only near the edge: a year is the longest group.
        near = every[(every >= day - YEAR_DAYS) & (every <= day + YEAR_DAYS)]
        label = period_start(np.array([day]), timeframe)[0].astype("datetime64[D]")
        group = near[period_start(near, timeframe).astype("datetime64[D]") == label]
        outside = group[group < lo] if edge == "start" else group[group > hi]
        if not len(outside):
            continue
        inside = kept[(kept >= group[0]) & (kept <= group[-1])]
        if not len(inside):
            continue
        days = group[(group >= first_day) & (group <= last_day)]
        label = _week_named(unit, label, group)
        name = unit_label(label, unit)
        if edge == "start":
            # The period's start named as such: "(on 2025-12-22)", the week's own first
            # day, read as the start of a period that began on 2025-12-23 (p43f C4).
            text = f"began before the period's start on {lo}"
        else:
            text = f"continues past the period's end (to {group[-1]})"
        dropped = _where_dropped(plan, inside, days)
        holds = "the period holds" if dropped else "its row counts"
        cuts.append(
            PeriodCut(
                unit,
                label,
                f"The {unit} {name} {text}: {holds} only {len(days)} of its "
                f"{len(group)} days{dropped}.",
            )
        )
    return cuts


def _where_dropped(plan: Plan, kept: np.ndarray, days: np.ndarray) -> str:
    """The days of a cut group's period part the where kept, when it dropped some: the
    row's own count, said apart from the days the period left the group."""
    if plan.first.where is None or len(kept) >= len(days):
        return ""
    return f", and the where keeps {len(kept)} of those"


def _week_named(unit: str, begins: np.datetime64, days: np.ndarray) -> np.datetime64:
    """A group's label as its key names it: a week() group by its first trading date among
    the session's ``days`` (the week of closed Monday 2024-01-01 is 2024-01-02), any other
    by the day its unit begins."""
    if unit != "week":
        return begins
    found = days[(days >= begins) & (days < begins + np.timedelta64(7, "D"))]
    return found[0] if len(found) else begins


def _flag(key: ast.Expr, mapped: dict[str, ast.Expr]) -> bool:
    """Whether a group key is a yes/no condition (``week() != prev(week())``, the week's
    first day): its groups are the days it picks, not weeks, whatever calendar call it reads."""
    condition = ast.Compare | ast.InList | ast.Logical | ast.Not
    return isinstance(through_map(key, mapped), condition)


def _data_start_group(plan: Plan, timeframe: str, first: np.datetime64) -> StartCut | None:
    """The data's first week, month or year when the period's first day lies in it and the
    exchange traded in it before the data begins."""
    data_first = np.datetime64(plan.dataset.first_date, "D")
    if (
        period_start(np.array([first]), timeframe)[0]
        != period_start(np.array([data_first]), timeframe)[0]
    ):
        return None
    return data_start_cut(plan.dataset, timeframe)


def iso_week_caveat(plan: Plan, kept: pd.DataFrame | None) -> list[str]:
    """weekofyear() as a group key numbers ISO weeks, so over one year its group 1 holds the
    year's first days and its last (2025-12-29..31 are ISO week 1 of 2026): five days that
    read as one week. "Best weeks of 2025 by week number" ranked that group first, +21.49%
    from Jan 2's open to Dec 31's close, though neither part gained 2.3%. Said when a group
    holds days of two ISO weeks while most hold one; over many years every group holds one
    week per year on purpose (seasonality), and nothing is said."""
    mapped = dict(plan.first.map_exprs)
    keys = [name for name, _ in plan.first.group_keys]
    numbered = [name for name, key in plan.first.group_keys if _calls(key, mapped, "weekofyear")]
    # weekofyear() reads a weekly or longer bar's first trading date, as it is labelled.
    column = "timestamp" if plan.timeframe.calendar else "trading_date"
    if not numbered or kept is None or not len(kept):
        return []
    if column not in kept.columns or any(key not in kept.columns for key in keys):
        return []
    days = kept[[*keys, column]].drop_duplicates()  # one row per date: not 6M minutes
    dates = pd.DatetimeIndex(days[column]).normalize()
    iso = dates.isocalendar()
    days = days.assign(iso=(iso["year"] * 100 + iso["week"]).to_numpy(), day=dates.to_numpy())
    group = days.groupby(keys, observed=True, dropna=True, sort=True).ngroup().to_numpy()
    days = days[group >= 0].assign(group=group[group >= 0])
    weeks = days.groupby("group")["iso"].nunique()
    mixed = weeks[weeks > 1]
    if mixed.empty or weeks.median() > 1:
        return []
    rows = days[days["group"] == mixed.index[0]]
    label = ", ".join(_key_text(rows[key].iloc[0]) for key in keys)
    parts = [
        f"{part['day'].min().date()} — {part['day'].max().date()}"
        for _, part in rows.groupby("iso", sort=True)
    ]
    others = len(mixed) - 1
    more = f"; {others} more group{'s' if others > 1 else ''} like it" if others else ""
    return [
        f"weekofyear() numbers ISO weeks, and its group {label} holds {len(parts)} different "
        f"weeks: {' and '.join(parts)} (late December can be ISO week 1 of the next year"
        f"{more}). For one group per calendar week group by week() (the week's Monday)."
    ]


# The calendar keys coarser than a week, finest first: the one whose ends split the most weeks.
_COARSER = (("month", "monthly"), ("quarter", "quarterly"), ("year", "yearly"))


def groups_weeks(stage: StagePlan) -> bool:
    """Whether ``stage`` groups by week() (directly or through its map's names)."""
    mapped = dict(stage.map_exprs)
    return any(_calls(key, mapped, "week") for _, key in stage.group_keys)


def split_week_caveat(plan: Plan, kept_dates: Callable[[], np.ndarray | None]) -> list[str]:
    """group_by [year(), week()] makes each week that straddles New Year two rows, each a
    part of the week: "average weekly range per year" over NQ 2008-2025 got 53 "weeks" in
    some years, 2009 one of a single day (2009-01-02), and means up to 2% low (2009: 6.503
    against 6.585 over whole weeks). Said with the number of weeks split among the rows
    kept (a week is Monday-based, as week() is) and the whole-week form: weekly bars, each
    counted in the year of its first trading date as its bar is labelled."""
    stage = plan.first
    if plan.timeframe.calendar or not groups_weeks(stage):  # a weekly bar is one week
        return []
    mapped = dict(stage.map_exprs)
    unit = next(
        (
            (name, timeframe)
            for name, timeframe in _COARSER
            if any(_calls(key, mapped, name) for _, key in stage.group_keys)
        ),
        None,
    )
    dates = kept_dates()
    if unit is None or dates is None or not len(dates):
        return []
    name, timeframe = unit
    days = np.unique(dates.astype("datetime64[D]")).astype("datetime64[ns]")
    weeks = pd.DataFrame(
        {"week": period_start(days, "weekly"), "part": period_start(days, timeframe)}
    )
    parts = weeks.groupby("week", sort=True)["part"].nunique()
    split = parts.index[parts.to_numpy() > 1]
    if not len(split):
        return []
    first = weeks[weeks["week"] == split[0]].groupby("part", sort=True).size()
    pieces = " and ".join(
        f"{held} day{'s' if held > 1 else ''} in {unit_label(part.to_datetime64(), name)}"
        for part, held in first.items()
    )
    keys = ", ".join(key.to_text() for _, key in stage.group_keys)
    return [
        f"{len(split)} of the {len(parts)} weeks cross a {name}'s end, and group_by [{keys}] "
        f"splits each into two rows that count as weeks of their own (the week of "
        f"{pd.Timestamp(split[0]).date()}: {pieces}). For whole weeks use weekly bars: "
        f'"from": "weekly" with "group_by": "{name}()" (a week counts in the {name} of its '
        "first trading date)."
    ]


def _calls(key: ast.Expr, mapped: dict[str, ast.Expr], function: str) -> bool:
    expr = through_map(key, mapped)
    return isinstance(expr, ast.Call) and expr.name.lower() == function and not expr.args


def _key_text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, pd.Timestamp):
        return str(value.date())
    return str(value)


# The weekend's values of the weekday functions: no trading date has them.
_WEEKEND = {"dayname": frozenset({"Sat", "Sun"}), "dayofweek": frozenset({5, 6})}


def weekend_date_caveat(plan: Plan) -> list[str]:
    """Why a where on a Saturday or Sunday found nothing: a trading date is never one. The
    Sunday evening's bars from the 18:00 reopen belong to Monday's date, so "the Sunday
    evening's hourly range" as dayname() == 'Sun' read "No bars matched", which a model
    would answer as "NQ does not trade on Sunday evenings" (p33c #6: 52 evenings in 2025).
    For an empty result only."""
    stage = plan.first
    if stage.where is None:
        return []
    mapped = dict(stage.map_exprs)
    for node in nodes(stage.where, mapped):
        if _asks_weekend(node, mapped):
            opens = format_clock(plan.dataset.instrument.trading_day_start_minute)
            return [
                f"No trading date is a Saturday or Sunday: the bars from the Sunday {opens} "
                "reopen belong to Monday's trading date, where dayname() reads 'Mon'. For "
                f"the Sunday evening: dayname() == 'Mon' and hour() >= {opens[:2]} on "
                f"intraday bars, or the window '{opens}-00:00' as the session with "
                "dayname() == 'Mon'."
            ]
    return []


def _asks_weekend(node: ast.Node, mapped: dict[str, ast.Expr]) -> bool:
    """Whether ``node`` compares a weekday function with a weekend day: dayname() == 'Sun',
    dayofweek() in (5, 6), through map names."""
    if isinstance(node, ast.Compare) and node.op == "==":
        pairs = ((node.left, node.right), (node.right, node.left))
    elif isinstance(node, ast.InList) and not node.negated:
        pairs = tuple((node.operand, value) for value in node.values)
    else:
        return False
    for call, value in pairs:
        call = through_map(call, mapped)
        if isinstance(call, ast.Call) and not call.args:
            weekend = _WEEKEND.get(call.name.lower())
            if weekend is not None and ast.literal_value(value) in weekend:
                return True
    return False
