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
    values = _sar_path(h.tolist(), lo.tolist(), acceleration, maximum)
    return to_series(np.array(values, dtype=np.float64), high, "sar")


def _sar_path(hs: list[float], ls: list[float], acceleration: float, maximum: float) -> list[float]:
    """The stops of ``sar``. Python's min() and max() are written out as the comparisons
    they make, in their order (``max(a, b, c)``: a, then b if b > it, then c if c > that), so
    each value is the same double, NaN included; the three calls a bar cost 40% of the loop
    (6.4 million minute bars: 2.7 s of CPU, 1.6 s written out)."""
    down_move, up_move = ls[0] - ls[1], hs[1] - hs[0]
    long = not (down_move > 0 and down_move > up_move)
    af = acceleration
    if long:
        ep, stop = hs[1], ls[0]
    else:
        ep, stop = ls[1], hs[0]
    new_high, new_low = hs[1], ls[1]
    values = [math.nan]
    keep = values.append
    for bar_high, bar_low in zip(hs[1:], ls[1:], strict=True):
        prev_high, prev_low = new_high, new_low
        new_high, new_low = bar_high, bar_low
        if long:
            if new_low <= stop:  # flips short: the stop jumps to the highest high
                long, af = False, acceleration
                stop = ep  # max(ep, prev_high, new_high)
                if prev_high > stop:
                    stop = prev_high
                if new_high > stop:
                    stop = new_high
                keep(stop)
                ep = new_low
                stop = stop + af * (ep - stop)  # max(that, prev_high, new_high)
                if prev_high > stop:
                    stop = prev_high
                if new_high > stop:
                    stop = new_high
            else:
                keep(stop)
                if new_high > ep:
                    ep, af = new_high, af + acceleration
                    if maximum < af:  # min(af + acceleration, maximum)
                        af = maximum
                stop = stop + af * (ep - stop)  # min(that, prev_low, new_low)
                if prev_low < stop:
                    stop = prev_low
                if new_low < stop:
                    stop = new_low
        elif new_high >= stop:  # flips long: the stop jumps to the lowest low
            long, af = True, acceleration
            stop = ep  # min(ep, prev_low, new_low)
            if prev_low < stop:
                stop = prev_low
            if new_low < stop:
                stop = new_low
            keep(stop)
            ep = new_high
            stop = stop + af * (ep - stop)  # min(that, prev_low, new_low)
            if prev_low < stop:
                stop = prev_low
            if new_low < stop:
                stop = new_low
        else:
            keep(stop)
            if new_low < ep:
                ep, af = new_low, af + acceleration
                if maximum < af:  # min(af + acceleration, maximum)
                    af = maximum
            stop = stop + af * (ep - stop)  # max(that, prev_high, new_high)
            if prev_high > stop:
                stop = prev_high
            if new_high > stop:
                stop = new_high
    return values


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
    values: list[float] = []
    keep = values.append
    started = False
    up = False
    upper = lower = before = math.nan
    # x != x is math.isnan(x) without a call a bar (6.4 million minute bars: the loop's CPU
    # from 3.0 s to 1.9 s); each value is the same double.
    for raw_upper, raw_lower, now in zip(uppers, lowers, closes, strict=True):
        if raw_upper != raw_upper or now != now:
            keep(math.nan)
            before = now
            continue
        if not started:
            started, up, upper, lower = True, False, raw_upper, raw_lower
        else:
            if raw_lower > lower or before < lower:
                lower = raw_lower
            if raw_upper < upper or before > upper:
                upper = raw_upper
            up = now >= lower if up else now > upper
        keep(lower if up else upper)
        before = now
    return to_series(np.array(values, dtype=np.float64), close, "supertrend")
