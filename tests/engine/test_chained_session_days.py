"""Intraday bars of a part of the day (a window, RTH_OPEN, OVERNIGHT) are the session's bars
chained day to day: an indicator on them reads yesterday's last bars of the window, not the
chart's values. Said, naming the functions, with the chart's form of the query; checked with
TA-Lib over 5-minute bars built here from the sample's minutes."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import talib
from asking import ask

from barb.data.store import data_path
from barb.reference import indicators_reference

CHAINED = "chained day to day"


def _chained(result) -> list[str]:
    return [w for w in result.metadata.warnings if CHAINED in w]


def _five_minute(minutes: pd.DataFrame) -> pd.DataFrame:
    """5-minute closes of the given minutes, each bar with its trading date."""
    grouped = minutes.groupby(minutes["timestamp"].dt.floor("5min"))
    return pd.DataFrame({"close": grouped["close"].last(), "date": grouped["trading_date"].first()})


def _share_of_days_below_30(bars: pd.DataFrame) -> float:
    """TA-Lib RSI(14) over ``bars``; the share of 2025 days whose 09:30-10:25 bars dip < 30."""
    rsi = pd.Series(talib.RSI(bars["close"].to_numpy(), 14), index=bars.index)
    clock = bars.index.hour * 60 + bars.index.minute
    first_hour = (clock >= 570) & (clock < 630) & (bars["date"].dt.year == 2025)
    lowest = rsi[first_hour].groupby(bars["date"][first_hour]).min()
    return float((lowest < 30).mean())


@pytest.mark.slow
def test_first_hour_rsi_is_the_windows_series_and_the_warning_gives_the_charts(
    sample_settings,
) -> None:
    """ "Share of 2025 days the 5m RSI(14) dipped below 30 in the first hour": on the window
    it runs on the window's bars alone; the query the warning offers gives the RTH chart's."""
    minutes = pd.read_parquet(
        data_path("NQ", sample_settings),
        columns=["timestamp", "trading_date", "minute", "close"],
        filters=[("trading_date", ">=", pd.Timestamp("2024-06-01"))],
    ).sort_values("timestamp")
    rth = minutes[(minutes["minute"] >= 570) & (minutes["minute"] < 1020)]
    window = minutes[(minutes["minute"] >= 570) & (minutes["minute"] < 630)]
    on_window = _share_of_days_below_30(_five_minute(window))
    on_rth = _share_of_days_below_30(_five_minute(rth))
    assert abs(on_rth - on_window) > 0.05  # what the warning is for

    query = {
        "session": "09:30-10:30",
        "from": "5m",
        "period": "2025",
        "map": {"rsi14": "rsi(close, 14)"},
        "group_by": "date()",
        "select": "min(rsi14) as min_rsi",
        "then": {"select": ["count() as days", "mean(min_rsi < 30) as share"]},
    }
    result = ask(query, sample_settings)
    assert result.summary.values["share"] == pytest.approx(on_window)
    (text,) = _chained(result)
    assert text == (
        "rsi() on 5m bars of RTH_OPEN (09:30-10:30): the session's bars are chained day to "
        "day, so each day's first bars continue from the previous day's last bars before "
        "10:30, not from the bars before 09:30 as on an RTH chart. For a chart's values use "
        '"session": "RTH" and keep the window\'s bars with "where": "time() >= \'09:30\' and '
        "time() < '10:30'\" (the columns are computed on every RTH bar first)."
    )

    session = re.search(r'"session": "(\w+)"', text).group(1)
    where = re.search(r'"where": "(.+?)" \(', text).group(1)
    result = ask({**query, "session": session, "where": where}, sample_settings)
    assert result.summary.values["share"] == pytest.approx(on_rth)
    assert _chained(result) == []


def test_every_function_reading_other_bars_is_named_once(engine_settings) -> None:
    query = {
        "session": "RTH_OPEN",
        "from": "5m",
        "period": "2024-02",
        "map": {
            "sma": "rolling_mean(close, 20)",
            "up": "close > prev(close)",
            "run": "streak(up)",
            "day_run": "streak(up, 'day')",  # restarts each day: reads nothing before it
            "total": "cumsum(close - open)",  # the period's rows only
            "later": "next(close, 3)",
        },
        "where": "close > sma",
        "select": ["mean(ema(close, 9) - sma) as gap", "mean(later - close) as fwd"],
    }
    (text,) = _chained(ask(query, engine_settings))
    assert text.startswith(
        "ema(), next(), prev(), rolling_mean(), streak() on 5m bars of RTH_OPEN (09:30-10:30):"
    )


def test_true_range_on_intraday_bars_is_said_once(engine_settings) -> None:
    """atr() on 5m bars of the first hour: the chained days cover its first bar's reach back;
    the daily bars' true range warning is not given on top."""
    query = {"session": "RTH_OPEN", "from": "5m", "period": "2024-02", "map": {"a": "atr(14)"}}
    result = ask({**query, "select": "mean(a)"}, engine_settings)
    (text,) = _chained(result)
    assert text.startswith("atr() on 5m bars of RTH_OPEN (09:30-10:30)")
    assert not [w for w in result.metadata.warnings if "true range reaches back" in w]


def test_a_session_across_midnight_is_kept_from_eth(engine_settings, minutes) -> None:
    """OVERNIGHT's chart is ETH's; the where the warning offers keeps exactly its bars."""
    query = {"session": "OVERNIGHT", "from": "15m", "period": "2024-02", "select": "count()"}
    (text,) = _chained(ask({**query, "map": {"p": "prev(close)"}}, engine_settings))
    assert text.endswith(
        'use "session": "ETH" and keep the window\'s bars with "where": "time() >= \'18:00\' '
        "or time() < '09:30'\" (the columns are computed on every ETH bar first)."
    )
    where = re.search(r'"where": "(.+?)" \(', text).group(1)
    kept = ask({**query, "session": "ETH", "where": where}, engine_settings)
    stamps = minutes["timestamp"]
    clock = stamps.dt.hour * 60 + stamps.dt.minute
    date = (stamps + pd.Timedelta(hours=6)).dt.normalize()  # 18:00 starts the next date
    overnight = stamps[((clock >= 1080) | (clock < 570)) & (date.dt.month == 2)]
    assert kept.summary.value == overnight.dt.floor("15min").nunique()


@pytest.mark.parametrize(
    ("session", "timeframe", "expr"),
    [
        ("ETH", "5m", "rsi(close, 14)"),
        ("RTH", "5m", "rsi(close, 14)"),  # an RTH-only chart chains days the same way
        ("CASH", "15m", "ema(close, 20)"),  # leaves out only RTH's post-cash hour
        ("RTH_OPEN", "daily", "rsi(close, 14)"),  # an RSI of first-hour closes, as meant
        ("RTH_OPEN", "5m", "close - open"),
        ("RTH_OPEN", "5m", "vwap()"),  # anchored at each day's first bar
        ("09:30-10:30", "5m", "cumsum(close - open)"),
        ("OVERNIGHT", "1m", "streak(close > open, 'day')"),
    ],
)
def test_no_warning_when_nothing_reads_across_the_days(
    engine_settings, session, timeframe, expr
) -> None:
    query = {
        "session": session,
        "from": timeframe,
        "period": "2024-02",
        "map": {"x": expr},
        "select": "mean(x)",
    }
    assert _chained(ask(query, engine_settings)) == []


def test_rsi_on_the_window_is_the_windows_bars_alone(engine_settings, minutes) -> None:
    """The warning says what is computed: RSI over the window's 5m bars alone, day after day."""
    stamps = minutes["timestamp"]
    clock = stamps.dt.hour * 60 + stamps.dt.minute
    window = minutes[(clock >= 570) & (clock < 630)]
    closes = window.groupby(window["timestamp"].dt.floor("5min"))["close"].last()
    rsi = pd.Series(talib.RSI(closes.to_numpy(), 14), index=closes.index)
    query = {
        "session": "09:30-10:30",
        "from": "5m",
        "period": "2024-03",
        "map": {"r": "rsi(close, 14)"},
        "select": "r",
    }
    result = ask(query, engine_settings)
    march = rsi[rsi.index.month == 3]
    np.testing.assert_allclose(result.table["r"], march.to_numpy(), atol=1e-6, rtol=0)
    assert _chained(result)


def test_get_indicators_says_intraday_indicators_chain_the_days() -> None:
    [line] = [line for line in indicators_reference().splitlines() if CHAINED[:7] in line]
    assert "runs on the session's bars only, chained across days" in line
    assert "run on RTH (or ETH)" in line
    assert "\"where\": \"time() >= '09:30' and time() < '10:30'\"" in line
