"""holiday(), early_close(), trading_day(), trading_days_left(), first()/last() on a row, and
the warnings about holiday sessions and days a window has no bars on.

Expected answers come from the raw minute bars (pandas over the sample's parquet) and a hand
list of 2024's US stock-market holidays, never from Barb itself.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math

import pandas as pd
import pytest
from dateutil.easter import easter
from nyse_holidays import NYSE_HOLIDAYS_2024

from barb import execute
from barb.data.store import DataMeta, data_path, write_bars
from barb.sessions import minutes_of_day, trading_dates
from barb.settings import EngineSettings

# CME's notices of 2018-12-02 and 2024-12-30: on the national days of mourning its US equity
# index futures stopped after the overnight session, at 08:30 CT (09:30 ET); energy and
# metals traded as usual. pandas_market_calendars 5.1 has neither.
MOURNING = {pd.Timestamp("2018-12-05"), pd.Timestamp("2025-01-09")}


@pytest.fixture(scope="module")
def es_minutes(sample_settings: EngineSettings) -> pd.DataFrame:
    return pd.read_parquet(data_path("ES", sample_settings), columns=["trading_date", "minute"])


@pytest.fixture(scope="module")
def es_dates(es_minutes: pd.DataFrame) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(es_minutes["trading_date"].unique())


def rows(query: dict, settings: EngineSettings, symbol: str = "ES"):
    result = execute(query, symbol, settings=settings)
    assert result.ok, result.to_dict()
    return result


def dates_of(table: pd.DataFrame) -> list[str]:
    return [str(pd.Timestamp(d).date()) for d in table["date"]]


def test_holiday_marks_the_us_market_holidays_that_traded(sample_settings, es_dates) -> None:
    result = rows(
        {
            "session": "ETH",
            "from": "daily",
            "period": "2024",
            "where": "holiday()",
            "select": ["date()"],
        },
        sample_settings,
    )
    traded = [d for d in NYSE_HOLIDAYS_2024 if pd.Timestamp(d) in es_dates]
    assert len(traded) >= 7  # the short Globex sessions of MLK, Presidents', July 4…
    assert dates_of(result.table) == traded


def test_not_holiday_counts_the_stock_markets_trading_days(sample_settings, es_dates) -> None:
    result = rows(
        {"session": "ETH", "from": "daily", "period": "2024", "where": "not holiday()"}
        | {"select": "count()"},
        sample_settings,
    )
    weekdays = pd.bdate_range("2024-01-01", "2024-12-31")
    nyse_days = weekdays.difference(pd.DatetimeIndex(NYSE_HOLIDAYS_2024))
    assert len(nyse_days) == 252
    assert result.summary.value == len(nyse_days.intersection(es_dates))


def test_early_close_is_a_session_that_ends_before_the_regular_close(
    sample_settings, es_minutes
) -> None:
    result = rows(
        {
            "session": "ETH",
            "from": "daily",
            "period": "2024",
            "where": "early_close()",
            "select": ["date()"],
        },
        sample_settings,
    )
    days = es_minutes[es_minutes["trading_date"].dt.year == 2024]
    # The last minute bar of a full day opens 16:59; a day's bars run past midnight, so
    # only the minutes before the 18:00 reopen are the day's end.
    day_part = days[days["minute"] < 18 * 60]
    last_minute = day_part.groupby("trading_date")["minute"].max()
    short = [str(d.date()) for d in last_minute.index[last_minute < 16 * 60 + 59]]
    assert dates_of(result.table) == short
    assert "2024-11-29" in short and "2024-07-03" in short  # Black Friday, before July 4


@pytest.mark.parametrize("period", ["2018-12-03:2018-12-07", "2025-01-06:2025-01-10"])
def test_the_days_of_mourning_are_early_closes_of_the_index_futures(
    sample_settings, es_minutes, period: str
) -> None:
    """p41b: early_close() was false on the two days CME closed ES and NQ at 09:30 ET, and
    the sample traded them to 17:00. Now each is the week's one early close, its last bar
    09:29 in the raw bars, with no RTH bar; CL's calendar (energy traded in full) has none."""
    import pandas_market_calendars as mcal

    from barb.events.rules import early_close_days

    query = {"session": "ETH", "from": "daily", "period": period, "select": ["date()"]}
    result = rows(query | {"where": "early_close() and holiday()"}, sample_settings)
    [day] = [d for d in MOURNING if str(d.date()) in period or d.year == int(period[:4])]
    assert dates_of(result.table) == [f"{day:%Y-%m-%d}"]
    assert dates_of(rows(query | {"where": "early_close()"}, sample_settings).table) == [
        f"{day:%Y-%m-%d}"
    ]
    minutes = es_minutes[es_minutes["trading_date"] == day]["minute"]
    assert minutes[minutes < 18 * 60].max() == 9 * 60 + 29
    assert not minutes.between(570, 1019).any()  # no RTH bar
    cl = mcal.get_calendar("CMEGlobex_CL").schedule(day, day)
    assert (cl["market_close"].dt.tz_convert("America/New_York").dt.hour == 17).all()
    assert not (early_close_days("CMEGlobex_CL") == day.to_datetime64()).any()


@pytest.mark.parametrize("unit, period", [("month", "M"), ("year", "Y"), ("week", "W-SUN")])
def test_trading_day_counts_every_trading_date_whatever_the_session(
    sample_settings, es_dates, unit, period
) -> None:
    """On CASH_CLOSE bars (no bars on early closes) the count still runs over every trading
    date, from the first month of data on."""
    result = rows(
        {
            "session": "CASH_CLOSE",
            "from": "daily",
            "period": "2008:2025",
            "map": {"n": f"trading_day('{unit}')", "left": f"trading_days_left('{unit}')"},
            "select": ["date()", "n", "left"],
            "limit": 10_000,
        },
        EngineSettings(data_dir=sample_settings.data_dir, max_table_rows=10_000),
    )
    # The exchange's own days in the weeks, months and years the data starts and ends in:
    # 2008-01-02, a Wednesday, is the week's second trading day (2007-12-31 traded).
    import pandas_market_calendars as mcal

    exchange = mcal.get_calendar("CME Globex Equity").valid_days("2007-12-24", "2026-12-31")
    exchange = exchange.tz_localize(None)
    first, last = es_dates.min(), es_dates.max()
    edges = exchange[
        ((exchange < first) & (exchange.to_period(period) == first.to_period(period)))
        | ((exchange > last) & (exchange.to_period(period) == last.to_period(period)))
    ]
    frame = pd.DataFrame(index=es_dates.union(edges).sort_values())
    groups = frame.groupby(frame.index.to_period(period))
    frame["n"] = groups.cumcount() + 1
    frame["left"] = groups.cumcount(ascending=False)
    got = result.table.set_index(pd.to_datetime(result.table["date"]))
    expected = frame.loc[got.index]
    assert len(got) > 4000
    assert (got["n"].to_numpy() == expected["n"].to_numpy()).all()
    assert (got["left"].to_numpy() == expected["left"].to_numpy()).all()


def test_the_unfinished_last_month_counts_to_the_exchanges_month_end(sample_settings) -> None:
    """The data ends inside a month: its days left run to the month's real last trading day
    (the exchange calendar), not to the data's last date."""
    import pandas_market_calendars as mcal

    last = pd.Timestamp(
        execute({"select": "last(date())"}, "ES", settings=sample_settings).summary.value
    )
    result = rows(
        {"session": "ETH", "from": "daily", "period": str(last.date())}
        | {"map": {"left": "trading_days_left('month')"}, "select": ["date()", "left"]},
        sample_settings,
    )
    month_end = (last + pd.offsets.MonthEnd(0)).date()
    open_days = mcal.get_calendar("CME Globex Equity").valid_days(last.date(), month_end)
    assert result.table["left"].iloc[-1] == len(open_days) - 1 > 0


def test_trading_day_takes_a_known_unit_only(sample_settings) -> None:
    result = execute(
        {"session": "RTH", "from": "daily", "map": {"n": "trading_day('decade')"}},
        "ES",
        settings=sample_settings,
    )
    assert not result.ok and "week, month, quarter or year" in result.error.message


def test_first_and_last_pair_values_of_one_row(sample_settings) -> None:
    """The year's first day of data has no return: first(ret) is that row's (n/a), not the
    next day's beside the first day's date."""
    result = rows(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2008:2009",
            "map": {"ret": "close - prev(close)"},
            "group_by": "year()",
            "select": ["first(date()) as day", "first(ret) as ret"],
        },
        sample_settings,
    )
    first_year = result.table.iloc[0]
    assert str(pd.Timestamp(first_year["day"]).date()) == "2008-01-02"
    assert math.isnan(first_year["ret"])
    assert not math.isnan(result.table.iloc[1]["ret"])


MONDAY_AFTER_FRIDAY = {
    "session": "RTH",
    "from": "daily",
    "map": {"ret": "close - prev(close)"},
    "where": "dayname() == 'Mon' and prev(dayname()) == 'Fri'",
    "select": ["count()", "mean(ret)"],
}


def test_a_weekday_question_warns_of_the_holiday_sessions_among_its_rows(
    sample_settings,
    es_minutes,
    monkeypatch,
) -> None:
    # The note's words, whatever leaving the holidays out moves.
    monkeypatch.setattr("barb.caveats.calendar.HOLIDAY_SHIFT", 0.0)
    # ... and no figure over the stock market's days, which would say them in its place.
    monkeypatch.setattr("barb.caveats.stock_days.MOVED", math.inf)
    monkeypatch.setattr("barb.caveats.stock_days.SIZED_MOVED", math.inf)
    import pandas_market_calendars as mcal

    result = rows(MONDAY_AFTER_FRIDAY, sample_settings)
    rth = es_minutes[(es_minutes["minute"] >= 570) & (es_minutes["minute"] < 1020)]
    days = pd.DatetimeIndex(rth["trading_date"].unique()).sort_values()
    mondays = [b for a, b in itertools.pairwise(days) if b.dayofweek == 0 and a.dayofweek == 4]
    nyse = set(mcal.get_calendar("NYSE").valid_days("2008-01-01", "2026-12-31").tz_localize(None))
    closed = [d for d in mondays if d not in nyse]
    assert len(mondays) == result.summary.values["count"]
    assert len(closed) > 50
    # The sample's futures closed early on every holiday Monday but 2012-10-29 (Hurricane
    # Sandy shut the NYSE; the sample's CME calendar trades the day in full, all 450 minutes).
    minutes = rth.groupby("trading_date").size()
    in_full = [d for d in closed if minutes[d] == 450]
    assert [f"{d:%Y-%m-%d}" for d in in_full] == ["2012-10-29"]
    text = (
        f"{len(closed)} of the rows are US holiday sessions (the stock market closed, "
        f"{len(closed) - 1} traded short hours), e.g. {closed[0].date()}: "
        '"where": "not holiday()" leaves them out when the question is about the stock '
        "market's days."
    )
    # Said, not prescribed: a weekend-gap question keeps the holiday Mondays' sessions.
    assert text in result.metadata.warnings, result.metadata.warnings
    # Left out, nothing to warn about.
    kept = rows(
        MONDAY_AFTER_FRIDAY | {"where": MONDAY_AFTER_FRIDAY["where"] + " and not holiday()"},
        sample_settings,
    )
    assert kept.summary.values["count"] == len(mondays) - len(closed)
    assert not any("holiday sessions" in w for w in kept.metadata.warnings)


def test_no_holiday_warning_without_weekday_or_turn_of_month_logic(sample_settings) -> None:
    result = rows({"session": "RTH", "from": "daily", "select": "mean(range)"}, sample_settings)
    assert not any("holiday sessions" in w for w in result.metadata.warnings)


def test_a_window_without_bars_on_early_closes_warns_that_next_steps_over_them(
    sample_settings, es_minutes, es_dates
) -> None:
    query = {
        "session": "CASH_CLOSE",
        "from": "daily",
        "map": {"last_day": "month() != next(month())"},
        "select": "count(last_day)",
    }
    result = rows(query, sample_settings)
    window = es_minutes[(es_minutes["minute"] >= 930) & (es_minutes["minute"] < 960)]
    with_bars = pd.DatetimeIndex(window["trading_date"].unique())
    missing = es_dates.difference(with_bars).sort_values()
    assert len(missing) > 100
    # Each of them an early close, as the bars show: the day's last bar ended by 13:15.
    last_bar = es_minutes.groupby("trading_date")["minute"].last()
    closes = last_bar[last_bar.index.isin(missing)] + 1
    assert closes.max() == 13 * 60 + 15 and len(closes) == len(missing)
    text = (
        f"{len(missing)} trading days have no bars in 15:30-16:00 (early closes: the futures "
        f"closed by 13:15, e.g. {missing[0].date()}): prev() and next() step over them to the "
        "nearest day that has."
    )
    assert text in result.metadata.warnings, result.metadata.warnings
    # The full day and RTH step over days that did not trade at all, as over a weekend.
    for session in ("ETH", "RTH"):
        whole = rows(query | {"session": session}, sample_settings)
        assert not any("no bars in" in w for w in whole.metadata.warnings), session


def test_a_window_without_bars_on_good_friday_calls_it_no_early_close(sample_settings) -> None:
    """On Good Friday the stock market is shut and the futures stop at 09:15: CASH has no bar
    that day. It is no early close of CASH, and the warning says what the bars hold, where it
    can matter: a notable share of the period's days (1 of 10 in two weeks of April 2025),
    or a listed row whose prev() steps over one. Over all the data (7 of 4,656 days, under
    the 1% of the empty-rows rule) it changed no answer and is not said (p36a)."""
    bars = pd.read_parquet(
        data_path("NQ", sample_settings), columns=["trading_date", "minute", "timestamp"]
    )
    cash = bars[(bars["minute"] >= 570) & (bars["minute"] < 960)]
    every = pd.DatetimeIndex(bars["trading_date"].unique())
    missing = every.difference(pd.DatetimeIndex(cash["trading_date"].unique())).sort_values()
    good_fridays = {pd.Timestamp(easter(year)) - pd.Timedelta(days=2) for year in range(2008, 2027)}
    assert len(missing) == 9 and set(missing) - good_fridays == MOURNING
    assert len(missing) < 0.01 * len(every)  # not notable over every day
    last_bars = bars[bars["trading_date"].isin(missing)].groupby("trading_date")["timestamp"].max()
    closes = {f"{day:%Y-%m-%d}": f"{t:%H:%M}" for day, t in last_bars.items()}
    # The futures closed at 09:15 on Good Friday, 09:30 on the days of mourning.
    assert set(closes.values()) == {"09:14", "09:29"}
    assert {day for day, t in closes.items() if t == "09:29"} == {"2018-12-05", "2025-01-09"}
    change = {"session": "CASH", "from": "daily", "map": {"chg": "close - prev(close)"}}
    result = rows(change | {"select": "mean(chg)"}, sample_settings, "NQ")
    assert not any("no bars in" in w for w in result.metadata.warnings), result.metadata.warnings
    counted = rows({"session": "CASH", "from": "daily", "select": "count()"}, sample_settings, "NQ")
    assert counted.summary.value == len(every) - len(missing)
    assert not any("no bars in" in w for w in counted.metadata.warnings)
    # Two weeks around 2025's Good Friday: its Monday's prev() reads Thursday's close.
    friday = missing[-1]
    period = f"{(friday - pd.Timedelta(days=4)).date()}:{(friday + pd.Timedelta(days=7)).date()}"
    listed = rows(change | {"period": period, "select": ["chg"]}, sample_settings, "NQ")
    assert len(listed.table) == 9 and str(friday.date()) == "2025-04-18"
    text = (
        f"1 trading day has no bars in 09:30-16:00 (Good Fridays: the futures closed at "
        f"09:15, e.g. {friday.date()}): prev() and next() step over them to the nearest "
        "day that has."
    )
    assert text in listed.metadata.warnings, listed.metadata.warnings
    assert not any("early close" in w for w in listed.metadata.warnings)
    # The same two weeks counted, no step from row to row: 1 of 10 days, the days only missing.
    counted = rows(
        {"session": "CASH", "from": "daily", "period": period, "select": "count()"},
        sample_settings,
        "NQ",
    )
    assert counted.summary.value == 9
    text = (
        f"1 trading day has no bars in 09:30-16:00 (Good Fridays: the futures closed at "
        f"09:15, e.g. {friday.date()}): the result holds no row of it."
    )
    assert text in counted.metadata.warnings, counted.metadata.warnings
    # Three months (1 of 65 days): the Mondays listed hold the one after it, the
    # Wednesdays none next to it.
    spring = change | {"period": "2025-03-01:2025-05-31", "select": ["chg"]}
    days = every[(every >= "2025-03-01") & (every <= "2025-05-31")]
    assert len(days) == 65  # 1 of them under the 5% of a few rows
    for day, said in (("Mon", True), ("Wed", False)):
        picked = rows(spring | {"where": f"dayname() == '{day}'"}, sample_settings, "NQ")
        assert len(picked.table) == int((days.strftime("%a") == day).sum()) <= 25
        assert any("no bars in" in w for w in picked.metadata.warnings) == said, day


def test_trading_days_left_finds_the_real_month_end_on_a_window(sample_settings, es_dates) -> None:
    """The fix for the warning above: the month's last trading day by the calendar, so
    Black Friday (no CASH_CLOSE bars) is November's last day, never the Wednesday before."""
    result = rows(
        {
            "session": "CASH_CLOSE",
            "from": "daily",
            "period": "2008:2025",
            "where": "trading_days_left('month') == 0",
            "select": "count()",
        },
        sample_settings,
    )
    dates = pd.Series(es_dates.sort_values(), index=es_dates.sort_values())
    dates = dates[dates.dt.year <= 2025]
    month_ends = dates.groupby(dates.index.to_period("M")).max()
    window_days = set(
        pd.DatetimeIndex(
            execute(
                {"session": "CASH_CLOSE", "from": "daily", "period": "2008:2025"}
                | {"select": ["date()"], "limit": 10_000},
                "ES",
                settings=EngineSettings(data_dir=sample_settings.data_dir, max_table_rows=10_000),
            ).table["date"]
        )
    )
    assert result.summary.value == sum(d in window_days for d in month_ends)
    assert dt.date(2024, 11, 27) not in {d.date() for d in month_ends}


def test_a_week_cut_by_the_periods_edges_is_named(sample_settings, es_dates) -> None:
    """Grouped by week(), 2024's last week (2024-12-30) runs into 2025 and its first week,
    cut by the period's start, is named as its row is: by its first trading date (2024-01-02,
    New Year's Day a Monday without a session), with the days it counts."""
    result = rows(
        {"session": "ETH", "from": "daily", "period": "2024-01-03:2024-12-31"}
        | {"group_by": "week()", "select": "count()"},
        sample_settings,
    )
    dates = es_dates.sort_values()
    week = dates[(dates >= "2024-12-30") & (dates <= "2025-01-05")]
    inside = week[week <= "2024-12-31"]
    first = dates[(dates >= "2024-01-01") & (dates <= "2024-01-07")]
    warnings = result.metadata.warnings
    assert (
        f"The week 2024-12-30 continues past the period's end (to {week[-1].date()}): its row "
        f"counts only {len(inside)} of its {len(week)} days."
    ) in warnings, warnings
    assert first[0] == pd.Timestamp("2024-01-02")
    assert (
        f"The week {first[0].date()} began before the period's start on 2024-01-03: its row "
        f"counts only {len(first[first >= '2024-01-03'])} of its {len(first)} days."
    ) in warnings, warnings
    assert len(result.table) == 53 and result.table["count"].iloc[-1] == len(inside)


def test_a_week_cut_by_the_periods_start_names_the_start(engine_settings, minutes) -> None:
    """ "The week 2025-12-22 began before the period's start (on 2025-12-22)" gave the week's
    first day where the period's start reads (it began on 2025-12-23, p43f C4): the start
    is the date named, and the days counted are pandas' over the minutes."""
    stamps = minutes["timestamp"]
    day = stamps.dt.normalize() + pd.to_timedelta((stamps.dt.hour >= 18).astype(int), unit="D")
    week = pd.Index(day.unique())
    week = week[(week >= "2024-01-08") & (week <= "2024-01-12")]
    inside = week[week >= "2024-01-10"]
    query = {"session": "ETH", "from": "daily", "period": "2024-01-10:2024-02-02"}
    result = rows(query | {"group_by": "week()", "select": "count()"}, engine_settings, "NQ")
    assert result.table["count"].iloc[0] == len(inside) == 3
    assert (
        "The week 2024-01-08 began before the period's start on 2024-01-10: its row counts "
        f"only {len(inside)} of its {len(week)} days."
    ) in result.metadata.warnings


def test_a_week_of_intraday_bars_cut_by_the_periods_start_is_named(
    engine_settings, minutes
) -> None:
    """p46a #5: 5-minute bars by week() named no week cut by the period's start or the
    data's (NQ's RTH 2008-01's 2007-12-31 held 3 of its 4 days), as daily bars do: their
    sum of volume is a part week's. The days and the volume are pandas' over the minutes."""
    stamps = minutes["timestamp"]
    day = stamps.dt.normalize() + pd.to_timedelta((stamps.dt.hour >= 18).astype(int), unit="D")
    week = pd.Index(day.unique())
    week = week[(week >= "2024-01-08") & (week <= "2024-01-12")]
    inside = week[week >= "2024-01-10"]
    query = {"session": "ETH", "from": "5m", "period": "2024-01-10:2024-02-02"}
    result = rows(
        query | {"group_by": "week()", "select": "sum(volume) as vol"}, engine_settings, "NQ"
    )
    assert result.table["vol"].iloc[0] == minutes["volume"][day.isin(inside)].sum()
    assert (
        "The week 2024-01-08 began before the period's start on 2024-01-10: its row counts "
        f"only {len(inside)} of its {len(week)} days."
    ) in result.metadata.warnings


@pytest.mark.parametrize(
    ("session", "period", "key"),
    [
        # Good Friday 2024-03-29 has no RTH bars: March's RTH ends on the 28th, inside.
        ("RTH", "2024-01-01:2024-03-31", "month()"),
        ("RTH", "2024-03-25:2024-03-29", "week()"),
        # Labor Day 2025-09-01 has no 16:00 bars; the period still begins on it.
        ("RTH_CLOSE", "2025-09-01:2025-09-26", "week()"),
    ],
)
def test_no_cut_is_named_where_the_session_has_no_day_beyond_the_period(
    sample_settings, es_minutes, session: str, period: str, key: str
) -> None:
    """A group is cut only by days of the query's own session outside the period: checked
    here from the minute file, whose session days beyond the bounds are none."""
    start, end = {"RTH": (570, 1020), "RTH_CLOSE": (960, 1020)}[session]
    minute = es_minutes["minute"]
    days = pd.DatetimeIndex(
        es_minutes.loc[(minute >= start) & (minute < end), "trading_date"].unique()
    )
    first, last = (pd.Timestamp(t) for t in period.split(":"))
    unit = "W" if key == "week()" else "M"
    edge_groups = {first.to_period(unit), last.to_period(unit)}
    beyond = [d for d in days if d.to_period(unit) in edge_groups and not first <= d <= last]
    assert beyond == []  # the premise: nothing of the edge groups lies outside
    result = rows(
        {
            "session": session,
            "from": "daily",
            "period": period,
            "group_by": key,
            "select": "count()",
        },
        sample_settings,
    )
    assert not any("the period's" in w for w in result.metadata.warnings), result.metadata.warnings


def test_trading_day_on_the_stock_markets_days(sample_settings) -> None:
    """trading_day('month', 'stocks') numbers the NYSE's open days (from its own calendar
    here): the day after Labor Day is September's first, and a holiday session is n/a."""
    import pandas_market_calendars as mcal

    nyse = mcal.get_calendar("NYSE").valid_days("2024-01-01", "2025-12-31").tz_localize(None)
    numbers = pd.Series(nyse).groupby(nyse.to_period("M")).cumcount().to_numpy() + 1
    left = pd.Series(nyse).groupby(nyse.to_period("M")).cumcount(ascending=False).to_numpy()
    expected = pd.DataFrame({"n": numbers, "left": left}, index=nyse)
    result = rows(
        {
            "session": "ETH",
            "from": "daily",
            "period": "2024:2025",
            "map": {
                "n": "trading_day('month', 'stocks')",
                "left": "trading_days_left('month', 'stocks')",
            },
            "select": ["n", "left"],
        },
        sample_settings,
    )
    table = result.table.set_index(pd.to_datetime(result.table["date"]))
    open_days = table.index.isin(expected.index)
    assert table.loc[open_days, "n"].tolist() == expected.loc[table.index[open_days], "n"].tolist()
    assert (
        table.loc[open_days, "left"].tolist()
        == expected.loc[table.index[open_days], "left"].tolist()
    )
    assert table.loc[~open_days, "n"].isna().all() and (~open_days).sum() >= 8
    assert table.loc["2025-09-02", "n"] == 1


# --- pre_holiday(), post_holiday() ---------------------------------------------------------


def _nyse_closures(start: str, end: str) -> pd.DatetimeIndex:
    """Weekdays the NYSE was shut, from pandas_market_calendars' own calendar."""
    import pandas_market_calendars as mcal

    nyse = mcal.get_calendar("NYSE").valid_days(start, end).tz_localize(None)
    return pd.bdate_range(start, end).difference(nyse)


def test_pre_and_post_holiday_follow_the_nyse_calendar(sample_settings, es_dates) -> None:
    """Every trading date whose next (previous) weekday is an NYSE closure, those without a
    futures bar (Christmas, New Year's Day, Good Friday on RTH) included."""
    closed = set(_nyse_closures("2007-12-01", "2026-02-28"))
    bdays = pd.bdate_range("2007-12-01", "2026-02-28")
    following = dict(itertools.pairwise(bdays))
    preceding = {after: before for before, after in itertools.pairwise(bdays)}
    result = rows(
        {
            "session": "RTH",
            "from": "daily",
            "map": {"pre": "pre_holiday()", "post": "post_holiday()"},
            "select": ["pre", "post"],
        },
        sample_settings,
    )
    table = result.table.set_index(pd.to_datetime(result.table["date"]))
    assert table["pre"].tolist() == [following[d] in closed for d in table.index]
    assert table["post"].tolist() == [preceding[d] in closed for d in table.index]
    for day in ("2024-12-24", "2025-12-24", "2024-12-31", "2024-03-28", "2024-11-27"):
        assert table.loc[day, "pre"], day  # Christmas, New Year, Good Friday, Thanksgiving
    for day in ("2024-12-26", "2025-01-02", "2024-04-01"):
        assert table.loc[day, "post"], day
    # A weekend holiday counts on its observed weekday: July 4 2020 was a Saturday, the NYSE
    # shut on Friday July 3; New Year 2022 (a Saturday) had none, so Dec 30 2021 is no eve.
    assert table.loc["2020-07-02", "pre"] and table.loc["2020-07-06", "post"]
    assert not table.loc["2021-12-30", "pre"] and not table.loc["2021-12-31", "pre"]
    # An early close is no closure: Christmas Eve's own session does not make Dec 23 an eve.
    assert not table.loc["2024-12-23", "pre"]


def test_return_before_a_holiday_counts_every_eve(sample_settings) -> None:
    """The tester's question: RTH close-to-close return on the NYSE day before a closure vs
    the others, from the raw minute bars; next(holiday()) found 115 such days, not 167."""
    bars = pd.read_parquet(
        data_path("NQ", sample_settings), columns=["trading_date", "minute", "close"]
    )
    rth = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]
    close = rth.groupby("trading_date")["close"].last()
    closed = _nyse_closures("2007-12-01", "2026-02-28")
    ret = close.pct_change() * 100
    nyse_day = ~close.index.isin(closed)
    following = close.index + pd.offsets.BDay(1)
    pre = following.isin(closed)
    expected = ret[nyse_day & pre]
    result = rows(
        {
            "session": "RTH",
            "from": "daily",
            "map": {"ret_pct": "(close - prev(close)) / prev(close) * 100", "pre": "pre_holiday()"},
            "where": "not holiday()",
            "group_by": "pre",
            "select": ["mean(ret_pct) as avg_ret", "count() as days"],
        },
        sample_settings,
        symbol="NQ",
    )
    got = result.table.set_index("pre")
    assert got.loc[True, "days"] == len(expected) == 167
    assert math.isclose(got.loc[True, "avg_ret"], expected.mean(), rel_tol=1e-9)
    assert math.isclose(got.loc[False, "avg_ret"], ret[nyse_day & ~pre].mean(), rel_tol=1e-9)


def test_a_quarter_ending_on_good_friday_is_said_to_lose_its_last_rth_day(
    sample_settings, es_minutes, es_dates
) -> None:
    """p30b Q7: "the last trading day of each quarter" as trading_days_left('quarter') == 0
    on RTH found 71 of 72 quarters: 2024-03-29, Good Friday, traded 18:00-09:15 and no RTH,
    yet counts among the exchange's dates, so 2024-03-28 read 1 left. Said; with 'stocks'
    every quarter has its day."""
    rth = pd.DatetimeIndex(
        es_minutes.loc[(es_minutes["minute"] >= 570) & (es_minutes["minute"] < 1020)][
            "trading_date"
        ].unique()
    )
    quarters = pd.Series(es_dates, index=es_dates).groupby(es_dates.to_period("Q")).max()
    whole = quarters[quarters.index < es_dates[-1].to_period("Q")]  # the data's last is open
    lost = whole[~whole.isin(rth)]
    assert len(lost) >= 1 and pd.Timestamp("2024-03-29") in set(lost)
    query = {"session": "RTH", "from": "daily", "where": "trading_days_left('quarter') == 0"}
    counted = rows({**query, "select": "count()"}, sample_settings)
    assert counted.summary.value == len(whole) - len(lost)
    [said] = [w for w in counted.metadata.warnings if "trading_days_left() counts them" in w]
    assert "the last RTH day before one reads 1 left, not 0" in said
    stocks = {**query, "where": "trading_days_left('quarter', 'stocks') == 0"}
    fixed = rows({**stocks, "select": "count()"}, sample_settings)
    assert fixed.summary.value == len(whole)
    assert not [w for w in fixed.metadata.warnings if "counts them" in w]


# --- holiday sessions among the days trading_day() picks ------------------------------------


@pytest.fixture(scope="module")
def nq_rth_dates(sample_settings: EngineSettings) -> pd.DatetimeIndex:
    """NQ's trading dates with a bar in 09:30-17:00, from the sample's minute bars."""
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=["trading_date", "minute"])
    rth = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]
    return pd.DatetimeIndex(rth["trading_date"].unique()).sort_values()


def _nth_monday(year: int, month: int, last: bool = False) -> pd.Timestamp:
    """Labor Day (the first Monday of September) or Memorial Day (the last of May): the US
    rules, not a calendar library's."""
    mondays = pd.date_range(f"{year}-{month:02d}-01", periods=31, freq="D")
    mondays = mondays[(mondays.month == month) & (mondays.dayofweek == 0)]
    return mondays[-1] if last else mondays[0]


def _place_note(said: list[str]) -> list[str]:
    return [w for w in said if "no bars in" in w]


def test_the_first_day_of_september_names_its_labor_day_sessions(
    sample_settings, nq_rth_dates
) -> None:
    """p32d #19: "the first trading day of September" as trading_day('month') == 1 kept 18
    RTH days, 8 of them Labor Day's short futures session (+0.17% against the stock market's
    +0.51%), and said only that Good Fridays (none in September) are counted. Now the holiday
    sessions are said, with the 'stocks' form, and the Good Friday note is not."""
    query = {
        "session": "RTH",
        "from": "daily",
        "where": "month() == 9 and trading_day('month') == 1",
        "select": ["date()"],
    }
    result = rows(query, sample_settings, "NQ")
    september = pd.Series(nq_rth_dates, index=nq_rth_dates)
    september = september[september.dt.month == 9]
    firsts = september.groupby(september.index.year).min()
    labor_days = [d for d in firsts if d == _nth_monday(d.year, 9)]
    assert dates_of(result.table) == [f"{d:%Y-%m-%d}" for d in firsts]
    assert len(firsts) == 18 and len(labor_days) == 8
    assert (
        f"8 of the 18 rows are US holiday sessions (the stock market closed, the futures "
        f"traded short hours), e.g. {labor_days[0]:%Y-%m-%d} (Labor Day): trading_day('month') "
        "counts them among the exchange's days; trading_day('month', 'stocks') counts the "
        "stock market's days, which leaves them out."
    ) in result.metadata.warnings, result.metadata.warnings
    assert _place_note(result.metadata.warnings) == []  # no Good Friday falls in September
    # The form it gives: the first day after Labor Day where Labor Day came first.
    stocks = rows(
        {**query, "where": "month() == 9 and trading_day('month', 'stocks') == 1"},
        sample_settings,
        "NQ",
    )
    open_days = september[[d != _nth_monday(d.year, 9) for d in september]]
    expected = open_days.groupby(open_days.index.year).min()
    assert dates_of(stocks.table) == [f"{d:%Y-%m-%d}" for d in expected]
    assert not [w for w in stocks.metadata.warnings if "holiday sessions" in w]


def test_month_ends_name_their_memorial_day_sessions(sample_settings, nq_rth_dates) -> None:
    """trading_days_left('month') == 0 keeps the Memorial Days that end May (2010, 2021):
    said, while the Good Friday note stays (March 2024 lost its last RTH day to one)."""
    result = rows(
        {
            "session": "RTH",
            "from": "daily",
            "where": "trading_days_left('month') == 0",
            "select": "count()",
        },
        sample_settings,
        "NQ",
    )
    days = pd.Series(nq_rth_dates, index=nq_rth_dates)
    ends = days.groupby(nq_rth_dates.to_period("M")).max()
    memorial = [d for d in ends if d.month == 5 and d == _nth_monday(d.year, 5, last=True)]
    assert [f"{d:%Y-%m-%d}" for d in memorial] == ["2010-05-31", "2021-05-31"]
    total = result.summary.value
    assert (
        f"2 of the {total} rows are US holiday sessions (the stock market closed, the futures "
        "traded short hours), e.g. 2010-05-31 (Memorial Day): trading_days_left('month') "
        "counts them among the exchange's days; trading_days_left('month', 'stocks') counts "
        "the stock market's days, which leaves them out."
    ) in result.metadata.warnings, result.metadata.warnings
    [note] = _place_note(result.metadata.warnings)
    assert "(trading_days_left('month', 'stocks'))" in note


def _month_places(days: pd.DatetimeIndex, left: bool) -> pd.Series:
    """Each day's number in its month among ``days`` (1 = first), or the days after it in
    its month (0 = the last) when ``left``."""
    months = pd.Series(days, index=days).groupby(days.to_period("M"))
    return months.cumcount(ascending=False) if left else months.cumcount() + 1


@pytest.mark.parametrize(
    ("where", "number", "left", "months", "year", "said"),
    [
        # p-note of 2025-01-09 (a day of mourning, January's 6th exchange day): January's
        # first RTH day is 2025-01-02 either way, so the "first day" note was noise.
        ("td == 1 and month() in (1, 10)", 1, False, (1, 10), None, False),
        # No April's first day is a Good Friday (2010's and 2021's were the 2nd).
        ("trading_day('month') == 1 and month() in (4, 10)", 1, False, (4, 10), None, False),
        ("trading_day('month') == 1 and month() in (2, 10)", 1, False, (2, 10), None, False),
        # March 2024 ends on Good Friday (no RTH bar): its last RTH day reads 1 left, and
        # the row is lost though September's is kept.
        (
            "month() in (3, 9) and year() == 2024 and trading_days_left('month') == 0",
            0,
            True,
            (3, 9),
            2024,
            True,
        ),
        (
            "month() == 9 and year() == 2024 and trading_days_left('month') == 0",
            0,
            True,
            (9,),
            2024,
            False,
        ),
        # After 2025-01-09 January's RTH days are numbered one higher than their place.
        (
            "trading_day('month') == 6 and month() == 1 and year() == 2025",
            6,
            False,
            (1,),
            2025,
            True,
        ),
    ],
)
def test_the_good_friday_note_is_said_where_a_missing_day_moves_the_rows_picked(
    sample_settings, nq_rth_dates, where, number, left, months, year, said
) -> None:
    """The note that RTH's missing days (Good Fridays, days of mourning) are counted by
    trading_day() is said exactly where the where keeps other rows than it would with the
    RTH days' own numbers: pandas numbers the exchange's dates and the RTH dates apart."""
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=["trading_date"])
    every = pd.DatetimeIndex(bars["trading_date"].unique()).sort_values()
    missing = every.difference(nq_rth_dates)
    good_fridays = {pd.Timestamp(easter(y)) - pd.Timedelta(days=2) for y in range(2008, 2027)}
    assert set(missing) <= good_fridays | MOURNING and {d.month for d in missing} == {1, 3, 4, 12}
    exchange = _month_places(every, left)[nq_rth_dates]
    own = _month_places(nq_rth_dates, left)
    wanted = nq_rth_dates.month.isin(months) & (year is None or nq_rth_dates.year == year)
    picked = nq_rth_dates[wanted & (exchange == number).to_numpy()]
    picked_own = nq_rth_dates[wanted & (own == number).to_numpy()]
    assert (not picked.equals(picked_own)) == said
    query = {"session": "RTH", "from": "daily", "where": where, "select": ["date()"]}
    if where.startswith("td"):
        query["map"] = {"td": "trading_day('month')"}
    result = rows(query, sample_settings, "NQ")
    assert dates_of(result.table) == [f"{d:%Y-%m-%d}" for d in picked]
    assert bool(_place_note(result.metadata.warnings)) == said, result.metadata.warnings


# 2023-06-01, June's first weekday, traded 08:00-08:59 only (as on a day of mourning): a
# trading date with no RTH bar, on the hand-made year of RTH minutes.
NO_RTH = pd.Timestamp("2023-06-01")


@pytest.fixture(scope="module")
def first_day_lost(tmp_path_factory, year_minutes: pd.DataFrame) -> EngineSettings:
    frame = year_minutes.copy()
    day = frame["timestamp"].dt.normalize() == NO_RTH
    early = frame[day].head(60).copy()
    early["timestamp"] -= pd.Timedelta(minutes=90)
    frame = pd.concat([frame[~day], early]).sort_values("timestamp", ignore_index=True)
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minutes_of_day(frame["timestamp"])
    settings = EngineSettings(data_dir=tmp_path_factory.mktemp("first_day_lost"))
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description="a year of hand-made RTH bars, June's first day before 09:30 only",
        first_date=dt.date(2023, 1, 2),
        last_date=dt.date(2023, 12, 29),
        rows=len(frame),
    )
    write_bars(frame, meta, data_path("NQ", settings))
    return settings


@pytest.mark.parametrize(
    ("where", "number", "left", "said"),
    [
        # June's first exchange day has no RTH row: "the first day of June" keeps none.
        ("trading_day('month') == 1 and month() in (6, 7)", 1, False, True),
        # June's last day is its last either way.
        ("trading_days_left('month') == 0 and month() in (6, 7)", 0, True, False),
    ],
)
def test_a_month_whose_first_day_has_no_rth_bar_is_said(
    first_day_lost, year_minutes, where, number, left, said
) -> None:
    """The true case of the note: a month's first trading date with bars only before 09:30
    loses "the first day" (the RTH day after it is numbered 2), said; a pick the missing
    day does not move is not. Expected rows and numbers from pandas over the bars."""
    stamps = year_minutes["timestamp"]
    every = pd.DatetimeIndex(stamps.dt.normalize().unique()).sort_values()
    rth = every.drop(NO_RTH)
    wanted = rth.month.isin((6, 7))
    picked = rth[wanted & (_month_places(every, left)[rth] == number).to_numpy()]
    picked_own = rth[wanted & (_month_places(rth, left) == number).to_numpy()]
    assert (not picked.equals(picked_own)) == said
    query = {"session": "RTH", "from": "daily", "where": where, "select": ["date()"]}
    result = rows(query, first_day_lost, "NQ")
    assert dates_of(result.table) == [f"{d:%Y-%m-%d}" for d in picked]
    notes = _place_note(result.metadata.warnings)
    assert bool(notes) == said, result.metadata.warnings
    if said:
        assert "2023-06-01" in notes[0] and "numbered 2, not 1" in notes[0]


# --- not holiday() beside a place among the exchange's days ---------------------------------


def _dropped_note(said: list[str]) -> list[str]:
    return [w for w in said if w.startswith("not holiday() left out")]


def test_not_holiday_says_the_septembers_it_leaves_without_a_first_day(
    sample_settings, nq_rth_dates
) -> None:
    """p32d #19's fix: "month() == 9 and trading_day('month') == 1 and not holiday()" drops
    the 8 Labor Day sessions and keeps nothing in their place (the day after is numbered
    2): 10 rows for 18 Septembers, said; the 'stocks' form it names has all 18."""
    query = {"session": "RTH", "from": "daily", "select": ["date()"]}
    where = "month() == 9 and trading_day('month') == 1"
    result = rows({**query, "where": f"{where} and not holiday()"}, sample_settings, "NQ")
    september = pd.Series(nq_rth_dates, index=nq_rth_dates)
    september = september[september.dt.month == 9]
    firsts = september.groupby(september.index.year).min()
    labor_days = [d for d in firsts if d == _nth_monday(d.year, 9)]
    assert len(firsts) == 18 and len(labor_days) == 8
    assert dates_of(result.table) == [f"{d:%Y-%m-%d}" for d in firsts if d not in labor_days]
    assert _dropped_note(result.metadata.warnings) == [
        f"not holiday() left out 8 days that trading_day('month') numbers 1 (e.g. "
        f"{labor_days[0]:%Y-%m-%d}, Labor Day), and no other day of their month has that "
        "number: those 8 months have no row. trading_day('month', 'stocks') numbers the "
        "stock market's days, which skip holidays."
    ]
    stocks = rows(
        {**query, "where": "month() == 9 and trading_day('month', 'stocks') == 1"},
        sample_settings,
        "NQ",
    )
    open_days = september[[d != _nth_monday(d.year, 9) for d in september]]
    expected = open_days.groupby(open_days.index.year).min()
    assert len(expected) == 18
    assert dates_of(stocks.table) == [f"{d:%Y-%m-%d}" for d in expected]


def test_not_holiday_says_the_month_ends_it_leaves_without_a_last_day(
    sample_settings, nq_rth_dates
) -> None:
    """trading_days_left('month') == 0 and not holiday(): May 2010 and 2021 ended on Memorial
    Day, and the Friday before reads 1 left, so those Mays have no row."""
    result = rows(
        {
            "session": "RTH",
            "from": "daily",
            "map": {"traded": "not holiday()"},  # through the map
            "where": "trading_days_left('month') == 0 and traded",
            "select": "count()",
        },
        sample_settings,
        "NQ",
    )
    days = pd.Series(nq_rth_dates, index=nq_rth_dates)
    ends = days.groupby(nq_rth_dates.to_period("M")).max()
    memorial = [d for d in ends if d.month == 5 and d == _nth_monday(d.year, 5, last=True)]
    assert len(memorial) == 2
    [said] = _dropped_note(result.metadata.warnings)
    assert said.startswith(
        f"not holiday() left out 2 days that trading_days_left('month') numbers 0 (e.g. "
        f"{memorial[0]:%Y-%m-%d}, Memorial Day)"
    ), said


def _hand_made_dates(minutes: pd.DataFrame) -> pd.DatetimeIndex:
    """The hand-made bars' trading dates: a bar from 18:00 on belongs to the next day."""
    stamps = pd.DatetimeIndex(minutes["timestamp"])
    return pd.DatetimeIndex((stamps + pd.Timedelta(hours=6)).normalize().unique())


def _presidents_day(year: int) -> pd.Timestamp:
    """The third Monday of February (the US rule)."""
    days = pd.date_range(f"{year}-02-01", f"{year}-02-28", freq="D")
    return days[days.dayofweek == 0][2]


def test_not_holiday_beside_a_place_on_hand_made_bars(engine_settings, minutes) -> None:
    """February 2024's 13th trading date is Presidents' Day: "trading_day('month') == 13 and
    not holiday()" keeps January's and March's and says February has none; the 'stocks'
    form gives February's 13th open day (the day after)."""
    dates = _hand_made_dates(minutes)
    holiday = _presidents_day(2024)
    assert holiday in dates
    by_month = pd.Series(dates, index=dates).groupby(dates.month)
    thirteenth = by_month.nth(12)
    assert holiday in set(thirteenth)
    query = {"session": "RTH", "from": "daily", "select": ["date()"]}
    result = rows(
        {**query, "where": "trading_day('month') == 13 and not holiday()"}, engine_settings, "NQ"
    )
    assert dates_of(result.table) == [f"{d:%Y-%m-%d}" for d in thirteenth if d != holiday]
    assert _dropped_note(result.metadata.warnings) == [
        f"not holiday() left out 1 day that trading_day('month') numbers 13 (e.g. "
        f"{holiday:%Y-%m-%d}, Presidents Day), and no other day of its month has that "
        "number: that month has no row. trading_day('month', 'stocks') numbers the stock "
        "market's days, which skip holidays."
    ]
    stocks = rows({**query, "where": "trading_day('month', 'stocks') == 13"}, engine_settings, "NQ")
    open_days = dates[dates != holiday]
    expected = pd.Series(open_days, index=open_days).groupby(open_days.month).nth(12)
    assert dates_of(stocks.table) == [f"{d:%Y-%m-%d}" for d in expected]
    assert len(expected) == 3


@pytest.mark.parametrize(
    ("where", "said"),
    [
        # Presidents' Day is its week's first day: that week has no row numbered 1.
        ("trading_day('week') == 1 and not holiday()", True),
        # Its week's second day is no holiday: every week has its row.
        ("trading_day('week') == 2 and not holiday()", False),
        # A Tuesday where the holiday is a Monday: the where could not have kept it.
        ("trading_day('week') == 1 and not holiday() and dayname() == 'Tue'", False),
        # The stock market's own count: nothing is lost.
        ("trading_day('week', 'stocks') == 1 and not holiday()", False),
        # No holiday dropped: holiday() is not negated.
        ("trading_day('week') == 1 and (holiday() or close > 0)", False),
    ],
)
def test_the_not_holiday_note_is_said_only_where_a_week_loses_its_row(
    engine_settings, minutes, where: str, said: bool
) -> None:
    dates = _hand_made_dates(minutes)
    weeks = pd.Series(dates, index=dates).groupby(dates.to_period("W"))
    holiday = _presidents_day(2024)
    assert weeks.min().isin([holiday]).sum() == 1  # the first day of one week
    assert not weeks.nth(1).isin([holiday]).any()
    result = rows({"session": "RTH", "from": "daily", "where": where}, engine_settings, "NQ")
    assert bool(_dropped_note(result.metadata.warnings)) == said, result.metadata.warnings


@pytest.mark.parametrize("where", ["dayname() == 'Sun'", "dayofweek() in (5, 6)"])
def test_a_weekend_weekday_says_where_the_sunday_evening_is(engine_settings, minutes, where):
    """ "The Sunday evening's hourly range" as dayname() == 'Sun' read "No bars matched",
    as if the market were shut (p33c #6). The form the warning gives finds every Sunday
    evening of the hand-made bars: the minutes from 18:00 on a Sunday's calendar date."""
    query = {"session": "ETH", "from": "1h", "where": where, "select": "count()"}
    empty = execute(query, "NQ", settings=engine_settings)
    assert empty.ok and empty.summary.value == 0
    (said,) = [w for w in empty.metadata.warnings if w.startswith("No trading date is a")]
    assert "For the Sunday evening: dayname() == 'Mon' and hour() >= 18" in said

    stamps = pd.DatetimeIndex(minutes["timestamp"])
    sunday = stamps[(stamps.dayofweek == 6) & (stamps.hour >= 18)]
    assert len(sunday)  # the premise: the bars have Sunday evenings
    told = {**query, "where": "dayname() == 'Mon' and hour() >= 18"}
    assert execute(told, "NQ", settings=engine_settings).summary.value == len(
        sunday.floor("h").unique()
    )
    # A where that matches nothing for another reason is not told about weekends.
    other = execute({**query, "where": "close < 0"}, "NQ", settings=engine_settings)
    assert not [w for w in other.metadata.warnings if w.startswith("No trading date is a")]


def test_holiday_sessions_that_change_which_weekday_is_lowest_are_said(sample_settings) -> None:
    """p47c D: a weekday's mean can head its column only through its holiday sessions while
    every value moves under the 5 % the note waits for. ES's RTH volume by weekday over
    2015-2025 reads Monday lowest; without its holiday sessions (pandas_market_calendars'
    NYSE closures) Monday moves by more than 2.5 % and Friday is lowest: said. NQ's RTH
    range % by weekday (Monday lowest, then Friday without them) is within noise, said so
    by the noise note: no ranking is named."""
    from rth_bars import RTH_END, RTH_START

    from barb.data.store import data_path

    columns = ["volume", "trading_date", "minute"]
    bars = pd.read_parquet(data_path("ES", sample_settings), columns=columns)
    rth = bars[(bars["minute"] >= RTH_START) & (bars["minute"] < RTH_END)]
    volume = rth.groupby("trading_date")["volume"].sum()
    volume = volume[(volume.index >= "2015-01-01") & (volume.index <= "2025-12-31")]
    names = dict(enumerate(["Mon", "Tue", "Wed", "Thu", "Fri"]))
    weekday = pd.Series(volume.index.dayofweek, index=volume.index).map(names)
    closed = volume.index.isin(_nyse_closures("2014-12-01", "2026-01-31"))
    every = volume.groupby(weekday).mean()
    without = volume[~closed].groupby(weekday[~closed]).mean()
    assert (without / every - 1).abs().max() < 0.05  # the case: under the 5 % rule
    assert every.idxmin() == "Mon" and without.idxmin() == "Fri"
    assert without["Mon"] / every["Mon"] - 1 >= 0.025
    result = rows(
        {"session": "RTH", "from": "daily", "period": "2015:2025",
         "map": {"weekday": "dayname()"}, "group_by": "weekday", "select": "mean(volume) as vol"},
        sample_settings,
        "ES",
    )  # fmt: skip
    [said] = [w for w in result.metadata.warnings if "US holiday sessions" in w]
    assert (
        f"vol's lowest is 'Fri' {without['Fri']:.4g} without them, not 'Mon' "
        f"{every['Mon']:.4g}. " in said
    )
    # Within noise: the noise note says so, and the holidays' swap of its ends is not named.
    ranges = rows(
        {"session": "RTH", "from": "daily", "map": {"weekday": "dayname()"},
         "group_by": "weekday", "select": "mean(range / open * 100) as range_pct"},
        sample_settings,
        "NQ",
    )  # fmt: skip
    assert any("less than their noise" in w for w in ranges.metadata.warnings)
    assert not [w for w in ranges.metadata.warnings if "range_pct's lowest is" in w]


def test_a_yes_no_statistic_by_weekday_is_answered(sample_settings) -> None:
    """max(close > open) by weekday over NQ's daily RTH bars failed the query ("Internal
    error"): weighing the holiday sessions subtracted its booleans. It answers now, each
    weekday's any-day-up and every-day-up as the sample's own RTH days (pandas) give them,
    with or without a where on one weekday."""
    from rth_bars import sample_rth_days

    days = sample_rth_days(sample_settings, "NQ")
    days = days[(days.index >= "2015-01-01") & (days.index <= "2025-12-31")]
    up = days["close"] > days["open"]
    names = dict(enumerate(["Mon", "Tue", "Wed", "Thu", "Fri"]))
    weekday = pd.Series(pd.DatetimeIndex(days.index).dayofweek, index=days.index).map(names)
    base = {"session": "RTH", "from": "daily", "period": "2015:2025"}
    select = ["max(close > open) as any_up", "min(close > open) as all_up"]
    grouped = rows(
        {**base, "map": {"weekday": "dayname()"}, "group_by": "weekday", "select": select},
        sample_settings,
        "NQ",
    )
    table = grouped.table.set_index("weekday")
    for name in names.values():
        assert bool(table.loc[name, "any_up"]) == bool(up[weekday == name].any())
        assert bool(table.loc[name, "all_up"]) == bool(up[weekday == name].all())
    mondays = rows({**base, "where": "dayname() == 'Mon'", "select": select}, sample_settings, "NQ")
    assert mondays.summary.values == {
        "any_up": bool(up[weekday == "Mon"].any()),
        "all_up": bool(up[weekday == "Mon"].all()),
    }


def test_a_crude_holiday_note_says_the_ranking_it_is_there_for(sample_settings) -> None:
    """r47c bug 4: CL's RTH volume by weekday in 2020 reads Monday lowest, Thursday without
    its US holiday sessions, every value moving under 5 %: the note is there for that
    ranking, and CL's own-holiday words had dropped it."""
    from barb.data.store import data_path

    columns = ["volume", "trading_date", "minute"]
    bars = pd.read_parquet(data_path("CL", sample_settings), columns=columns)
    rth = bars[(bars["minute"] >= 9 * 60) & (bars["minute"] < 14 * 60 + 30)]  # 09:00-14:30
    volume = rth.groupby("trading_date")["volume"].sum()
    volume = volume[(volume.index >= "2020-01-01") & (volume.index <= "2020-12-31")]
    names = dict(enumerate(["Mon", "Tue", "Wed", "Thu", "Fri"]))
    weekday = pd.Series(volume.index.dayofweek, index=volume.index).map(names)
    closed = volume.index.isin(_nyse_closures("2019-12-01", "2021-01-31"))
    every = volume.groupby(weekday).mean()
    without = volume[~closed].groupby(weekday[~closed]).mean()
    assert (without / every - 1).abs().max() < 0.05  # the case: under the 5 % rule
    assert every.idxmin() == "Mon" and without.idxmin() == "Thu"
    result = rows(
        {"session": "RTH", "from": "daily", "period": "2020", "map": {"wd": "dayname()"},
         "group_by": "wd", "select": "mean(volume)"},
        sample_settings,
        "CL",
    )  # fmt: skip
    [said] = [w for w in result.metadata.warnings if "stock-market holiday" in w]
    assert (
        f"mean_volume's lowest is 'Thu' {without['Thu']:.4g} without them, not 'Mon' "
        f"{every['Mon']:.4g}." in said
    )


def test_a_signed_means_holiday_move_is_weighed_against_its_values_size(sample_settings) -> None:
    """p48d C5: NQ's 2025 weekday returns were told of their holiday sessions, ranges not. A
    mean return near 0 moved by "254 % of itself" (Thursday) when its holidays moved it by
    about 3 % of a day's mean move; ranges moved 1 %. Both are now weighed the same way, the
    move against the mean size of the values (pandas over the RTH bars, NYSE closures from
    pandas_market_calendars): neither is told; the mean body (close against open, p46e q23),
    moved by 5 % or more of its size on some weekday, still is."""
    from rth_bars import RTH_END, RTH_START

    columns = ["open", "high", "low", "close", "trading_date", "minute"]
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=columns)
    rth = bars[(bars["minute"] >= RTH_START) & (bars["minute"] < RTH_END)]
    days = rth.groupby("trading_date").agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )
    values = pd.DataFrame(
        {
            "ret": (days["close"] / days["close"].shift() - 1) * 100,
            "body": (days["close"] / days["open"] - 1) * 100,
            "range": days["high"] - days["low"],
        }
    ).loc["2025"]
    weekday = values.index.dayofweek
    kept = ~values.index.isin(_nyse_closures("2025-01-01", "2025-12-31"))
    moved = {}
    for column in values.columns:
        every = values[column].groupby(weekday).mean()
        without = values[column][kept].groupby(weekday[kept]).mean()
        size = values[column].abs().groupby(weekday).mean()
        moved[column] = (
            ((without - every) / every).abs().max(),  # of itself, as before
            ((without - every) / size).abs().max(),  # of the values' size
        )
    assert moved["ret"][0] >= 0.05 > moved["ret"][1]  # the case: told before, for nothing
    assert max(moved["range"]) < 0.05
    assert moved["body"][1] >= 0.05
    for column, told in (("ret", False), ("range", False), ("body", True)):
        result = rows(
            {"session": "RTH", "from": "daily", "period": "2025",
             "map": {"wd": "dayname()", "ret": "(close / prev(close) - 1) * 100",
                     "body": "(close / open - 1) * 100"},
             "group_by": "wd", "select": f"mean({column})"},
            sample_settings,
            "NQ",
        )  # fmt: skip
        said = [w for w in result.metadata.warnings if "US holiday sessions" in w]
        assert bool(said) == told, column


def test_a_cut_weeks_day_count_is_the_periods_not_the_wheres(sample_settings) -> None:
    """A where beside a period cut: the week 2024-02-26 of a period ending 2024-02-29 has 4
    of its 5 RTH days in the period, whatever close > open keeps of them (it was told "its row
    counts only 3 of its 5 days", the where's count read as the period's). Both counts come
    from NQ's minute bars."""
    bars = pd.read_parquet(data_path("NQ", sample_settings))
    rth = bars[(bars["minute"] >= 9 * 60 + 30) & (bars["minute"] < 17 * 60)]
    days = rth.groupby("trading_date").agg(open=("open", "first"), close=("close", "last"))
    week = days.loc["2024-02-26":"2024-03-03"]
    inside = week.loc[:"2024-02-29"]
    up = inside[inside["close"] > inside["open"]]
    assert len(inside) == 4 and len(up) < len(inside)  # the sample's Monday fell
    result = rows(
        {"session": "RTH", "from": "daily", "period": "2024-01:2024-02"}
        | {"where": "close > open", "group_by": "week()", "select": ["first(close)"]},
        sample_settings,
        "NQ",
    )
    assert (
        "The week 2024-02-26 continues past the period's end (to "
        f"{week.index[-1].date()}): the period holds only {len(inside)} of its {len(week)} "
        f"days, and the where keeps {len(up)} of those."
    ) in result.metadata.warnings, result.metadata.warnings
