"""Volume-based indicators: On-Balance Volume, Money Flow Index and session VWAP."""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.indicators.arrays import as_float_array, check_period, first_valid, previous, to_series

# Two typical prices are equal when they differ by no more than this share of their summed
# size: TA-Lib's TA_IS_ZERO_SCALED dead zone, ~45 float steps, far below any price tick
# (0.01 on a 100 price is 3e-5 of it) yet above the noise of summing three prices.
_TIE_TOLERANCE = 1e-14


def obv(close: pd.Series, volume: pd.Series) -> pd.Series:
    """On-Balance Volume: a running total adding the bar's volume on an up close, subtracting
    it on a down close, unchanged on an equal close.

    Only its changes and divergences from price carry meaning, not its level. A row with a
    missing close or volume is NaN and leaves the total unchanged.

    Warm-up: none; it starts at the first bar's volume, as TA-Lib OBV.
    """
    c, v = as_float_array(close), as_float_array(volume)
    direction = np.sign(c - previous(c))
    step = np.nan_to_num(direction * v)  # missing bars do not move the total
    start = first_valid(c)
    if start is not None:
        step[start] = np.nan_to_num(v[start])
        step[:start] = 0.0
    out = np.cumsum(step)
    out[np.isnan(c) | np.isnan(v)] = np.nan
    return to_series(out, close, "obv")


def mfi(
    high: pd.Series, low: pd.Series, close: pd.Series, volume: pd.Series, n: int = 14
) -> pd.Series:
    """Money Flow Index, 0-100: a volume-weighted RSI; >80 overbought, <20 oversold.

    ``TP = (high + low + close) / 3``, money flow = TP × volume. A bar's flow is positive when
    TP rose from the previous bar, negative when it fell, and counts for neither when equal.
    ``MFI = 100 * positive flow / (positive + negative flow)`` summed over the last n bars.

    Equal means equal in prices, not in float noise: (95.83 + 93.57 + 93.68) / 3 and
    (95.70 + 93.41 + 93.97) / 3 are both 94.36 but differ by 1.4e-14 as floats; as TA-Lib,
    a change within 1e-14 of the two TPs' size is a tie.

    Warm-up: the first n rows are NaN. Matches TA-Lib MFI. Difference: when the n bars carry no
    money flow at all (zero volume or an unchanged TP), Barb gives 50; TA-Lib gives 0.
    """
    check_period("n", n, 2)
    typical = (as_float_array(high) + as_float_array(low) + as_float_array(close)) / 3.0
    flow = typical * as_float_array(volume)
    before = previous(typical)
    change = typical - before
    tie = np.abs(change) <= _TIE_TOLERANCE * (np.abs(typical) + np.abs(before))
    missing = np.isnan(change) | np.isnan(flow)
    positive = np.where((change > 0) & ~tie, flow, 0.0)
    negative = np.where((change < 0) & ~tie, flow, 0.0)
    moving = ((positive != 0) | (negative != 0)).astype(np.float64)
    for values in (positive, negative, moving):
        values[missing] = np.nan
    positive_sum, negative_sum, moving_bars = (
        pd.Series(values).rolling(n, min_periods=n).sum().to_numpy()
        for values in (positive, negative, moving)
    )
    total = positive_sum + negative_sum
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(moving_bars == 0, 50.0, 100.0 * positive_sum / total)
    return to_series(out, close, "mfi")


def vwap(
    high: pd.Series, low: pd.Series, close: pd.Series, volume: pd.Series, day: pd.Series
) -> pd.Series:
    """Volume-Weighted Average Price of the session so far, reset at each new ``day`` key.

    ``VWAP = Σ TP × volume / Σ volume`` from the session's first bar to the current bar, with
    ``TP = (high + low + close) / 3``; ``day`` is the trading date (a new session begins
    wherever it changes from the previous row, so the bars must be in time order). Price above
    VWAP means buyers paid up on average today.

    Warm-up: none; the session's first bar's VWAP is its own typical price (NaN until the
    session's first bar with volume). TA-Lib has no VWAP. On daily or longer bars every bar is
    its own session, so VWAP equals the typical price.
    """
    typical = (as_float_array(high) + as_float_array(low) + as_float_array(close)) / 3.0
    v = as_float_array(volume)
    key = day.to_numpy()
    new_session = np.ones(len(key), dtype=bool)
    new_session[1:] = key[1:] != key[:-1]
    session_id = np.cumsum(new_session)
    sums = pd.DataFrame({"pv": typical * v, "v": v}).groupby(session_id, sort=False).cumsum()
    with np.errstate(divide="ignore", invalid="ignore"):
        out = sums["pv"].to_numpy() / sums["v"].to_numpy()
    out[sums["v"].to_numpy() == 0] = np.nan
    return to_series(out, close, "vwap")
