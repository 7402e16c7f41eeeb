"""A group keyed by a running value that holds the data's last bar is still running, and
says so (p35c M2): CL's drawdown episodes by cummax(close) listed the one under the
2022-05-11 peak as "946 days" with no word that CL was still 62% under that peak on
2026-01-07, the data's last day; read as "recovered after 946 trading days". Here the
hand-made bars end on 2024-03-28; the episodes and their days are counted with pandas."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from rth_bars import rth_daily

EPISODES = {
    "map": {"peak": "cummax(close)", "dd": "(close / peak - 1) * 100"},
    "group_by": "peak",
    "select": ["first(date()) as peak_date", "min(dd) as max_dd", "count() as days"],
}
SAID = "still running at the data's end"


@pytest.fixture(scope="module")
def episodes(minutes: pd.DataFrame) -> pd.DataFrame:
    """Each peak's episode over every RTH day: its first day, worst drawdown and days."""
    daily = rth_daily(minutes)
    daily["peak"] = daily["close"].cummax()
    daily["dd"] = (daily["close"] / daily["peak"] - 1) * 100
    daily["day"] = daily.index
    return daily.groupby("peak").agg(
        peak_date=("day", "first"), max_dd=("dd", "min"), days=("dd", "size")
    )


def test_the_episode_the_data_ends_in_is_said_to_be_still_running(
    engine_settings, episodes
) -> None:
    result = ask(EPISODES, engine_settings, **RTH_DAILY)
    assert result.table["days"].tolist() == episodes["days"].tolist()
    last = episodes.loc[episodes["peak_date"].idxmax()]  # the last peak's episode
    assert warnings_with(result, SAID) == [
        f"The group peak = {last.name:.10g}, from {last['peak_date']:%Y-%m-%d}, is still "
        "running at the data's end (2024-03-28): cummax(close) holds that value to the "
        "data's last bar, so the run has not ended, the data has; days = "
        f"{last['days']} counts its rows so far, not a finished run's."
    ]
    # A then stage that reads it, a count of the deep episodes, says it too.
    deep = float(last["max_dd"]) + 0.01
    counted = ask(
        {**EPISODES, "then": {"where": f"max_dd < {deep}", "select": "count() as n"}},
        engine_settings,
        **RTH_DAILY,
    )
    assert counted.summary.value == int((episodes["max_dd"] < deep).sum())
    assert len(warnings_with(counted, SAID)) == 1


def test_nothing_is_said_of_a_finished_run_or_one_the_answer_leaves_out(
    engine_settings, episodes
) -> None:
    """A period that ends before the data does ends no run the data holds open; the then
    stage's where or the first stage's limit can leave the open one out; a year is a
    calendar group, said (or not) as such."""
    last = episodes.loc[episodes["peak_date"].idxmax()]
    shallower = float(last["max_dd"]) - 0.01
    longest = episodes["days"].idxmax()
    assert longest != last.name  # the open episode is not the longest
    queries = (
        {**EPISODES, "period": "2024-01-02:2024-03-27"},
        {**EPISODES, "then": {"where": f"max_dd < {shallower}", "select": "count() as n"}},
        {**EPISODES, "sort": "days desc", "limit": 1},
        {**EPISODES, "group_by": "year()", "select": "count() as days"},
    )
    for query in queries:
        assert not warnings_with(ask(query, engine_settings, **RTH_DAILY), SAID), query


def _runs(minutes: pd.DataFrame, down: bool) -> pd.Series:
    """Each RTH day's count of closes in a row below (``down``) or above the one before."""
    close = rth_daily(minutes)["close"]
    moved = close < close.shift() if down else close > close.shift()
    return moved.groupby((~moved).cumsum()).cumsum().astype(int)


def _run_lengths(flag: str) -> dict:
    """The runs of ``flag`` days, each read on its last day (p39b Q23's form)."""
    return {
        "map": {
            "up": "close > prev(close)",
            "dn": "close < prev(close)",
            "run": f"streak({flag})",
            "run_end": f"{flag} and not next({flag})",
        },
        "where": "run_end",
        "select": ["count() as runs", "mean(run) as avg", "max(run) as longest"],
    }


@pytest.mark.parametrize("down", [True, False])
def test_run_lengths_read_on_their_last_day(engine_settings, minutes, down) -> None:
    """The runs' lengths, each read on its last day: streak(dn) over every bar is what the
    where asks, so no word that it ran before the where (it pointed to a then form that
    numbers the run ends), and no comparison with the streak on every day, 0 on the days
    between runs (p39b Q23: "9.735 vs 8.039 over all rows, more than noise"). The run the
    data ends in (the fixture's last days are down) has no next() to end it: said open, with
    its length so far; the up runs all ended."""
    runs = _runs(minutes, down)
    ends = runs[(runs > 0) & (runs.shift(-1) == 0)]
    result = ask(_run_lengths("dn" if down else "up"), engine_settings, **RTH_DAILY)
    assert result.summary.values == pytest.approx(
        {"runs": len(ends), "avg": ends.mean(), "longest": ends.max()}
    )
    assert not warnings_with(result, "ran over every bar")
    assert not warnings_with(result, "of the period's rows it is")
    said = warnings_with(result, "holds at the data's end")
    if not down:
        assert runs.iloc[-1] == 0 and not said
        return
    length = int(runs.iloc[-1])
    assert length >= 2  # the premise: the data ends inside a down run
    began, last = runs.index[-length], runs.index[-1]
    assert said == [
        f"The run of dn that holds at the data's end is not among the {len(ends)} rows kept: "
        f"the where reads next(dn), which has no value on {last:%Y-%m-%d}, the data's last "
        f"day. It is still open, {length} days so far since {began:%Y-%m-%d} (streak(dn) = "
        f"{length} there)."
    ]


def test_a_streak_under_a_where_on_other_days_is_still_said(engine_settings) -> None:
    """streak(dn) on gap-down days: the where does not keep rows by the run, so the running
    streak there is the down run going into each such day, the same quantity as on every
    day: compared with it, and the warning that it ran over every bar stays."""
    result = ask(
        {
            "map": {"dn": "close < prev(close)", "run": "streak(dn)"},
            "where": "open < prev(close)",
            "select": ["count() as days", "mean(run) as avg"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    assert warnings_with(result, "streak(dn) ran over every bar")
    assert warnings_with(result, "avg is ")
    assert not warnings_with(result, "holds at the data's end")


def _per_trade(sell: str) -> dict:
    """The hold_until_exit concept's per-trade form, bought on the 20th-21st of a month and
    sold by ``sell``: each trade's bars after its entry, grouped by the trade's number."""
    return {
        "map": {
            "buy": "day() >= 20 and day() < 22",
            "sell": sell,
            "pos": "if(coalesce(bars_since(buy), 99999) < coalesce(bars_since(sell), 99999), 1, 0)",
            "entry": "if(pos > coalesce(prev(pos), 0), 1, 0)",
            "pnl": "prev(pos) * (close - prev(close))",
            "trade": "cumsum(entry)",
        },
        "where": "prev(pos) == 1",
        "group_by": "trade",
        "select": ["sum(pnl) as pnl", "count() as days"],
    }


@pytest.mark.parametrize("still_open", [False, True])
def test_a_trade_is_open_only_while_it_is_held(engine_settings, minutes, still_open) -> None:
    """A trade's number, cumsum(entry), holds its value after the exit too: the last trade
    closed on 2024-03-25 was said to be "still running at the data's end". Only a trade
    held on the data's last day is, here when no sell comes in March. Each trade's P&L and
    days are pandas', bar by bar."""
    daily = rth_daily(minutes)
    day, month = daily.index.day, daily.index.month
    buy = (day >= 20) & (day < 22)
    sell = (day >= 25) & ((month < 3) if still_open else True)
    pos, held = [], 0
    for bought, sold in zip(buy, sell, strict=True):
        held = 0 if sold else 1 if bought else held  # an exit wins a day of both
        pos.append(held)
    daily["pos"] = pos
    daily["trade"] = (daily["pos"] > daily["pos"].shift(fill_value=0)).cumsum()
    daily["pnl"] = daily["pos"].shift() * daily["close"].diff()
    kept = daily[daily["pos"].shift() == 1]
    trades = kept.groupby("trade").agg(pnl=("pnl", "sum"), days=("pnl", "size"))
    assert bool(daily["pos"].iloc[-1]) == still_open
    rule = "day() >= 25" + (" and month() < 3" if still_open else "")
    result = ask(_per_trade(rule), engine_settings, **RTH_DAILY)
    assert result.table["trade"].tolist() == trades.index.tolist()
    assert result.table["pnl"].to_numpy() == pytest.approx(trades["pnl"].to_numpy())
    assert result.table["days"].tolist() == trades["days"].tolist()
    said = warnings_with(result, SAID)
    if not still_open:
        assert said == []
        return
    last = kept[kept["trade"] == trades.index[-1]]
    assert said == [
        f"The group trade = {trades.index[-1]}, from {last.index[0]:%Y-%m-%d}, is still "
        "running at the data's end (2024-03-28): cumsum(entry) holds that value to the "
        "data's last bar, so the run has not ended, the data has; days = "
        f"{trades['days'].iloc[-1]} counts its rows so far, not a finished run's."
    ]


def test_a_trade_held_into_the_period_is_said_to_begin_before_it(engine_settings, minutes):
    """cumsum(entry) starts at the period's first bar: from 2024-02-23, the trade bought on
    the 20th and sold on the 26th is group 0, its days only those from the 23rd (pandas, bar
    by bar over all the days). NQ's RSI(2) trades of 2025 listed such a trade 0 of 2 days and
    +172.50, bought in December 2024, with no word (p42a M1). A period whose first day holds
    no trade says nothing."""
    daily = rth_daily(minutes)
    day = daily.index.day
    buy, sell = (day >= 20) & (day < 22), day >= 25
    pos, held = [], 0
    for bought, sold in zip(buy, sell, strict=True):
        held = 0 if sold else 1 if bought else held
        pos.append(held)
    daily["pos"] = pos
    entry = (daily["pos"] > daily["pos"].shift(fill_value=0)).astype(int)
    trade = entry.loc["2024-02-23":].cumsum()
    kept = daily["pos"].shift().loc["2024-02-23":] == 1
    days = int((kept & (trade == 0)).sum())
    assert bool(daily["pos"].shift().loc["2024-02-23"]) and days >= 1  # held into it: the case
    result = ask(
        {**_per_trade("day() >= 25"), "period": "2024-02-23:"}, engine_settings, **RTH_DAILY
    )
    assert result.table["trade"].iloc[0] == 0 and result.table["days"].iloc[0] == days
    assert warnings_with(result, "began before the period") == [
        "The group trade = 0 began before the period: the where keeps it from the period's "
        f"first day (2024-02-23), so days = {days} counts only its rows from there, not the "
        "whole run; a period starting before the run began counts it whole."
    ]
    assert not daily["pos"].shift().loc["2024-02-01"]
    result = ask(
        {**_per_trade("day() >= 25"), "period": "2024-02-01:"}, engine_settings, **RTH_DAILY
    )
    assert not warnings_with(result, "began before the period")


DOWN_RUNS = {
    "map": {"down": "close < open", "entry": "down and not prev(down)", "trade": "cumsum(entry)"},
    "where": "down",
    "group_by": "trade",
    "select": ["count() as days"],
}


@pytest.mark.parametrize("entered", [True, False])
def test_a_run_entered_on_the_period_s_first_day_did_not_begin_before_it(
    engine_settings, minutes, entered
) -> None:
    """Runs of down days by cumsum(entry): from a first day that is itself an entry (the day
    before was up), trade = 1 holds nothing from before the period, where NQ's from
    2024-01-08 had been told "trade = 1 began before the period" (p43d #2). From a down day
    after a down day, trade = 0 did begin before it, and is said so with its days (pandas)."""
    daily = rth_daily(minutes)
    down = daily["close"] < daily["open"]
    entry = down & ~down.shift(fill_value=False)
    held = down & down.shift(fill_value=False)
    first = (entry if entered else held).iloc[1:].idxmax()
    trade = entry.loc[first:].cumsum()
    key = int(trade.iloc[0])
    days = int((down.loc[first:] & (trade == key)).sum())
    assert key == (1 if entered else 0) and days >= 1
    result = ask({**DOWN_RUNS, "period": f"{first:%Y-%m-%d}:"}, engine_settings, **RTH_DAILY)
    assert result.table["trade"].iloc[0] == key and result.table["days"].iloc[0] == days
    said = warnings_with(result, "began before the period")
    assert said == (
        []
        if entered
        else [
            f"The group trade = 0 began before the period: the where keeps it from the "
            f"period's first day ({first:%Y-%m-%d}), so days = {days} counts only its rows "
            "from there, not the whole run; a period starting before the run began counts it "
            "whole."
        ]
    )
