"""Daily bars of two joined instruments that, on a holiday or early close, cover different
hours.

A join whose session has the same hours on both sides (ETH beside ETH, or a window written
as clock hours) reads as "the same hours of both markets", and on most days it is. But the
exchanges keep different short days: on the Friday after Thanksgiving ES stops at 13:15 and
CL at 13:45; on July 3 and Christmas Eve ES closes at 13:15 while CL trades its full day; on
a US holiday ES stops at 13:00 and (since 2022) CL at 14:30. ES and CL's ETH bars of
2020-2025 differ so on 37 of the 1,549 days joined, and a correlation of their daily returns
(0.2920) moves to 0.2938 without them, with nothing said. Said with the count, the first
few days and each side's hours, and the where that leaves them out (holiday() and
early_close() read the query's own exchange: the other's short days they miss are listed by
date), with how many other short days it drops. Only the calendars' short days are weighed:
a real minute file lacks a bar where nothing traded, and a thin day's last bar at 16:58 is
no short session.

Weekly and longer bars close with their last day's bar: where both sides' last day is the
same short day closed at other times, their closes are of different hours. ES and CL's ETH
weeks of 2020-2025 end so in 8 of 312 (each week after Thanksgiving: ES 13:15, CL 13:45;
the week of Christmas Eve 2020: CL 17:00; the week of July 4, 2025: ES 13:00, CL 14:30),
and a correlation of their weekly returns (0.3683) moves to 0.3753 without them, with
nothing said. Said the same way, with the where that leaves those weeks out
(holiday() reads a day, not a week: by date()). A last day that differs is said by
``join_ends``. A short day inside a week closed at different hours (Thanksgiving Thursday:
ES 13:00, CL 14:30) leaves the close alone but not the week's high, low and volume, which
hold the later market's bars after the other's close: said to a query reading those.

Bars shorter than a day are matched on their time; where a close falls inside a bar the two
sides' bars hold different minutes (``joined_bars``). A session read with each instrument's
own hours is said as such (``planning._session_hours_differ``): its bars never cover the same
hours.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from barb.bar_labels import unit_label
from barb.frames import Dataset, last_weekday_of_period, period_start
from barb.instruments import MINUTES_PER_DAY, format_clock
from barb.planning import JoinedInstrument, Plan
from barb.script.columns_read import columns_read
from barb.short_days import day_edges, special_days, window_edges
from barb.summary_text import count_text, named_text

# Days named before "and N more".
NAMED = 3
# What a query reads of a bar's size (``_sizes_read``).
EXTREMES, VOLUME = "extremes", "volume"
# A share of a period's volume in the hours only one market traded that changes a volume
# answer: a tenth of the week's. CL's 90 minutes after ES's 13:00 holiday close hold 2-5 %
# of its week's volume in the sample, within the week-to-week spread of volumes.
VOLUME_SHARE = 0.10
# Days a where lists by date (those the calendar functions do not leave out); past this
# many only counted.
LISTED = 12


def join_hours_caveat(plan: Plan, kept_dates: Callable[[], np.ndarray | None]) -> list[str]:
    """'On 37 of the 1,549 days kept ES's ETH bar and CL's cover different hours, …:
    2020-11-27 (ES until 13:15, CL 13:45), 2020-12-24 (ES until 13:15, CL 17:00) … "where":
    "not holiday() and not early_close()" leaves them out (and 16 other short days both
    closed alike).' ``kept_dates`` reads the trading dates of the first stage's rows kept."""
    if (plan.timeframe.name != "daily" and not plan.timeframe.calendar) or not plan.instruments:
        return []
    ours = plan.dataset
    if ours.instrument.session(plan.session).zone is not None:
        return []  # a window on another clock: its exchange hours move with daylight saving
    joined = [j for j in plan.instruments if same_hours(plan, j) and reads_joined(plan, j)]
    if not joined:
        return []
    dates = kept_dates()
    if dates is None or not len(dates):
        return []
    days = np.unique(np.asarray(dates).astype("datetime64[D]"))
    if plan.timeframe.calendar:
        return _period_caveat(plan, joined, days)
    kept = len(days)
    # Only the calendars' short days: a minute without trades before a close (a thin 16:59)
    # ends a day's bars early with no short session behind it.
    own_short = special_days(ours, days)  # what holiday() and early_close() leave out
    shorts = own_short | special_elsewhere(joined, days)
    days, own_short = days[shorts], own_short[shorts]
    if not len(days):
        return []
    own_open, own_close = _clock_edges(ours, plan.session, days)
    symbol = ours.instrument.symbol
    warnings = []
    for join in joined:
        other = join.dataset.instrument.symbol
        open_, close = _clock_edges(join.dataset, join.session, days)
        both = (own_close >= 0) & (close >= 0)
        apart = np.flatnonzero(both & ((own_open != open_) | (own_close != close)))
        if not len(apart):
            continue
        named = [
            _day_text(days[i], symbol, other, (own_open[i], own_close[i]), (open_[i], close[i]))
            for i in apart[:NAMED]
        ]
        apart_named = named_text(named, len(apart))
        hint = leave_out(symbol, days[apart], own_short, apart)
        warnings.append(
            f"On {len(apart):,} of the {count_text(kept, 'day')} kept {symbol}'s "
            f"{plan.session} bar and {other}'s cover different hours, one market closing early "
            f"where the other did not (or at another time): {apart_named}; side by "
            "side there the two bars (their ranges, their closes, and what prev() reads of "
            f"them the next day) are of different hours. {hint}"
        )
    return warnings


def _period_caveat(plan: Plan, joined: list[JoinedInstrument], ends: np.ndarray) -> list[str]:
    """'In 8 of the 312 weeks kept ES's ETH bar and CL's close on the same day at different
    hours …: the week 2020-11-23 (2020-11-27: ES until 13:15, CL 13:45) …'. ``ends``: each
    kept weekly (monthly…) bar's last trading date, the day its close is of."""
    ours = plan.dataset
    tf = plan.timeframe
    inside = _inside_caveat(plan, joined, ends)
    short = special_days(ours, ends) | special_elsewhere(joined, ends)
    days = ends[short]
    if not len(days):
        return inside
    _, own_close = _clock_edges(ours, plan.session, days)
    symbol, unit = ours.instrument.symbol, tf.label
    firsts = _first_dates(_trading_dates(ours, plan.session), tf.name, days)
    warnings = []
    for join in joined:
        _, close = _clock_edges(join.dataset, join.session, days)
        last = _is_last(_trading_dates(join.dataset, join.session), tf.name, days)
        apart = np.flatnonzero((own_close >= 0) & (close >= 0) & last & (own_close != close))
        if not len(apart):
            continue
        other = join.dataset.instrument.symbol
        named = [
            f"the {unit} {unit_label(firsts[i], unit)} ({days[i]}: {symbol} until "
            f"{format_clock(own_close[i])}, {other} {format_clock(close[i])})"
            for i in apart[:NAMED]
        ]
        hint = _leave_out_hint([str(firsts[i]) for i in apart], unit)
        warnings.append(
            f"In {len(apart):,} of the {count_text(len(ends), unit)} kept {symbol}'s "
            f"{plan.session} bar and {other}'s close on the same day at different hours, one "
            f"market closing early where the other did not (or at another time): "
            f"{named_text(named, len(apart))}; side by side there the two closes (and the returns "
            f"read from them, this {unit}'s and through prev() the next one's) are of "
            f"different hours. {hint}"
        )
    return warnings + inside


def _inside_caveat(plan: Plan, joined: list[JoinedInstrument], ends: np.ndarray) -> list[str]:
    """'In 1 of the 5 weeks kept a short day before the week's last closed ES's ETH bar and
    CL's at different hours: the week 2024-11-25 (2024-11-28: ES until 13:00, CL 14:30) …'.
    A weekly bar's high, low and volume are of all its days' bars: where one market stopped
    earlier on Thanksgiving Thursday the other's week holds its later bars (CL's 90 minutes
    to 14:30) beside none of the first's. Its close is of its last day alone (that day
    ``_period_caveat`` says), so only a query reading a bar's size is told."""
    ours = plan.dataset
    tf = plan.timeframe
    reads = {join.join.prefix: _sizes_read(plan, join) for join in joined}
    if not any(reads.values()):
        return []
    own_dates = _trading_dates(ours, plan.session)
    starts = np.unique(period_start(ends, tf.name))
    in_kept = np.isin(period_start(own_dates, tf.name), starts)
    days = own_dates[in_kept & ~np.isin(own_dates, ends)]  # a kept period's day but its last
    short = special_days(ours, days) | special_elsewhere(joined, days)
    days = days[short]
    if not len(days):
        return []
    own_open, own_close = _clock_edges(ours, plan.session, days)
    symbol, unit = ours.instrument.symbol, tf.label
    firsts = _first_dates(own_dates, tf.name, days)
    warnings = []
    for join in joined:
        open_, close = _clock_edges(join.dataset, join.session, days)
        both = (own_close >= 0) & (close >= 0)
        apart = np.flatnonzero(both & ((own_open != open_) | (own_close != close)))
        sides = ((ours, plan.session), (join.dataset, join.session))
        apart = np.array(
            [i for i in apart if _moves_period(sides, days[i], tf.name, reads[join.join.prefix])],
            dtype=np.int64,
        )
        if not len(apart):
            continue
        other = join.dataset.instrument.symbol
        # One day per period named (its first such day), the periods counted.
        periods, first_of = np.unique(firsts[apart], return_index=True)
        apart = apart[np.sort(first_of)]
        named = [  # the week 2024-11-25 (2024-11-28: ES until 13:00, CL 14:30)
            f"the {unit} {unit_label(firsts[i], unit)} ("
            + _day_text(
                days[i], symbol, other, (own_open[i], own_close[i]), (open_[i], close[i])
            ).replace(f"{days[i]} (", f"{days[i]}: ", 1)
            for i in apart[:NAMED]
        ]
        hint = _leave_out_hint([str(first) for first in periods], unit)
        warnings.append(
            f"In {len(periods):,} of the {count_text(len(ends), unit)} kept a short day before "
            f"the {unit}'s last closed {symbol}'s {plan.session} bar and {other}'s at different "
            f"hours: {named_text(named, len(apart))}; side by side there the two {unit}ly bars' "
            f"{_sizes_text(reads[join.join.prefix])} are of different hours (one market's "
            f"{_sizes_text(reads[join.join.prefix], one=True)} falls in hours of that day the "
            f"other has no bars in). {hint}"
        )
    return warnings


def _leave_out_hint(periods: list[str], unit: str) -> str:
    """The where that leaves the named periods out, or, for more than can be listed, that
    it takes one."""
    if len(periods) > LISTED:
        return f"Leaving them out takes a where on date() listing the {unit}s."
    listed = ", ".join(f"'{first}'" for first in periods)
    return f'"where": "date() not in ({listed})" leaves them out.'


def _sizes_read(plan: Plan, joined: JoinedInstrument) -> frozenset[str]:
    """What the first stage reads of a bar's size, its own or the joined one's
    (``cl_volume``): ``EXTREMES`` for its high, low or range, ``VOLUME`` for its volume;
    both when it lists the bars whole. What a day's missing hours change."""
    first = plan.first
    if first.shape == "table" and not first.select:
        return frozenset({EXTREMES, VOLUME})
    exprs = (*first.row_exprs, *(item.expr for item in first.select))
    read = {key.column for key in first.sort}.union(*(columns_read(e) for e in exprs))
    prefix = joined.join.prefix
    own = {name.removeprefix(prefix) for name in read}
    found = set()
    if own & {"high", "low", "range"}:
        found.add(EXTREMES)
    if "volume" in own:
        found.add(VOLUME)
    return frozenset(found)


def _sizes_text(reads: frozenset[str], *, one: bool = False) -> str:
    """'highs, lows and volumes' of what the query reads; of one bar, 'high, low or a share
    of its volume'."""
    if one:
        parts = (["high", "low"] if EXTREMES in reads else []) + (
            ["a share of its volume"] if VOLUME in reads else []
        )
        return ", ".join(parts[:-1]) + f" or {parts[-1]}" if len(parts) > 1 else parts[0]
    parts = (["highs", "lows"] if EXTREMES in reads else []) + (
        ["volumes"] if VOLUME in reads else []
    )
    return ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else parts[0]


def _moves_period(
    sides: tuple[tuple[Dataset, str], ...], day: np.datetime64, timeframe: str, reads: frozenset
) -> bool:
    """Whether the hours of ``day`` one market traded and the other did not (Thanksgiving
    Thursday's 13:00-14:30, CL's alone) can change the answer: they hold that market's high
    or low of its week (month…) when ``EXTREMES`` are read, or ``VOLUME_SHARE`` of its volume
    when ``VOLUME`` is. ES and CL's ETH weeks of 2020-2025 hold 27 such days, mostly holiday
    Mondays; CL's extra 90 minutes made its week's high or low in 4 of them, and 2.2-7 % of
    its volume (a week's volume moves by more from one week to the next). Each side's
    minute bars of the period, in its session's window (``sides``: dataset and session)."""
    edges = [day_edges(dataset, np.array([day]))[:] for dataset, _ in sides]
    windows = [window_edges(dataset, session) for dataset, session in sides]
    lo = max(max(int(e[0][0]) for e in edges), *(w[0] for w in windows))
    hi = min(min(int(e[1][0]) for e in edges), *(w[1] for w in windows))
    for dataset, session in sides:
        bars = _period_minutes(dataset, session, day, timeframe)
        if bars is None:
            continue
        minutes, dates, high, low, volume = bars
        extra = (dates == day) & ((minutes < lo) | (minutes >= hi))
        if not extra.any():
            continue
        if EXTREMES in reads and (high[extra].max() >= high.max() or low[extra].min() <= low.min()):
            return True
        total = float(volume.sum())
        if VOLUME in reads and total > 0 and volume[extra].sum() >= VOLUME_SHARE * total:
            return True
    return False


def _period_minutes(
    dataset: Dataset, session: str, day: np.datetime64, timeframe: str
) -> tuple[np.ndarray, ...] | None:
    """The minute bars in ``session``'s window of the week (month…) ``day`` lies in: each
    one's minute into its trading day, trading date, high, low and volume; None for none."""
    frame = dataset.bars.frame
    every = frame["trading_date"].to_numpy()  # sorted; searched, not converted (6.4M rows)
    begins = period_start(np.array([day]), timeframe)[0].astype(every.dtype)
    ends = np.datetime64(last_weekday_of_period(day, timeframe), "D").astype(every.dtype)
    rows = slice(
        int(np.searchsorted(every, begins)), int(np.searchsorted(every, ends, side="right"))
    )
    dates = every[rows].astype("datetime64[D]")
    start, end = window_edges(dataset, session)
    shift = dataset.instrument.trading_day_start_minute
    minutes = (frame["minute"].to_numpy()[rows].astype(np.int64) - shift) % MINUTES_PER_DAY
    inside = (minutes >= start) & (minutes < end)
    if not inside.any():
        return None
    return (
        minutes[inside],
        dates[inside],
        frame["high"].to_numpy()[rows][inside],
        frame["low"].to_numpy()[rows][inside],
        frame["volume"].to_numpy()[rows][inside],
    )


def _trading_dates(dataset: Dataset, session: str) -> np.ndarray:
    """The session's trading dates (datetime64[D]), from its daily bars."""
    return dataset.session_daily(session).index.to_numpy().astype("datetime64[D]")


def _first_dates(dates: np.ndarray, timeframe: str, days: np.ndarray) -> np.ndarray:
    """The first of the trading ``dates`` in the period each of ``days`` lies in: what
    date() reads on the period's bar."""
    starts = period_start(days, timeframe).astype("datetime64[D]")
    return dates[np.minimum(np.searchsorted(dates, starts), len(dates) - 1)]


def _is_last(dates: np.ndarray, timeframe: str, days: np.ndarray) -> np.ndarray:
    """Whether each of ``days`` is the last of the trading ``dates`` in its period: else the
    joined bar closes on a later day (``join_ends`` says it)."""
    after = np.searchsorted(dates, days, side="right")
    following = dates[np.minimum(after, len(dates) - 1)]
    later = (after < len(dates)) & (
        period_start(following, timeframe) == period_start(days, timeframe)
    )
    return ~later


def special_elsewhere(joined: list[JoinedInstrument], days: np.ndarray) -> np.ndarray:
    """Which of ``days`` a joined instrument's exchange closed early on."""
    special = np.zeros(len(days), dtype=bool)
    for join in joined:
        special |= special_days(join.dataset, days)
    return special


def same_hours(plan: Plan, joined: JoinedInstrument) -> bool:
    """Whether the joined bars are meant to be the query's own hours: otherwise the planner
    has said they differ on every day."""
    if joined.join.session is not None and joined.session != plan.session:
        return False
    theirs = joined.dataset.instrument.session(joined.session)
    return theirs.hours == plan.dataset.instrument.session(plan.session).hours


def reads_joined(plan: Plan, joined: JoinedInstrument) -> bool:
    """Whether the first stage reads the joined bars (``es_close``) or lists them: a join
    that only keeps the dates both traded compares nothing of theirs (the rows behind a
    number show them, but the number is not of them)."""
    first = plan.first
    if first.shape == "table" and not first.select:
        return True  # rows listed whole, joined columns among them
    prefix = joined.join.prefix
    exprs = (*first.row_exprs, *(item.expr for item in first.select))
    read = {key.column for key in first.sort}.union(*(columns_read(e) for e in exprs))
    return any(name.startswith(prefix) for name in read)


def _clock_edges(dataset: Dataset, session: str, days: np.ndarray) -> tuple[np.ndarray, ...]:
    """The wall-clock minute each of ``days`` opened and closed inside ``session``'s window;
    -1 where the instrument had no bar in it that day."""
    opened, closed = day_edges(dataset, days)
    start, end = window_edges(dataset, session)
    inside = (opened >= 0) & (opened < end) & (closed > start)
    shift = dataset.instrument.trading_day_start_minute
    first = (np.maximum(opened, start) + shift) % MINUTES_PER_DAY
    last = (np.minimum(closed, end) + shift) % MINUTES_PER_DAY
    return np.where(inside, first, -1), np.where(inside, last, -1)


def _day_text(
    day: np.datetime64,
    symbol: str,
    other: str,
    ours: tuple[int, int],
    theirs: tuple[int, int],
) -> str:
    """'2020-11-27 (ES until 13:15, CL 13:45)'; with the opens when they differ too."""
    if ours[0] == theirs[0]:
        return f"{day} ({symbol} until {format_clock(ours[1])}, {other} {format_clock(theirs[1])})"
    return (
        f"{day} ({symbol} {format_clock(ours[0])}-{format_clock(ours[1])}, "
        f"{other} {format_clock(theirs[0])}-{format_clock(theirs[1])})"
    )


def leave_out(symbol: str, days: np.ndarray, own_short: np.ndarray, apart: np.ndarray) -> str:
    """The where that leaves ``days`` (the ``apart`` of the short days, ``own_short`` those
    the calendar functions read on the query's own instrument) out: holiday() and
    early_close(), and by date the other market's short days they miss; with how many other
    days it leaves out (the short days both markets closed alike)."""
    missed = days[~own_short[apart]]
    others = int(np.count_nonzero(own_short)) - (len(days) - len(missed))
    besides = f" (and {count_text(others, 'other short day')} both closed alike)" if others else ""
    where = "not holiday() and not early_close()"
    if not len(missed):
        return f'"where": "{where}" leaves them out{besides}.'
    if len(missed) > LISTED:
        return (
            f'"where": "{where}" leaves out {len(days) - len(missed):,} of them{besides}; the '
            f"other {len(missed):,} are not short days on {symbol}'s own calendar."
        )
    listed = ", ".join(f"'{day}'" for day in missed)
    return f'"where": "{where} and date() not in ({listed})" leaves them out{besides}.'
