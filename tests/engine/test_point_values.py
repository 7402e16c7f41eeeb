"""Points turned into dollars with another instrument's point value are said (p32e Q8/16:
CL's mean trade times NQ's 20 read -0.50 USD for -25.12)."""

from __future__ import annotations

import pytest
from asking import ask, warnings_with
from rth_bars import rth_daily

from barb.instruments import load_instrument

SAID = "dollars per point"


@pytest.fixture(scope="module")
def mean_range(minutes) -> float:
    bars = rth_daily(minutes)
    return float((bars["high"] - bars["low"]).mean())


def test_another_instruments_point_value_is_said_with_this_ones(engine_settings, mean_range):
    cl, nq = load_instrument("CL").point_value, load_instrument("NQ").point_value
    assert (cl, nq) == (1000.0, 20.0)  # CME: CL 1,000 barrels, NQ 20 USD x the index
    query = {"session": "RTH", "from": "daily", "select": "mean(range) * 1000 as range_usd"}

    result = ask(query, engine_settings)

    assert result.summary.value == pytest.approx(mean_range * cl)
    assert warnings_with(result, SAID) == [
        "range_usd multiplies NQ's points by 1000, CL's dollars per point: one NQ contract's "
        "1.0 move is 20 USD, so range_usd is 50 times too large for one NQ contract."
    ]
    fixed = ask({**query, "select": "mean(range) * 20 as range_usd"}, engine_settings)
    assert fixed.summary.value == pytest.approx(mean_range * nq)
    assert result.summary.value / fixed.summary.value == pytest.approx(50)
    assert warnings_with(fixed, SAID) == []


@pytest.mark.parametrize(
    "query",
    [
        # Not named as dollars: 50 of something else.
        {"session": "RTH", "from": "daily", "select": "mean(range) * 50 as r50"},
        # Not points: a count in dollars' clothing.
        {"session": "RTH", "from": "daily", "select": "count() * 50 as fee_usd"},
        # A map named as dollars, scaled by this instrument's own value.
        {"session": "RTH", "from": "daily", "map": {"pnl_usd": "(close - open) * 20"},
         "select": "mean(pnl_usd)"},
    ],
)  # fmt: skip
def test_no_warning_for_this_instruments_value_or_other_products(engine_settings, query):
    assert warnings_with(ask(query, engine_settings), SAID) == []


def test_a_map_of_another_instruments_dollars_is_said(engine_settings, minutes):
    bars = rth_daily(minutes)
    query = {"session": "RTH", "from": "daily", "map": {"pnl_usd": "(close - open) * 50"},
             "select": "mean(pnl_usd)"}  # fmt: skip
    result = ask(query, engine_settings)
    assert result.summary.value == pytest.approx(float((bars["close"] - bars["open"]).mean()) * 50)
    (text,) = warnings_with(result, SAID)
    assert text.startswith("pnl_usd multiplies NQ's points by 50, ES's dollars per point")
    assert "pnl_usd is 2.5 times too large for one NQ contract." in text
