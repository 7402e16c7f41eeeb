"""Warnings about the events a query joins: another market's event (opex on CL), releases
inside a bar (each time, with its days and how late the next bar opens), releases on days
without trading that count for the next, and release days with no bar in the session (NFP
on a Good Friday has no RTH bar). Where a release falls in the session's hours (before its
open, near its close, off a window's start) is ``release_time_caveats``."""

from __future__ import annotations

import calendar
import re
from collections import Counter
from collections.abc import Callable

import numpy as np
import pandas as pd

from barb.bar_labels import bar_label
from barb.caveats.release_times import event_days, release_time_caveats
from barb.caveats.sessions import part_of_the_day
from barb.events.catalog import EventSpec
from barb.events.names import resolve_event
from barb.events.schedule import MINUTE_NS, join_arrays, moved_releases
from barb.frames import Dataset
from barb.lineage import inputs, nodes
from barb.period_rows import Scope
from barb.planning import Plan
from barb.script import ast
from barb.sessions import MINUTES_PER_DAY
from barb.summary_text import named_text


def event_caveats(
    plan: Plan, scope: Scope, kept_dates: Callable[[], np.ndarray | None] | None = None
) -> list[str]:
    """Every warning about the query's joined events; ``kept_dates`` reads the trading dates
    of the first stage's rows kept."""
    return [
        *_another_market_s_events(plan),
        *_releases_inside_bars(plan, scope, kept_dates),
        *release_time_caveats(plan, scope, kept_dates),
        *_releases_moved(plan, scope, kept_dates),
        *_releases_without_a_bar(plan, scope),
    ]


def no_event_day_caveat(plan: Plan, scope: Scope, keep: np.ndarray) -> str | None:
    """What the period held when an event filter kept none of its bars (``keep``: the rows
    it kept): "The period last_5_bars (2025-12-31 — 2026-01-07) had 5 trading days, none an
    FOMC day; …", "October 2025 had 23 trading days, none an NFP day." "Scanned 0 daily
    bars, no bars" had read as missing data, and "the last 5 FOMC days" as none to be had
    (p48h M1). None when the filter kept a row, or the period has none (a closed day, said
    elsewhere)."""
    joins = [j for j in plan.events if j.filter is not None and j.source is not None]
    if not joins or keep.any() or not scope.in_period.any():
        return None
    frame, tf, period = scope.frame, plan.timeframe, plan.period
    at = np.flatnonzero(scope.in_period)
    begins = frame["timestamp" if tf.calendar else "trading_date"].to_numpy()[at[0]]
    first, last = (
        str(np.datetime64(day, "D")) for day in (begins, frame["trading_date"].to_numpy()[at[-1]])
    )
    if tf.calendar:  # a weekly bar is no trading day: its count is of bars
        n, noun = len(at), f"{tf.name} bar"
    else:
        n, noun = len(np.unique(frame["trading_date"].to_numpy()[at])), "trading day"
    named = _period_name(period.text)
    if named is None:
        span = first if first == last else f"{first} — {last}"
        named = f"The period {period.text} ({span})"
    head = f"{named} had {n:,} {noun}{'s' if n > 1 else ''}"
    instrument = plan.dataset.instrument
    unknown = ""
    for join in joins:
        assert join.source is not None
        if frame[join.source].isna().to_numpy()[at].any():
            spec = resolve_event(join.source, instrument)
            unknown = (
                f" (Barb's {spec.name.upper()} dates run {spec.coverage_start} to "
                f"{spec.coverage_end}: outside them a day's is unknown)"
            )
    if len(joins) > 1:
        kinds = ", ".join(
            f"{str(j.source).upper()} days {'only' if j.filter == 'only' else 'left out'}"
            for j in joins
        )
        return f"{head}, none kept by the event filters ({kinds}){unknown}."
    (join,) = joins
    name = str(join.source).upper()
    day = f"{_article(name)} {name} day"
    if join.filter == "exclude":
        held = f"each holding {day}" if tf.calendar else f"all {name} days" if n > 1 else day
        return f'{head}, {held}, which "filter": "exclude" leaves out{unknown}.'
    held = f"none holding {day}" if tf.calendar else f"none {day}" if n > 1 else f"not {day}"
    text = f"{head}, {held}{unknown}"
    label = bar_label(tf.name)
    if period.bars is not None and label is not None:
        # "The last 5 FOMC days" is the last 5 of the event's days, not of the bars.
        unit = "day" if label.column == "date" else label.column
        text += (
            f"; for the last {period.bars} {name} {unit}s leave the period out and sort by "
            f'{label.column} descending: "sort": "{label.column} desc", "limit": {period.bars}'
        )
    return text + "."


def _period_name(text: str) -> str | None:
    """A calendar period as a person names it ("2025-10" is "October 2025"; "2025",
    "2025-Q4" and "2025-10-03" as they are); None for any other (a span, last_5_bars)."""
    raw = text.strip()
    if re.fullmatch(r"\d{4}(-[Qq][1-4]|-\d{2}-\d{2})?", raw):
        return raw.upper()
    month = re.fullmatch(r"(\d{4})-(\d{1,2})", raw)
    if month and 1 <= int(month.group(2)) <= 12:
        return f"{calendar.month_name[int(month.group(2))]} {month.group(1)}"
    return None


def _article(name: str) -> str:
    """ "an" before a name read letter by letter from a vowel sound (an FOMC, an NFP, an
    EIA), else "a" (a CPI, a QUAD_WITCHING)."""
    return "an" if name[:1] in set("AEFHILMNORSX") else "a"


def _another_market_s_events(plan: Plan) -> list[str]:
    """An event joined on an instrument whose market it is not (opex on CL): the event list
    says so, but a model that never read it would call them CL's own expirations."""
    instrument = plan.dataset.instrument
    warnings = []
    for join in plan.events:
        spec = resolve_event(join.source, instrument) if join.source is not None else None
        if spec is not None and spec.note_for(instrument) is not None:
            assert spec.elsewhere is not None
            said = spec.elsewhere[0].lower() + spec.elsewhere[1:]
            warnings.append(f"'{spec.name}' on {instrument.symbol}: {said}")
    return warnings


def _releases_inside_bars(
    plan: Plan, scope: Scope, kept_dates: Callable[[], np.ndarray | None] | None = None
) -> list[str]:
    """Releases inside a bar (NFP at 08:30 in the 08:00-09:00 bar): the bars from the release
    on begin at the next bar, so "the hour after" on these bars is not that. Every release
    time so placed is counted: on ETH 1h bars FOMC's 14:15 (2008-2012, 32 days, the next bar
    45 minutes late), 12:30 (8) and 08:20 (1) were 41 of 147 days, and naming only the
    first of them read as one day measured late."""
    tf = plan.timeframe
    if not tf.intraday or (tf.minutes or 1) <= 1 or not plan.events:
        return []
    instrument = plan.dataset.instrument
    joined = [
        join
        for join in plan.events
        if join.source is not None
        and join.filter != "exclude"
        and f"{join.source}_minutes" in scope.frame
    ]
    if not joined:  # before every bar's date is read
        return []
    dates = scope.frame["trading_date"].to_numpy(dtype="datetime64[ns]").astype("datetime64[D]")
    stamps = scope.frame["timestamp"].to_numpy(dtype="datetime64[ns]")
    warnings = []
    for join in joined:
        assert join.source is not None
        column = f"{join.source}_minutes"
        minutes = scope.frame[column].to_numpy(dtype=np.float64)
        with np.errstate(invalid="ignore"):
            inside = scope.in_period & (minutes < 0) & (minutes > -tf.minutes)
            after = scope.in_period & (minutes >= 0)
        if not inside.any():
            continue
        spec = resolve_event(join.source, instrument)
        days, held = _days_spoken_of(plan, scope, spec, kept_dates)
        inside &= np.isin(dates, days)
        if not inside.any():
            continue
        # Each day's first bar from the release on: what "<event>_minutes >= 0" starts at.
        first_after = pd.Series(minutes[after]).groupby(dates[after]).min()
        # None, not NaN, for a day with no bar after it: NaN keys would not count as one.
        late = [None if np.isnan(m) else int(m) for m in first_after.reindex(dates[inside])]
        opens = pd.DatetimeIndex(stamps[inside])
        released = opens - pd.to_timedelta(minutes[inside], unit="min")
        placed = Counter(
            zip(released.strftime("%H:%M"), opens.strftime("%H:%M"), late, strict=True)
        )
        missing = 0 if held is None else int((~np.isin(dates[inside], held)).sum())
        warnings.append(_inside_bars_text(plan, spec, placed, len(days), missing))
    return warnings


def _days_spoken_of(
    plan: Plan,
    scope: Scope,
    spec: EventSpec,
    kept_dates: Callable[[], np.ndarray | None] | None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The event's days the inside-a-bar warning counts, and the days the result holds when
    some of those have no row in it (else None).

    A where on the minutes after the release ("fomc_minutes < 30" on 1h bars) leaves out the
    days whose first bar after it opens later (FOMC's 14:15 ones, 45 minutes): they are
    counted, and said missing. A where that also reads anything else ("year() >= 2013")
    may have left them out for that: only the days it kept are spoken of."""
    days = event_days(plan, scope, spec, kept_dates)
    kept = kept_dates() if kept_dates is not None and plan.first.picks_rows else None
    if kept is None:
        return days, None
    held = np.unique(kept.astype("datetime64[D]"))
    where, mapped = plan.first.where, dict(plan.first.map_exprs)
    read = inputs(where, mapped) - set(mapped) if where is not None else set()
    if plan.first.limit is None and read <= {spec.name, f"{spec.name}_minutes"}:
        return days, held
    return np.intersect1d(days, held), None


def _inside_bars_text(
    plan: Plan,
    spec: EventSpec,
    placed: Counter[tuple[str, str, int | None]],
    days: int,
    missing: int,
) -> str:
    """'FOMC came out inside a 1h bar on 41 of the 147 fomc days in the period: at 14:15 on
    32 (the 14:00 bar; the next bar opens 45 minutes after the release), at 12:30 on 8 (the
    12:00 bar; 30 minutes), …', the most common first; one time alone with the window that
    starts at it, which fits every day then. ``placed`` counts the days by release time, the
    bar holding it and the minutes from it to the next bar (None: no bar after it)."""
    tf, name = plan.timeframe, spec.name
    came = "settled" if spec.category == "options" else "came out"
    count = sum(placed.values())
    share = f"all {days}" if count == days else f"{count} of the {days}"
    share = f"the one {name} day" if days == 1 else f"{share} {name} days"
    where = f"'{name} and {name}_minutes >= 0 and {name}_minutes < {tf.minutes}'"
    left_out = ""
    if missing:
        them = "it" if count == 1 else "any of them" if missing == count else f"{missing} of them"
        left_out = (
            f"; the where's {name}_minutes window keeps no bar of {them}, so "
            f"{'it is' if missing == 1 else 'they are'} not in the result"
        )
    if len(placed) == 1:
        [(released, opens, late)] = placed
        ends = pd.Timestamp(f"2000-01-01 {released}") + pd.Timedelta(minutes=tf.minutes)
        # A window applies one time of day to every day: it fits when all came then.
        window = f", or a window such as '{released}-{ends:%H:%M}' as the session"
        return (
            f"{name.upper()} {came} at {released}, inside the {tf.name} bar opening {opens}, "
            f"on {share} in the period: {_next_bar(late)}{left_out}. For the time right after "
            f"a release use 1m bars with the where {where}{window if count == days else ''}."
        )
    parts = []
    for at, ((released, opens, late), n) in enumerate(placed.most_common()):
        late_text = _next_bar(late) if at == 0 else _late(late)
        parts.append(f"at {released} on {n} (the {opens} bar; {late_text})")
    return (
        f"{name.upper()} {came} inside a {tf.name} bar on {share} in the period: "
        f"{', '.join(parts)}. On those days the first bar from the release on starts that "
        f"late{left_out}. For the time right after each release use 1m bars with the where "
        f"{where}."
    )


def _next_bar(late: int | None) -> str:
    if late is None:
        return "no bar after it that day"
    return f"the next bar opens {late} minutes after the release"


def _late(late: int | None) -> str:
    return "no bar after it" if late is None else f"{late} minutes"


def _releases_moved(
    plan: Plan, scope: Scope, kept_dates: Callable[[], np.ndarray | None] | None = None
) -> list[str]:
    """Releases on a day without trading (CPI on Good Friday, FOMC on a Sunday) count for the
    next trading day: a Monday "CPI day" is one of them. But on intraday bars a where on the
    minutes after the release (fomc_minutes < 60) finds no bar of that day when the market
    opened later than the window (FOMC on Sunday 2020-03-15 at 17:00, the first bar at
    18:00): that release is not in the result, and is said so instead."""
    sources = [join.source for join in plan.events if join.source is not None]
    if not sources or not scope.in_period.any():
        return []
    # Rows are in time order: the period's first and last trading dates are at its ends.
    dates = scope.frame["trading_date"].to_numpy(dtype="datetime64[ns]")
    first = dates[int(np.argmax(scope.in_period))]
    last = dates[len(dates) - 1 - int(np.argmax(scope.in_period[::-1]))]
    warnings = []
    for source in sources:
        released, seen = moved_releases(source, plan.dataset.instrument)
        inside = (seen >= first) & (seen <= last)
        if not inside.any():
            continue
        released, seen = released[inside], seen[inside]
        missed = _moved_out_of_window(plan, scope, source, seen, kept_dates)
        if missed:
            warnings.append(_out_of_window_text(source, missed))
        counted = ~np.isin(seen.astype("datetime64[D]"), [day for day, _, _ in missed])
        lagged = _read_a_day_late(plan, source)
        kept = kept_dates() if kept_dates is not None and plan.first.picks_rows else None
        if kept is not None and not lagged:  # a where that left the moved day out
            counted &= np.isin(seen.astype("datetime64[D]"), kept.astype("datetime64[D]"))
        pairs = [(_day(d), _day(t)) for d, t in zip(released[counted], seen[counted], strict=True)]
        if not pairs:
            continue
        days = named_text([f"{d} → {t}" for d, t in pairs[:3]], len(pairs))
        count = f"{len(pairs)} {source.upper()} release" + ("s" if len(pairs) > 1 else "")
        verb = "counts" if len(pairs) == 1 else "count"
        late = _day_after_text(source, dates, seen[counted]) if lagged else ""
        warnings.append(
            f"{count} fell on a day without trading and {verb} for the next trading day "
            f"({days}){_window_misses(plan, source, [t for _, t in pairs])}{late}."
        )
    return warnings


def _read_a_day_late(plan: Plan, source: str) -> bool:
    """Whether the first stage's where reads the event's column through prev() (map columns
    read through): "the day after FOMC", prev(fomc), kept 2020-03-17 for the Sunday
    2020-03-15 cut, whose first trading day 2020-03-16 was its reaction, and the sentence on
    the moved release was dropped as of a day the where left out."""
    where = plan.first.where
    if where is None:
        return False
    mapped = dict(plan.first.map_exprs)
    return any(
        isinstance(node, ast.Call)
        and node.name.lower() == "prev"
        and bool(node.args)
        and source in inputs(node.args[0], mapped)
        # prev(fomc, 2) reads two days later: said of a lag of one only.
        and (len(node.args) == 1 or ast.literal_value(node.args[1]) == 1)
        for node in nodes(where, mapped)
    )


def _day_after_text(source: str, dates: np.ndarray, seen: np.ndarray) -> str:
    """ "; prev(fomc) is true a trading day later (2020-03-17): the second trading day after
    the release, not its first": what the where's "day after" reads of a moved release."""
    days = np.unique(dates.astype("datetime64[D]"))
    at = np.searchsorted(days, seen.astype("datetime64[D]"), side="right")
    later = [str(days[i]) for i in at[:3] if i < len(days)]
    if not later:
        return ""
    return (
        f"; prev({source}) is true a trading day later ({', '.join(later)}): the second "
        "trading day after the release, not its first"
    )


def _window_misses(plan: Plan, source: str, days: list[str]) -> str:
    """On daily bars of a window that holds the release's time of day ('08:30-09:30' for
    CPI), what the moved days' rows are: the window days after the release, holding none of
    it (CL's 08:30-09:30 on Monday 2017-04-17 counted as a CPI window, CPI having come out on
    Good Friday). Empty when the query's bars do hold it: intraday bars have their minutes
    after it, and a session opening with the trading day (ETH, the overnight) its first move."""
    window = part_of_the_day(plan)
    instrument = plan.dataset.instrument
    if window is None or plan.timeframe.name != "daily":
        return ""
    if window.start_minute == instrument.trading_day_start_minute or window.zone is not None:
        return ""
    arrays = join_arrays(resolve_event(source, instrument), instrument)
    numbers = np.array(days, dtype="datetime64[D]").astype(np.int64)
    released = arrays.release_ns[np.searchsorted(arrays.days, numbers)]
    minute = (released // MINUTE_NS) % MINUTES_PER_DAY
    held = (minute - window.start_minute) % MINUTES_PER_DAY < window.length_minutes
    if not held.all():
        return ""
    named = (
        f"the window '{window.hours}'"
        if plan.session == window.hours
        else f"{plan.session} ({window.hours})"
    )
    listed = ", ".join(f"'{day}'" for day in days)
    return (
        f"; there {named} comes days after the release and holds none of it: "
        f"date() not in ({listed}) in the where leaves those days out"
    )


def _moved_out_of_window(
    plan: Plan,
    scope: Scope,
    source: str,
    seen: np.ndarray,
    kept_dates: Callable[[], np.ndarray | None] | None,
) -> list[tuple[np.datetime64, pd.Timestamp, pd.Timestamp | None]]:
    """The moved releases whose day kept no row under a where on ``<source>_minutes``: each
    day, its release and the first bar after it (None: no bar after it that day)."""
    column = f"{source}_minutes"
    where = plan.first.where
    if kept_dates is None or where is None or column not in scope.frame.columns:
        return []
    if not any(isinstance(node, ast.Column) and node.name == column for node in ast.walk(where)):
        return []
    kept = kept_dates()
    kept_days = np.unique(kept.astype("datetime64[D]")) if kept is not None else []
    instrument = plan.dataset.instrument
    arrays = join_arrays(resolve_event(source, instrument), instrument)
    day_of_row = scope.frame["trading_date"].to_numpy().astype("datetime64[D]")
    minutes = scope.frame[column].to_numpy(dtype=np.float64)
    stamps = scope.frame["timestamp"].to_numpy()
    missed = []
    for day in np.unique(seen.astype("datetime64[D]")):
        if np.isin(day, kept_days):
            continue
        at = np.searchsorted(arrays.days, day.astype(np.int64))
        release = pd.Timestamp(int(arrays.release_ns[at]))
        with np.errstate(invalid="ignore"):
            after = np.flatnonzero((day_of_row == day) & (minutes >= 0))
        opens = pd.Timestamp(stamps[after[0]]) if len(after) else None
        missed.append((day, release, opens))
    return missed


def _out_of_window_text(
    source: str, missed: list[tuple[np.datetime64, pd.Timestamp, pd.Timestamp | None]]
) -> str:
    parts = []
    for _, release, opens in missed:
        if opens is None:
            parts.append(f"{release:%Y-%m-%d %H:%M}: no bar after it")
        else:
            late = int((opens - release) / pd.Timedelta(minutes=1))
            parts.append(
                f"{release:%Y-%m-%d %H:%M}, market closed: the first bar after it opens "
                f"{opens:%H:%M}, {source}_minutes = {late}"
            )
    noun = "release falls" if len(missed) == 1 else "releases fall"
    return (
        f"{len(missed)} {source.upper()} {noun} on a day without trading and no bar of its "
        f"day is inside the where's {source}_minutes window ({'; '.join(parts)}): not in the "
        "result."
    )


def _releases_without_a_bar(plan: Plan, scope: Scope) -> list[str]:
    """A release day that traded, only not in the query's session (NFP on Good Friday: a
    short Globex session to 09:15, no RTH bar): no row carries its flag, so a count of
    releases on RTH misses it."""
    if plan.timeframe.calendar or not scope.in_period.any():
        return []  # a weekly bar's trading date is its last day, not the release's
    sources = [join.source for join in plan.events if join.source is not None]
    if not sources or plan.session == "ETH":
        return []
    dates = scope.frame["trading_date"].to_numpy(dtype="datetime64[ns]")
    first = dates[int(np.argmax(scope.in_period))].astype("datetime64[D]")
    last = dates[len(dates) - 1 - int(np.argmax(scope.in_period[::-1]))].astype("datetime64[D]")
    dataset, session = plan.dataset, plan.session
    if session in dataset.instrument.sessions:  # a named session's: found once per process
        untraded = dataset.derived(
            f"days_without_bars:{session}", lambda: _days_without_bars(dataset, session)
        )
    else:  # a window ('09:30-09:45'): open-ended, so not kept
        untraded = _days_without_bars(dataset, session)
    missing_here = untraded[
        np.searchsorted(untraded, first) : np.searchsorted(untraded, last, "right")
    ]
    if not len(missing_here):
        return []
    instrument = plan.dataset.instrument
    # Switching to ETH counts them; for a statistic of the session's own bars (a gap, the
    # RTH range) it would measure something else, so that advice goes with counts only.
    counts = any(
        isinstance(node, ast.Call) and node.name.lower() == "count"
        for item in plan.first.select
        for node in ast.walk(item.expr)
    )
    warnings = []
    for source in sources:
        days = join_arrays(resolve_event(source, instrument), instrument).days
        missed = np.intersect1d(missing_here, days.astype("datetime64[D]"))
        if not len(missed):
            continue
        listed = named_text([_day(d) for d in missed[:5]], len(missed))
        count = f"{len(missed)} {source.upper()} release day" + ("s" if len(missed) > 1 else "")
        verb, pronoun = ("has", "it is") if len(missed) == 1 else ("have", "they are")
        after = (
            f"so {pronoun} not counted. To count releases use the ETH session."
            if counts
            else f"so {pronoun} not among the {source} days here."
        )
        warnings.append(
            f"{count} traded but {verb} no {plan.session} bar ({listed}): no row "
            f"carries {source} there, {after}"
        )
    return warnings


def _days_without_bars(dataset: Dataset, session: str) -> np.ndarray:
    """The trading dates of the data (datetime64[D], ascending) with no bar of ``session``."""
    traded = np.asarray(dataset.trading_dates(), dtype="datetime64[D]")
    session_days = dataset.session_daily(session).index.to_numpy("datetime64[D]")
    if not len(session_days):
        return traded
    # Both sorted: a binary search, not setdiff1d's sort of 9,000 dates.
    at = np.minimum(np.searchsorted(session_days, traded), len(session_days) - 1)
    return traded[session_days[at] != traded]


def _day(value: np.datetime64) -> str:
    return str(np.datetime64(value, "D"))
