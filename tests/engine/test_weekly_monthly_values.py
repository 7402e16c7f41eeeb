"""weekly(expr, lag=1) and monthly(expr, lag=1): daily()'s family, by week and by month.

"Which weekday first takes out last week's high?" had no lag by week: the working query was
a nested if over trading_day('week') with prev(cummax(high, 'week'), k) for each k (p38a
#7), which a model rarely finds, and a cummax per week cut by a period that starts mid-week
gave a false level silently (p38a #8). weekly(high) is last week's high on daily or
intraday rows, read from the session's weekly bars over all history. Checked against
weekly and monthly bars built with pandas from the fixture's RTH minutes (weeks from Monday
by trading date; the fixture's Monday 2024-01-15 has no bars), and the tester's question
against DuckDB over the full sample.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import talib
from asking import ask, warnings_with
from rth_bars import rth_daily

from barb import execute
from barb.instruments import load_instrument
from barb.reference import describe_concept, query_reference

# The calls each row is given: (name in the answer, function, column, unit, lag).
CALLS = [
    ("w1", "weekly", "high", "W", 1),
    ("w2", "weekly", "low", "W", 2),
    ("w0", "weekly", "close", "W", 0),
    ("m1", "monthly", "high", "M", 1),
    ("m0", "monthly", "open", "M", 0),
]
HOW = {"open": "first", "high": "max", "low": "min", "close": "last"}


def _unit_start(dates: pd.DatetimeIndex, unit: str) -> pd.DatetimeIndex:
    """The Monday of each date's week, or the first of its month."""
    if unit == "W":
        return dates - pd.to_timedelta(dates.dayofweek, unit="D")
    return dates.to_period("M").to_timestamp()


def _expected(days: pd.DataFrame, dates: pd.DatetimeIndex, column: str, unit: str, lag: int):
    """Each date's value of the week (month) ``lag`` back, over every day of the data."""
    bars = days[column].groupby(_unit_start(days.index, unit)).agg(HOW[column])
    return bars.shift(lag).reindex(_unit_start(dates, unit)).to_numpy()


@pytest.mark.parametrize(
    ("session", "bars", "period", "also"),
    [
        # Starts on a Thursday: the week's own values reach back before the period.
        ("RTH", "daily", "2024-02-01:2024-03-28", ""),
        # The data's first week and month (no week before them), the holiday week; ETH's
        # Sunday-evening bars are Monday's, so they read the week before it.
        ("ETH", "1h", "2024-01", ", 'RTH'"),
    ],
)
def test_weekly_and_monthly_values_are_pandas_over_all_history(
    engine_settings, minutes, session, bars, period, also
) -> None:
    calls = {name: f"{call}({column}, {lag}{also})" for name, call, column, _, lag in CALLS}
    calls["w1"] = f"weekly(high{also and ', 1' + also})"  # lag 1 by default
    result = ask(
        {
            "session": session,
            "from": bars,
            "period": period,
            "map": calls,
            "group_by": "date()",
            "select": [f"first({n}) as {n}" for n in calls]
            + [f"max({n}) - min({n}) as moved_{n}" for n in calls],
        },
        engine_settings,
    )
    got = result.table
    dates = pd.DatetimeIndex(pd.to_datetime(got["date"]))
    days = rth_daily(minutes)
    for name, _, column, unit, lag in CALLS:
        expected = _expected(days, dates, column, unit, lag)
        np.testing.assert_allclose(got[name].to_numpy(float), expected, err_msg=name)
        # One value all day, the first hour of Sunday evening included.
        assert (got[f"moved_{name}"].dropna() == 0).all(), name
    w1 = got["w1"].to_numpy(float)
    if bars == "daily":
        assert not np.isnan(w1).any()
    else:  # the data begins on Tuesday 2024-01-02: no week, no month before it
        assert np.isnan(w1[dates < pd.Timestamp("2024-01-08")]).all()
        assert not np.isnan(w1[dates >= pd.Timestamp("2024-01-08")]).any()
        assert np.isnan(got["m1"].to_numpy(float)).all()


def test_last_weeks_high_is_the_whole_weeks_from_a_midweek_period(engine_settings, minutes):
    """cummax(high, 'week') under a period starting on Thursday 2024-02-01 keeps that day's
    high alone for its week (p38a #8); weekly(high) on the Monday after is the whole
    week's, Monday 01-29 to Friday 02-02."""
    result = ask(
        {"period": "2024-02-01:2024-02-05", "map": {"pwh": "weekly(high)"}},
        engine_settings,
        session="RTH",
        **{"from": "daily"},
        select=["date()", "pwh"],
    )
    days = rth_daily(minutes)
    whole_week = days.loc["2024-01-29":"2024-02-02", "high"].max()
    assert result.table["pwh"].iloc[-1] == whole_week
    assert whole_week > days.loc["2024-02-01":"2024-02-02", "high"].max()


def test_a_part_of_the_day_reads_its_own_weeks_and_says_so(engine_settings, minutes) -> None:
    """weekly(atr(3)) on RTH_OPEN bars reads the first hour's weekly bars, as daily() reads
    its daily bars: said beside the whole session's, averaged over weeks; the whole
    session's is TA-Lib's ATR over pandas' RTH weekly bars."""
    result = ask(
        {
            "session": "RTH_OPEN",
            "from": "5m",
            "period": "2024-03",
            "map": {"own": "weekly(atr(3))", "rth": "weekly(atr(3), 1, 'RTH')"},
            "group_by": "date()",
            "select": ["first(rth) as rth"],
        },
        engine_settings,
    )
    days = rth_daily(minutes)
    weeks = days.groupby(_unit_start(days.index, "W")).agg(HOW)
    atr = pd.Series(talib.ATR(weeks["high"], weeks["low"], weeks["close"], 3), index=weeks.index)
    dates = pd.DatetimeIndex(pd.to_datetime(result.table["date"]))
    expected = atr.shift(1).reindex(_unit_start(dates, "W")).to_numpy()
    np.testing.assert_allclose(result.table["rth"].to_numpy(float), expected, rtol=1e-9)
    [said] = warnings_with(result, "weekly(atr(3)) on RTH_OPEN (09:30-10:30) bars")
    assert "own weekly bars, whose true range reaches back to its close the week before" in said
    assert "on average over 5 weeks" in said  # March 2024: the weeks of 02-26 … 03-25


@pytest.mark.parametrize(("call", "unit"), [("weekly", "week"), ("monthly", "month")])
@pytest.mark.parametrize("lag", [0, 1])
def test_lag_0_is_said_to_see_the_units_close(engine_settings, call, unit, lag) -> None:
    result = ask(
        {"period": "2024-03", "map": {"x": f"{call}(high, {lag})"}, "where": "high == x"},
        engine_settings,
        session="RTH",
        **{"from": "daily"},
        select="count()",
    )
    said = warnings_with(result, "known only at its close")
    assert said == (
        [
            f"{call}(high, 0) is each {unit}'s final value, known only at its close: a rule "
            f"reading it at an earlier bar of the {unit} sees the future. The previous "
            f"{unit}'s, known at the open: {call}(high)."
        ]
        if lag == 0
        else []
    )


@pytest.mark.parametrize(
    ("query", "error_type", "said", "hinted"),
    [
        (
            {"from": "weekly", "map": {"a": "weekly(high)"}},
            "ArgumentError",
            "these rows are weekly bars",
            "the week before's: prev(high)",
        ),
        (
            {"from": "monthly", "map": {"a": "monthly(close)"}},
            "ArgumentError",
            "these rows are monthly bars",
            "the month before's: prev(close)",
        ),
        (
            {"from": "weekly", "map": {"a": "monthly(high)"}},
            "ArgumentError",
            "these rows are weekly bars",
            "a week can lie in two months",
        ),
        (
            {"from": "yearly", "map": {"a": "weekly(high)"}},
            "ArgumentError",
            "these rows are yearly bars",
            '"from": "daily"',
        ),
        (
            {"map": {"a": "weekly(daily(high))"}},
            "ArgumentError",
            "cannot be nested",
            "weekly(atr(14), 2) is the ATR two weeks back",
        ),
        (
            {"map": {"a": "monthly(max(high))"}},
            "ArgumentError",
            "max(high) is an aggregate",
            "monthly(rolling_mean(range, 20))",
        ),
        (
            {"map": {"r": "high - low", "a": "weekly(rolling_mean(r, 5))"}},
            "UnknownColumn",
            "runs on the session's weekly bars, which have no column 'r'",
            "inside weekly()",
        ),
        (
            {
                "group_by": "week()",
                "select": "max(high) as hi",
                "then": {"map": {"a": "weekly(high)"}},
            },
            "ArgumentError",
            "a second stage's rows",
            '"map": {"v": "weekly(high)"}',
        ),
    ],
)
def test_what_weekly_cannot_take_is_an_error_with_the_form(
    engine_settings, query, error_type, said, hinted
) -> None:
    result = execute({"session": "RTH", "from": "daily", **query}, "NQ", settings=engine_settings)
    assert not result.ok
    error = result.error.to_dict()
    assert error["error_type"] == error_type
    assert said in error["message"] and hinted in error["hint"], error


def test_the_model_reads_the_family_on_daily_s_line() -> None:
    reference = query_reference(load_instrument("NQ"))
    assert "  daily|weekly|monthly(expr, lag=1, [session]) — " in reference
    assert "weekly(high) = last week's high" in reference
    assert "weekly(high)" in describe_concept("last week's high")
    assert "weekly(high)" in describe_concept("хай прошлой недели")
    assert describe_concept("monthly").startswith("monthly(expr, lag=1, [session]) — ")


@pytest.mark.slow
def test_which_weekday_first_takes_out_last_weeks_high(sample_settings, con) -> None:
    """The tester's question over all NQ history, now without the nested if (p38a #7:
    Mon 273, Tue 103, Wed 71, Thu 56, Fri 32, none 405), against DuckDB: RTH days from the
    minute bars, ISO weeks, the week before's high by lag()."""
    result = ask(
        {
            "map": {
                "pwh": "weekly(high)",
                "hit": "if(high > pwh, dayname(), 'none')",
                "hit_day": "if(high > pwh, dayofweek(), 9)",
            },
            "group_by": "week()",
            "select": "arg_min(hit, hit_day) as first_day",
            "then": {"group_by": "first_day", "select": "count() as weeks"},
        },
        sample_settings,
        session="RTH",
        **{"from": "daily"},
    )
    got = dict(zip(result.table["first_day"], result.table["weeks"], strict=True))
    expected = con.execute(
        """
        WITH days AS (
            SELECT trading_date AS d, max(high) AS high FROM nq
            WHERE minute >= 570 AND minute < 1020 GROUP BY 1
        ), weeks AS (
            SELECT date_trunc('week', d) AS w, max(high) AS high FROM days GROUP BY 1
        ), prior AS (
            SELECT w, lag(high) OVER (ORDER BY w) AS pwh FROM weeks
        ), firsts AS (
            SELECT p.w, min(CASE WHEN days.high > p.pwh THEN days.d END) AS first_day
            FROM days JOIN prior p ON p.w = date_trunc('week', days.d)
            WHERE p.pwh IS NOT NULL GROUP BY 1
        )
        SELECT coalesce(strftime(first_day, '%a'), 'none'), count(*) FROM firsts GROUP BY 1
        """
    ).fetchall()
    assert got == dict(expected)
    assert got == {"Mon": 273, "Tue": 103, "Wed": 71, "Thu": 56, "Fri": 32, "none": 405}


def test_the_datas_open_week_is_said_where_it_moves_the_answer(engine_settings, minutes) -> None:
    """ "Is the weekly high in by Wednesday?" counts the data's last Wednesday (2024-03-27),
    whose week is not over on Thursday 2024-03-28 (CME traded Good Friday): its final high
    is the high so far, so that row is true by construction. Said with the mean over the
    whole weeks' Wednesdays (pandas over the RTH days) and the period that keeps those only
    (p48c Q41)."""
    query = {
        "map": {
            "so_far": "cummax(high, 'week')",
            "wk_hi": "weekly(high, 0)",
            "by_wed": "so_far == wk_hi",
        },
        "where": "dayofweek() == 2",
        "select": ["count()", "mean(by_wed) as share"],
    }
    result = ask(query, engine_settings, session="RTH", **{"from": "daily"})
    days = rth_daily(minutes)
    week = _unit_start(days.index, "W")
    so_far = days["high"].groupby(week).cummax()
    whole = days["high"].groupby(week).transform("max")
    wednesdays = (so_far == whole)[days.index.dayofweek == 2]
    assert result.summary.values["share"] == pytest.approx(wednesdays.mean())
    assert wednesdays.index[-1] == pd.Timestamp("2024-03-27") and wednesdays.iloc[-1]
    done = wednesdays.iloc[:-1]
    assert f"{done.mean():.4g}" != f"{wednesdays.mean():.4g}"  # the row moves the answer
    assert warnings_with(result, "is not over") == [
        "The week 2024-03-25 is not over (the data ends on 2024-03-28): weekly(high, 0) on "
        "its 1 row kept is the week's value so far, not its final one. Without it, share is "
        f'{done.mean():.4g} ({len(done)} rows). Whole weeks only: "period": ":2024-03-24".'
    ]
    # That period, or last week's high (known at the week's open), say nothing of it.
    whole_weeks = ask(
        query | {"period": ":2024-03-24"}, engine_settings, session="RTH", **{"from": "daily"}
    )
    previous = ask(
        query | {"map": query["map"] | {"wk_hi": "weekly(high)"}},
        engine_settings,
        session="RTH",
        **{"from": "daily"},
    )
    assert warnings_with(whole_weeks, "is not over") == warnings_with(previous, "is not over") == []


@pytest.mark.parametrize(("call", "unit"), [("weekly", "W"), ("monthly", "M")])
def test_the_units_open_is_neither_so_far_nor_ahead(engine_settings, minutes, call, unit):
    """weekly(open, 0) and monthly(open, 0) are fixed by the unit's first bar: CL's monthly
    open had been said to be "the month's value so far, not its final one" and "known only
    at its close … sees the future" (p48f M1). The unit's open from pandas over the RTH
    days; nothing said, on the data's last day nor in a rule over March."""
    days = rth_daily(minutes)
    opens = days["open"].groupby(_unit_start(days.index, unit)).transform("first")
    latest = ask(
        {"period": "last_1_bars", "map": {"o": f"{call}(open, 0)"}, "select": ["o"]},
        engine_settings,
        session="RTH",
        **{"from": "daily"},
    )
    assert latest.table["o"].iloc[-1] == opens.iloc[-1]
    rule = ask(
        {"period": "2024-03", "where": f"close > {call}(open, 0)", "select": "count()"},
        engine_settings,
        session="RTH",
        **{"from": "daily"},
    )
    march = days.index.to_period("M") == "2024-03"
    assert rule.summary.value == int((days["close"] > opens)[march].sum())
    for result in (latest, rule):
        assert warnings_with(result, "known only at its close") == []
        assert warnings_with(result, "is not over") == []


def test_the_units_high_and_low_are_said_ahead_once_and_not_on_the_last_day(
    engine_settings, minutes
):
    """weekly(high, 0) and weekly(low, 0) were said to see the future in two near-identical
    sentences, and so of the data's last day, whose week's high so far is all there is
    (p48f C1): one sentence, said of rows whose week goes on after them."""
    days = rth_daily(minutes)
    week = _unit_start(days.index, "W")
    query = {"map": {"wh": "weekly(high, 0)", "wl": "weekly(low, 0)"}, "select": ["wh", "wl"]}
    latest = ask(
        query | {"period": "last_1_bars"}, engine_settings, session="RTH", **{"from": "daily"}
    )
    assert latest.table[["wh", "wl"]].iloc[-1].tolist() == [
        days["high"].groupby(week).max().iloc[-1],
        days["low"].groupby(week).min().iloc[-1],
    ]
    assert warnings_with(latest, "known only at its close") == []
    assert len(warnings_with(latest, "is not over")) == 1  # the week so far: said there
    listed = ask(
        query | {"period": "last_5_bars"}, engine_settings, session="RTH", **{"from": "daily"}
    )
    assert warnings_with(listed, "known only at its close") == [
        "weekly(high, 0) and weekly(low, 0) are each week's final value, known only at its "
        "close: a rule reading them at an earlier bar of the week sees the future. The "
        "previous week's, known at the open: weekly(high) and weekly(low)."
    ]


@pytest.mark.parametrize("keys", [["month()"], ["year()", "month()"]])
def test_the_open_month_read_by_month_of_the_year_is_said(engine_settings, minutes, keys) -> None:
    """r48c #3: "is the month's high in by its first week, by month of the year" grouped by
    month() alone counted the data's unfinished month (NQ's 2026-01, 4 days) into January
    with no word, taken for group_by's own "the month is not over" note, which needs year()
    beside month(). Here March 2024 is the open month: its days are the month so far
    (pandas), said by this note under month() and by group_by's under year() and month()."""
    days = rth_daily(minutes)
    month = _unit_start(days.index, "M")
    hit = days["high"].groupby(month).cummax() == days["high"].groupby(month).transform("max")
    march = hit.loc["2024-03"]
    assert march.iloc[-1]  # the case: the data's last day is its month's high so far
    query = {
        "map": {"hit": "cummax(high, 'month') == monthly(high, 0)"},
        "group_by": keys,
        "select": "mean(hit)",
    }
    result = ask(query, engine_settings, session="RTH", **{"from": "daily"})
    np.testing.assert_allclose(result.table["mean_hit"], hit.groupby(month).mean().to_numpy())
    said = warnings_with(result, "is not over")
    if keys == ["month()"]:
        assert len(said) == 1
        assert said[0].startswith(
            "The month 2024-03 is not over (the data ends on 2024-03-28): monthly(high, 0) on "
            f"its {len(march)} rows kept is the month's value so far"
        ), said
    else:  # group_by's own note names the group, once
        assert len(said) == 1 and said[0].startswith("The month 2024-03 is not over: "), said
