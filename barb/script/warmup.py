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
  their reach is unbounded (``ALL``). Running totals and ranks (cumsum, cummax, cummin,
  rank) start at the period by definition, so they need nothing before it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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

    def then(self, other: Reach) -> Reach:
        """Reach of a function of reach ``self`` applied to an argument of reach ``other``."""
        back = None if self.back is None or other.back is None else self.back + other.back
        return Reach(back, self.ahead + other.ahead, self.in_period or other.in_period)

    def widest(self, other: Reach) -> Reach:
        back = None if self.back is None or other.back is None else max(self.back, other.back)
        return Reach(back, max(self.ahead, other.ahead), self.in_period or other.in_period)

    @property
    def local(self) -> bool:
        """True when every row can be computed from that row alone."""
        return self.back == 0 and self.ahead == 0 and not self.in_period


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
    high, not the all-time one); one restarted each day, week… (``per``) reads no history."""
    return PERIOD_ROWS if args.get("per") is not None else Reach(None, in_period=True)


def everything(_: dict[str, Any]) -> Reach:
    """Reads every bar before: a running total, or a count since an event."""
    return ALL
