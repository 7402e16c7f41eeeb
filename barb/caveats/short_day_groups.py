"""Intraday bars grouped by trading date, over days that include short sessions.

A first stage grouping intraday bars by date() (or by any key whose groups are whole
trading dates) makes one row per day, each read as a full day. "Exit at the 16:00 cash
close" in a 15-minute opening-range backtest on NQ's 1m CASH bars over 2024-2025 was
last(close) by date(); on its 14 holiday sessions (the stock market shut, the futures
closing at 13:00) and 6 half days (13:15) that is the 12:59 or the 13:14 bar's close, and
the longest losing streak read 17 with them, 24 without, with nothing said (p38b Q15),
where daily rows name such days (``barb.caveats.short_sessions``, ``calendar``).

Said when the groups of holiday sessions and early closes hold less of their day than the
others, as the bars each group holds show (the day closed before the end of the bars most
other days' groups hold), and the answer is another without them. p39a heard the sentence 13
times, true each time, and it mattered once: a then stage's values are compared with the
same stage run over the full days alone (``barb.caveats.moved_values``: a mean outside their
2-standard-error band, an order statistic changed) and said with their values without them,
"without them avg_post_vol is 7360.23" (NQ 2024-2025, no bar after 16:00 on the 20 short
days), not "avg_volume" 288,934 against 294,234, within the full days' noise. A listing of
the day rows says so when it shows a short day: a small one whole, a long one at its ends,
lowest or highest row, or in its mean. The where it offers leaves out those days and no
others: not early_close() where the calendar's early closes are they, else the days that
traded in the hours they lost (over 09:30-13:15 the 13:15 half days are whole; on CL's RTH
18 of 2023-2025's 24 early closes ran to 14:30).

A query that keeps only the 09:30-09:45 bars loses nothing to a 13:00 close and is not told;
nor one whose select reads only each group's first bar (first(orh)), nor a then stage that
reads none of the columns that read more. On CASH, which stands for the stock market's hours,
a last() read as the day's close is said apart on the half days, with the sentence or to a
query that picked them: the stock market closed at 13:00 there and CASH ran on to the
futures' 13:15 close, so "exit at the cash close" read the 13:14 bar (p38b Q19: the
13:00-13:15 move averaged 8.6 points over NQ's 39 half days). Where leaving the half days
out whole moves nothing, the 15 minutes of them do not either, and it is not said.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from barb.caveats.moved_values import ERRORS, moved_values
from barb.caveats.short_bar_picks import CUT_PICK
from barb.caveats.short_sessions import SHORT_MARKS
from barb.errors import DataError
from barb.events.rules import early_close_days, stock_market_early_closes, us_market_closed
from barb.frames import MINUTE_OF_DAY
from barb.instruments import MINUTES_PER_DAY, format_clock
from barb.lineage import through_map
from barb.planning import Plan, SelectItem, StagePlan
from barb.result import EDGE_ROWS
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.library import is_aggregate_call
from barb.short_days import close_clock, day_edges, short_days, window_edges
from barb.stage_output import StageOutput
from barb.summary_text import either_text, listed_text

# What a warning said before says when it names those days already: the form that leaves
# them out, or the cut bar a first() or last() picked on them.
SAID_BEFORE = ("early_close()", CUT_PICK)
# The session that stands for the stock market's hours, whose half days close apart.
STOCK_HOURS = "CASH"
# The share of the full days whose groups hold one clock window to the close, for the short
# days' windows, moved earlier by their close, to be told apart from it.
USUAL_SHARE = 0.9


@dataclass(frozen=True)
class DayGroups:
    """The first stage's groups when each is one trading date's bars, one entry a day in
    time order: their keys, the date, and where the bars they hold stop."""

    keys: pd.Index  # a MultiIndex for several keys
    days: np.ndarray  # datetime64[D]
    first: np.ndarray  # the first bar's start, minutes into the trading day
    last: np.ndarray  # the last bar's start, minutes into the trading day
    end: np.ndarray  # where the bars held end: the last bar's end, or the day's close
    closed: np.ndarray  # where the futures closed that day, minutes into the trading day
    short: np.ndarray  # a holiday session or an early close that cut the session

    def cut(self) -> tuple[np.ndarray, int | None]:
        """Which days' groups an early close cut, and how far most other days' groups run
        (None when every day is short): a short day is cut when it closed before that, and
        its bars stop there, and they span less time than most other days' do; with no
        full day to compare, when its bars run to its close.

        A where that counts bars back from each day's end ("place(t, 'day') <= 30", the
        last 30 minutes) keeps 12:45-13:15 of a 13:15 close as it keeps 16:30-17:00 of a
        full day: those days' groups end early but hold all the window asked for, and were
        called a part day's (ES 2020-2025: each of the 52 short days' 30 bars). A window
        fixed on the clock (13:00-17:00) holds 15 minutes of them against 240: cut. The
        last N bars are another time of day on a short day, though: ``shifted``."""
        full = ~self.short
        if not full.any():
            return self.short & (self.end >= self.closed), None
        early = self._ended_early()
        assert early is not None
        ended, reach, whole = early
        return ended & ~whole, reach

    def shifted(self) -> np.ndarray:
        """Which short days' groups hold as long a window as most full days' but end at
        their early close: the last N bars of each day (place(t, 'day') <= 30) are
        12:45-13:15 on a half day, around the stock market's 13:00 close, where a full
        day's are 16:30-17:00, the thin post-cash half hour. ES's mean volume of the last
        30 RTH minutes over 2008-2026 read 10,425 with its 151 short days, 8,829 without
        (pandas), with nothing said: no part day, yet another time of day.

        Only a window fixed to each day's close: the full days' groups (nearly all) hold
        the same clock window to their close, and the short days' run to theirs. The bar of
        each day's highest volume (place(volume, 'day') == 1) has no usual time to name."""
        none = np.zeros(len(self.short), dtype=bool)
        early = self._ended_early()
        if early is None:
            return none
        ended, reach, whole = early
        full = ~self.short
        starts, counts = np.unique(self.first[full], return_counts=True)
        usual = (self.first[full] == starts[np.argmax(counts)]) & (self.end[full] == reach)
        if usual.mean() < USUAL_SHARE:
            return none
        return ended & whole & (self.end >= self.closed)

    def _ended_early(self) -> tuple[np.ndarray, int, np.ndarray] | None:
        """The short days whose groups end before most full days' do, that reach, and
        which groups span as long as most full days' (None when every day is short)."""
        full = ~self.short
        if not full.any():
            return None
        reach = int(np.median(self.end[full]))
        span = self.end - self.first
        whole = span >= np.median(span[full])
        return self.short & (self.closed < reach) & (self.end < reach), reach, whole


def short_day_group_caveat(
    plan: Plan,
    first: StageOutput,
    then: StageOutput | None = None,
    said: Sequence[str] = (),
    *,
    ctx: EvalContext | None = None,
    then_without: Callable[[np.ndarray], StageOutput] | None = None,
) -> list[str]:
    """The short sessions among the day groups of a first stage over intraday bars (its bars
    ``first.kept``, its groups ``first.table``) that the rows answered read: those listed,
    or those a then stage's where kept (``then.passed``), when the answer without them is
    another (``barb.caveats.moved_values``: the then stage run again by ``then_without``
    over the first stage's table less the rows it marks, in ``ctx``). Named with their
    closes, the columns a part day fills, the values without them, the cash close's half
    days on CASH and the where that leaves them out. Nothing past the CASH note when the
    query reads holiday() or early_close(), or a warning ``said`` offers not early_close()
    already (a cut bar's)."""
    stage = plan.first
    step = plan.timeframe.minutes
    if step is None or stage.shape != "grouped" or (plan.then is None) != (then is None):
        return []
    kept, table = first.kept, first.table
    keys = [name for name, _ in stage.group_keys]
    if kept is None or table is None or not len(kept) or not len(table):
        return []
    if any(c not in kept.columns for c in [*keys, "trading_date", MINUTE_OF_DAY]):
        return []
    items = _late_items(stage, plan.then)
    if not items:
        return []
    every = first.groups if first.groups is not None else table
    groups = day_groups(plan, kept, keys, step, len(every))
    if groups is None:
        return []
    cut, reach = groups.cut()
    rows = table if then is None or then.passed is None else table[then.passed]
    placed = groups.keys.get_indexer(_key_index(table, keys))
    at = placed if rows is table else groups.keys.get_indexer(_key_index(rows, keys))
    at = np.sort(at[at >= 0])  # in time order
    used = at[cut[at]]
    shifted = not len(used)
    if shifted:  # no day cut: a window counted back from each day's close, moved earlier
        cut = groups.shifted()
        used = at[cut[at]]
        if not len(used):
            return []
    # The day's last bar read as its close ("exit at the cash close"): CASH's half days.
    last = _takes_last(items)
    chosen = set(SHORT_MARKS) & (stage.calls | (plan.then.calls if plan.then else frozenset()))
    if chosen or any(words in text for text in said for words in SAID_BEFORE):
        cash = _cash_half_days(plan, groups, used, step) if last else ""
        return [cash] if cash else []
    # Whether the answer without them is another: a listing that shows no short day's
    # value differently says nothing, and its sentence is never written.
    picked_all = len(used) == len(at)  # the query picked them (by date): none would be left
    drop = (placed >= 0) & cut[np.maximum(placed, 0)]
    listed = not (then is not None and plan.then is not None and plan.then.shape != "table")
    if (
        not picked_all
        and listed
        and not _listed_moved(then or first, table, drop, items, then is None)
    ):
        return []
    cash = _cash_half_days(plan, groups, used, step) if last else ""
    text = (_shifted_text if shifted else _text)(plan, groups, used, cut, reach, items, len(at))
    if picked_all:
        return [text + (f" {cash}" if cash else "")]
    # How the answer without them is another.
    if not listed:
        assert then is not None and plan.then is not None
        if ctx is None or then_without is None:
            return []
        moved = moved_values(plan.then, ctx, then, then_without(drop))
        if not moved:
            return []
        text = f"{text[:-1]}; without them {listed_text(moved)}."
    form = _leave_out(plan, groups, cut, reach)
    return [
        f"{text}{f' {cash}' if cash else ''} {_where(plan, form, capital=True)} leaves them out."
    ]


def _listed_moved(
    listed: StageOutput,
    table: pd.DataFrame,
    drop: np.ndarray,
    items: list[SelectItem],
    first_rows: bool,
) -> bool:
    """Whether a listing of the day rows (the first stage's, or a then stage's table of
    them) shows the short days: a small one whole lists them, each read as a day (the 5
    quietest days of 2024 held 4); a long one its first and last rows, and for each column
    a part day fills its lowest and highest row and its mean across the rows, said moved
    beyond 2 standard errors (``moved_values``'s band). A then stage's listing of other
    rows is read as listed."""
    if not first_rows:
        return True
    summary = listed.summary
    if summary.whole or len(table) <= 2 * EDGE_ROWS:
        return bool(drop.any())
    if drop[:EDGE_ROWS].any() or drop[-EDGE_ROWS:].any():
        return True
    for item in items:
        values = pd.to_numeric(table[item.name], errors="coerce").to_numpy(dtype="float64")
        known = ~np.isnan(values)
        if not known[~drop].any():
            return True
        if values[known].min() != values[known & ~drop].min():
            return True
        if values[known].max() != values[known & ~drop].max():
            return True
        spread = np.std(values[known], ddof=1) / np.sqrt(known.sum())
        if abs(values[known & ~drop].mean() - values[known].mean()) > ERRORS * spread:
            return True
    return False


def _leave_out(plan: Plan, groups: DayGroups, cut: np.ndarray, reach: int | None) -> str:
    """The first stage's where that leaves out exactly the ``cut`` days among the day
    groups: not early_close() where the exchange calendar's early closes are those days
    (NQ's RTH: its 13:00 holiday sessions and 13:15 half days); else the days that traded
    in the hours the cut ones lost. Over a window to 13:15 the half days are whole and
    only the 13:00 holiday sessions cut, and on CL's RTH (to 14:30) 18 of its 24 early
    closes in 2023-2025 (MLK Day's …) ran to 14:30 too: not early_close() dropped them as
    well, where session_volume('13:00-13:15') > 0 and session_volume('13:45-14:30') > 0
    keep every day that traded to the end."""
    try:
        early = early_close_days(plan.dataset.instrument.calendar)
    except DataError:  # an instrument without a known calendar
        early = None
    if early is not None and bool((np.isin(groups.days, early) == cut).all()):
        return "not early_close()"
    assert reach is not None  # some days are full: the others are cut against them
    latest = int(groups.closed[cut].max())
    window = f"{close_clock(plan.dataset, latest)}-{close_clock(plan.dataset, reach)}"
    return f"session_volume('{window}') > 0"


def _days_of(plan: Plan, total: int) -> str:
    """Which days the short ones are counted among: "of the then stage's 4,647 days", "of
    the 517 days grouped"."""
    if plan.then is not None:
        return f"of the then stage's {total:,} days"
    return f"of the {total:,} days {'listed' if plan.first.limit else 'grouped'}"


def _text(
    plan: Plan,
    groups: DayGroups,
    used: np.ndarray,
    cut: np.ndarray,
    reach: int | None,
    items: list[SelectItem],
    total: int,
) -> str:
    """'20 of the 517 days grouped are short sessions: the futures closed at 13:00 on 14
    holidays (e.g. 2024-01-15) and 13:15 on 6 early closes (e.g. 2024-07-03), where the other
    days' bars run to 16:00, so their exit_close is a part day's (last() reads the 12:59 or
    13:14 bar there, not the 15:59 one).'"""
    dataset, n = plan.dataset, len(used)
    days = _days_of(plan, total)
    if reach is not None:
        beside = f"where the other days' bars run to {close_clock(dataset, reach)}"
    else:  # every day short: against the session's end
        beside = f"not at {close_clock(dataset, window_edges(dataset, plan.session)[1])}"
    names = listed_text([item.name for item in items])
    return (
        f"{n:,} {days} {'is a short session' if n == 1 else 'are short sessions'}: the futures "
        f"closed at {_closes(plan, groups, used)}, {beside}, so their {names} "
        f"{'is' if len(items) == 1 else 'are'} a part day's"
        f"{_last_bars(plan, groups, used, cut) if _takes_last(items) else ''}."
    )


def _shifted_text(
    plan: Plan,
    groups: DayGroups,
    used: np.ndarray,
    cut: np.ndarray,
    reach: int | None,
    items: list[SelectItem],
    total: int,
) -> str:
    """'151 of the then stage's 4,647 days are short sessions: the futures closed at 13:00
    on 74 holidays (e.g. 2014-05-26), …, so their v reads 12:30-13:00, 12:45-13:15 or
    11:00-11:30, not the other days' 16:30-17:00 (on the half days it holds the stock
    market's 13:00 close).'"""
    dataset = plan.dataset
    days = _days_of(plan, total)
    n, names = len(used), listed_text([item.name for item in items])

    def window(first: int, end: int) -> str:
        return f"{close_clock(dataset, first)}-{close_clock(dataset, end)}"

    pairs = pd.Series(list(zip(groups.first[used], groups.end[used], strict=True)))
    theirs = either_text([window(int(f), int(e)) for f, e in pairs.value_counts().index])
    full = ~cut & ~groups.short
    usual = pd.Series(list(zip(groups.first[full], groups.end[full], strict=True)))
    first, end = usual.value_counts().index[0]
    stock = _stock_close_held(plan, groups, used)
    return (
        f"{n:,} {days} {'is a short session' if n == 1 else 'are short sessions'}: the futures "
        f"closed at {_closes(plan, groups, used)}, so their {names} "
        f"{'reads' if len(items) == 1 else 'read'} {theirs}, not the other days' "
        f"{window(int(first), int(end))}{stock}."
    )


def _stock_close_held(plan: Plan, groups: DayGroups, used: np.ndarray) -> str:
    """' (on the half days it holds the stock market's 13:00 close)' when the windows of the
    half days among ``used`` hold the minute the stock market closed early."""
    closes = stock_market_early_closes()
    start = plan.dataset.instrument.trading_day_start_minute
    shut = us_market_closed(groups.days[used])
    clocks = set()
    for day, closed, first, end in zip(
        groups.days[used], shut, groups.first[used], groups.end[used], strict=True
    ):
        stock = closes.get(day)
        if stock is None or closed:
            continue
        if first < (stock - start) % MINUTES_PER_DAY <= end:
            clocks.add(format_clock(int(stock)))
    if not clocks:
        return ""
    return f" (on the half days it holds the stock market's {either_text(sorted(clocks))} close)"


def day_groups(
    plan: Plan, kept: pd.DataFrame, keys: list[str], step: int, count: int
) -> DayGroups | None:
    """The first stage's ``count`` groups of bars ``kept`` (in time order) as days, when
    some days are short sessions of the query's session and each group is one trading
    date's bars (by date(), or by keys that never split or join days); else None. Each
    day's bars are found by a binary search in them, so a question grouped otherwise (by
    time(): 390 groups, not 4,649 days) costs no pass over its bars; a key other than
    date() is compared along them."""
    dates = kept["trading_date"].to_numpy()
    # Groups that are days are as many as the dates their bars hold: more dates among a few
    # evenly spaced bars than there are groups (24 hours of 6.4 million 1m bars) settles it
    # without searching the bars for each of 4,649 dates (1.7 ms).
    sample = dates[:: max(1, len(dates) // (4 * count + 64))]
    if int(np.count_nonzero(sample[1:] != sample[:-1])) + 1 > count:
        return None
    every = plan.dataset.trading_dates()
    lo, hi = np.searchsorted(dates, every, "left"), np.searchsorted(dates, every, "right")
    held = hi > lo
    if int(held.sum()) != count:  # groups that are not days
        return None
    starts, ends, days = lo[held], hi[held] - 1, every[held].astype("datetime64[D]")
    short = short_days(plan.dataset, plan.session, days)
    if not short.any():
        return None
    mapped = dict(plan.first.map_exprs)
    for name, expr in plan.first.group_keys:
        key = through_map(expr, mapped)
        if isinstance(key, ast.Call) and key.name.lower() == "date" and not key.args:
            continue  # the trading date itself
        values = kept[name].to_numpy()
        same = values[1:] == values[:-1]
        same[starts[1:] - 1] = True  # a new day's key may differ
        if not bool(same.all()):
            return None  # a key that splits a day, or rows in no group
    index = _key_index(kept, keys, starts)
    if index.has_duplicates:  # a key that joins days
        return None
    day_start = plan.dataset.instrument.trading_day_start_minute
    minutes = kept[MINUTE_OF_DAY].to_numpy()
    first = (minutes[starts].astype(np.int64) - day_start) % MINUTES_PER_DAY
    last = (minutes[ends].astype(np.int64) - day_start) % MINUTES_PER_DAY
    _, closed = day_edges(plan.dataset, days)
    _, session_end = window_edges(plan.dataset, plan.session)
    end = np.minimum(last + step, np.minimum(closed, session_end))
    return DayGroups(index, days, first, last, end, closed, short)


def _key_index(frame: pd.DataFrame, keys: list[str], at: np.ndarray | None = None) -> pd.Index:
    """The groups' keys (at rows ``at``) as an index to look rows up in: a plain one for one
    key, a fifth of a MultiIndex's cost over 4,649 days."""
    columns = [frame[key].to_numpy() for key in keys]
    if at is not None:
        columns = [column[at] for column in columns]
    if len(columns) == 1:
        return pd.Index(columns[0])
    return pd.MultiIndex.from_arrays(columns, names=keys)


def _late_items(stage: StagePlan, then: StagePlan | None) -> list[SelectItem]:
    """The first stage's select items that read more of a group than its first bar (any
    aggregate but first()), and of those, the ones a then stage reads."""
    items = [
        item
        for item in stage.select
        if any(
            is_aggregate_call(node) and node.name.lower() != "first" for node in ast.walk(item.expr)
        )
    ]
    if then is None:
        return items
    return [item for item in items if item.name in then.names_read]


def _closes(plan: Plan, groups: DayGroups, used: np.ndarray) -> str:
    """'13:00 on 14 holidays (e.g. 2024-01-15) and 13:15 on 6 early closes (e.g.
    2024-07-03)': the short days ``used`` by kind and close, the commonest first."""
    holiday = us_market_closed(groups.days[used])
    kinds: dict[tuple[bool, int], list[np.datetime64]] = {}
    for day, is_holiday, closed in zip(
        groups.days[used], holiday, groups.closed[used], strict=True
    ):
        kinds.setdefault((bool(is_holiday), int(closed)), []).append(day)
    ranked = sorted(kinds.items(), key=lambda kind: -len(kind[1]))
    return listed_text(
        [
            f"{close_clock(plan.dataset, closed)} on {len(on)} "
            f"{'holiday' if is_holiday else 'early close'}{'s' if len(on) > 1 else ''} "
            f"({'e.g. ' if len(on) > 1 else ''}{on[0]})"
            for (is_holiday, closed), on in ranked
        ]
    )


def _takes_last(items: list[SelectItem]) -> bool:
    """Whether an item takes last(): the day's last bar, read as its close."""
    return any(
        isinstance(node, ast.Call) and node.name.lower() == "last"
        for item in items
        for node in ast.walk(item.expr)
    )


def _last_bars(plan: Plan, groups: DayGroups, used: np.ndarray, cut: np.ndarray) -> str:
    """' (last() reads the 12:59 or 13:14 bar there, not the 15:59 one)': the bar last()
    reads on the short days and on most others."""
    clocks = [close_clock(plan.dataset, int(m)) for m in np.unique(groups.last[used])]
    text = f" (last() reads the {either_text(clocks)} bar there"
    others = groups.last[~cut & ~groups.short]
    if not len(others):
        return text + ")"
    values, counts = np.unique(others, return_counts=True)
    return f"{text}, not the {close_clock(plan.dataset, int(values[np.argmax(counts)]))} one)"


def _cash_half_days(plan: Plan, groups: DayGroups, used: np.ndarray, step: int) -> str:
    """On CASH, the half days among the days ``used`` whose bars run past the stock market's
    early close (13:00): CASH runs on to the futures' 13:15 close there, so its last bar is
    no cash close. Said with the form that ends them at 13:00 when a bar ends there; ""
    elsewhere."""
    instrument = plan.dataset.instrument
    if (
        STOCK_HOURS not in instrument.sessions
        or instrument.session_key(plan.session) != STOCK_HOURS
    ):
        return ""
    closes = stock_market_early_closes()
    day_start = instrument.trading_day_start_minute
    # The stock market's close as a minute of the day (-1: a full day), and into its day.
    stock = np.array([closes.get(day, -1) for day in groups.days[used]], dtype=np.int64)
    into = (stock - day_start) % MINUTES_PER_DAY  # minutes into the trading day
    half = (stock >= 0) & ~us_market_closed(groups.days[used]) & (groups.end[used] > into)
    if not half.any():
        return ""
    k = int(half.sum())
    at = used[half]
    stock_clock = either_text(sorted({format_clock(int(m)) for m in stock[half]}))
    futures = either_text(sorted({close_clock(plan.dataset, int(m)) for m in groups.closed[at]}))
    last = either_text([close_clock(plan.dataset, int(m)) for m in np.unique(groups.last[at])])
    days = f"the {k} half days" if k > 1 else "the half day"
    text = (
        f"On {days} the stock market closed at {stock_clock} but {STOCK_HOURS} runs on to "
        f"the futures' {futures} close (last bar {last})"
    )
    start, _ = window_edges(plan.dataset, plan.session)
    if len(set(stock[half])) > 1 or (int(into[half][0]) - start) % step:
        return text + "."  # no bar ends at the stock market's close
    form = f"not early_close() or time() < '{stock_clock}'"
    return f"{text}: {_where(plan, form)} ends them at {stock_clock}."


def _where(plan: Plan, form: str, *, capital: bool = False) -> str:
    """'"where": "not holiday() and not early_close()"', after the first stage's own where
    and, under a then stage, named as the first stage's."""
    if plan.first.where is not None:
        form = f"… and ({form})" if " or " in form else f"… and {form}"
    where = f'"where": "{form}"'
    if plan.then is None:
        return where
    return f"{'The' if capital else 'the'} first stage's {where}"
