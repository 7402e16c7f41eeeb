"""group_by week() names each week as the weekly bars do, by its first trading date: the
week of New Year's Day 2024 (a Monday without a session) is 2024-01-02, not 2024-01-01, a
day with no bar (p7 answers #2). Checked over all of NQ's history against pandas over the
sample's raw minute bars, and against the 1w bars' own labels; the CSV and the chart's
slots name the same weeks."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask

from barb.charts.grouped import _period_weeks
from barb.data.store import data_path
from barb.export import csv_bytes

RTH = (570, 1020)  # NQ's RTH, 09:30-17:00, in minutes of the day
QUERY = {"session": "RTH", "from": "daily", "group_by": "week()", "select": "max(high)"}


@pytest.fixture(scope="module")
def first_days(sample_settings) -> pd.Series:
    """Each week's (Monday-Friday) first RTH trading date, by its Monday."""
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=["trading_date", "minute"])
    rth = bars[(bars["minute"] >= RTH[0]) & (bars["minute"] < RTH[1])]
    days = pd.DatetimeIndex(pd.unique(rth["trading_date"])).sort_values()
    mondays = days - pd.to_timedelta(days.dayofweek, unit="D")
    return pd.Series(days, index=mondays).groupby(level=0).min()


def test_week_groups_are_named_by_their_first_trading_date(sample_settings, first_days) -> None:
    result = ask(QUERY, sample_settings)
    assert result.table is not None
    named = pd.DatetimeIndex(result.table["week"])
    assert list(named) == list(first_days)
    late = first_days[first_days.index != first_days]  # weeks whose Monday had no session
    assert pd.Timestamp("2024-01-02") in set(late) and len(late) >= 10
    assert not set(late.index) & set(named)
    # The 1w bars name the same weeks (they leave out the data's cut first and last weeks).
    weekly = ask({"session": "RTH", "from": "weekly", "select": "count()"}, sample_settings)
    assert weekly.source_rows is not None
    bars = pd.DatetimeIndex(weekly.source_rows["week"])
    assert set(bars) <= set(named) and len(bars) >= len(named) - 2
    # The file beside the answer says the same dates.
    rows = csv_bytes(result, "en").decode("utf-8-sig").splitlines()
    assert any(row.startswith("2024-01-02,") for row in rows)
    assert not any(row.startswith("2024-01-01,") for row in rows)


def test_the_charts_week_slots_hold_each_week_once(sample_settings) -> None:
    """Weeks without a row are filled by their Monday; New Year's week, found, is one slot."""
    result = ask(
        {**QUERY, "period": "2024-01-01:2024-02-29", "where": "close > open"}, sample_settings
    )
    assert result.table is not None
    slots = _period_weeks(pd.to_datetime(result.table["week"]), result)
    assert slots is not None
    mondays = [slot - pd.Timedelta(days=slot.dayofweek) for slot in slots]
    assert len(set(mondays)) == len(mondays) == 9
    assert pd.Timestamp("2024-01-02") in slots and pd.Timestamp("2024-01-01") not in slots
