"""true_range() and what is built on it on a part of the day: the previous bar's close is the
session's close a day earlier, so its true range takes in the hours between. Said, with the
range as the session's own size; checked against session bars built here with pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import ask


def _session_daily(minutes: pd.DataFrame, start: int, end: int) -> pd.DataFrame:
    """Daily bars of [start, end) minutes of the day, not crossing midnight."""
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    part = minutes[(minute >= start) & (minute < end)]
    return part.groupby(part["timestamp"].dt.normalize()).agg(
        high=("high", "max"), low=("low", "min"), close=("close", "last")
    )


def _gap_warnings(result) -> list[str]:
    return [w for w in result.metadata.warnings if "true range reaches back" in w]


def _query(session: str, timeframe: str = "daily", expr: str = "true_range()") -> dict:
    return {
        "session": session,
        "from": timeframe,
        "period": "2024-02",
        "map": {"tr": expr},
        "select": ["mean(tr) as tr", "mean(range) as rng"],
    }


def test_first_hour_true_range_reaches_back_a_day(engine_settings, minutes) -> None:
    bars = _session_daily(minutes, 570, 630)  # 09:30-10:30
    before = bars["close"].shift()
    tr = np.maximum.reduce(
        [bars["high"] - bars["low"], (bars["high"] - before).abs(), (bars["low"] - before).abs()]
    )
    february = bars.index.to_period("M") == "2024-02"
    result = ask(_query("RTH_OPEN"), engine_settings)
    assert result.summary.values["tr"] == pytest.approx(tr[february].mean())
    rng = (bars["high"] - bars["low"])[february].mean()
    assert result.summary.values["rng"] == pytest.approx(rng)
    assert tr[february].mean() > rng  # what the warning is for
    assert _gap_warnings(result) == [
        "true_range() on RTH_OPEN (09:30-10:30): true range reaches back to the previous "
        "bar's close, the 10:30 close of the date before, 23 hours earlier, so it takes in "
        "the moves between the sessions, not only this one's. For the session's own size use "
        "range, or rolling_mean(range, 14) for its average."
    ]


@pytest.mark.parametrize(
    ("session", "expr", "said"),
    [
        ("OVERNIGHT", "atr(14)", "atr() on OVERNIGHT (18:00-09:30): true range reaches back to "
         "the previous bar's close, the 09:30 close of the date before, 8.5 hours earlier"),
        ("08:30-09:30", "adx(14)", "adx() on 08:30-09:30: true range reaches back to the "
         "previous bar's close, the 09:30 close of the date before, 23 hours earlier"),
        ("AFTERNOON", "keltner_upper(20, 10, 1.5)", "keltner_upper() on AFTERNOON "
         "(12:30-17:00): true range reaches back to the previous bar's close, the 17:00 close "
         "of the date before, 19.5 hours earlier"),
    ],
)  # fmt: skip
def test_other_parts_of_the_day_are_said(engine_settings, session, expr, said) -> None:
    (text,) = _gap_warnings(ask(_query(session, expr=expr), engine_settings))
    assert text.startswith(said)


@pytest.mark.parametrize("session", ["RTH", "ETH", "CASH", "09:30-16:30"])
def test_a_whole_days_session_has_the_usual_gap(engine_settings, session) -> None:
    """RTH's true range reaches over the night, as daily ATR always does; CASH and a window
    leaving out half an hour of RTH are the same day."""
    assert _gap_warnings(ask(_query(session, expr="atr(14)"), engine_settings)) == []


def test_intraday_bars_are_said_to_chain_the_days_instead(engine_settings) -> None:
    """On 5m bars every function reading earlier bars is said at once
    (tests/engine/test_chained_session_days.py), true range among them."""
    result = ask(_query("RTH_OPEN", "5m", "atr(14)"), engine_settings)
    assert _gap_warnings(result) == []
    (text,) = [w for w in result.metadata.warnings if w.startswith("atr() on 5m bars")]
    assert "chained day to day" in text


def test_no_warning_without_true_range(engine_settings) -> None:
    query = _query("RTH_OPEN", expr="rolling_mean(range, 14)")
    assert _gap_warnings(ask(query, engine_settings)) == []
