"""The times a session's intraday bars open at, and a where that names a time they do not.

Bars start at the session's open, so NQ's hourly RTH bars open at 09:30, 10:30 … 16:30. A
trader's "15:00 hourly bar" is 15:00-16:00, the bar ETH's hourly grid has (on the hour from
its 18:00 open). Written for RTH 1h bars:

- ``hour() == 15`` kept the 15:30-16:30 bar: ES's 2025 up share 0.498 where the 15:00-16:00
  bar's is 0.5344, with nothing said (p47e M3); group_by hour() was warned, where was not.
- ``time() == '15:00'`` matched no bar, and the answer read "No bars matched: the result is
  empty", so too ``time() == '17:00'`` on ETH, the maintenance break (p47e C1): "count = 0"
  read literally is "the 15:00 bar never …".

Both are said from the query alone, the first always, the second when nothing matched. A
window on another zone's clock opens at other exchange times from week to week: not here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from barb.instruments import MINUTES_PER_DAY, Instrument, SessionSpec, format_clock, parse_clock
from barb.lineage import through_map
from barb.script import ast
from barb.time_zones import short_name
from barb.timeframes import Timeframe

# Bar starts listed before "…" and the last one.
_LISTED = 2


def bar_starts(session: SessionSpec, step: int) -> list[int]:
    """The minutes of the day a session's bars of ``step`` minutes open at, in the
    session's order: RTH (09:30-17:00) by 60 → 570, 630, …, 990."""
    count = -(-session.length_minutes // step)  # the last one may be short
    return [(session.start_minute + k * step) % MINUTES_PER_DAY for k in range(count)]


def hour_where_caveat(
    where: ast.Expr | None,
    mapped: Mapping[str, ast.Expr],
    tf: Timeframe,
    session: SessionSpec,
    instrument: Instrument,
) -> list[str]:
    """For ``hour() == N`` (or ``in``) in a where over bars of an hour or more that open off
    the hour: the bar it keeps, and the form for the hour N:00 itself. "hour() == 15 keeps
    the 15:30-16:30 bar: …, and these 1h bars open at :30 (09:30, 10:30, …, 16:30). For the
    15:00-16:00 bar: "session": "ETH", "where": "time() == '15:00'" (ETH's 1h bars open at
    15:00)."""
    step = tf.minutes
    if where is None or step is None or step % 60 or not session.start_minute % 60:
        return []
    if session.zone is not None:
        return []
    hours = [int(v) for v in _compared(where, mapped, "hour") if isinstance(v, int | float)]
    # hour() == 15 and minute() == 30 names the 15:30 bar itself.
    if not hours or any(True for _ in _compared(where, mapped, "minute")):
        return []
    starts = bar_starts(session, step)
    hour = hours[0]
    kept = [s for s in starts if s // 60 == hour]
    told = " or ".join(_span(s, step, session) for s in kept) if kept else "no bar"
    said = (
        f"hour() == {hour} keeps {'the ' if kept else ''}{told}{' bar' if kept else ''}: "
        f"hour() is the clock hour a bar opens in, and these {tf.name} bars open at "
        f":{session.start_minute % 60:02d} ({_listed(starts)})."
    )
    return [said + _on_the_hour(hour * 60, tf, instrument)]


def absent_time_caveat(
    where: ast.Expr | None,
    mapped: Mapping[str, ast.Expr],
    tf: Timeframe,
    session_name: str,
    session: SessionSpec,
    instrument: Instrument,
) -> list[str]:
    """Why a where that kept no bar kept none, when a ``time() == 'HH:MM'`` it requires
    names a time no bar of the session opens at: "RTH's 1h bars open at 09:30, 10:30, …,
    16:30: none at 15:00. …"; "17:00-18:00 ET is the daily maintenance break: no bar opens
    at 17:00."."""
    step = tf.minutes
    if where is None or step is None or session.zone is not None:
        return []
    starts = bar_starts(session, step)
    for value in _required_times(where, mapped):
        minute = parse_clock(value) % MINUTES_PER_DAY if _is_clock(value) else None
        if minute is None or minute in starts:
            continue
        zone = short_name(instrument.timezone)
        brk = instrument.maintenance_break
        since = (minute - session.start_minute) % MINUTES_PER_DAY
        if brk is not None and _inside(minute, parse_clock(brk.start), parse_clock(brk.end)):
            return [
                f"{brk.start}-{brk.end} {zone} is the daily maintenance break: no bar opens "
                f"at {value}."
            ]
        if since >= session.length_minutes:
            return [f"{session_name} ({session.hours} {zone}) has no bars at {value}."]
        return [
            f"{session_name}'s {tf.name} bars open at {_listed(starts)}: none at {value}."
            + _on_the_hour(minute, tf, instrument)
        ]
    return []


def _on_the_hour(minute: int, tf: Timeframe, instrument: Instrument) -> str:
    """' For the 15:00-16:00 bar: "session": "ETH", "where": "time() == '15:00'" (ETH's 1h
    bars open at 15:00).' when the whole-day session has a bar of ``tf`` opening at
    ``minute``; else ''."""
    step = tf.minutes or 0
    name = instrument.full_session
    whole = instrument.sessions.get(name)
    if whole is None or minute not in bar_starts(whole, step):
        return ""
    at = format_clock(minute)
    return (
        f' For the {at}-{format_clock(minute + step)} bar: "session": "{name}", '
        f'"where": "time() == \'{at}\'" ({name}\'s {tf.name} bars open at {at}).'
    )


def _compared(where: ast.Expr, mapped: Mapping[str, ast.Expr], call: str) -> Iterator[object]:
    """The literal values ``call()`` (no arguments, through the map) is compared with by ==
    or ``in`` anywhere in ``where``: [15] for ``hour() == 15``."""
    for node in ast.walk(where):
        if isinstance(node, ast.Compare) and node.op == "==":
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if _is_call(side, mapped, call):
                    yield ast.literal_value(other)
        elif (
            isinstance(node, ast.InList)
            and not node.negated
            and _is_call(node.operand, mapped, call)
        ):
            yield from (ast.literal_value(v) for v in node.values)


def _required_times(where: ast.Expr, mapped: Mapping[str, ast.Expr]) -> list[str]:
    """The times ``time() == 'HH:MM'`` requires in a conjunct of ``where`` (each of them
    must hold for a bar to be kept); a time among others in an ``in`` or an ``or`` is no
    cause of an empty result alone."""
    if isinstance(where, ast.Logical) and where.op == "and":
        return _required_times(where.left, mapped) + _required_times(where.right, mapped)
    if isinstance(where, ast.Compare) and where.op == "==":
        return [str(v) for v in _compared(where, mapped, "time") if isinstance(v, str)]
    return []


def _is_call(expr: ast.Expr, mapped: Mapping[str, ast.Expr], call: str) -> bool:
    found = through_map(expr, mapped)
    return isinstance(found, ast.Call) and found.name.lower() == call and not found.args


def _is_clock(text: str) -> bool:
    try:
        parse_clock(text)
    except ValueError:
        return False
    return True


def _inside(minute: int, start: int, end: int) -> bool:
    """Whether ``minute`` lies in [start, end) of a day, across midnight too."""
    return (minute - start) % MINUTES_PER_DAY < (end - start) % MINUTES_PER_DAY


def _span(start: int, step: int, session: SessionSpec) -> str:
    """'15:30-16:30'; a short last bar ends at the session's end."""
    end = min((start - session.start_minute) % MINUTES_PER_DAY + step, session.length_minutes)
    return f"{format_clock(start)}-{format_clock(session.start_minute + end)}"


def _listed(starts: list[int]) -> str:
    """'09:30, 10:30, …, 16:30'."""
    if len(starts) <= _LISTED + 1:
        return ", ".join(format_clock(s) for s in starts)
    return ", ".join(format_clock(s) for s in starts[:_LISTED]) + f", …, {format_clock(starts[-1])}"
