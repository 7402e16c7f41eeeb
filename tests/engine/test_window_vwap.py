"""vwap() on a window that opens inside the day restarts at the window's open: "closes above
VWAP in the last cash half hour" on CASH_CLOSE read a VWAP from 15:30, 0.4886 of NQ's 2024 5m
closes above it against 0.4585 above the day's (p35a B), with nothing said. Expected values
from pandas over the hand-made minute bars (engine_settings), never through Barb."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask, warnings_with

RESTARTS = "restarts each day at"
SELECT = ["count() as bars", "mean(close > vw) as share_above"]


def _share_above(minutes: pd.DataFrame, start: int, window: tuple[int, int]) -> float:
    """The share of the 1m closes inside ``window`` (minutes of the day) above a VWAP of the
    typical price from ``start`` each day."""
    clock = minutes["timestamp"].dt.hour * 60 + minutes["timestamp"].dt.minute
    bars = minutes[(clock >= start) & (clock < 1020)].copy()
    bars["clock"] = clock
    days = bars["timestamp"].dt.date
    typical = (bars["high"] + bars["low"] + bars["close"]) / 3
    vwap = (typical * bars["volume"]).groupby(days).cumsum() / bars["volume"].groupby(days).cumsum()
    inside = (bars["clock"] >= window[0]) & (bars["clock"] < window[1])
    return float((bars["close"] > vwap)[inside].mean())


def test_vwap_on_the_cash_close_window_says_it_restarts_and_the_days_form(
    engine_settings, minutes
) -> None:
    window = (930, 960)  # CASH_CLOSE, 15:30-16:00
    own, day = _share_above(minutes, 930, window), _share_above(minutes, 570, window)
    assert own != pytest.approx(day)  # the case: the anchor changes the answer
    query = {"from": "1m", "map": {"vw": "vwap()"}, "select": SELECT}
    result = ask({**query, "session": "CASH_CLOSE"}, engine_settings)
    assert result.summary.values["share_above"] == pytest.approx(own)
    form = "time() >= '15:30' and time() < '16:00'"
    assert warnings_with(result, RESTARTS) == [
        "vwap() on CASH_CLOSE (15:30-16:00) restarts each day at 15:30, the window's open (its "
        "first bar's VWAP is that bar's typical price), not at the 09:30 RTH open a chart's "
        'VWAP runs from. For the day\'s VWAP use "session": "RTH" and keep the window\'s bars '
        f'with "where": "{form}" (vwap() is computed on every RTH bar first).'
    ]
    named = ask({**query, "session": "RTH", "where": form}, engine_settings)
    assert named.summary.values["share_above"] == pytest.approx(day)
    assert warnings_with(named, RESTARTS) == []


@pytest.mark.parametrize("session", ["CASH", "RTH_OPEN", "OVERNIGHT", "09:30-11:00"])
def test_vwap_on_a_window_opening_with_the_day_says_nothing(engine_settings, session) -> None:
    """These open at 09:30 or 18:00: their VWAP is RTH's or ETH's."""
    query = {"session": session, "from": "1m", "map": {"vw": "vwap()"}, "select": SELECT}
    assert warnings_with(ask(query, engine_settings), RESTARTS) == []
