"""Multi-line indicators return their lines in one small frozen dataclass per indicator.

One naming scheme everywhere: each field is named exactly as the Barb Script function that
returns that line, ``<indicator>_<line>`` (``bollinger_upper``, ``stochastic_d``), except the
indicator's main line, which carries the indicator's own name (``macd``, ``adx``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import pandas as pd


@dataclass(frozen=True)
class IndicatorLines:
    """Base of the line bundles; ``as_dict`` gives the lines by their Barb Script names."""

    def as_dict(self) -> dict[str, pd.Series]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class MACDLines(IndicatorLines):
    macd: pd.Series
    macd_signal: pd.Series
    macd_hist: pd.Series


@dataclass(frozen=True)
class BollingerLines(IndicatorLines):
    bollinger_upper: pd.Series
    bollinger_middle: pd.Series
    bollinger_lower: pd.Series


@dataclass(frozen=True)
class StochasticLines(IndicatorLines):
    stochastic_k: pd.Series
    stochastic_d: pd.Series


@dataclass(frozen=True)
class KeltnerLines(IndicatorLines):
    keltner_upper: pd.Series
    keltner_middle: pd.Series
    keltner_lower: pd.Series


@dataclass(frozen=True)
class DonchianLines(IndicatorLines):
    donchian_upper: pd.Series
    donchian_middle: pd.Series
    donchian_lower: pd.Series


@dataclass(frozen=True)
class ADXLines(IndicatorLines):
    adx: pd.Series
    plus_di: pd.Series
    minus_di: pd.Series


@dataclass(frozen=True)
class HeikinAshiLines(IndicatorLines):
    ha_open: pd.Series
    ha_close: pd.Series
    ha_high: pd.Series
    ha_low: pd.Series
