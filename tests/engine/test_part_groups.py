"""Groups and bars that hold part of their week: the data's unfinished last week is compared
with the days the exchange trades in a whole one, not with a median that takes in a week the
period cut ("this week vs last week" over last_2_weeks said "3 days, against 2 in a whole
week").

Expected values by pandas over the sample's raw minute bars (RTH 09:30-17:00), and the
exchange's trading days by pandas_market_calendars, never through Barb.
"""

from __future__ import annotations

import pandas as pd
import pandas_market_calendars as mcal
import pytest

from barb import execute
from barb.data.store import data_path
from barb.instruments import load_instrument

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def daily(sample_settings) -> pd.DataFrame:
    """NQ's RTH days from the raw minute bars: range, volume and the week's Monday."""
    minutes = pd.read_parquet(data_path("NQ", sample_settings))
    rth = minutes[(minutes["minute"] >= 570) & (minutes["minute"] < 1020)]
    days = rth.groupby("trading_date").agg(
        high=("high", "max"), low=("low", "min"), volume=("volume", "sum")
    )
    days["range"] = days["high"] - days["low"]
    days["week"] = days.index - pd.to_timedelta(days.index.dayofweek, unit="D")
    return days


def exchange_days(start: str, end: str) -> pd.DatetimeIndex:
    calendar = mcal.get_calendar(load_instrument("NQ").calendar)
    return calendar.valid_days(start, end).tz_localize(None)


def _ask(query: dict, settings):
    result = execute({"session": "RTH", "from": "daily", **query}, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


@pytest.mark.parametrize("period", ["last_2_weeks", "2025-12-24:"])
def test_the_unfinished_week_is_compared_with_the_exchanges_whole_week(
    period, sample_settings, daily
) -> None:
    """It said "3 days, against 2 in a whole week (the median)" over last_2_weeks (the 1-day
    week the period cut in the median) and "against 3" from 2025-12-24, as if complete."""
    query = {
        "period": period,
        "group_by": "week()",
        "select": ["count() as days", "mean(range) as avg_range"],
    }
    result = _ask(query, sample_settings)
    last = daily.index[-1]
    monday = last - pd.Timedelta(days=last.dayofweek)
    held = int((daily["week"] == monday).sum())
    whole = len(exchange_days(str(monday.date()), str((monday + pd.Timedelta(days=6)).date())))
    assert (held, whole) == (3, 5)
    [said] = [w for w in result.metadata.warnings if "is not over" in w]
    assert f"It holds {held} days, against {whole} in the whole week" in said, said
    # The week the period's start cut is a part group too: the chart is told which.
    first = result.table["week"].iloc[0]
    assert result.metadata.cut_groups == [{"week": str(pd.Timestamp(first).date())}]
    assert result.metadata.open_group == {"week": str(monday.date())}
    start = daily.index[daily.index >= (daily.index[-1] - pd.Timedelta(days=13))][0]
    if period == "2025-12-24:":
        start = pd.Timestamp("2025-12-24")
    shown = daily[daily.index >= start].groupby("week")["range"].agg(["size", "mean"])
    assert result.table["days"].tolist() == shown["size"].tolist()
    assert result.table["avg_range"].tolist() == pytest.approx(shown["mean"].tolist())


def test_with_a_where_the_median_is_of_whole_weeks_only(sample_settings, daily) -> None:
    """Where not every day is kept the calendar's count is no yardstick: the median of the
    groups before it, the week the period's start cut left out of it."""
    query = {
        "period": "2025-12-24:",
        "where": "range > 0",
        "group_by": "week()",
        "select": "count() as days",
    }
    result = _ask(query, sample_settings)
    days = daily[(daily.index >= "2025-12-24") & (daily["range"] > 0)]
    sizes = days.groupby("week").size()
    # Whole weeks: neither the one the period's start cut nor the data's unfinished last.
    whole = sizes.iloc[1:-1]
    assert len(whole) == 1
    [said] = [w for w in result.metadata.warnings if "is not over" in w]
    assert f"It holds {sizes.iloc[-1]} days, against {whole.iloc[0]} in a whole week." in said
