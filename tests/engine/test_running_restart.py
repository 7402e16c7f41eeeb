"""Running functions (cummax, cummin, cumsum, rank) restart at a calendar unit when given one,
and a query grouping them by a time key without one is warned: group_by only aggregates what
ran over the whole period. Checked against pandas over bars built from the minute file
(rth_bars)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from asking import ask
from rth_bars import RTH_END, RTH_START, rth_daily, rth_minutes, sample_rth_days

from barb import execute
from barb.reference import indicators_reference


def _running_warnings(result) -> list[str]:
    said = ("runs over the whole period", "runs over every row of the first stage")
    return [w for w in result.metadata.warnings if any(words in w for words in said)]


def test_intraday_drawdown_restarts_each_day(engine_settings, minutes) -> None:
    """ "Biggest high-to-low drop within each day of February" on minute bars."""
    result = ask(
        {
            "session": "RTH",
            "from": "1m",
            "period": "2024-02",
            "map": {"pk": "cummax(high, 'day')", "dd": "low - pk"},
            "group_by": "date()",
            "select": "min(dd) as dd",
        },
        engine_settings,
    )
    rth = rth_minutes(minutes)
    rth = rth[rth["day"].dt.month == 2]
    peak = rth.groupby("day")["high"].cummax()
    expected = (rth["low"] - peak).groupby(rth["day"]).min()
    assert list(pd.to_datetime(result.table["date"])) == list(expected.index)
    np.testing.assert_allclose(result.table["dd"].to_numpy(), expected.to_numpy())
    # Without the unit the numbers differ (the peak carries over from earlier days).
    whole = ask(
        {
            "session": "RTH",
            "from": "1m",
            "period": "2024-02",
            "map": {"pk": "cummax(high)", "dd": "low - pk"},
            "group_by": "date()",
            "select": "min(dd) as dd",
        },
        engine_settings,
    )
    assert not np.allclose(whole.table["dd"].to_numpy(), expected.to_numpy())
    assert _running_warnings(whole) == [
        "cummax(high) runs over the whole period, not within each date() group: "
        "cummax(high, 'day') restarts it every day."
    ]
    assert _running_warnings(result) == []


def _counted(period: str, **stage) -> dict:
    return {"session": "RTH", "from": "daily", "period": period, **stage}


COUNTER = {"map": {"n": "cumsum(1)"}, "group_by": "month()", "select": "max(n) as days"}


def test_a_row_counter_over_one_whole_month_is_not_told_to_restart(
    engine_settings, minutes
) -> None:
    """ "Trading days in 2024" as max(n) by year() with n = cumsum(1) over the period 2024
    (p45d #11) was told "cumsum(1) runs over the whole period, not within each year()
    group", though its one group is the whole period and cumsum(1, 'year') gives the same.
    February alone by month() is silent and counts pandas' February days; from mid-month
    the restart would read the month's days before the period, and it is still said."""
    daily = rth_daily(minutes)
    february = daily.loc["2024-02"]
    whole = ask(_counted("2024-02", **COUNTER), engine_settings)
    assert list(whole.table["days"]) == [len(february)]
    assert _running_warnings(whole) == []
    part = ask(_counted("2024-02-14:2024-02-29", **COUNTER), engine_settings)
    assert list(part.table["days"]) == [len(february.loc["2024-02-14":])]
    assert len(_running_warnings(part)) == 1
    restarted = {**COUNTER, "map": {"n": "cumsum(1, 'month')"}}
    restart = ask(_counted("2024-02-14:2024-02-29", **restarted), engine_settings)
    assert list(restart.table["days"]) == [len(february)]  # it did differ


def test_a_row_counter_in_then_map_is_told_it_runs_over_every_first_stage_row(
    engine_settings, minutes
) -> None:
    """The same counter in then.map, grouped there by month(), ran over all the first
    stage's days with nothing said (January 21, February 41, March 60). It is said now as
    running over the first stage's rows, and the restart it names counts each month's days
    as pandas does; over February alone it is the one group and nothing is said."""
    daily = rth_daily(minutes)
    per_month = daily.groupby(daily.index.month).size().to_numpy()
    period = "2024-01-02:2024-03-28"
    running = ask(_counted(period, then=COUNTER), engine_settings)
    np.testing.assert_array_equal(running.table["days"], np.cumsum(per_month))
    assert _running_warnings(running) == [
        "cumsum(1) runs over every row of the first stage, not within each month() group: "
        "cumsum(1, 'month') restarts it every month."
    ]
    restarted = {**COUNTER, "map": {"n": "cumsum(1, 'month')"}}
    restart = ask(_counted(period, then=restarted), engine_settings)
    np.testing.assert_array_equal(restart.table["days"], per_month)
    assert _running_warnings(restart) == []
    assert _running_warnings(ask(_counted("2024-02", then=COUNTER), engine_settings)) == []


def test_a_then_counter_by_a_first_stage_month_column_is_told_a_form_that_runs(
    engine_settings, minutes
) -> None:
    """Barb's hint for month() in then (map it in the first stage, group by it) hid the
    month() from the warning: "22, 43, 63 … 259 trading days" by month with nothing said
    (p46t C, p46w #6). And the restart it named, cumsum(1, 'month') in then.map, fails
    there when the first stage selects (its rows have no dates, p46w #10). It is said now,
    with the first stage's form, which counts each month's days as pandas does."""
    daily = rth_daily(minutes)
    per_month = daily.groupby(daily.index.month).size().to_numpy()
    period = "2024-01-02:2024-03-28"
    then = {"map": {"n": "cumsum(1)"}, "group_by": "month", "select": "max(n) as days"}
    first = {"map": {"month": "month()"}, "select": ["month", "close"]}
    running = ask(_counted(period, **first, then=then), engine_settings)
    np.testing.assert_array_equal(running.table["days"], np.cumsum(per_month))
    suggested = '"cumsum_month": "cumsum(1, \'month\')"'
    assert _running_warnings(running) == [
        "cumsum(1) runs over every row of the first stage, not within each month() group: "
        f"{suggested} in the first stage's map (selected for the then stage, whose rows "
        "have no dates to restart by) restarts it every month."
    ]
    # The form said, as written: a map entry, selected, its max by month in then.
    form = {
        "map": {"month": "month()", **json.loads("{" + suggested + "}")},
        "select": ["month", "cumsum_month"],
        "then": {"group_by": "month", "select": "max(cumsum_month) as days"},
    }
    restart = ask(_counted(period, **form), engine_settings)
    np.testing.assert_array_equal(restart.table["days"], per_month)
    assert _running_warnings(restart) == []
    # Without a select the rows are the bars, dated: the restart in then.map runs there.
    bars = ask(_counted(period, map=first["map"], then=then), engine_settings)
    assert _running_warnings(bars) == [
        "cumsum(1) runs over every row of the first stage, not within each month() group: "
        "cumsum(1, 'month') restarts it every month."
    ]


def test_cumsum_restarts_each_month_and_reads_the_whole_month(engine_settings, minutes) -> None:
    """A run restarted each month is the month's, whatever the period cuts: from mid-February
    it is February's total so far, its days before the period's start in it."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-02-14:2024-03-28",
            "map": {"run": "cumsum(close - open, 'month')"},
            "select": ["timestamp", "run"],
        },
        engine_settings,
    )
    daily = rth_daily(minutes)
    move = daily["close"] - daily["open"]
    expected = move.groupby(daily.index.month).cumsum().loc["2024-02-14":"2024-03-28"]
    np.testing.assert_allclose(result.table["run"].to_numpy(), expected.to_numpy())


# "Mondays above the previous week's high", as the reference's functions write it: the week's
# running high on the day before each week's first trading day.
_PRIOR_WEEK_HIGH = {
    "session": "RTH",
    "from": "daily",
    "map": {"pwh": "prev(cummax(high, 'week'))", "first": "trading_day('week') == 1"},
    "where": "first",
    "select": ["date()", "high", "pwh"],
}


def _prior_week_highs(daily: pd.DataFrame, start: str, end: str) -> pd.DataFrame:
    """Each week's first day from ``start`` to ``end`` with the whole previous week's high,
    by pandas' weekly resample of the daily bars over all history."""
    weeks = daily["high"].resample("W-SUN").max().dropna()
    firsts = daily.groupby(daily.index.to_period("W-SUN")).head(1).loc[start:end]
    before = weeks.index.searchsorted(firsts.index, side="left") - 1
    firsts = firsts.assign(pwh=np.where(before >= 0, weeks.to_numpy()[before], np.nan))
    return firsts[["high", "pwh"]]


@pytest.mark.parametrize(
    "period",
    [
        # From a Friday: the week of 02-05's high so far was Friday 02-09's alone (17018.50,
        # where the week's is 17039.75), and Monday 02-12's 17032 read as a break.
        "2024-02-09:2024-03-28",
        # From a Monday: the first Monday's previous week lay before the period, and was n/a.
        "2024-02-12:2024-03-28",
    ],
)
def test_a_running_high_per_week_reads_its_week_before_the_period(
    engine_settings, minutes, period
) -> None:
    start, _, end = period.partition(":")
    expected = _prior_week_highs(rth_daily(minutes), start, end)
    result = ask({**_PRIOR_WEEK_HIGH, "period": period}, engine_settings)
    assert list(pd.to_datetime(result.table["date"])) == list(expected.index)
    np.testing.assert_array_equal(result.table["pwh"].to_numpy(), expected["pwh"].to_numpy())
    counted = ask(
        {**_PRIOR_WEEK_HIGH, "period": period, "select": "count(high > pwh) as broke"},
        engine_settings,
    )
    assert counted.summary.value == int((expected["high"] > expected["pwh"]).sum())


def test_a_running_high_per_month_from_mid_month_is_the_months(engine_settings, minutes) -> None:
    """cummax(high, 'month') from 02-13 is February's high so far (17050.25, on 02-01), not
    the period's first day's (17009.25)."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-02-13:2024-03-05",
            "map": {"mh": "cummax(high, 'month')", "ml": "cummin(low, 'month')"},
            "select": ["date()", "mh", "ml"],
        },
        engine_settings,
    )
    daily = rth_daily(minutes)
    months = daily.index.to_period("M")
    highs = daily["high"].groupby(months).cummax().loc["2024-02-13":"2024-03-05"]
    lows = daily["low"].groupby(months).cummin().loc["2024-02-13":"2024-03-05"]
    assert highs.iloc[0] > daily["high"].loc["2024-02-13"]  # the case: February went higher
    np.testing.assert_array_equal(result.table["mh"].to_numpy(), highs.to_numpy())
    np.testing.assert_array_equal(result.table["ml"].to_numpy(), lows.to_numpy())
    assert [w for w in result.metadata.warnings if "period's first bar" in w] == []


@pytest.mark.parametrize(
    "period",
    [
        "2024-02-15:2024-02-29",  # from mid-February: its days before the period ranked too
        "2024-02-01:2024-03-12",  # to mid-March: its days after the period ranked too
        "2024-02-15:2024-03-12",
    ],
)
def test_a_rank_per_month_ranks_among_the_whole_month(engine_settings, minutes, period) -> None:
    """rank(range, 'month') and place(range, 'month') rank each day among all of its month's
    days, as cummax(high, 'month') reads its whole month: from 02-15 they ranked among the
    period's 11 February days alone."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": period,
            "map": {"r": "rank(range, 'month')", "p": "place(range, 'month')"},
            "select": ["date()", "r", "p"],
        },
        engine_settings,
    )
    daily = rth_daily(minutes)
    spread = daily["high"] - daily["low"]
    months = spread.groupby(daily.index.to_period("M"))
    start, _, end = period.partition(":")
    ranks = (months.rank(method="max", pct=True) * 100).loc[start:end]
    places = months.rank(method="first", ascending=False).loc[start:end]
    assert list(pd.to_datetime(result.table["date"])) == list(ranks.index)
    np.testing.assert_allclose(result.table["r"].to_numpy(), ranks.to_numpy(), rtol=1e-12)
    np.testing.assert_array_equal(result.table["p"].to_numpy(), places.to_numpy())
    # The case: the period's days alone rank otherwise.
    alone = spread.loc[start:end].groupby(daily.loc[start:end].index.to_period("M"))
    assert not np.allclose(alone.rank(method="max", pct=True) * 100, ranks.to_numpy())


def test_a_rank_per_week_of_minutes_ranks_the_whole_week(engine_settings, minutes) -> None:
    """On a Wednesday's 5-minute bars, rank(volume, 'week') ranks among the whole week's,
    Monday's to Friday's."""
    result = ask(
        {
            "session": "RTH",
            "from": "5m",
            "period": "2024-03-13",
            "map": {"r": "rank(volume, 'week')"},
            "select": ["timestamp", "r"],
        },
        engine_settings,
    )
    rth = rth_minutes(minutes)
    rth = rth[(rth["day"] >= "2024-03-11") & (rth["day"] <= "2024-03-15")]
    bars = rth.groupby(rth["timestamp"].dt.floor("5min"))["volume"].sum()
    ranks = bars.rank(method="max", pct=True) * 100
    wednesday = ranks[ranks.index.normalize() == pd.Timestamp("2024-03-13")]
    assert list(pd.to_datetime(result.table["timestamp"])) == list(wednesday.index)
    np.testing.assert_allclose(result.table["r"].to_numpy(), wednesday.to_numpy(), rtol=1e-12)


def test_a_days_running_total_over_its_last_minutes_counts_the_whole_day(
    engine_settings, minutes
) -> None:
    """cumsum(volume, 'day') over the last 30 minute bars is the day's volume so far, its
    bars before them read too."""
    result = ask(
        {
            "session": "RTH",
            "from": "1m",
            "period": "last_30_bars",
            "map": {"so_far": "cumsum(volume, 'day')"},
            "select": ["timestamp", "so_far"],
        },
        engine_settings,
    )
    rth = rth_minutes(minutes)
    expected = rth["volume"].groupby(rth["day"]).cumsum().iloc[-30:]
    np.testing.assert_array_equal(result.table["so_far"].to_numpy(), expected.to_numpy())


def test_cummin_restarts_each_week(engine_settings, minutes) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "map": {"lo": "cummin(low, 'week')"},
            "select": ["timestamp", "lo"],
        },
        engine_settings,
    )
    daily = rth_daily(minutes)
    monday = daily.index - pd.to_timedelta(daily.index.dayofweek, unit="D")
    expected = daily["low"].groupby(monday).cummin()
    np.testing.assert_allclose(result.table["lo"].to_numpy(), expected.to_numpy())


def test_two_running_highs_of_one_period_say_the_history_before_it_once(
    engine_settings, minutes
) -> None:
    """ "February's drawdown on closes and from the highs" (p29b Q10): cummax(close) and
    cummax(high) each found higher bars before the period, and the one warning came twice,
    with two numbers. Now once, with the closes' (the map's first running high)."""
    daily = rth_daily(minutes)
    before, february = daily.loc[:"2024-01-31"], daily.loc["2024-02"]
    # The case: before February both the closes and the highs went above its first bar's.
    assert before["close"].max() > february["close"].iloc[0]
    assert before["high"].max() > february["high"].iloc[0]
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-02",
            "map": {"dd": "close - cummax(close)", "dd_low": "low - cummax(high)"},
            "select": ["min(dd)", "min(dd_low)"],
        },
        engine_settings,
    )
    assert result.summary.values["min_dd"] == pytest.approx(
        (february["close"] - february["close"].cummax()).min()
    )
    assert result.summary.values["min_dd_low"] == pytest.approx(
        (february["low"] - february["high"].cummax()).min()
    )
    closes = before["close"]
    assert [w for w in result.metadata.warnings if w.startswith("cummax()")] == [
        f"cummax() starts at the period's first bar ({february.index[0]:%Y-%m-%d}), and the "
        f"bars before it went higher: {closes.max():.10g} on {closes.idxmax():%Y-%m-%d}. It is "
        "the highest since the period began, not of all history; for all-time highs or lows "
        "leave the period out and pick the rows with where (year() == 2024) or sort and limit."
    ]


def _history_warnings(result) -> list[str]:
    return [w for w in result.metadata.warnings if "starts at the period's first bar" in w]


@pytest.mark.parametrize(
    ("function", "period"),
    [
        ("cummax", "2024-02-15:2024-03-28"),  # the deepest drop is from the period's own peak
        ("cummax", "2024-02"),  # January's closes were above February's peak at its trough
        ("cummin", "2024-01-16:2024-02-29"),
        ("cummin", "2024-02"),
    ],
)
def test_the_history_before_a_period_is_said_when_it_changes_the_answer(
    engine_settings, minutes, function, period
) -> None:
    """ "How deep was the 2022 drawdown?" under period 2022 (p32f Q6) was warned that
    2021-12-23's 4866 was higher, though 2022's own peak (5481) had passed it by the trough:
    the answer was all history's too. Said only when reading the bars before the period
    changes the number (2020's peak under 2019-12-31's close, Q15)."""
    closes = rth_daily(minutes)["close"]
    start, _, end = period.partition(":")
    own = closes.loc[start : end or start]
    before = closes.loc[: own.index[0] - pd.Timedelta(days=1)]
    highest = function == "cummax"
    # The case: the bars before the period went beyond its first close.
    assert (before.max() > own.iloc[0]) if highest else (before.min() < own.iloc[0])
    running = own.cummax() if highest else own.cummin()
    whole = (closes.cummax() if highest else closes.cummin()).loc[own.index]
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": period,
            "map": {"move": f"close / {function}(close) - 1"},
            "select": "min(move)" if highest else "max(move)",
        },
        engine_settings,
    )
    move, all_history = own / running - 1, own / whole - 1
    expected = move.min() if highest else move.max()
    assert result.summary.value == pytest.approx(expected)
    changed = expected != (all_history.min() if highest else all_history.max())
    assert len(_history_warnings(result)) == int(changed)


def test_a_period_cutting_a_group_says_no_history_that_changes_nothing(
    engine_settings, minutes
) -> None:
    """r48c #1: the weekly max of close / cummax(close) from Wednesday 2024-02-21 was told
    "cummax() starts at the period's first bar ... 17047.25 on 2024-01-03" though every
    week's value is the same read from all history (pandas): the run's summary, renamed to
    the whole weeks' highest and lowest (the period cuts the first week, the data's end the
    last), was set against the re-run's, never renamed."""
    closes = rth_daily(minutes)["close"]
    own, before = closes.loc["2024-02-21":], closes.loc[:"2024-02-20"]
    assert before.max() > own.iloc[0]  # the case: the bars before went higher
    monday = own.index - pd.to_timedelta(own.index.dayofweek, unit="D")
    weekly = (own / own.cummax()).groupby(monday).max()
    all_history = (own / closes.cummax().loc[own.index]).groupby(monday).max()
    assert weekly.equals(all_history)  # the case: all history gives the same answer
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-02-21:2024-03-28",
            "map": {"hi": "close / cummax(close)", "wk": "week()"},
            "group_by": "wk",
            "select": "max(hi)",
        },
        engine_settings,
    )
    np.testing.assert_allclose(result.table["max_hi"].to_numpy(), weekly.to_numpy())
    assert result.summary.left_out  # the part weeks are left out of its highest and lowest
    assert _history_warnings(result) == []


def test_rows_listed_are_warned_when_their_running_high_would_differ(
    engine_settings, minutes
) -> None:
    """Over 2024-02-15 to 03-28 the running peak of the first days is below January's 17047:
    listing every row shows those days' drawdowns from the period's own peak, and is said;
    the deepest row alone (sort and limit) is the same from either peak, and is not."""
    closes = rth_daily(minutes)["close"]
    own, before = closes.loc["2024-02-15":], closes.loc[:"2024-02-14"]
    drawdown = own / own.cummax() - 1
    whole = own / closes.cummax().loc[own.index] - 1
    assert (drawdown != whole).any() and drawdown.min() == whole.min()  # the case
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024-02-15:2024-03-28",
        "map": {"dd": "close / cummax(close) - 1"},
        "select": ["date()", "dd"],
    }
    listed = ask(query, engine_settings)
    np.testing.assert_allclose(listed.table["dd"].to_numpy(), drawdown.to_numpy())
    assert _history_warnings(listed) == [
        f"cummax() starts at the period's first bar ({own.index[0]:%Y-%m-%d}), and the bars "
        f"before it went higher: {before.max():.10g} on {before.idxmax():%Y-%m-%d}. It is the "
        "highest since the period began, not of all history; for all-time highs or lows leave "
        "the period out and pick the rows with where (year() == 2024) or sort and limit."
    ]
    deepest = ask({**query, "sort": "dd asc", "limit": 1}, engine_settings)
    assert deepest.table["dd"].tolist() == pytest.approx([drawdown.min()])
    assert _history_warnings(deepest) == []


def test_an_unknown_unit_is_an_error_listing_the_units(engine_settings) -> None:
    result = execute(
        {"session": "RTH", "from": "daily", "map": {"pk": "cummax(close, 'decade')"}},
        "NQ",
        settings=engine_settings,
    )
    assert not result.ok
    error = result.error.to_dict()
    assert error["error_type"] == "ArgumentError"
    for unit in ("'day'", "'week'", "'month'", "'quarter'", "'year'"):
        assert unit in error["message"] and unit in error["hint"]


def test_the_unit_is_matched_ignoring_case(engine_settings) -> None:
    upper = ask(
        {"session": "RTH", "from": "daily", "map": {"pk": "cummax(close, 'Month')"}},
        engine_settings,
    )
    lower = ask(
        {"session": "RTH", "from": "daily", "map": {"pk": "cummax(close, 'month')"}},
        engine_settings,
    )
    pd.testing.assert_frame_equal(upper.table, lower.table)


@pytest.mark.parametrize(
    ("group_by", "map_", "warned"),
    [
        ("month()", {}, "not within each month() group: cumsum(close - open, 'month')"),
        ("mo", {"mo": "month()"}, "not within each month() group"),
        ("year()", {}, None),  # the data's one year: one group, the run its own
        (["year()", "month()"], {}, "month() group: cumsum(close - open, 'month') restarts it "),
        ("week()", {}, "restarts it every week"),
        ("dayname()", {}, None),  # not a calendar period: nothing to restart at
    ],
)
def test_a_running_function_under_a_time_key_is_warned(
    engine_settings, group_by, map_, warned
) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {**map_, "run": "cumsum(close - open)"},
        "group_by": group_by,
        "select": "max(run)",
    }
    warnings = _running_warnings(ask(query, engine_settings))
    if warned is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and warned in warnings[0], warnings


def test_no_warning_with_a_unit_or_when_the_running_column_is_not_read(engine_settings) -> None:
    for query in (
        {"map": {"run": "cumsum(close - open, 'month')"}, "select": "max(run)"},
        {"map": {"run": "cumsum(close - open)"}, "select": "max(range)"},
    ):
        full = {"session": "RTH", "from": "daily", "group_by": "month()", **query}
        assert _running_warnings(ask(full, engine_settings)) == []
    # Inside the aggregate itself it is read, and warned.
    hoisted = {"session": "RTH", "from": "daily", "group_by": "month()"}
    hoisted["select"] = "min(close / cummax(close) - 1)"
    assert len(_running_warnings(ask(hoisted, engine_settings))) == 1


@pytest.mark.slow
def test_max_drawdown_per_year(sample_settings, con) -> None:
    """The testers' question: each year's peak-to-trough drawdown of the daily close."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "map": {"peak": "cummax(close, 'year')", "dd_pct": "(close / peak - 1) * 100"},
            "group_by": "year()",
            "select": "min(dd_pct) as max_dd",
        },
        sample_settings,
    )
    daily = _sample_daily(con)
    years = daily.index.year
    peak = daily["close"].groupby(years).cummax()
    expected = ((daily["close"] / peak - 1) * 100).groupby(years).min()
    assert list(result.table["year"]) == list(expected.index)
    np.testing.assert_allclose(result.table["max_dd"].to_numpy(), expected.to_numpy(), rtol=1e-9)
    assert _running_warnings(result) == []


@pytest.mark.slow
def test_rank_per_year(sample_settings, con) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2020:2022",
            "map": {"r": "rank(range, 'year')"},
            "select": ["timestamp", "r"],
        },
        sample_settings,
    )
    daily = _sample_daily(con).loc["2020-01-01":"2022-12-31"]
    spread = daily["high"] - daily["low"]
    expected = spread.groupby(daily.index.year).rank(method="max", pct=True) * 100
    np.testing.assert_allclose(result.table["r"].to_numpy(), expected.to_numpy(), rtol=1e-9)


@pytest.mark.slow
def test_rank_per_month_from_mid_march(sample_settings, con) -> None:
    """From 2024-03-15, rank(range, 'month') of March's days ranks them among all of
    March's, not the 10 the period holds (NQ's 03-15: 45, not 50)."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-03-15:2024-04-30",
            "map": {"r": "rank(range, 'month')"},
            "select": ["timestamp", "r"],
        },
        sample_settings,
    )
    daily = _sample_daily(con).loc["2024-03-01":"2024-04-30"]
    spread = daily["high"] - daily["low"]
    expected = spread.groupby(daily.index.month).rank(method="max", pct=True) * 100
    np.testing.assert_allclose(
        result.table["r"].to_numpy(), expected.loc["2024-03-15":].to_numpy(), rtol=1e-9
    )


@pytest.mark.slow
def test_es_mondays_of_march_2024_above_the_previous_weeks_high(sample_settings) -> None:
    """p38a #8: the period 2024-03 starts on Friday 03-01, and prev(cummax(high, 'week')) on
    Monday 03-04 read Friday's high alone (4499.50), where the week of 02-26's was 4562.25:
    2 breaks, where there was 1 (03-11)."""
    daily = sample_rth_days(sample_settings, "ES")
    daily.index = pd.to_datetime(daily.index)
    expected = _prior_week_highs(daily, "2024-03-01", "2024-03-31")
    result = ask(
        {
            **_PRIOR_WEEK_HIGH,
            "period": "2024-03",
            "select": ["count() as mondays", "count(high > pwh) as broke_pwh"],
        },
        sample_settings,
        "ES",
    )
    assert result.summary.values == {
        "mondays": len(expected),
        "broke_pwh": int((expected["high"] > expected["pwh"]).sum()),
    }
    assert result.summary.values["broke_pwh"] == 1


def _sample_daily(con) -> pd.DataFrame:
    """RTH daily bars of the NQ sample, by trading date, built in DuckDB."""
    daily = con.execute(
        f"""
        SELECT trading_date AS d, max(high) AS high, min(low) AS low,
               arg_max(close, timestamp) AS close
        FROM nq WHERE minute >= {RTH_START} AND minute < {RTH_END} GROUP BY 1 ORDER BY 1
        """
    ).df()
    return daily.set_index(pd.to_datetime(daily["d"]))


def test_running_values_inside_select_read_the_rows_a_where_drops(engine_settings, minutes) -> None:
    """mean(close > vwap()) at 16:59 compares with the VWAP of the whole session so far, and
    cumsum(volume, 'day') at 10:59 is the volume since the open: a where keeping one bar a day
    must not cut the bars they read (they once read only the kept bar: a share of 0.42
    instead of 0.51 on the sample)."""
    rth = rth_minutes(minutes)
    typical = (rth["high"] + rth["low"] + rth["close"]) / 3
    by_day = rth.groupby("day")
    rth["vwap"] = (typical * rth["volume"]).groupby(rth["day"]).cumsum() / by_day["volume"].cumsum()
    rth["so_far"] = by_day["volume"].cumsum()
    clock = rth["timestamp"].dt.strftime("%H:%M")
    at_close = rth[clock == "16:59"]
    at_eleven = rth[clock == "10:59"]
    result = ask(
        {
            "session": "RTH",
            "from": "1m",
            "where": "time() == '16:59'",
            "select": ["mean(close > vwap()) as above", "mean(abs(close - vwap())) as dist"],
        },
        engine_settings,
    )
    assert result.summary.values["above"] == pytest.approx(
        (at_close["close"] > at_close["vwap"]).mean(), abs=1e-4
    )
    expected_dist = (at_close["close"] - at_close["vwap"]).abs().mean()
    assert result.summary.values["dist"] == pytest.approx(expected_dist, rel=1e-3)
    volume = ask(
        {
            "session": "RTH",
            "from": "1m",
            "where": "time() == '10:59'",
            "select": "mean(cumsum(volume, 'day')) as v",
        },
        engine_settings,
    )
    assert volume.summary.value == pytest.approx(at_eleven["so_far"].mean(), rel=1e-3)


@pytest.mark.parametrize(
    ("session", "start", "end"),
    [("ETH", 18 * 60, 17 * 60), ("10:00-11:00", 600, 660), ("RTH", RTH_START, RTH_END)],
)
def test_vwap_starts_at_the_query_sessions_open(session, start, end, engine_settings, minutes):
    """What the reference says: vwap() restarts at the query session's open each trading date
    (ETH at 18:00 the evening before, a window at its own start), not at midnight or 09:30."""
    frame = minutes.copy()
    stamps = frame["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    # The trading date: an 18:00 bar belongs to the next day's session.
    frame["day"] = (stamps + pd.Timedelta(hours=6)).dt.normalize()
    inside = (
        (minute >= start) | (minute < end) if start > end else (minute >= start) & (minute < end)
    )
    bars = frame[inside.to_numpy()].copy()
    typical = (bars["high"] + bars["low"] + bars["close"]) / 3
    by_day = bars.groupby("day")
    bars["vwap"] = (typical * bars["volume"]).groupby(bars["day"]).cumsum() / by_day[
        "volume"
    ].cumsum()
    last = bars.groupby("day").tail(1)
    result = ask(
        {
            "session": session,
            "from": "1m",
            "period": "2024-02",
            "map": {"vw": "vwap()"},
            "group_by": "date()",
            "select": "last(vw) as vw",
        },
        engine_settings,
    )
    expected = last.set_index("day")["vwap"]
    expected = expected[expected.index.strftime("%Y-%m") == "2024-02"]
    np.testing.assert_allclose(result.table["vw"].to_numpy(), expected.to_numpy(), rtol=1e-9)


def test_the_vwap_summary_names_the_session_open_it_starts_from() -> None:
    line = next(x for x in indicators_reference().splitlines() if x.startswith("- vwap()"))
    assert "query session's open" in line and "ETH 18:00" in line


# Each form of "a new high of all history", with pandas' reading of it over the closes.
_NEW_HIGHS = {
    "close > prev(cummax(close))": lambda c: c > c.cummax().shift(1),
    "prev(cummax(close)) < close": lambda c: c > c.cummax().shift(1),
    "close >= cummax(close)": lambda c: c >= c.cummax(),
    "cummax(close) > prev(cummax(close))": lambda c: c.cummax() > c.cummax().shift(1),
}


@pytest.mark.parametrize("new_high", list(_NEW_HIGHS))
def test_a_record_test_by_month_counts_all_time_highs_unwarned(
    engine_settings, minutes, new_high
) -> None:
    """ "New all-time highs per year" as close > prev(cummax(close)) by year() counted NQ's
    2023 as 0, right, and was told that cummax(close, 'year') restarts it every year: the
    model that followed it counted 51 highs of 2023 (p46f Q5). A bar's value against its
    own running high is a record over all history: not said. A drawdown from the running
    high (of the highs) beside it is still said."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "map": {"ath": new_high, "dd": "low / cummax(high) - 1"},
            "group_by": "month()",
            "select": ["count(ath) as highs", "min(dd) as dd"],
        },
        engine_settings,
    )
    closes = rth_daily(minutes)["close"]
    months = closes.index.month
    records = _NEW_HIGHS[new_high](closes)
    assert list(result.table["highs"]) == list(records.groupby(months).sum())
    # The case: the highs of each month alone are other days.
    monthly = closes > closes.groupby(months).cummax().groupby(months).shift(1)
    assert monthly.sum() != records.sum()
    assert _running_warnings(result) == [
        "cummax(high) runs over the whole period, not within each month() group: "
        "cummax(high, 'month') restarts it every month."
    ]


def test_a_running_low_record_by_name_is_not_warned(engine_settings, minutes) -> None:
    """The running low through a map name, compared with the bar before's: a new low of all
    history, as the planner reads it through the map."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "map": {"lo": "cummin(low)", "atl": "low < prev(lo)"},
            "group_by": "month()",
            "select": "count(atl) as lows",
        },
        engine_settings,
    )
    lows = rth_daily(minutes)["low"]
    expected = (lows < lows.cummin().shift(1)).groupby(lows.index.month).sum()
    assert list(result.table["lows"]) == list(expected)
    assert _running_warnings(result) == []
