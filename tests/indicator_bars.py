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
