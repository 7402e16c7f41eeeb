"""Grouped means whose highest and lowest groups differ by less than two standard errors of
the difference are said to be within noise: "the most volatile weekday" named Wednesday by
3.4 points, each weekday's mean known to about ±4.5. Expected values from numpy over the
sample's RTH minute bars, never through Barb."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from barb import execute
from barb.data.store import data_path
from barb.result import Result

pytestmark = pytest.mark.slow

RTH_START, RTH_END = 570, 1020
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri"]


@pytest.fixture(scope="module")
def rth_days(sample_settings) -> pd.DataFrame:
    columns = ["open", "high", "low", "close", "trading_date", "minute"]
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=columns)
    bars = bars[(bars["minute"] >= RTH_START) & (bars["minute"] < RTH_END)]
    days = bars.groupby("trading_date")
    daily = pd.DataFrame(
        {
            "open": days["open"].first(),
            "high": days["high"].max(),
            "low": days["low"].min(),
            "close": days["close"].last(),
        }
    )
    daily["range"] = daily["high"] - daily["low"]
    daily["pct"] = daily["range"] / daily["open"] * 100
    return daily


def _ends(values: pd.Series, keys: pd.Series) -> tuple[str, str, bool]:
    """ "Wed 140.64 ± 9.6", "Mon 137.21 ± 9.5" and whether their gap is under two standard
    errors of the difference, with numpy."""
    stats = {}
    for key, group in values.groupby(keys):
        array = group.to_numpy(dtype=float)
        stats[key] = (array.mean(), array.std(ddof=1) / np.sqrt(len(array)))
    high = max(stats, key=lambda k: stats[k][0])
    low = min(stats, key=lambda k: stats[k][0])

    def text(key: str) -> str:
        mean, error = stats[key]
        return f"{key} {_quoted(mean)} ± {float(f'{2 * error:.2g}'):g}"

    gap = stats[high][0] - stats[low][0]
    noisy = gap < 2 * np.hypot(stats[high][1], stats[low][1])
    return text(high), text(low), bool(noisy)


def _quoted(value: float) -> str:
    """As the summary quotes a number: 2 decimals from 100 up, else 4 significant digits."""
    digits = 2 if abs(value) >= 100 else max(2, 3 - math.floor(math.log10(abs(value))))
    return f"{round(value, digits):.10g}"


def _ask(query: dict, settings) -> Result:
    result = execute({"session": "RTH", "from": "daily", **query}, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def test_weekday_means_within_their_noise_name_no_winner(sample_settings, rth_days) -> None:
    weekday = pd.Series(
        [DAYS[d] for d in rth_days.index.dayofweek], index=rth_days.index, name="weekday"
    )
    high, low, noisy = _ends(rth_days["range"], weekday)
    pct_high, pct_low, pct_noisy = _ends(rth_days["pct"], weekday)
    assert noisy and pct_noisy  # the case the warning is for
    result = _ask(
        {
            "map": {"weekday": "dayname()", "rp": "range / open * 100"},
            "group_by": "weekday",
            "select": ["mean(range)", "mean(rp) as pct", "count()"],
        },
        sample_settings,
    )
    assert (
        "The groups' means differ by less than their noise: "
        f"mean_range highest {high}, lowest {low}; pct highest {pct_high}, lowest {pct_low} "
        "(± 2 standard errors)."
    ) in result.metadata.warnings
    assert result.metadata.even_groups == ["mean_range", "pct"]


def test_years_far_apart_are_not_called_noise(sample_settings, rth_days) -> None:
    _, _, noisy = _ends(rth_days["pct"], pd.Series(rth_days.index.year, index=rth_days.index))
    assert not noisy
    result = _ask(
        {"map": {"rp": "range / open * 100"}, "group_by": "year()", "select": "mean(rp)"},
        sample_settings,
    )
    assert not [w for w in result.metadata.warnings if "their noise" in w]
    assert result.metadata.even_groups is None
