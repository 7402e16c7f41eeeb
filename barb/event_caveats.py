"""Warnings about the events a query joins: another market's event (opex on CL), a release
inside a bar, releases on days without trading that count for the next, and release days with
no bar in the session (NFP on a Good Friday has no RTH bar). Where a release falls in the
session's hours (before its open, near its close, off a window's start) is
``release_time_caveats``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from barb.events.catalog import resolve_event
from barb.events.schedule import MINUTE_NS, join_arrays, moved_releases
from barb.period_rows import Scope
from barb.planning import Plan
from barb.release_time_caveats import release_time_caveats
from barb.script import ast
from barb.session_caveats import part_of_the_day
from barb.sessions import MINUTES_PER_DAY


def event_caveats(
    plan: Plan, scope: Scope, kept_dates: Callable[[], np.ndarray | None] | None = None
) -> list[str]:
    """Every warning about the query's joined events; ``kept_dates`` reads the trading dates
    of the first stage's rows kept."""
    return [
        *_another_market_s_events(plan),
        *_releases_inside_bars(plan, scope),
        *release_time_caveats(plan, scope, kept_dates),
        *_releases_moved(plan, scope, kept_dates),
        *_releases_without_a_bar(plan, scope),
    ]


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


def _releases_inside_bars(plan: Plan, scope: Scope) -> list[str]:
    """An event released inside a bar (NFP at 08:30 in the 08:00-09:00 bar): the bars from
    the release on begin at the next bar, so "the hour after" on these bars is not that."""
    tf = plan.timeframe
    if not tf.intraday or (tf.minutes or 1) <= 1:
        return []
    warnings = []
    for join in plan.events:
        column = f"{join.source}_minutes"
        if column not in scope.frame.columns:
            continue
        minutes = scope.frame[column].to_numpy()
        with np.errstate(invalid="ignore"):
            inside = scope.in_period & (minutes < 0) & (minutes > -tf.minutes)
        if not inside.any():
            continue
        at = int(np.flatnonzero(inside)[0])
        opens = pd.Timestamp(scope.frame["timestamp"].iloc[at])
        released = opens - pd.Timedelta(minutes=float(minutes[at]))
        warnings.append(
            f"{join.source.upper()} came out at {released:%H:%M}, inside the {tf.name} bar "
            f"opening {opens:%H:%M}: the first bar after it opens "
            f"{opens + pd.Timedelta(minutes=tf.minutes):%H:%M}. For the time right after a "
            f"release use 1m bars, or a window such as '{released:%H:%M}-"
            f"{released + pd.Timedelta(minutes=tf.minutes):%H:%M}' as the session."
        )
    return warnings


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
        kept = kept_dates() if kept_dates is not None and plan.first.picks_rows else None
        if kept is not None:  # a where that left the moved day out: nothing of it to say
            counted &= np.isin(seen.astype("datetime64[D]"), kept.astype("datetime64[D]"))
        pairs = [(_day(d), _day(t)) for d, t in zip(released[counted], seen[counted], strict=True)]
        if not pairs:
            continue
        days = ", ".join(f"{d} → {t}" for d, t in pairs[:3])
        more = f" and {len(pairs) - 3} more" if len(pairs) > 3 else ""
        count = f"{len(pairs)} {source.upper()} release" + ("s" if len(pairs) > 1 else "")
        verb = "counts" if len(pairs) == 1 else "count"
        warnings.append(
            f"{count} fell on a day without trading and {verb} for the next trading day "
            f"({days}{more}){_window_misses(plan, source, [t for _, t in pairs])}."
        )
    return warnings


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
    if window.start_minute == instrument.trading_day_start_minute:
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
    traded = np.asarray(plan.dataset.trading_dates(), dtype="datetime64[D]")
    traded = traded[(traded >= first) & (traded <= last)]
    session_days = plan.dataset.session_daily(plan.session).index.to_numpy("datetime64[D]")
    # Both sorted: a binary search, not setdiff1d's sort of 9,000 dates on every query.
    at = np.minimum(np.searchsorted(session_days, traded), len(session_days) - 1)
    missing_here = traded[session_days[at] != traded] if len(session_days) else traded
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
        listed = ", ".join(_day(d) for d in missed[:5])
        more = f" and {len(missed) - 5} more" if len(missed) > 5 else ""
        count = f"{len(missed)} {source.upper()} release day" + ("s" if len(missed) > 1 else "")
        verb, pronoun = ("has", "it is") if len(missed) == 1 else ("have", "they are")
        after = (
            f"so {pronoun} not counted. To count releases use the ETH session."
            if counts
            else f"so {pronoun} not among the {source} days here."
        )
        warnings.append(
            f"{count} traded but {verb} no {plan.session} bar ({listed}{more}): no row "
            f"carries {source} there, {after}"
        )
    return warnings


def _day(value: np.datetime64) -> str:
    return str(np.datetime64(value, "D"))
