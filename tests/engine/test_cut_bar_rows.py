"""A weekly bar the period's edges cut, left out, is said to hold a row the query counts.

NQ's weekly MACD crossed below its signal in the week 2024-12-30, which 2025's first two
days close: "in 2024" and "in 2025" both left it out (counts 1 and 2), and the warning named
the week without saying it held a cross. Now it says so, with the count that includes it.
Checked against weekly bars built here with pandas (TA-Lib's MACD for the sample's).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import talib
from asking import ask, warnings_with
from rth_bars import rth_daily, sample_rth_days

CUT = "cut by the period's edges"


def _weeks(daily: pd.DataFrame) -> pd.DataFrame:
    """Weekly bars of daily ones: each week's first and last date and its close."""
    days = pd.DatetimeIndex(daily.index)
    weeks = daily.groupby(days.to_period("W-SUN").start_time)
    return pd.DataFrame(
        {
            "first": weeks.apply(lambda w: w.index[0]),
            "last": weeks.apply(lambda w: w.index[-1]),
            "close": weeks["close"].last(),
        }
    )


def _up_weeks(minutes: pd.DataFrame) -> pd.DataFrame:
    weeks = _weeks(rth_daily(minutes))
    weeks["up"] = weeks["close"] > weeks["close"].shift()
    return weeks


def _count_up(period: str, settings, where: bool = False):
    query = {
        "session": "RTH",
        "from": "weekly",
        "period": period,
        "map": {"up": "close > prev(close)"},
    }
    if where:
        return ask({**query, "where": "up", "select": "count()"}, settings)
    return ask({**query, "select": "count(up)"}, settings)


def _cut_in_week(weeks: pd.DataFrame, up: bool) -> tuple[str, pd.Timestamp]:
    """A period from the first week's Monday to the Wednesday of a whole week (after the
    first two, Tuesday-to-Friday ones) that went up (``up``) or not."""
    inner = weeks.iloc[2:-1]
    week = inner.index[inner["up"] == up][0]
    return f"{weeks.index[0].date()}:{(week + pd.Timedelta(days=2)).date()}", week


@pytest.mark.parametrize("where", [False, True])
def test_a_cut_week_that_would_count_is_said_with_the_count(engine_settings, minutes, where):
    weeks = _up_weeks(minutes)
    period, week = _cut_in_week(weeks, up=True)
    whole = weeks[weeks["last"] <= pd.Timestamp(period.split(":")[1])]
    expected = int(whole["up"].sum())
    result = _count_up(period, engine_settings, where)
    name = "count" if where else "count_up"
    assert result.summary.value == expected
    label = weeks.loc[week, "first"].date()
    said = warnings_with(result, CUT)[0]
    who = f"The where keeps the week {label}" if where else f"count_up counts the week {label}"
    assert f"{who}: with it {name} is {expected + 1}, not {expected}." in said


def test_a_cut_week_that_would_not_count_is_not_said(engine_settings, minutes):
    weeks = _up_weeks(minutes)
    period, _ = _cut_in_week(weeks, up=False)
    said = warnings_with(_count_up(period, engine_settings), CUT)
    assert said and "counts the week" not in said[0]  # the cut is said, no row of it


@pytest.mark.slow
def test_weekly_macd_cross_of_a_week_across_new_year(sample_settings):
    """The finding's own query, against TA-Lib's MACD over the sample's whole weekly history."""
    weeks = _weeks(sample_rth_days(sample_settings).rename_axis(None))
    _, _, hist = talib.MACD(weeks["close"].to_numpy(), 12, 26, 9)
    weeks["cross"] = (hist < 0) & (np.roll(hist, 1) >= 0)
    week = pd.Timestamp("2024-12-30")
    assert weeks.loc[week, "cross"]  # the sample's cross in the week across New Year
    for year, first, last in [
        (2024, "2024-01-01", "2024-12-31"),
        (2025, "2025-01-01", "2025-12-31"),
    ]:
        whole = weeks[(weeks["first"] >= first) & (weeks["last"] <= last)]
        expected = int(whole["cross"].sum())
        query = {
            "session": "RTH",
            "from": "weekly",
            "period": str(year),
            "map": {"hist": "macd_hist()", "xdn": "hist < 0 and prev(hist) >= 0"},
            "select": "count(xdn)",
        }
        result = ask(query, sample_settings)
        assert result.summary.value == expected
        said = warnings_with(result, CUT)[0]
        assert (
            f"count_xdn counts the week 2024-12-30: with it count_xdn is {expected + 1}, "
            f"not {expected}." in said
        )
