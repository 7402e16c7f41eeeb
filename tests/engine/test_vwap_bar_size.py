"""vwap() over coarse bars is an approximation of the session VWAP, and says so (p28c F4):
"cash close above VWAP" on 30-minute bars put 48 of NQ's 4,649 closes on the other side of
the 1-minute VWAP with nothing said. Expected values from pandas over the sample's minute
bars, never through Barb."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask

from barb.data.store import data_path

pytestmark = pytest.mark.slow

RTH_START, RTH_END = 570, 1020
NOTE = "an approximation of the session VWAP, which 1m bars give to the minute"


@pytest.fixture(scope="module")
def quarter(sample_settings) -> pd.DataFrame:
    columns = ["high", "low", "close", "volume", "trading_date", "minute"]
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=columns)
    bars = bars[(bars["minute"] >= RTH_START) & (bars["minute"] < RTH_END)]
    return bars[(bars["trading_date"] >= "2019-01-01") & (bars["trading_date"] <= "2019-03-31")]


def _closes_above_vwap(bars: pd.DataFrame) -> float:
    """Share of days whose last bar closes above the day's volume-weighted typical price."""
    typical = (bars["high"] + bars["low"] + bars["close"]) / 3
    days = bars["trading_date"]
    vwap = (typical * bars["volume"]).groupby(days).cumsum() / bars["volume"].groupby(days).cumsum()
    last = ~days.duplicated(keep="last")
    return float((bars["close"][last] > vwap[last]).mean())


def _bars(minutes: pd.DataFrame, size: int) -> pd.DataFrame:
    slot = (minutes["minute"] - RTH_START) // size
    grouped = minutes.groupby([minutes["trading_date"], slot], sort=True)
    return grouped.agg(
        high=("high", "max"), low=("low", "min"), close=("close", "last"), volume=("volume", "sum")
    ).reset_index()


def _share_above(timeframe: str, settings) -> tuple[float, list[str]]:
    query = {
        "session": "RTH",
        "from": timeframe,
        "period": "2019-01:2019-03",
        "map": {"above": "close > vwap()", "last": "next(date()) != date()"},
        "where": "last",
        "select": "mean(above)",
    }
    result = ask(query, settings)
    return float(result.summary.value), result.metadata.warnings


def test_vwap_on_30_minute_bars_says_it_approximates(sample_settings, quarter) -> None:
    exact = _closes_above_vwap(quarter)
    coarse = _closes_above_vwap(_bars(quarter, 30))
    assert coarse != exact  # the case: the bar size changes the answer
    value, warnings = _share_above("30m", sample_settings)
    assert value == pytest.approx(coarse)
    assert any(NOTE in w for w in warnings)
    value, warnings = _share_above("1m", sample_settings)
    assert value == pytest.approx(exact)
    assert not any(NOTE in w for w in warnings)
