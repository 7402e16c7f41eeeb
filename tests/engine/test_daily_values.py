"""daily(expr, lag=1): an expression over the session's daily bars, brought onto intraday rows.

"How often is a stop 1×ATR(14) below the open hit before a target 1×ATR above, on 1m bars"
had no form: atr(14) on 1m bars is the 1-minute ATR (NQ 2025: 16 points against the daily
361), and the stop-first share came out 0.39 for 0.074 (p35c C1). Checked here against
TA-Lib's ATR over RTH daily bars built with pandas from the minute fixture, which has a
closed date (2024-01-15: no bars at all).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import talib
from asking import ask, warnings_with
from rth_bars import rth_daily, rth_minutes

from barb import execute
from barb.column_units import first_map_unit
from barb.instruments import load_instrument
from barb.reference import describe_concept, indicators_reference, query_reference
from barb.script.parser import parse_expression
from barb.script.reach import reach
from barb.script.warmup import ROW
from barb.summary_text import value_text

# The fixture's closed date (no bars at all), and the trading dates either side of it.
CLOSED, BEFORE, AFTER = (pd.Timestamp(d) for d in ("2024-01-15", "2024-01-12", "2024-01-16"))


def _atr(days: pd.DataFrame, n: int) -> pd.Series:
    values = talib.ATR(*(days[c].to_numpy(dtype=float) for c in ("high", "low", "close")), n)
    return pd.Series(values, index=days.index)


def _per_date(result) -> pd.DataFrame:
    table = result.table.copy()
    table.index = pd.DatetimeIndex(pd.to_datetime(table["date"]))
    return table


@pytest.mark.parametrize(
    ("bars", "period"),
    # Across the closed date; and a period whose ATR warms up on the bars before it.
    [("1m", "2024-01-16:2024-02-09"), ("5m", "2024-03")],
)
def test_daily_atr_is_talib_atr_of_the_rth_days(engine_settings, minutes, bars, period) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": bars,
            "period": period,
            "map": {"a1": "daily(atr(14))", "a0": "daily(atr(14), 0)", "s1": "daily(atr(3))"},
            "group_by": "date()",
            "select": [
                "first(a1) as a1",
                "first(a0) as a0",
                "first(s1) as s1",
                "max(a1) - min(a1) as moved",
            ],
        },
        engine_settings,
    )
    got = _per_date(result)
    days = rth_daily(minutes)
    atr14, atr3 = _atr(days, 14), _atr(days, 3)
    # Lag 1: the trading date before (the closed date has no bar, so it is stepped over).
    np.testing.assert_allclose(got["a1"], atr14.shift(1).reindex(got.index), rtol=1e-9)
    np.testing.assert_allclose(got["a0"], atr14.reindex(got.index), rtol=1e-9)
    np.testing.assert_allclose(got["s1"], atr3.shift(1).reindex(got.index), rtol=1e-9)
    assert got["a1"].notna().sum() >= 10
    # One value all day: a stop set at the open stays where it was set.
    assert (got["moved"].dropna() == 0).all()
    if bars == "1m":
        assert CLOSED not in days.index
        assert got.loc[AFTER, "s1"] == pytest.approx(atr3[BEFORE], rel=1e-9)


def test_stop_or_target_first_on_minute_bars(engine_settings, minutes) -> None:
    """The tester's question, at ±0.5 daily ATR from the RTH open (the fixture's days
    rarely move a whole ATR): first touch of each level within the day, a tie counted as
    the stop; against pandas over the RTH minutes."""
    result = ask(
        {
            "session": "RTH",
            "from": "1m",
            "period": "2024-02-01:2024-03-28",
            "map": {
                "atr": "daily(atr(14))",
                "o": "session_open('RTH')",
                "t": "hour() * 60 + minute()",
                "stop_t": "if(low <= o - 0.5 * atr, t, 9999)",
                "target_t": "if(high >= o + 0.5 * atr, t, 9999)",
            },
            "group_by": "date()",
            "select": ["min(stop_t) as s", "min(target_t) as g"],
            "then": {
                "map": {"stopped": "s < 9999 and s <= g", "won": "g < s"},
                "select": ["count() as days", "sum(stopped) as stops", "sum(won) as targets"],
            },
        },
        engine_settings,
    )
    atr = _atr(rth_daily(minutes), 14).shift(1)
    stops = targets = days = 0
    for day, bars in rth_minutes(minutes).groupby("day"):
        if day < pd.Timestamp("2024-02-01"):
            continue
        days += 1
        size = 0.5 * atr[day]
        opened = bars["open"].iloc[0]
        stop = np.flatnonzero(bars["low"].to_numpy() <= opened - size)
        target = np.flatnonzero(bars["high"].to_numpy() >= opened + size)
        first_stop = stop[0] if len(stop) else np.inf
        first_target = target[0] if len(target) else np.inf
        stops += bool(len(stop)) and first_stop <= first_target
        targets += first_target < first_stop
    assert stops > 0 and targets > 0
    assert result.summary.values == {"days": days, "stops": stops, "targets": targets}


def test_a_window_session_reads_its_own_daily_bars(engine_settings, minutes) -> None:
    """As session_high() does: on '09:30-10:30' bars, the window's daily bars."""
    result = ask(
        {
            "session": "09:30-10:30",
            "from": "5m",
            "period": "2024-03",
            "map": {"r0": "daily(range, 0)", "a1": "daily(atr(5))"},
            "group_by": "date()",
            "select": ["first(r0) as r0", "first(a1) as a1"],
        },
        engine_settings,
    )
    got = _per_date(result)
    days = _window_days(minutes, 570, 630)
    np.testing.assert_allclose(got["r0"], (days["high"] - days["low"]).reindex(got.index))
    np.testing.assert_allclose(got["a1"], _atr(days, 5).shift(1).reindex(got.index), rtol=1e-9)


def _window_days(minutes: pd.DataFrame, start: int, end: int) -> pd.DataFrame:
    """Daily bars of the minutes from ``start`` to ``end`` (minutes of the day), by date."""
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    window = minutes[(minute >= start) & (minute < end)]
    return window.groupby(window["timestamp"].dt.normalize()).agg(
        high=("high", "max"), low=("low", "min"), close=("close", "last")
    )


def test_a_part_of_the_day_reads_the_named_sessions_daily_bars(engine_settings, minutes) -> None:
    """ "First hour above half the daily ATR" on RTH_OPEN bars read the first hour's own ATR,
    whose true range runs from yesterday's 10:29 close: 139 NQ days of 2024 against 75 with
    the RTH ATR (p36b M1). daily(atr(5), 1, 'RTH') reads RTH's daily bars; without a session
    it reads the window's, and says so with both averages over the dates."""
    result = ask(
        {
            "session": "RTH_OPEN",
            "from": "5m",
            "period": "2024-03",
            "map": {"own": "daily(atr(5))", "rth": "daily(atr(5), 1, 'RTH')"},
            "group_by": "date()",
            "select": ["first(own) as own", "first(rth) as rth"],
        },
        engine_settings,
    )
    got = _per_date(result)
    own = _atr(_window_days(minutes, 570, 630), 5).shift(1).reindex(got.index)
    rth = _atr(rth_daily(minutes), 5).shift(1).reindex(got.index)
    np.testing.assert_allclose(got["own"], own, rtol=1e-9)
    np.testing.assert_allclose(got["rth"], rth, rtol=1e-9)
    assert not np.allclose(rth, own)  # two sessions, two ATRs
    [said] = warnings_with(result, "daily(atr(5)) on RTH_OPEN (09:30-10:30) bars")
    assert "true range reaches back" in said
    assert f"{value_text(own.mean())} on average over {len(got)} dates" in said
    assert f"daily(atr(5), 1, 'RTH'), is {value_text(rth.mean())}." in said
    # The named session's daily() is what it says: nothing to add.
    assert not warnings_with(result, "daily(atr(5), 1, 'RTH') on")


def test_the_whole_session_says_nothing_of_its_own_daily_bars(engine_settings) -> None:
    result = ask(
        {"session": "RTH", "from": "5m", "period": "2024-03", "map": {"a": "daily(atr(5))"}},
        engine_settings,
        select="mean(a)",
    )
    assert not warnings_with(result, "own daily bars")
    assert not warnings_with(result, "known only at its close")


@pytest.mark.parametrize("lag", [0, 1, 2])
def test_lag_0_is_said_to_see_the_dates_close(engine_settings, lag) -> None:
    """daily(high, 0) on the 09:30 bar is the high the day has not made yet: a rule with it
    looks ahead (p36b M2). Lags 1 and up are known at the open and say nothing."""
    result = ask(
        {
            "session": "RTH",
            "from": "5m",
            "period": "2024-03",
            "map": {"dh": f"daily(high, {lag})"},
            "where": "high == dh",
            "select": "count()",
        },
        engine_settings,
    )
    said = warnings_with(result, "known only at its close")
    if lag:
        assert not said
    else:
        assert said == [
            "daily(high, 0) is each date's final value, known only at its close: a rule "
            "reading it at an earlier bar of the date sees the future. The previous date's, "
            "known at the open: daily(high)."
        ]


def test_a_daily_condition_stays_a_condition(engine_settings, minutes) -> None:
    """where daily(close > open): the 5m bars of the days after an up day."""
    result = ask(
        {"session": "RTH", "from": "5m", "period": "2024-03", "where": "daily(close > open)"},
        engine_settings,
        group_by="date()",
        select="count() as bars",
    )
    days = rth_daily(minutes)
    up_before = (days["close"] > days["open"]).shift(1, fill_value=False).astype(bool)
    march = up_before[(days.index.month == 3) & up_before].index
    assert list(_per_date(result).index) == list(march)


@pytest.mark.parametrize(
    ("query", "error_type", "said", "hinted"),
    [
        (
            {"map": {"r": "high - low", "a": "daily(rolling_mean(r, 5))"}},
            "UnknownColumn",
            "which have no column 'r'",
            "inside daily()",
        ),
        (
            {"from": "daily", "map": {"a": "daily(atr(14))"}},
            "ArgumentError",
            "these rows are daily bars",
            "prev(atr(14))",
        ),
        (
            {"map": {"a": "daily(daily(atr(14)))"}},
            "ArgumentError",
            "cannot be nested",
            "daily(atr(14), 2)",
        ),
        (
            {"map": {"a": "daily(mean(range))"}},
            "ArgumentError",
            "mean(range) is an aggregate",
            "daily(rolling_mean(range, 20))",
        ),
        (
            {
                "group_by": "date()",
                "select": "max(high) as hi",
                "then": {"map": {"a": "daily(atr(14))"}},
            },
            "ArgumentError",
            "a second stage's rows",
            "first stage's map",
        ),
    ],
)
def test_what_daily_cannot_take_is_an_error_with_the_form(
    engine_settings, query, error_type, said, hinted
) -> None:
    result = execute({"session": "RTH", "from": "1m", **query}, "NQ", settings=engine_settings)
    assert not result.ok
    error = result.error.to_dict()
    assert error["error_type"] == error_type
    assert said in error["message"] and hinted in error["hint"], error


def test_the_model_is_told_where_the_daily_atr_is() -> None:
    assert "daily(atr(14))" in indicators_reference()
    assert "atr(14) on 1m bars is a 1-minute ATR" in indicators_reference()
    assert "daily(atr(14))" in describe_concept("stop and target")
    assert "daily|weekly|monthly(expr, lag=1, [session]) — expr on the session's bars" in (
        query_reference(load_instrument("NQ"))
    )
    # The daily ATR is in points, as atr(14) is.
    query = {"map": {"a": "daily(atr(14))"}}
    assert first_map_unit(parse_expression("a"), query) == "points"


def test_the_inner_expression_is_the_daily_bars_own() -> None:
    """Written back as it was read; its ATR's warm-up is read on the daily bars, so the
    intraday rows read before the period do not grow by it, and no walk of the rows' tree
    sees an atr() of theirs."""
    expr = parse_expression("open - daily(atr(14), 0) * 0.5")
    assert expr.to_text() == "open - daily(atr(14), 0) * 0.5"
    assert reach(expr) == ROW
    assert reach(parse_expression("atr(14)")) != ROW
