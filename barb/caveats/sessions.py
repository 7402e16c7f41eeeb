"""Warnings about a session that is part of the day (the first hour, a window, the overnight
session): what reads other bars there reads the session's bars chained day to day, and true
range on its daily bars reaches back to a close a day earlier."""

from __future__ import annotations

from functools import cache

import numpy as np

from barb.instruments import SessionSpec
from barb.lineage import nodes
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.script.context import PartOfDay
from barb.script.indicator_functions import READ_PREVIOUS_CLOSE
from barb.sessions import MINUTES_PER_DAY
from barb.time_zones import short_name

# Named patterns that compare a bar's open with the bar before (patterns.yaml): with its close,
# or with its high or low (a full gap opens outside its range).
CLOSE_GAP_PATTERNS = frozenset({"gap_up", "gap_down", "gap_filled"})
FULL_GAP_PATTERNS = {"full_gap_up": "high", "full_gap_down": "low"}
GAP_PATTERNS = CLOSE_GAP_PATTERNS | FULL_GAP_PATTERNS.keys()
# A session that leaves out at most this much of the main one (CASH: RTH but for the post-cash
# hour) is a whole day's session: its true range's reach back is the usual overnight gap.
MAIN_SESSION_SLACK = 60


def session_gap_caveat(plan: Plan) -> list[str]:
    """What reads other bars on a part of the day (the first hour, a window, the overnight
    session), where the bar before a day's first is the session's last a day earlier.

    Intraday bars: every indicator, rolling window or lag runs on the session's bars chained
    day to day, so the 09:30 bar of a '09:30-10:30' session follows yesterday's 10:25 one: not
    the values a chart of the whole session shows. Daily bars: only true range (atr, adx,
    keltner) reaches back, to a close a day earlier, so the hours between, most of the main
    session among them, count as the bar's true range: "first-hour ATR" comes out about twice
    the first hour's range (an RSI of first-hour closes is that, and means it)."""
    window = part_of_the_day(plan)
    if window is None:
        return []
    named = plan.session if plan.session == window.label else f"{plan.session} ({window.hours})"
    if plan.timeframe.intraday:
        return _chained_days(plan, window, named)
    gap = _gap_from_window(plan, window, named) if plan.timeframe.name == "daily" else []
    calls = sorted(plan.first.calls & READ_PREVIOUS_CLOSE)
    if not calls:
        return gap
    hours = (window.start_minute - window.end_minute) % MINUTES_PER_DAY / 60
    between = f"{hours:g} hour" + ("" if hours == 1 else "s")
    names = ", ".join(f"{name}()" for name in calls)
    true_range = (
        f"{names} on {named}: true range reaches back to the previous bar's close, the "
        f"{window.end} close of the date before, {between} earlier, so it takes in the moves "
        "between the sessions, not only this one's. For the session's own size use range, or "
        "rolling_mean(range, 14) for its average."
    )
    return [true_range, *gap]


def _gap_from_window(plan: Plan, window: SessionSpec, named: str) -> list[str]:
    """A gap on daily bars of a part of the day: prev(close) is the window's own close a day
    earlier, so "gaps above 0.5% on 09:30-10:00 bars" measured 09:30 against yesterday's
    10:00 (3,023 NQ days, 3.9% filled) where the gap from the RTH close gives 2,295 days,
    8.7% filled. A window ending at the main session's close has that close for prev(close),
    but never the main session's high and low for prev(high), prev(low) (a full gap)."""
    return _close_gap(plan, window, named) + _full_gap(plan, window, named)


def _close_gap(plan: Plan, window: SessionSpec, named: str) -> list[str]:
    main = plan.dataset.instrument.default_session
    if window.end == plan.dataset.instrument.session(main).end:
        return []
    names = sorted(plan.first.calls & CLOSE_GAP_PATTERNS)
    if open_against_previous(plan.first, "close"):
        names.append("prev")
    if not names:
        return []
    hours = (window.start_minute - window.end_minute) % MINUTES_PER_DAY / 60
    between = f"{hours:g} hour" + ("" if hours == 1 else "s")
    close = f"session_close('{main}', 1)"
    said = ", ".join("prev(close)" if name == "prev" else f"{name}()" for name in names)
    return [
        f"{said} on daily bars of {named}: the previous close is this session's own, the "
        f"{window.end} close of the date before, {between} before its open, not the previous "
        f"{main} close, so a gap from it is not the gap at the open. The gap from the previous "
        f"{main} close: open - {close}, in percent (open / {close} - 1) * 100, filled within "
        f"the session: if(open > pc, low <= pc, high >= pc) with pc = {close} in map."
    ]


def _full_gap(plan: Plan, window: SessionSpec, named: str) -> list[str]:
    """full_gap_up() on 09:30-10:00 bars opened above yesterday's 09:30-10:00 high, not above
    yesterday's RTH high: the full gap a trader means is outside the previous day's range."""
    names = sorted(plan.first.calls & FULL_GAP_PATTERNS.keys())
    sides = {FULL_GAP_PATTERNS[name] for name in names}
    for side in ("high", "low"):
        if open_against_previous(plan.first, side):
            names.append(f"prev({side})")
            sides.add(side)
    if not names:
        return []
    main = plan.dataset.instrument.default_session
    said = ", ".join(name if name.startswith("prev") else f"{name}()" for name in names)
    previous = " and ".join(side for side in ("high", "low") if side in sides)
    forms = {
        "high": f"above the previous {main} high: open > session_high('{main}', 1)",
        "low": f"below the previous {main} low: open < session_low('{main}', 1)",
    }
    both = len(sides) > 1
    return [
        f"{said} on daily bars of {named}: the previous {previous} {'are' if both else 'is'} "
        f"this session's own on the date before, not the previous {main} day's, so a full gap "
        f"from {'them' if both else 'it'} is not a gap outside the previous {main} range. A "
        "full gap " + "; ".join(forms[side] for side in ("high", "low") if side in sides) + "."
    ]


def reads_previous_close(stage: StagePlan) -> bool:
    """Whether the stage reads prev(close), through its map's names."""
    if "prev" not in stage.calls:  # no walk of the query for the many that read none
        return False
    return any(_previous(read) for read in _reads(stage))


def open_against_previous(stage: StagePlan, column: str) -> bool:
    """Whether an expression of the stage reads the open and prev(column) together: a gap.
    close - prev(close) on a window is its own day-to-day change, which is what it says."""
    if "prev" not in stage.calls:
        return False
    return any(
        _previous(read, column)
        and any(isinstance(node, ast.Column) and node.name == "open" for node in read)
        for read in _reads(stage)
    )


def previous_close_read(read: list[ast.Node]) -> bool:
    """Whether the nodes an expression reads (``lineage.nodes``) hold prev(close)."""
    return _previous(read)


def _reads(stage: StagePlan) -> list[list[ast.Node]]:
    """Each expression of the stage as the nodes it reads, through its map's names."""
    mapped = dict(stage.map_exprs)
    return [list(nodes(expr, mapped)) for expr in stage.expressions]


def _previous(read: list[ast.Node], column: str = "close") -> bool:
    """Whether the nodes read prev(column)."""
    return any(
        isinstance(node, ast.Call)
        and node.name.lower() == "prev"
        and bool(node.args)
        and isinstance(node.args[0], ast.Column)
        and node.args[0].name == column
        for node in read
    )


def part_of_the_day(plan: Plan) -> SessionSpec | None:
    """The query's session when it leaves out more of the main one than CASH does."""
    instrument = plan.dataset.instrument
    if plan.session in ("ETH", instrument.default_session):
        return None
    window = instrument.session(plan.session)
    main = instrument.session(instrument.default_session)
    if np.count_nonzero(_minutes(main) & ~_minutes(window)) <= MAIN_SESSION_SLACK:
        return None
    return window


def part_of_day(plan: Plan) -> PartOfDay | None:
    """The query's session on intraday bars when it is a part of the day, with the whole
    session it lies in: daily() there reads the part's own daily bars, said beside the whole
    session's."""
    window = part_of_the_day(plan)
    if window is None or not plan.timeframe.intraday:
        return None
    named = plan.session if plan.session == window.label else f"{plan.session} ({window.hours})"
    return PartOfDay(named, _whole_session(plan, window)[0])


def _chained_days(plan: Plan, window: SessionSpec, named: str) -> list[str]:
    """Functions reading other bars on intraday bars of a part of the day, and how to read
    them as a chart does: on the whole session, with a where keeping the window's bars (the
    columns are computed on every bar before where keeps rows)."""
    calls = sorted(plan.first.reading_other_bars)
    if not calls:
        return []
    whole, keep = _whole_session(plan, window)
    names = ", ".join(f"{name}()" for name in calls)
    return [
        f"{names} on {plan.timeframe.name} bars of {named}: the session's bars are chained day "
        f"to day, so each day's first bars continue from the previous day's last bars before "
        f"{window.end}, not from the bars before {window.start} as on an {whole} chart. For a "
        f'chart\'s values use "session": "{whole}" and keep the window\'s bars with "where": '
        f'"{keep}" (the columns are computed on every {whole} bar first).'
    ]


def window_vwap_caveat(plan: Plan) -> list[str]:
    """vwap() on intraday bars of a window that opens inside the day (CASH_CLOSE, 15:30-16:00):
    it restarts at the window's open each day, so its first bar's VWAP is that bar's typical
    price, where a trader's VWAP runs from the RTH or ETH open. The share of NQ's 2024 5m
    closes above VWAP in the last cash half hour came out 0.4886 on CASH_CLOSE, 0.4585 against
    the day's VWAP (RTH bars kept to 15:30-16:00), with nothing said (p35a B). A window
    opening with RTH or ETH (CASH, the first hour, OVERNIGHT) has their VWAP and says
    nothing."""
    if not plan.timeframe.intraday or "vwap" not in plan.first.calls:
        return []
    instrument = plan.dataset.instrument
    window = instrument.session(plan.session)
    opens = {instrument.session(name).start_minute for name in ("ETH", instrument.default_session)}
    if window.zone is None and window.start_minute in opens:
        return []
    whole, keep = _whole_session(plan, window)
    named = plan.session if plan.session == window.label else f"{plan.session} ({window.hours})"
    anchor = instrument.session(whole).start
    start = f"{window.start} {window.zone}" if window.zone else window.start
    return [
        f"vwap() on {named} restarts each day at {start}, the window's open (its first "
        f"bar's VWAP is that bar's typical price), not at the {anchor} {whole} open a chart's "
        f'VWAP runs from. For the day\'s VWAP use "session": "{whole}" and keep the window\'s '
        f'bars with "where": "{keep}" (vwap() is computed on every {whole} bar first).'
    ]


def _whole_session(plan: Plan, window: SessionSpec) -> tuple[str, str]:
    """The whole session a window lies in (the main one, else ETH), and the where that keeps
    the window's bars of it: ("RTH", "time() >= '15:30' and time() < '16:00'")."""
    instrument = plan.dataset.instrument
    main = instrument.default_session
    inside = not np.any(_minutes(window) & ~_minutes(instrument.session(main)))
    clock = f"'{window.zone}'" if window.zone else ""
    since, until = f"time({clock}) >= '{window.start}'", f"time({clock}) < '{window.end}'"
    keep = f"{since} or {until}" if window.crosses_midnight else f"{since} and {until}"
    return (main if inside else "ETH"), keep


def _minutes(session: SessionSpec) -> np.ndarray:
    """The minutes of the day the session holds."""
    return _minutes_from(session.start_minute, session.length_minutes)


@cache  # a few sessions, asked on every query: 0.2 ms each to build
def _minutes_from(start: int, length: int) -> np.ndarray:
    offset = (np.arange(MINUTES_PER_DAY) - start) % MINUTES_PER_DAY
    held = offset < length
    held.flags.writeable = False  # shared by every caller
    return held


def session_hours(plan: Plan) -> str | None:
    """A named session's hours on the query's instrument ("09:00-14:30" for CL's RTH)."""
    spec = plan.dataset.instrument.sessions.get(plan.session)
    return None if spec is None else spec.hours


def bar_window(plan: Plan) -> SessionSpec:
    """The hours the query's bars are laid on, a named session's or a window's
    ('09:45-12:00', '08:00-16:30' on London's clock): where its short last bar is."""
    return plan.dataset.instrument.session(plan.session)


def session_clock(plan: Plan) -> str | None:
    """The exchange's clock ("ET") the session's hours are on; None for a window that names
    its own zone."""
    instrument = plan.dataset.instrument
    if instrument.session(plan.session).zone is not None:
        return None
    return short_name(instrument.timezone)


def session_note(plan: Plan) -> str | None:
    """For a window from the trading day's start on, the evening it lies in: '18:00-21:00'
    of 2026-01-06 is the evening of the 5th, which a label '2026-01-06' does not say."""
    instrument = plan.dataset.instrument
    if plan.session in instrument.sessions:
        return None
    window = instrument.session(plan.session)
    if window.start_minute < instrument.trading_day_start_minute or window.zone is not None:
        return None
    if window.crosses_midnight:
        return "from the evening before each date"
    return "the evening before each date"
