"""The running functions of a then stage over the first stage's rows (p38b Q15-Q17).

An ORB backtest on 1m bars gives each trading date one row (group_by date(), as the
stop_and_target concept shows) and, as backtest_basics says, counts the most losses in a row
as max of streak(pnl < 0) in then.map. That failed: "streak() needs the 'timestamp' column",
with a hint ("group_by": ["streak()", "date()"]) that errors too and would count minutes.
With the rows given a timestamp it said the streak "runs on across sessions" and pointed to
streak(cond, 'day'), which over one row a day never passes 1. Here the trades are built from
the hand-made minute bars in pandas, and their runs of losses counted in plain Python.
"""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask, warnings_with
from rth_bars import rth_minutes

from barb import execute
from barb.charts.columns import axis_text, unit
from barb.charts.words import words_for

# Each RTH day: the first 15 minutes' direction is the side, entered at 09:44's close and
# out at the day's last close; a flat first 15 minutes is no trade (P&L 0).
FIRST_STAGE = {
    "session": "RTH",
    "from": "1m",
    "map": {
        "entry": "session_close('09:30-09:45')",
        "move": "entry - session_open('09:30-09:45')",
    },
    "group_by": "date()",
    "select": ["first(move) as move", "first(entry) as entry", "last(close) as exit"],
}
SIDE = "if(move > 0, 1, if(move < 0, -1, 0))"


def _then(**then: object) -> dict:
    return {**FIRST_STAGE, "then": then}


@pytest.fixture(scope="module")
def trades(minutes: pd.DataFrame) -> pd.DataFrame:
    """Each RTH date's trade from the minute bars, with pandas: side, P&L and month."""
    rth = rth_minutes(minutes)
    clock = rth["timestamp"].dt.strftime("%H:%M")
    window = rth[clock < "09:45"].groupby("day")
    days = pd.DataFrame(
        {
            "open15": window["open"].first(),
            "entry": window["close"].last(),
            "exit": rth.groupby("day")["close"].last(),
        }
    )
    move = days["entry"] - days["open15"]
    days["side"] = (move > 0).astype(int) - (move < 0).astype(int)
    days["pnl"] = days["side"] * (days["exit"] - days["entry"])
    return days


def _losses_in_a_row(pnl: list[float], restart: list[object] | None = None) -> list[int]:
    """How many losing trades in a row end at each one, counted one trade at a time; with
    ``restart``, the count starts again where its value changes (a new month)."""
    runs, run = [], 0
    for i, value in enumerate(pnl):
        if restart is not None and i and restart[i] != restart[i - 1]:
            run = 0
        run = run + 1 if value < 0 else 0
        runs.append(run)
    return runs


def test_the_losing_trades_in_a_row_of_a_minute_backtest_are_counted_over_its_days(
    engine_settings, trades
) -> None:
    query = _then(
        map={"side": SIDE, "pnl": "side * (exit - entry)", "loss_run": "streak(pnl < 0)"},
        select=["date", "pnl", "loss_run"],
    )
    result = ask(query, engine_settings)
    runs = _losses_in_a_row(trades["pnl"].tolist())
    assert max(runs) >= 3  # the data holds a run worth counting
    assert result.table["pnl"].tolist() == pytest.approx(trades["pnl"].tolist())
    assert result.table["loss_run"].tolist() == runs
    # Rows one a trading date: a run across them is the run asked for, nothing to say.
    assert not warnings_with(result, "streak()")


def test_the_most_losses_in_a_row_are_a_count_of_days_on_the_chart(engine_settings, trades) -> None:
    """The chart wrote "max_losses_in_row = 17 bars": the rows counted are the first
    stage's days, not its 1m bars."""
    query = _then(
        map={"side": SIDE, "pnl": "side * (exit - entry)", "loss_run": "streak(pnl < 0)"},
        select=["max(loss_run) as most_losses", "count() as trades"],
    )
    result = ask(query, engine_settings)
    assert result.summary.values["most_losses"] == max(_losses_in_a_row(trades["pnl"].tolist()))
    assert unit("most_losses", result) == "days"
    assert axis_text("loss_run", result, words_for("ru")) == "loss_run (дни)"
    # count() of a second stage counts its rows, shown as a plain number, as before.
    assert unit("trades", result) is None


def test_a_streak_restarting_each_month_in_then_restarts_by_the_rows_dates(
    engine_settings, trades
) -> None:
    query = _then(
        map={
            "pnl": f"({SIDE}) * (exit - entry)",
            "run": "streak(pnl < 0, 'month')",
            "month_pnl": "cumsum(pnl, 'month')",
        },
        select=["date", "run", "month_pnl"],
    )
    result = ask(query, engine_settings)
    months = [day.month for day in trades.index]
    assert result.table["run"].tolist() == _losses_in_a_row(trades["pnl"].tolist(), months)
    by_month = trades["pnl"].groupby(months).cumsum()
    assert result.table["month_pnl"].tolist() == pytest.approx(by_month.tolist())


def test_a_streak_restarting_each_day_over_rows_one_a_day_is_refused(engine_settings) -> None:
    """The old warning's advice, streak(pnl < 0, 'day'), over one row a date is 1 at most."""
    query = _then(
        map={"pnl": f"({SIDE}) * (exit - entry)", "run": "streak(pnl < 0, 'day')"},
        select="max(run)",
    )
    said = execute(query, "NQ", settings=engine_settings).to_dict()
    assert said["error_type"] == "ArgumentError" and said["step"] == "then.map", said
    assert "each row here is one" in said["message"]
    assert "streak(pnl < 0) is the losing trades (days) in a row" in said["hint"]


def test_a_bar_function_in_then_is_pointed_to_the_first_stages_map(engine_settings) -> None:
    """session_high('RTH') in then was told to go in "group_by": ["session_high()",
    "date()"], which takes no session and is no group key; the form the hint gives works."""
    wrong = _then(map={"h": "session_high('RTH')"}, select="max(h)")
    said = execute(wrong, "NQ", settings=engine_settings).to_dict()
    assert said["error_type"] == "UnknownColumn" and said["step"] == "then.map", said
    assert "group_by" not in said["hint"]
    assert "compute session_high() in the first stage's map" in said["hint"]
    followed = {
        **FIRST_STAGE,
        "map": {**FIRST_STAGE["map"], "h": "session_high('RTH')"},
        "select": [*FIRST_STAGE["select"], "first(h) as h", "max(high) as top"],
        "then": {"map": {"gap": "h - top"}, "select": "max(abs(gap))"},
    }
    assert ask(followed, engine_settings).summary.value == 0


def test_runs_over_one_bar_a_day_are_not_said_to_run_across_sessions(
    engine_settings, minutes
) -> None:
    """A one-minute session has one bar a date: its runs are runs of days, as asked."""
    bars = rth_minutes(minutes)
    last = bars[bars["timestamp"].dt.strftime("%H:%M") == "16:59"]
    runs = _losses_in_a_row((last["open"] - last["close"]).tolist())  # up bars: open < close
    query = {
        "session": "16:59-17:00",
        "from": "1m",
        "map": {"up_run": "streak(close > open)"},
        "select": "max(up_run)",
    }
    result = ask(query, engine_settings)
    assert result.summary.value == max(runs)
    assert not warnings_with(result, "runs on across sessions")
    # Bars of many a day still run on through the night, and say so.
    hours = ask({**query, "session": "RTH", "from": "1h"}, engine_settings)
    assert warnings_with(hours, "runs on across sessions")
