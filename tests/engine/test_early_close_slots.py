"""Volume by time of day over early-close days only: the last bar is the close's cut, not a
full bar. "By 30-minute slot on half days" gave NQ's 13:00 bar, 13:00-13:15 on every one of
them, half the 12:30 bar's volume with nothing said, where per minute the two were flat (p35a
A: 489 against 496). Hand-made minute bars around July 4 and Thanksgiving (July 3 and the day
after Thanksgiving close at 13:15, July 4 and Thanksgiving at 13:00, every other weekday
runs 18:00 the evening before to 17:00); expected values from pandas over the same bars."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import ask, warnings_with
from small_bars import bars_from_closes, write_minutes

from barb.settings import EngineSettings

CLOSES = {
    dt.date(2024, 7, 3): "13:15",
    dt.date(2024, 7, 4): "13:00",
    dt.date(2024, 11, 28): "13:00",
    dt.date(2024, 11, 29): "13:15",
}
SPANS = [("2024-06-24", "2024-07-12"), ("2024-11-18", "2024-12-06")]
RTH_START, RTH_END = 570, 1020  # 09:30-17:00
CUT = "cut short by an early close or holiday"


def _minutes(seed: int = 9) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    stamps = []
    for first, last in SPANS:
        for day in pd.bdate_range(first, last):
            end = pd.Timedelta(CLOSES.get(day.date(), "17:00") + ":00")
            stamps.append(
                pd.date_range(day - pd.Timedelta(hours=6), day + end, freq="1min", inclusive="left")
            )
    ts = stamps[0].append(stamps[1:])
    n = len(ts)
    close = 20000 + np.round(np.cumsum(rng.choice([-1.0, 0.0, 1.0], n)) * 4) / 4
    return bars_from_closes(ts, close, rng.integers(1, 300, n))


@pytest.fixture(scope="module")
def minutes() -> pd.DataFrame:
    return _minutes()


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, minutes: pd.DataFrame) -> EngineSettings:
    data_dir: Path = tmp_path_factory.mktemp("early_close_slots")
    settings = EngineSettings(data_dir=data_dir)
    write_minutes(minutes, "NQ", settings, "hand-made bars around July 4 and Thanksgiving")
    return settings


def rth_minutes(minutes: pd.DataFrame, days: list[dt.date]) -> pd.DataFrame:
    """The RTH minutes of ``days`` (a trading date is the calendar date for 09:30-17:00),
    with the minute of the day."""
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    rth = minutes[(minute >= RTH_START) & (minute < RTH_END)].assign(minute=minute)
    return rth[rth["timestamp"].dt.date.isin(days)]


def per_minute(rth: pd.DataFrame, start: int, step: int) -> float:
    """Volume per minute traded in the bars of ``step`` minutes opening at ``start``: their
    minute bars' volume over how many there are."""
    inside = rth[(rth["minute"] >= start) & (rth["minute"] < start + step)]
    return inside["volume"].sum() / len(inside)


def test_half_day_slots_say_the_last_bar_is_cut_with_its_volume_per_minute(
    settings, minutes
) -> None:
    query = {
        "session": "RTH",
        "from": "30m",
        "where": "early_close() and not holiday()",
        "group_by": "time()",
        "select": ["mean(volume) as vol", "count() as bars"],
    }
    result = ask(query, settings)
    rth = rth_minutes(minutes, [dt.date(2024, 7, 3), dt.date(2024, 11, 29)])
    bars = rth.groupby([rth["timestamp"].dt.date, (rth["minute"] - RTH_START) // 30])["volume"]
    assert result.table.set_index("time").loc["13:00", "vol"] == bars.sum().xs(7, level=1).mean()
    last, before = per_minute(rth, 780, 30), per_minute(rth, 750, 30)
    assert warnings_with(result, CUT) == [
        "In the 13:00 group, 2 of its 2 bars were cut short by an early close or holiday "
        "(13:00-13:15 on 2, e.g. 2024-07-03), where the other bars are half an hour: their "
        "volume and range cover fewer minutes than the other groups'. Per minute it traded "
        f"{last:,.0f} contracts, against {before:,.0f} in the 12:30 bars of the same days; "
        'on "from": "15m" no bar is cut.'
    ]


def test_holidays_and_half_days_by_hour_name_both_spans_of_the_1230_bar(settings, minutes) -> None:
    """Hourly bars from 09:30: the 12:30 bar runs to 13:00 on a holiday, 13:15 on a half
    day; both are the group, and 15-minute bars end on both closes."""
    query = {
        "session": "RTH",
        "from": "1h",
        "where": "early_close()",
        "group_by": "time()",
        "select": "mean(volume) as vol",
    }
    result = ask(query, settings)
    rth = rth_minutes(minutes, sorted(CLOSES))
    last, before = per_minute(rth, 750, 60), per_minute(rth, 690, 60)
    assert warnings_with(result, CUT) == [
        "In the 12:30 group, 4 of its 4 bars were cut short by an early close or holiday "
        "(12:30-13:15 on 2, e.g. 2024-07-03; 12:30-13:00 on 2, e.g. 2024-07-04), where the "
        "other bars are an hour: their volume and range cover fewer minutes than the other "
        "groups'. Per "
        f"minute it traded {last:,.0f} contracts, against {before:,.0f} in the 11:30 bars of "
        'the same days; on "from": "15m" no bar is cut.'
    ]


@pytest.mark.parametrize(
    "where", ["not early_close()", "date() >= '2024-07-08' and date() <= '2024-11-27'"]
)
def test_slots_of_full_days_say_nothing(settings, where) -> None:
    query = {
        "session": "RTH",
        "from": "30m",
        "where": where,
        "group_by": "time()",
        "select": "mean(volume)",
    }
    assert warnings_with(ask(query, settings), "early close") == []
