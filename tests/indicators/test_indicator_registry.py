"""The indicators as Barb Script functions: declared in the registry and called as the
evaluator calls them, ``impl(ctx, *args)`` over a hand-made frame."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import barb.script.indicator_functions  # noqa: F401  (registers the indicators)
from barb import indicators as ind
from barb.errors import ArgumentError
from barb.script.context import EvalContext
from barb.script.library import library, lookup

SIGNATURES = {
    "rsi": "rsi(col=close, n=14)",
    "macd": "macd(col=close, fast=12, slow=26, signal=9)",
    "macd_signal": "macd_signal(col=close, fast=12, slow=26, signal=9)",
    "macd_hist": "macd_hist(col=close, fast=12, slow=26, signal=9)",
    "bollinger_upper": "bollinger_upper(col=close, n=20, k=2)",
    "bollinger_middle": "bollinger_middle(col=close, n=20, k=2)",
    "bollinger_lower": "bollinger_lower(col=close, n=20, k=2)",
    "stochastic_k": "stochastic_k(k=14, d=3, slowing=3)",
    "stochastic_d": "stochastic_d(k=14, d=3, slowing=3)",
    "true_range": "true_range()",
    "atr": "atr(n=14)",
    "adx": "adx(n=14)",
    "plus_di": "plus_di(n=14)",
    "minus_di": "minus_di(n=14)",
    "cci": "cci(n=20)",
    "mfi": "mfi(n=14)",
    "obv": "obv()",
    "vwap": "vwap()",
    "keltner_upper": "keltner_upper(n=20, atr_n=10, mult=1.5)",
    "keltner_middle": "keltner_middle(n=20, atr_n=10, mult=1.5)",
    "keltner_lower": "keltner_lower(n=20, atr_n=10, mult=1.5)",
    "donchian_upper": "donchian_upper(n=20)",
    "donchian_middle": "donchian_middle(n=20)",
    "donchian_lower": "donchian_lower(n=20)",
    "wma": "wma(col=close, n=20)",
    "hma": "hma(col=close, n=9)",
    "kama": "kama(col=close, n=10)",
    "sar": "sar(acceleration=0.02, maximum=0.2)",
    "supertrend": "supertrend(n=10, mult=3)",
    "ha_open": "ha_open()",
    "ha_close": "ha_close()",
    "ha_high": "ha_high()",
    "ha_low": "ha_low()",
}


def no_sessions(name: str) -> pd.DataFrame:
    raise AssertionError(f"indicators never read other sessions ({name})")


@pytest.fixture
def ctx(intraday_frame: pd.DataFrame) -> EvalContext:
    return EvalContext(frame=intraday_frame, timeframe="5m", session_bars=no_sessions)


def call(name: str, ctx: EvalContext, *args: object) -> pd.Series:
    spec = lookup(name)
    assert spec is not None
    return spec.impl(ctx, *args)


def test_every_indicator_line_is_registered_with_its_defaults() -> None:
    for name, signature in SIGNATURES.items():
        spec = library()[name]
        assert spec.category == "indicator"
        assert spec.signature() == signature
        assert "\n" not in spec.summary and len(spec.summary) <= 100, name
        assert spec.example, name
        # The long reference text (definition, warm-up, TA-Lib differences) rides on the impl.
        assert "Warm-up:" in (spec.impl.__doc__ or ""), name
    assert {n for n, s in library().items() if s.category == "indicator"} == set(SIGNATURES)


def test_series_parameters_default_to_close() -> None:
    for name in ("rsi", "macd", "bollinger_upper", "wma", "hma", "kama"):
        col = library()[name].params[0]
        assert (col.name, col.kind, col.default_column) == ("col", "series", "close")


def test_rsi_and_atr_through_the_registry(ctx: EvalContext) -> None:
    f = ctx.frame
    pd.testing.assert_series_equal(call("rsi", ctx, f["close"], 14), ind.rsi(f["close"], 14))
    # Any series can be the input, e.g. rsi(high, 5).
    pd.testing.assert_series_equal(call("rsi", ctx, f["high"], 5), ind.rsi(f["high"], 5))
    atr = call("atr", ctx, 14)
    assert atr.iloc[:14].isna().all() and atr.iloc[14:].notna().all()
    pd.testing.assert_series_equal(atr, ind.atr(f["high"], f["low"], f["close"], 14))


def test_multi_line_indicators_through_the_registry(ctx: EvalContext) -> None:
    f = ctx.frame
    macd = ind.macd(f["close"], 12, 26, 9)
    hist = call("macd_hist", ctx, f["close"], 12, 26, 9)
    pd.testing.assert_series_equal(hist, macd.macd_hist)
    stoch = ind.stochastic(f["high"], f["low"], f["close"], 14, 3, 3)
    pd.testing.assert_series_equal(call("stochastic_d", ctx, 14, 3, 3), stoch.stochastic_d)
    upper = call("keltner_upper", ctx, 20, 10, 1.5)
    lower = call("keltner_lower", ctx, 20, 10, 1.5)
    middle = call("keltner_middle", ctx, 20, 10, 1.5)
    np.testing.assert_allclose((upper + lower).iloc[19:] / 2, middle.iloc[19:])


def test_vwap_resets_on_each_trading_date(ctx: EvalContext) -> None:
    f = ctx.frame
    out = call("vwap", ctx)
    typical = (f["high"] + f["low"] + f["close"]) / 3
    for _, rows in f.groupby("trading_date"):
        first = rows.index[0]
        assert out[first] == pytest.approx(typical[first], rel=1e-12)
        expected = (typical[rows.index] * rows["volume"]).cumsum() / rows["volume"].cumsum()
        np.testing.assert_allclose(out[rows.index], expected, rtol=1e-12)
    assert ctx.warnings == []


def test_vwap_on_daily_bars_warns(ctx: EvalContext) -> None:
    ctx.timeframe = "daily"
    call("vwap", ctx)
    assert any("vwap() on daily bars" in w for w in ctx.warnings)


def test_sar_with_acceleration_over_its_maximum_is_an_argument_error(ctx: EvalContext) -> None:
    with pytest.raises(ArgumentError) as caught:
        call("sar", ctx, 0.3, 0.2)
    error = caught.value.to_dict()
    assert "acceleration <= maximum" in error["message"]
    assert "sar(0.02, 0.2)" in error["hint"]


def test_macd_with_fast_not_below_slow_is_an_argument_error(ctx: EvalContext) -> None:
    with pytest.raises(ArgumentError) as caught:
        call("macd", ctx, ctx.frame["close"], 26, 12, 9)
    error = caught.value.to_dict()
    assert error["error_type"] == "ArgumentError"
    assert "fast < slow" in error["message"]
    assert "macd(close, 12, 26, 9)" in error["hint"]


def test_indicators_in_expressions(ctx: EvalContext) -> None:
    """Through Barb's own parser and evaluator: defaults, skipped leading series, nesting."""
    from barb.script.evaluator import evaluate
    from barb.script.parser import parse_expression

    def run(text: str) -> pd.Series:
        return evaluate(parse_expression(text), ctx)

    close = ctx.frame["close"]
    expected = ind.rsi(close, 14).to_numpy()
    for text in ("rsi()", "rsi(14)", "rsi(close, 14)"):
        np.testing.assert_array_equal(run(text).to_numpy(), expected)
    # An indicator of an indicator warms up from its input's first value: 9 + 14 rows.
    nested = run("rsi(ema(close, 10), 14)")
    assert nested.iloc[:23].isna().all() and nested.iloc[23:].notna().all()
    crossed = run("macd_hist() > 0 and prev(macd_hist()) <= 0")
    # Unknown while MACD warms up, then true or false.
    assert crossed.iloc[0] is pd.NA and crossed.iloc[40:].notna().all()
    assert crossed.fillna(False).any()


def _reach_back(name: str, **args: object) -> int:
    spec = library()[name]
    literal = {p.name: p.default for p in spec.params if p.kind != "series"}
    back = spec.reach({**literal, **args}).back
    assert back is not None
    return back


def test_kamas_reach_is_where_its_start_no_longer_shows() -> None:
    """KAMA is recursive: a period must read enough bars before it that the answer is the
    one over all history. Over a choppy market (efficiency near 0, the slowest step) the
    value computed from ``reach`` bars before a row equals the all-history one to 1e-9; from
    a tenth of them it does not."""
    rng = np.random.default_rng(5)
    close = pd.Series(20000 + np.where(np.arange(30000) % 2, 40.0, -40.0) + rng.normal(0, 1, 30000))
    close.iloc[:5000] += 3000  # a start far from where the row is
    back = _reach_back("kama", n=10)
    row = len(close) - 1
    whole = ind.kama(close, 10).iloc[row]
    assert ind.kama(close.iloc[row - back :], 10).iloc[-1] == pytest.approx(whole, rel=1e-9)
    cut = ind.kama(close.iloc[row - back // 10 :], 10).iloc[-1]
    assert cut != pytest.approx(whole, rel=1e-6)


def test_heikin_ashi_opens_reach_is_where_its_start_no_longer_shows(bars: pd.DataFrame) -> None:
    back = _reach_back("ha_open")
    lines = ind.heikin_ashi(bars["open"], bars["high"], bars["low"], bars["close"])
    tail = bars.iloc[-back - 1 :]
    cut = ind.heikin_ashi(tail["open"], tail["high"], tail["low"], tail["close"])
    assert cut.ha_open.iloc[-1] == pytest.approx(lines.ha_open.iloc[-1], rel=1e-12)
    assert _reach_back("ha_close") == 0


@pytest.mark.parametrize("name", ["sar", "supertrend"])
def test_the_stops_read_all_history(name: str) -> None:
    """A stop is a path: whatever a period cuts off changes it."""
    assert library()[name].reach({"n": 10, "mult": 3, "acceleration": 0.02}).back is None
