"""Indicators Barb Script has no function for but writes with the ones it has.

A trader asks for Williams %R, ROC or %B by name; the model, told only "Function 'willr' does
not exist… see the FUNCTIONS list", had to guess the formula, and names one edit away from a
real function ran that one instead: tr() got "did you mean atr()?" (a 14-bar average for one
bar's true range), natr() atr(), dema() ema(), vwma() vwap(), ad() adx(). The unknown-function
error gives these forms instead (``barb.script.library.OTHER_FORMS``); each is checked against
TA-Lib or pandas in tests/indicators/test_indicator_forms.py, so a form the model is told
computes what the name means.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class IndicatorForm:
    """An indicator as map columns: ``lines`` (name, Barb Script expression) in order, later
    ones reading earlier ones; ``note`` says what it is, with its usual reading."""

    lines: tuple[tuple[str, str], ...]
    note: str

    def text(self) -> str:
        """The form as the hint writes it: the expression (or "name = expression, …"), then
        ": " and the note."""
        if len(self.lines) == 1:
            written = self.lines[0][1]
        else:
            written = ", ".join(f"{name} = {expr}" for name, expr in self.lines)
        return f"{written}: {self.note}"


# Accumulation/distribution: the close's place in the bar's range, -1 to 1, times volume (a
# bar with no range adds nothing, as in TA-Lib).
_MONEY_FLOW = "if(high > low, ((close - low) - (high - close)) / (high - low) * volume, 0)"
_BANDS = "bollinger_upper(close, 20, 2) - bollinger_lower(close, 20, 2)"

_FORMS: dict[tuple[str, ...], IndicatorForm] = {
    ("williams_r", "willr", "williams", "williams_percent_r", "percent_r", "wpr"): IndicatorForm(
        (
            (
                "willr",
                "(close - rolling_max(high, 14)) / (rolling_max(high, 14) - rolling_min(low, 14))"
                " * 100",
            ),
        ),
        "Williams %R(14), -100 to 0, below -80 oversold (= stochastic_k(14, 3, 1) - 100)",
    ),
    ("roc", "rate_of_change"): IndicatorForm(
        (("roc", "(close / prev(close, 10) - 1) * 100"),), "ROC(10), the 10-bar change in %"
    ),
    ("natr", "atr_percent", "atr_pct"): IndicatorForm(
        (("natr", "atr(14) / close * 100"),), "ATR(14) in % of the close, comparable across years"
    ),
    ("dema",): IndicatorForm(
        (("dema", "2 * ema(close, 20) - ema(ema(close, 20), 20)"),), "double EMA(20)"
    ),
    ("tema",): IndicatorForm(
        (
            ("e1", "ema(close, 20)"),
            ("e2", "ema(e1, 20)"),
            ("tema", "3 * e1 - 3 * e2 + ema(e2, 20)"),
        ),
        "triple EMA(20), three map columns",
    ),
    ("vwma",): IndicatorForm(
        (("vwma", "rolling_sum(close * volume, 20) / rolling_sum(volume, 20)"),),
        "volume-weighted moving average of 20 bars (vwap() is the session's VWAP)",
    ),
    ("percent_b", "pct_b", "bollinger_b", "bollinger_percent_b", "bb_percent"): IndicatorForm(
        (("pct_b", f"(close - bollinger_lower(close, 20, 2)) / ({_BANDS})"),),
        "Bollinger %B, 0 at the lower band, 1 at the upper",
    ),
    ("bandwidth", "bollinger_bandwidth", "bb_width", "bbw"): IndicatorForm(
        (("bandwidth", f"({_BANDS}) / bollinger_middle(close, 20, 2)"),),
        "Bollinger bandwidth; a squeeze: bandwidth <= rolling_min(bandwidth, 126), its lowest"
        " in 6 months",
    ),
    ("ad", "adl", "accumulation_distribution", "chaikin_ad"): IndicatorForm(
        (("ad", f"cumsum({_MONEY_FLOW})"),),
        "the accumulation/distribution line, a running total from the period's first bar",
    ),
    ("cmf", "chaikin_money_flow"): IndicatorForm(
        (("cmf", f"rolling_sum({_MONEY_FLOW}, 20) / rolling_sum(volume, 20)"),),
        "Chaikin money flow(20), -1 to 1",
    ),
    ("zscore", "z_score"): IndicatorForm(
        (("z", "(close - rolling_mean(close, 20)) / rolling_std(close, 20)"),),
        "the close's z-score against 20 bars",
    ),
    ("hl2", "median_price", "medprice"): IndicatorForm(
        (("hl2", "(high + low) / 2"),), "the bar's midpoint"
    ),
    ("hlc3", "typical_price", "typprice"): IndicatorForm(
        (("hlc3", "(high + low + close) / 3"),), "the typical price"
    ),
    ("ichimoku",): IndicatorForm(
        (
            ("tenkan", "donchian_middle(9)"),
            ("kijun", "donchian_middle(26)"),
            ("span_a", "prev((tenkan + kijun) / 2, 26)"),
            ("span_b", "prev(donchian_middle(52), 26)"),
        ),
        "Ichimoku's lines, the spans shifted 26 bars forward as charted (the cloud under "
        "today's bar)",
    ),
    ("rvol", "relative_volume"): IndicatorForm(
        (("rvol", "volume / prev(rolling_mean(volume, 20))"),),
        "volume against the 20 bars before; intraday, against the same time of the 20 days "
        "before: volume * 20 / (rolling_sum(volume, 21, 'time') - volume)",
    ),
    ("pct_change", "returns", "change_pct", "pct_chg"): IndicatorForm(
        (("chg_pct", "(close / prev(close) - 1) * 100"),), "the change from the previous bar in %"
    ),
}

INDICATOR_FORMS: Mapping[str, IndicatorForm] = MappingProxyType(
    {name: form for names, form in _FORMS.items() for name in names}
)

# What no expression of Barb's functions gives, where a did-you-mean would run a near name that
# answers something else: alma() got "did you mean kama()?", bfill() "ffill()?" (the other
# direction in time).
_AVERAGES = "rolling_mean(col, n) (SMA), ema, wma, hma and kama"
ABSENT: Mapping[str, str] = MappingProxyType(
    {
        **dict.fromkeys(
            ("zigzag", "zig_zag", "renko"),
            "Barb Script has no ZigZag or Renko (a ZigZag's last swing is redrawn by later bars, "
            "Renko bricks are not time bars): say so; the nearest it has are "
            "donchian_upper(n) / donchian_lower(n) for swing highs and lows, and sar() or "
            "supertrend() for a trend that flips",
        ),
        **dict.fromkeys(
            ("alma", "mama", "fama", "vama", "swma", "vidya", "frama", "t3"),
            f"Barb Script has no such moving average: say so; its averages are {_AVERAGES}",
        ),
        **dict.fromkeys(
            ("bfill", "backfill", "back_fill", "backward_fill"),
            "Barb Script has no backward fill (it would give a row a later row's value): say "
            "so; ffill(col) carries the last value before a row forward",
        ),
    }
)

# Other names for a multi-line indicator, whose lines are Barb's functions
# (``barb.script.validator.indicator_lines``): bbands() is bollinger_upper() and the others.
FAMILY_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "bbands": "bollinger",
        "bollinger_bands": "bollinger",
        "bb": "bollinger",
        "keltner_channel": "keltner",
        "keltner_channels": "keltner",
        "donchian_channel": "donchian",
        "donchian_channels": "donchian",
        "stoch": "stochastic",
        "heikin_ashi": "ha",
        "heikinashi": "ha",
        "heiken_ashi": "ha",
    }
)


def form_text(name: str) -> str | None:
    """What get_concept says of an indicator Barb writes as an expression (or has not):
    "Williams %R" -> its form; None for another name."""
    key = "_".join(name.lower().replace("%", " percent ").replace("-", " ").split())
    if key in INDICATOR_FORMS:
        return f"{name} is no function in Barb Script; write it {INDICATOR_FORMS[key].text()}."
    if key in ABSENT:
        return f"{ABSENT[key]}."
    return None
