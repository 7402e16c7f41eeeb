"""A then stage's map that reads earlier rows starts at the first stage's first row, and says
so (p34f #24): RSI(14) of 2025's closes computed in then gave NQ a fifth, false cross above
30 on 2025-02-13 (30.25, where RSI over all history is 29.27), with no word. Here the
hand-made bars start on 2024-01-02 and the period on 2024-02-01: RSI(5) in then is TA-Lib's
over February and March alone, in the first stage's map it is TA-Lib's over all days."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import talib
from asking import RTH_DAILY, ask, warnings_with
from rth_bars import rth_daily

PERIOD = "2024-02-01:2024-03-28"
THEN_RSI = {
    "period": PERIOD,
    "select": ["date()", "close"],
    "then": {"map": {"r": "rsi(close, 5)"}, "select": ["date", "r"]},
}


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    """The period's RTH days, with RSI(5) over all days and over the period's alone."""
    daily = rth_daily(minutes)
    daily["all_rsi"] = talib.RSI(daily["close"].to_numpy(), 5)
    period = daily.loc["2024-02-01":"2024-03-28"].copy()
    period["own_rsi"] = talib.RSI(period["close"].to_numpy(), 5)
    return period


def test_an_indicator_in_then_says_it_starts_at_the_periods_first_row(
    engine_settings, days
) -> None:
    result = ask(THEN_RSI, engine_settings, **RTH_DAILY)
    # What it computes: RSI over the period's rows alone, unlike RSI over all history.
    assert np.allclose(result.table["r"], days["own_rsi"], equal_nan=True)
    empty = int(days["own_rsi"].isna().sum())
    assert empty == 5 and not np.allclose(days["own_rsi"][empty:], days["all_rsi"][empty:])
    assert warnings_with(result, "then.map") == [
        f"rsi(close, 5) in then.map (r) runs over the first stage's {len(days)} rows only, "
        f"from 2024-02-01, not over the bars before them: its first {empty} rows are empty "
        "and the values after them differ from those over all history; compute it in the "
        "first stage's map, where it reads all history."
    ]
    # The form it points to: RSI over all history, read in the period, said nothing of.
    first = ask(
        {"period": PERIOD, "map": {"r": "rsi(close, 5)"}, "select": ["date()", "r"]},
        engine_settings,
        **RTH_DAILY,
    )
    assert np.allclose(first.table["r"], days["all_rsi"])
    assert not warnings_with(first, "then.map")


def test_a_lag_in_then_over_a_period_says_its_first_row_is_empty(engine_settings, days) -> None:
    query = {**THEN_RSI, "then": {"map": {"p": "prev(close)"}, "select": "count(p) as n"}}
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.summary.value == int(days["close"].shift().notna().sum())
    [said] = warnings_with(result, "then.map")
    assert said.startswith("prev(close) in then.map (p) runs over the first stage's ")
    assert "its first row is empty; compute it in the first stage's map" in said


def test_nothing_is_said_where_then_has_all_history_or_reads_picked_rows(
    engine_settings,
) -> None:
    """From the data's first day the then rows are all history; the days a where picked
    (the signals) are read one after another on purpose; a running total starts at the
    period by definition."""
    whole = {key: value for key, value in THEN_RSI.items() if key != "period"}
    picked = {**THEN_RSI, "where": "close > open"}
    running = {**THEN_RSI, "then": {"map": {"s": "cumsum(close)"}, "select": "last(s)"}}
    for query in (whole, picked, running):
        assert not warnings_with(ask(query, engine_settings, **RTH_DAILY), "then.map")


def _runs(flags: pd.Series) -> pd.Series:
    """How many rows in a row ``flags`` has been true, ending at each row (0 when false)."""
    ends = (~flags).cumsum()
    return flags.astype(int).groupby(ends).cumsum()


def _drawdown(pnl: pd.Series) -> float:
    """The backtest concept's max drawdown: equity below its best so far, 0 included."""
    equity = pnl.cumsum()
    return float((equity - equity.cummax().clip(lower=0)).min())


BACKTEST = {
    "period": PERIOD,
    "map": {"pnl": "close - open"},
    "select": ["date()", "pnl"],
    "then": {
        "map": {
            "equity": "cumsum(pnl)",
            "drawdown": "equity - if(cummax(equity) > 0, cummax(equity), 0)",
            "worst": "cummin(pnl)",
            "before": "prev(equity)",
            "loss_run": "streak(pnl < 0)",
        },
        "select": [
            "min(drawdown) as max_dd",
            "last(worst) as worst",
            "count(before) as with_before",
            "max(loss_run) as most_losses",
        ],
    },
}


def test_the_backtest_template_in_then_is_not_said_to_differ_from_history(
    engine_settings, minutes
) -> None:
    """p35c M1: the backtest concept's drawdown, cummax(equity) in then.map, was told that
    it "differs from those over all history; compute it in the first stage's map", where it
    is the same number: running totals and highs start at the period's first bar in either
    stage, and prev() of them is empty on it in either. The losing trades in a row count
    the period's trades, not the days before it (that the first stage's streak would)."""
    daily = rth_daily(minutes)
    pnl = (daily["close"] - daily["open"]).loc["2024-02-01":"2024-03-28"]
    result = ask(BACKTEST, engine_settings, **RTH_DAILY)
    values = result.summary.values
    assert values["max_dd"] == pytest.approx(_drawdown(pnl))
    assert values["worst"] == pytest.approx(pnl.min())
    assert values["with_before"] == len(pnl) - 1
    assert values["most_losses"] == _runs(pnl < 0).max()
    assert not warnings_with(result, "then.map")
    # The form the warning pointed to gives the same drawdown.
    first = ask(
        {
            "period": PERIOD,
            "map": {
                "pnl": "close - open",
                "equity": "cumsum(pnl)",
                "drawdown": "equity - if(cummax(equity) > 0, cummax(equity), 0)",
            },
            "select": "min(drawdown) as max_dd",
        },
        engine_settings,
        **RTH_DAILY,
    )
    assert first.summary.value == pytest.approx(values["max_dd"])


def test_a_drawdown_over_the_trades_a_where_kept_is_theirs(engine_settings, minutes) -> None:
    """With a where (the days that gapped up are the trades), cummax(equity) in then runs
    over the trades, as written, and differs from the equity over every day that the first
    stage's map would give: nothing is said."""
    daily = rth_daily(minutes)
    daily["pnl"] = daily["close"] - daily["open"]
    days = daily.loc["2024-02-01":"2024-03-28"]
    trades = days[days["open"] > daily["close"].shift().loc[days.index]]
    query = {**BACKTEST, "where": "open > prev(close)"}
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.summary.values["max_dd"] == pytest.approx(_drawdown(trades["pnl"]))
    assert _drawdown(trades["pnl"]) != pytest.approx(_drawdown(days["pnl"]))
    assert not warnings_with(result, "then.map")


def test_an_indicator_over_weeks_in_then_says_so_and_names_weekly_bars(
    engine_settings, minutes
) -> None:
    """Weekly RSI written as each week's last close (group_by week()), RSI'd in then.map,
    started from scratch at the period's first week with no word: NQ's weekly RSI(14) in
    2022 was below 40 in 16 weeks that way, in 22 on weekly bars over all history."""
    daily = rth_daily(minutes)
    weeks = daily["close"].groupby(daily.index - pd.to_timedelta(daily.index.dayofweek, "D"))
    closes = weeks.last()
    all_rsi = pd.Series(talib.RSI(closes.to_numpy(), 3), closes.index)
    start = pd.Timestamp("2024-02-05")  # a Monday: the period holds whole weeks
    own_rsi = talib.RSI(closes[start:].to_numpy(), 3)
    query = {
        "period": "2024-02-05:2024-03-28",
        "group_by": "week()",
        "select": "last(close) as c",
        "then": {"map": {"r": "rsi(c, 3)"}, "select": ["week", "r"]},
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert np.allclose(result.table["r"], own_rsi, equal_nan=True)
    assert not np.allclose(own_rsi[3:], all_rsi[start:][3:])
    assert warnings_with(result, "then.map") == [
        f"rsi(c, 3) in then.map (r) runs over the first stage's {len(own_rsi)} rows only, "
        "from 2024-02-05, not over the bars before them: its first 3 rows are empty and the "
        "values after them differ from those over all history; run the first stage over the "
        "weeks before them too and keep the ones asked for with then's where, or use weekly "
        'bars ("from": "weekly").'
    ]
    # The weekly bars it points to: RSI over all the weeks, read in the period.
    weekly = ask(
        {"from": "weekly", "period": "2024-02-05:2024-03-28", "map": {"r": "rsi(close, 3)"}},
        engine_settings,
        session="RTH",
    )
    got = pd.Series(weekly.table["r"].to_numpy(), pd.to_datetime(weekly.table.iloc[:, 0]))
    assert len(got) >= 7 and np.allclose(got, all_rsi[got.index])


@pytest.mark.parametrize("keys", [["year()", "month()"], "month()"])
def test_a_change_over_months_in_then_says_its_first_month_has_none(
    engine_settings, minutes, keys
) -> None:
    """ "Average monthly return in 2024" as each month's last close and prev() in then lost
    January's return with no word: the period's first month has no month before it there.
    month() alone names a month only inside one year, and is said so then too."""
    daily = rth_daily(minutes)
    month_end = daily["close"].groupby(daily.index.to_period("M")).last()
    query = {
        "period": "2024-02-01:2024-03-28",
        "group_by": keys,
        "select": "last(close) as c",
        "then": {"map": {"ret": "c / prev(c) - 1"}, "select": ["c", "ret"]},
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.table["c"].tolist() == month_end["2024-02":"2024-03"].tolist()
    assert np.isnan(result.table["ret"].iloc[0])
    march = month_end["2024-03"] / month_end["2024-02"] - 1
    assert result.table["ret"].iloc[1] == pytest.approx(march)
    assert warnings_with(result, "then.map") == [
        "c / prev(c) - 1 in then.map (ret) runs over the first stage's 2 rows only, from "
        "2024-02-01, not over the bars before them: its first row is empty; run the first "
        "stage over the months before them too and keep the ones asked for with then's "
        'where, or use monthly bars ("from": "monthly").'
    ]
    # On monthly bars February's change reads January's close.
    monthly = ask(
        {"from": "monthly", "period": "2024-02:2024-02", "map": {"ret": "close / prev(close) - 1"}},
        engine_settings,
        session="RTH",
    )
    february = month_end["2024-02"] / month_end["2024-01"] - 1
    assert monthly.table["ret"].tolist() == pytest.approx([february])
