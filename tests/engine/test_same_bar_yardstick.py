"""A bar's own size against an ATR (or a mean of range) that already holds the bar.

"How often is the day's range above 1.5 ATR" as range > 1.5 * atr(14) counted 139 NQ days
where the ATR known before the day, the one a morning's stop is sized with, gives 193. Said
with both counts and the prev() form; checked with TA-Lib ATR over RTH days built with pandas.
"""

from __future__ import annotations

import pandas as pd
import pytest
import talib
from asking import ask, warnings_with
from rth_bars import rth_daily

SAID = "of the same bar, an average that includes the bar itself"


@pytest.fixture(scope="module")
def days(minutes) -> pd.DataFrame:
    """RTH days with TA-Lib's ATR(14) and the mean of the last 14 ranges."""
    bars = rth_daily(minutes)
    bars["range"] = bars["high"] - bars["low"]
    high, low, close = (bars[c].to_numpy() for c in ("high", "low", "close"))
    bars["atr"] = talib.ATR(high, low, close, 14)
    bars["mean_range"] = bars["range"].rolling(14).mean()
    return bars


def test_range_against_the_same_days_atr_is_said(engine_settings, days) -> None:
    """The count with the day's own ATR, and the one with the ATR known before the day."""
    big = days["range"] > 1.1 * days["atr"]
    big_before = days["range"] > 1.1 * days["atr"].shift()
    assert big.sum() != big_before.sum()  # the data tells them apart

    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"atr14": "atr(14)", "big": "range > 1.1 * atr14"},
        "select": "count(big) as big_days",
    }
    result = ask(query, engine_settings)
    assert result.summary.value == big.sum()
    assert warnings_with(result, SAID) == [
        "range > 1.1 * atr14 compares each bar with atr(14) of the same bar, an average that "
        "includes the bar itself (a wide bar stretches its own yardstick): true on "
        f"{big.sum()} of the {days['atr'].notna().sum()} days; against the value known before "
        f"the bar, range > 1.1 * prev(atr14), on {big_before.sum()} (more)."
    ]

    told = {**query, "map": {"atr14": "prev(atr(14))", "big": "range > 1.1 * atr14"}}
    fixed = ask(told, engine_settings)
    assert fixed.summary.value == big_before.sum()
    assert warnings_with(fixed, SAID) == []


@pytest.mark.parametrize(
    ("where", "line", "k"),
    [
        ("range > 1.1 * atr(14)", "atr", 1.1),  # in the where: counted over the days given
        ("range / rolling_mean(range, 14) > 1.2", "mean_range", 1.2),
    ],
)
def test_other_forms_are_counted_the_same_way(engine_settings, days, where, line, k) -> None:
    now = int((days["range"] > k * days[line]).sum())
    before = int((days["range"] > k * days[line].shift()).sum())
    assert now != before
    result = ask({"session": "RTH", "from": "daily", "where": where}, engine_settings)
    (text,) = warnings_with(result, SAID)
    assert f"true on {now} of the {days[line].notna().sum()} days" in text
    assert f", on {before} (more)." in text


@pytest.mark.parametrize(
    "select",
    [
        "count(range > 1.1 * prev(atr(14)))",  # the ATR known before the day already
        "count(close > keltner_upper())",  # a price against a band: no size of the bar
        "count(close - rolling_mean(close, 20) > atr(14))",  # a distance, not the bar's size
        "count(range > 1.2 * atr(14))",  # the same days either way
    ],
)
def test_not_said(engine_settings, days, select) -> None:
    query = {"session": "RTH", "from": "daily", "select": select}
    assert warnings_with(ask(query, engine_settings), SAID) == []


def test_a_stop_below_the_open_is_the_same_comparison(engine_settings, days) -> None:
    """ "Buy the open, stop 1 ATR below" as low <= open - atr(14) is open - low >= atr(14):
    the stop is placed at the open, when only the day before's ATR is known (p32e Q11: NQ
    322 stops with the day's own ATR, 344 with the one known at the open; no warning)."""
    hit = days["low"] <= days["open"] - 0.5 * days["atr"]
    hit_before = days["low"] <= days["open"] - 0.5 * days["atr"].shift()
    assert hit.sum() != hit_before.sum()  # the data tells them apart

    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"stop": "open - 0.5 * atr(14)", "hit": "low <= stop"},
        "select": "mean(hit) as stop_rate",
    }
    result = ask(query, engine_settings)
    assert result.summary.value == pytest.approx(hit[days["atr"].notna()].mean())
    (text,) = warnings_with(result, SAID)
    assert text.startswith("low <= stop compares each bar with atr(14) of the same bar")
    assert (
        f"true on {hit.sum()} of the {days['atr'].notna().sum()} days; against the value "
        f"known before the bar, low <= open - 0.5 * prev(atr(14)), on {hit_before.sum()} ("
    ) in text

    told = {**query, "map": {"stop": "open - 0.5 * prev(atr(14))", "hit": "low <= stop"}}
    assert warnings_with(ask(told, engine_settings), SAID) == []


@pytest.mark.parametrize(
    "select",
    [
        "count(low <= open - 0.4 * prev(atr(14)))",  # the ATR known at the open
        "count(close < keltner_lower() - atr(14))",  # one price against a band and an ATR
        "count(low <= rolling_min(low, 20) - atr(14))",  # a window of lows is a level, no price
    ],
)
def test_a_level_with_one_price_is_not_said(engine_settings, select) -> None:
    query = {"session": "RTH", "from": "daily", "select": select}
    assert warnings_with(ask(query, engine_settings), SAID) == []
