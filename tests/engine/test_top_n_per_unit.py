"""The N largest of each week, month or year, and a level nested three deep (p39b Q2, Q10).

"The average 5-day return after the 3 biggest down days of each year": rank() is a
percentile, so rank(ret, 'year') <= 3 kept 7 days a year, and the count took a formula of two
ranks and a cumsum; place() counts 1, 2, 3… from the highest. A pick of each unit's first N
places keeps N rows whatever they hold: the data's last year, 4 days with 2 drops, gave "its 3
biggest drops" with a +0.71% day among them, said now; its open-year warning read "It holds 3
days, against 3 in a whole year"; and its chart drew the n/a forward return as a bar at 0.
Days → weeks → years ("weeks in which every day closed above VWAP, by year") nested a then in
then and was told only then's fields; the hint now folds the days into the first stage.
Expected values from pandas over the fixture's minutes (and the sample's), never Barb's."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from asking import ask, warnings_with
from matplotlib.collections import PolyCollection
from rth_bars import rth_daily, rth_minutes, sample_rth_days

from barb import execute
from barb.charts import draw_chart
from barb.data.store import data_path
from barb.result import Result
from barb.script.query import THIRD_STAGE_EXAMPLE

RTH_DAILY = {"session": "RTH", "from": "daily"}
RET = "(close / prev(close) - 1) * 100"


def _days(minutes: pd.DataFrame) -> pd.DataFrame:
    days = rth_daily(minutes)
    days["ret"] = (days["close"] / days["close"].shift() - 1) * 100
    days["week"] = days.index - pd.to_timedelta(days.index.weekday, unit="D")
    days["month"] = days.index.month
    return days


def test_place_counts_each_month_s_biggest_drops(engine_settings, minutes) -> None:
    days = _days(minutes)
    drops = days.groupby("month")["ret"].apply(lambda r: r.nsmallest(3))
    query = RTH_DAILY | {
        "map": {"ret": RET},
        "where": "place(-ret, 'month') <= 3",
        "group_by": "month()",
        "select": ["count() as days", "mean(ret) as mean_drop", "min(ret) as worst"],
    }
    table = ask(query, engine_settings).table
    assert table["days"].tolist() == [3, 3, 3]
    assert table["mean_drop"].tolist() == pytest.approx(drops.groupby(level=0).mean().tolist())
    assert table["worst"].tolist() == pytest.approx(drops.groupby(level=0).min().tolist())


def test_a_week_with_fewer_drops_than_picked_is_said(engine_settings, minutes) -> None:
    """Weeks of 4 or 5 days with fewer than 3 down days: their "3 biggest drops" hold a day
    that did not drop, named by the first such week's first such pick."""
    days = _days(minutes)
    picks = days.groupby("week", group_keys=False)["ret"].apply(lambda r: r.nsmallest(3))
    wrong = picks[picks >= 0]
    assert len(wrong)  # the case: the fixture has such weeks
    first_day = wrong.index[0]
    query = RTH_DAILY | {
        "map": {"ret": RET},
        "where": "place(-ret, 'week') <= 3",
        "group_by": "week()",
        "select": ["count() as days", "mean(ret)"],
    }
    (said,) = _pick_warnings(ask(query, engine_settings), "place(-ret, 'week') <= 3")
    first_week = first_day - pd.Timedelta(
        days=first_day.weekday()
    )  # week(): its first trading date, a Monday here
    assert "fewer than 3 rows with -ret above 0" in said, said
    assert f"-ret = {-wrong.iloc[0]:.4g} on {first_day:%Y-%m-%d}" in said, said
    assert said.split(" but ")[1].startswith(f"{first_week:%Y-%m-%d}"), said
    assert "holds fewer" not in said  # every week has 3 rows or more


def test_a_week_the_period_cuts_short_is_picked_from_the_whole_week(
    engine_settings, minutes
) -> None:
    """The period starts on a Thursday: that week's 3 widest days are its whole week's (as
    cummax(high, 'week') reads its whole week), of which the period holds 1; they were the
    period's 2 days, both kept as "its 3 widest". The week's cut is said as a group's, and
    no pick is said short."""
    days = _days(minutes)
    days["range"] = days["high"] - days["low"]
    start = days.index[(days.index.weekday == 3)][0]
    week = days[days["week"] == days.loc[start, "week"]]
    widest = week["range"].nlargest(3, keep="first").index
    in_period = int((widest >= start).sum())
    assert len(week[week.index >= start]) == 2 and in_period == 1  # the case
    query = RTH_DAILY | {
        "period": f"{start:%Y-%m-%d}:",
        "where": "place(range, 'week') <= 3",
        "group_by": "week()",
        "select": ["count() as days"],
    }
    result = ask(query, engine_settings)
    assert result.table["days"].iloc[0] == in_period
    assert not _pick_warnings(result, "place(range, 'week') <= 3")
    # Named as week() names it: by its first trading date.
    assert warnings_with(result, f"The week {week.index[0]:%Y-%m-%d} began before")


def test_a_pick_of_whole_units_says_nothing(engine_settings) -> None:
    query = RTH_DAILY | {"where": "place(range, 'month') <= 2", "select": "count()"}
    assert not warnings_with(ask(query, engine_settings), "place(")


@pytest.mark.slow
def test_each_year_s_three_biggest_drops_over_the_sample(sample_settings) -> None:
    """The play test's question: each year's 3 largest drops and the 5 days after them, as
    pandas' nsmallest(3) per year; 2026, 4 days when the data ends, 2 of them down, is said
    twice: its picks hold a day that rose, and they came from the 4 days it has so far (not
    "against 3 in a whole year")."""
    days = sample_rth_days(sample_settings)
    days["ret"] = (days["close"] / days["close"].shift() - 1) * 100
    days["fwd5"] = (days["close"].shift(-5) / days["close"] - 1) * 100
    years = pd.DatetimeIndex(days.index).year
    picks = days.groupby(years, group_keys=False).apply(lambda d: d.nsmallest(3, "ret"))
    by_year = picks.groupby(pd.DatetimeIndex(picks.index).year)
    query = RTH_DAILY | {
        "map": {"ret": RET, "fwd5": "(next(close, 5) / close - 1) * 100"},
        "where": "place(-ret, 'year') <= 3",
        "group_by": "year()",
        "select": ["count() as days", "mean(ret) as mean_drop", "mean(fwd5)"],
    }
    result = ask(query, sample_settings)
    assert result.table["mean_drop"].tolist() == pytest.approx(by_year["ret"].mean().tolist())
    fwd = result.table["mean_fwd5"].to_numpy(dtype=float)
    np.testing.assert_allclose(fwd, by_year["fwd5"].mean().to_numpy(), rtol=1e-9)

    last = days[years == years.max()]
    rose = picks[(pd.DatetimeIndex(picks.index).year == years.max()) & (picks["ret"] >= 0)]
    assert len(last) == 4 and (last["ret"] < 0).sum() == 2 and len(rose) == 1
    (said,) = warnings_with(result, "place(-ret, 'year') <= 3")
    assert said == (
        f"place(-ret, 'year') <= 3 keeps 3 rows per year, but {years.max()} has fewer than 3 "
        f"rows with -ret above 0, so the picks include -ret = {-rose['ret'].iloc[0]:.4g} on "
        f"{rose.index[0]:%Y-%m-%d}."
    )
    (open_year,) = warnings_with(result, "is not over")
    assert open_year.endswith(
        "It holds 3 days, as many as in a whole year, picked from the 4 it has so far."
    ), open_year


def test_a_missing_value_draws_no_bar(engine_settings, minutes) -> None:
    """March's 20-day forward move is empty (the data ends 19 days into it): no bar at 0,
    an n/a at its place."""
    days = _days(minutes)
    ahead = days["close"].shift(-20) - days["close"]
    means = ahead.groupby(days["month"]).mean()
    assert np.isnan(means[3]) and means[[1, 2]].notna().all()
    query = RTH_DAILY | {
        "map": {"ahead": "next(close, 20) - close"},
        "group_by": "month()",
        "select": ["mean(ahead) as ahead", "count() as days"],
    }
    result = ask(query, engine_settings)
    assert result.table["ahead"].tolist()[:2] == pytest.approx(means[[1, 2]].tolist())
    fig = draw_chart(result)
    assert fig is not None
    panel = next(ax for ax in fig.axes if any("ahead" in t.get_text() for t in ax.texts))
    (bars,) = [c for c in panel.collections if isinstance(c, PolyCollection)]
    faces, edges = bars.get_facecolors(), bars.get_edgecolors()
    assert faces[2][3] == 0 and (len(edges) < 3 or edges[2][3] == 0)  # March: nothing drawn
    assert faces[0][3] > 0 and faces[1][3] > 0
    assert "n/a" in [t.get_text() for t in panel.texts]


def _weeks_every_day_above_vwap(minutes: pd.DataFrame) -> pd.DataFrame:
    """Per year (of each week's first trading day): the weeks, and those whose every RTH day
    closed above its typical-price VWAP from 09:30."""
    rth = rth_minutes(minutes)
    typical = (rth["high"] + rth["low"] + rth["close"]) / 3
    by_day = rth.assign(pv=typical * rth["volume"]).groupby("day")
    day = pd.DataFrame(
        {"close": by_day["close"].last(), "vwap": by_day["pv"].sum() / by_day["volume"].sum()}
    )
    day["above"] = day["close"] > day["vwap"]
    day["week"] = day.index - pd.to_timedelta(day.index.weekday, unit="D")
    weeks = day.groupby("week").agg(first=("above", lambda s: s.index[0]), every=("above", "all"))
    years = weeks.groupby(weeks["first"].dt.year)
    return pd.DataFrame({"weeks": years.size(), "every": years["every"].sum()})


def test_a_then_in_then_is_shown_the_two_stage_form(engine_settings, minutes) -> None:
    nested = {
        "session": "RTH",
        "from": "1m",
        "map": {"vw": "vwap()"},
        "group_by": "date()",
        "select": ["last(close) > last(vw) as above", "first(week()) as wk"],
        "then": {
            "group_by": "wk",
            "select": "min(above) as all_above",
            "then": {"select": "sum(all_above)"},
        },
    }
    error = execute(nested, "NQ", settings=engine_settings).to_dict()
    assert error["message"] == "Unknown field 'then' in then.", error
    assert THIRD_STAGE_EXAMPLE in error["hint"] and "week()" in error["hint"]

    want = _weeks_every_day_above_vwap(minutes)
    result = ask(json.loads(THIRD_STAGE_EXAMPLE), engine_settings)
    assert result.table["weeks"].tolist() == want["weeks"].tolist()
    assert result.table["weeks_every_day"].tolist() == want["every"].tolist()
    assert not warnings_with(result, "reads a later trading date")  # its last bars are the point


@pytest.mark.slow
def test_the_two_stage_form_over_three_years_of_the_sample(sample_settings) -> None:
    """The play test's answer, 1 of 52 weeks in 2023, 0 of 53 in 2024, 1 of 52 in 2025."""
    columns = ["timestamp", "high", "low", "close", "volume", "trading_date", "minute"]
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=columns)
    dates = pd.to_datetime(bars["trading_date"])
    bars = bars[(dates.dt.year >= 2023) & (dates.dt.year <= 2025)]
    want = _weeks_every_day_above_vwap(bars.drop(columns=["trading_date", "minute"]))
    assert want["every"].tolist() == [1, 0, 1]
    query = json.loads(THIRD_STAGE_EXAMPLE) | {"period": "2023:2025"}
    result = ask(query, sample_settings)
    assert result.table["weeks"].tolist() == want["weeks"].tolist() == [52, 53, 52]
    assert result.table["weeks_every_day"].tolist() == want["every"].tolist()
    assert not warnings_with(result, "reads a later trading date")


def _pick_warnings(result: Result, where: str) -> list[str]:
    """The warnings naming ``where``'s picks: a short week's hint quotes the where too, as
    the count(...) that counts its rows without it ("1 of the 13 weeks listed holds fewer
    than 5 trading days: … (count(place(range, 'week') <= 3) counts the rows it keeps)")."""
    return [w for w in warnings_with(result, where) if "weeks listed holds fewer than" not in w]
