"""The day after a US holiday session: prev(close) is the holiday's own close (Thanksgiving's
13:00 close for the Friday after it), not the last stock-market close, and a return or gap
read from it says so, with the form that reads the last stock-market close. Expected values
from pandas over the sample's minute bars, with the NYSE's closed days from
pandas_market_calendars; the form is checked on every day after a holiday session, the
Mondays after Good Friday (no RTH bar, so prev(close) is already Thursday's) and the days
after Sandy's two closed days among them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with

from barb.settings import EngineSettings

RTH_START, RTH_END = 570, 1020  # 09:30-17:00
RET = "(close / prev(close) - 1) * 100"
# The words of the warning that some rows kept follow a US holiday session.
KEPT = "rows kept follow"
ONE_BACK = "if(prev(holiday()), session_close('RTH', 2), prev(close))"
TWO_BACK = (
    "if(prev(holiday()), if(prev(holiday(), 2), session_close('RTH', 3), "
    "session_close('RTH', 2)), prev(close))"
)


@pytest.fixture(scope="module")
def bars(sample_settings) -> pd.DataFrame:
    from barb.data.store import data_path

    return pd.read_parquet(
        data_path("NQ", sample_settings), columns=["trading_date", "minute", "close"]
    )


@pytest.fixture(scope="module")
def closed_at(bars) -> pd.Series:
    """The wall clock each trading date's last bar ended at: '13:00' on Thanksgiving."""
    last = bars.groupby("trading_date")["minute"].last() + 1
    return last.map(lambda m: f"{m // 60 % 24:02d}:{m % 60:02d}")


def _closes(days: pd.DataFrame) -> pd.DataFrame:
    """Closes per date (``days``: a session's bars), each date's prev(close), the last close
    of a day the NYSE traded before it, and whether the date before it is a holiday
    session."""
    import pandas_market_calendars as mcal

    close = days.groupby("trading_date")["close"].last()
    nyse = mcal.get_calendar("NYSE").valid_days("2007-12-01", "2026-12-31").tz_localize(None)
    holiday = ~close.index.isin(nyse)
    return pd.DataFrame(
        {
            "close": close,
            "prev": close.shift(),
            "stock": close.where(~holiday).ffill().shift(),
            "holiday": holiday,
            "after": np.concatenate(([False], holiday[:-1])),
        }
    )


@pytest.fixture(scope="module")
def rth(bars) -> pd.DataFrame:
    """NQ's RTH days (see _closes)."""
    return _closes(bars[(bars["minute"] >= RTH_START) & (bars["minute"] < RTH_END)])


@pytest.fixture(scope="module")
def eth(bars) -> pd.DataFrame:
    """NQ's Globex days, 18:00 the evening before to 17:00 (see _closes)."""
    return _closes(bars)


def _after(rth: pd.DataFrame, day: pd.Timestamp, closed_at: pd.Series) -> str:
    """'2008-11-28 after 2008-11-27, closed 11:30': a row and the holiday session before it."""
    holiday = rth.index[rth.index.get_loc(day) - 1]
    return f"{day:%Y-%m-%d} after {holiday:%Y-%m-%d}, closed {closed_at[holiday]}"


def _text(n: int, total: int, example: str, fix: str) -> str:
    follow = "follows" if n == 1 else "follow"
    return (
        f"{n:,} of the {total:,} rows kept {follow} a US holiday session ({example}): "
        "prev(close) there is the holiday's own close (the futures traded, mostly short hours; "
        f"the stock market was shut), not the last stock-market close. {fix}"
    )


def _stock_days(form: str) -> str:
    return f'Stock-market days only: "where": "not holiday()", and for prev(close) {form}.'


def test_the_day_after_thanksgiving_is_said_with_the_last_stock_close(
    sample_settings, rth, closed_at
) -> None:
    fridays = rth[rth["after"] & (rth.index.month == 11)]
    query = {
        "map": {"ret": RET},
        "where": "post_holiday() and month() == 11",
        "select": ["mean(ret) as ret", "count() as days"],
    }
    result = ask(query, sample_settings, **RTH_DAILY)
    assert result.summary.values["days"] == len(fridays) == 18
    from_thursday = (fridays["close"] / fridays["prev"] - 1).mean() * 100
    assert result.summary.values["ret"] == pytest.approx(from_thursday)  # +0.222%
    example = "e.g. " + _after(rth, fridays.index[0], closed_at)
    assert warnings_with(result, KEPT) == [_text(18, 18, example, f"From that close: {ONE_BACK}.")]
    # The form given reads Wednesday's close (+0.452%), and says nothing more.
    fixed = ask(
        {**query, "map": {"ret": f"(close / {ONE_BACK} - 1) * 100"}}, sample_settings, **RTH_DAILY
    )
    from_wednesday = (fridays["close"] / fridays["stock"] - 1).mean() * 100
    assert fixed.summary.values["ret"] == pytest.approx(from_wednesday)
    assert abs(from_wednesday - from_thursday) > 0.2
    assert warnings_with(fixed, KEPT) == []


def test_dropping_the_holidays_does_not_hide_what_prev_reads(
    sample_settings, rth, closed_at
) -> None:
    """p29c Q4: "where": "not holiday()", the natural way to write "stock-market days only",
    kept the day after each holiday session and its prev(close), the holiday's close; the
    warning was held back because the query named holiday(). The post-holiday days' median
    is +0.08% from there (ES), 0.000% from the last stock-market close."""
    query = {
        "map": {"ret": RET},
        "where": "not holiday()",
        "group_by": "post_holiday()",
        "select": ["count() as days", "median(ret) as ret"],
    }
    result = ask(query, sample_settings, **RTH_DAILY)
    stock = rth[~rth["holiday"]]
    after = stock[stock["after"]]
    assert int(result.table["days"].sum()) == len(stock)
    # Sandy's second day (2012-10-30) is itself dropped: 2012-10-31 steps back twice.
    assert "2012-10-31" in after.index and len(after) == int(rth["after"].sum()) - 1
    example = "e.g. " + _after(rth, after.index[0], closed_at)
    assert warnings_with(result, KEPT) == [
        _text(len(after), len(stock), example, f"From that close: {TWO_BACK}.")
    ]
    fixed = ask(
        {**query, "map": {"ret": f"(close / {TWO_BACK} - 1) * 100"}}, sample_settings, **RTH_DAILY
    )
    table = fixed.table.set_index("post_holiday")
    from_stock = ((after["close"] / after["stock"] - 1) * 100).median()
    assert table.loc[True, "ret"] == pytest.approx(from_stock)
    assert warnings_with(fixed, KEPT) == []


@pytest.mark.parametrize(
    ("query", "said"),
    [
        # p29f M2: the 0.5% histogram's tail buckets hold a notable share of days after a
        # holiday (measured from its short session's close): said.
        ({"map": {"ret": RET, "b": "floor(ret, 0.5)"}, "group_by": "b", "select": "count()"}, 1),
        # Over every day they are 2.5% of the rows, a day or two of a bucket: not under
        # every daily-return answer.
        ({"map": {"ret": RET, "b": "floor(ret, 1)"}, "group_by": "b", "select": "count()"}, 0),
        ({"map": {"ret": RET}, "select": ["percentile(ret, 5)", "median(ret)"]}, 0),
        ({"map": {"ret": RET}, "select": "mean(ret)"}, 0),
        ({"map": {"ret": RET, "wd": "dayname()"}, "group_by": "wd", "select": "mean(ret)"}, 0),
        ({"map": {"gap": "open - prev(close)"}, "select": "mean(gap)"}, 0),
    ],
)
def test_over_every_day_a_notable_share_is_said(
    sample_settings, rth, closed_at, query, said
) -> None:
    """Over every day the holiday sessions are rows too: where the days after them are a
    notable share of a group, the stock market's days are those without them, and their day
    after from the last stock-market close."""
    result = ask(query, sample_settings, **RTH_DAILY)
    after = rth.index[rth["after"]]
    # 116 before p41b: the days of mourning (2018-12-05, 2025-01-09) closed at 09:30 and are
    # no RTH rows now, so the days after them read the last stock-market close already.
    assert len(after) == 114
    example = "e.g. " + _after(rth, after[0], closed_at)
    expected = [_text(len(after), len(rth), example, _stock_days(TWO_BACK))]
    assert warnings_with(result, KEPT) == expected[:said]


def test_the_forms_read_the_last_stock_close_on_every_day_after_a_closure(
    sample_settings, rth, closed_at
) -> None:
    """Every post_holiday() day: after a holiday session the form steps back to the last
    stock-market close; after Good Friday, Christmas or New Year (no RTH bar) prev(close)
    already is it. The one-step form misses only 2012-10-31, after Sandy's second day."""
    settings = EngineSettings(data_dir=sample_settings.data_dir, max_table_rows=10_000)
    result = ask(
        {
            "map": {"one": ONE_BACK, "two": TWO_BACK, "pc": "prev(close)"},
            "where": "post_holiday()",
            "select": ["date()", "one", "two", "pc"],
            "limit": 10_000,
        },
        settings,
        **RTH_DAILY,
    )
    got = result.table.set_index(pd.to_datetime(result.table["date"]))
    expected = rth.loc[got.index]
    assert (~expected["after"]).sum() > 40  # days after a closure without an RTH bar
    assert np.allclose(got["two"], expected["stock"], equal_nan=True)
    assert np.allclose(got["pc"], expected["prev"], equal_nan=True)
    missed = got.index[~np.isclose(got["one"], expected["stock"], equal_nan=True)]
    assert [f"{d:%Y-%m-%d}" for d in missed] == ["2012-10-31"]
    # The query reads prev(holiday()): it steps back over them itself.
    assert warnings_with(result, KEPT) == []
    sandy = ask(
        {"period": "2012-10-31", "map": {"gap": "open - prev(close)"}}, settings, **RTH_DAILY
    )
    assert warnings_with(sandy, KEPT) == [
        _text(
            1,
            1,
            _after(rth, pd.Timestamp("2012-10-31"), closed_at),
            f"From that close: {TWO_BACK}.",
        )
    ]


def test_a_group_of_days_after_holidays_is_said(sample_settings, rth) -> None:
    result = ask(
        {"map": {"ret": RET}, "group_by": "post_holiday()", "select": "mean(ret)"},
        sample_settings,
        **RTH_DAILY,
    )
    assert warnings_with(result, KEPT)[0].startswith(
        f"{int(rth['after'].sum())} of the {len(rth):,} rows kept follow a US holiday session"
    )


def test_the_monday_after_easter_on_eth_names_good_fridays_morning(
    sample_settings, eth, closed_at
) -> None:
    """p29c Q22: on ETH, Good Friday trades to 09:15 in the years payrolls came out that
    day (7 of 18); the Monday after it then reads that close, the other years Thursday's.
    A query about holidays that leaves Good Friday's row out says so, with the form that
    reads Thursday's close."""
    query = {
        "session": "ETH",
        "map": {"ret": RET, "day": "if(pre_holiday(), 'Thu before', 'Mon after')"},
        "where": "month() in (3, 4) and (pre_holiday() or post_holiday())",
        "group_by": "day",
        "select": ["count() as days", "mean(ret) as ret"],
    }
    result = ask(query, sample_settings, **RTH_DAILY)
    mondays = eth[(eth.index.month.isin([3, 4])) & (eth.index.dayofweek == 0)]
    mondays = mondays[~mondays.index.isin(eth.index[eth["holiday"]]) & ~mondays["prev"].isna()]
    # Mondays whose previous weekday the NYSE shut: after Good Friday, with or without a row.
    friday = mondays.index - pd.Timedelta(days=3)
    import pandas_market_calendars as mcal

    nyse = mcal.get_calendar("NYSE").valid_days("2008-01-01", "2026-12-31").tz_localize(None)
    mondays = mondays[~friday.isin(nyse)]
    table = result.table.set_index("day")
    assert table.loc["Mon after", "days"] == len(mondays) == 18
    from_prev = ((mondays["close"] / mondays["prev"] - 1) * 100).mean()
    from_thursday = ((mondays["close"] / mondays["stock"] - 1) * 100).mean()
    assert table.loc["Mon after", "ret"] == pytest.approx(from_prev)
    after = mondays[mondays["after"]]
    assert len(after) == 7 and set(closed_at[after.index - pd.Timedelta(days=3)]) == {"09:15"}
    form = "if(prev(holiday()), session_close('ETH', 2), prev(close))"
    example = "e.g. " + _after(eth, after.index[0], closed_at)
    assert warnings_with(result, KEPT) == [_text(7, 36, example, f"From that close: {form}.")]
    fixed = ask(
        {**query, "map": {**query["map"], "ret": f"(close / {form} - 1) * 100"}},
        sample_settings,
        **RTH_DAILY,
    )
    assert fixed.table.set_index("day").loc["Mon after", "ret"] == pytest.approx(from_thursday)
    assert from_thursday - from_prev > 0.1
    assert warnings_with(fixed, KEPT) == []


@pytest.mark.parametrize(
    "query",
    [
        # No prev(close) read.
        {"map": {"body": "close - open"}, "where": "post_holiday()", "select": "mean(body)"},
        # The stock-market days, from the last stock-market close (turn_of_the_month's form).
        {
            "map": {"ret": f"(close / {TWO_BACK} - 1) * 100"},
            "where": "not holiday()",
            "select": "mean(ret)",
        },
        # On ETH a holiday's session is one of the Globex days, and the next starts where it
        # stopped: every day, or every Tuesday, holds nothing to say.
        {"session": "ETH", "map": {"ret": RET}, "select": "mean(ret)"},
        {
            "session": "ETH",
            "map": {"ret": RET},
            "where": "dayname() == 'Tue'",
            "select": "mean(ret)",
        },
        # Its holidays kept beside the days after them.
        {
            "session": "ETH",
            "map": {"ret": RET},
            "where": "holiday() or post_holiday()",
            "select": "mean(ret)",
        },
    ],
)
def test_ordinary_questions_say_nothing(sample_settings, query) -> None:
    assert warnings_with(ask(query, sample_settings, **RTH_DAILY), KEPT) == []


@pytest.mark.parametrize(
    ("year", "order", "limit", "select"),
    [
        (2024, "desc", 20, None),
        (2023, "asc", 20, None),
        # 30 and 40 rows of one value are read whole too (Summary.whole): each such day named.
        (2024, "desc", 30, None),
        (2024, "desc", 40, "ret"),
        (2024, "desc", 70, None),
    ],
)
def test_a_day_after_a_holiday_among_the_rows_listed_is_named(
    year: int, order: str, limit: int, select: str | None, sample_settings, rth, closed_at
) -> None:
    """ "The 20 best days of 2024" held the day after Labor Day, measured from Monday's 13:00
    close. A ranking or list the model reads whole (``Summary.whole``) names every such row;
    a longer one gives one of them."""
    days = rth.loc[str(year)]
    ranked = (days["close"] / days["prev"] - 1).sort_values(ascending=order == "asc")
    listed = days.loc[ranked.index[:limit]].sort_index()
    after = listed.index[listed["after"]]
    assert len(after) >= 1 and len(after) / limit < 0.1  # once under the share rule
    query = {"period": str(year), "map": {"ret": RET}, "sort": f"ret {order}", "limit": limit}
    if select:
        query["select"] = select
    result = ask(query, sample_settings, **RTH_DAILY)
    assert sorted(result.table["date"].astype(str)) == [f"{d:%Y-%m-%d}" for d in listed.index]
    named = [_after(rth, d, closed_at) for d in after]
    assert result.summary.whole == (limit <= 60)
    if not result.summary.whole:  # not read whole, and under the share: nothing to name
        assert warnings_with(result, KEPT) == []
        return
    # Read whole: each named.
    # Holiday sessions listed too: the stock market's days are the others.
    fix = _stock_days(ONE_BACK) if listed["holiday"].any() else f"From that close: {ONE_BACK}."
    assert warnings_with(result, KEPT) == [_text(len(after), limit, "; ".join(named), fix)]


def test_the_stock_markets_first_day_of_the_month_is_said_whatever_its_share(
    sample_settings, rth, closed_at
) -> None:
    """trading_day('month', 'stocks') asks about the stock market's days: its day after
    Labor Day or Memorial Day reads the holiday's short session as prev(close), though those
    are 10 of 217 rows, under the share said over every day (p48c Q7)."""
    stock = rth[~rth["holiday"]]
    first = stock.groupby(stock.index.to_period("M")).head(1)
    after = first.index[first["after"]]
    assert len(first) == 217 and len(after) == 10  # 4.6%: under NOTABLE_SHARE
    query = {
        "map": {"ret": RET},
        "where": "trading_day('month', 'stocks') == 1",
        "select": ["count() as days", "mean(ret)"],
    }
    result = ask(query, sample_settings, **RTH_DAILY)
    assert result.summary.values["days"] == len(first)
    example = "e.g. " + _after(rth, after[0], closed_at)
    assert warnings_with(result, KEPT) == [
        _text(len(after), len(first), example, f"From that close: {ONE_BACK}.")
    ]
    # The exchange's own first days (holiday sessions among them) are asked as every day is.
    exchange = ask({**query, "where": "trading_day('month') == 1"}, sample_settings, **RTH_DAILY)
    assert warnings_with(exchange, KEPT) == []


@pytest.mark.parametrize(
    "pnl", ["prev(pos) * (close - prev(close))", "-prev(pos) * (close - prev(close))"]
)
def test_a_position_marked_through_a_holiday_is_not_told_to_drop_it(
    pnl: str, engine_settings, minutes
) -> None:
    """A position held through Presidents' Day (the fixture's 2024-02-19 trades in full) is
    marked at that session's close, a real price: the marks chain to the position's move
    from the first close to the last, which not holiday() would break (p48j q16: -7,830.5
    became -7,788.5 with nothing said). A day's change from prev(close) is still told."""
    from rth_bars import rth_daily

    close = rth_daily(minutes)["close"].loc["2024-02-13":"2024-02-23"]
    assert pd.Timestamp("2024-02-19") in close.index  # the holiday session is a row
    query = {
        "period": "2024-02-14:2024-02-23",
        "map": {"pos": "if(close > 0, 1, 0)", "pnl": pnl},
        "select": ["date()", "pnl"],
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    sign = -1 if pnl.startswith("-") else 1
    assert result.table["pnl"].sum() == pytest.approx(sign * (close.iloc[-1] - close.iloc[0]))
    assert warnings_with(result, KEPT) == []
    query["map"]["pnl"] = "close - prev(close)"  # a day's own move: from the holiday's close
    assert len(warnings_with(ask(query, engine_settings, **RTH_DAILY), KEPT)) == 1


@pytest.fixture(scope="module")
def es_cash(sample_settings) -> pd.DataFrame:
    """ES's CASH days (09:30-16:00) of 2023-2024 (see _closes)."""
    from barb.data.store import data_path

    bars = pd.read_parquet(
        data_path("ES", sample_settings), columns=["trading_date", "minute", "close"]
    )
    bars = bars[(bars["trading_date"] >= "2023-01-01") & (bars["trading_date"] <= "2024-12-31")]
    return _closes(bars[(bars["minute"] >= RTH_START) & (bars["minute"] < 960)])


# Words of the warning that gives the figure over the stock market's days only.
STOCK_DAYS = "Over the stock market's days only"


def test_cash_returns_over_a_year_give_the_stock_market_days_figure(
    sample_settings, es_cash
) -> None:
    """ "ES cash close-to-close returns in 2024, their std": 7 of the 259 rows are the
    futures' short holiday sessions, too few (2.7 %) for the day-after note, yet the std over
    the 252 stock-market days, each from the last stock close, is another number; a sum that
    the split days do not move says nothing."""
    days = es_cash.loc["2024"]
    own = days["close"] / days["prev"] - 1
    stock = (days["close"] / days["stock"] - 1)[~days["holiday"]]
    assert (len(own), len(stock)) == (259, 252)
    query = {"session": "CASH", "from": "daily", "period": "2024", "map": {"ret": RET}}
    result = ask({**query, "select": "std(ret)"}, sample_settings, "ES")
    assert result.summary.value == pytest.approx(own.std() * 100, rel=1e-3)
    (said,) = warnings_with(result, STOCK_DAYS)
    assert said.startswith("7 of the 259 rows kept are US holiday sessions")
    assert f"std_ret is {stock.std() * 100:.4g} (not {own.std() * 100:.4g})" in said
    counted = ask({**query, "select": "count()"}, sample_settings, "ES")
    assert "count is 252 (not 259)" in warnings_with(counted, STOCK_DAYS)[0]
    assert own.sum() == pytest.approx(stock.sum(), rel=1e-3)  # the split days add up
    assert (
        warnings_with(ask({**query, "select": "sum(ret)"}, sample_settings, "ES"), STOCK_DAYS) == []
    )
    # A mean of signed returns is weighed against a day's move, as weekday returns are: it
    # moves 2.8 % of itself, a fraction of a percent of the mean absolute return.
    assert abs(stock.mean() - own.mean()) < 0.05 * own.abs().mean()
    mean = ask({**query, "select": "mean(ret)"}, sample_settings, "ES")
    assert warnings_with(mean, STOCK_DAYS) == []
    # By year: the years it moves are named (2023 holds holiday rows too, its std moves 0.02 %).
    both = es_cash.loc["2023":"2024"]
    yearly = ask(
        {**query, "period": "2023:2024", "group_by": "year()", "select": "std(ret)"},
        sample_settings,
        "ES",
    )
    (by_year,) = warnings_with(yearly, STOCK_DAYS)
    stock_2023 = (both["close"] / both["stock"] - 1)[~both["holiday"]].loc["2023"]
    own_2023 = (both["close"] / both["prev"] - 1).loc["2023"]
    assert stock_2023.std() == pytest.approx(own_2023.std(), rel=1e-3)
    assert f"std_ret is {stock.std() * 100:.4g} (not {own.std() * 100:.4g}) in year 2024" in by_year
    assert "in year 2023" not in by_year
    # Asked of the stock market's days already, or of the futures' whole day: nothing to say.
    for other in ({"where": "not holiday()"}, {"session": "ETH"}):
        asked = ask({**query, **other, "select": "std(ret)"}, sample_settings, "ES")
        assert warnings_with(asked, STOCK_DAYS) == []


def test_a_then_stage_over_cash_returns_gives_the_stock_market_days_figure(
    sample_settings, es_cash
) -> None:
    """The same returns read through a then stage said nothing: "ES's average daily
    volatility per month in 2023-2024, by year" (monthly std of cash returns, then their
    mean by year) and "days per month" (count() by month, then their mean: 21.58 with the
    holiday sessions, 21.0 over the stock market's days). The figure over the stock
    market's days is pandas' over the raw bars, each return from the last stock close."""
    own = es_cash["close"] / es_cash["prev"] - 1
    stock = (es_cash["close"] / es_cash["stock"] - 1)[~es_cash["holiday"]]
    query = {"session": "CASH", "from": "daily", "period": "2023:2024", "map": {"ret": RET}}
    monthly = {
        **query,
        "group_by": ["year()", "month()"],
        "select": ["std(ret) as sd", "count() as n"],
        "then": {"group_by": "year", "select": ["mean(sd) as avg_sd", "mean(n) as days"]},
    }
    result = ask(monthly, sample_settings, "ES")

    def by_year(returns: pd.Series, how: str) -> pd.Series:
        index = returns.index
        return returns.groupby([index.year, index.month]).agg(how).groupby(level=0).mean()

    assert result.table["avg_sd"].tolist() == pytest.approx(
        (by_year(own, "std") * 100).tolist(), rel=1e-3
    )
    (said,) = warnings_with(result, STOCK_DAYS)
    days_2024 = by_year(stock, "count").loc[2024]
    assert days_2024 == 21.0
    assert f"days is 21 (not {by_year(own, 'count').loc[2024]:.4g}) in year 2024" in said
    assert (
        f"avg_sd is {by_year(stock, 'std').loc[2024] * 100:.4g} "
        f"(not {by_year(own, 'std').loc[2024] * 100:.4g}) in year 2024"
    ) in said
    # The rows of returns listed, then one std over them: as the flat query says it.
    listed = {**query, "period": "2024", "select": ["date()", "ret"]}
    flat = ask({**listed, "then": {"select": "std(ret) as sd"}}, sample_settings, "ES")
    days = es_cash.loc["2024"]
    stock_2024 = (days["close"] / days["stock"] - 1)[~days["holiday"]]
    (said,) = warnings_with(flat, STOCK_DAYS)
    assert f"sd is {stock_2024.std() * 100:.4g}" in said
    # Said by the then stage's where already (not holiday()): nothing more.
    asked = {**listed, "then": {"where": "ret > -100", "select": "std(ret) as sd"}}
    asked["where"] = "not holiday()"
    assert warnings_with(ask(asked, sample_settings, "ES"), STOCK_DAYS) == []


def test_cash_returns_by_event_day_give_the_stock_market_days_figure(
    sample_settings, es_cash
) -> None:
    """ "ES cash moves on CPI days vs other days" joins the CPI releases: its other days
    held the futures' 14 holiday sessions of 2023-2024 with no word, counted as days the
    stock market did not trade. The release dates are read from the events file, the returns by
    pandas over the raw bars."""
    from barb.events.data_files import DATA_DIR

    releases = pd.read_csv(DATA_DIR / "cpi.csv", comment="#", parse_dates=["date"])["date"]
    own = (es_cash["close"] / es_cash["prev"] - 1).abs() * 100
    stock = ((es_cash["close"] / es_cash["stock"] - 1).abs() * 100)[~es_cash["holiday"]]
    query = {
        "session": "CASH",
        "from": "daily",
        "period": "2023:2024",
        "join": "cpi",
        "map": {"move": "abs(close / prev(close) - 1) * 100"},
        "group_by": "cpi",
        "select": ["mean(move) as avg_move", "count() as n"],
    }
    result = ask(query, sample_settings, "ES")
    other = ~own.index.isin(releases)
    assert result.table["n"].tolist() == [int(other.sum()), int((~other).sum())]
    assert result.table["avg_move"].iloc[0] == pytest.approx(own[other].mean(), rel=1e-3)
    (said,) = warnings_with(result, STOCK_DAYS)
    calm = ~stock.index.isin(releases)
    assert f"n is {int(calm.sum())} (not {int(other.sum())}) in cpi false" in said
    # The mean move changes by less than 1 % of itself: not said.
    assert abs(stock[calm].mean() / own[other].mean() - 1) < 0.01
    assert "avg_move" not in said


def test_a_joined_stock_index_close_gives_the_stock_market_days_figure(
    sample_settings, es_cash
) -> None:
    """ "Std of NQ's and ES's cash returns in 2024" (NQ with ES joined, ES's return from
    prev(es_close)) said nothing, where ES asked alone says 0.01081 over the 252 stock-market
    days against the 0.01065 shown: the join keeps the 7 holiday sessions as rows for ES too.
    The warning names the closes read, and gives no session_close() form, which reads NQ's."""
    days = es_cash.loc["2024"]
    own = days["close"] / days["prev"] - 1
    stock = (days["close"] / days["stock"] - 1)[~days["holiday"]]
    query = {
        "session": "CASH",
        "from": "daily",
        "period": "2024",
        "join": {"instrument": "ES"},
        "map": {"nq": "close / prev(close) - 1", "es": "es_close / prev(es_close) - 1"},
        "select": ["std(nq)", "std(es)"],
    }
    result = ask(query, sample_settings, "NQ")
    assert result.summary.values["std_es"] == pytest.approx(own.std(), rel=1e-3)
    (said,) = warnings_with(result, STOCK_DAYS)
    assert said.startswith("7 of the 259 rows kept are US holiday sessions")
    assert "prev(close) and prev(es_close) on the day after read the holiday's close" in said
    assert f"std_es is {stock.std():.4g} (not {own.std():.4g})" in said
    assert "session_close" not in said


def test_weekly_cash_returns_get_one_holiday_warning_with_the_figure(
    sample_settings, es_cash
) -> None:
    """ "ES's weekly return std and days per week in 2024": the week() key and count() made
    holiday_caveat ("7 of the rows are US holiday sessions") and the day-after note ("7 of
    the 259 rows kept follow a US holiday session") both speak of the same 7 sessions, with no
    number, and kept the figure over the stock market's days back. One warning now: which
    rows, the numbers they move (days per week, pandas over the raw bars: 252 stock-market
    days in 53 weeks) and the form that leaves them out."""
    days = es_cash.loc["2024"]
    week = days.index.to_period("W")
    own = (days["close"] / days["prev"] - 1).groupby(week).agg(["sum", "count"])
    stock_days = days[~days["holiday"]]
    stock = (stock_days["close"] / stock_days["stock"] - 1).groupby(week[~days["holiday"]])
    stock = stock.agg(["sum", "count"])
    query = {
        "session": "CASH",
        "period": "2024",
        "map": {"r": "close/prev(close)-1"},
        "group_by": "week()",
        "select": ["sum(r) as wr", "count() as n"],
        "then": {"select": ["std(wr)", "mean(n)"]},
    }
    result = ask(query, sample_settings, "ES")
    assert result.summary.values["mean_n"] == pytest.approx(own["count"].mean())
    assert result.summary.values["std_wr"] == pytest.approx(own["sum"].std(), rel=1e-3)
    holidays = [w for w in result.metadata.warnings if "holiday session" in w]
    assert len(holidays) == 1, holidays
    (said,) = holidays
    assert said.startswith("7 of the 259 rows kept are US holiday sessions"), said
    assert f"mean_n is {stock['count'].mean():.4g} (not {own['count'].mean():.4g})" in said
    # The std of weekly sums moves less than 1 %: the split days add up within a week.
    assert abs(stock["sum"].std() / own["sum"].std() - 1) < 0.01
    assert "std_wr is" not in said
    assert '"where": "not holiday()"' in said


def test_prev_of_a_spread_made_from_closes_gives_the_stock_market_days_figure(
    sample_settings, es_cash
) -> None:
    """ "Day-to-day change of the NQ - 4 ES cash spread in 2024": spr = close - 4 * es_close,
    d = spr - prev(spr) reads the holiday sessions' closes as prev(close) does, yet said
    nothing (the check knew prev(close) and prev(es_close) only). pandas over the raw bars:
    259 changes, 252 over the stock market's days, each from the last stock-market day."""
    from barb.data.store import data_path

    bars = pd.read_parquet(
        data_path("NQ", sample_settings), columns=["trading_date", "minute", "close"]
    )
    bars = bars[(bars["trading_date"] >= "2023-01-01") & (bars["trading_date"] <= "2024-12-31")]
    nq = _closes(bars[(bars["minute"] >= RTH_START) & (bars["minute"] < 960)])
    spread = (nq["close"] - 4 * es_cash["close"]).dropna()
    own = spread.diff().loc["2024"]
    stock_days = spread[~es_cash["holiday"].reindex(spread.index)]
    stock = stock_days.diff().loc["2024"]
    query = {
        "session": "CASH",
        "from": "daily",
        "period": "2024",
        "join": {"instrument": "ES"},
        "map": {"spr": "close - 4 * es_close", "d": "spr - prev(spr)"},
        "select": ["std(d)", "count()"],
    }
    result = ask(query, sample_settings, "NQ")
    assert result.summary.values["std_d"] == pytest.approx(own.std(), rel=1e-3)
    (said,) = warnings_with(result, STOCK_DAYS)
    assert said.startswith("7 of the 259 rows kept are US holiday sessions")
    assert "prev(spr) on the day after reads the holiday's close" in said
    assert f"count is {len(stock)} (not {len(own)})" in said
    # The spread's std moves less than 1 % over the stock market's days: not said.
    assert abs(stock.std() / own.std() - 1) < 0.01 and "std_d" not in said
    # A function of the closes (a moving average) reads more rows than the last: not a
    # close-to-close read, and not said so.
    hull = {"session": "RTH", "from": "daily", "period": "2024", "map": {"hull": "hma(close, 20)"}}
    rising = ask(hull | {"where": "hull > prev(hull)", "select": "count()"}, sample_settings)
    assert warnings_with(rising, STOCK_DAYS) == []
