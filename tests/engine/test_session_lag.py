"""session_high('RTH', 1) and friends: the session's bar lag trading dates back, on any bars.
Checked against RTH daily bars built here from the minute file with pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb import execute

RTH_START, RTH_END = 570, 1020  # 09:30-17:00


def _rth_daily(minutes: pd.DataFrame) -> pd.DataFrame:
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    rth = minutes[(minute >= RTH_START) & (minute < RTH_END)]
    return rth.groupby(rth["timestamp"].dt.normalize()).agg(
        high=("high", "max"), close=("close", "last")
    )


def _ask(query: dict, settings) -> object:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def test_hourly_bars_read_yesterdays_rth_high(engine_settings, minutes) -> None:
    """ "Hours that traded above the previous day's RTH high", from the period's first day:
    the first day's yesterday is before the period and still read."""
    result = _ask(
        {
            "session": "RTH",
            "from": "1h",
            "period": "2024-02-01:2024-02-29",
            "map": {"yh": "session_high('RTH', 1)"},
            "select": ["timestamp", "yh"],
        },
        engine_settings,
    )
    daily = _rth_daily(minutes)
    yesterday = daily["high"].shift(1)
    days = pd.to_datetime(result.table["timestamp"]).dt.normalize()
    expected = yesterday.reindex(days).to_numpy()
    assert not np.isnan(expected).any()
    np.testing.assert_allclose(result.table["yh"].to_numpy(), expected)


def test_daily_close_two_dates_back_and_lag_zero(engine_settings, minutes) -> None:
    result = _ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-03",
            "map": {"c2": "session_close('RTH', 2)", "c0": "session_close('RTH', 0)"},
            "select": ["timestamp", "c2", "c0", "close"],
        },
        engine_settings,
    )
    daily = _rth_daily(minutes)
    march = daily.index.month == 3
    np.testing.assert_allclose(result.table["c2"], daily["close"].shift(2)[march])
    np.testing.assert_allclose(result.table["c0"], result.table["close"])


def test_a_negative_lag_is_an_error(engine_settings) -> None:
    result = execute(
        {"session": "RTH", "from": "daily", "map": {"x": "session_close('RTH', -1)"}},
        "NQ",
        settings=engine_settings,
    )
    assert not result.ok and result.error.error_type == "ArgumentError"
