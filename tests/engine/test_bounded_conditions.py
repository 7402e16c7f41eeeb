"""A condition no bar can settle otherwise, said with its counts (p32e Q19).

An opening-range breakout long with its stop at the range's low, on daily bars, wrote
stopped = low <= or_low: the day's low includes the range's own low, so it held on every day
(stop rate 1, -99.81 points a trade) and nothing said so. Checked with pandas over the
fixture's RTH minutes: the days, and those whose low is the opening range's. A day whose
opening-range high held was told the same (p38b Q21): its 1m bars after the range could
have gone above it, and did on other days.
"""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask, warnings_with
from rth_bars import rth_daily, rth_minutes

SAID = "so it cannot be"
STOP_CONCEPT = 'get_concept "stop and target"'

ORB = {
    "session": "RTH",
    "from": "daily",
    "map": {
        "or_high": "session_high('09:30-09:45')",
        "or_low": "session_low('09:30-09:45')",
        "stopped": "low <= or_low",
        "pnl": "if(stopped, or_low - or_high, close - or_high)",
    },
    "where": "high > or_high",
    "select": ["count() as trades", "mean(stopped) as stop_rate", "mean(pnl) as exp_pts"],
}


@pytest.fixture(scope="module")
def days(minutes) -> pd.DataFrame:
    """RTH days with the 15-minute opening range's high and low."""
    bars = rth_daily(minutes)
    rth = rth_minutes(minutes)
    first = rth[rth["timestamp"].dt.hour * 60 + rth["timestamp"].dt.minute < 585]
    opening = first.groupby("day").agg(or_high=("high", "max"), or_low=("low", "min"))
    return bars.join(opening)


def test_a_stop_daily_bars_cannot_order_is_said(engine_settings, days) -> None:
    broke = days["high"] > days["or_high"]
    assert (days["low"] <= days["or_low"]).all()  # what the warning says, from the minutes
    ties = int((days["low"] == days["or_low"]).sum())
    assert 0 < ties < len(days)

    result = ask(ORB, engine_settings)
    assert result.summary.values["trades"] == broke.sum()
    assert result.summary.values["stop_rate"] == 1
    assert warnings_with(result, SAID) == [
        f"stopped (low <= or_low) is true on all {len(days)} days (the {broke.sum()} kept "
        f"among them): low is never above or_low (equal on {ties}), so it cannot be false. "
        "A condition that cannot be otherwise usually asks what daily bars cannot answer: a "
        "day's high and low hold all of it, before an entry and after it, so they cannot say "
        f"whether a stop or a target came first; 1m bars can ({STOP_CONCEPT})."
    ]


def _opening_highs(minutes: pd.DataFrame) -> pd.DataFrame:
    """Per RTH day, the 15-minute opening range's high, the highest high after it, and how
    many minute bars inside the range reach the range's high."""
    rth = rth_minutes(minutes)
    inside = rth["timestamp"].dt.hour * 60 + rth["timestamp"].dt.minute < 585
    days = rth[inside].groupby("day").agg(or_high=("high", "max"))
    days["after"] = rth[~inside].groupby("day")["high"].max()
    on_it = rth[inside]["high"].to_numpy() == days["or_high"].reindex(rth[inside]["day"]).to_numpy()
    days["ties"] = pd.Series(on_it, index=rth[inside].index).groupby(rth[inside]["day"]).sum()
    return days


OPENING_HIGH = {
    "session": "RTH",
    "from": "1m",
    "map": {"orh": "session_high('09:30-09:45')"},
    "select": "count(high > orh) as above",
}


def test_an_opening_high_that_held_is_no_impossibility(engine_settings, minutes) -> None:
    days = _opening_highs(minutes)
    held = days.index[days["after"] <= days["or_high"]]
    assert 0 < len(held) < len(days)  # it held on some days, was taken out on others
    day = held[0].strftime("%Y-%m-%d")

    result = ask(OPENING_HIGH | {"period": day}, engine_settings)
    assert result.summary.value == 0
    assert warnings_with(result, SAID) == []


def test_the_bars_of_the_opening_range_itself_are_said(engine_settings, minutes) -> None:
    days = _opening_highs(minutes).loc["2024-02"]
    result = ask(OPENING_HIGH | {"session": "09:30-09:45", "period": "2024-02"}, engine_settings)
    (text,) = warnings_with(result, SAID)
    assert text.startswith(
        f"high > orh is false on all {15 * len(days)} bars: high is never above orh (equal on "
        f"{days['ties'].sum()}), so it cannot be true."
    )


def test_a_where_that_cannot_hold_is_said(engine_settings, days) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "where": "high > session_high('RTH')",
        "select": "count()",
    }
    (text,) = warnings_with(ask(query, engine_settings), SAID)
    assert text.startswith(
        f"high > session_high('RTH') is false on all {len(days)} days: high is always equal "
        "to session_high('RTH'), so it cannot be true."
    )


def test_on_minute_bars_no_stop_is_blamed(engine_settings) -> None:
    query = {
        "session": "RTH",
        "from": "1m",
        "map": {"floor": "session_low('RTH')"},
        "select": "mean(low >= floor) as above",
    }
    (text,) = warnings_with(ask(query, engine_settings), SAID)
    assert "low is never below floor" in text
    assert text.endswith("usually asks what the bars cannot answer.")


@pytest.mark.parametrize(
    "change",
    [
        # After the range: a low before the breakout counts, but the days differ.
        {"map": {**ORB["map"], "stopped": "session_low('09:45-17:00') <= or_low"}},
        # Certain only on the days the where kept (high > or_high): a question it answered.
        {"select": ["count()", "mean(high > or_high) as broke"]},
        # Never true, but far from its bound: a rare day, not an impossible one.
        {"where": "range > 4 * atr(14)", "select": "count()"},
        # Always true, never on its bound.
        {"select": "mean(close > 0)"},
        # A calendar condition the period settles is not the bars' to answer.
        {"period": "2024", "map": {}, "where": "year() >= 2024", "select": "count()"},
    ],
)
def test_conditions_the_bars_can_settle_are_not_said(engine_settings, days, change) -> None:
    assert warnings_with(ask(ORB | change, engine_settings), SAID) == []
