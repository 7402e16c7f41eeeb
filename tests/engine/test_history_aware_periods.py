"""A period selects rows; it never cuts history. Asked the way a trader asks, checked against
TA-Lib and DuckDB over the whole sample (bars built here from the minute file, not by Barb)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
import talib
from asking import ask

from barb.export import csv_bytes

pytestmark = pytest.mark.slow

RTH = "minute >= 570 AND minute < 1020"


def _daily(con, table: str = "nq") -> pd.DataFrame:
    """RTH daily bars over all history, one row per trading date."""
    return con.execute(
        f"""
        SELECT trading_date AS d, arg_min(open, timestamp) AS open, max(high) AS high,
               min(low) AS low, arg_max(close, timestamp) AS close
        FROM {table} WHERE {RTH} GROUP BY 1 ORDER BY 1
        """
    ).df()


def test_rsi_below_30_in_2024_uses_all_history(sample_settings, con) -> None:
    """ "How many days in 2024 did the daily RSI(14) close below 30?"""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "where": "rsi(close, 14) < 30",
            "select": "count()",
        },
        sample_settings,
    )
    daily = _daily(con)
    rsi = talib.RSI(daily["close"].to_numpy(), timeperiod=14)
    in_2024 = daily["d"].dt.year.to_numpy() == 2024
    assert result.summary.value == int(np.sum(in_2024 & (rsi < 30)))


@pytest.mark.parametrize(
    ("mapped", "where", "column"),
    [({}, "rsi(close, 14) < 30", "rsi(close, 14)"), ({"rsi": "rsi(close, 14)"}, "rsi < 30", "rsi")],
)
def test_the_csv_of_rsi_days_lists_each_days_rsi_however_it_is_written(
    sample_settings, con, mapped, where, column
) -> None:
    """ "Days with RSI below 30 in 2024": computed in the where alone, the CSV behind the
    count listed OHLCV only, where the mapped form listed the RSI; now both list it, as
    TA-Lib reads it over all history on the days it keeps."""
    query = {"session": "RTH", "from": "daily", "period": "2024", "where": where}
    result = ask({**query, "map": mapped, "select": "count()"}, sample_settings)
    daily = _daily(con)
    rsi = pd.Series(talib.RSI(daily["close"].to_numpy(), timeperiod=14), index=daily["d"])
    in_2024 = rsi[(rsi.index >= pd.Timestamp("2024-01-01")) & (rsi.index < pd.Timestamp("2025"))]
    expected = in_2024[in_2024 < 30]
    assert result.summary.value == len(expected) > 0
    rows = pd.read_csv(io.BytesIO(csv_bytes(result, "en")), encoding="utf-8-sig")
    assert rows["date"].tolist() == [d.strftime("%Y-%m-%d") for d in expected.index]
    np.testing.assert_allclose(rows[column], expected.to_numpy(), rtol=0, atol=1e-4)


def test_rsi_values_in_a_period_match_talib_over_all_history(sample_settings, con) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-03",
            "map": {"r": "rsi(close, 14)"},
            "select": ["timestamp", "r"],
        },
        sample_settings,
    )
    daily = _daily(con)
    rsi = pd.Series(talib.RSI(daily["close"].to_numpy(), timeperiod=14), index=daily["d"])
    expected = rsi.loc["2024-03-01":"2024-03-31"].to_numpy()
    np.testing.assert_allclose(result.table["r"].to_numpy(), expected, rtol=0, atol=1e-6)


def test_share_of_2024_days_above_the_200_day_sma(sample_settings, con) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "map": {"above": "close > rolling_mean(close, 200)"},
            "select": ["count()", "sum(above) as days_above"],
        },
        sample_settings,
    )
    daily = _daily(con)
    sma = daily["close"].rolling(200).mean()
    in_2024 = daily["d"].dt.year == 2024
    assert result.summary.values["count"] == int(in_2024.sum())
    assert result.summary.values["days_above"] == int((in_2024 & (daily["close"] > sma)).sum())
    assert result.summary.values["days_above"] > 200  # all year above, not only from October


def test_monthly_returns_for_2023_include_january(sample_settings, con) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "monthly",
            "period": "2023",
            "map": {"ret": "(close - prev(close)) / prev(close) * 100"},
            "select": ["timestamp", "ret"],
        },
        sample_settings,
    )
    daily = _daily(con)
    monthly = daily.groupby(daily["d"].dt.to_period("M"))["close"].last()
    expected = (monthly.pct_change() * 100).loc["2023-01":"2023-12"].to_numpy()
    assert len(result.table) == 12
    np.testing.assert_allclose(result.table["ret"].to_numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize(
    ("pattern", "rule"),
    [
        ("inside_day()", lambda d: (d.high < d.high.shift()) & (d.low > d.low.shift())),
        ("gap_up()", lambda d: d.open > d.close.shift()),
        ("nr7()", lambda d: (d.high - d.low) <= (d.high - d.low).rolling(7).min()),
    ],
)
def test_patterns_on_the_first_days_of_a_period(pattern, rule, sample_settings, con) -> None:
    """Each month of 2024 asked alone gives the days the whole-history rule gives."""
    daily = _daily(con)
    marked = daily.loc[rule(daily).fillna(False).to_numpy(dtype=bool), "d"]
    for month in range(1, 13):
        period = f"2024-{month:02d}"
        result = ask(
            {"session": "RTH", "from": "daily", "period": period, "where": pattern}, sample_settings
        )
        got = result.table["timestamp"].dt.strftime("%Y-%m-%d").tolist()
        expected = marked[marked.dt.strftime("%Y-%m") == period].dt.strftime("%Y-%m-%d")
        assert got == expected.tolist(), (pattern, period)


def test_minute_level_indicator_in_a_short_period(sample_settings, con) -> None:
    """On 5-minute bars, a one-day period gets a bounded warm-up that matches TA-Lib over all
    history within 1e-6 (EMA and Wilder smoothing forget their start geometrically)."""
    result = ask(
        {
            "session": "RTH",
            "from": "5m",
            "period": "2024-03-05",
            "map": {"r": "rsi(close, 14)", "e": "ema(close, 50)"},
            "select": ["timestamp", "r", "e"],
        },
        sample_settings,
    )
    bars = con.execute(
        f"""
        SELECT trading_date AS d, min(timestamp) AS ts, arg_max(close, timestamp) AS close
        FROM nq WHERE {RTH} GROUP BY trading_date, (minute - 570) // 5 ORDER BY 2
        """
    ).df()
    close = bars["close"].to_numpy()
    day = (bars["d"] == "2024-03-05").to_numpy()
    np.testing.assert_allclose(result.table["r"], talib.RSI(close, 14)[day], atol=1e-6, rtol=0)
    np.testing.assert_allclose(result.table["e"], talib.EMA(close, 50)[day], atol=1e-6, rtol=0)
    assert result.metadata.rows_scanned == int(day.sum())


def test_next_at_the_period_end_reads_the_following_bar(sample_settings, con) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-03",
            "map": {"tomorrow": "next(close)"},
            "sort": "timestamp desc",
            "limit": 1,
        },
        sample_settings,
    )
    daily = _daily(con).set_index("d")
    first_april = daily.loc["2024-04-01":].iloc[0]["close"]
    assert result.table["tomorrow"].iloc[0] == first_april


def test_where_and_aggregates_see_history_too(sample_settings, con) -> None:
    """prev() inside a where and inside an aggregate reads the previous trading day, even
    when where removed it or the period starts after it."""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-01",
            "where": "dayname() == 'Mon'",
            "select": ["mean(close - prev(close)) as chg", "count()"],
        },
        sample_settings,
    )
    daily = _daily(con)
    chg = daily["close"] - daily["close"].shift()
    mondays = (daily["d"].dt.strftime("%Y-%m") == "2024-01") & (daily["d"].dt.dayofweek == 0)
    assert result.summary.values["count"] == int(mondays.sum())
    assert result.summary.values["chg"] == pytest.approx(chg[mondays].mean())


# A map column that looks back, read by another that looks back again: the reaches add up
# (rel reads prev() of a 20-day mean, 20 bars before the period's first day).


def test_relative_volume_built_in_two_map_steps(sample_settings, con) -> None:
    """ "Relative volume (vs the previous 20 days' average) over the last 10 days." """
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "last_10_bars",
            "map": {"avg20": "rolling_mean(volume, 20)", "rel": "volume / prev(avg20)"},
            "select": ["rel"],
        },
        sample_settings,
    )
    daily = con.execute(
        f"SELECT trading_date AS d, sum(volume) AS v FROM nq WHERE {RTH} GROUP BY 1 ORDER BY 1"
    ).df()
    rel = daily["v"] / daily["v"].rolling(20).mean().shift()
    np.testing.assert_allclose(result.table["rel"].to_numpy(), rel.iloc[-10:].to_numpy())


def test_chained_conditions_count_the_periods_first_days(sample_settings, con) -> None:
    """ "After two up days in 2020, how often was the third up?" and "how many of the last 20
    days closed up" with the condition in a map column: the period's first days read the
    days before it."""
    two_up = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2020",
            "map": {"up": "close > prev(close)", "two_up": "prev(up) and prev(up, 2)"},
            "where": "two_up",
            "select": ["count()", "mean(up) as share"],
        },
        sample_settings,
    )
    ups20 = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2020-01",
            "map": {"up": "close > prev(close)", "ups20": "rolling_count(up, 20)"},
            "select": ["timestamp", "ups20"],
        },
        sample_settings,
    )
    daily = _daily(con).set_index("d")
    up = daily["close"] > daily["close"].shift()
    hit = (up.shift(1, fill_value=False) & up.shift(2, fill_value=False)).loc["2020"]
    assert two_up.summary.values["count"] == int(hit.sum())
    assert two_up.summary.values["share"] == pytest.approx(up.loc["2020"][hit].mean())
    expected = up.astype(int).rolling(20).sum().loc["2020-01"]
    np.testing.assert_array_equal(ups20.table["ups20"].to_numpy(), expected.to_numpy())


def test_next_of_next_at_the_period_end(sample_settings, con) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-03",
            "map": {"tomorrow": "next(close)", "after": "next(tomorrow)"},
            "sort": "timestamp desc",
            "limit": 1,
        },
        sample_settings,
    )
    daily = _daily(con).set_index("d")
    assert result.table["after"].iloc[0] == daily.loc["2024-04-01":].iloc[1]["close"]


# Running totals and ranks are about the period itself: "cumulative return in 2024" starts at
# 2024's first bar, and "the top 10% of 2025's ranges" ranks 2025's days among themselves.


def test_cumulative_return_in_2024_starts_at_its_first_bar(sample_settings, con) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "map": {"ret": "(close / prev(close) - 1) * 100", "cum": "cumsum(ret)"},
            "select": "last(cum)",
        },
        sample_settings,
    )
    daily = _daily(con)
    ret = daily["close"].pct_change() * 100  # the first 2024 return reads 2023's last close
    assert result.summary.value == pytest.approx(ret[daily["d"].dt.year == 2024].sum())


def test_max_drawdown_in_2023_is_from_a_2023_peak(sample_settings, con) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2023",
            "map": {"dd": "(close / cummax(close) - 1) * 100"},
            "select": "min(dd)",
        },
        sample_settings,
    )
    close = _daily(con).set_index("d")["close"].loc["2023"]
    expected = ((close / close.cummax() - 1) * 100).min()
    assert result.summary.value == pytest.approx(expected)
    assert expected > -20  # the sample's 2022 peak would make it about -50


def _cummax_warnings(result) -> list[str]:
    return [w for w in result.metadata.warnings if w.startswith("cummax() starts at")]


def test_all_time_highs_under_a_period_say_the_history_went_higher(sample_settings, con) -> None:
    """ "How many new all-time highs did NQ make in 2025?" (p28b F1). Under the period 2025
    cummax restarts at 2025's first bar and counted 22 new highs of 2025; all history holds
    11. The result says so, naming the higher bar before the period, and the where form the
    warning gives counts the all-time ones."""
    high = _daily(con).set_index("d")["high"]
    all_time = (high > high.cummax().shift()).loc["2025"].sum()
    of_2025 = high.loc["2025"]
    since_january = (of_2025 > of_2025.cummax().shift()).sum()
    assert all_time < since_january  # the case: history changes the answer
    ath = {"ath": "high > prev(cummax(high))"}
    query = {"session": "RTH", "from": "daily", "map": ath, "select": "count(ath)"}
    restarted = ask({**query, "period": "2025"}, sample_settings)
    assert restarted.summary.value == since_january
    before = high.loc[:"2024-12-31"]
    assert _cummax_warnings(restarted) == [
        f"cummax() starts at the period's first bar ({of_2025.index[0]:%Y-%m-%d}), and the "
        f"bars before it went higher: {before.max():.10g} on {before.idxmax():%Y-%m-%d}. It is "
        "the highest since the period began, not of all history; for all-time highs or lows "
        "leave the period out and pick the rows with where (year() == 2025) or sort and limit."
    ]
    whole = ask({**query, "where": "year() == 2025"}, sample_settings)
    assert whole.summary.value == all_time
    assert _cummax_warnings(whole) == []


def test_a_running_high_is_not_warned_without_history_before_or_with_a_unit(
    sample_settings,
) -> None:
    for query in (
        {"period": "2008", "map": {"pk": "cummax(high)"}},  # the data's first year
        {"period": "2025", "map": {"pk": "cummax(high, 'year')"}},  # restarts by design
    ):
        result = ask(
            {"session": "RTH", "from": "daily", **query, "select": "max(pk)"}, sample_settings
        )
        assert _cummax_warnings(result) == []


@pytest.mark.parametrize("period", ["2025", "last_30_bars"])
def test_rank_ranks_the_period_among_itself(period, sample_settings, con) -> None:
    """ "How many of 2025's days were in its top 10% by range?" (and over the last 30 days)"""
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": period,
            "map": {"r": "rank(range)"},
            "select": ["r", "range"],
        },
        sample_settings,
    )
    daily = _daily(con)
    days = daily[daily["d"].dt.year == 2025] if period == "2025" else daily.tail(30)
    ranges = days["high"] - days["low"]
    expected = ranges.rank(method="max", pct=True) * 100
    np.testing.assert_allclose(result.table["r"].to_numpy(), expected.to_numpy())
    top = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": period,
            "where": "rank(range) >= 90",
            "select": "count()",
        },
        sample_settings,
    )
    assert top.summary.value == int((expected >= 90).sum())


# The data's last week, month, quarter or year is not over: a bar of four days is no year to
# average with the others. Left out of a period with other bars, kept (and said) when alone.


def _whole_years(daily: pd.DataFrame) -> pd.DataFrame:
    years = daily.groupby(daily["d"].dt.year).agg(close=("close", "last"), last_day=("d", "last"))
    last = years["last_day"].iloc[-1]
    assert last < pd.Timestamp(last.year, 12, 24)  # the sample ends early in its last year
    return years.iloc[:-1]


def test_mean_yearly_return_counts_whole_years_only(sample_settings, con) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "yearly",
            "map": {"ret": "(close / prev(close) - 1) * 100"},
            "select": ["mean(ret)", "count()"],
        },
        sample_settings,
    )
    years = _whole_years(_daily(con))
    returns = years["close"].pct_change() * 100
    assert result.summary.values["mean_ret"] == pytest.approx(returns.mean())
    assert result.summary.values["count"] == len(years)
    open_year = _daily(con)["d"].iloc[-1].year
    assert any(f"year {open_year} is not over yet" in w for w in result.metadata.warnings)


def test_the_last_n_weeks_on_weekly_bars_are_whole_weeks(sample_settings, con) -> None:
    # last_N_weeks, not last_N_bars: the last N bars include the unfinished week (for
    # every N, test_unfinished_last_bar), the last N weeks are N whole ones.
    result = ask({"session": "RTH", "from": "weekly", "period": "last_3_weeks"}, sample_settings)
    daily = _daily(con)
    weeks = daily.groupby(daily["d"].dt.to_period("W-SUN")).agg(
        first=("d", "first"), high=("high", "max")
    )
    whole = weeks.iloc[-4:-1]  # the data's last week has not ended
    assert list(result.table["week"]) == [d.strftime("%Y-%m-%d") for d in whole["first"]]
    assert list(result.table["high"]) == list(whole["high"])


def test_the_open_month_alone_is_kept_and_said_to_be_open(sample_settings, con) -> None:
    daily = _daily(con)
    last = daily["d"].iloc[-1]
    month = daily[daily["d"].dt.to_period("M") == last.to_period("M")]
    result = ask(
        {"session": "RTH", "from": "monthly", "period": last.strftime("%Y-%m")}, sample_settings
    )
    assert list(result.table["month"]) == [last.strftime("%Y-%m")]
    assert result.table["high"].iloc[0] == month["high"].max()
    assert any("is not over yet" in w for w in result.metadata.warnings)
