"""Hints for two dead ends a model walked into: a Donchian breakout tested against the bar's
own channel (which holds it, so nothing matched, silently), and a null literal."""

from __future__ import annotations

import pandas as pd
import pytest

from barb import execute

DONCHIAN_HINT = "prev(donchian_upper(20))"


@pytest.mark.parametrize(
    ("query", "warned"),
    [
        ({"where": "close > donchian_upper(20)"}, True),
        ({"where": "high > donchian_upper(20)"}, True),
        ({"map": {"du": "donchian_upper(20)"}, "where": "du < high"}, True),
        ({"where": "low < donchian_lower(10)"}, True),
        ({"where": "close > prev(donchian_upper(20))"}, False),
        ({"where": "close > donchian_upper(20) + 1000000"}, False),
    ],
)
def test_a_same_bar_channel_breakout_says_to_use_the_previous_bar(
    query: dict, warned: bool, engine_settings
) -> None:
    base = {"session": "RTH", "from": "daily", "select": "count()"}
    result = execute(base | query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    said = any("includes the current bar" in w for w in result.metadata.warnings)
    # Said only when nothing matched: the last two match nothing for other reasons (none
    # broke out of the previous channel in the fixture, or the level is absurd) or do match.
    if warned:
        assert result.summary.value == 0 and said, result.metadata.warnings
    else:
        assert not said, result.metadata.warnings


def test_the_channel_breakout_of_the_previous_bar_matches_pandas(engine_settings) -> None:
    """What the hint points to counts the closes above the prior 20 bars' highest high."""
    from barb.data.store import data_path

    query = {
        "session": "RTH",
        "from": "daily",
        "where": "close > prev(donchian_upper(20))",
        "select": "count()",
    }
    result = execute(query, "NQ", settings=engine_settings)
    bars = pd.read_parquet(data_path("NQ", engine_settings))
    rth = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]
    day = rth.groupby("trading_date").agg(high=("high", "max"), close=("close", "last"))
    channel = day["high"].rolling(20).max().shift()
    assert result.summary.value == int((day["close"] > channel).sum())


def test_a_null_literal_gets_a_hint(engine_settings) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"x": "if(close > open, range, null)"},
        "select": "count(x)",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert not result.ok
    hint = result.to_dict()["hint"]
    assert "no null" in hint and "0 / 0" in hint and "where" in hint


def test_the_hinted_empty_value_is_skipped_by_aggregates(engine_settings) -> None:
    """if(cond, x, 0 / 0) as the hint says: count and mean over the up days only."""
    from barb.data.store import data_path

    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"x": "if(close > open, range, 0 / 0)"},
        "select": ["count(x)", "mean(x)"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    bars = pd.read_parquet(data_path("NQ", engine_settings))
    rth = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]
    day = rth.groupby("trading_date").agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )
    up = day[day["close"] > day["open"]]
    assert result.summary.values["count_x"] == len(up)
    assert result.summary.values["mean_x"] == pytest.approx((up["high"] - up["low"]).mean())
