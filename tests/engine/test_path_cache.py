"""sar() and supertrend() over 1-minute bars are paths from the data's first bar, kept once
computed (``barb.script.path_cache``): "how many minutes closed above the SAR in February",
then "in January", then over RTH bars alone, each answer as TA-Lib's SAR over the bars from
the first one gives it, whichever was asked first."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import talib
from asking import ask
from supertrend_loop import supertrend as reference_supertrend

from barb.script import path_cache


@pytest.fixture
def empty_cache():
    path_cache._kept.clear()
    yield
    path_cache._kept.clear()


def _above(bars: pd.DataFrame, line: np.ndarray, month: int) -> int:
    inside = (bars["trading_date"].dt.month == month).to_numpy()
    return int((bars["close"].to_numpy()[inside] > line[inside]).sum())


def _bars(minutes: pd.DataFrame, rth: bool = False) -> pd.DataFrame:
    bars = minutes.copy()
    bars["trading_date"] = (bars["timestamp"] + pd.Timedelta(hours=6)).dt.normalize()
    if rth:
        minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
        bars = bars[(minute >= 570) & (minute < 1020)].reset_index(drop=True)
    return bars


def _asked(settings, session: str, month: str, line: str) -> int:
    query = {
        "session": session,
        "from": "1m",
        "period": month,
        "where": f"close > {line}",
        "select": "count()",
    }
    return int(ask(query, settings).summary.value)


def test_sar_months_in_any_order_are_talib_s_from_the_first_bar(
    empty_cache, engine_settings, minutes
) -> None:
    eth, rth = _bars(minutes), _bars(minutes, rth=True)
    eth_sar = talib.SAR(eth["high"].to_numpy(), eth["low"].to_numpy(), 0.02, 0.2)
    rth_sar = talib.SAR(rth["high"].to_numpy(), rth["low"].to_numpy(), 0.02, 0.2)
    line = "sar(0.02, 0.2)"
    assert _asked(engine_settings, "ETH", "2024-02", line) == _above(eth, eth_sar, 2)
    assert "sar" in path_cache._kept  # the ETH minutes are the mapped data's own
    assert _asked(engine_settings, "ETH", "2024-01", line) == _above(eth, eth_sar, 1)
    # RTH minutes are another frame (a copy of part of each day): not the ETH path.
    assert _asked(engine_settings, "RTH", "2024-02", line) == _above(rth, rth_sar, 2)
    # Another setting is another path.
    other = talib.SAR(eth["high"].to_numpy(), eth["low"].to_numpy(), 0.05, 0.3)
    assert _asked(engine_settings, "ETH", "2024-01", "sar(0.05, 0.3)") == _above(eth, other, 1)


def test_supertrend_months_in_any_order_are_the_reference_loop_s(
    empty_cache, engine_settings, minutes
) -> None:
    eth = _bars(minutes)
    high, low, close = (eth[c].to_numpy() for c in ("high", "low", "close"))
    line = reference_supertrend(high, low, close, talib.ATR(high, low, close, 10), 3.0)
    for month in ("2024-03", "2024-01", "2024-02"):
        asked = _asked(engine_settings, "ETH", month, "supertrend(10, 3)")
        assert asked == _above(eth, line, int(month[-1])), month


def test_obv_months_in_any_order_are_talib_s_from_the_first_bar(
    empty_cache, engine_settings, minutes
) -> None:
    # obv() is a running total from the data's first bar: kept as a path (its volume the
    # mapped int64 column), each month's last value the total over every bar up to it.
    eth = _bars(minutes)
    line = talib.OBV(eth["close"].to_numpy(), eth["volume"].to_numpy(dtype=np.float64))
    for number, month in enumerate(("2024-02", "2024-01", "2024-03")):
        query = {"session": "ETH", "from": "1m", "period": month, "select": "last(obv())"}
        asked = ask(query, engine_settings).summary.value
        last = np.flatnonzero((eth["trading_date"].dt.month == int(month[-1])).to_numpy())[-1]
        assert asked == line[last], month
        if number == 0:
            assert "obv" in path_cache._kept  # the ETH minutes are the mapped data's own
