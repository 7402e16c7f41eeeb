"""Weeks cut in two by a coarser calendar key, and a second stage's map that reads its own
select (p28f F1, F3).

"Average weekly range per year" from daily bars as group_by [year(), week()] made each week
across New Year two rows (2009 got a 1-day "week"), pulling the means down by up to 2%,
with nothing said; the then.group_by hint had led there. A then.map reading a column its
own select makes was told to make it "with map: high - low". Checked against pandas over
the sample's raw minute bars, never through Barb.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from asking import ask

from barb import execute
from barb.data.store import data_path

pytestmark = pytest.mark.slow

RTH = (570, 1020)  # NQ's RTH, 09:30-17:00, in minutes of the day
FIRST, LAST = pd.Timestamp("2008-01-01"), pd.Timestamp("2025-12-31")
SPLIT = {
    "session": "RTH",
    "from": "daily",
    "period": "2008:2025",
    "group_by": ["year()", "week()"],
    "select": ["(max(high) - min(low)) / first(open) * 100 as wk_rng"],
    "then": {"group_by": "year", "select": ["mean(wk_rng) as avg_wk_rng", "count() as weeks"]},
}
HIGH_HOUR = {
    "session": "RTH",
    "from": "1h",
    "group_by": "date()",
    "select": "arg_max(time(), high) as high_time",
}


@pytest.fixture(scope="module")
def minutes(sample_settings) -> pd.DataFrame:
    """NQ's RTH minute bars, with their trading date."""
    bars = pd.read_parquet(data_path("NQ", sample_settings))
    bars = bars[(bars["minute"] >= RTH[0]) & (bars["minute"] < RTH[1])].copy()
    bars["day"] = pd.DatetimeIndex(bars["trading_date"])
    return bars


@pytest.fixture(scope="module")
def daily(minutes) -> pd.DataFrame:
    """NQ's RTH daily bars by trading date, with each date's week (its Monday)."""
    days = minutes.groupby("day").agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min")
    )
    days["week"] = days.index - pd.to_timedelta(days.index.dayofweek, unit="D")
    return days


def test_year_and_week_keys_say_how_many_weeks_they_split(sample_settings, daily) -> None:
    kept = daily[(daily.index >= FIRST) & (daily.index <= LAST)]
    years = kept.groupby("week")["open"].apply(lambda w: w.index.year.nunique())
    split = years[years > 1]
    assert len(split) == 7 and str(split.index[0].date()) == "2008-12-29"
    result = ask(SPLIT, sample_settings)
    said = [w for w in result.metadata.warnings if "cross a year's end" in w]
    assert len(said) == 1, result.metadata.warnings
    assert said[0].startswith(f"{len(split)} of the {len(years)} weeks cross a year's end")
    first = kept[kept["week"] == split.index[0]].index.year.value_counts().sort_index()
    assert (
        f"the week of 2008-12-29: {first[2008]} days in 2008 and {first[2009]} day in 2009"
        in (said[0])
    )
    assert '"from": "weekly" with "group_by": "year()"' in said[0]


def test_the_whole_week_form_it_gives_matches_pandas(sample_settings, daily) -> None:
    """Weekly bars grouped by year(): each week whole, in the year of its first trading
    date; the period keeps the weeks wholly inside it."""
    weekly = {
        "session": "RTH",
        "from": "weekly",
        "period": "2008:2025",
        "map": {"wk_rng": "range / open * 100"},
        "group_by": "year()",
        "select": ["mean(wk_rng) as avg_wk_rng", "count() as weeks"],
    }
    result = ask(weekly, sample_settings).table.set_index("year")
    weeks = daily.groupby("week").agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min")
    )
    first_dates = pd.Series(daily.index, index=daily.index).groupby(daily["week"]).min()
    weeks["year"] = first_dates.dt.year
    inside = (weeks.index >= FIRST) & (weeks.index + pd.Timedelta(days=4) <= LAST)
    weeks = weeks[inside]
    weeks["wk_rng"] = (weeks["high"] - weeks["low"]) / weeks["open"] * 100
    expected = weeks.groupby("year")["wk_rng"].agg(["mean", "count"])
    assert list(result.index) == list(expected.index)
    assert list(result["avg_wk_rng"]) == pytest.approx(list(expected["mean"]))
    assert list(result["weeks"]) == list(expected["count"])
    split = ask(SPLIT, sample_settings).table.set_index("year")
    assert split.loc[2009, "avg_wk_rng"] < result.loc[2009, "avg_wk_rng"] - 0.05


def test_date_and_year_keys_say_nothing_of_weeks(sample_settings) -> None:
    query = {**SPLIT, "group_by": ["year()", "date()"], "then": {"group_by": "year"}}
    result = ask(query, sample_settings)
    assert not [w for w in result.metadata.warnings if "cross a year's end" in w]


def test_then_year_over_weeks_points_to_weekly_bars(sample_settings) -> None:
    query = {**SPLIT, "group_by": "week()", "then": {"group_by": "year()"}}
    error = execute(query, "NQ", settings=sample_settings).to_dict()
    assert error["error_type"] == "UnknownColumn" and error["step"] == "then.group_by"
    assert '"from": "weekly" with "group_by": "year()"' in error["hint"]
    assert '"date()"' not in error["hint"]
    days = {**query, "group_by": "date()"}
    error = execute(days, "NQ", settings=sample_settings).to_dict()
    assert (
        'put year() in the first stage (e.g. "group_by": ["year()", "date()"])' in (error["hint"])
    )


def test_then_map_reading_its_select_says_map_runs_first(sample_settings, minutes) -> None:
    then = {"group_by": "high_time", "select": "count() as days", "map": {"pct": "days / 2"}}
    error = execute({**HIGH_HOUR, "then": then}, "NQ", settings=sample_settings).to_dict()
    assert error["step"] == "then.map" and "high - low" not in error["hint"]
    assert "in then, map runs before group_by and select" in error["hint"]
    form = json.loads("{" + error["hint"].split("count them all in map first: ")[1] + "}")
    assert form["then"]["group_by"] == "high_time"

    table = ask({**HIGH_HOUR, **form}, sample_settings).table.set_index("high_time")
    slot = (minutes["minute"] - RTH[0]) // 60
    hourly = minutes.assign(slot=slot).groupby(["day", "slot"])["high"].max()
    top = hourly.groupby(level="day").idxmax().map(lambda key: key[1])  # the earliest tie
    hours = top.map(lambda s: f"{(RTH[0] + 60 * s) // 60:02d}:{(RTH[0] + 60 * s) % 60:02d}")
    share = hours.value_counts().sort_index() / len(hours) * 100
    assert list(table.index.astype(str)) == list(share.index)
    assert list(table["days"]) == list(hours.value_counts().sort_index())
    assert np.allclose(table["pct"], share)
