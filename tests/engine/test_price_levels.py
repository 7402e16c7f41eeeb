"""A size in points over years of very different prices says it blends them: "how far does
NQ move in a day" over all history was 171.66 points with no word that the last year's is
391.65 (the price went from about 1,400 to 25,700). Expected values from pandas over the
sample's minute bars, never through Barb."""

from __future__ import annotations

import pandas as pd
import pytest

from barb import execute
from barb.data.store import data_path
from barb.result import Result

pytestmark = pytest.mark.slow

RTH_START, RTH_END = 570, 1020


@pytest.fixture(scope="module")
def nq_minutes(sample_settings) -> pd.DataFrame:
    columns = ["open", "high", "low", "close", "trading_date", "minute"]
    return pd.read_parquet(data_path("NQ", sample_settings), columns=columns)


def _daily(minutes: pd.DataFrame) -> pd.DataFrame:
    days = minutes.groupby("trading_date")
    daily = pd.DataFrame(
        {
            "open": days["open"].first(),
            "high": days["high"].max(),
            "low": days["low"].min(),
            "close": days["close"].last(),
        }
    )
    daily["range"] = daily["high"] - daily["low"]
    return daily


def _level_text(daily: pd.DataFrame) -> str:
    """ "changed 18.7x (mean close 1,372 in 2009, 25,712 in 2026)" from the yearly means."""
    yearly = daily["close"].groupby(daily.index.year).mean()
    low, high = yearly.idxmin(), yearly.idxmax()
    return (
        f"changed {yearly[high] / yearly[low]:.1f}x (mean close {yearly[low]:,.0f} in {low}, "
        f"{yearly[high]:,.0f} in {high})"
    )


def _recent(daily: pd.DataFrame) -> pd.DataFrame:
    last = daily.index[-1]
    return daily[daily.index > last - pd.Timedelta(days=365)]


def _ask(query: dict, settings) -> Result:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def _blend_warnings(result: Result) -> list[str]:
    return [w for w in result.metadata.warnings if "blend" in w]


def test_a_daily_range_over_all_years_gives_the_last_years_beside_it(
    sample_settings, nq_minutes
) -> None:
    daily = _daily(nq_minutes)
    recent = _recent(daily)
    result = _ask(
        {"session": "ETH", "from": "daily", "select": ["mean(range)", "median(range)", "count()"]},
        sample_settings,
    )
    assert result.summary.values["mean_range"] == pytest.approx(daily["range"].mean())
    first, last = recent.index[0].date(), recent.index[-1].date()
    assert _blend_warnings(result) == [
        f"mean_range and median_range are in points over rows whose price level "
        f"{_level_text(daily)}, so they blend price levels: over the rows' last 12 months "
        f"({first} — {last}) mean_range is {recent['range'].mean():,.2f} and median_range is "
        f"{recent['range'].median():,.2f}. For a size comparable across years use percent "
        "(range / open * 100), or a recent period."
    ]


def test_groups_by_weekday_are_warned_once_with_the_last_years_spread(
    sample_settings, nq_minutes
) -> None:
    minute = nq_minutes["minute"]
    daily = _daily(nq_minutes[(minute >= RTH_START) & (minute < RTH_END)])
    recent = _recent(daily)
    by_day = recent["range"].groupby(recent.index.dayofweek).mean()
    result = _ask(
        {
            "session": "RTH",
            "from": "daily",
            "map": {"weekday": "dayname()", "body": "abs(close - open)"},
            "group_by": "weekday",
            "select": ["mean(range)", "max(body)", "mean(range / open * 100) as pct", "count()"],
        },
        sample_settings,
    )
    warned = _blend_warnings(result)
    assert len(warned) == 1
    assert warned[0].startswith(
        f"mean_range and max_body are in points over rows whose price level {_level_text(daily)}"
    )
    assert f"mean_range runs {by_day.min():,.2f}–{by_day.max():,.2f} across the groups" in warned[0]


def test_percents_counts_lists_and_one_recent_year_are_not_warned(sample_settings) -> None:
    percent = {"map": {"rp": "range / open * 100"}, "select": ["mean(rp)", "count()"]}
    listed = {"select": ["range"], "sort": "range desc", "limit": 5}
    recent = {"period": "last_1_years", "select": "mean(range)"}
    one_bar = {"select": "last(range)"}
    for query in (percent, listed, recent, one_bar):
        result = _ask({"session": "ETH", "from": "daily", **query}, sample_settings)
        assert _blend_warnings(result) == [], query
