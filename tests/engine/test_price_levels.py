"""A size in points over years of very different prices says it blends them: "how far does
NQ move in a day" over all history was 171.66 points with no word that the last year's is
391.65 (the price went from about 1,400 to 25,700). Expected values from pandas over the
sample's minute bars, never through Barb."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import ask

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
    """ "changed 13.7x (mean close 1,372 in 2009, 18,790 in 2025)" from the yearly means of
    the whole years: the data's last year, 2026, holds 4 days."""
    yearly = daily["close"].groupby(daily.index.year).mean()
    whole = _whole_years(daily)
    if len(whole) >= 2:
        yearly = yearly[whole]
    low, high = yearly.idxmin(), yearly.idxmax()

    def named(year: int) -> str:
        if year in whole:
            return str(year)
        dates = daily.index[daily.index.year == year]
        return f"{year} ({dates[0].date()} — {dates[-1].date()} only)"

    return (
        f"changed {yearly[high] / yearly[low]:.1f}x (mean close {yearly[low]:,.0f} in "
        f"{named(low)}, {yearly[high]:,.0f} in {named(high)})"
    )


def _whole_years(daily: pd.DataFrame) -> list[int]:
    """Years the daily bars cover from their first week to their last; a year between the
    first and the last always."""
    years = sorted(set(daily.index.year))
    whole = []
    for year in years:
        dates = daily.index[daily.index.year == year]
        starts = dates[0] <= pd.Timestamp(f"{year}-01-07")
        ends = dates[-1] >= pd.Timestamp(f"{year}-12-24")
        if year not in (years[0], years[-1]) or (starts and ends):
            whole.append(year)
    return whole


def _recent(daily: pd.DataFrame) -> pd.DataFrame:
    last = daily.index[-1]
    return daily[daily.index > last - pd.Timedelta(days=365)]


def _blend_warnings(result: Result) -> list[str]:
    """The warnings that points over these rows blend price levels, or favour some."""
    return [w for w in result.metadata.warnings if "whose price level changed" in w]


def test_a_daily_range_over_all_years_gives_the_last_years_beside_it(
    sample_settings, nq_minutes
) -> None:
    daily = _daily(nq_minutes)
    recent = _recent(daily)
    result = ask(
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


def test_a_few_recent_rows_give_their_count_and_fewer_than_five_no_value(
    sample_settings, nq_minutes
) -> None:
    """p44a Q17: NQ's Fridays after Thanksgiving, 18 over all years, read "over the rows'
    last 12 months … mean_range is 309.12", the mean of 2 days said as if a year's. The last
    Friday of each November: the 12 months hold 1 or 2, and no value is said; the first
    Friday of each month: 12 or 13, said with their count."""
    daily = _daily(nq_minutes)
    fridays = daily[daily.index.dayofweek == 4]
    few = fridays[(fridays.index.month == 11) & (fridays.index.day >= 24)]
    monthly = fridays[fridays.index.day <= 7]
    asked = {"session": "ETH", "from": "daily", "select": ["count()", "mean(range)"]}
    where = "dayname() == 'Fri' and month() == 11 and day() >= 24"
    result = ask({**asked, "where": where}, sample_settings)
    recent = _recent(few)
    assert result.summary.values["count"] == len(few) and len(recent) < 5
    span = f"{recent.index[0].date()} — {recent.index[-1].date()}"
    [warned] = _blend_warnings(result)
    assert f": the rows' last 12 months ({span}) hold only {len(recent)} of them, " in warned
    assert "too few to say." in warned and warned.count("mean_range is") == 1  # the unit's
    result = ask({**asked, "where": "dayname() == 'Fri' and day() <= 7"}, sample_settings)
    recent = _recent(monthly)
    assert result.summary.values["count"] == len(monthly) and 5 <= len(recent) < 30
    span = f"{recent.index[0].date()} — {recent.index[-1].date()}, {len(recent)} rows"
    [warned] = _blend_warnings(result)
    assert f"last 12 months ({span}) mean_range is {recent['range'].mean():,.2f}." in warned


def test_groups_by_weekday_are_warned_once_with_the_last_years_spread(
    sample_settings, nq_minutes
) -> None:
    minute = nq_minutes["minute"]
    daily = _daily(nq_minutes[(minute >= RTH_START) & (minute < RTH_END)])
    recent = _recent(daily)
    by_day = recent["range"].groupby(recent.index.dayofweek).mean()
    result = ask(
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
    listed = {"select": ["range"], "sort": "timestamp desc", "limit": 5}
    ranked = {"map": {"rp": "range / open * 100"}, "sort": "rp desc", "limit": 5}
    recent = {"period": "last_1_years", "select": "mean(range)"}
    recent_ranked = {"period": "last_1_years", "sort": "range desc", "limit": 5}
    one_bar = {"select": "last(range)"}
    for query in (percent, listed, ranked, recent, recent_ranked, one_bar):
        result = ask({"session": "ETH", "from": "daily", **query}, sample_settings)
        assert _blend_warnings(result) == [], query


def test_a_partial_year_is_not_a_years_level(sample_settings, nq_minutes) -> None:
    """The data ends 2026-01-07: its 4 days of 2026 (mean close about 25,700 against 2025's
    18,800) are not named as the level's end."""
    daily = _daily(nq_minutes)
    assert (daily.index.year == 2026).sum() < 10  # the case
    result = ask({"session": "ETH", "from": "daily", "select": "mean(range)"}, sample_settings)
    [warned] = _blend_warnings(result)
    assert f"price level {_level_text(daily)}, so it blends" in warned
    assert "in 2026" not in warned and "in 2025)" in warned


def test_without_two_whole_years_the_partial_ones_say_so(sample_settings) -> None:
    """CL from 2020-04 to 2022-05: only 2021 is whole, so the levels are every year's, the
    partial ones given with the dates their rows cover."""
    columns = ["close", "trading_date"]
    minutes = pd.read_parquet(data_path("CL", sample_settings), columns=columns)
    daily = minutes.groupby("trading_date")["close"].last().to_frame()
    daily = daily[(daily.index >= "2020-04-01") & (daily.index <= "2022-05-31")]
    assert _whole_years(daily) == [2021]
    result = ask(
        {"session": "ETH", "from": "daily", "period": "2020-04:2022-05", "select": "mean(range)"},
        sample_settings,
        "CL",
    )
    [warned] = _blend_warnings(result)
    assert f"price level {_level_text(daily)}, so it blends" in warned
    assert "2020 (2020-04-01 — 2020-12-31 only)" in warned


def _cl_daily(settings, first: str, last: str) -> pd.DataFrame:
    columns = ["open", "high", "low", "close", "trading_date", "minute"]
    minutes = pd.read_parquet(data_path("CL", settings), columns=columns)
    daily = _daily(minutes)
    daily.index = pd.to_datetime(daily.index)
    return daily[(daily.index >= first) & (daily.index <= last)]


def test_a_contracts_dollars_by_year_name_dollars_one_groups_value_and_the_range_percent(
    sample_settings,
) -> None:
    """CL's range in a contract's dollars by year (p28a F2): the warning said "in points"
    (CL's moves are dollars), "runs 2,061.32–2,061.32 across the groups" of the one group in
    the last 12 months, and to use "(range * 1000) / open * 100", 1000 times the percent.
    By year, each group is one year: the years set price levels side by side (p30c Q22),
    and the last 12 months are the table's own last row."""
    daily = _cl_daily(sample_settings, "2021-01-01", "2025-12-31")
    text = (
        f"avg_usd is in dollars over years whose price level {_level_text(daily)}: each "
        "year's value grows with its price, so the years compare price levels as much as "
        "sizes. For a size comparable across years use percent (range / open * 100)."
    )
    base = {"session": "ETH", "from": "daily", "period": "2021:2025", "group_by": "year()"}
    inline = {**base, "select": "mean(range * 1000) as avg_usd"}
    mapped = {
        **base,
        "map": {"range_usd": "range * 1000", "range_pct": "range / open * 100"},
        "select": ["mean(range_usd) as avg_usd", "mean(range_pct) as avg_pct"],
    }
    for query in (inline, mapped):
        result = ask(query, sample_settings, "CL")
        assert _blend_warnings(result) == [text], query


def test_cl_points_are_named_dollars_and_es_names_each_unit(sample_settings) -> None:
    cl = _cl_daily(sample_settings, "2021-01-01", "2025-12-31")
    result = execute(
        {"session": "ETH", "from": "daily", "period": "2021:2025", "select": "mean(range)"},
        "CL",
        settings=sample_settings,
    )
    [warned] = _blend_warnings(result)
    assert warned.startswith(
        f"mean_range is in dollars over rows whose price level {_level_text(cl)}"
    )
    assert f"mean_range is {_recent(cl)['range'].mean():,.2f}." in warned

    result = execute(
        {
            "session": "ETH",
            "from": "daily",
            "map": {"range_usd": "range * 50"},
            "select": ["mean(range)", "mean(range_usd) as avg_usd"],
        },
        "ES",
        settings=sample_settings,
    )
    [warned] = _blend_warnings(result)
    assert warned.startswith("mean_range is in points and avg_usd in dollars over rows")
    assert warned.endswith("use percent (range / open * 100), or a recent period.")


def test_groups_by_year_give_the_recent_year_not_a_week(sample_settings, nq_minutes) -> None:
    """p28f F2: weekly ranges by year; the last 12 months held all of 2025's weeks and one
    of 2024's, and the warning said "runs 157.25–206.54 across the groups", 157.25 that one
    week's range. Now the year the rows hold: 2025's mean weekly range, by pandas over
    Monday-based weeks of RTH minutes, each week's year its first trading date's."""
    minute = nq_minutes["minute"]
    rth = nq_minutes[(minute >= RTH_START) & (minute < RTH_END)]
    dates = pd.DatetimeIndex(rth["trading_date"])
    week = dates - pd.to_timedelta(dates.dayofweek, unit="D")
    weeks = rth.groupby(week).agg(high=("high", "max"), low=("low", "min"))
    first_day = pd.Series(dates, index=rth.index).groupby(week).min()
    ranges = (weeks["high"] - weeks["low"])[first_day.dt.year == 2025]
    result = ask(
        {"session": "RTH", "from": "weekly", "group_by": "year()", "select": "mean(range) as pts"},
        sample_settings,
    )
    # Each group is one year: 2025's weekly range is the table's own row, not repeated in
    # the warning, which says what the years compare.
    assert result.table.set_index("year")["pts"][2025] == pytest.approx(ranges.mean())
    [warned] = _blend_warnings(result)
    assert "each year's value grows with its price" in warned
    assert "across the groups" not in warned and "last 12 months" not in warned


def _favoured(daily: pd.DataFrame, listed: pd.Index, high: bool) -> str:
    """ "high-price years: 4 of the 5 rows listed are from 2021 — 2026, … which hold 28% of
    the rows": the years of a mean close at least half the highest whole year's (at most
    twice the lowest's), every year of ``daily`` counted, and the rows ``listed`` from them."""
    yearly = daily["close"].groupby(daily.index.year).mean()
    whole = yearly[_whole_years(daily)]
    among = yearly >= whole.max() / 2 if high else yearly <= whole.min() * 2
    years = list(yearly.index[among])
    assert years == list(range(years[0], years[-1] + 1))  # one run of years, here
    count = int(pd.DatetimeIndex(listed).year.isin(years).sum())
    rows = f"all {len(listed)}" if count == len(listed) else f"{count} of the {len(listed)}"
    level = "at least half the highest" if high else "at most twice the lowest"
    return (
        f"{'high' if high else 'low'}-price years: {rows} rows listed are from {years[0]} — "
        f"{years[-1]}, the years whose mean close was {level}, which hold "
        f"{daily.index.year.isin(years).mean():.0%} of the rows"
    )


def test_the_largest_gaps_in_points_say_the_ranking_favours_the_high_price_years(
    sample_settings, nq_minutes
) -> None:
    """ "NQ's largest overnight gaps" over all history in points (p29b Q7) listed 2020-2024
    with no word, where min/max of the same column said they blend price levels. Now the
    ranking says which years its rows come from against the rows those years hold, and the
    percent to sort by, which lists pandas's largest gap in percent first."""
    minute = nq_minutes["minute"]
    daily = _daily(nq_minutes[(minute >= RTH_START) & (minute < RTH_END)])
    prev_close = daily["close"].shift()
    abs_gap = (daily["open"] - prev_close).abs()
    ranked = abs_gap.sort_values(ascending=False)
    assert ranked.iloc[4] > ranked.iloc[5]  # no tie at the limit
    top = ranked.index[:5]
    maps = {"gap": "open - prev(close)", "abs_gap": "abs(gap)"}
    query = {"session": "RTH", "from": "daily", "map": maps, "sort": "abs_gap desc", "limit": 5}
    result = ask(query, sample_settings)
    assert list(pd.to_datetime(result.table["date"])) == list(top)
    assert _blend_warnings(result) == [
        f"abs_gap is in points over rows whose price level {_level_text(daily)}, so a ranking "
        f"by it favours the {_favoured(daily, top, high=True)}. To rank sizes comparable "
        "across years, sort by a percent map column (abs_gap / prev(close) * 100)."
    ]
    percent = {**maps, "gap_pct": "abs_gap / prev(close) * 100"}
    by_percent = ask({**query, "map": percent, "sort": "gap_pct desc"}, sample_settings)
    assert pd.Timestamp(by_percent.table["date"].iloc[0]) == (abs_gap / prev_close).idxmax()
    assert _blend_warnings(by_percent) == []


def test_the_quietest_days_in_points_say_the_ranking_favours_the_low_price_years(
    sample_settings,
) -> None:
    """The smallest ranges come from the low prices: ES's 5 quietest RTH days since 2008
    are all of 2013, when ES was near 1,600 (5,465 in 2025)."""
    columns = ["open", "high", "low", "close", "trading_date", "minute"]
    minutes = pd.read_parquet(data_path("ES", sample_settings), columns=columns)
    minute = minutes["minute"]
    daily = _daily(minutes[(minute >= RTH_START) & (minute < RTH_END)])
    ranges = daily["range"].sort_values(kind="stable")
    top = ranges.index[:5]
    result = ask(
        {"session": "RTH", "from": "daily", "sort": "range asc", "limit": 5, "select": "range"},
        sample_settings,
        "ES",
    )
    assert list(pd.to_datetime(result.table["date"])) == list(top)
    [warned] = _blend_warnings(result)
    assert warned == (
        f"range is in points over rows whose price level {_level_text(daily)}, so a ranking "
        f"by it favours the {_favoured(daily, top, high=False)}. To rank sizes comparable "
        "across years, sort by a percent map column (range / open * 100)."
    )


def test_a_drawdown_in_dollars_gives_the_drawdown_in_percent(sample_settings, nq_minutes) -> None:
    """ "The largest drawdown from the all-time high, in % and $" (p29b Q19): the dollar
    drawdown's warning said to use "(close - peak) / open * 100", no drawdown. Now the
    drawdown from the peak in percent, the form whose minimum is pandas's; a drawdown that
    is a ratio already is not warned."""
    minute = nq_minutes["minute"]
    close = _daily(nq_minutes[(minute >= RTH_START) & (minute < RTH_END)])["close"]
    drawdown = (close / close.cummax() - 1) * 100
    base = {"session": "RTH", "from": "daily"}
    result = ask(
        {
            **base,
            "map": {
                "peak": "cummax(close)",
                "dd_usd": "(close - peak) * 20",
                "dd_pct": "(close / peak - 1) * 100",
            },
            "select": ["min(dd_usd)", "min(dd_pct)"],
        },
        sample_settings,
    )
    [warned] = _blend_warnings(result)
    assert warned.startswith("min_dd_usd is in dollars over rows")
    assert warned.endswith("use percent ((close / peak - 1) * 100), or a recent period.")
    assert result.summary.values["min_dd_pct"] == pytest.approx(drawdown.min())

    inline = ask({**base, "select": "min(close - cummax(close)) as dd"}, sample_settings)
    assert _blend_warnings(inline)[0].endswith(
        "use percent ((close / cummax(close) - 1) * 100), or a recent period."
    )
    assert inline.summary.value == pytest.approx((close - close.cummax()).min())

    ratio = ask({**base, "select": "min(close / cummax(close) - 1) as dd"}, sample_settings)
    assert ratio.summary.value == pytest.approx(drawdown.min() / 100)
    assert _blend_warnings(ratio) == []


def _rth_daily(nq_minutes: pd.DataFrame) -> pd.DataFrame:
    minute = nq_minutes["minute"]
    daily = _daily(nq_minutes[(minute >= RTH_START) & (minute < RTH_END)])
    daily.index = pd.to_datetime(daily.index)
    return daily


def _advised(warning: str) -> str:
    """The percent form a blend warning advises: "… use percent (pnl / close * 100), …"."""
    _, _, rest = warning.partition("use percent (")
    assert rest, warning
    return rest.removesuffix("), or a recent period.")


@pytest.mark.parametrize(
    ("pnl", "percent"),
    [
        # Long at the close, out at the next close (p32e Q5): the warning advised
        # pnl / next(close) * 100, the exit price, -0.0806% for -0.0459%.
        ("next(close) - close", "pnl / close * 100"),
        ("next(open) - close", "pnl / close * 100"),  # overnight, in at the close
        ("close - next(close)", "pnl / close * 100"),  # a short: in at the close too
        ("next(close) - next(open)", "pnl / next(open) * 100"),  # the next day's session
    ],
)
def test_a_trades_percent_form_is_its_return_on_the_entry(
    sample_settings, nq_minutes, pnl: str, percent: str
) -> None:
    """Buying after 3 or more down closes: the advised form, run, gives pandas's mean
    return on the entry price, not on the exit."""
    daily = _rth_daily(nq_minutes)
    close, after = daily["close"], daily.shift(-1)
    down = close < close.shift()
    streak = down.groupby((~down).cumsum()).cumsum()
    trades = {  # the points, the entry price, the exit price
        "next(close) - close": (after["close"] - close, close, after["close"]),
        "next(open) - close": (after["open"] - close, close, after["open"]),
        "close - next(close)": (close - after["close"], close, after["close"]),
        "next(close) - next(open)": (
            after["close"] - after["open"],
            after["open"],
            after["close"],
        ),
    }
    points, entry, exit_price = trades[pnl]
    picked = streak >= 3
    expected = (points / entry * 100)[picked].mean()
    assert (points / exit_price * 100)[picked].mean() != pytest.approx(expected)  # the case
    base = {
        "session": "RTH",
        "from": "daily",
        "map": {"dn": "close < prev(close)", "s": "streak(dn)", "pnl": pnl},
        "where": "s >= 3",
    }
    result = ask({**base, "select": ["count()", "mean(pnl)"]}, sample_settings)
    assert result.summary.values["count"] == picked.sum()
    [warned] = _blend_warnings(result)
    assert _advised(warned) == percent
    advised = ask({**base, "select": f"mean({percent}) as pct"}, sample_settings)
    assert advised.summary.value == pytest.approx(expected)
    assert _blend_warnings(advised) == []


def test_an_equity_curve_in_a_then_stage_says_it_blends_price_levels(
    sample_settings, nq_minutes
) -> None:
    """The Mondays' open-to-close equity in points since 2008 (p32e Q26) had no word, where
    sum(pnl) over the same rows said it blends price levels. Now the running total says so,
    with what the last 12 months added (pandas's sum of their pnl), and its percent form
    runs to pandas's sum of percents with no warning."""
    daily = _rth_daily(nq_minutes)
    mondays = daily[daily.index.dayofweek == 0]
    pnl = mondays["close"] - mondays["open"]
    recent = _recent(mondays)
    added = pnl[recent.index].sum()
    first_stage = {
        "session": "RTH",
        "from": "daily",
        "map": {"pnl": "close - open"},
        "where": "dayname() == 'Mon'",
    }
    result = ask(
        {**first_stage, "select": ["date()", "pnl"], "then": {"map": {"equity": "cumsum(pnl)"}}},
        sample_settings,
    )
    assert result.table["equity"].iloc[-1] == pytest.approx(pnl.sum())
    assert _blend_warnings(result) == [
        f"equity is a running total in points over rows whose price level "
        f"{_level_text(mondays)}, so its rises and falls in different years compare price "
        f"levels as much as results: the rows' last 12 months ({recent.index[0].date()} — "
        f"{recent.index[-1].date()}) add {added:+,.2f} to it. For a curve comparable across "
        "years select pnl / open * 100 as pnl_pct in the first stage and use cumsum(pnl_pct)."
    ]
    in_percent = ask(
        {
            **first_stage,
            "select": ["date()", "pnl / open * 100 as pnl_pct"],
            "then": {"map": {"equity": "cumsum(pnl_pct)"}},
        },
        sample_settings,
    )
    assert in_percent.table["equity"].iloc[-1] == pytest.approx((pnl / mondays["open"]).sum() * 100)
    assert _blend_warnings(in_percent) == []
    # The first stage's own running total over every day is said alike; a where's rows are
    # not the rows its running total ran over (another warning says so), a then where's
    # rows are not all of them: neither is said to add what the last 12 months did.
    every_day = {"session": "RTH", "from": "daily", "map": {"pnl": "close - open"}}
    listed = ask(
        {**every_day, "map": {"pnl": "close - open", "equity": "cumsum(pnl)"}}, sample_settings
    )
    [warned] = _blend_warnings(listed)
    assert warned.endswith("use percent (cumsum(pnl / open * 100)).")
    assert f"add {_recent(daily)['close'].sub(_recent(daily)['open']).sum():+,.2f}" in warned
    picked = ask(
        {
            **first_stage,
            "select": ["date()", "pnl"],
            "then": {"where": "pnl > 0", "map": {"equity": "cumsum(pnl)"}},
        },
        sample_settings,
    )
    assert _blend_warnings(picked) == []


# --- ranks and counts by a threshold in points (p33d M1) -----------------------------------


def _far_year(daily: pd.DataFrame, price: float) -> tuple[str, float]:
    """The whole year whose mean close is furthest from ``price`` (by ratio), and that mean."""
    yearly = daily["close"].groupby(daily.index.year).mean()[_whole_years(daily)]
    year = (yearly / price).map(lambda r: abs(np.log(r))).idxmax()
    return str(year), float(yearly[year])


def test_todays_rank_in_points_over_all_years_gives_its_rank_in_percent(
    sample_settings, nq_minutes
) -> None:
    """ "How unusual is today's range" (p33d Q1): rank(range) put 2026-01-07 at the 87.12th
    percentile of all RTH days with no word, while relative to the price it is a quiet day
    (32.31). Now the rank says so with pandas's rank in percent beside it; the advised form
    gives that rank with no warning. Over the last year no years' levels differ, but the
    close ran 1.6x within it (p35d #22b): the rank says that run and its rank in percent
    (21.43, not 59.52). Within each year (2026's 4 days) nothing is said."""
    daily = _rth_daily(nq_minutes)
    points = (daily["range"] <= daily["range"].iloc[-1]).mean() * 100
    pct = daily["range"] / daily["open"]
    percent = (pct <= pct.iloc[-1]).mean() * 100
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"rk": "rank(range)"},
        "sort": "timestamp desc",
        "limit": 1,
        "select": ["range", "rk"],
    }
    result = ask(query, sample_settings)
    assert result.table["rk"].iloc[0] == pytest.approx(points)
    assert round(points, 2) != round(percent, 2)  # the case
    assert _blend_warnings(result) == [
        f"rk ranks range in points among rows whose price level {_level_text(daily)}, so it "
        f"ranks sizes at different prices as one. In percent (rank(range / open * 100)) "
        f"{daily.index[-1].date()} ranks {percent:.2f}, not {points:.2f}."
    ]
    advised = ask({**query, "map": {"rk": "rank(range / open * 100)"}}, sample_settings)
    assert advised.table["rk"].iloc[0] == pytest.approx(percent)
    assert _blend_warnings(advised) == []
    year = ask({**query, "period": "last_1_years"}, sample_settings)
    assert _blend_warnings(year) == []
    recent = _recent(daily)
    low, high = recent["close"].idxmin(), recent["close"].idxmax()
    first, then = sorted([low, high])
    moved = (
        f"ran from {recent['close'][first]:,.0f} on {first.date()} to "
        f"{recent['close'][then]:,.0f} on {then.date()} "
        f"({recent['close'].max() / recent['close'].min():.1f}x)"
    )
    points = (recent["range"] <= recent["range"].iloc[-1]).mean() * 100
    pct = recent["range"] / recent["open"]
    percent = (pct <= pct.iloc[-1]).mean() * 100
    assert [w for w in year.metadata.warnings if "rk ranks range" in w] == [
        f"rk ranks range in points among rows whose price level {moved}, so it ranks sizes "
        f"at different prices as one. In percent (rank(range / open * 100)) "
        f"{daily.index[-1].date()} ranks {percent:.2f}, not {points:.2f}."
    ]
    per_year = ask({**query, "map": {"rk": "rank(range, 'year')"}}, sample_settings)
    assert not [w for w in per_year.metadata.warnings if "rk ranks range" in w]


def test_a_count_of_days_that_fell_more_than_today_gives_the_count_in_percent(
    sample_settings, nq_minutes
) -> None:
    """ "How many days fell more than today" (p33d Q4b): today's 128.75 points as a
    threshold counted 459 RTH days with no word, most of them of the last years; today's
    fall is 0.50% of the close before, and pandas counts the days that fell more than that
    in percent. The where form, the then form comparing with last(chg) and a then where
    with the number say that count; the where advised gives it with no warning."""
    daily = _rth_daily(nq_minutes)
    prev = daily["close"].shift()
    chg = daily["close"] - prev
    pct = chg / prev * 100
    assert chg.iloc[-1] == -128.75  # today's fall, the case
    points, percent = int((chg < -128.75).sum()), int((pct < pct.iloc[-1]).sum())
    base = float(prev.iloc[-1])
    year, level = _far_year(daily, base)
    said = (
        f"chg < -128.75 is a comparison in points over rows whose price level "
        f"{_level_text(daily)}: -128.75 points is {-128.75 / base * 100:.2f}% of the price on "
        f"{daily.index[-1].date()} ({base:,.2f}) but {-128.75 / level * 100:.2f}% of {year}'s "
        f"mean close ({level:,.0f})."
    )
    first_stage = {"session": "RTH", "from": "daily", "map": {"chg": "close - prev(close)"}}
    where = ask({**first_stage, "where": "chg < -128.75", "select": "count()"}, sample_settings)
    assert where.summary.value == points
    form = f"chg / prev(close) * 100 < -128.75 / {base!r} * 100"
    assert _blend_warnings(where) == [
        f"{said} In percent (where {form}) count is {percent:,}, not {points:,}."
    ]
    advised = ask({**first_stage, "where": form, "select": "count()"}, sample_settings)
    assert advised.summary.value == percent
    assert _blend_warnings(advised) == []

    then = {**first_stage, "select": ["chg"]}
    last_row = ask(
        {
            **then,
            "then": {"map": {"today": "last(chg)"}, "where": "chg < today", "select": "count()"},
        },
        sample_settings,
    )
    assert last_row.summary.value == points
    [warned] = _blend_warnings(last_row)
    assert warned.startswith("chg < today (today: last(chg)) is a comparison in points")
    assert warned.endswith(
        '(select chg / prev(close) * 100 as chg_pct in the first stage, "today": '
        f'"last(chg_pct)" in then.map and where chg_pct < today) count is {percent:,}, '
        f"not {points:,}."
    )
    number = ask({**then, "then": {"where": "chg < -128.75", "select": "count()"}}, sample_settings)
    [warned] = _blend_warnings(number)
    assert warned.startswith(said)
    assert warned.endswith(f"count is {percent:,}, not {points:,}.")


def test_a_share_of_days_over_a_range_in_points_gives_the_share_in_percent(
    sample_settings, nq_minutes
) -> None:
    """mean(range > 300) over all RTH days: 300 points is 1.16% of the last day's open and
    22% of 2009's prices. The share in percent is pandas's share of days whose range is
    over 300 / that open in percent."""
    daily = _rth_daily(nq_minutes)
    rp = daily["range"] / daily["open"] * 100
    base = float(daily["open"].iloc[-1])
    share = (rp > 300 / base * 100).mean()
    result = ask(
        {"session": "RTH", "from": "daily", "select": "mean(range > 300)"}, sample_settings
    )
    assert result.summary.value == pytest.approx((daily["range"] > 300).mean(), abs=1e-4)
    [warned] = _blend_warnings(result)
    assert warned.endswith(
        f"In percent (mean(range / open * 100 > 300 / {base!r} * 100)) mean_range_gt_300 is "
        f"{share:.4g}, not {result.summary.value:.4g}."
    )


def test_percent_thresholds_one_level_lists_and_rank_cutoffs_are_not_warned(
    sample_settings,
) -> None:
    """No word where nothing is blended: a threshold in percent or at 0, a period whose
    level did not change, rows listed by a threshold (the last days that fell more than 128.75
    points are the last ones in either unit), a count of the top 10% by rank (10% of the
    days in either unit); and one word, not two, beside a mean's blend warning."""
    base = {"session": "RTH", "from": "daily", "map": {"chg": "close - prev(close)"}}
    quiet = [
        {"where": "chg / prev(close) * 100 < -0.5", "select": "count()"},
        {"where": "chg < 0", "select": "count()"},
        {"period": "2025", "where": "chg < -128.75", "select": "count()"},
        {"where": "chg < -128.75", "sort": "timestamp desc", "limit": 3},
        {"where": "rank(range) >= 90", "select": "count()"},
    ]
    for query in quiet:
        assert _blend_warnings(ask({**base, **query}, sample_settings)) == [], query
    both = ask(
        {**base, "where": "chg < -128.75", "select": ["count()", "mean(chg)"]}, sample_settings
    )
    assert len(_blend_warnings(both)) == 1


def test_a_few_groups_of_a_flag_each_give_their_recent_value(sample_settings, nq_minutes) -> None:
    """Grouped by a flag (FOMC days or not), the warning gave one value, "mean_range is
    0.39", the other days' alone: the FOMC days, an eighth of the recent rows, fell under
    the fair share kept for the years a 12-month tail cuts (p37a #1, CL's EIA days). Each
    group is named with its value; the days come from the shared reference's FOMC list."""
    import os
    from pathlib import Path

    shared = Path(__file__).resolve().parents[3] / "shared" / "reference"
    events = Path(os.environ.get("BARB_REFERENCE_DIR", shared)) / "events" / "fomc.csv"
    if not events.exists():
        pytest.skip(f"no reference list at {events}")
    fomc = set(pd.to_datetime(pd.read_csv(events)["date"]))
    daily = _daily(nq_minutes)
    daily.index = pd.to_datetime(daily.index)
    recent = _recent(daily)
    on_day = recent.index.isin(list(fomc))
    assert 0 < on_day.sum() < 0.25 * len(recent)  # the case: few FOMC days among the recent
    result = ask(
        {
            "session": "ETH",
            "from": "daily",
            "join": "fomc",
            "group_by": "fomc",
            "select": "mean(range)",
        },
        sample_settings,
    )
    warned = _blend_warnings(result)
    assert len(warned) == 1
    other, event = recent["range"][~on_day].mean(), recent["range"][on_day].mean()
    assert f"mean_range is {other:,.2f} in fomc false and {event:,.2f} in fomc true." in warned[0]


def test_groups_of_consecutive_days_give_every_recent_runs_value(
    sample_settings, nq_minutes
) -> None:
    """Runs of days closing the same way (a trade's days, in the hold_until_exit concept's
    per-trade form) last 1 to 10 days: the last 12 months' spread is every run's in them but
    the one they cut, not only the long ones (NQ's RSI(2) trades had read "pnl runs
    -1,062.50–-269.50" where 7 of the 13 won, up to 963)."""
    minute = nq_minutes["minute"]
    daily = _daily(nq_minutes[(minute >= RTH_START) & (minute < RTH_END)])
    move = daily["close"].diff()
    up = move > 0
    run = (up != up.shift()).cumsum()
    dates = daily.index.to_numpy()
    start = int(np.searchsorted(dates, dates[-1] - np.timedelta64(365, "D"), side="right"))
    recent = pd.DataFrame({"run": run.iloc[start:], "move": move.iloc[start:]})
    recent = recent[recent["run"] != run.iloc[start - 1]]  # the run the 12 months cut
    sums, sizes = recent.groupby("run")["move"].max(), recent.groupby("run").size()
    # The fair share of the largest run's days would have left out the extremes' runs.
    assert sizes[sums.idxmax()] < sizes.max() / 2 or sizes[sums.idxmin()] < sizes.max() / 2
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "map": {
                "up": "close > prev(close)",
                "run": "cumsum(if(up == prev(up), 0, 1))",
                "move": "close - prev(close)",
            },
            "group_by": "run",
            "select": "max(move) as move",
        },
        sample_settings,
    )
    (warned,) = _blend_warnings(result)
    assert f"move runs {sums.min():,.2f}–{sums.max():,.2f} across the groups" in warned


def test_a_range_made_of_two_aggregates_gives_its_percent_of_the_first_open(
    sample_settings, nq_minutes
) -> None:
    """p40e Q31: each FOMC hour's range as max(high) - min(low) was told to use percent
    (high / open * 100), the first aggregate's argument alone: a price level, not a size.
    Now the advised form is the whole difference over the group's first open, and run it
    gives pandas's weekly range in percent of the week's first open."""
    daily = _rth_daily(nq_minutes)
    weeks = daily.groupby(daily.index - pd.to_timedelta(daily.index.weekday, unit="D"))
    expected = (weeks["high"].max() - weeks["low"].min()) / weeks["open"].first() * 100
    base = {"session": "RTH", "from": "daily", "group_by": "week()"}
    [warned] = _blend_warnings(
        ask({**base, "select": "max(high) - min(low) as wr"}, sample_settings)
    )
    percent = _advised(warned)
    assert percent == "(max(high) - min(low)) / first(open) * 100"
    advised = ask({**base, "select": f"{percent} as pct"}, sample_settings)
    assert advised.table["pct"].to_numpy() == pytest.approx(expected.to_numpy())
    assert _blend_warnings(advised) == []


def test_recurring_groups_with_a_row_before_the_12_months_all_give_their_value(
    sample_settings, nq_minutes
) -> None:
    """p43a Q21: NQ's half days grouped by kind (Jul 3, Black Friday, Dec 24) hold one row a
    year each, one run of rows apiece in the last 12 months; the 2024 Dec 24 row just
    before them was read as a run the 12 months cut, and 2025's Dec 24 group was left out:
    "runs 18.75–56.50 across the groups" where its value was -19.25. The half days are the
    dates whose last bar ends at 13:15 (their RTH stops there), from the raw minute bars."""
    last_bar = nq_minutes.groupby("trading_date")["minute"].last()
    half = pd.DatetimeIndex(last_bar.index[last_bar == 13 * 60 + 14])
    minute = nq_minutes["minute"]
    daily = _daily(nq_minutes[(minute >= RTH_START) & (minute < RTH_END)])
    daily.index = pd.to_datetime(daily.index)
    days = daily.loc[half].copy()
    days["kind"] = np.where(
        days.index.month == 7, "Jul 3", np.where(days.index.month == 11, "Black Friday", "Dec 24")
    )
    days["move"] = days["close"] - days["open"]
    recent = _recent(days)
    per_kind = recent.groupby("kind")["move"].mean()
    assert len(per_kind) == 3 and days["kind"].iloc[-len(recent) - 1] == "Dec 24"
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "map": {
                "move": "close - open",
                "kind": "if(month() == 7, 'Jul 3', if(month() == 11, 'Black Friday', 'Dec 24'))",
            },
            "where": "early_close() and not holiday()",
            "group_by": "kind",
            "select": "mean(move) as move",
        },
        sample_settings,
    )
    (warned,) = _blend_warnings(result)
    assert f"move runs {per_kind.min():,.2f}–{per_kind.max():,.2f} across the groups" in warned


def test_a_count_the_percent_form_leaves_as_it_is_says_so(sample_settings, nq_minutes) -> None:
    """f49g: "range > 100000" (no day's range comes near) ended its warning "In percent (…)
    count is 0, not 0.", a correction that changes nothing. pandas counts the days over
    that threshold in either unit: none."""
    daily = _rth_daily(nq_minutes)
    base = float(daily["open"].iloc[-1])
    assert (daily["range"] > 100000).sum() == 0
    assert (daily["range"] / daily["open"] * 100 > 100000 / base * 100).sum() == 0
    query = {"session": "RTH", "from": "daily", "where": "range > 100000", "select": "count()"}
    result = ask(query, sample_settings)
    assert result.summary.value == 0
    [warned] = _blend_warnings(result)
    assert warned.endswith(
        f"In percent (where range / open * 100 > 100000 / {base!r} * 100) count is 0 as well."
    )
    assert "not 0" not in warned


# --- a joined instrument's distances -----------------------------------------------------


def _window_daily(symbol: str, settings, start: int, end: int) -> pd.DataFrame:
    columns = ["open", "high", "low", "close", "trading_date", "minute"]
    minutes = pd.read_parquet(data_path(symbol, settings), columns=columns)
    return _daily(minutes[(minutes["minute"] >= start) & (minutes["minute"] < end)])


def _levels(closes: pd.Series) -> str:
    """ "(mean close 825 in 2009, 5,486 in 2025)": the whole years' mean closes' lowest and
    highest (the sample's first and last years are cut: 2008 from Jan 2, 2026 a week)."""
    yearly = closes.groupby(closes.index.year).mean().loc[2008:2025]
    low, high = yearly.idxmin(), yearly.idxmax()
    return f"(mean close {yearly[low]:,.0f} in {low}, {yearly[high]:,.0f} in {high})"


def test_a_joined_instrument_s_range_is_said_in_its_own_points_and_levels(
    sample_settings,
) -> None:
    """CL's days with ES joined, "ES's average range": mean(es_high - es_low) was said to be
    "in dollars" (CL's word) over CL's price levels (mean close 37 in 2016, 115 in 2022),
    when ES's range is in ES points and grows with ES's price (825 in 2009, 5,486 in 2025)."""
    window = (RTH_START, RTH_END)  # 09:30-17:00 on both
    es = _window_daily("ES", sample_settings, *window)
    cl = _window_daily("CL", sample_settings, *window)
    both = es.join(cl, how="inner", rsuffix="_cl")
    result = ask(
        {
            "session": "09:30-17:00",
            "from": "daily",
            "join": {"instrument": "ES"},
            "select": "mean(es_high - es_low) as es_range",
        },
        sample_settings,
        instrument="CL",
    )
    assert result.summary.value == pytest.approx(both["range"].mean())
    [warning] = [w for w in result.metadata.warnings if "blends price levels" in w]
    assert warning.startswith("es_range is in points over rows whose price level changed")
    assert _levels(both["close"]) in warning

    # CL's own range over the same rows stays in CL's dollars and levels.
    own = ask(
        {
            "session": "09:30-17:00",
            "from": "daily",
            "join": {"instrument": "ES"},
            "select": "mean(range) as cl_range",
        },
        sample_settings,
        instrument="CL",
    )
    [warning] = [w for w in own.metadata.warnings if "blends price levels" in w]
    assert warning.startswith("cl_range is in dollars over rows whose price level changed")
    assert _levels(both["close_cl"]) in warning


def test_a_ranking_by_a_joined_instrument_s_range_reads_its_levels(sample_settings) -> None:
    """The largest ES ranges listed on CL's days favour ES's high-price years, not CL's
    (2008, 2011-2014 and 2022 were CL's)."""
    window = (RTH_START, RTH_END)
    es = _window_daily("ES", sample_settings, *window)
    cl = _window_daily("CL", sample_settings, *window)
    both = es.join(cl, how="inner", rsuffix="_cl")
    result = ask(
        {
            "session": "09:30-17:00",
            "from": "daily",
            "join": {"instrument": "ES"},
            "map": {"er": "es_high - es_low"},
            "select": ["er"],
            "sort": "er desc",
            "limit": 5,
        },
        sample_settings,
        instrument="CL",
    )
    assert list(result.table["er"]) == sorted(both["range"], reverse=True)[:5]
    [warning] = [w for w in result.metadata.warnings if "favours" in w]
    assert warning.startswith("er is in points over rows whose price level changed")
    assert _levels(both["close"]) in warning


def test_a_running_total_of_a_joined_instrument_s_points_reads_its_levels(
    sample_settings,
) -> None:
    """An equity curve of ES's open-to-close on CL's days is in ES points over ES's levels
    (it was "in dollars" over CL's closes)."""
    window = (RTH_START, RTH_END)
    es = _window_daily("ES", sample_settings, *window)
    cl = _window_daily("CL", sample_settings, *window)
    both = es.join(cl, how="inner", rsuffix="_cl")
    result = ask(
        {
            "session": "09:30-17:00",
            "from": "daily",
            "join": {"instrument": "ES"},
            "map": {"eq": "cumsum(es_close - es_open)"},
            "select": ["eq"],
        },
        sample_settings,
        instrument="CL",
    )
    assert result.table["eq"].iloc[-1] == pytest.approx((both["close"] - both["open"]).sum())
    [warning] = [w for w in result.metadata.warnings if "running total" in w]
    assert warning.startswith("eq is a running total in points over rows whose price level")
    assert _levels(both["close"]) in warning


def test_a_joined_instrument_s_range_in_a_then_stage_is_said_in_its_points_and_levels(
    sample_settings,
) -> None:
    """CL's days with ES joined listed with ES's range, then its mean: said in CL's dollars
    over CL's levels, with ``r / es_low`` as the percent form. ES's range is in ES points
    over ES's levels, in percent of ES's open as CL's own range is of CL's open (the
    reference's ``range / open * 100``); the form it names runs and gives pandas' mean."""
    window = (RTH_START, RTH_END)
    es = _window_daily("ES", sample_settings, *window)
    cl = _window_daily("CL", sample_settings, *window)
    both = es.join(cl, how="inner", rsuffix="_cl")
    base = {"session": "09:30-17:00", "from": "daily", "join": {"instrument": "ES"}}
    query = {**base, "select": "date(), es_high - es_low as r", "then": {"select": "mean(r) as m"}}
    result = ask(query, sample_settings, instrument="CL")
    assert result.summary.value == pytest.approx(both["range"].mean())
    [warning] = [w for w in result.metadata.warnings if "blends price levels" in w]
    assert warning.startswith("m is in points over days whose price level changed")
    assert _levels(both["close"]) in warning
    form = "(es_high - es_low) / es_open * 100"
    assert f"select {form} as r_pct in the first stage" in warning

    # The first stage's own statistic names the same form, as CL's range names its open.
    first = ask({**base, "select": "mean(es_high - es_low) as r"}, sample_settings, "CL")
    [said] = [w for w in first.metadata.warnings if "blends price levels" in w]
    assert f"use percent ({form})" in said
    own = ask({**base, "select": "mean(high - low) as r"}, sample_settings, "CL")
    [said] = [w for w in own.metadata.warnings if "blends price levels" in w]
    assert "use percent ((high - low) / open * 100)" in said
    pct = ask({**base, "select": f"mean({form}) as p"}, sample_settings, "CL")
    assert pct.summary.value == pytest.approx((both["range"] / both["open"] * 100).mean())
