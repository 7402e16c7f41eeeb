"""Everything Barb Script knows, as one explicit value: builtins, indicators, named patterns.

``library()`` loads every module that registers functions and returns the complete, read-only
table, once per process. The validator, the evaluator, the planner and the reference texts
all read it, so none of them can see a partial table, whatever was imported first.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from types import MappingProxyType

from barb.script import (
    ast,
    builtins,
    calendar_functions,
    indicator_functions,
    patterns,
    shape_aggregates,
)
from barb.script.functions import FUNCTIONS, FunctionSpec
from barb.script.indicator_forms import INDICATOR_FORMS

# Loaded for their registrations.
_REGISTERING = (builtins, shape_aggregates, calendar_functions, indicator_functions)

# What traders (and other tools) call functions Barb names otherwise, too far in spelling for
# a did-you-mean ("sma" is nearest sum): errors and get_concept point from them to Barb's.
OTHER_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "sma": "rolling_mean",
        "ma": "rolling_mean",
        "moving_average": "rolling_mean",
        "avg": "mean",
        "average": "mean",
        "stdev": "std",
        "stddev": "std",
        "skewness": "skew",
        "kurtosis": "kurt",
        "quantile": "percentile",
        "most_frequent": "mode",
        "most_common": "mode",
        "highest": "rolling_max",
        "lowest": "rolling_min",
        "lag": "prev",
        "shift": "prev",
        "lead": "next",
        # Nearer in spelling to rolling_max / rolling_rank / rolling_count than to these.
        "rolling_avg": "rolling_mean",
        "rolling_average": "rolling_mean",
        "rolling_corr": "rolling_correlation",
        "corr": "correlation",
        "ewm": "ema",
        "ewma": "ema",
        # SQL's and spreadsheets' names for a count of days between two dates.
        "datediff": "days_between",
        "date_diff": "days_between",
        # Charting tools' names for indicator lines: tr got "did you mean atr()?" (an average
        # of 14 bars for one bar's true range), signal "sign()".
        "tr": "true_range",
        "truerange": "true_range",
        "signal": "macd_signal",
        "signal_line": "macd_signal",
        "macd_signal_line": "macd_signal",
        "macd_line": "macd",
        "histogram": "macd_hist",
        "macd_histogram": "macd_hist",
        "stoch_k": "stochastic_k",
        "stoch_d": "stochastic_d",
        "bb_upper": "bollinger_upper",
        "upper_band": "bollinger_upper",
        "bb_lower": "bollinger_lower",
        "lower_band": "bollinger_lower",
        "bb_middle": "bollinger_middle",
        "bb_mid": "bollinger_middle",
        "std_dev": "std",
        "psar": "sar",
        "parabolic_sar": "sar",
        "parabolic": "sar",
        "super_trend": "supertrend",
        "hull": "hma",
        "hull_ma": "hma",
        "hullma": "hma",
        "lwma": "wma",
        "weighted_ma": "wma",
        "weighted_moving_average": "wma",
        "kaufman": "kama",
        "forward_fill": "ffill",
        "fill_forward": "ffill",
        "fillna": "ffill",
        "locf": "ffill",
    }
)


# Other tools' names for what Barb Script writes as an expression of its functions.
# Each was a did-you-mean away from a function that runs and answers something else
# (weekday → week, diff → if, rolling_var → rolling_max, max_drawdown → gap_down). A cross
# is a comparison with the bar before: crossover(a, b) had got "see the FUNCTIONS list".
_CROSS_UP = "a > b and prev(a) <= prev(b) (a crosses above b)"
_CROSS_DOWN = "a < b and prev(a) >= prev(b) (a crosses below b)"
_CROSS = (
    "a > b and prev(a) <= prev(b) when a crosses above b, "
    "a < b and prev(a) >= prev(b) when it crosses below"
)
OTHER_FORMS: Mapping[str, str] = MappingProxyType(
    {
        "var": "std(col) ** 2",
        "variance": "std(col) ** 2",
        "rolling_var": "rolling_std(col, n) ** 2",
        "weekday": "dayname() ('Mon' … 'Sun') or dayofweek() (0 = Monday … 4 = Friday)",
        **dict.fromkeys(
            ("weekofmonth", "week_of_month", "weekinmonth", "monthweek", "month_week"),
            "ceil(day() / 7) (days 1-7 of the month are 1, 8-14 are 2 …), or "
            "ceil(trading_day('month') / 5) counting the month's trading days",
        ),
        "diff": "col - prev(col) (the change from the previous row)",
        **dict.fromkeys(("momentum", "mom"), "col - prev(col, n) (the change over n rows)"),
        # highest_high got "did you mean higher_high()?", a pattern of two days.
        "highest_high": "rolling_max(high, n) (the highest high of n bars, this one included; "
        "donchian_upper(n) is the same)",
        "lowest_low": "rolling_min(low, n) (the lowest low of n bars, this one included; "
        "donchian_lower(n) is the same)",
        "dmi": "plus_di(14) and minus_di(14) (+DI, -DI), with adx(14)",
        **{name: form.text() for name, form in INDICATOR_FORMS.items()},
        "max_drawdown": "min(close / cummax(close) - 1) (per year: cummax(close, 'year') "
        'with "group_by": "year()")',
        **dict.fromkeys(("cross", "crosses", "crossed", "crossing"), _CROSS),
        **dict.fromkeys(
            (
                "crossover",
                "cross_over",
                "crossup",
                "cross_up",
                "cross_above",
                "crosses_above",
                "crossed_above",
                "crossing_above",
            ),
            _CROSS_UP,
        ),
        **dict.fromkeys(
            (
                "crossunder",
                "cross_under",
                "crossdown",
                "cross_down",
                "cross_below",
                "crosses_below",
                "crossed_below",
                "crossing_below",
            ),
            _CROSS_DOWN,
        ),
    }
)


#: Held while the library is built: two threads could both find it unbuilt (a process's
#: first two queries, each on a worker thread) and both register the patterns; the second
#: failed its query ("function 'inside_day' registered twice").
_BUILDING = threading.Lock()
_library: Mapping[str, FunctionSpec] | None = None


def library() -> Mapping[str, FunctionSpec]:
    """Every function of the language by name (and alias), lower case."""
    global _library
    if _library is None:
        with _BUILDING:
            if _library is None:
                patterns.register_patterns()
                _library = MappingProxyType(FUNCTIONS)
    return _library


def indicator_lines(family: str) -> list[FunctionSpec]:
    """The functions of a multi-line indicator the seed names as one (bollinger(col, n,
    std), keltner, donchian, stochastic): bollinger_upper, bollinger_middle…; [] for a name
    that is no such family."""
    if family in library():
        return []
    lines = [
        spec
        for key, spec in library().items()
        if key == spec.name and key.startswith(f"{family}_") and spec.category == "indicator"
    ]
    return lines if len(lines) > 1 else []


def lookup(name: str) -> FunctionSpec | None:
    return library().get(name.lower())


def is_aggregate_call(node: ast.Node) -> bool:
    if not isinstance(node, ast.Call):
        return False
    spec = lookup(node.name)
    return spec is not None and spec.is_aggregate


def contains_aggregate(expr: ast.Node) -> bool:
    return any(is_aggregate_call(n) for n in ast.walk(expr))
