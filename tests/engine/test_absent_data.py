"""Questions whose honest answer is "Barb's data does not hold that" (p38d): a column of data
the bars lack was told to add it with map as "high - low", and a model that retried once
answered "open interest fell from 420 to 314" with the daily range (Q4); ask_volume was
offered 'volume', one side of the book read as all of it (Q2); get_concept("max pain")
offered max drawdown (Q8); MNQ was "not configured" with no word that it is NQ's prices
(Q13b). Each now says what the bars hold and that the thing is not among them, with a proxy,
called one, only where an honest one exists; and the proxies named run and count what pandas
counts over the bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from barb import execute
from barb.data.store import data_path
from barb.instruments import load_instrument
from barb.reference import describe_concept

DAILY = {"session": "RTH", "from": "daily"}
HOLDS = "hold only open, high, low, close and volume per bar"


def _hint(select: str, settings, **query) -> str:
    result = execute(DAILY | query | {"select": select}, "NQ", settings=settings)
    assert not result.ok, result.to_dict()
    said = result.to_dict()
    assert said["error_type"] == "UnknownColumn", said
    return said["hint"]


@pytest.mark.parametrize(
    ("name", "missing"),
    [
        ("open_interest", "no open interest"),
        ("oi", "no open interest"),
        ("nq_oi_change", "no open interest"),
        ("vix", "no options"),
        ("iv", "no options"),
        ("implied_vol", "no options"),
        ("bid", "no quotes"),
        ("ask", "no quotes"),
        ("spread", "no quotes"),
        ("delta", "no order flow"),
        ("cum_delta", "no order flow"),
        ("buy_volume", "no order flow"),
        ("ask_volume", "no order flow"),
        ("tick_volume", "no order flow"),
        ("settlement", "no exchange settlement prices"),
        ("dividend", "no company figures"),
    ],
)
def test_a_column_of_data_the_bars_lack_says_so(name: str, missing: str, engine_settings) -> None:
    """Before: 'add it first with map, e.g. map: {"open_interest": "high - low"}', or "did
    you mean 'volume'?" for ask_volume and buy_volume."""
    hint = _hint(f"mean({name})", engine_settings)
    assert f"NQ's bars (Nasdaq 100 E-mini futures) {HOLDS}" in hint, hint
    assert missing in hint and "the answer must say so" in hint, hint
    assert "add it first with map" not in hint and "did you mean" not in hint, hint


def test_names_of_data_the_bars_lack_are_read_in_where_and_group_by_too(engine_settings) -> None:
    where = execute(
        DAILY | {"where": "oi > 0", "select": "count()"}, "NQ", settings=engine_settings
    )
    grouped = execute(
        DAILY | {"group_by": "open_interest", "select": "count()"}, "NQ", settings=engine_settings
    )
    for result in (where, grouped):
        assert not result.ok and "no open interest" in result.to_dict()["hint"], result.to_dict()


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("rnage", "did you mean 'range'?"),
        ("volumne", "did you mean 'volume'?"),
        ("atr14", 'add it first with map, e.g. map: {"atr14": "high - low"}'),
        # A model's own change column, forgotten in map: "delta" alone is order flow.
        ("delta_pct", 'add it first with map, e.g. map: {"delta_pct": "high - low"}'),
    ],
)
def test_typos_and_a_model_s_own_columns_keep_their_hints(
    name: str, hint: str, engine_settings
) -> None:
    assert _hint(f"mean({name})", engine_settings) == hint


def _rth_minutes(settings) -> pd.DataFrame:
    bars = pd.read_parquet(data_path("NQ", settings))
    return bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]


def test_the_order_flow_proxy_named_is_called_a_proxy_and_runs(engine_settings) -> None:
    """The delta hint's proxy, volume signed by the bar's direction, runs as written and sums
    what pandas sums over the day's RTH minutes; it is named a proxy, not order flow."""
    hint = _hint("sum(cum_delta)", engine_settings)
    proxy = "if(close > open, volume, if(close < open, -volume, 0))"
    assert proxy in hint and "a proxy, not order flow" in hint, hint
    query = {
        "session": "RTH",
        "from": "1m",
        "period": "2024-02-06",
        "map": {"signed": proxy},
        "select": "sum(signed)",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    day = _rth_minutes(engine_settings)
    day = day[day["trading_date"] == "2024-02-06"]
    sign = np.sign(day["close"] - day["open"])
    assert result.summary.value == int((sign * day["volume"]).sum())


def test_the_volatility_proxy_named_is_realised_not_implied_and_runs(engine_settings) -> None:
    hint = _hint("mean(vix)", engine_settings)
    proxy = "rolling_std(log(close / prev(close)), 20) * sqrt(252) * 100"
    assert proxy in hint and "realised, not implied" in hint, hint
    query = DAILY | {"period": "2024-03-28", "map": {"rv": proxy}, "select": "last(rv)"}
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    close = _rth_minutes(engine_settings).groupby("trading_date")["close"].last()
    expected = np.log(close / close.shift()).rolling(20).std().iloc[-1] * np.sqrt(252) * 100
    assert result.summary.value == pytest.approx(expected)


@pytest.mark.parametrize(
    ("asked", "missing"),
    [
        ("max pain", "no options"),
        ("open interest", "no open interest"),
        ("gamma", "no options"),
        ("COT", "no open interest"),
        ("footprint", "no order flow"),
        ("VIX", "no options"),
        ("implied volatility", "no options"),
        ("earnings", "no company figures"),
        ("bid ask spread", "no quotes"),
    ],
)
def test_get_concept_says_a_term_is_outside_barb_s_data(asked: str, missing: str) -> None:
    """Before: "No concept called 'max pain'. Did you mean max drawdown?", "open interest":
    "Did you mean opening range…?", "gamma": "hammer, gmt"."""
    text = describe_concept(asked, load_instrument("NQ"))
    assert text.startswith(f"'{asked}' is outside Barb's data. NQ's bars"), text
    assert HOLDS in text and missing in text and "Did you mean" not in text, text


def test_get_concept_keeps_its_did_you_mean_for_a_typo() -> None:
    assert "Did you mean opening range" in describe_concept("opening rnage")


# CME's micro contracts: MNQ $2 and MES $5 an index point, MCL 100 barrels ($100 a dollar).
MICROS = {"MNQ": ("NQ", "2 USD"), "MES": ("ES", "5 USD"), "MCL": ("CL", "100 USD")}


@pytest.mark.parametrize("micro", sorted(MICROS))
def test_a_micro_contract_is_pointed_to_its_e_mini_s_prices(micro: str, engine_settings) -> None:
    """Before: "Instrument 'MNQ' is not configured. Available: CL, ES, NQ." and no hint."""
    full, worth = MICROS[micro]
    result = execute({"instrument": micro.lower(), "select": "count()"}, settings=engine_settings)
    said = result.to_dict()
    assert said["error_type"] == "UnknownInstrument", said
    assert f"{micro} is the micro {full}: it trades at the same prices" in said["hint"], said
    assert f'"instrument": "{full}"' in said["hint"] and f"{worth} per {micro}" in said["hint"]


def test_an_unknown_instrument_that_is_no_micro_gets_no_micro_hint(engine_settings) -> None:
    said = execute({"instrument": "AAPL", "select": "count()"}, settings=engine_settings).to_dict()
    assert said["error_type"] == "UnknownInstrument" and said.get("hint") is None, said
