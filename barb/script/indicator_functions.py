"""Technical indicators as Barb Script functions, one per indicator line.

Each registration reads the price columns it needs from the frame and calls the pure function
in ``barb.indicators``. Lines of one indicator share their parameters (``macd``,
``macd_signal`` and ``macd_hist`` all take ``col, fast, slow, signal``). Every impl carries
its indicator's docstring (definition, exact warm-up, differences from TA-Lib), so the
reference text for the model can be generated from the registry alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from barb import indicators
from barb.errors import ArgumentError
from barb.indicators import IndicatorLines
from barb.indicators.smoothing import KAMA_SLOW, hull_periods
from barb.script.context import EvalContext
from barb.script.functions import Param, UnitRule, register
from barb.script.path_cache import served_path
from barb.script.warmup import (
    Reach,
    ReachRule,
    decay_bars,
    ema_bars,
    everything,
    period_rows,
    row,
    wilder_bars,
    window,
)
from barb.timeframes import timeframe

# TA-Lib's upper bound for periods; larger ones are surely a mistake.
MAX_PERIOD = 100_000
# The lines built on true range, which reaches back to the previous bar's close: on daily
# bars of a part of the day (the first hour) that close is a day earlier (barb.caveats.scope).
READ_PREVIOUS_CLOSE = frozenset(
    {
        "true_range",
        "atr",
        "adx",
        "plus_di",
        "minus_di",
        "keltner_upper",
        "keltner_lower",
        "supertrend",
    }
)

Impl = Callable[..., pd.Series]


def _period(name: str, default: int, minimum: int = 1) -> Param:
    return Param(name, "int", default=default, min=minimum, max=MAX_PERIOD)


def _close_param() -> Param:
    return Param("col", "series", default_column="close")


def _documented_by(pure: Callable[..., Any]) -> Callable[[Impl], Impl]:
    """Give the impl the pure function's docstring, the long-form reference text."""

    def attach(impl: Impl) -> Impl:
        impl.__doc__ = pure.__doc__
        return impl

    return attach


def _bars(ctx: EvalContext, *columns: str) -> list[pd.Series]:
    return [ctx.frame[name] for name in columns]


def _register_lines(
    compute: Callable[..., IndicatorLines],
    pure: Callable[..., Any],
    params: tuple[Param, ...],
    lines: dict[str, tuple[str, str, ReachRule]],
    unit: UnitRule | None = None,
) -> None:
    """Register each line of a multi-line indicator (line name -> summary, example, reach);
    all lines are in one ``unit``."""
    for line, (summary, example, reach) in lines.items():

        def impl(ctx: EvalContext, *args: Any, _line: str = line) -> pd.Series:
            return getattr(compute(ctx, *args), _line)

        impl.__name__ = line
        impl.__qualname__ = line
        impl.__doc__ = pure.__doc__
        register(
            line,
            category="indicator",
            params=params,
            summary=summary,
            example=example,
            reach=reach,
            unit=unit,
        )(impl)


# --- single-line indicators ------------------------------------------------------------


@register(
    "rsi",
    category="indicator",
    params=(_close_param(), _period("n", 14, 2)),
    summary="Relative Strength Index 0-100, Wilder smoothing; >70 overbought, <30 oversold",
    example="rsi(close, 14) < 30",
    reach=lambda a: Reach(wilder_bars(a["n"])),
)
@_documented_by(indicators.rsi)
def rsi(ctx: EvalContext, col: pd.Series, n: int) -> pd.Series:
    return indicators.rsi(col, n)


@register(
    "true_range",
    unit="points",
    category="indicator",
    summary="True range: high-low extended to the previous close across a gap; first bar NaN",
    example="true_range() > 2 * prev(atr(14))",
    reach=lambda a: Reach(1),
)
@_documented_by(indicators.true_range)
def true_range(ctx: EvalContext) -> pd.Series:
    return indicators.true_range(*_bars(ctx, "high", "low", "close"))


@register(
    "atr",
    unit="points",
    category="indicator",
    params=(_period("n", 14),),
    summary=(
        "Average True Range in $price_unit (Wilder); across years atr(14) / close * 100, % of price"
    ),
    example="range > 1.5 * prev(atr(14))",
    reach=lambda a: Reach(1 + wilder_bars(a["n"])),
)
@_documented_by(indicators.atr)
def atr(ctx: EvalContext, n: int) -> pd.Series:
    return indicators.atr(*_bars(ctx, "high", "low", "close"), n)


@register(
    "cci",
    category="indicator",
    params=(_period("n", 20, 2),),
    summary="Commodity Channel Index on typical price; >+100 strong up, <-100 strong down",
    example="cci(20) < -100",
    reach=window("n"),
)
@_documented_by(indicators.cci)
def cci(ctx: EvalContext, n: int) -> pd.Series:
    return indicators.cci(*_bars(ctx, "high", "low", "close"), n)


@register(
    "mfi",
    category="indicator",
    params=(_period("n", 14, 2),),
    summary="Money Flow Index 0-100, a volume-weighted RSI; >80 overbought, <20 oversold",
    example="mfi(14) > 80",
    reach=lambda a: Reach(a["n"]),
)
@_documented_by(indicators.mfi)
def mfi(ctx: EvalContext, n: int) -> pd.Series:
    return indicators.mfi(*_bars(ctx, "high", "low", "close", "volume"), n)


@register(
    "obv",
    unit="contracts",
    category="indicator",
    summary="On-Balance Volume: running total of volume, + on up closes, - on down closes",
    example="obv() > prev(obv(), 5)",
    reach=everything,
)
@_documented_by(indicators.obv)
def obv(ctx: EvalContext) -> pd.Series:
    # A running total from the frame's first bar: a path, kept per process as sar()'s.
    return served_path(ctx, "obv", ("close", "volume"), (), lambda b: indicators.obv(*b))


# Bars up to this many minutes give the session VWAP closely enough to say nothing.
_EXACT_VWAP_MINUTES = 5


@register(
    "vwap",
    unit="price",
    category="indicator",
    # $placeholders: the reference fills in the asking instrument's times (CL's RTH is 09:00).
    summary="Typical-price VWAP from the query session's open each date ($symbol $session "
    "$open, ETH $day_start)",
    example="close > vwap()",
    # Resets each trading date: the planner always widens intraday slices to whole dates.
    reach=period_rows,
)
@_documented_by(indicators.vwap)
def vwap(ctx: EvalContext) -> pd.Series:
    if not ctx.intraday:
        ctx.warn(
            f"vwap() on {ctx.timeframe} bars: each bar is its own session, so VWAP equals "
            "the bar's typical price; use an intraday timeframe for a session VWAP."
        )
    elif (timeframe(ctx.timeframe).minutes or 0) > _EXACT_VWAP_MINUTES:
        # 30-minute bars put 48 of NQ's 4,649 session closes on the other side of the
        # 1-minute VWAP (up to 29 points off), with nothing said.
        ctx.warn(
            f"vwap() on {ctx.timeframe} bars weighs each bar's typical price by its volume: "
            "an approximation of the session VWAP, which 1m bars give to the minute."
        )
    return indicators.vwap(*_bars(ctx, "high", "low", "close", "volume", "trading_date"))


@register(
    "wma",
    unit="same",
    category="indicator",
    params=(_close_param(), _period("n", 20)),
    summary="Weighted moving average: weights n..1, newest heaviest (TA-Lib WMA)",
    example="close > wma(close, 20)",
    reach=window("n"),
)
@_documented_by(indicators.wma)
def wma(ctx: EvalContext, col: pd.Series, n: int) -> pd.Series:
    return indicators.wma(col, n)


def _hull_reach(args: dict[str, Any]) -> Reach:
    _, root = hull_periods(args["n"])
    return Reach(args["n"] - 1 + root - 1)


@register(
    "hma",
    unit="same",
    category="indicator",
    params=(_close_param(), _period("n", 9, 2)),
    summary="Hull moving average: WMA(2*WMA(n/2) - WMA(n), sqrt(n)), n/2 and sqrt(n) rounded down",
    example="hma(close, 9) > prev(hma(close, 9))",
    reach=_hull_reach,
)
@_documented_by(indicators.hma)
def hma(ctx: EvalContext, col: pd.Series, n: int) -> pd.Series:
    return indicators.hma(col, n)


@register(
    "kama",
    unit="same",
    category="indicator",
    params=(_close_param(), _period("n", 10, 2)),
    summary="Kaufman adaptive MA: efficiency over n bars, between EMA(2) and EMA(30) (TA-Lib KAMA)",
    example="close > kama(close, 10)",
    # Its slowest step keeps 1 - (2/31)^2 of the value before, so its start is forgotten
    # only after thousands of bars, as an EMA(480)'s.
    reach=lambda a: Reach(a["n"] + decay_bars(KAMA_SLOW**2)),
)
@_documented_by(indicators.kama)
def kama(ctx: EvalContext, col: pd.Series, n: int) -> pd.Series:
    return indicators.kama(col, n)


@register(
    "sar",
    unit="price",
    category="indicator",
    params=(
        Param("acceleration", "number", default=0.02, min=0.001, max=1),
        Param("maximum", "number", default=0.2, min=0.001, max=1),
    ),
    summary="Parabolic SAR stop on high/low (TA-Lib SAR); long while close > sar()",
    example="close > sar(0.02, 0.2)",
    # A path: each stop depends on every bar before it.
    reach=everything,
)
@_documented_by(indicators.sar)
def sar(ctx: EvalContext, acceleration: float, maximum: float) -> pd.Series:
    if acceleration > maximum:
        raise ArgumentError(
            f"sar needs acceleration <= maximum, got acceleration={acceleration}, "
            f"maximum={maximum}.",
            step=ctx.step,
            hint="The usual setting is sar(0.02, 0.2): the step, then its cap.",
        )
    args = (acceleration, maximum)
    return served_path(ctx, "sar", ("high", "low"), args, lambda b: indicators.sar(*b, *args))


@register(
    "supertrend",
    unit="price",
    category="indicator",
    params=(_period("n", 10), Param("mult", "number", default=3, min=0.1, max=100)),
    summary="Supertrend stop, mult * Wilder ATR(n) from (high+low)/2 (as TradingView); "
    "up: close > it",
    example="close > supertrend(10, 3)",
    # A path: each band depends on every bar before it.
    reach=everything,
)
@_documented_by(indicators.supertrend)
def supertrend(ctx: EvalContext, n: int, mult: float) -> pd.Series:
    args = (n, mult)
    return served_path(
        ctx,
        "supertrend",
        ("high", "low", "close"),
        args,
        lambda b: indicators.supertrend(*b, *args),
    )


# --- multi-line indicators -------------------------------------------------------------


def _macd(ctx: EvalContext, col: pd.Series, fast: int, slow: int, signal: int) -> IndicatorLines:
    if fast >= slow:
        raise ArgumentError(
            f"macd needs fast < slow, got fast={fast}, slow={slow}.",
            step=ctx.step,
            hint="Swap them: the usual setting is macd(close, 12, 26, 9).",
        )
    return indicators.macd(col, fast, slow, signal)


_MACD_PARAMS = (
    _close_param(),
    _period("fast", 12, 2),
    _period("slow", 26, 2),
    _period("signal", 9),
)
_register_lines(
    _macd,
    indicators.macd,
    _MACD_PARAMS,
    {
        "macd": (
            "MACD line: EMA(fast) - EMA(slow) of col; zero-line cross up: macd() > 0 and "
            "prev(macd()) <= 0",
            "macd(close, 12, 26, 9) > macd_signal(close, 12, 26, 9)",
            lambda a: Reach(ema_bars(a["slow"])),
        ),
        "macd_signal": (
            "MACD signal line: EMA(signal) of the MACD line",
            "macd_signal(close, 12, 26, 9)",
            lambda a: Reach(ema_bars(a["slow"]) + ema_bars(a["signal"])),
        ),
        "macd_hist": (
            "MACD histogram: MACD line - signal line; its sign change is the signal-line "
            "cross, not the zero line",
            "macd_hist() > 0 and prev(macd_hist()) <= 0",
            lambda a: Reach(ema_bars(a["slow"]) + ema_bars(a["signal"])),
        ),
    },
    unit="points",
)


def _bollinger(ctx: EvalContext, col: pd.Series, n: int, k: float) -> IndicatorLines:
    return indicators.bollinger(col, n, k)


_register_lines(
    _bollinger,
    indicators.bollinger,
    (_close_param(), _period("n", 20, 2), Param("k", "number", default=2, min=0, max=10)),
    {
        "bollinger_upper": (
            "Bollinger upper band: SMA(col, n) + k population std devs",
            "close > bollinger_upper(close, 20, 2)",
            window("n"),
        ),
        "bollinger_middle": (
            "Bollinger middle band: SMA(col, n)",
            "bollinger_middle(close, 20, 2)",
            window("n"),
        ),
        "bollinger_lower": (
            "Bollinger lower band: SMA(col, n) - k population std devs",
            "close < bollinger_lower(close, 20, 2)",
            window("n"),
        ),
    },
    unit="same",
)


def _stochastic(ctx: EvalContext, k: int, d: int, slowing: int) -> IndicatorLines:
    return indicators.stochastic(*_bars(ctx, "high", "low", "close"), k, d, slowing)


_register_lines(
    _stochastic,
    indicators.stochastic,
    (_period("k", 14), _period("d", 3), _period("slowing", 3)),
    {
        "stochastic_k": (
            "Slow stochastic %K 0-100: close within the k-bar high-low range, SMA'd by slowing",
            "stochastic_k(14, 3, 3) < 20",
            lambda a: Reach(a["k"] + a["slowing"]),
        ),
        "stochastic_d": (
            "Stochastic %D: SMA(d) of %K; %K crossing above %D is the classic buy signal",
            "stochastic_k() > stochastic_d() and prev(stochastic_k()) <= prev(stochastic_d())",
            lambda a: Reach(a["k"] + a["slowing"] + a["d"]),
        ),
    },
)


def _adx(ctx: EvalContext, n: int) -> IndicatorLines:
    return indicators.adx(*_bars(ctx, "high", "low", "close"), n)


_register_lines(
    _adx,
    indicators.adx,
    (_period("n", 14, 2),),
    {
        "adx": (
            "Average Directional Index 0-100, Wilder; trend strength: >25 trending, <20 ranging",
            "adx(14) > 25",
            # DX from Wilder-smoothed +DM/-DM/TR, then ADX as Wilder's smoothing of DX.
            lambda a: Reach(1 + 2 * wilder_bars(a["n"])),
        ),
        "plus_di": (
            "+DI 0-100: upward directional movement (part of ADX); above minus_di = uptrend",
            "plus_di(14) > minus_di(14)",
            lambda a: Reach(1 + wilder_bars(a["n"])),
        ),
        "minus_di": (
            "-DI 0-100: downward directional movement (part of ADX)",
            "minus_di(14) > plus_di(14)",
            lambda a: Reach(1 + wilder_bars(a["n"])),
        ),
    },
)


def _keltner(ctx: EvalContext, n: int, atr_n: int, mult: float) -> IndicatorLines:
    return indicators.keltner(*_bars(ctx, "high", "low", "close"), n, atr_n, mult)


_register_lines(
    _keltner,
    indicators.keltner,
    (_period("n", 20), _period("atr_n", 10), Param("mult", "number", default=1.5, min=0, max=10)),
    {
        "keltner_upper": (
            "Keltner upper channel: EMA(close, n) + mult * ATR(atr_n)",
            "close > keltner_upper(20, 10, 1.5)",
            lambda a: Reach(max(ema_bars(a["n"]), 1 + wilder_bars(a["atr_n"]))),
        ),
        "keltner_middle": (
            "Keltner middle line: EMA(close, n)",
            "keltner_middle(20, 10, 1.5)",
            lambda a: Reach(ema_bars(a["n"])),
        ),
        "keltner_lower": (
            "Keltner lower channel: EMA(close, n) - mult * ATR(atr_n)",
            "close < keltner_lower(20, 10, 1.5)",
            lambda a: Reach(max(ema_bars(a["n"]), 1 + wilder_bars(a["atr_n"]))),
        ),
    },
    unit="price",
)


def _donchian(ctx: EvalContext, n: int) -> IndicatorLines:
    return indicators.donchian(*_bars(ctx, "high", "low"), n)


_register_lines(
    _donchian,
    indicators.donchian,
    (_period("n", 20),),
    {
        "donchian_upper": (
            "Highest high of n bars, this one included; breakout: close > prev(donchian_upper(n))",
            "high > prev(donchian_upper(20))",
            window("n"),
        ),
        "donchian_middle": (
            "Donchian middle: midpoint of the n-bar highest high and lowest low",
            "donchian_middle(20)",
            window("n"),
        ),
        "donchian_lower": (
            "Lowest low of n bars, this one included; breakdown: close < prev(donchian_lower(n))",
            "low < prev(donchian_lower(20))",
            window("n"),
        ),
    },
    unit="price",
)


def _heikin_ashi(ctx: EvalContext) -> IndicatorLines:
    return indicators.heikin_ashi(*_bars(ctx, "open", "high", "low", "close"))


def _heikin_ashi_open(_: dict[str, Any]) -> Reach:
    """ha_open halves its start's weight each bar: forgotten (1e-12) after 40."""
    return Reach(1 + decay_bars(0.5))


_register_lines(
    _heikin_ashi,
    indicators.heikin_ashi,
    (),
    {
        "ha_open": (
            "Heikin-Ashi open: mean of the previous HA open and close; green: "
            "ha_close() > ha_open()",
            "streak(ha_close() > ha_open())",
            _heikin_ashi_open,
        ),
        "ha_close": (
            "Heikin-Ashi close: (open + high + low + close) / 4",
            "ha_close() > ha_open()",
            row,
        ),
        "ha_high": (
            "Heikin-Ashi high: max(high, ha_open, ha_close)",
            "ha_high() - ha_low()",
            _heikin_ashi_open,
        ),
        "ha_low": (
            "Heikin-Ashi low: min(low, ha_open, ha_close); no lower wick: ha_low() == ha_open()",
            "ha_low() == ha_open() and ha_close() > ha_open()",
            _heikin_ashi_open,
        ),
    },
    unit="price",
)
