"""The forms the unknown-function error gives for indicators Barb has no function for
(barb.script.indicator_forms) compute what their names mean: each one, evaluated by Barb
Script over the test bars, against TA-Lib or a pandas formula written here. Before them
willr() got "see the FUNCTIONS list", and names a letter away from a real function ran that
one: tr() "did you mean atr()?", highest_high() "higher_high()?", signal() "sign()?"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from barb.reference import describe_concept, indicators_reference
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate
from barb.script.indicator_forms import ABSENT, INDICATOR_FORMS
from barb.script.parser import parse_expression
from barb.script.validator import unknown_function

talib = pytest.importorskip("talib")


def _frame(bars: pd.DataFrame) -> pd.DataFrame:
    frame = bars.copy()
    frame.insert(0, "timestamp", pd.bdate_range("2020-01-01", periods=len(frame)))
    frame["range"] = frame["high"] - frame["low"]
    frame["trading_date"] = frame["timestamp"]
    return frame


def _no_sessions(name: str) -> pd.DataFrame:
    raise AssertionError(f"no form reads a session's bars ({name})")


def _run(name: str, bars: pd.DataFrame) -> pd.DataFrame:
    """The form's map lines, each over the bars and the lines before it, as a map runs."""
    frame = _frame(bars)
    for column, text in INDICATOR_FORMS[name].lines:
        ctx = EvalContext(frame=frame, timeframe="daily", session_bars=_no_sessions, step="map")
        frame[column] = evaluate(parse_expression(text, step="map"), ctx).to_numpy(float)
    return frame


def _money_flow(b: pd.DataFrame) -> pd.Series:
    spread = b["high"] - b["low"]
    flow = ((b["close"] - b["low"]) - (b["high"] - b["close"])) / spread * b["volume"]
    return flow.where(spread > 0, 0.0)


def _expected(name: str, b: pd.DataFrame) -> dict[str, np.ndarray]:
    h, lo, c = (b[k].to_numpy(float) for k in ("high", "low", "close"))
    v = b["volume"].to_numpy(float)
    upper, middle, lower = talib.BBANDS(c, 20, 2, 2, 0)
    hh9, ll9 = b["high"].rolling(9).max(), b["low"].rolling(9).min()
    hh26, ll26 = b["high"].rolling(26).max(), b["low"].rolling(26).min()
    hh52, ll52 = b["high"].rolling(52).max(), b["low"].rolling(52).min()
    table = {
        "willr": {"willr": talib.WILLR(h, lo, c, 14)},
        "roc": {"roc": talib.ROC(c, 10)},
        "natr": {"natr": talib.NATR(h, lo, c, 14)},
        "dema": {"dema": talib.DEMA(c, 20)},
        "tema": {"tema": talib.TEMA(c, 20)},
        "vwma": {
            "vwma": (
                (b["close"] * b["volume"]).rolling(20).sum() / b["volume"].rolling(20).sum()
            ).to_numpy()
        },
        "percent_b": {"pct_b": (c - lower) / (upper - lower)},
        "bandwidth": {"bandwidth": (upper - lower) / middle},
        "ad": {"ad": talib.AD(h, lo, c, v)},
        "cmf": {
            "cmf": (_money_flow(b).rolling(20).sum() / b["volume"].rolling(20).sum()).to_numpy()
        },
        "zscore": {
            "z": (
                (b["close"] - b["close"].rolling(20).mean()) / b["close"].rolling(20).std()
            ).to_numpy()
        },
        "hl2": {"hl2": talib.MEDPRICE(h, lo)},
        "hlc3": {"hlc3": talib.TYPPRICE(h, lo, c)},
        "ichimoku": {
            "tenkan": ((hh9 + ll9) / 2).to_numpy(),
            "kijun": ((hh26 + ll26) / 2).to_numpy(),
            "span_a": (((hh9 + ll9) / 2 + (hh26 + ll26) / 2) / 2).shift(26).to_numpy(),
            "span_b": ((hh52 + ll52) / 2).shift(26).to_numpy(),
        },
        "rvol": {"rvol": (b["volume"] / b["volume"].rolling(20).mean().shift()).to_numpy()},
        "pct_change": {"chg_pct": talib.ROC(c, 1)},
    }
    return table[name]


FORMS = [
    "willr", "roc", "natr", "dema", "tema", "vwma", "percent_b", "bandwidth", "ad", "cmf",
    "zscore", "hl2", "hlc3", "ichimoku", "rvol", "pct_change",
]  # fmt: skip


@pytest.mark.parametrize("name", FORMS)
def test_each_form_computes_its_indicator(bars: pd.DataFrame, name: str) -> None:
    got = _run(name, bars)
    for column, want in _expected(name, bars).items():
        mine = got[column].to_numpy()
        assert np.isnan(mine).sum() == np.isnan(want).sum(), column  # the same warm-up
        np.testing.assert_allclose(mine, want, rtol=1e-9, atol=1e-9, err_msg=f"{name}.{column}")


def test_every_name_of_a_form_is_tested() -> None:
    assert {id(INDICATOR_FORMS[name]) for name in FORMS} == {
        id(form) for form in INDICATOR_FORMS.values()
    }


@pytest.mark.parametrize("name", sorted(INDICATOR_FORMS))
def test_the_error_writes_the_form_out_and_guesses_no_function(name: str) -> None:
    error = unknown_function(name, [], "map")
    assert error.message == f"Function '{name}' does not exist."
    assert error.hint == f"Barb Script writes it {INDICATOR_FORMS[name].text()}"
    for _, text in INDICATOR_FORMS[name].lines:
        assert text in error.hint


@pytest.mark.parametrize(
    ("name", "meant", "not_meant"),
    [
        ("tr", "true_range()", "atr()"),
        ("signal", "macd_signal(", "sign()"),
        ("highest_high", "rolling_max(high, n)", "higher_high"),
        ("lowest_low", "rolling_min(low, n)", "lower_low"),
        ("stoch", "stochastic_k(", "see the FUNCTIONS list"),
        ("bb_upper", "bollinger_upper(", "see the FUNCTIONS list"),
        ("histogram", "macd_hist(", "see the FUNCTIONS list"),
    ],
)
def test_a_charting_name_points_to_barbs_line_not_a_neighbour(
    name: str, meant: str, not_meant: str
) -> None:
    hint = unknown_function(name, [], "map").hint
    assert meant in hint and not_meant not in hint


@pytest.mark.parametrize("name", ["zigzag", "renko", "alma", "mama", "swma", "bfill"])
def test_what_no_expression_gives_is_said_to_be_missing(name: str) -> None:
    """Not a did-you-mean to a near name that answers something else: alma() and mama() were
    "did you mean kama()?", swma() "wma()?", bfill() "ffill()?" (the other way in time)."""
    error = unknown_function(name, [], "map")
    assert error.hint == ABSENT[name] and "Similar" not in error.message


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("psar", "sar(acceleration=0.02, maximum=0.2)"),
        ("parabolic_sar", "sar(acceleration=0.02, maximum=0.2)"),
        ("super_trend", "supertrend(n=10, mult=3)"),
        ("hull", "hma(col=close, n=9)"),
        ("forward_fill", "ffill(col)"),
    ],
)
def test_other_tools_names_of_the_stops_and_averages_name_barbs(name: str, meant: str) -> None:
    """sar and supertrend were said to be missing ("each stop flips on the one before"): now
    functions, their other names point to them."""
    error = unknown_function(name, [], "map")
    assert error.hint.startswith(f"Barb Script calls it {meant}: ")


@pytest.mark.parametrize(
    ("name", "lines"),
    [
        ("bollinger", ("bollinger_upper", "bollinger_middle", "bollinger_lower")),
        ("bbands", ("bollinger_upper", "bollinger_middle", "bollinger_lower")),
        ("keltner", ("keltner_upper", "keltner_middle", "keltner_lower")),
        ("donchian", ("donchian_upper", "donchian_middle", "donchian_lower")),
        ("stochastic", ("stochastic_k", "stochastic_d")),
        ("stoch", ("stochastic_k", "stochastic_d")),
        ("heikin_ashi", ("ha_open", "ha_close", "ha_high", "ha_low")),
    ],
)
def test_the_seeds_multi_line_names_list_their_lines(name: str, lines: tuple[str, ...]) -> None:
    """The seed names bollinger(col, n, std), stochastic(k, d, slowing), keltner(n, atr_n,
    mult) and donchian(n); Barb has a function per line. bollinger(close, 20, 2) got "see the
    FUNCTIONS list": the hint lists the lines with their parameters, in the order written."""
    hint = unknown_function(name, [], "map").hint
    assert hint.startswith("each line is its own function: ")
    found = [hint.index(f"{line}(") for line in lines]
    assert found == sorted(found)


@pytest.mark.parametrize(
    ("asked", "form"),
    [
        ("Williams %R", "willr"),
        ("%B", "percent_b"),
        ("ROC", "roc"),
        ("relative volume", "rvol"),
        ("Ichimoku", "ichimoku"),
        ("accumulation distribution", "ad"),
    ],
)
def test_get_concept_gives_the_form(asked: str, form: str) -> None:
    """The indicators reference names them ("get_concept gives each form"): the lookup
    answers with the form the error gives, not "No concept called 'Williams %R'"."""
    text = describe_concept(asked)
    assert text.endswith(f"write it {INDICATOR_FORMS[form].text()}.")


def test_the_indicators_reference_names_the_forms_and_the_missing_charts() -> None:
    text = indicators_reference()
    for name in ("Williams %R", "ROC", "Bollinger %B", "Ichimoku", "No ZigZag or Renko"):
        assert name in text
    for name in ("sar(acceleration=0.02, maximum=0.2)", "supertrend(n=10, mult=3)", "ha_open()"):
        assert f"- {name} — " in text
    assert "parabolic SAR" not in text.split("No ZigZag")[1]
    for asked in ("bollinger bands", "keltner", "stochastic", "Heikin Ashi"):
        assert " each line is its own function: " in describe_concept(asked)
    assert describe_concept("parabolic SAR").startswith("PARABOLIC_SAR in Barb Script is sar(")
    assert describe_concept("ZigZag") == ABSENT["zigzag"] + "."
