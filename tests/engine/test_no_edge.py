"""A single row's win rate and mean result say when they are within noise of no edge: "buy
the open, sell the close" over all of NQ answered win 0.5109 and mean +0.0334% with no word,
while 2,375 wins of 4,649 are within noise of a coin flip (binomial p = 0.14) and the mean is
1.74 standard errors from 0 (p36a Q10). Expected values from pandas over the hand-made bars
and scipy.stats' exact binomial test, one-sample t-test and t quantile, never through Barb.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask
from rth_bars import rth_daily
from scipy import stats
from windows_taken import one_at_a_time

from barb.summary_text import value_text

PNL = {"pnl": "close - open", "pnl_pct": "(close - open) / open * 100"}
TWO_DOWN = "close < prev(close) and prev(close) < prev(close, 2)"


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    daily = rth_daily(minutes)
    daily["pnl"] = daily["close"] - daily["open"]
    daily["pnl_pct"] = daily["pnl"] / daily["open"] * 100
    daily["next_ret"] = (daily["close"].shift(-1) / daily["close"] - 1) * 100
    prev = daily["close"].shift()
    daily["two_down"] = ((daily["close"] < prev) & (prev < daily["close"].shift(2))).fillna(False)
    return daily


def _two(value: float) -> str:
    return f"{float(f'{value:.2g}'):g}"


def _coin_flip(name: str, value: float, moves: pd.Series) -> tuple[str, int, str]:
    """The share's part (name and value, rows, what it is within noise of): the moves
    above 0 against those below by the exact binomial test (flat ones left out; empty ones
    are unknown, out of the share too), its band 2 standard errors of a half."""
    up, down = int((moves > 0).sum()), int((moves < 0).sum())
    flat = int((moves == 0).sum())
    p = stats.binomtest(up, up + down, 0.5).pvalue
    assert p >= 0.05  # within noise: else the test says nothing of the sentence
    rows = f"{up:,} rows against {down:,}, leaving out {flat:,} flat: " if flat else ""
    return (
        f"{name} {value_text(value)}",
        int(moves.notna().sum()),
        f"is within noise of a coin flip ({rows}50% ± {_two(100 / np.sqrt(up + down))} "
        f"percentage points at 2 standard errors; binomial p = {_two(p)})",
    )


def _zero(name: str, value: float, values: pd.Series) -> tuple[str, int, str]:
    """The mean's part: its band max(2, t quantile) standard errors, and its t against 0."""
    known = values.dropna()
    test = stats.ttest_1samp(known, 0.0)
    errors = max(2.0, stats.t.ppf(0.975, len(known) - 1))
    assert abs(test.statistic) < errors
    band = errors * stats.sem(known)
    return (
        f"{name} {value_text(value)}",
        len(known),
        f"is within noise of 0 (± {_two(band)} at {errors:.3g} standard errors; t = "
        f"{test.statistic:.2f})",
    )


def _sentence(*parts: tuple[str, int, str]) -> list[str]:
    """The warning: the rows said once when every part is over the same ones."""
    sizes = {rows for _, rows, _ in parts}
    if len(sizes) == 1:
        said = "; ".join(f"{value} {text}" for value, _, text in parts)
        return [f"No edge shown over these {sizes.pop():,} rows: {said}."]
    said = "; ".join(f"{value} of {rows:,} rows {text}" for value, rows, text in parts)
    return [f"No edge shown: {said}."]


def _no_edge(result) -> list[str]:
    return [w for w in result.metadata.warnings if w.startswith("No edge shown")]


def test_a_win_rate_and_a_mean_result_within_noise_say_so(engine_settings, days) -> None:
    """Open to close over the 62 days: 31 up and 31 down, the mean -0.59 standard errors
    from 0, in percent and in points; count() is no statistic of a result."""
    result = ask(
        {
            "map": PNL,
            "select": [
                "count()",
                "mean(pnl > 0) as win_rate",
                "mean(pnl_pct) as avg_pct",
                "mean(pnl) as avg_pts",
            ],
        },
        engine_settings,
        **RTH_DAILY,
    )
    values = result.summary.values
    assert values["count"] == len(days)
    assert values["win_rate"] == pytest.approx((days["pnl"] > 0).mean())
    assert values["avg_pct"] == pytest.approx(days["pnl_pct"].mean())
    assert _no_edge(result) == _sentence(
        _coin_flip("win_rate", values["win_rate"], days["pnl"]),
        _zero("avg_pct", values["avg_pct"], days["pnl_pct"]),
        _zero("avg_pts", values["avg_pts"], days["pnl"]),
    )


def test_next_day_moves_read_through_hoisting_and_scaled(engine_settings, days) -> None:
    """next(close) > close and its return, both hoisted before the rows are cut, the share
    scaled to a percent: the last day has no next close, its move unknown."""
    result = ask(
        {
            "select": [
                "mean(next(close) > close) * 100 as up_pct",
                "mean((next(close) / close - 1) * 100) as next_ret",
            ]
        },
        engine_settings,
        **RTH_DAILY,
    )
    values = result.summary.values
    moves = days["close"].shift(-1) - days["close"]
    assert values["up_pct"] == pytest.approx((moves > 0)[moves.notna()].mean() * 100)
    assert _no_edge(result) == _sentence(
        _coin_flip("up_pct", values["up_pct"], moves),
        _zero("next_ret", values["next_ret"], days["next_ret"]),
    )


def test_flat_bars_are_neither_wins_nor_losses(engine_settings, minutes) -> None:
    """1-minute bars close where they opened a third of the time: 2024-01-02's 1,380 ETH
    minutes were 480 up, 452 down, 448 flat. Against all of them 480 is far below half (p
    < 1e-29); against the 932 that moved it is a coin flip (p = 0.38)."""
    result = ask(
        {"session": "ETH", "from": "1m", "period": "2024-01-02", "select": "mean(close > open)"},
        engine_settings,
    )
    day = minutes[(minutes["timestamp"] + pd.Timedelta(hours=6)).dt.normalize() == "2024-01-02"]
    moves = day["close"] - day["open"]
    assert result.summary.value == pytest.approx((moves > 0).mean())
    assert _no_edge(result) == _sentence(
        _coin_flip("mean_close_gt_open", result.summary.value, moves)
    )


def test_no_word_on_a_clear_edge_or_a_share_whose_baseline_is_no_coin_flip(
    engine_settings, days
) -> None:
    """The high's distance above the open less 10 points takes both signs and is 3.5
    standard errors above 0; the up days' move is above 0 on all 31 of them. Shares near
    half that a coin flip is not the baseline of: days above a 5-day mean (a level, not a
    move), ranges above their median and returns above theirs (a threshold, not 0), and a
    trade stopped at 20 points (its wins are under half by design); each is within a
    binomial test's noise of 50%, and says nothing."""
    edge = days["high"] - days["open"] - 10
    assert edge.min() < 0 < edge.max() and stats.ttest_1samp(edge, 0.0).statistic > 3
    ranges = days["high"] - days["low"]
    returns = (days["close"] / days["close"].shift() - 1) * 100
    stopped = np.where(days["low"] <= days["open"] - 20, -20.0, days["pnl"])
    shares = {
        "above": days["close"] > days["close"].rolling(5).mean(),
        "wide": ranges > ranges.median(),
        "strong": returns > returns.median(),
        "stopped_win": pd.Series(stopped > 0),
    }
    for share in shares.values():
        assert stats.binomtest(int(share.sum()), len(share)).pvalue >= 0.05
    result = ask(
        {
            "map": {
                "stopped": "if(low <= open - 20, -20, close - open)",
                "up_move": "if(close > open, close - open, 0 / 0)",
            },
            "select": [
                "mean(high - open - 10) as edge",
                "mean(up_move > 0) as up_win",
                "mean(close > rolling_mean(close, 5)) as above",
                f"mean(range > {ranges.median()}) as wide",
                f"mean((close / prev(close) - 1) * 100 > {returns.median()}) as strong",
                "mean(stopped > 0) as stopped_win",
            ],
        },
        engine_settings,
        **RTH_DAILY,
    )
    assert result.summary.values["edge"] == pytest.approx(edge.mean())
    assert result.summary.values["up_win"] == 1
    assert result.summary.values["wide"] == pytest.approx(shares["wide"].mean())
    assert _no_edge(result) == []


def test_a_where_rows_stay_setup_noise_alone(engine_settings, days) -> None:
    """After two down days (few rows) and every other day (most rows), setup_noise gives
    each mean its band beside the other days': said once, never against a coin flip or 0,
    which are no condition's baseline. CL's 2,379 days above the 20-day mean read "No edge
    shown: up_share 0.5149 is within noise of a coin flip" while the days below gave 0.4674
    (Fisher p = 0.0012, p40a #15)."""
    query = {"map": PNL, "select": ["mean(pnl > 0) as win", "mean(pnl_pct) as avg_pct"]}
    for where in (TWO_DOWN, f"not ({TWO_DOWN})"):
        result = ask({**query, "where": where}, engine_settings, **RTH_DAILY)
        setup = [w for w in result.metadata.warnings if "of the period's rows" in w]
        # Each mean in one of them (over the same rows both in one sentence).
        for name in ("win", "avg_pct"):
            assert len([w for w in setup if w.startswith(f"{name} is ") or f" {name} " in w]) == 1
        assert 1 <= len(setup) <= 2
        assert _no_edge(result) == []
    # Without a where the rows kept are all of them, and the test is against no edge.
    result = ask(query, engine_settings, **RTH_DAILY)
    values = result.summary.values
    assert _no_edge(result) == _sentence(
        _coin_flip("win", values["win"], days["pnl"]),
        _zero("avg_pct", values["avg_pct"], days["pnl_pct"]),
    )


def test_a_second_stage_over_the_first_stages_trades(engine_settings, days) -> None:
    """The days that opened above the day before's close, listed as trades by the first
    stage, their win rate and mean taken by the second."""
    result = ask(
        {
            "map": PNL,
            "where": "open > prev(close)",
            "select": ["pnl", "pnl_pct"],
            "then": {"select": ["mean(pnl_pct) as avg_pct", "mean(pnl > 0) as win"]},
        },
        engine_settings,
        **RTH_DAILY,
    )
    trades = days[days["open"] > days["close"].shift()]
    values = result.summary.values
    assert _no_edge(result) == _sentence(
        _zero("avg_pct", values["avg_pct"], trades["pnl_pct"]),
        _coin_flip("win", values["win"], trades["pnl"]),
    )


def test_a_value_read_ahead_over_overlapping_windows_is_counted_one_at_a_time(
    engine_settings, days
) -> None:
    """Each day's move 5 days ahead: the 57 days with one overlap, 4 of every 5 windows
    sharing days with the one before, and are worth the rows taken so that no two share a
    day (as setup_noise counts them): the mean's standard error over those, a share's moves
    scaled to them. NQ's 4,627 days of 20-day moves are 232 outcomes, a band 4.5 times as
    wide as 4,627 independent ones give. A move one day ahead stays counted row by row."""
    result = ask(
        {
            "map": {"fwd": "(next(close, 5) / close - 1) * 100"},
            "select": ["mean(fwd) as avg_fwd5", "mean(fwd > 0) as win"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    fwd = (days["close"].shift(-5) / days["close"] - 1) * 100
    known = fwd.dropna()
    taken = one_at_a_time(np.flatnonzero(fwd.notna().to_numpy()), 5)
    assert taken < len(known) / 4
    error = known.std(ddof=1) / np.sqrt(taken)
    errors = max(2.0, stats.t.ppf(0.975, taken - 1))
    t = known.mean() / error
    assert abs(t) < errors
    up, down = int((known > 0).sum()), int((known < 0).sum())
    assert up + down == len(known)  # no flat 5-day move here
    hits, misses = round(up * taken / len(known)), round(down * taken / len(known))
    p = stats.binomtest(hits, hits + misses, 0.5).pvalue
    assert p >= 0.05
    values = result.summary.values
    counted = (
        f"the {len(known):,} rows whose 5-day windows overlap, counted as the {taken:,} "
        "taken so that no two share a day"
    )
    assert _no_edge(result) == [
        f"No edge shown over {counted}: avg_fwd5 {value_text(values['avg_fwd5'])} is within "
        f"noise of 0 (± {_two(errors * error)} at {errors:.3g} standard errors; t = {t:.2f}); "
        f"win {value_text(values['win'])} is within noise of a coin flip (50% ± "
        f"{_two(100 / np.sqrt(hits + misses))} percentage points at 2 standard errors; "
        f"binomial p = {_two(p)})."
    ]
    # One day ahead: no windows to overlap, every row its own outcome.
    one = ask(
        {
            "map": {"fwd": "(next(close) / close - 1) * 100"},
            "select": ["mean(fwd) as avg", "mean(fwd > 0) as up"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    values = one.summary.values
    assert _no_edge(one) == _sentence(
        _zero("avg", values["avg"], days["next_ret"]),
        _coin_flip("up", values["up"], days["next_ret"]),
    )


def test_a_months_count_beside_its_share_is_no_edge_to_test(engine_settings, days) -> None:
    """p48d C2: "how many times did ES close above its open in December", count(close >
    open) = 15 and mean(close > open) = 0.6818 of 22, was told "No edge shown … within noise
    of a coin flip (binomial p = 0.078)": a plain count of one month. Over a month with the
    condition counted beside it, the share is the count's fraction and is not tested; the
    share alone, or over the whole data, still is."""
    query = {"select": ["count(close > open) as up", "mean(close > open) as share"]}
    february = days.loc["2024-02"]
    month = ask({**query, "period": "2024-02"}, engine_settings, **RTH_DAILY)
    values = month.summary.values
    assert values["up"] == int((february["pnl"] > 0).sum())
    assert values["share"] == pytest.approx((february["pnl"] > 0).mean())
    assert _no_edge(month) == []
    alone = ask(
        {"period": "2024-02", "select": "mean(close > open) as share"}, engine_settings, **RTH_DAILY
    )
    assert _no_edge(alone) == _sentence(_coin_flip("share", values["share"], february["pnl"]))
    whole = ask(query, engine_settings, **RTH_DAILY)
    share = whole.summary.values["share"]
    assert _no_edge(whole) == _sentence(_coin_flip("share", share, days["pnl"]))
