"""Trailing stops that flip sides: the parabolic SAR and Supertrend.

Each value depends on the one before through a switch (the stop jumps to the other side of
the price when the price crosses it), which no window or smoother writes, so both run as a
plain loop over the bars: the stop's state at a bar is all the bars before it, and Barb Script
reads them from the first bar of the data (``reach=everything``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from barb.indicators.arrays import as_float_array, to_series
from barb.indicators.volatility import atr


def sar(
    high: pd.Series, low: pd.Series, acceleration: float = 0.02, maximum: float = 0.2
) -> pd.Series:
    """Parabolic SAR (Wilder), as TA-Lib SAR(acceleration, maximum).

    In an uptrend the stop sits under the bars and rises each bar by ``af * (ep - sar)``,
    where ``ep`` is the trend's highest high and ``af`` starts at ``acceleration`` and grows by
    it at each new high, up to ``maximum``; it never rises above the last two bars' lows. A low
    at or under it flips the trend: the stop jumps to the trend's extreme point (at least the
    last two bars' highs) and falls from there (mirror image). Long while close > sar().

    The first trend is TA-Lib's: short when the second bar's low falls further below the
    first's than its high rises above it, else long; the first stop is the first bar's low
    (long) or high (short).

    Warm-up: the first row is NaN. Matches TA-Lib SAR to floating-point precision; as a stop
    is a path, its values depend on where the data start, and Barb reads from the first bar.
    """
    h, lo = as_float_array(high), as_float_array(low)
    out = np.full(len(h), np.nan)
    if len(h) < 2 or np.isnan(h[:2]).any() or np.isnan(lo[:2]).any():
        return to_series(out, high, "sar")
    hs, ls = h.tolist(), lo.tolist()
    down_move, up_move = ls[0] - ls[1], hs[1] - hs[0]
    long = not (down_move > 0 and down_move > up_move)
    af = acceleration
    if long:
        ep, stop = hs[1], ls[0]
    else:
        ep, stop = ls[1], hs[0]
    new_high, new_low = hs[1], ls[1]
    values = [math.nan] * len(hs)
    for i in range(1, len(hs)):
        prev_high, prev_low = new_high, new_low
        new_high, new_low = hs[i], ls[i]
        if long:
            if new_low <= stop:  # flips short: the stop jumps to the highest high
                long, af = False, acceleration
                stop = max(ep, prev_high, new_high)
                values[i] = stop
                ep = new_low
                stop = max(stop + af * (ep - stop), prev_high, new_high)
            else:
                values[i] = stop
                if new_high > ep:
                    ep, af = new_high, min(af + acceleration, maximum)
                stop = min(stop + af * (ep - stop), prev_low, new_low)
        elif new_high >= stop:  # flips long: the stop jumps to the lowest low
            long, af = True, acceleration
            stop = min(ep, prev_low, new_low)
            values[i] = stop
            ep = new_high
            stop = min(stop + af * (ep - stop), prev_low, new_low)
        else:
            values[i] = stop
            if new_low < ep:
                ep, af = new_low, min(af + acceleration, maximum)
            stop = max(stop + af * (ep - stop), prev_high, new_high)
    return to_series(np.array(values, dtype=np.float64), high, "sar")


def supertrend(
    high: pd.Series, low: pd.Series, close: pd.Series, n: int = 10, mult: float = 3.0
) -> pd.Series:
    """Supertrend: a stop ``mult`` ATRs from the bar's midpoint, under the price in an uptrend
    and over it in a downtrend, as TradingView's ``ta.supertrend(mult, n)``.

    ``upper = (high + low) / 2 + mult * ATR(n)``, ``lower = ... - mult * ATR(n)``; the lower
    band only rises (unless the previous close fell under it) and the upper only falls (unless
    the previous close rose over it). A close over the upper band turns the trend up, a close
    under the lower band turns it down; the line is the lower band in an uptrend, the upper in
    a downtrend. Uptrend: close > supertrend().

    The ATR is Wilder's (RMA, as TradingView's ``ta.atr``) seeded as TA-Lib's ATR, so the first
    ATR comes one bar later than TradingView's and the two agree within a few dozen bars. The
    first line is the upper band (a downtrend), as TradingView starts.

    Warm-up: the first n rows are NaN (the ATR's). As a stop is a path, its values depend on
    where the data start, and Barb reads from the first bar.
    """
    h, lo, c = as_float_array(high), as_float_array(low), as_float_array(close)
    width = mult * atr(high, low, close, n).to_numpy()
    mid = (h + lo) / 2.0
    uppers, lowers, closes = (mid + width).tolist(), (mid - width).tolist(), c.tolist()
    values = [math.nan] * len(closes)
    started = False
    up = False
    upper = lower = math.nan
    for i, (raw_upper, raw_lower) in enumerate(zip(uppers, lowers, strict=True)):
        if math.isnan(raw_upper) or math.isnan(closes[i]):
            continue
        if not started:
            started, up, upper, lower = True, False, raw_upper, raw_lower
        else:
            before = closes[i - 1]
            if raw_lower > lower or before < lower:
                lower = raw_lower
            if raw_upper < upper or before > upper:
                upper = raw_upper
            up = closes[i] >= lower if up else closes[i] > upper
        values[i] = lower if up else upper
    return to_series(np.array(values, dtype=np.float64), close, "supertrend")
