"""The backtest concepts' queries against trades simulated with pandas (p32e Q19, Q15, Q6/17).

"stop and target": daily bars cannot order a stop against an entry made during the day (the
ORB long's stop at the range's low read 100% stopped, -99.81 points, where minute bars give
55.6% and +3.97); the concept's minute-bar query is checked trade by trade against a loop
over the fixture's RTH minutes. "backtest basics": win rate, average win and loss, profit
factor, expectancy, most losses in a row and the drawdown of an equity curve that starts at
0, each against its pandas formula.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rth_bars import rth_daily, rth_minutes

from barb import execute
from barb.instruments import load_instrument
from barb.session_concepts import session_concepts
from barb.session_times import SessionTimes


def _concept_query(name: str) -> dict:
    return session_concepts()[name].text_for(SessionTimes(load_instrument("NQ"))).query


def _run(query: dict, settings) -> dict:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result.summary.values


def _orb_trades(minutes: pd.DataFrame) -> pd.DataFrame:
    """Each day's long on the first RTH minute from 09:45 whose high breaks the 09:30-09:45
    high: out at the range's low or one range above it, whichever a minute from the entry
    on reaches first (the stop when one minute reaches both), else at the 17:00 close."""
    rth = rth_minutes(minutes)
    rth["minute"] = rth["timestamp"].dt.hour * 60 + rth["timestamp"].dt.minute
    trades = []
    for day, bars in rth.groupby("day"):
        opening, rest = bars[bars["minute"] < 585], bars[bars["minute"] >= 585]
        high, low = opening["high"].max(), opening["low"].min()
        target = high + (high - low)
        broke = np.flatnonzero(rest["high"].to_numpy() > high)
        if not len(broke):
            continue
        after = rest.iloc[broke[0] :]
        stops = np.flatnonzero(after["low"].to_numpy() <= low)
        targets = np.flatnonzero(after["high"].to_numpy() >= target)
        stop = stops[0] if len(stops) else np.inf
        hit = targets[0] if len(targets) else np.inf
        if stop <= hit and np.isfinite(stop):
            kind, pnl = "stop", low - high
        elif np.isfinite(hit):
            kind, pnl = "target", target - high
        else:
            kind, pnl = "close", bars["close"].iloc[-1] - high
        trades.append((day, kind, pnl))
    return pd.DataFrame(trades, columns=["day", "kind", "pnl"])


def test_the_stop_and_target_query_orders_them_by_the_minute(engine_settings, minutes) -> None:
    trades = _orb_trades(minutes)
    assert set(trades["kind"]) == {"stop", "target", "close"}  # the data has all three
    got = _run(_concept_query("stop_and_target"), engine_settings)
    assert got["trades"] == len(trades)
    assert got["stop_rate"] == pytest.approx((trades["kind"] == "stop").mean())
    assert got["target_rate"] == pytest.approx((trades["kind"] == "target").mean())
    assert got["win_rate"] == pytest.approx((trades["pnl"] > 0).mean())
    assert got["exp_pts"] == pytest.approx(trades["pnl"].mean())


def test_daily_bars_call_every_breakout_stopped(engine_settings, minutes) -> None:
    """What the concept says of the daily form: the day's low includes the range's."""
    days = rth_daily(minutes)
    trades = _orb_trades(minutes)
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"orl": "session_low('09:30-09:45')"},
        "where": "high > session_high('09:30-09:45')",
        "select": ["count() as trades", "mean(low <= orl) as stop_rate"],
    }
    got = _run(query, engine_settings)
    assert got == {"trades": len(trades), "stop_rate": 1}
    assert (trades["kind"] == "stop").mean() < 1 and len(trades) < len(days)


def test_the_backtest_statistics_match_pandas(engine_settings, minutes) -> None:
    days = rth_daily(minutes)
    pnl = days["close"] - days["open"]
    wins, losses = pnl[pnl > 0], pnl[pnl < 0]
    equity = pnl.cumsum()
    drawdown = equity - np.maximum(equity.cummax(), 0)
    losing = pnl < 0
    runs = losing.groupby((~losing).cumsum()).sum()

    got = _run(_concept_query("backtest_basics"), engine_settings)
    assert got["trades"] == len(pnl)
    assert got["win_rate"] == pytest.approx((pnl > 0).mean())
    assert got["avg_win"] == pytest.approx(wins.mean())
    assert got["avg_loss"] == pytest.approx(losses.mean())
    assert got["profit_factor"] == pytest.approx(wins.sum() / -losses.sum())
    assert got["expectancy"] == pytest.approx(pnl.mean())
    assert got["most_losses_in_a_row"] == runs.max()
    assert got["max_drawdown"] == pytest.approx(drawdown.min())
    assert got["total"] == pytest.approx(equity.iloc[-1])


def test_the_drawdown_counts_losses_before_the_first_high(engine_settings, minutes) -> None:
    """A curve that loses from its first trade: equity - cummax(equity) read the first
    trade's loss as no drawdown (p32e Q15: the 2022 Mondays -2,576.75 for -2,708.25)."""
    days = rth_daily(minutes)
    pnl = days["close"] - days["open"]
    start = int(np.flatnonzero(pnl.to_numpy() < 0)[0])  # a period that starts with a loss
    pnl = pnl.iloc[start : start + 10]
    equity = pnl.cumsum()
    from_zero = (equity - np.maximum(equity.cummax(), 0)).min()
    assert (equity - equity.cummax()).min() > from_zero  # the data tells them apart

    query = _concept_query("backtest_basics")
    period = f"{pnl.index[0]:%Y-%m-%d}:{pnl.index[-1]:%Y-%m-%d}"
    got = _run(query | {"period": period}, engine_settings)
    assert got["max_drawdown"] == pytest.approx(from_zero)
