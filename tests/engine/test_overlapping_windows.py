"""Rows a condition picks whose forward windows overlap are not as many trades: "buy a
20-day closing low, hold 5 days" picked 477 NQ days, 355 of them within 5 days of the one
before, 186 trades taken one at a time, with no word (p39b Q16). A question with no trade
in it ("after 3 down days, how often is the next 5 days' return positive") is told of
outcomes, not trades. Counted here with pandas over the hand-made RTH days (a 10-day
closing high held 3 days), never through Barb."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask, warnings_with
from rth_bars import rth_daily

MAP = {
    "high10": "close >= rolling_max(close, 10)",
    "fwd3": "(next(close, 3) / close - 1) * 100",
}
OVERLAP = "windows overlap"


@pytest.fixture(scope="module")
def highs(minutes: pd.DataFrame) -> np.ndarray:
    """The positions of the days at a 10-day closing high, among the RTH days (pandas)."""
    daily = rth_daily(minutes)
    high = daily["close"].rolling(10).max()
    return np.flatnonzero((daily["close"] >= high).to_numpy())


def _one_at_a_time(picks: np.ndarray, hold: int) -> int:
    """Trades taken when none is entered while one is held: a loop, as a trader counts."""
    taken, free = 0, -1
    for at in picks:
        if at >= free:
            taken, free = taken + 1, at + hold
    return taken


def _sentence(names: str, rows: str, picks: np.ndarray, trades: bool = True) -> str:
    near = int((np.diff(picks) < 3).sum())
    what, how = (
        ("trades", "taken one at a time, none entered while one is held")
        if trades
        else ("outcomes", "taken so that no two windows share a day")
    )
    return (
        f"{names} fwd3 (next(close, 3): the 3 days after each row) on the {len(picks)} {rows}: "
        f"{near} of them start within 3 days of the one before, so their windows overlap and "
        f"they are not {len(picks)} independent {what} ({how}: {_one_at_a_time(picks, 3)})."
    )


def test_overlapping_holds_of_an_if_are_said(engine_settings, highs) -> None:
    """mean(if(high10, fwd3, 0 / 0)) by month: the highs' positions, how many start within 3
    days of the one before, and the trades taken one at a time."""
    assert (np.diff(highs) < 3).sum() >= len(highs) / 4  # a notable share overlaps
    query = {
        "map": MAP,
        "group_by": "month()",
        "select": [
            "count(high10) as signals",
            "mean(if(high10, fwd3 > 0, 0 / 0)) as win_rate",
            "mean(if(high10, fwd3, 0 / 0)) as avg_fwd3",
            "mean(fwd3) as all_days",
        ],
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.table["signals"].sum() == len(highs)
    assert warnings_with(result, OVERLAP) == [
        _sentence("win_rate and avg_fwd3 read", "days where high10 is true", highs)
    ]


@pytest.mark.parametrize(
    ("name", "trades"), [("p_up", False), ("hit_rate", False), ("win_rate", True), ("pnl", True)]
)
def test_overlapping_holds_of_a_where_are_said(engine_settings, highs, name, trades) -> None:
    """The rows are trades when the query's names say so (win_rate, pnl); "after a 10-day
    high, how often are the next 3 days up" (p_up) counts outcomes, as many taken so that
    no two windows share a day as the trades one at a time."""
    result = ask(
        {"map": MAP, "where": "high10", "select": ["count() as n", f"mean(fwd3 > 0) as {name}"]},
        engine_settings,
        **RTH_DAILY,
    )
    assert result.summary.values["n"] == len(highs)
    said = _sentence(f"{name} reads", "days kept", highs, trades)
    assert warnings_with(result, OVERLAP) == [said]


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ({"select": "mean(fwd3)"}, "every day, no condition picked them"),
        ({"where": "high10", "select": "mean(next(ret, 3))"}, "the 3rd day's move alone"),
        ({"where": "high10", "select": "mean(ret)"}, "no look ahead"),
        ({"where": "high10", "select": "max(fwd3)"}, "one row's value, not a sample"),
    ],
)
def test_no_overlap_said(engine_settings, query, why) -> None:
    mapped = {**MAP, "ret": "(close / prev(close) - 1) * 100"}
    result = ask({"map": mapped, **query}, engine_settings, **RTH_DAILY)
    assert warnings_with(result, OVERLAP) == [], why
