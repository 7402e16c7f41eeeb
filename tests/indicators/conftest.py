"""Deterministic OHLCV bars for the indicator tests.

Prices move on a 0.25 tick so that equal closes and equal typical prices occur (the branches
of OBV and MFI that TA-Lib treats specially); nothing is flat for long, so that every
indicator is defined and comparable with TA-Lib after its warm-up. The cent bars move on
CL's 0.01 tick, which floats cannot hold exactly: two equal typical prices can differ by
float noise, as CL's 2010-04-20 and -21 (both 94.36, 1.4e-14 apart) did.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

TICK = 0.25


def make_bars(
    rows: int = 600, seed: int = 11, start: float = 4000.0, tick: float = TICK
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    steps = rng.choice([-3, -2, -1, 0, 0, 1, 2, 3], size=rows)
    close = np.round(start + np.cumsum(steps) * tick, 2)
    open_ = np.round(
        np.concatenate(([start], close[:-1])) + rng.choice([-1, 0, 0, 1], size=rows) * tick, 2
    )
    high = np.round(np.maximum(open_, close) + rng.integers(0, 6, rows) * tick, 2)
    low = np.round(np.minimum(open_, close) - rng.integers(0, 6, rows) * tick, 2)
    volume = rng.integers(50, 5000, rows).astype(np.int64)
    return pd.DataFrame({"open": open_, "high": high, "low": low, "close": close, "volume": volume})


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
