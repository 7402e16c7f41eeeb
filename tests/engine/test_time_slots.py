"""Half-hour labels of times of day: floor(time(), 30) (p38b Q24).

"When does the initial balance first break, by half hour" needs an 'HH:MM' label of each
day's first break. floor() refused time()'s text ("floor() needs a number for x"), so the
model grouped by hour and minute apart and the chart read "0 ▲ 11 180 · ▼ 15 7". Checked
against pandas over the hand-made minute bars (conftest): RTH is 09:30-17:00 there.
"""

from __future__ import annotations

import pandas as pd
from asking import ask
from rth_bars import rth_minutes

IB_END = 10 * 60 + 30  # the initial balance is RTH's first hour, 09:30-10:30

FIRST_BREAK = {
    "session": "RTH",
    "from": "1m",
    "map": {
        "ibh": "session_high('09:30-10:30')",
        "ibl": "session_low('09:30-10:30')",
    },
    "where": "time() >= '10:30' and (high > ibh or low < ibl)",
    "group_by": "date()",
    "select": "first(time()) as t",
    "then": {"map": {"slot": "floor(t, 30)"}, "group_by": "slot", "select": "count() as days"},
}


def test_first_breaks_by_half_hour(engine_settings, minutes) -> None:
    rth = rth_minutes(minutes)
    rth["minute"] = rth["timestamp"].dt.hour * 60 + rth["timestamp"].dt.minute
    ib = rth[rth["minute"] < IB_END].groupby("day").agg(ibh=("high", "max"), ibl=("low", "min"))
    after = rth[rth["minute"] >= IB_END].join(ib, on="day")
    broke = after[(after["high"] > after["ibh"]) | (after["low"] < after["ibl"])]
    first = broke.groupby("day")["minute"].min() // 30 * 30
    slots = first.map(lambda m: f"{m // 60:02d}:{m % 60:02d}").value_counts().sort_index()
    assert len(slots) > 1

    table = ask(FIRST_BREAK, engine_settings).table
    assert list(table["slot"].astype(str)) == list(slots.index)  # in clock order, as time()
    assert list(table["days"]) == list(slots)


def test_a_slot_groups_the_bars_of_its_half_hour(engine_settings, minutes) -> None:
    query = {
        "session": "RTH",
        "from": "1m",
        "period": "2024-02-01",
        "group_by": "floor(time(), 30)",
        "select": ["count() as bars", "first(time()) as first", "last(time()) as last"],
    }
    table = ask(query, engine_settings).table
    day = rth_minutes(minutes).set_index("timestamp").loc["2024-02-01"]
    starts = pd.date_range("2024-02-01 09:30", "2024-02-01 16:30", freq="30min")
    assert list(table.iloc[:, 0].astype(str)) == [s.strftime("%H:%M") for s in starts]
    assert list(table["bars"]) == [len(day.loc[s : s + pd.Timedelta("29min")]) for s in starts]
    assert list(table["first"].astype(str)) == list(table.iloc[:, 0].astype(str))
    assert list(table["last"].astype(str)) == [
        (s + pd.Timedelta("29min")).strftime("%H:%M") for s in starts
    ]
