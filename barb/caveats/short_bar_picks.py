"""first() and last() that pick a bar shorter than the others.

Hourly bars start at the session's open, so NQ's RTH day (09:30-17:00) ends in a half-hour
bar, 16:30-17:00, and on an early close in a 12:30 bar the close cuts short. "Is the first
hour or the last hour of RTH more volatile", asked as ``first(range)`` and ``last(range)``
per ``date()``, compared the 09:30 hour with that half hour: 154.55 against 30.82, the first
bigger on 99.6% of days, where the last cash hour, 15:00-16:00, averages 146.45 and is beaten
on 56% of them. Nothing said so.

Said when a first stage's first() or last() of something a bar's length changes (its range,
volume, high, low or open: not its close, which is the day's close either way) reads such a
bar in some of its groups, with the window that holds the session's last full bar. Groups by
a time of day are ``barb.short_bars``'s; a query that kept only short bars chose them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from barb.caveats.early_close_bars import by_time_of_day, cut_bars
from barb.caveats.sessions import bar_window
from barb.frames import MINUTE_OF_DAY
from barb.instruments import MINUTES_PER_DAY, format_clock
from barb.lineage import inputs
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.short_bars import ShortBar, length_text, session_short_bar

# A bar's values that hold less over a shorter bar.
SPAN_COLUMNS = frozenset({"open", "high", "low", "range", "volume"})
EDGES = ("first", "last")
# How a picked bar an early close cut is named: its days are said then (``short_day_groups``).
CUT_PICK = "a bar an early close or holiday cut short"


@dataclass(frozen=True)
class Picks:
    """The rows first() or last() reads, one per group, and which of them are short."""

    edge: str  # "first" or "last"
    calls: tuple[str, ...]  # "last(range)"
    dates: np.ndarray  # each picked row's trading date
    # The session's short bar (16:30), and the bars an early close or holiday cut.
    short: np.ndarray
    cut: np.ndarray
    cut_minutes: np.ndarray  # their minute of the day


def short_pick_caveat(plan: Plan, kept: pd.DataFrame | None) -> list[str]:
    """The first stage's first()/last() of a bar's span over intraday bars ``kept``: a
    warning per edge whose picked bars include a short one, e.g. "last(range) reads each
    day's last bar: the 16:30 bar, half an hour (16:30-17:00) where the others are an hour,
    on 248 of 258 days, …" with the session's last full hour as a window."""
    step = plan.timeframe.minutes
    stage = plan.first
    if step is None or stage.shape == "table" or not stage.calls & set(EDGES):
        return []
    if kept is None or not len(kept) or MINUTE_OF_DAY not in kept.columns:
        return []
    window = bar_window(plan)  # its bars' minutes are the exchange's: not another clock's
    short = None if window.zone else session_short_bar(plan.timeframe.name, window.hours)
    calls = _span_calls(stage)
    if short is None or not (calls["first"] or calls["last"]):
        return []
    keys = [name for name, _ in stage.group_keys]
    minutes = kept[MINUTE_OF_DAY].to_numpy()
    # The rows each edge picks, and which of them are short, looked at before any pass over
    # every row: the 1,000 days' last hourly bars, not their 7,000 bars.
    picked = {}
    for edge in EDGES:
        if calls[edge]:
            at = _picked(kept, keys, last=edge == "last")
            # Bars an early close or a holiday cut, other than the short bar (said already).
            is_short = minutes[at] == short.start
            picked[edge] = at, is_short, cut_bars(plan, kept.iloc[at], step) & ~is_short
    if not any(s.any() or c.any() for _, s, c in picked.values()):
        return []
    if keys and by_time_of_day(kept, keys, plan.query.to_json()):
        return []
    every_short = minutes == short.start
    if (every_short | cut_bars(plan, kept, step)).all():  # only short bars kept: chosen
        return []
    days = _one_day_each(kept, keys)
    texts = []
    for edge, (at, is_short, cut) in picked.items():
        picks = Picks(
            edge,
            tuple(calls[edge]),
            kept["trading_date"].to_numpy()[at],
            is_short,
            cut,
            minutes[at].astype(np.int64),
        )
        if picks.short.any() or picks.cut.any():
            texts.append(_text(plan, short, picks, grouped=bool(keys), days=days))
    return texts


def _span_calls(stage: StagePlan) -> dict[str, list[str]]:
    """The stage's select calls of first() and last() whose argument reads a bar's span,
    through its map and hoisted columns, by edge."""
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    found: dict[str, list[str]] = {edge: [] for edge in EDGES}
    for item in stage.select:
        for node in ast.walk(item.expr):
            if not (isinstance(node, ast.Call) and node.name.lower() in EDGES and node.args):
                continue
            if inputs(node.args[0], mapped) & SPAN_COLUMNS:
                text = node.to_text()
                if text not in found[node.name.lower()]:
                    found[node.name.lower()].append(text)
    return found


def _picked(kept: pd.DataFrame, keys: list[str], *, last: bool) -> np.ndarray:
    """Positions of each group's first or last row (rows are in time order); of all the rows
    together without keys. Rows without a key are in no group."""
    if not keys:
        return np.array([len(kept) - 1 if last else 0])
    groups = kept[keys].reset_index(drop=True).groupby(keys, sort=False, observed=True, dropna=True)
    rows = groups.tail(1) if last else groups.head(1)
    return rows.index.to_numpy()


def _one_day_each(kept: pd.DataFrame, keys: list[str]) -> bool:
    """Whether each group holds one trading date's bars (group_by date(), or a key that
    never spans two): its rows are then called days."""
    if not keys:
        return False
    dates = kept.groupby(keys, sort=False, observed=True, dropna=True)["trading_date"]
    return bool((dates.nunique() <= 1).all())


def _text(plan: Plan, short: ShortBar, picks: Picks, *, grouped: bool, days: bool) -> str:
    calls = " and ".join(picks.calls)
    verb = "read" if len(picks.calls) > 1 else "reads"
    unit = "day" if days else "group"
    whose = f"each {unit}'s" if grouped else "the"
    bar = f"the {short.label} bar, {length_text(short.minutes)} ({short.span})"
    sizes = f"where the others are {length_text(short.step)}"
    total = len(picks.short)
    parts = []
    if picks.short.any():
        on = f", on {int(picks.short.sum()):,} of {total:,} {unit}s" if grouped else ""
        parts.append(f"{bar} {sizes}{on}")
    if picks.cut.any():
        first = int(np.flatnonzero(picks.cut)[0])
        day = str(np.datetime64(picks.dates[first], "D"))
        example = f"e.g. {day}'s {format_clock(int(picks.cut_minutes[first]))}"
        count = f" on {int(picks.cut.sum()):,}" if grouped else ""
        parts.append(f"{CUT_PICK}{count} ({example})")
    said = f"{calls} {verb} {whose} {picks.edge} bar: " + ", and ".join(parts) + "."
    if picks.edge == "last" and picks.short.any():
        return f"{said} {_full_windows(plan, short)}"
    return f'{said} "where": "not holiday() and not early_close()" leaves out the days cut.'


def _full_windows(plan: Plan, short: ShortBar) -> str:
    """The window that holds the session's last full bar, and the cash session's (NQ's
    15:00-16:00, the power hour) when the session trades past its close: 'The session's
    last full hour is the window "16:00-17:00" (RTH_CLOSE, post-cash hour) on "from":
    "daily"; the last hour before the 16:00 cash close is "15:00-16:00".'"""
    instrument = plan.dataset.instrument
    end = (short.start + short.minutes) % MINUTES_PER_DAY
    window = f"{format_clock((end - short.step) % MINUTES_PER_DAY)}-{short.end}"
    named = [
        name + (f", {spec.description}" if spec.description else "")
        for name, spec in instrument.sessions.items()
        if spec.hours == window
    ]
    full = length_text(short.step).removeprefix("an ")
    verb = "is" if short.step <= 60 else "are"
    text = f'The session\'s last full {full} {verb} the window "{window}"'
    text += f' ({named[0]}) on "from": "daily"' if named else ' on "from": "daily"'
    cash = instrument.sessions.get("CASH")
    opened = instrument.session(plan.session).start_minute
    if cash is not None and _closes_inside(cash.end_minute, opened, end):
        before = f"{format_clock((cash.end_minute - short.step) % MINUTES_PER_DAY)}-{cash.end}"
        text += f'; the last {full} before the {cash.end} cash close {verb} "{before}"'
    return text + "."


def _closes_inside(close: int, open_: int, end: int) -> bool:
    """Whether a close at minute ``close`` falls inside a session from ``open_`` to ``end``,
    before its end."""
    return 0 < (close - open_) % MINUTES_PER_DAY < (end - open_) % MINUTES_PER_DAY
