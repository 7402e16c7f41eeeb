"""session_high('RTH', 1) and friends: the session's bar lag trading dates back, on any bars.
Checked against RTH daily bars built here from the minute file with pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import ask
from rth_bars import RTH_END, RTH_START, rth_daily

from barb import execute
from barb.data.store import DataMeta, data_path, write_bars
from barb.sessions import minutes_of_day, trading_dates
from barb.settings import EngineSettings


def test_hourly_bars_read_yesterdays_rth_high(engine_settings, minutes) -> None:
    """ "Hours that traded above the previous day's RTH high", from the period's first day:
    the first day's yesterday is before the period and still read."""
    result = ask(
        {
            "session": "RTH",
            "from": "1h",
            "period": "2024-02-01:2024-02-29",
            "map": {"yh": "session_high('RTH', 1)"},
            "select": ["timestamp", "yh"],
        },
        engine_settings,
    )
    daily = rth_daily(minutes)
    yesterday = daily["high"].shift(1)
    days = pd.to_datetime(result.table["timestamp"]).dt.normalize()
    expected = yesterday.reindex(days).to_numpy()
    assert not np.isnan(expected).any()
    np.testing.assert_allclose(result.table["yh"].to_numpy(), expected)


def test_daily_close_two_dates_back_and_lag_zero(engine_settings, minutes) -> None:
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-03",
            "map": {"c2": "session_close('RTH', 2)", "c0": "session_close('RTH', 0)"},
            "select": ["timestamp", "c2", "c0", "close"],
        },
        engine_settings,
    )
    daily = rth_daily(minutes)
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


# A Good Friday: the overnight session trades, RTH does not. Its rows still have a yesterday.
NO_RTH = pd.Timestamp("2024-02-16")


def _stored(frame: pd.DataFrame, data_dir, description: str) -> EngineSettings:
    """``frame``'s minutes written as NQ's data in ``data_dir``."""
    frame = frame.copy()
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minutes_of_day(frame["timestamp"])
    settings = EngineSettings(data_dir=data_dir)
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description=description,
        first_date=frame["trading_date"].min().date(),
        last_date=frame["trading_date"].max().date(),
        rows=len(frame),
    )
    write_bars(frame, meta, data_path("NQ", settings))
    return settings


@pytest.fixture(scope="module")
def no_rth_settings(tmp_path_factory: pytest.TempPathFactory, minutes: pd.DataFrame):
    """The test bars without the RTH minutes of NO_RTH (its overnight bars kept)."""
    frame = _without_rth_of(minutes, NO_RTH)
    return _stored(frame, tmp_path_factory.mktemp("no_rth"), "one date without RTH")


def _without_rth_of(minutes: pd.DataFrame, day: pd.Timestamp) -> pd.DataFrame:
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    rth = (minute >= RTH_START) & (minute < RTH_END)
    return minutes[~(rth & (stamps.dt.normalize() == day))].reset_index(drop=True)


def test_lag_counts_back_from_a_date_without_the_session(no_rth_settings, minutes) -> None:
    """ "Did the overnight take out yesterday's RTH high?" on the date with no RTH: lag 1 is
    the last RTH before it (Thursday's), not missing; lag 2 the one before that."""
    result = ask(
        {
            "session": "OVERNIGHT",
            "from": "daily",
            "period": "2024-02-12:2024-02-23",
            "map": {"yh": "session_high('RTH', 1)", "yc2": "session_close('RTH', 2)"},
            "select": ["timestamp", "yh", "yc2"],
        },
        no_rth_settings,
    )
    daily = rth_daily(_without_rth_of(minutes, NO_RTH))
    assert NO_RTH not in daily.index
    days = pd.to_datetime(result.table["timestamp"]).dt.normalize()
    assert NO_RTH in set(days)
    # For each date: the RTH dates strictly before it, the last (lag 1) and the one before.
    before = daily.index.searchsorted(days, side="left")
    np.testing.assert_allclose(result.table["yh"], daily["high"].to_numpy()[before - 1])
    np.testing.assert_allclose(result.table["yc2"], daily["close"].to_numpy()[before - 2])


# An early close: the day session trades until 13:00 and has no bar in a 15:59 window.
EARLY = pd.Timestamp("2024-03-08")


@pytest.fixture(scope="module")
def early_settings(tmp_path_factory: pytest.TempPathFactory, minutes: pd.DataFrame):
    """The test bars with EARLY's trading cut at 13:00 (its overnight bars kept)."""
    stamps = minutes["timestamp"]
    late = (stamps.dt.normalize() == EARLY) & (stamps.dt.hour >= 13)
    frame = minutes[~late].reset_index(drop=True)
    return _stored(frame, tmp_path_factory.mktemp("early"), "one early close"), frame


def test_a_window_after_an_early_close_is_missing_not_older(early_settings) -> None:
    """The settlement window's close one date back, the day after an early close: that date
    has no 15:59 bar, so the value is missing (the gap from "yesterday's settlement" is not
    measured from two sessions ago); RTH's own lag still reads the early session's close."""
    settings, frame = early_settings
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-03-04:2024-03-15",
            "map": {
                "settle1": "session_close('15:59-16:00', 1)",
                "settle2": "session_close('15:59-16:00', 2)",
                "rth1": "session_close('RTH', 1)",
            },
            "select": ["timestamp", "settle1", "settle2", "rth1"],
        },
        settings,
    )
    stamps = frame["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    at_1559 = frame[minute == 15 * 60 + 59]
    settle = at_1559.set_index(at_1559["timestamp"].dt.normalize())["close"]
    rth = rth_daily(frame)
    assert EARLY not in settle.index and EARLY in rth.index
    days = pd.to_datetime(result.table["timestamp"]).dt.normalize()
    # Every trading date of the day session, before each row's: lag 1 and lag 2.
    position = rth.index.searchsorted(days, side="left")
    expected1 = settle.reindex(rth.index[position - 1]).to_numpy()
    expected2 = settle.reindex(rth.index[position - 2]).to_numpy()
    after = np.flatnonzero(rth.index[position - 1] == EARLY)
    assert len(after) == 1 and np.isnan(expected1[after]).all()
    np.testing.assert_allclose(result.table["settle1"], expected1)
    np.testing.assert_allclose(result.table["settle2"], expected2)
    np.testing.assert_allclose(result.table["rth1"], rth["close"].to_numpy()[position - 1])
