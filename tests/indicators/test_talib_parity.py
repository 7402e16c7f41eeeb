"""Every indicator against TA-Lib, the reference traders' platforms agree with.

For each line: the warm-up is exactly the documented number of NaN rows, and from the first
row TA-Lib outputs, the values agree to 1e-9 relative. Where Barb deliberately shows a line
earlier than TA-Lib (MACD line, stochastic %K), the extra rows are checked against TA-Lib's
own intermediate function (EMA difference, SMA of fast %K).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from barb import indicators as ind

talib = pytest.importorskip("talib")

RTOL = 1e-9
# Absolute floor for lines that cross zero (MACD histogram, CCI near its mean).
ATOL = 1e-9


def arrays(bars: pd.DataFrame) -> tuple[np.ndarray, ...]:
    return tuple(bars[c].to_numpy(dtype=np.float64) for c in ("high", "low", "close", "volume"))


def assert_matches(mine: pd.Series, ref: np.ndarray, warmup: int) -> None:
    values = mine.to_numpy()
    assert np.isnan(values[:warmup]).all(), f"{mine.name}: warm-up rows must be NaN"
    assert not np.isnan(values[warmup:]).any(), f"{mine.name}: NaN after the warm-up"
    ref_start = int(np.flatnonzero(~np.isnan(ref))[0])
    np.testing.assert_allclose(
        values[ref_start:], ref[ref_start:], rtol=RTOL, atol=ATOL, err_msg=str(mine.name)
    )


@pytest.mark.parametrize("n", [2, 5, 14, 30])
def test_rsi(bars: pd.DataFrame, n: int) -> None:
    _, _, c, _ = arrays(bars)
    assert_matches(ind.rsi(bars["close"], n), talib.RSI(c, n), warmup=n)


@pytest.mark.parametrize(("fast", "slow", "signal"), [(12, 26, 9), (5, 35, 5), (3, 10, 1)])
def test_macd(bars: pd.DataFrame, fast: int, slow: int, signal: int) -> None:
    _, _, c, _ = arrays(bars)
    lines = ind.macd(bars["close"], fast, slow, signal)
    ref_line, ref_signal, ref_hist = talib.MACD(c, fast, slow, signal)
    assert_matches(lines.macd, ref_line, warmup=slow - 1)
    assert_matches(lines.macd_signal, ref_signal, warmup=slow + signal - 2)
    assert_matches(lines.macd_hist, ref_hist, warmup=slow + signal - 2)
    # TA-Lib hides the line's first signal-1 values; they are its two EMAs' difference, with
    # the fast EMA started on the slow one's first bar (TA-Lib EMA over the shifted input).
    shown_early = slice(slow - 1, slow + signal - 2)
    fast_ema = talib.EMA(c[slow - fast :], fast)[fast - 1 :]
    slow_ema = talib.EMA(c, slow)[slow - 1 :]
    expected_line = fast_ema - slow_ema
    np.testing.assert_allclose(
        lines.macd.to_numpy()[shown_early], expected_line[: signal - 1], rtol=RTOL, atol=ATOL
    )


@pytest.mark.parametrize(("n", "k"), [(20, 2.0), (10, 1.5), (2, 3.0)])
def test_bollinger(bars: pd.DataFrame, n: int, k: float) -> None:
    _, _, c, _ = arrays(bars)
    lines = ind.bollinger(bars["close"], n, k)
    upper, middle, lower = talib.BBANDS(c, n, k, k, 0)
    assert_matches(lines.bollinger_upper, upper, warmup=n - 1)
    assert_matches(lines.bollinger_middle, middle, warmup=n - 1)
    assert_matches(lines.bollinger_lower, lower, warmup=n - 1)


@pytest.mark.parametrize(("k", "d", "slowing"), [(14, 3, 3), (5, 3, 1), (9, 1, 4)])
def test_stochastic(bars: pd.DataFrame, k: int, d: int, slowing: int) -> None:
    h, lo, c, _ = arrays(bars)
    lines = ind.stochastic(bars["high"], bars["low"], bars["close"], k, d, slowing)
    slow_k, slow_d = talib.STOCH(h, lo, c, k, slowing, 0, d, 0)
    assert_matches(lines.stochastic_k, slow_k, warmup=k + slowing - 2)
    assert_matches(lines.stochastic_d, slow_d, warmup=k + slowing + d - 3)
    # %K before TA-Lib shows it: the SMA of TA-Lib's fast %K.
    fast_k, _ = talib.STOCHF(h, lo, c, k, 1, 0)
    expected = talib.SMA(fast_k, slowing) if slowing > 1 else fast_k
    early = slice(k + slowing - 2, k + slowing + d - 3)
    np.testing.assert_allclose(lines.stochastic_k.to_numpy()[early], expected[early], rtol=RTOL)


def test_true_range(bars: pd.DataFrame) -> None:
    h, lo, c, _ = arrays(bars)
    assert_matches(
        ind.true_range(bars["high"], bars["low"], bars["close"]), talib.TRANGE(h, lo, c), 1
    )


@pytest.mark.parametrize("n", [1, 2, 14, 30])
def test_atr(bars: pd.DataFrame, n: int) -> None:
    h, lo, c, _ = arrays(bars)
    mine = ind.atr(bars["high"], bars["low"], bars["close"], n)
    assert_matches(mine, talib.ATR(h, lo, c, n), warmup=n)


@pytest.mark.parametrize("n", [2, 7, 14, 25])
def test_adx_and_directional_indicators(bars: pd.DataFrame, n: int) -> None:
    h, lo, c, _ = arrays(bars)
    lines = ind.adx(bars["high"], bars["low"], bars["close"], n)
    assert_matches(lines.adx, talib.ADX(h, lo, c, n), warmup=2 * n - 1)
    assert_matches(lines.plus_di, talib.PLUS_DI(h, lo, c, n), warmup=n)
    assert_matches(lines.minus_di, talib.MINUS_DI(h, lo, c, n), warmup=n)


@pytest.mark.parametrize("n", [2, 14, 20])
def test_cci(bars: pd.DataFrame, n: int) -> None:
    h, lo, c, _ = arrays(bars)
    mine = ind.cci(bars["high"], bars["low"], bars["close"], n)
    assert_matches(mine, talib.CCI(h, lo, c, n), warmup=n - 1)


@pytest.mark.parametrize("n", [2, 14, 30])
@pytest.mark.parametrize(("prices", "tick"), [("bars", 0.25), ("cent_bars", 0.01)])
def test_mfi(request: pytest.FixtureRequest, prices: str, tick: float, n: int) -> None:
    bars = request.getfixturevalue(prices)
    h, lo, c, v = arrays(bars)
    mine = ind.mfi(bars["high"], bars["low"], bars["close"], bars["volume"], n)
    ref = talib.MFI(h, lo, c, v, n)
    # The documented difference: n bars without any change of typical price carry no money
    # flow; Barb reads that as 50, TA-Lib as 0. (With n=2 it happens here.) Unchanged is
    # judged in whole ticks: on cent prices, equal typical prices can differ as floats.
    ticks = pd.Series(np.rint((h + lo + c) / tick))
    no_flow = (ticks.diff() == 0).astype(float).rolling(n).sum().to_numpy() == n
    assert (mine.to_numpy()[no_flow] == 50).all()
    assert (ref[no_flow] == 0).all()
    assert_matches(mine, np.where(no_flow, 50.0, ref), warmup=n)


def test_obv(bars: pd.DataFrame) -> None:
    _, _, c, v = arrays(bars)
    assert_matches(ind.obv(bars["close"], bars["volume"]), talib.OBV(c, v), warmup=0)


@pytest.mark.parametrize("n", [2, 10, 20])
def test_ema_and_wilder(bars: pd.DataFrame, n: int) -> None:
    _, _, c, _ = arrays(bars)
    assert_matches(ind.ema(bars["close"], n), talib.EMA(c, n), warmup=n - 1)
    assert_matches(ind.sma(bars["close"], n), talib.SMA(c, n), warmup=n - 1)
    # Wilder's average is an EMA with period 2n-1 (alpha 1/n), seeded on n values.
    tr = ind.true_range(bars["high"], bars["low"], bars["close"])
    h, lo, _, _ = arrays(bars)
    assert_matches(ind.wilder(tr, n), talib.ATR(h, lo, c, n), warmup=n)


def test_keltner_is_talib_ema_plus_atr(bars: pd.DataFrame) -> None:
    h, lo, c, _ = arrays(bars)
    lines = ind.keltner(bars["high"], bars["low"], bars["close"], 20, 10, 1.5)
    middle = talib.EMA(c, 20)
    width = 1.5 * talib.ATR(h, lo, c, 10)
    assert_matches(lines.keltner_middle, middle, warmup=19)
    assert_matches(lines.keltner_upper, middle + width, warmup=19)
    assert_matches(lines.keltner_lower, middle - width, warmup=19)


def test_donchian_is_talib_max_min(bars: pd.DataFrame) -> None:
    h, lo, _, _ = arrays(bars)
    lines = ind.donchian(bars["high"], bars["low"], 20)
    upper, lower = talib.MAX(h, 20), talib.MIN(lo, 20)
    assert_matches(lines.donchian_upper, upper, warmup=19)
    assert_matches(lines.donchian_lower, lower, warmup=19)
    assert_matches(lines.donchian_middle, (upper + lower) / 2, warmup=19)


def test_leading_nans_are_skipped_like_the_talib_wrapper(bars: pd.DataFrame) -> None:
    """An input that starts with NaNs (e.g. rsi(prev(close, 5))) warms up from its first value."""
    close = bars["close"].copy()
    close.iloc[:5] = np.nan
    c = close.to_numpy()
    assert_matches(ind.rsi(close, 14), talib.RSI(c, 14), warmup=5 + 14)
    assert_matches(ind.ema(close, 10), talib.EMA(c, 10), warmup=5 + 9)
    lines = ind.macd(close)
    assert_matches(lines.macd_signal, talib.MACD(c)[1], warmup=5 + 33)


def test_documented_differences_from_talib() -> None:
    """The places where Barb departs from TA-Lib on purpose, as the docstrings say."""
    flat = np.full(40, 100.0)
    # No movement: RSI and the stochastic read neutral 50 in Barb, 0 in TA-Lib.
    assert (ind.rsi(pd.Series(flat)).iloc[14:] == 50).all()
    assert (talib.RSI(flat)[14:] == 0).all()
    stoch = ind.stochastic(pd.Series(flat), pd.Series(flat), pd.Series(flat))
    assert (stoch.stochastic_d.iloc[17:] == 50).all()
    assert (talib.STOCH(flat, flat, flat)[1][17:] == 0).all()
    # A missing close: TA-Lib's RSI outputs 0 forever after; Barb skips the gap.
    close = 100 + np.sin(np.arange(60) / 3) * 5
    close[40] = np.nan
    assert (talib.RSI(close)[40:] == 0).all()
    barb_rsi = ind.rsi(pd.Series(close)).to_numpy()
    assert np.isnan(barb_rsi[40:42]).all()
    assert ((barb_rsi[42:] > 0) & (barb_rsi[42:] < 100)).all()


@pytest.mark.parametrize("n", [1, 2, 9, 20, 50])
def test_wma(bars: pd.DataFrame, n: int) -> None:
    _, _, c, _ = arrays(bars)
    assert_matches(ind.wma(bars["close"], n), talib.WMA(c, n), warmup=n - 1)


@pytest.mark.parametrize("n", [2, 10, 30])
@pytest.mark.parametrize("prices", ["bars", "cent_bars"])
def test_kama(request: pytest.FixtureRequest, prices: str, n: int) -> None:
    """Recursive from its start: over the whole input, not only after a warm-up."""
    bars = request.getfixturevalue(prices)
    _, _, c, _ = arrays(bars)
    assert_matches(ind.kama(bars["close"], n), talib.KAMA(c, n), warmup=n)


def test_kama_with_leading_nans_starts_at_the_first_value(bars: pd.DataFrame) -> None:
    close = bars["close"].copy()
    close.iloc[:7] = np.nan
    assert_matches(ind.kama(close, 10), talib.KAMA(close.to_numpy(), 10), warmup=7 + 10)


@pytest.mark.parametrize(("acceleration", "maximum"), [(0.02, 0.2), (0.01, 0.1), (0.05, 0.5)])
def test_sar(long_bars: pd.DataFrame, acceleration: float, maximum: float) -> None:
    """Long series with many flips both ways."""
    bars = long_bars
    h, lo, _, _ = arrays(bars)
    mine = ind.sar(bars["high"], bars["low"], acceleration, maximum)
    assert_matches(mine, talib.SAR(h, lo, acceleration, maximum), warmup=1)
    flips = np.diff(np.sign(bars["close"].to_numpy() - mine.to_numpy())[1:])
    assert (flips > 0).sum() > 20 and (flips < 0).sum() > 20


@pytest.mark.parametrize("falls", [True, False])
def test_sar_starts_short_when_the_second_bar_falls_further_than_it_rises(falls: bool) -> None:
    """TA-Lib's first trend: the second bar's -DM against its +DM."""
    high = np.array([10.0, 9.8, 11.0, 10.0, 9.0, 9.5, 10.5, 11.5])
    low = np.array([9.0, 8.0, 9.5, 8.5, 8.0, 8.5, 9.5, 10.5])
    if not falls:
        low[1] = 9.25
    mine = ind.sar(pd.Series(high), pd.Series(low))
    ref = talib.SAR(high, low)
    assert_matches(mine, ref, warmup=1)
    assert (mine.iloc[1] > high[1]) == falls  # short: the stop over the bar
