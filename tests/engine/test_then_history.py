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
