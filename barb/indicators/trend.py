"""Trend strength: Wilder's Directional Movement system (ADX, +DI, -DI)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.indicators.arrays import as_float_array, check_period, first_valid, previous, to_series
from barb.indicators.lines import ADXLines
from barb.indicators.smoothing import recurse_from_seed
from barb.indicators.volatility import true_range_values


def adx(high: pd.Series, low: pd.Series, close: pd.Series, n: int = 14) -> ADXLines:
    """Average Directional Index with its lines ``adx``, ``plus_di`` and ``minus_di`` (0-100).

    Directional movement per bar: ``up = high - prev high``, ``down = prev low - low``;
    +DM = up if up > down and up > 0, else 0; -DM = down if down > up and down > 0, else 0.
    +DM, -DM and the true range are Wilder-smoothed over n bars;
    ``plus_di = 100 * smoothed +DM / smoothed TR`` (likewise ``minus_di``);
    ``DX = 100 * |+DI - -DI| / (+DI + -DI)``; ``adx`` = Wilder average of DX over n bars.
    ADX above ~25 reads as a trending market, below ~20 as a range; it measures strength, not
    direction (compare plus_di with minus_di for that).

    Seeds follow TA-Lib ADX / PLUS_DI / MINUS_DI exactly: the smoothed sums start from the sum
    of the first n-1 bar values (not n as in Wilder's book) followed by one smoothing step, and
    the first ADX is the simple mean of the first n DX values. Values equal TA-Lib's.

    Warm-up: ``plus_di`` and ``minus_di`` are NaN for the first n rows; ``adx`` for the first
    2n-1 rows (27 with defaults). Compared with Wilder's hand-worked tables, the first few
    dozen values differ slightly because of the seed; the gap shrinks by (1-1/n) per bar.

    Edge cases, as TA-Lib: when the smoothed true range is zero both DIs are 0; when
    +DI + -DI is zero, DX is undefined and ADX keeps its previous value. (TA-Lib treats
    |x| < 1e-14 as zero; Barb only exact zeros.)
    """
    check_period("n", n, 2)
    h, lo, c = as_float_array(high), as_float_array(low), as_float_array(close)
    up = h - previous(h)
    down = previous(lo) - lo
    missing = np.isnan(up) | np.isnan(down)
    plus_dm = np.where((up > down) & (up > 0), up, 0.0)
    minus_dm = np.where((down > up) & (down > 0), down, 0.0)
    plus_dm[missing] = np.nan
    minus_dm[missing] = np.nan
    tr = true_range_values(h, lo, c)

    start = first_valid(tr)
    if start is None:  # no complete bar: every line stays NaN
        start = len(c)

    # TA-Lib seeds with the sum of n-1 values then smooths ``sum - sum/n + x``; dividing that
    # by n gives Wilder's average with seed sum/n, and the DIs are ratios, so scale is free.
    seed_index = start + n - 2

    def smooth(values: np.ndarray) -> np.ndarray:
        seed = float(np.nansum(values[start : seed_index + 1])) / n
        return recurse_from_seed(values, 1.0 / n, seed_index, seed)

    smooth_plus, smooth_minus, smooth_tr = smooth(plus_dm), smooth(minus_dm), smooth(tr)
    with np.errstate(divide="ignore", invalid="ignore"):
        plus_di = np.where(smooth_tr == 0, 0.0, 100.0 * smooth_plus / smooth_tr)
        minus_di = np.where(smooth_tr == 0, 0.0, 100.0 * smooth_minus / smooth_tr)
    # TA-Lib's first DI is one smoothing step after the seed.
    plus_di[: seed_index + 1] = np.nan
    minus_di[: seed_index + 1] = np.nan

    di_sum = plus_di + minus_di
    with np.errstate(divide="ignore", invalid="ignore"):
        dx = 100.0 * np.abs(plus_di - minus_di) / di_sum
    dx[di_sum == 0] = np.nan  # undefined: ADX holds its value
    first_dx = seed_index + 1
    adx_seed_index = first_dx + n - 1
    # An undefined DX counts as zero in the seed, as in TA-Lib's sum.
    adx_seed = float(np.nansum(dx[first_dx : adx_seed_index + 1])) / n
    adx_values = recurse_from_seed(dx, 1.0 / n, adx_seed_index, adx_seed, hold_through_gaps=True)
    adx_values[np.isnan(plus_di)] = np.nan
    return ADXLines(
        adx=to_series(adx_values, close, "adx"),
        plus_di=to_series(plus_di, close, "plus_di"),
        minus_di=to_series(minus_di, close, "minus_di"),
    )
