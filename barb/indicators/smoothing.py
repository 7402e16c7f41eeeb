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
