"""TradingView's ta.supertrend(mult, n) as its Pine reference writes it, given the ATR to read:
the one loop the indicator tests, the engine's plain questions and the eval set's answers
check Barb's supertrend() against (with a plain-loop ATR or TA-Lib's)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def supertrend(
    high: Sequence[float],
    low: Sequence[float],
    close: Sequence[float],
    atr: Sequence[float],
    mult: float,
) -> np.ndarray:
    """The line: the upper band while the trend is down, the lower while up; NaN before the
    ATR's first value."""
    out = np.full(len(close), np.nan)
    prev_upper = prev_lower = 0.0  # Pine's nz() of the bar before the first
    prev_line = math.nan
    for i in range(len(close)):
        if math.isnan(atr[i]):
            continue
        mid = (high[i] + low[i]) / 2
        upper, lower = mid + mult * atr[i], mid - mult * atr[i]
        before = close[i - 1]
        lower = lower if lower > prev_lower or before < prev_lower else prev_lower
        upper = upper if upper < prev_upper or before > prev_upper else prev_upper
        if math.isnan(atr[i - 1]):
            down = True
        elif prev_line == prev_upper:
            down = not close[i] > upper
        else:
            down = close[i] < lower
        out[i] = upper if down else lower
        prev_upper, prev_lower, prev_line = upper, lower, out[i]
    return out
