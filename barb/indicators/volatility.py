"""Volatility and channels: true range, ATR, Bollinger, Keltner and Donchian."""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.indicators.arrays import as_float_array, check_period, previous, to_series
from barb.indicators.lines import BollingerLines, DonchianLines, KeltnerLines
from barb.indicators.smoothing import ema, seeded_average


def true_range_values(high: np.ndarray, low: np.ndarray, close: np.ndarray) -> np.ndarray:
    """max(high - low, |high - previous close|, |low - previous close|); NaN on the first row."""
    prev_close = previous(close)
    return np.maximum(high - low, np.maximum(np.abs(high - prev_close), np.abs(low - prev_close)))


def true_range(high: pd.Series, low: pd.Series, close: pd.Series) -> pd.Series:
    """True range: the bar's range extended to the previous close when the bar gapped.

    ``max(high - low, |high - prev close|, |low - prev close|)``. Use the ``range`` column
    for plain high - low.

    Warm-up: the first row is NaN (it has no previous close), as in TA-Lib TRANGE.
    """
    values = true_range_values(as_float_array(high), as_float_array(low), as_float_array(close))
    return to_series(values, close, "true_range")


def atr(high: pd.Series, low: pd.Series, close: pd.Series, n: int = 14) -> pd.Series:
    """Average True Range: Wilder's average of the true range, in price points.

    The first ATR is the simple mean of the first n true ranges (rows 1..n; row 0 has none),
    then ``atr = (prev * (n-1) + true_range) / n``.

    Warm-up: the first n rows are NaN. Identical to TA-Lib ATR. (StockCharts counts the first
    bar's high - low as a true range and so starts one row earlier; the values converge.)
    """
    check_period("n", n, 1)
    tr = true_range_values(as_float_array(high), as_float_array(low), as_float_array(close))
    return to_series(seeded_average(tr, n, 1.0 / n), close, "atr")


def bollinger(close: pd.Series, n: int = 20, k: float = 2.0) -> BollingerLines:
    """Bollinger Bands: ``bollinger_middle`` = SMA(close, n), upper/lower = middle ± k·σ.

    σ is the population standard deviation of the same n closes (divide by n, not n-1), as
    John Bollinger and TA-Lib ``BBANDS(n, k, k, SMA)`` define it. Closes outside the bands are
    about k standard deviations from the mean.

    Warm-up: the first n-1 rows are NaN. Matches TA-Lib to floating-point precision.
    """
    check_period("n", n, 2)
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k!r}")
    rolling = close.astype(np.float64).rolling(n, min_periods=n)
    middle = rolling.mean().to_numpy()
    sigma = rolling.std(ddof=0).to_numpy()
    return BollingerLines(
        bollinger_upper=to_series(middle + k * sigma, close, "bollinger_upper"),
        bollinger_middle=to_series(middle, close, "bollinger_middle"),
        bollinger_lower=to_series(middle - k * sigma, close, "bollinger_lower"),
    )


def keltner(
    high: pd.Series,
    low: pd.Series,
    close: pd.Series,
    n: int = 20,
    atr_n: int = 10,
    mult: float = 1.5,
) -> KeltnerLines:
    """Keltner Channels: ``keltner_middle`` = EMA(close, n), upper/lower = middle ± mult·ATR(atr_n).

    The EMA is TA-Lib's (seeded with the mean of the first n closes) and the ATR is Wilder's
    (as ``atr``). TA-Lib has no Keltner function; this is the modern (Linda Raschke /
    StockCharts) form, not Chester Keltner's original 10-day SMA of typical price.

    Warm-up: ``keltner_middle`` is NaN for the first n-1 rows; upper and lower for the first
    max(n-1, atr_n) rows (19 with defaults).
    """
    check_period("n", n, 1)
    check_period("atr_n", atr_n, 1)
    if mult < 0:
        raise ValueError(f"mult must be >= 0, got {mult!r}")
    middle = ema(close, n).to_numpy()
    width = mult * atr(high, low, close, atr_n).to_numpy()
    return KeltnerLines(
        keltner_upper=to_series(middle + width, close, "keltner_upper"),
        keltner_middle=to_series(middle, close, "keltner_middle"),
        keltner_lower=to_series(middle - width, close, "keltner_lower"),
    )


def donchian(high: pd.Series, low: pd.Series, n: int = 20) -> DonchianLines:
    """Donchian Channels: highest high and lowest low of the last n bars, and their midpoint.

    The window includes the current bar, so ``high > donchian_upper`` is never true; test a
    breakout against the previous bar's channel: ``high > prev(donchian_upper(20))``.

    Warm-up: the first n-1 rows are NaN. (TA-Lib has MAX/MIN over the same window, not a
    Donchian function.)
    """
    check_period("n", n, 1)
    upper = high.astype(np.float64).rolling(n, min_periods=n).max().to_numpy()
    lower = low.astype(np.float64).rolling(n, min_periods=n).min().to_numpy()
    return DonchianLines(
        donchian_upper=to_series(upper, high, "donchian_upper"),
        donchian_middle=to_series((upper + lower) / 2.0, high, "donchian_middle"),
        donchian_lower=to_series(lower, high, "donchian_lower"),
    )
