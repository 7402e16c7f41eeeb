"""weekofyear() and dayofyear(): the trading date's ISO week and day of the year, checked
against pandas' isocalendar() and dayofyear over the sample's own trading dates."""

from __future__ import annotations

import pandas as pd
import pytest

from barb import execute
from barb.data.store import data_path
from barb.settings import EngineSettings


@pytest.fixture(scope="module")
def nq_dates(sample_settings: EngineSettings) -> pd.DatetimeIndex:
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=["trading_date"])
    return pd.DatetimeIndex(bars["trading_date"].unique()).sort_values()


def _table(query: dict, settings: EngineSettings) -> pd.DataFrame:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result.table


def test_week_and_day_of_year_of_every_trading_date(sample_settings, nq_dates) -> None:
    table = _table(
        {
            "session": "ETH",
            "from": "daily",
            "map": {"w": "weekofyear()", "d": "dayofyear()"},
            "select": ["w", "d"],
        },
        sample_settings,
    )
    dates = pd.DatetimeIndex(pd.to_datetime(table["date"]))
    assert dates.equals(nq_dates)
    assert table["w"].tolist() == nq_dates.isocalendar()["week"].tolist()
    assert table["d"].tolist() == nq_dates.dayofyear.tolist()
    by_date = table.set_index(dates)
    # ISO weeks cross New Year: 2024-12-30 is week 1 (of 2025), 2021-01-04 week 1 and
    # 2021-01-01 week 53 (of 2020); a leap year's Dec 31 is day 366.
    assert by_date.loc["2024-12-30", "w"] == 1 and by_date.loc["2021-01-04", "w"] == 1
    assert by_date.loc["2020-12-31", "w"] == 53 and by_date.loc["2020-12-31", "d"] == 366


def test_minute_bars_take_their_trading_date(sample_settings) -> None:
    """A Sunday-evening bar belongs to Monday's trading date, as month() and year() do."""
    table = _table(
        {
            "session": "ETH",
            "from": "1h",
            "period": "2024-12-29:2024-12-31",
            "map": {"w": "weekofyear()", "d": "dayofyear()"},
            "select": ["w", "d"],
        },
        sample_settings,
    )
    sunday = table[pd.to_datetime(table["timestamp"]).dt.dayofweek == 6]
    assert len(sunday) and (sunday["w"] == 1).all() and (sunday["d"] == 365).all()


def test_seasonality_by_iso_week(sample_settings) -> None:
    """The tester's question: the weeks of the year NQ rose most in, weekly RTH returns keyed
    by the week's first trading date's ISO week, from the raw minute bars."""
    bars = pd.read_parquet(
        data_path("NQ", sample_settings), columns=["trading_date", "minute", "close"]
    )
    rth = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]
    daily = rth.groupby("trading_date")["close"].last()
    monday = daily.index - pd.to_timedelta(daily.index.dayofweek, unit="D")
    weeks = daily.groupby(monday).agg(["last"])
    first_date = pd.Series(daily.index, index=daily.index).groupby(monday).first()
    weeks["ret"] = weeks["last"].pct_change() * 100
    weeks["w"] = pd.DatetimeIndex(first_date.to_numpy()).isocalendar()["week"].to_numpy()
    expected = weeks.groupby("w")["ret"].mean().sort_values(ascending=False).head(5)
    table = _table(
        {
            "session": "RTH",
            "from": "weekly",
            "map": {"ret": "(close / prev(close) - 1) * 100", "w": "weekofyear()"},
            "group_by": "w",
            "select": "mean(ret) as avg",
            "sort": "avg desc",
            "limit": 5,
        },
        sample_settings,
    )
    assert table["w"].tolist() == expected.index.tolist()
    assert table["avg"].round(9).tolist() == expected.round(9).tolist()
