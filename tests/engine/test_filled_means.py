"""A mean (median, percentile, std) of if(c, x, 0) reads the 0 of every row where c is false
as a value: "3 down days, then the 4th day, by year" written to keep every year listed as
mean(if(st == 3, next_ret, 0)) gave NQ's 2024 -0.057% for the 14 streak days' -1.059%, each
year's mean shrunk toward 0 with no word (p39b Q11t). Said with the value over c's rows
alone; not said of a sum or a running total, where a day without a trade adds its 0 as
meant. Expected values from pandas over the hand-made RTH days, never through Barb."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from rth_bars import rth_daily

from barb.summary_text import value_text

# From the fixture's second day: each row's prev(close) exists, so st is never unknown.
PERIOD = "2024-01-03:2024-03-28"
MAP = {
    "ret": "(close / prev(close) - 1) * 100",
    "st": "streak(close < prev(close))",
    "next_ret": "next(ret)",
}
FILLED = "reads the 0"


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    """The RTH days of the period with st (the down streak) and next_ret, as pandas has them."""
    daily = rth_daily(minutes)
    ret = (daily["close"] / daily["close"].shift() - 1) * 100
    down = daily["close"] < daily["close"].shift()
    runs = (~down).cumsum()
    daily["st"] = down.astype(int).groupby(runs).cumsum()
    daily["next_ret"] = ret.shift(-1)
    daily["month"] = daily.index.month
    return daily[daily.index >= "2024-01-03"]


def _sentence(stat: str, month: int, fills: int, picks: int, whole: float, alone: float) -> str:
    """The warning for x = stat(if(st == 2, next_ret, 0)) by month, of ``month``."""
    return (
        f"x = {stat}(if(st == 2, next_ret, 0)) reads the 0 of every row where st == 2 is false "
        f"as a value beside next_ret where it is true: month {month} holds {fills:,} such 0s "
        f"and {picks:,} values, so x is {value_text(whole)} there; over the {picks:,} alone it "
        f"is {value_text(alone)}. Over the rows where st == 2 is true only: "
        f"{stat}(if(st == 2, next_ret, 0 / 0)) (0 / 0 is empty, which {stat}() leaves out; "
        'every group stays listed) or "where": "st == 2".'
    )


@pytest.mark.parametrize("stat", ["mean", "median"])
def test_a_statistic_of_a_value_filled_with_0_is_said(engine_settings, days, stat) -> None:
    """Per month: the value Barb gives is the statistic over all the month's days with the 0s
    in; the warning names the month it moves most, its 0s and streak days, and the value
    over those days alone (pandas)."""
    picked = days["st"] == 2
    filled = days["next_ret"].where(picked, 0.0)
    alone = days["next_ret"].where(picked)
    whole = filled.groupby(days["month"]).agg(stat)
    over = alone.groupby(days["month"]).agg(stat)
    assert picked.groupby(days["month"]).sum().min() > 0  # every month has such days
    month = int((whole - over).abs().idxmax())

    query = {
        "period": PERIOD,
        "map": MAP,
        "group_by": "month()",
        "select": ["count(st == 2) as streaks", f"{stat}(if(st == 2, next_ret, 0)) as x"],
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    table = result.table.set_index("month")
    assert table["x"].to_numpy() == pytest.approx(whole.to_numpy())
    inside = days["month"] == month
    fills, picks = int((~picked & inside).sum()), int((picked & inside).sum())
    expected = _sentence(stat, month, fills, picks, whole[month], over[month])
    assert warnings_with(result, FILLED) == [expected]

    # The form the warning gives: each month's value over its streak days alone, unsaid.
    query["select"] = [f"{stat}(if(st == 2, next_ret, 0 / 0)) as x"]
    fixed = ask(query, engine_settings, **RTH_DAILY)
    assert fixed.table["x"].to_numpy() == pytest.approx(over.to_numpy())
    assert warnings_with(fixed, FILLED) == []


def test_a_fill_through_a_map_name_and_in_the_then_branch(engine_settings, days) -> None:
    """if(st < 2, 0.0, next_ret) under a map name, a single row: the 0.0s of the rows where
    st < 2 is true, and the mean over the others (pandas)."""
    picked = ~(days["st"] < 2)
    query = {
        "period": PERIOD,
        "map": {**MAP, "f": "if(st < 2, 0.0, next_ret)"},
        "select": ["mean(f) as x"],
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    whole = days["next_ret"].where(picked, 0.0).mean()
    alone = days["next_ret"][picked].mean()
    assert result.summary.value == pytest.approx(whole)
    assert warnings_with(result, "reads the 0.0") == [
        "x = mean(f) (f = if(st < 2, 0.0, next_ret)) reads the 0.0 of every row where st < 2 "
        "is true as a value beside next_ret where it is false: the rows hold "
        f"{int((~picked).sum()):,} such 0.0s and {int(picked.sum()):,} values, so x is "
        f"{value_text(whole)}; over the {int(picked.sum()):,} alone it is {value_text(alone)}. "
        "Over the rows where st < 2 is false only: mean(if(st < 2, 0 / 0, next_ret)) (0 / 0 "
        'is empty, which mean() leaves out) or "where": "not (st < 2)".'
    ]


@pytest.mark.parametrize(
    "select",
    [
        # A P&L of 0 on a day without a trade, in a sum: meant.
        ["sum(pnl) as total"],
        # A share: mean(if(c, 1, 0)) is mean(c).
        ["mean(if(close > open, 1, 0)) as share"],
        # A Sharpe ratio of a strategy's days, a flat day's return 0.
        ["mean(pnl) / std(pnl) * sqrt(252) as sharpe"],
        # A clipped value, max(ret, 0): the average gain as RSI takes it, 0 on a down day.
        ["mean(if(close - open > 0, close - open, 0)) as avg_gain"],
        # A stop's outcome, -5 points, is no place holder: each stopped trade's result.
        ["mean(if(low <= open - 5, -5, close - open)) as avg_pts"],
        # The empty else: over the trades alone.
        ["mean(if(close > open, close - open, 0 / 0)) as avg"],
        ["max(pnl) as best", "count(pnl > 0) as wins"],
    ],
)
def test_a_fill_that_is_meant_is_not_said(engine_settings, days, select) -> None:
    query = {"period": PERIOD, "map": {"pnl": "if(close > open, close - open, 0)"}}
    result = ask({**query, "select": select}, engine_settings, **RTH_DAILY)
    assert [w for w in result.metadata.warnings if "as a value beside" in w] == []


def test_a_running_total_of_a_filled_pnl_is_not_said(engine_settings, minutes) -> None:
    """pnl = if(entry, close - open, 0) feeding a cumsum in then: the equity curve's total
    (pandas), and no word."""
    daily = rth_daily(minutes)
    daily = daily[daily.index >= "2024-01-03"]
    pnl = np.where(daily["close"] > daily["open"], daily["close"] - daily["open"], 0.0)
    query = {
        "period": PERIOD,
        "map": {"pnl": "if(close > open, close - open, 0)"},
        "select": ["date()", "pnl"],
        "then": {"map": {"equity": "cumsum(pnl)"}, "select": ["last(equity) as total"]},
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.summary.value == pytest.approx(pnl.sum())
    assert [w for w in result.metadata.warnings if "as a value beside" in w] == []
