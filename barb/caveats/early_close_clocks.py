"""Why a where on the time of day found nothing on a short session: the day closed early.

"The 15:59 bar on the day after Thanksgiving 2025" (``time() == '15:59'`` over 2025-11-28)
read only "No bars matched: the result is empty", though the futures closed at 13:15 that
day, while an empty date already got its reason ("trading ended at 09:30"). A model left
without the reason answers "no data" or guesses (p47b #30). Said for an empty result only,
of the period's holiday and early-close sessions that ended before the clock asked for, and
only when every session of the period did: where one had the asked bar, something else in
the where emptied the result (``time() == '15:59' and volume < 0`` over November 2025 had
been blamed on its two short days, 18 sessions having a 15:59 bar).
"""

from __future__ import annotations

import numpy as np

from barb.caveats.short_sessions import short_session_names
from barb.instruments import MINUTES_PER_DAY, format_clock, parse_clock
from barb.lineage import conjuncts, through_map
from barb.period_rows import Scope
from barb.planning import Plan
from barb.script import ast
from barb.short_days import day_edges, short_days

_MIRRORED = {"==": "==", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def early_close_clock_caveat(plan: Plan, scope: Scope) -> list[str]:
    """'No bar at 15:59 on 2025-11-28 (early close, closed 13:15): that session closed
    earlier. Its last price is the daily close ("from": "daily").' when the where asks for
    a time of day (time() or hour() equal to, at or after a clock) that the period's short
    sessions closed before."""
    stage = plan.first
    if stage.where is None or "trading_date" not in scope.frame.columns:
        return []
    asked = _asked_clock(stage.where, dict(stage.map_exprs))
    if asked is None:
        return []
    minute, words = asked
    dataset = plan.dataset
    dates = scope.frame["trading_date"].to_numpy()[scope.in_period]
    period_days = np.unique(dates.astype("datetime64[D]"))
    days = period_days[short_days(dataset, plan.session, period_days)]
    if not len(days):
        return []
    _, closed = day_edges(dataset, days)
    into_day = (minute - dataset.instrument.trading_day_start_minute) % MINUTES_PER_DAY
    ended = days[(closed >= 0) & (closed <= into_day)]
    if not len(ended) or len(ended) < len(period_days):  # another session reached the clock
        return []
    one = len(ended) == 1
    bars = "bar" if one and words.startswith("at ") else "bars"
    return [
        f"No {bars} {words} on {short_session_names(dataset, ended)}: "
        f"{'that session' if one else 'those sessions'} closed earlier. "
        f'{"Its" if one else "Their"} last price is the daily close ("from": "daily").'
    ]


def _asked_clock(where: ast.Expr, mapped: dict[str, ast.Expr]) -> tuple[int, str] | None:
    """The earliest minute of the day a conjunct of ``where`` keeps bars from, with how it
    is said: time() == '15:59' (959, 'at 15:59'), hour() >= 15 ('at or after 15:00'),
    time() in ('15:58', '15:59'); None when no conjunct bounds the time of day from below."""
    found: list[tuple[int, str]] = []
    for part in conjuncts(where):
        part = through_map(part, mapped)
        if isinstance(part, ast.Compare) and part.op in _MIRRORED:
            sides = ((part.left, part.right, part.op), (part.right, part.left, _MIRRORED[part.op]))
            for call, value, op in sides:
                minute = _clock_minute(through_map(call, mapped), value)
                if minute is not None and op in ("==", ">=", ">"):
                    step = (1 if _is_time(call, mapped) else 60) if op == ">" else 0
                    at = (minute + step) % MINUTES_PER_DAY
                    clock = format_clock(at)
                    said = f"at {clock}" if op == "==" else f"at or after {clock}"
                    found.append((at, said))
        elif isinstance(part, ast.InList) and not part.negated:
            minutes = [_clock_minute(through_map(part.operand, mapped), v) for v in part.values]
            if minutes and None not in minutes:
                first = min(m for m in minutes if m is not None)
                found.append((first, f"at {format_clock(first)}"))
    # The latest lower bound holds for every bar kept.
    return max(found) if found else None


def _is_time(call: ast.Expr, mapped: dict[str, ast.Expr]) -> bool:
    call = through_map(call, mapped)
    return isinstance(call, ast.Call) and call.name == "time"


def _clock_minute(call: ast.Expr, value: ast.Node) -> int | None:
    """The minute of the day ``call`` == ``value`` names: time() with '15:59', hour() with 15."""
    if not isinstance(call, ast.Call) or call.args:
        return None
    literal = ast.literal_value(value)
    if call.name == "time" and isinstance(literal, str):
        try:
            return parse_clock(literal)
        except ValueError:
            return None
    if call.name == "hour" and isinstance(literal, int) and 0 <= literal < 24:
        return literal * 60
    return None
