"""Every indicator against a slow, plain-Python loop written from the textbook definition.

These references share no code with ``barb.indicators`` (no pandas, no numpy in the loops),
so they keep the definitions checked even where TA-Lib is not installed, and they are the
only independent check for VWAP, which TA-Lib lacks.
"""

from __future__ import annotations

import math
import statistics
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from supertrend_loop import supertrend

from barb import indicators as ind

NAN = math.nan
RTOL = 1e-9


def assert_same(mine: pd.Series, expected: list[float]) -> None:
    """Identical NaN positions, equal values elsewhere."""
    values = mine.to_numpy()
    ref = np.array(expected, dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(values), np.isnan(ref), err_msg=f"{mine.name} NaNs")
    np.testing.assert_allclose(values, ref, rtol=RTOL, atol=1e-9, err_msg=str(mine.name))


def columns(bars: pd.DataFrame) -> tuple[list[float], ...]:
    return tuple([float(x) for x in bars[c]] for c in ("high", "low", "close", "volume"))


# --- reference loops -------------------------------------------------------------------


def ref_sma(xs: list[float], n: int) -> list[float]:
    return [NAN if i < n - 1 else sum(xs[i - n + 1 : i + 1]) / n for i in range(len(xs))]


def ref_smooth(xs: list[float], n: int, alpha: float, first: int) -> list[float]:
    """Seed with the mean of xs[first : first+n], then recurse with alpha (NaN before)."""
    out = [NAN] * len(xs)
    seed_at = first + n - 1
    if seed_at >= len(xs):
        return out
    avg = sum(xs[first : seed_at + 1]) / n
    out[seed_at] = avg
    for i in range(seed_at + 1, len(xs)):
        avg = avg + alpha * (xs[i] - avg)
        out[i] = avg
    return out


def ref_ema(xs: list[float], n: int, first: int = 0) -> list[float]:
    return ref_smooth(xs, n, 2 / (n + 1), first)


def ref_rsi(closes: list[float], n: int) -> list[float]:
    gains = [0.0] + [max(closes[i] - closes[i - 1], 0.0) for i in range(1, len(closes))]
    losses = [0.0] + [max(closes[i - 1] - closes[i], 0.0) for i in range(1, len(closes))]
    avg_gain = ref_smooth(gains, n, 1 / n, first=1)
    avg_loss = ref_smooth(losses, n, 1 / n, first=1)
    return [
        g if math.isnan(g) else 100 * g / (g + lo) for g, lo in zip(avg_gain, avg_loss, strict=True)
    ]


def ref_true_range(high: list[float], low: list[float], close: list[float]) -> list[float]:
    out = [NAN]
    for i in range(1, len(close)):
        pc = close[i - 1]
        out.append(max(high[i] - low[i], abs(high[i] - pc), abs(low[i] - pc)))
    return out


def ref_atr(high: list[float], low: list[float], close: list[float], n: int) -> list[float]:
    return ref_smooth(ref_true_range(high, low, close), n, 1 / n, first=1)


def ref_macd(closes: list[float], fast: int, slow: int, signal: int) -> tuple[list[float], ...]:
    # TA-Lib: both EMAs begin on bar `slow`; the fast one is seeded with the `fast` closes
    # ending there.
    slow_ema = ref_ema(closes, slow)
    fast_ema = ref_ema(closes, fast, first=slow - fast)
    line = [f - s for f, s in zip(fast_ema, slow_ema, strict=True)]
    sig = ref_ema(line, signal, first=slow - 1)
    return line, sig, [a - b for a, b in zip(line, sig, strict=True)]


def ref_stochastic(
    high: list[float], low: list[float], close: list[float], k: int, d: int, slowing: int
) -> tuple[list[float], list[float]]:
    fast = [NAN] * len(close)
    for i in range(k - 1, len(close)):
        hh, ll = max(high[i - k + 1 : i + 1]), min(low[i - k + 1 : i + 1])
        fast[i] = 50.0 if hh == ll else 100 * (close[i] - ll) / (hh - ll)
    slow_k = [
        NAN if i < k + slowing - 2 else sum(fast[i - slowing + 1 : i + 1]) / slowing
        for i in range(len(close))
    ]
    slow_d = [
        NAN if i < k + slowing + d - 3 else sum(slow_k[i - d + 1 : i + 1]) / d
        for i in range(len(close))
    ]
    return slow_k, slow_d


def ref_cci(high: list[float], low: list[float], close: list[float], n: int) -> list[float]:
    tp = [(h + lo + c) / 3 for h, lo, c in zip(high, low, close, strict=True)]
    out = [NAN] * len(tp)
    for i in range(n - 1, len(tp)):
        window = tp[i - n + 1 : i + 1]
        mean = sum(window) / n
        mean_dev = sum(abs(x - mean) for x in window) / n
        out[i] = 0.0 if mean_dev == 0 else (tp[i] - mean) / (0.015 * mean_dev)
    return out


def ref_mfi(
    high: list[float], low: list[float], close: list[float], volume: list[float], n: int
) -> list[float]:
    """Ups and downs of the typical price judged in exact decimal arithmetic on the prices as
    written (95.83 is 9583/100), so a tie is a tie whatever the floats' rounding."""
    tp = [(h + lo + c) / 3 for h, lo, c in zip(high, low, close, strict=True)]
    exact = [
        sum(Fraction(repr(x)) for x in prices) for prices in zip(high, low, close, strict=True)
    ]
    out = [NAN] * len(tp)
    for i in range(n, len(tp)):
        window = range(i - n + 1, i + 1)
        pos = sum(tp[j] * volume[j] for j in window if exact[j] > exact[j - 1])
        neg = sum(tp[j] * volume[j] for j in window if exact[j] < exact[j - 1])
        out[i] = 50.0 if pos + neg == 0 else 100 * pos / (pos + neg)
    return out


def ref_obv(close: list[float], volume: list[float]) -> list[float]:
    total = volume[0]
    out = [total]
    for i in range(1, len(close)):
        if close[i] > close[i - 1]:
            total += volume[i]
        elif close[i] < close[i - 1]:
            total -= volume[i]
        out.append(total)
    return out


def ref_vwap(
    high: list[float], low: list[float], close: list[float], volume: list[float], day: list[object]
) -> list[float]:
    out: list[float] = []
    pv = vol = 0.0
    for i in range(len(close)):
        if i == 0 or day[i] != day[i - 1]:
            pv = vol = 0.0
        pv += (high[i] + low[i] + close[i]) / 3 * volume[i]
        vol += volume[i]
        out.append(pv / vol if vol else NAN)
    return out


def ref_donchian(high: list[float], low: list[float], n: int) -> tuple[list[float], ...]:
    upper = [NAN if i < n - 1 else max(high[i - n + 1 : i + 1]) for i in range(len(high))]
    lower = [NAN if i < n - 1 else min(low[i - n + 1 : i + 1]) for i in range(len(low))]
    return upper, [(u + lo) / 2 for u, lo in zip(upper, lower, strict=True)], lower


def ref_adx(
    high: list[float], low: list[float], close: list[float], n: int
) -> tuple[list[float], list[float], list[float]]:
    """Wilder's system with TA-Lib's seeds, written as TA-Lib's C loop runs it: running sums
    of the first n-1 bars, then ``sum - sum/n + today``; ADX seeded with the mean of n DX."""
    size = len(close)
    plus_di, minus_di, adx = [NAN] * size, [NAN] * size, [NAN] * size
    s_plus = s_minus = s_tr = 0.0
    dxs: list[float] = []
    prev_adx = NAN
    for i in range(1, size):
        up, down = high[i] - high[i - 1], low[i - 1] - low[i]
        pdm = up if up > down and up > 0 else 0.0
        mdm = down if down > up and down > 0 else 0.0
        tr = max(high[i] - low[i], abs(high[i] - close[i - 1]), abs(low[i] - close[i - 1]))
        if i < n:
            s_plus, s_minus, s_tr = s_plus + pdm, s_minus + mdm, s_tr + tr
            continue
        s_plus = s_plus - s_plus / n + pdm
        s_minus = s_minus - s_minus / n + mdm
        s_tr = s_tr - s_tr / n + tr
        plus_di[i] = 100 * s_plus / s_tr
        minus_di[i] = 100 * s_minus / s_tr
        dx = 100 * abs(plus_di[i] - minus_di[i]) / (plus_di[i] + minus_di[i])
        if len(dxs) < n:
            dxs.append(dx)
            if len(dxs) == n:
                prev_adx = sum(dxs) / n
                adx[i] = prev_adx
        else:
            prev_adx = (prev_adx * (n - 1) + dx) / n
            adx[i] = prev_adx
    return adx, plus_di, minus_di


def ref_wma(xs: list[float], n: int) -> list[float]:
    out = [NAN] * len(xs)
    weight = n * (n + 1) / 2
    for i in range(len(xs)):
        window = xs[max(0, i - n + 1) : i + 1]
        if len(window) == n and not any(math.isnan(x) for x in window):
            out[i] = sum((k + 1) * x for k, x in enumerate(window)) / weight
    return out


def ref_hma(xs: list[float], n: int) -> list[float]:
    """Alan Hull's definition with the periods rounded down: WMA of sqrt(n) over
    2 * WMA(n/2) - WMA(n)."""
    half, whole = ref_wma(xs, n // 2), ref_wma(xs, n)
    raw = [2 * a - b for a, b in zip(half, whole, strict=True)]
    return ref_wma(raw, int(math.sqrt(n)))


def ref_supertrend(
    high: list[float], low: list[float], close: list[float], n: int, mult: float
) -> list[float]:
    """TradingView's ta.supertrend(mult, n) on a plain-loop ATR (Wilder's average, first
    value on row n), as TA-Lib's."""
    return list(supertrend(high, low, close, ref_atr(high, low, close, n), mult))


def ref_heikin_ashi(
    open_: list[float], high: list[float], low: list[float], close: list[float]
) -> tuple[list[float], ...]:
    ha_open, ha_close, ha_high, ha_low = [], [], [], []
    for i in range(len(close)):
        c = (open_[i] + high[i] + low[i] + close[i]) / 4
        o = (open_[0] + close[0]) / 2 if i == 0 else (ha_open[-1] + ha_close[-1]) / 2
        ha_open.append(o)
        ha_close.append(c)
        ha_high.append(max(high[i], o, c))
        ha_low.append(min(low[i], o, c))
    return ha_open, ha_close, ha_high, ha_low


# --- tests ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 14])
def test_rsi(bars: pd.DataFrame, n: int) -> None:
    _, _, c, _ = columns(bars)
    assert_same(ind.rsi(bars["close"], n), ref_rsi(c, n))


@pytest.mark.parametrize("n", [1, 14])
def test_atr_and_true_range(bars: pd.DataFrame, n: int) -> None:
    h, lo, c, _ = columns(bars)
    assert_same(ind.atr(bars["high"], bars["low"], bars["close"], n), ref_atr(h, lo, c, n))
    assert_same(ind.true_range(bars["high"], bars["low"], bars["close"]), ref_true_range(h, lo, c))


def test_ema_and_sma(bars: pd.DataFrame) -> None:
    _, _, c, _ = columns(bars)
    assert_same(ind.ema(bars["close"], 20), ref_ema(c, 20))
    assert_same(ind.sma(bars["close"], 20), ref_sma(c, 20))


def test_macd(bars: pd.DataFrame) -> None:
    _, _, c, _ = columns(bars)
    lines = ind.macd(bars["close"], 12, 26, 9)
    line, sig, hist = ref_macd(c, 12, 26, 9)
    assert_same(lines.macd, line)
    assert_same(lines.macd_signal, sig)
    assert_same(lines.macd_hist, hist)


def test_bollinger(bars: pd.DataFrame) -> None:
    _, _, c, _ = columns(bars)
    n, k = 20, 2.0
    middle = ref_sma(c, n)
    sigma = [NAN if i < n - 1 else statistics.pstdev(c[i - n + 1 : i + 1]) for i in range(len(c))]
    lines = ind.bollinger(bars["close"], n, k)
    assert_same(lines.bollinger_middle, middle)
    assert_same(lines.bollinger_upper, [m + k * s for m, s in zip(middle, sigma, strict=True)])
    assert_same(lines.bollinger_lower, [m - k * s for m, s in zip(middle, sigma, strict=True)])


def test_stochastic(bars: pd.DataFrame) -> None:
    h, lo, c, _ = columns(bars)
    lines = ind.stochastic(bars["high"], bars["low"], bars["close"], 14, 3, 3)
    slow_k, slow_d = ref_stochastic(h, lo, c, 14, 3, 3)
    assert_same(lines.stochastic_k, slow_k)
    assert_same(lines.stochastic_d, slow_d)


def test_cci(bars: pd.DataFrame) -> None:
    h, lo, c, _ = columns(bars)
    assert_same(ind.cci(bars["high"], bars["low"], bars["close"], 20), ref_cci(h, lo, c, 20))


@pytest.mark.parametrize("n", [2, 14])
@pytest.mark.parametrize("prices", ["bars", "cent_bars"])
def test_mfi(request: pytest.FixtureRequest, prices: str, n: int) -> None:
    """On cent prices too, where equal typical prices can differ by float noise (CL
    2010-04-21 read 67.18 for 64.62 when the noise counted as a rise)."""
    bars = request.getfixturevalue(prices)
    h, lo, c, v = columns(bars)
    mine = ind.mfi(bars["high"], bars["low"], bars["close"], bars["volume"], n)
    assert_same(mine, ref_mfi(h, lo, c, v, n))


def test_obv(bars: pd.DataFrame) -> None:
    _, _, c, v = columns(bars)
    assert_same(ind.obv(bars["close"], bars["volume"]), ref_obv(c, v))


def test_vwap_resets_each_day(bars: pd.DataFrame) -> None:
    h, lo, c, v = columns(bars)
    # 600 five-minute bars over several days, with sessions of uneven length.
    stamps = pd.date_range("2024-03-04 09:30", periods=len(bars), freq="5min")
    day = pd.Series(stamps.normalize())
    mine = ind.vwap(bars["high"], bars["low"], bars["close"], bars["volume"], day)
    assert day.nunique() > 2
    assert_same(mine, ref_vwap(h, lo, c, v, list(day)))


def test_vwap_zero_volume_at_session_start_is_nan_until_volume() -> None:
    high, low, close = (
        pd.Series([3.0, 6.0, 9.0]),
        pd.Series([1.0, 2.0, 3.0]),
        pd.Series([2.0, 4, 6]),
    )
    volume = pd.Series([0, 10, 30])
    day = pd.Series(["d1", "d1", "d1"])
    out = ind.vwap(high, low, close, volume, day)
    assert_same(out, ref_vwap(list(high), list(low), list(close), list(volume), list(day)))
    assert math.isnan(out.iloc[0])
    assert out.iloc[2] == pytest.approx((4 * 10 + 6 * 30) / 40)


def test_donchian(bars: pd.DataFrame) -> None:
    h, lo, _, _ = columns(bars)
    lines = ind.donchian(bars["high"], bars["low"], 20)
    upper, middle, lower = ref_donchian(h, lo, 20)
    assert_same(lines.donchian_upper, upper)
    assert_same(lines.donchian_middle, middle)
    assert_same(lines.donchian_lower, lower)


def test_keltner(bars: pd.DataFrame) -> None:
    h, lo, c, _ = columns(bars)
    middle = ref_ema(c, 20)
    width = [1.5 * a for a in ref_atr(h, lo, c, 10)]
    lines = ind.keltner(bars["high"], bars["low"], bars["close"], 20, 10, 1.5)
    assert_same(lines.keltner_middle, middle)
    assert_same(lines.keltner_upper, [m + w for m, w in zip(middle, width, strict=True)])
    assert_same(lines.keltner_lower, [m - w for m, w in zip(middle, width, strict=True)])


@pytest.mark.parametrize("n", [2, 14])
def test_adx(bars: pd.DataFrame, n: int) -> None:
    h, lo, c, _ = columns(bars)
    lines = ind.adx(bars["high"], bars["low"], bars["close"], n)
    adx, plus_di, minus_di = ref_adx(h, lo, c, n)
    assert_same(lines.adx, adx)
    assert_same(lines.plus_di, plus_di)
    assert_same(lines.minus_di, minus_di)


@pytest.mark.parametrize("n", [2, 4, 9, 16, 20, 55])
def test_hma(bars: pd.DataFrame, n: int) -> None:
    _, _, c, _ = columns(bars)
    mine = ind.hma(bars["close"], n)
    assert_same(mine, ref_hma(c, n))
    assert mine.isna().sum() == n + int(math.sqrt(n)) - 2


def test_wma_skips_nothing_across_a_gap(bars: pd.DataFrame) -> None:
    close = bars["close"].copy()
    close.iloc[[0, 50]] = NAN
    assert_same(ind.wma(close, 10), ref_wma([float(x) for x in close], 10))


@pytest.mark.parametrize(("n", "mult"), [(10, 3.0), (7, 2.0), (14, 1.5)])
def test_supertrend(long_bars: pd.DataFrame, n: int, mult: float) -> None:
    h, lo, c, _ = columns(long_bars)
    mine = ind.supertrend(long_bars["high"], long_bars["low"], long_bars["close"], n, mult)
    assert_same(mine, ref_supertrend(h, lo, c, n, mult))
    # Both sides of the price, many times: the flips are exercised.
    above = (long_bars["close"] > mine).to_numpy()[n:]
    assert (np.diff(above.astype(int)) != 0).sum() > 20


def test_heikin_ashi(bars: pd.DataFrame) -> None:
    o = [float(x) for x in bars["open"]]
    h, lo, c, _ = columns(bars)
    lines = ind.heikin_ashi(bars["open"], bars["high"], bars["low"], bars["close"])
    ha_open, ha_close, ha_high, ha_low = ref_heikin_ashi(o, h, lo, c)
    assert_same(lines.ha_open, ha_open)
    assert_same(lines.ha_close, ha_close)
    assert_same(lines.ha_high, ha_high)
    assert_same(lines.ha_low, ha_low)
