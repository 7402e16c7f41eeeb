"""Warnings about where a joined event's release falls in the query's session hours: before
the session opens or after it closes (CPI at 08:30, before CL's 09:00 RTH open), in its last
half hour (FOMC at 14:00, 30 minutes before CL's 14:30 RTH close), or off the start of a
window that begins at the release's usual time ('14:00-14:30' for FOMC).

"CPI days vs other days" on RTH bars compares days whose bars never hold the release: NQ's
RTH range read 138.15 on CPI days against 138.34 ("no more volatile") while its ETH range
read 203.08 against 170.14 and the 08:30-09:30 window 124.65 against 40.65.

When most days' release is outside the session, the days it holds one are said with them:
"the drift before FOMC" as the window 10:00-14:00 held the 12:30 press-conference releases
of 2011-2012 (8 days) and 2020-03-03's 10:00 cut, the reaction itself, unsaid.

A where on the minutes after a release (``cpi_minutes < 30``) keeps no bar of a session that
does not hold it: "ES's range in the 30 minutes after CPI" on RTH 1m bars matched 0 of 227,940
bars with no reason given. The warning then says from which minute the session's bars start
and names the session that has the minutes asked for."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from barb.caveats.sessions import GAP_PATTERNS, previous_close_read, reads_previous_close
from barb.events.catalog import EventSpec
from barb.events.names import resolve_event
from barb.events.schedule import DAY_NS, MINUTE_NS, join_arrays
from barb.instruments import Instrument, SessionSpec, format_clock, parse_clock
from barb.lineage import nodes
from barb.period_rows import Scope
from barb.planning import Plan
from barb.script import ast
from barb.sessions import MINUTES_PER_DAY
from barb.summary_text import listed_text

# A release this close to the session's close leaves it only the first minutes of the
# reaction: FOMC at 14:00 on CL's RTH, which closes at 14:30.
NEAR_CLOSE_MINUTES = 30
# The window after a release that the warnings suggest: the hour a trader reads it in.
REACTION_MINUTES = 60
# Release days listed by date for a where to leave out, at most.
MAX_LISTED_DAYS = 10


def release_time_caveats(
    plan: Plan, scope: Scope, kept_dates: Callable[[], np.ndarray | None] | None = None
) -> list[str]:
    """One warning per event and cause; ``kept_dates`` reads the trading dates of the first
    stage's rows kept, so a where keeping 2024's releases counts only those."""
    if not plan.events or not scope.in_period.any():
        return []
    instrument = plan.dataset.instrument
    window = instrument.session(plan.session)
    if window.zone is not None:  # a window on another clock is other exchange hours on other dates
        return []
    warnings = []
    for join in plan.events:
        # "filter": "exclude" leaves the event's days out: their releases are not read.
        if join.source is None or join.source not in scope.frame.columns:
            continue
        if join.filter == "exclude":
            continue
        spec = resolve_event(join.source, instrument)
        days = event_days(plan, scope, spec, kept_dates)
        if not len(days):
            continue
        # A window from the usual release time ('14:00-14:30' for FOMC) is meant to read the
        # time after it: what to say is on which days the release came at another time.
        if not plan.timeframe.intraday and spec.time == window.start:
            warnings += _off_the_window(spec, instrument, window, days)
        else:
            warnings += _outside_the_session(plan, spec, window, days)
    return warnings


def event_days(
    plan: Plan,
    scope: Scope,
    spec: EventSpec,
    kept_dates: Callable[[], np.ndarray | None] | None,
) -> np.ndarray:
    """The event's trading dates (datetime64[D]) that have a bar of the session in the
    period (and, under a where, among its rows kept)."""
    # Only the marked rows' dates are made days: the period's thousands of bars are not.
    dates = scope.frame["trading_date"].to_numpy(dtype="datetime64[ns]")
    marked = _flagged(scope.frame[spec.name]) & scope.in_period
    if not marked.any():
        return marked[:0]
    if not plan.timeframe.calendar:
        days = np.unique(dates[marked].astype("datetime64[D]"))
        # A where on the minutes after the release keeps no bar of the days whose release
        # the session does not hold (CPI's 08:30 on RTH 1m bars: "cpi_minutes < 30" kept 0
        # of 227,940 bars): those days are what to speak of, not left out with the rows.
        narrows = plan.first.picks_rows and _minutes_read(plan, spec) is None
        kept = kept_dates() if kept_dates is not None and narrows else None
        if kept is not None:
            days = np.intersect1d(days, kept.astype("datetime64[D]"))
        return days
    # A weekly bar's trading date is its last day, its timestamp its first: the period's
    # days run from the first whole bar's first day to the last one's last.
    first = scope.frame["timestamp"].to_numpy()[int(np.argmax(scope.in_period))]
    last = dates[len(dates) - 1 - int(np.argmax(scope.in_period[::-1]))].astype("datetime64[D]")
    released = join_arrays(spec, plan.dataset.instrument).days.astype("datetime64[D]")
    session_days = plan.dataset.session_daily(plan.session).index.to_numpy("datetime64[D]")
    days = np.intersect1d(released, session_days)
    return days[(days >= first.astype("datetime64[D]")) & (days <= last)]


def _flagged(column: pd.Series) -> np.ndarray:
    """An event's yes/no column as booleans, an empty value as no (``fillna(False)``)."""
    if isinstance(column.dtype, pd.BooleanDtype):  # its values and its mask, no copy of both
        array = column.array
        return array._data & ~array._mask
    return column.fillna(False).to_numpy(dtype=bool)


def _minutes_read(plan: Plan, spec: EventSpec) -> str | None:
    """``<event>_minutes`` when the first stage's where reads it (through its map's names),
    else None."""
    where = plan.first.where
    column = f"{spec.name}_minutes"
    if where is None or not plan.timeframe.intraday:
        return None
    read = any(
        isinstance(node, ast.Column) and node.name == column
        for node in nodes(where, dict(plan.first.map_exprs))
    )
    return column if read else None


def _releases(spec: EventSpec, instrument: Instrument, days: np.ndarray) -> np.ndarray:
    """Each day's first release, as minutes after its trading day's open (negative: before
    the day opened, a release on a day without trading that counts for this one)."""
    arrays = join_arrays(spec, instrument)
    numbers = days.astype(np.int64)
    released = arrays.release_ns[np.searchsorted(arrays.days, numbers)]
    # A trading date that starts at 18:00 opens the evening before its calendar day.
    back = (MINUTES_PER_DAY - instrument.trading_day_start_minute) % MINUTES_PER_DAY
    opens = numbers * DAY_NS - back * MINUTE_NS
    return (released - opens) // MINUTE_NS


@dataclass(frozen=True)
class _Hours:
    """The query's session and the whole trading day, in minutes after the day's open."""

    opens: int
    closes: int
    day_length: int

    @classmethod
    def of(cls, instrument: Instrument, window: SessionSpec) -> _Hours:
        day_open, day_close = instrument.trading_hours
        opens = (window.start_minute - day_open) % MINUTES_PER_DAY
        day_length = (day_close - day_open) % MINUTES_PER_DAY or MINUTES_PER_DAY
        return cls(opens, opens + window.length_minutes, day_length)

    def clock(self, instrument: Instrument, offset: int) -> str:
        return format_clock((instrument.trading_day_start_minute + offset) % MINUTES_PER_DAY)


def _outside_the_session(
    plan: Plan, spec: EventSpec, window: SessionSpec, days: np.ndarray
) -> list[str]:
    """Releases the session's bars do not hold (before its open, after its close) or hold
    only the first minutes of (in its last half hour while most of it came before)."""
    instrument = plan.dataset.instrument
    hours = _Hours.of(instrument, window)
    offsets = _releases(spec, instrument, days)
    # Releases on a day without trading (offset < 0) are the moved-release warning's.
    before = offsets[(offsets >= 0) & (offsets < hours.opens)]
    after = offsets[offsets >= hours.closes]
    left = hours.closes - offsets
    close_to_end = (left > 0) & (left <= NEAR_CLOSE_MINUTES) & (offsets - hours.opens > left)
    near = offsets[close_to_end]
    where = _where(plan, window)
    whole = instrument.full_session
    # When most days' release is outside the session ("the drift before FOMC" as the window
    # 10:00-14:00), the few it holds (12:30 on 8 days, 10:00 on 1) are said with the side
    # that has the most: the window's bars hold the release and its first move there.
    inside = (offsets >= hours.opens) & (offsets < hours.closes) & ~close_to_end
    if inside.sum() >= len(before) + len(after):
        inside[:] = False
    largest = max(len(before), len(after))
    warnings = []
    # A gap or a close-to-close change runs from the close before a release that comes
    # before the open: it holds the release's move.
    sides = (
        (before, f"before {where} opens at {window.start}", "start after the release"),
        (after, f"after {where} closes at {window.end}", "end before the release"),
    )
    holding, alone = _measures(plan)
    if not alone and (holding or _from_previous_close(plan)):
        sides = sides[1:]
    column = _minutes_read(plan, spec)
    for missed, how, held in sides:
        if not len(missed):
            continue
        opened_after = missed is before
        # ETH holds a release inside the trading day; not one in the maintenance break.
        eth = plan.session != whole and bool((missed < hours.day_length).all())
        when = _when(spec, instrument, hours, missed, len(days), how)
        reaction = _reaction_window(instrument, hours, missed)
        if column is None and spec.category == "options":
            # An expiration is not news with a first move: its settlement print is at the
            # open, and the options themselves trade into the cash close, which a session at
            # the close holds (opex Fridays' last half hour was told to look elsewhere).
            warnings.append(
                f"{when}: {_bars(plan)} {held.replace('release', 'print')}, so they hold the "
                "expiring options' trading "
                f"but not the settlement print; for the print use a window such as "
                f"'{reaction}'."
            )
            continue
        if column is None:
            others = ""
            if inside.any() and len(missed) == largest:
                others = _held_on_other_days(spec, instrument, hours, where, offsets, days, inside)
                inside[:] = False  # said once
            move = "hold none of its first move"
            if opened_after and holding:
                # "down_days" from the previous close beside "red_bars" of the bar alone:
                # the first holds the release, the second had been let pass with it (p48h C2).
                move += (
                    f": {listed_text(alone)} read{'s' if len(alone) == 1 else ''} them alone "
                    f"({listed_text(holding)}, from the previous close, "
                    f"hold{'s' if len(holding) == 1 else ''} it)"
                )
            ways = [f"{whole}, which holds it"] if eth else []
            ways.append(f"a window such as '{reaction}'")
            if opened_after and plan.timeframe.name == "daily":
                # A day's change from the close before the release holds it: "NQ closed
                # below its open on 9 of 12 CPI days" read as the CPI reaction, 7 of 12
                # against the previous close.
                ways.append("the change from the previous close: close - prev(close)")
            use = ", ".join(ways[:-1]) + (", or " if len(ways) > 1 else "") + ways[-1]
            warnings.append(
                f"{when}: {_bars(plan)} {held} and {move}. For the reaction use {use}.{others}"
            )
            continue
        # A where on the minutes after the release finds none of them: say which minutes
        # the session's bars do have, and the session that has the ones asked for.
        also = f'"session": "{whole}", which holds it, or ' if eth else ""
        warnings.append(
            f"{when}: {_minutes_held(plan, window, hours, missed, column)}. For the minutes "
            f"after the release keep the where and use {also}a window session such as "
            f"'{reaction}'."
        )
    if len(near):
        minutes = sorted({int(m) for m in hours.closes - near})
        held = f"{minutes[0]}" + (f"-{minutes[-1]}" if len(minutes) > 1 else "")
        whole_day = f"{whole}, or " if plan.session != whole else ""
        how = f"{NEAR_CLOSE_MINUTES} minutes or less before {where} closes at {window.end}"
        warnings.append(
            f"{_when(spec, instrument, hours, near, len(days), how)}: {_bars(plan)} hold only "
            f"the first {held} minutes after it, none of the rest of the day's reaction. For "
            f"more of it use {whole_day}a window such as "
            f"'{_reaction_window(instrument, hours, near)}'."
        )
    return warnings


def _held_on_other_days(
    spec: EventSpec,
    instrument: Instrument,
    hours: _Hours,
    where: str,
    offsets: np.ndarray,
    days: np.ndarray,
    inside: np.ndarray,
) -> str:
    """' It came out inside the window '10:00-14:00' on 9 fomc days (12:30 on 8, 10:00 on 1):
    their bars hold the release and its first move; date() not in (…) in the where leaves
    them out.' The dates are listed when few."""
    times = Counter(hours.clock(instrument, int(o)) for o in offsets[inside])
    count = int(inside.sum())
    if count == 1:
        at, whose, them = f"at {next(iter(times))} on one", "its", "it"
    else:
        listed = ", ".join(f"{time} on {n}" for time, n in times.most_common())
        at, whose, them = f"on {count}", "their", "them"
    text = (
        f" It came out inside {where} {at} {spec.name} day"
        f"{'s' if count > 1 else ''}{'' if count == 1 else f' ({listed})'}: {whose} bars "
        "hold the release and its first move"
    )
    if count <= MAX_LISTED_DAYS:
        dates = ", ".join(f"'{day}'" for day in days[inside].astype("datetime64[D]"))
        text += f"; date() not in ({dates}) in the where leaves {them} out"
    return text + "."


def _minutes_held(
    plan: Plan, window: SessionSpec, hours: _Hours, missed: np.ndarray, column: str
) -> str:
    """'RTH bars (09:30-17:00) start 60 minutes after the release (cpi_minutes >= 60 on those
    days), so a where on cpi_minutes below 60 keeps none of them'; from the nearest release
    when the times differ."""
    bars = _bars(plan)
    if plan.session in plan.dataset.instrument.sessions:
        bars += f" ({window.hours})"
    if int(missed.min()) >= hours.closes:  # the session closes before the release
        gap = int((missed - hours.closes).min())
        more = " or more" if int(missed.max()) - hours.closes > gap else ""
        # MORNING closes at 12:30, the 2011-2012 press-conference FOMC time: no gap to say.
        end = f"{gap} minutes{more} before the release" if gap else "by the release"
        return (
            f"{bars} end {end} ({column} < {-gap} on those days), so a where on {column} "
            f"from {-gap} on keeps none of them"
        )
    gap = int((hours.opens - missed).min())
    more = " or more" if hours.opens - int(missed.min()) > gap else ""
    return (
        f"{bars} start {gap} minutes{more} after the release ({column} >= {gap} on those "
        f"days), so a where on {column} below {gap} keeps none of them"
    )


def _measures(plan: Plan) -> tuple[list[str], list[str]]:
    """The first stage's answers (its select, else its map's columns) that read the close
    before each bar's session (prev(close), a gap), and those that read the bar's own
    prices alone (close < open, range): ``count(down)`` with down = close < prev(close)
    holds a release before the open, ``count(close < open) as red_bars`` does not."""
    stage = plan.first
    mapped = dict(stage.map_exprs)
    named = [(item.name, item.expr) for item in stage.select] or list(stage.map_exprs)
    holding, alone = [], []
    for name, expr in named:
        read = list(nodes(expr, mapped))
        if previous_close_read(read) or any(
            isinstance(n, ast.Call) and n.name.lower() in GAP_PATTERNS for n in read
        ):
            holding.append(name)
        elif any(isinstance(n, ast.Column) and n.name in _PRICES for n in read):
            alone.append(name)
    return holding, alone


# The bar's own prices and volume: what a session's bars hold of the day and nothing before.
_PRICES = frozenset({"open", "high", "low", "close", "range", "volume"})


def _from_previous_close(plan: Plan) -> bool:
    """Whether the query reads the close before each bar's session: prev(close), a gap."""
    return bool(plan.first.calls & GAP_PATTERNS) or reads_previous_close(plan.first)


def _when(
    spec: EventSpec,
    instrument: Instrument,
    hours: _Hours,
    offsets: np.ndarray,
    days: int,
    how: str,
) -> str:
    """'CPI came out at 08:30, before CL's RTH opens at 09:00, on 213 of the 215 cpi days in
    the period', the times listed when they differ."""
    times = Counter(hours.clock(instrument, int(o)) for o in offsets)
    at = f" at {next(iter(times))}," if len(times) == 1 else ""
    listed = (
        ""
        if len(times) == 1
        else " (" + ", ".join(f"{time} on {count}" for time, count in sorted(times.items())) + ")"
    )
    if days == 1:
        share = f"the one {spec.name} day"
    else:
        share = f"all {days}" if len(offsets) == days else f"{len(offsets)} of the {days}"
        share += f" {spec.name} days"
    came = "settled" if spec.category == "options" else "came out"
    return f"{spec.name.upper()} {came}{at} {how}, on {share} in the period{listed}"


def _where(plan: Plan, window: SessionSpec) -> str:
    instrument = plan.dataset.instrument
    if plan.session in instrument.sessions:
        return f"{instrument.symbol}'s {plan.session}"
    return f"the window '{window.hours}'"


def _bars(plan: Plan) -> str:
    named = plan.session in plan.dataset.instrument.sessions
    return f"{plan.session} bars" if named else "the window's bars"


def _reaction_window(instrument: Instrument, hours: _Hours, offsets: np.ndarray) -> str:
    """The hour from the most common release time, cut at the trading day's end."""
    offset = int(Counter(offsets.tolist()).most_common(1)[0][0])
    end = min(offset + REACTION_MINUTES, hours.day_length)
    return f"{hours.clock(instrument, offset)}-{hours.clock(instrument, end)}"


def _off_the_window(
    spec: EventSpec, instrument: Instrument, window: SessionSpec, days: np.ndarray
) -> list[str]:
    """A window session that starts at an event's usual time ("14:00-14:30" for FOMC) reads
    "the half hour after the release" only on the days the release came at that time: FOMC
    came at 14:15 in 2008-2012 and at 12:30 on press-conference days."""
    arrays = join_arrays(spec, instrument)
    day_numbers = days.astype(np.int64)
    releases = arrays.release_ns[np.searchsorted(arrays.days, day_numbers)]
    times = pd.Series(pd.to_datetime(releases).strftime("%H:%M"))
    other = times[times != window.start].value_counts()
    if other.empty:
        return []
    at = ", ".join(f"{time} on {count}" for time, count in other.items())
    name, length = spec.name, (window.end_minute - window.start_minute) % MINUTES_PER_DAY
    # A 14:15 release is inside 14:00-14:30 (the window starts before it), a 12:30 one
    # outside it (the window misses it): "misses" said of both was wrong for the first.
    offsets = [(parse_clock(t) - window.start_minute) % MINUTES_PER_DAY for t in other.index]
    inside = sorted(t for t, o in zip(other.index, offsets, strict=True) if o < length)
    outside = sorted(t for t, o in zip(other.index, offsets, strict=True) if o >= length)
    how = []
    if inside:
        how.append(f"starts before the {', '.join(inside)} releases")
    if outside:
        how.append(f"misses the {', '.join(outside)} ones" if inside else "misses them")
    return [
        f"{name.upper()} came out at another time than the window's {window.start} on "
        f"{int(other.sum())} of the {len(days)} {name} days in the period ({at}): there the "
        f"window {' and '.join(how)}. For the time after each release use 1m bars: "
        f'"where": "{name} and {name}_minutes >= 0 and {name}_minutes < {length}".'
    ]
