"""Fixtures of deterministic OHLCV bars (tests/indicator_bars.py) for the indicator tests."""

from __future__ import annotations

import pandas as pd
import pytest
from indicator_bars import make_bars


@pytest.fixture(scope="session")
def bars() -> pd.DataFrame:
    return make_bars()


@pytest.fixture(scope="session")
def cent_bars() -> pd.DataFrame:
    """Crude-oil-like bars: prices near 95 on a 0.01 tick, each the float nearest its cents
    value, as the data files hold them."""
    return make_bars(seed=4, start=95.0, tick=0.01)


@pytest.fixture
def intraday_frame() -> pd.DataFrame:
    """Three trading days of 5-minute bars (100, 100 and 40 bars) with every column the
    evaluator provides: timestamp, OHLCV, range and trading_date."""
    frame = make_bars(rows=240, seed=3)
    frame.insert(0, "timestamp", pd.date_range("2024-03-04 09:30", periods=240, freq="5min"))
    frame["range"] = frame["high"] - frame["low"]
    days = ["2024-03-04"] * 100 + ["2024-03-05"] * 100 + ["2024-03-06"] * 40
    frame["trading_date"] = pd.to_datetime(days)
    return frame


@pytest.fixture(scope="session", params=[11, 3, 4])
def long_bars(request: pytest.FixtureRequest) -> pd.DataFrame:
    """Long enough for a stop (SAR, Supertrend) to flip dozens of times each way."""
    return make_bars(rows=3000, seed=request.param)
