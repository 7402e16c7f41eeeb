"""A standard deviation from a handful of values says how rough it is (p28h b): "NQ's
realized volatility this year" over "ytd" was 12.75 from the data's 4 returns of 2026, said
as plainly as a year's. Counts from pandas over the sample's RTH minute bars."""

from __future__ import annotations

import numpy as np
import pytest
from asking import ask
from rth_bars import sample_rth_days

pytestmark = pytest.mark.slow

RV = "std(ret) * sqrt(252) * 100 as rv"


def _rv(period: str, settings) -> tuple[float, list[str]]:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": period,
        "map": {"ret": "close / prev(close) - 1"},
        "select": [RV, "count()"],
    }
    result = ask(query, settings)
    return result.summary.values["rv"], result.metadata.warnings


def test_a_spread_of_four_returns_says_it_is_rough(sample_settings) -> None:
    closes = sample_rth_days(sample_settings)["close"]
    returns = (closes / closes.shift() - 1).loc["2026"]
    assert len(returns) == 4
    rv, warnings = _rv("ytd", sample_settings)
    assert rv == pytest.approx(returns.std(ddof=1) * np.sqrt(252) * 100, rel=1e-3)
    error = 100 / np.sqrt(2 * (len(returns) - 1))
    assert (
        f"rv rests on a standard deviation of {len(returns)} values only: from so few it is "
        f"known to about ±{error:.0f}% of itself; a longer period gives a steadier one."
    ) in warnings
    _, warnings = _rv("last_1_years", sample_settings)
    assert not [w for w in warnings if "standard deviation of" in w]
