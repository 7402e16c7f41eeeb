"""Worked examples published by StockCharts ChartSchool, typed in with their printed results.

The printed values are rounded to two decimals, so the comparisons allow half a cent.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from barb import indicators as ind

# ChartSchool "Relative Strength Index (RSI)", the 14-day example spreadsheet: closes and the
# RSI column from its first value (the 15th close) on.
RSI_CLOSES = [
    44.3389, 44.0902, 44.1497, 43.6124, 44.3278, 44.8264, 45.0955, 45.4245, 45.8433, 46.0826,
    45.8931, 46.0328, 45.6140, 46.2820, 46.2820, 46.0028, 46.0328, 46.4116, 46.2222, 45.6439,
]  # fmt: skip
RSI_PUBLISHED = [70.53, 66.32, 66.55, 69.41, 66.36, 57.97]

# ChartSchool "Moving Averages - Simple and Exponential", the 10-day EMA spreadsheet.
EMA_CLOSES = [
    22.27, 22.19, 22.08, 22.17, 22.18, 22.13, 22.23, 22.43, 22.24, 22.29,
    22.15, 22.39, 22.38, 22.61, 23.36, 24.05, 23.75, 23.83, 23.95, 23.63,
    23.82, 23.87, 23.65, 23.19, 23.10, 23.33, 22.68, 23.10, 22.40, 22.17,
]  # fmt: skip
EMA_PUBLISHED = [
    22.22, 22.21, 22.24, 22.27, 22.33, 22.52, 22.80, 22.97, 23.13, 23.28, 23.34,
    23.43, 23.51, 23.53, 23.47, 23.40, 23.39, 23.26, 23.23, 23.08, 22.92,
]  # fmt: skip
SMA_PUBLISHED = [
    22.22, 22.21, 22.23, 22.26, 22.30, 22.42, 22.61, 22.77, 22.91, 23.08, 23.21,
    23.38, 23.52, 23.65, 23.71, 23.68, 23.61, 23.51, 23.43, 23.28, 23.13,
]  # fmt: skip

HALF_CENT = 0.005 + 1e-9


def test_rsi_stockcharts_worked_example() -> None:
    out = ind.rsi(pd.Series(RSI_CLOSES), 14)
    assert out.iloc[:14].isna().all()
    np.testing.assert_allclose(out.iloc[14:].to_numpy(), RSI_PUBLISHED, atol=HALF_CENT, rtol=0)


def test_rsi_first_value_by_hand() -> None:
    """The same example rounded to cents: gains over the first 14 changes sum to 3.34 and
    losses to 1.40, so RSI = 100 * 3.34 / (3.34 + 1.40) exactly."""
    closes = pd.Series(np.round(RSI_CLOSES[:15], 2))
    assert ind.rsi(closes, 14).iloc[14] == pytest.approx(100 * 3.34 / 4.74, rel=1e-12)


def test_ema_stockcharts_worked_example() -> None:
    out = ind.ema(pd.Series(EMA_CLOSES), 10)
    assert out.iloc[:9].isna().all()
    np.testing.assert_allclose(out.iloc[9:].to_numpy(), EMA_PUBLISHED, atol=HALF_CENT, rtol=0)


def test_sma_stockcharts_worked_example() -> None:
    out = ind.sma(pd.Series(EMA_CLOSES), 10)
    np.testing.assert_allclose(out.iloc[9:].to_numpy(), SMA_PUBLISHED, atol=HALF_CENT, rtol=0)
