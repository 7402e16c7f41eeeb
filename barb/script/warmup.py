"""How far a function reads beyond the bar it is computed for: the value its registration
declares (``barb.script.functions.register(..., reach=...)``).

A period selects rows; it must not cut the history that ``prev()``, rolling windows,
indicators and patterns read. Each order-dependent function says, from its literal arguments,
how many bars before (and after, for ``next()``) it needs:
- finite windows need exactly their length, so the answer equals the computation over all
  history;
- recursive smoothing (EMA, Wilder) never forgets its start, but its weight decays
  geometrically: after :func:`decay_bars` bars the start's weight is below 1e-12, far below
  the 1e-6 the engine promises against TA-Lib over all history;
- counts since an event (streak, bars_since) and on-balance volume need everything before:
  their reach is unbounded (``ALL``); a count since an event is then run on rows back to
  its event's last row before the period, found at run time (``barb.script.event_history``).
  Running totals and ranks (cumsum, cummax, cummin, rank) start at the period by
  definition, so they need nothing before it;
- one restarted each day, week, month, quarter or year (``cummax(high, 'week')``) runs over
  its whole unit, whatever the period cuts: it reads back to the unit's first bar (``units``).
  "Mondays in March 2024 above the previous week's high", prev(cummax(high, 'week')) over
  the period 2024-03, read Friday 03-01's high alone as the week of 02-26's (ES 4499.50,
  where the week's was 4562.25) and counted a false break. A rank within each unit
  (``rank(range, 'month')``) reads its unit's bars after the period too (``ahead_units``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# The calendar units a running function can restart at, and the calendar periods they are:
# cummax(close, 'year') is the highest close so far in each year. group_by does not restart
# a running function (it only aggregates what ran over the whole period), so a per-year
# drawdown needs the unit.
RESTART_UNITS: dict[str, str] = {
    "day": "daily",
    "week": "weekly",
    "month": "monthly",
    "quarter": "quarterly",
    "year": "yearly",
}

# Relative weight left on a recursive smoother's seed after its warm-up.
_DECAY_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Reach:
    """Bars needed before (None: all history) and after the bar being computed."""

    back: int | None = 0
    ahead: int = 0
    # Reads the rows before it that the period (or its trading date) holds, though nothing
    # before the period: a running total, a rank, a session VWAP. No warm-up, but a where
    # must not cut the rows it reads.
    in_period: bool = False
    # Calendar units (``daily`` … ``yearly``) it reads back to the first bar of, outermost
    # first: the rows read start ``back`` bars before the period's first, then go back to
    # the start of each unit in turn, and ``back`` bars further each time
    # (``barb.period_rows.reach_start``): as far as any nesting of its calls reads, or further.
    units: tuple[str, ...] = ()
    # The same forward: calendar units it reads on to the last bar of (a rank within each
    # month ranks the whole month, its days after the period too), ``ahead`` bars further
    # each time (``barb.period_rows.reach_end``).
    ahead_units: tuple[str, ...] = ()

    def then(self, other: Reach) -> Reach:
        """Reach of a function of reach ``self`` applied to an argument of reach ``other``:
        prev(cummax(high, 'week')) reads the week of the bar before."""
        back = None if self.back is None or other.back is None else self.back + other.back
        return Reach(
            back,
            self.ahead + other.ahead,
            self.in_period or other.in_period,
            _joined(self.units, other.units),
            _joined(self.ahead_units, other.ahead_units),
        )

    def widest(self, other: Reach) -> Reach:
        back = None if self.back is None or other.back is None else max(self.back, other.back)
        return Reach(
            back,
            max(self.ahead, other.ahead),
            self.in_period or other.in_period,
            _joined(self.units, other.units),
            _joined(self.ahead_units, other.ahead_units),
        )

    @property
    def local(self) -> bool:
        """True when every row can be computed from that row alone."""
        return (
            self.back == 0
            and self.ahead == 0
            and not self.in_period
            and not self.units
            and not self.ahead_units
        )


def _joined(outer: tuple[str, ...], inner: tuple[str, ...]) -> tuple[str, ...]:
    """Units stepped back through one after the other: going back through both (in either
    order) reads at least as far as through each, so one order covers both readings."""
    if _within(outer, inner):
        return inner
    if _within(inner, outer):
        return outer
    return outer + inner


def _within(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
    """Whether ``part`` is ``whole`` with some units left out (in order)."""
    rest = iter(whole)
    return all(unit in rest for unit in part)


ROW = Reach()
ALL = Reach(None)
PERIOD_ROWS = Reach(in_period=True)

# A call's literal arguments by parameter name (defaults filled in) -> the reach of the call
# itself; the reach of its series arguments is added on top.
ReachRule = Callable[[dict[str, Any]], Reach]


def decay_bars(alpha: float) -> int:
    """Bars after which a smoother with factor ``alpha`` has forgotten its seed."""
    if alpha >= 1:  # ema(x, 1) is x itself: nothing to forget
        return 0
    return math.ceil(math.log(_DECAY_TOLERANCE) / math.log1p(-alpha))


def ema_bars(n: int) -> int:
    """Warm-up of an EMA of period ``n``: its seed window, then the seed's decay."""
    return n + decay_bars(2 / (n + 1))


def wilder_bars(n: int) -> int:
    """Warm-up of Wilder's smoothing of period ``n`` (RSI, ATR, ADX)."""
    return n + decay_bars(1 / n)


def window(param: str = "n") -> ReachRule:
    """A window of ``param`` bars ending at the current one."""
    return lambda a: Reach(a[param] - 1)


def row(_: dict[str, Any]) -> Reach:
    """Reads only its own bar (or its trading date's bars)."""
    return ROW


def period_rows(_: dict[str, Any]) -> Reach:
    """Reads the earlier rows of the period (or of its trading date), nothing before it."""
    return PERIOD_ROWS


def period_rows_seen_from_history(args: dict[str, Any]) -> Reach:
    """A running high or low: computed over the period's rows, with every bar before it read
    too, to say when history went beyond the period's (cummax(high) under 2025 is 2025's
    high, not the all-time one); one restarted each week, month… (``per``) reads its unit
    (``period_rows_or_unit``)."""
    if args.get("per") is not None:
        return period_rows_or_unit(args)
    return Reach(None, in_period=True)


def period_rows_or_unit(args: dict[str, Any]) -> Reach:
    """A running total or product: the period's rows (``period_rows``), or restarted each
    ``per`` the whole unit's, from its first bar before the period too: cumsum(x, 'month')
    from 2024-03-15 is March's total so far."""
    per = args.get("per")
    return PERIOD_ROWS if per is None else Reach(units=(RESTART_UNITS[per],))


def period_rows_or_whole_unit(args: dict[str, Any]) -> Reach:
    """A rank: the period's rows (``period_rows``), or ranked within each ``per`` among the
    whole unit's, its bars before and after the period too, as a running total per unit
    reads its unit: rank(range, 'month') from 2024-03-15 ranks each day among all of
    March's."""
    per = args.get("per")
    if per is None:
        return PERIOD_ROWS
    unit = (RESTART_UNITS[per],)
    return Reach(units=unit, ahead_units=unit)


def everything(_: dict[str, Any]) -> Reach:
    """Reads every bar before: a running total, or a count since an event."""
    return ALL
