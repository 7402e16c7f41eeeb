"""Technical indicators as pure functions of pandas Series; no Barb Script inside.

Each function takes the price columns it needs and its periods, and returns a Series on the
input's index (or, for indicators with several lines, a frozen dataclass of Series). Lines are
named as the Barb Script functions that return them: ``<indicator>_<line>``, with the main
line under the indicator's own name:

    rsi                  rsi
    macd                 macd, macd_signal, macd_hist
    bollinger            bollinger_upper, bollinger_middle, bollinger_lower
    stochastic           stochastic_k, stochastic_d
    true_range, atr      true_range, atr
    adx                  adx, plus_di, minus_di
    cci, mfi, obv, vwap  cci, mfi, obv, vwap
    keltner              keltner_upper, keltner_middle, keltner_lower
    donchian             donchian_upper, donchian_middle, donchian_lower
    wma, hma, kama       wma, hma, kama
    sar, supertrend      sar, supertrend
    heikin_ashi          ha_open, ha_close, ha_high, ha_low

Definitions follow TA-Lib, which traders' platforms agree with: Wilder smoothing for RSI, ATR
and ADX, TA-Lib's seeds and warm-ups. Warm-up rows are NaN, never 0. Every docstring states
the exact warm-up and any way Barb departs from TA-Lib; those docstrings are the reference
text for the model.
"""

from barb.indicators.candles import heikin_ashi
from barb.indicators.lines import (
    ADXLines,
    BollingerLines,
    DonchianLines,
    HeikinAshiLines,
    IndicatorLines,
    KeltnerLines,
    MACDLines,
    StochasticLines,
)
from barb.indicators.momentum import cci, macd, rsi, stochastic
from barb.indicators.smoothing import ema, hma, kama, sma, wilder, wma
from barb.indicators.stops import sar, supertrend
from barb.indicators.trend import adx
from barb.indicators.volatility import atr, bollinger, donchian, keltner, true_range
from barb.indicators.volume import mfi, obv, vwap

__all__ = [
    "ADXLines",
    "BollingerLines",
    "DonchianLines",
    "HeikinAshiLines",
    "IndicatorLines",
    "KeltnerLines",
    "MACDLines",
    "StochasticLines",
    "adx",
    "atr",
    "bollinger",
    "cci",
    "donchian",
    "ema",
    "heikin_ashi",
    "hma",
    "kama",
    "keltner",
    "macd",
    "mfi",
    "obv",
    "rsi",
    "sar",
    "sma",
    "stochastic",
    "supertrend",
    "true_range",
    "vwap",
    "wilder",
    "wma",
]
