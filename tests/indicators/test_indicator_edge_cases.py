"""Flat markets, missing values, short and empty inputs, bad periods, index and names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from barb import indicators as ind


def ohlcv(close: list[float], spread: float = 1.0) -> dict[str, pd.Series]:
    c = pd.Series(close, dtype=np.float64)
    return {
        "high": c + spread,
        "low": c - spread,
        "close": c,
        "volume": pd.Series(np.full(len(c), 100.0)),
    }


def every_line(b: dict[str, pd.Series], day: pd.Series | None = None) -> dict[str, pd.Series]:
    """Every indicator with default periods, by line name."""
    h, lo, c, v = b["high"], b["low"], b["close"], b["volume"]
    if day is None:
        day = pd.Series(np.zeros(len(c)))
    out = {
        "rsi": ind.rsi(c),
        "true_range": ind.true_range(h, lo, c),
        "atr": ind.atr(h, lo, c),
        "cci": ind.cci(h, lo, c),
        "mfi": ind.mfi(h, lo, c, v),
        "obv": ind.obv(c, v),
        "vwap": ind.vwap(h, lo, c, v, day),
    }
    for lines in (
        ind.macd(c),
        ind.bollinger(c),
        ind.stochastic(h, lo, c),
        ind.adx(h, lo, c),
        ind.keltner(h, lo, c),
        ind.donchian(h, lo),
    ):
        out.update(lines.as_dict())
    return out


def test_every_line_is_named_after_its_function_and_keeps_the_index() -> None:
    index = pd.date_range("2024-01-02", periods=80, freq="D")
    b = {k: v.set_axis(index) for k, v in ohlcv(list(100 + np.sin(np.arange(80)))).items()}
    lines = every_line(b, day=pd.Series(index, index=index))
    assert len(lines) == 24
    for name, series in lines.items():
        assert series.name == name
        assert series.index.equals(index)
        assert series.dtype == np.float64


@pytest.mark.parametrize("rows", [0, 1, 5])
def test_short_and_empty_inputs_give_nan_not_errors(rows: int) -> None:
    lines = every_line(ohlcv([100.0 + i for i in range(rows)]))
    for name, series in lines.items():
        assert len(series) == rows
        if name not in ("obv", "vwap", "true_range"):
            assert series.isna().all(), name


def test_flat_market() -> None:
    """No movement at all: the oscillators read neutral, ranges read zero."""
    b = ohlcv([100.0] * 60, spread=0.0)
    lines = every_line(b)
    assert (lines["rsi"].iloc[14:] == 50).all()
    assert (lines["stochastic_k"].iloc[15:] == 50).all()
    assert (lines["mfi"].iloc[14:] == 50).all()
    assert (lines["cci"].iloc[19:] == 0).all()
    assert (lines["atr"].iloc[14:] == 0).all()
    assert (lines["plus_di"].iloc[14:] == 0).all()
    assert (lines["adx"].iloc[27:] == 0).all()
    assert (lines["macd_hist"].iloc[33:] == 0).all()
    assert (lines["obv"] == 100).all()


def test_rsi_holds_its_value_through_a_flat_stretch() -> None:
    moving = list(100 + np.cumsum(np.tile([1.0, -0.5, 0.75, -1.25], 10)))
    close = pd.Series(moving + [moving[-1]] * 30)
    out = ind.rsi(close, 14)
    flat = out.iloc[len(moving) - 1 :]
    np.testing.assert_allclose(flat.to_numpy(), flat.iloc[0], rtol=1e-12)


def test_a_gap_inside_the_data_is_skipped() -> None:
    close = pd.Series(100 + np.sin(np.arange(60) / 3) * 5)
    gapped = close.copy()
    gapped.iloc[40] = np.nan
    ema = ind.ema(gapped, 10)
    assert np.isnan(ema.iloc[40])
    alpha = 2 / 11
    expected = ema.iloc[39] + alpha * (close.iloc[41] - ema.iloc[39])
    assert ema.iloc[41] == pytest.approx(expected, rel=1e-12)
    rsi = ind.rsi(gapped, 14)
    # The changes into and out of the missing close are unknown; RSI carries on after them.
    assert rsi.iloc[40:42].isna().all()
    assert rsi.iloc[42:].notna().all()
    assert rsi.iloc[14:40].equals(ind.rsi(close, 14).iloc[14:40])


def test_integer_columns_are_accepted() -> None:
    close = pd.Series(np.arange(100, 160, dtype=np.int64))
    volume = pd.Series(np.full(60, 7, dtype=np.int64))
    assert (ind.rsi(close).iloc[14:] == 100).all()
    assert ind.obv(close, volume).iloc[-1] == 7 * 60


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: ind.rsi(c, 1), "n must be an integer >= 2"),
        (lambda c: ind.rsi(c, 14.0), "n must be an integer"),
        (lambda c: ind.atr(c, c, c, 0), "n must be an integer >= 1"),
        (lambda c: ind.macd(c, 26, 12), "fast \\(26\\) must be less than slow \\(12\\)"),
        (lambda c: ind.bollinger(c, 20, -1), "k must be >= 0"),
        (lambda c: ind.stochastic(c, c, c, 14, 0), "d must be an integer >= 1"),
    ],
)
def test_bad_periods_are_refused(call: object, message: str) -> None:
    close = pd.Series(np.arange(50, dtype=np.float64))
    with pytest.raises(ValueError, match=message):
        call(close)  # type: ignore[operator]


def test_donchian_window_includes_the_current_bar() -> None:
    high = pd.Series([1.0, 2, 3, 4, 5])
    low = high - 1
    lines = ind.donchian(high, low, 3)
    assert lines.donchian_upper.tolist()[2:] == [3.0, 4.0, 5.0]
    assert lines.donchian_lower.tolist()[2:] == [0.0, 1.0, 2.0]


def _new_lines(b: dict[str, pd.Series]) -> dict[str, pd.Series]:
    h, lo, c = b["high"], b["low"], b["close"]
    out = {
        "wma": ind.wma(c, 20),
        "hma": ind.hma(c, 9),
        "kama": ind.kama(c, 10),
        "sar": ind.sar(h, lo),
        "supertrend": ind.supertrend(h, lo, c),
    }
    out.update(ind.heikin_ashi(c, h, lo, c).as_dict())
    return out


@pytest.mark.parametrize("rows", [0, 1, 5])
def test_the_averages_stops_and_candles_on_short_inputs(rows: int) -> None:
    """Too few bars: empty values (Heikin-Ashi has none to wait for), never an error."""
    lines = _new_lines(ohlcv([100.0 + i for i in range(rows)]))
    for name, series in lines.items():
        assert len(series) == rows and series.name == name and series.dtype == np.float64
        if name.startswith("ha_"):
            assert series.notna().all(), name
        elif name == "sar":
            assert series.iloc[:1].isna().all() and series.iloc[1:].notna().all()
        else:
            assert series.isna().all(), name


def test_the_averages_and_stops_in_a_flat_market() -> None:
    """No movement: the averages are the price; the stops sit on the bar (SAR on its low,
    Supertrend with a zero ATR on its midpoint)."""
    b = ohlcv([100.0] * 60, spread=0.0)
    lines = _new_lines(b)
    for name in ("wma", "hma", "kama"):
        # Weighted sums of equal prices: the price to rounding, not always to the bit.
        np.testing.assert_allclose(lines[name].dropna(), 100, rtol=1e-13, err_msg=name)
        assert lines[name].notna().sum() > 40, name
    assert (lines["supertrend"].iloc[10:] == 100).all()
    assert (lines["sar"].iloc[1:] == 100).all()
    assert (lines["ha_open"] == 100).all() and (lines["ha_close"] == 100).all()
