"""The averages indicators are built from: simple, exponential (TA-Lib seeded) and Wilder.

TA-Lib, which traders' platforms and our tests check against, starts every recursive average
from a simple average rather than from the first value: the EMA of period n is NaN for the
first n-1 values, equals the mean of the first n values on the n-th, and only then recurses.
Starting from the first value instead (pandas ``ewm(adjust=False)``) gives numbers that differ
for dozens of bars, which is exactly where a trader comparing with a chart would look.

Missing values: leading NaNs are skipped, so the warm-up starts at the first valid value (as
TA-Lib's Python wrapper does). A NaN after the seed leaves its row NaN and the average carries
on from the last valid value (TA-Lib would instead output garbage from there on).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from barb.indicators.arrays import as_float_array, check_period, first_valid


def recurse_from_seed(
    values: np.ndarray,
    alpha: float,
    seed_index: int,
    seed: float,
    *,
    hold_through_gaps: bool = False,
) -> np.ndarray:
    """``y[seed_index] = seed``, then ``y[t] = y[t-1] + alpha * (x[t] - y[t-1])``; NaN before.

    Rows whose input is NaN are skipped by the recursion; they come out NaN unless
    ``hold_through_gaps``, in which case they repeat the last value (what TA-Lib's ADX does
    when a bar has no defined DX).
    """
    out = np.full(len(values), np.nan)
    if seed_index >= len(values) or np.isnan(seed):
        return out
    tail = values[seed_index:].copy()
    tail[0] = seed
    # pandas' ewm runs this exact recursion in compiled code; with adjust=False and
    # ignore_na=True, NaN rows neither move the average nor decay it.
    smoothed = pd.Series(tail).ewm(alpha=alpha, adjust=False, ignore_na=True).mean().to_numpy()
    if not hold_through_gaps:
        smoothed[np.isnan(tail)] = np.nan
    out[seed_index:] = smoothed
    return out


def seeded_average(
    values: np.ndarray, n: int, alpha: float, seed_index: int | None = None
) -> np.ndarray:
    """A recursive average of alpha seeded with the mean of the n values ending at seed_index.

    ``seed_index`` defaults to the n-th valid value, which gives TA-Lib's warm-up of n-1 NaN
    rows after any leading NaNs. MACD passes a later seed_index to line its fast EMA up with
    the slow one, as TA-Lib does.
    """
    start = first_valid(values)
    if start is None:
        return np.full(len(values), np.nan)
    if seed_index is None:
        seed_index = start + n - 1
    if seed_index >= len(values):
        return np.full(len(values), np.nan)
    window = values[seed_index - n + 1 : seed_index + 1]
    # A gap inside the seed window is rare (the data are gap-free bars); the mean of the valid
    # values there keeps the rest of the series usable.
    seed = float(np.nanmean(window)) if not np.isnan(window).all() else np.nan
    return recurse_from_seed(values, alpha, seed_index, seed)


def sma(x: pd.Series, n: int) -> pd.Series:
    """Simple moving average of the last n values; NaN until n values are present."""
    check_period("n", n)
    return x.astype(np.float64).rolling(n, min_periods=n).mean()


def ema(x: pd.Series, n: int) -> pd.Series:
    """Exponential moving average, alpha = 2/(n+1), seeded as TA-Lib's EMA.

    Warm-up: the first n-1 rows (after any leading NaNs) are NaN; row n is the simple mean of
    the first n values; from there ``ema = prev + 2/(n+1) * (x - prev)``. Identical to TA-Lib
    EMA. (pandas ``ewm(span=n, adjust=False)`` starts from the first value instead, which
    differs for the first few dozen rows.)
    """
    check_period("n", n)
    out = seeded_average(as_float_array(x), n, 2.0 / (n + 1))
    return pd.Series(out, index=x.index, name="ema")


def wilder(x: pd.Series, n: int) -> pd.Series:
    """Wilder's smoothing (alpha = 1/n), seeded with the simple mean of the first n values.

    ``avg = (prev * (n-1) + x) / n`` after the seed; the first n-1 rows are NaN. This is how
    TA-Lib (and Wilder's book) average gains and losses for RSI and true ranges for ATR.
    """
    check_period("n", n)
    out = seeded_average(as_float_array(x), n, 1.0 / n)
    return pd.Series(out, index=x.index, name="wilder")


def wma(x: pd.Series, n: int) -> pd.Series:
    """Weighted moving average: the last n values weighted n, n-1, …, 1 (newest heaviest),
    divided by n(n+1)/2.

    Warm-up: the first n-1 rows (after any leading NaNs) are NaN; a window holding a NaN is
    NaN. Matches TA-Lib WMA to floating-point precision.
    """
    check_period("n", n)
    values = as_float_array(x)
    out = np.full(len(values), np.nan)
    if len(values) >= n:
        # Here, not at start-up: scipy.signal costs a process a few tenths of a second, and
        # every process builds the function table.
        from scipy import signal

        weights = np.arange(n, 0, -1, dtype=np.float64) / (n * (n + 1) / 2)
        missing = np.isnan(values)
        # Each output is its own weighted sum (no running total to drift over millions of
        # rows); scipy picks direct or FFT convolution by size, both to ~1e-13 relative.
        summed = signal.convolve(np.where(missing, 0.0, values), weights, mode="valid")
        seen = np.concatenate(([0], np.cumsum(missing)))  # whole numbers: exact
        gaps = seen[n:] - seen[:-n]
        out[n - 1 :] = np.where(gaps > 0, np.nan, summed)
    return pd.Series(out, index=x.index, name="wma")


def hull_periods(n: int) -> tuple[int, int]:
    """The half and root periods of HMA(n): floor(n/2) and floor(sqrt(n))."""
    return n // 2, math.isqrt(n)


def hma(x: pd.Series, n: int) -> pd.Series:
    """Hull moving average: ``WMA(2 * WMA(x, n/2) - WMA(x, n), sqrt(n))``, with n/2 and
    sqrt(n) rounded down (HMA(20): WMAs of 10 and 20, then of 4), as most platforms do.

    Warm-up: the first n + floor(sqrt(n)) - 2 rows are NaN (9 + 3 - 2 = 10 for HMA(9)).
    TA-Lib has no HMA; it is checked against a plain loop of the definition.
    """
    check_period("n", n, 2)
    half, root = hull_periods(n)
    raw = 2.0 * wma(x, half) - wma(x, n)
    return wma(raw, root).rename("hma")


# Kaufman's fastest and slowest smoothing constants (EMA periods 2 and 30), as TA-Lib KAMA.
KAMA_FAST = 2.0 / (2 + 1)
KAMA_SLOW = 2.0 / (30 + 1)


def kama(x: pd.Series, n: int = 10) -> pd.Series:
    """Kaufman's adaptive moving average, as TA-Lib KAMA(n).

    Efficiency ratio over n bars: ``ER = |x - x n bars ago| / sum of the n one-bar moves``
    (1 when nothing moved); smoothing ``sc = (ER * (2/3 - 2/31) + 2/31)^2``, between an EMA
    of 2 and one of 30; ``kama = prev + sc * (x - prev)``, starting from the value n bars
    after the first (seeded with the one before it), as TA-Lib does.

    Warm-up: the first n rows (after any leading NaNs) are NaN. Matches TA-Lib KAMA over the
    whole history to floating-point precision (its start weighs on every later value, less
    than 1e-12 after a few thousand bars); a missing value inside the data is skipped (its
    row is NaN).
    """
    check_period("n", n, 2)
    values = as_float_array(x)
    out = np.full(len(values), np.nan)
    valid = np.flatnonzero(~np.isnan(values))
    if len(valid) <= n:
        return pd.Series(out, index=x.index, name="kama")
    v = values[valid]
    moves = np.abs(np.diff(v))
    volatility = pd.Series(moves).rolling(n, min_periods=n).sum().to_numpy()[n - 1 :]
    change = v[n:] - v[:-n]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(
            (volatility <= change) | (volatility == 0), 1.0, np.abs(change / volatility)
        )
    sc = (ratio * (KAMA_FAST - KAMA_SLOW) + KAMA_SLOW) ** 2
    # kama[i] = (1 - sc) * kama[i-1] + sc * v[i], from kama[n-1] = v[n-1].
    keep = np.concatenate(([0.0], 1.0 - sc))
    add = np.concatenate(([v[n - 1]], sc * v[n:]))
    out[valid[n - 1 :]] = affine_scan(keep, add)
    out[valid[n - 1]] = np.nan  # the seed is no output, as in TA-Lib
    return pd.Series(out, index=x.index, name="kama")


def affine_scan(keep: np.ndarray, add: np.ndarray) -> np.ndarray:
    """``y[0] = add[0]``, ``y[i] = keep[i] * y[i-1] + add[i]``, in log2(len) numpy passes
    instead of a Python loop (2.7 s over NQ's 6.4M minute bars): each pass composes every
    step with the one ``k`` before it. It stops once the weight any row still gives the rows
    ``k`` back is below 1e-18, which cannot move a float64 result."""
    keep, total = keep.astype(np.float64).copy(), add.astype(np.float64).copy()
    keep[0] = 0.0
    k = 1
    while k < len(total):
        total[k:] = keep[k:] * total[:-k] + total[k:]
        keep[k:] = keep[k:] * keep[:-k]
        if not keep[k:].size or np.max(np.abs(keep[k:])) < 1e-18:
            break
        k *= 2
    return total
