"""sar() and supertrend() run as plain loops over every bar since the data's first (6.4 million
minute bars); their loops write Python's min(), max() and math.isnan() out as comparisons for
speed. The stops must be the same doubles as the loops written with the calls, bit for bit,
on bars with ties, gaps (NaN highs, lows, closes) and every setting's branches."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from indicator_bars import make_bars

from barb import indicators as ind


def called_sar(hs: list[float], ls: list[float], acceleration: float, maximum: float):
    """The stop as written with min() and max() (as TA-Lib's SAR writes it)."""
    values = [math.nan] * len(hs)
    down_move, up_move = ls[0] - ls[1], hs[1] - hs[0]
    long = not (down_move > 0 and down_move > up_move)
    af = acceleration
    ep, stop = (hs[1], ls[0]) if long else (ls[1], hs[0])
    new_high, new_low = hs[1], ls[1]
    for i in range(1, len(hs)):
        prev_high, prev_low = new_high, new_low
        new_high, new_low = hs[i], ls[i]
        if long:
            if new_low <= stop:
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
        elif new_high >= stop:
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
    return np.array(values)


def called_supertrend(uppers, lowers, closes):
    """The line as written with math.isnan() and the close one row back by index."""
    values = [math.nan] * len(closes)
    started = up = False
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
    return np.array(values)


def _bits(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).view(np.int64)


def _gapped(seed: int) -> pd.DataFrame:
    bars = make_bars(rows=400, seed=seed)
    rng = np.random.default_rng(seed)
    for name in ("high", "low", "close"):
        bars.loc[rng.uniform(size=len(bars)) < 0.04, name] = np.nan
    bars.loc[:1, ["high", "low"]] = bars.loc[:1, ["high", "low"]].fillna(4000.0)
    return bars


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("acceleration, maximum", [(0.02, 0.2), (0.01, 0.05), (0.2, 0.2)])
def test_sar_is_the_loop_with_min_and_max(seed: int, acceleration: float, maximum: float) -> None:
    for bars in (make_bars(rows=400, seed=seed), _gapped(seed)):
        mine = ind.sar(bars["high"], bars["low"], acceleration, maximum)
        expected = called_sar(bars["high"].tolist(), bars["low"].tolist(), acceleration, maximum)
        np.testing.assert_array_equal(_bits(mine), _bits(expected))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n, mult", [(10, 3.0), (3, 0.5)])
def test_supertrend_is_the_loop_with_isnan(seed: int, n: int, mult: float) -> None:
    for bars in (make_bars(rows=400, seed=seed), _gapped(seed)):
        high, low, close = bars["high"], bars["low"], bars["close"]
        width = mult * ind.atr(high, low, close, n).to_numpy()
        mid = (high.to_numpy() + low.to_numpy()) / 2.0
        expected = called_supertrend((mid + width).tolist(), (mid - width).tolist(), close.tolist())
        mine = ind.supertrend(high, low, close, n, mult)
        np.testing.assert_array_equal(_bits(mine), _bits(expected))
