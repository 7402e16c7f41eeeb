"""Momentum oscillators: RSI, MACD, Stochastic and CCI."""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view

from barb.indicators.arrays import (
    as_float_array,
    check_period,
    first_valid,
    previous,
    to_series,
)
from barb.indicators.lines import MACDLines, StochasticLines
from barb.indicators.smoothing import seeded_average

# Lambert's constant: scales CCI so that roughly 70-80% of values fall within ±100.
CCI_CONSTANT = 0.015
# Rows per block when CCI measures mean deviations, to bound the temporary window matrix
# on years of minute bars.
_CCI_BLOCK_ROWS = 1 << 16


def rsi(close: pd.Series, n: int = 14) -> pd.Series:
    """Relative Strength Index (Wilder), 0-100; >70 overbought, <30 oversold.

    ``RSI = 100 * avg_gain / (avg_gain + avg_loss)`` where gains and losses are the
    close-to-close changes, averaged with Wilder's smoothing: the first averages are the simple
    means of the first n changes, then ``avg = (prev * (n-1) + today) / n``.

    Warm-up: the first n rows are NaN (the first change needs two closes). Matches TA-Lib RSI
    (and the StockCharts worked example) to floating-point precision.

    Differences from TA-Lib: when both averages are exactly zero (no change at all since the
    start) Barb gives 50, TA-Lib gives 0; TA-Lib also gives 0 once both averages fall below
    1e-14, where Barb keeps the ratio (unchanged through a flat stretch). A NaN inside the data
    leaves that row NaN and the averages carry on; TA-Lib outputs 0 from there on.
    """
    check_period("n", n, 2)
    values = as_float_array(close)
    change = values - previous(values)
    missing = np.isnan(change)
    gain = np.where(change > 0, change, 0.0)
    loss = np.where(change < 0, -change, 0.0)
    gain[missing] = np.nan
    loss[missing] = np.nan
    avg_gain = seeded_average(gain, n, 1.0 / n)
    avg_loss = seeded_average(loss, n, 1.0 / n)
    total = avg_gain + avg_loss
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(total == 0, 50.0, 100.0 * avg_gain / total)
    return to_series(out, close, "rsi")


def macd(close: pd.Series, fast: int = 12, slow: int = 26, signal: int = 9) -> MACDLines:
    """Moving Average Convergence/Divergence: lines ``macd``, ``macd_signal``, ``macd_hist``.

    ``macd = EMA(close, fast) - EMA(close, slow)``; ``macd_signal = EMA(macd, signal)``;
    ``macd_hist = macd - macd_signal``. EMAs use alpha = 2/(n+1), as TA-Lib's MACD.

    Seeding follows TA-Lib exactly: both EMAs start on bar ``slow``, the slow one from the mean
    of the first ``slow`` closes and the fast one from the mean of the ``fast`` closes ending
    on that same bar (not from the first ``fast`` closes); the signal EMA starts from the mean
    of the first ``signal`` MACD values. Values equal TA-Lib's wherever both exist.

    Warm-up: ``macd`` is NaN for the first slow-1 rows (25 with defaults); ``macd_signal`` and
    ``macd_hist`` for the first slow+signal-2 rows (33). Difference from TA-Lib: TA-Lib also
    hides the MACD line until the signal exists (33 rows); Barb shows it from row slow-1.
    TA-Lib silently swaps fast and slow when fast > slow; Barb refuses fast >= slow.
    """
    check_period("fast", fast, 2)
    check_period("slow", slow, 2)
    check_period("signal", signal, 1)
    if fast >= slow:
        raise ValueError(f"fast ({fast}) must be less than slow ({slow})")
    values = as_float_array(close)
    start = first_valid(values)
    seed_index = len(values) if start is None else start + slow - 1
    slow_ema = seeded_average(values, slow, 2.0 / (slow + 1), seed_index)
    fast_ema = seeded_average(values, fast, 2.0 / (fast + 1), seed_index)
    line = fast_ema - slow_ema
    signal_line = seeded_average(line, signal, 2.0 / (signal + 1))
    return MACDLines(
        macd=to_series(line, close, "macd"),
        macd_signal=to_series(signal_line, close, "macd_signal"),
        macd_hist=to_series(line - signal_line, close, "macd_hist"),
    )


def stochastic(
    high: pd.Series,
    low: pd.Series,
    close: pd.Series,
    k: int = 14,
    d: int = 3,
    slowing: int = 3,
) -> StochasticLines:
    """Slow Stochastic oscillator, 0-100: lines ``stochastic_k`` (%K) and ``stochastic_d`` (%D).

    ``fast %K = 100 * (close - lowest low of k bars) / (highest high - lowest low)``, the
    window including the current bar; ``%K`` = simple average of fast %K over ``slowing`` bars;
    ``%D`` = simple average of %K over ``d`` bars. >80 overbought, <20 oversold.
    Same as TA-Lib ``STOCH(fastk_period=k, slowk_period=slowing, slowd_period=d)`` with SMAs.

    Warm-up: ``stochastic_k`` is NaN for the first k+slowing-2 rows (15 with defaults),
    ``stochastic_d`` for the first k+slowing+d-3 rows (17).

    Differences from TA-Lib: TA-Lib hides %K until %D exists (17 rows); Barb shows %K from
    row k+slowing-2. When the k-bar range is zero (high = low throughout), fast %K is 50 in
    Barb (the close is neither at the top nor the bottom), 0 in TA-Lib.
    """
    check_period("k", k, 1)
    check_period("d", d, 1)
    check_period("slowing", slowing, 1)
    highest = high.astype(np.float64).rolling(k, min_periods=k).max().to_numpy()
    lowest = low.astype(np.float64).rolling(k, min_periods=k).min().to_numpy()
    span = highest - lowest
    with np.errstate(divide="ignore", invalid="ignore"):
        fast_k = np.where(span == 0, 50.0, 100.0 * (as_float_array(close) - lowest) / span)
    slow_k = pd.Series(fast_k).rolling(slowing, min_periods=slowing).mean()
    slow_d = slow_k.rolling(d, min_periods=d).mean()
    return StochasticLines(
        stochastic_k=to_series(slow_k.to_numpy(), close, "stochastic_k"),
        stochastic_d=to_series(slow_d.to_numpy(), close, "stochastic_d"),
    )


def cci(high: pd.Series, low: pd.Series, close: pd.Series, n: int = 20) -> pd.Series:
    """Commodity Channel Index: ``(TP - SMA(TP, n)) / (0.015 * mean deviation of TP)``.

    ``TP = (high + low + close) / 3``; the mean deviation is the mean of |TP - SMA| over the
    same n bars. Readings above +100 / below -100 mark unusually strong moves.

    Warm-up: the first n-1 rows are NaN. When the mean deviation is zero (flat typical price)
    the value is 0. Identical to TA-Lib CCI.
    """
    check_period("n", n, 2)
    typical = (as_float_array(high) + as_float_array(low) + as_float_array(close)) / 3.0
    out = np.full(len(typical), np.nan)
    if len(typical) < n:
        return to_series(out, close, "cci")
    windows = sliding_window_view(typical, n)
    # O(rows * n) like TA-Lib: the mean deviation has no running-sum form. Done in blocks so the
    # |TP - mean| temporary stays small.
    for begin in range(0, len(windows), _CCI_BLOCK_ROWS):
        block = windows[begin : begin + _CCI_BLOCK_ROWS]
        mean = block.mean(axis=1)
        mean_dev = np.abs(block - mean[:, None]).mean(axis=1)
        deviation = block[:, -1] - mean
        with np.errstate(divide="ignore", invalid="ignore"):
            values = deviation / (CCI_CONSTANT * mean_dev)
        values[(deviation == 0) | (mean_dev == 0)] = 0.0
        out[n - 1 + begin : n - 1 + begin + len(block)] = values
    return to_series(out, close, "cci")
