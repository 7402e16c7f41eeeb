"""Heikin-Ashi candles: bars averaged into a smoother trend picture."""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.indicators.arrays import as_float_array, to_series
from barb.indicators.lines import HeikinAshiLines


def heikin_ashi(
    open_: pd.Series, high: pd.Series, low: pd.Series, close: pd.Series
) -> HeikinAshiLines:
    """Heikin-Ashi candles: lines ``ha_open``, ``ha_close``, ``ha_high``, ``ha_low``.

    ``ha_close = (open + high + low + close) / 4``; ``ha_open`` = the mean of the previous
    candle's ha_open and ha_close, the first one ``(open + close) / 2``;
    ``ha_high = max(high, ha_open, ha_close)``, ``ha_low = min(low, ha_open, ha_close)``.
    A green (up) candle: ha_close() > ha_open().

    Warm-up: none; ha_open is recursive from the data's first bar, but halves that bar's
    weight every bar, so after 40 bars it is below 1e-12 (Barb Script reads 41 bars before a
    period). TA-Lib has no Heikin-Ashi; it is checked against a plain loop.
    """
    o, h, lo, c = (as_float_array(s) for s in (open_, high, low, close))
    ha_close = (o + h + lo + c) / 4.0
    ha_open = np.full(len(c), np.nan)
    if len(c):
        # ha_open[t] = ha_open[t-1] + 0.5 * (ha_close[t-1] - ha_open[t-1]): an EMA of the
        # previous ha_close with alpha 1/2, started from the first bar's (open + close) / 2.
        staged = np.concatenate(([(o[0] + c[0]) / 2.0], ha_close[:-1]))
        ha_open = pd.Series(staged).ewm(alpha=0.5, adjust=False).mean().to_numpy()
    return HeikinAshiLines(
        ha_open=to_series(ha_open, close, "ha_open"),
        ha_close=to_series(ha_close, close, "ha_close"),
        ha_high=to_series(np.maximum(h, np.maximum(ha_open, ha_close)), close, "ha_high"),
        ha_low=to_series(np.minimum(lo, np.minimum(ha_open, ha_close)), close, "ha_low"),
    )
