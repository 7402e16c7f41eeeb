"""Where conditions on a time the session's bars do not open at (barb.bar_times).

RTH's hourly bars open at 09:30, 10:30 … 16:30: ``hour() == 15`` keeps 15:30-16:30, not the
15:00-16:00 bar a trader means (ES 2025 up share 0.498 against 0.5344, p47e M3), and
``time() == '15:00'`` keeps nothing, as ``time() == '17:00'`` does on ETH, the maintenance
break (p47e C1). Expected values from pandas over the hand-made minute bars."""

from __future__ import annotations

import pandas as pd
import pytest

from barb import execute

UP = ["count()", "mean(close > open) as up_share"]


def hourly(minutes: pd.DataFrame, start: int) -> pd.DataFrame:
    """The minute bars' hourly bars opening at ``start`` (a minute of the day), one a day:
    its open (the first minute's) and close (the last's)."""
    stamps = pd.DatetimeIndex(minutes["timestamp"])
    minute = stamps.hour * 60 + stamps.minute
    inside = minutes[(minute >= start) & (minute < start + 60)]
    days = pd.DatetimeIndex(inside["timestamp"]).normalize()
    return inside.groupby(days).agg(open=("open", "first"), close=("close", "last"))


def warnings_with(result, words: str) -> list[str]:
    assert result.ok, result.to_dict()
    return [w for w in result.metadata.warnings if words in w]


def test_hour_in_a_where_on_bars_from_the_half_hour_says_which_bar_it_keeps(
    engine_settings, minutes
) -> None:
    query = {"session": "RTH", "from": "1h", "period": "2024", "select": UP}
    result = execute({**query, "where": "hour() == 15"}, "NQ", settings=engine_settings)
    half = hourly(minutes, 930)  # 15:30-16:30: what hour() == 15 keeps
    assert result.summary.values["count"] == len(half)
    assert result.summary.values["up_share"] == pytest.approx((half.close > half.open).mean())
    assert warnings_with(result, "hour() ==") == [
        "hour() == 15 keeps the 15:30-16:30 bar: hour() is the clock hour a bar opens in, and "
        "these 1h bars open at :30 (09:30, 10:30, …, 16:30). For the 15:00-16:00 bar: "
        '"session": "ETH", "where": "time() == \'15:00\'" (ETH\'s 1h bars open at 15:00).'
    ]
    # The form named gives the 15:00-16:00 bar.
    whole = hourly(minutes, 900)
    named = {**query, "session": "ETH", "where": "time() == '15:00'"}
    other = execute(named, "NQ", settings=engine_settings)
    assert other.summary.values["up_share"] == pytest.approx((whole.close > whole.open).mean())
    assert other.summary.values["up_share"] != pytest.approx(result.summary.values["up_share"])


def test_hour_in_a_where_on_bars_on_the_hour_or_with_its_minute_says_nothing(
    engine_settings,
) -> None:
    cases = [("ETH", "1h", "hour() == 15"), ("RTH", "30m", "hour() == 15")]
    cases.append(("RTH", "1h", "hour() == 15 and minute() == 30"))  # the 15:30 bar, named
    for session, frame, where in cases:
        query = {"session": session, "from": frame, "period": "2024", "where": where}
        result = execute({**query, "select": "count()"}, "NQ", settings=engine_settings)
        assert result.summary.value > 0
        assert warnings_with(result, "hour() ==") == []


@pytest.mark.parametrize(
    ("session", "frame", "at", "said"),
    [
        (
            "RTH",
            "1h",
            "15:00",
            "RTH's 1h bars open at 09:30, 10:30, …, 16:30: none at 15:00. For the 15:00-16:00 "
            'bar: "session": "ETH", "where": "time() == \'15:00\'" (ETH\'s 1h bars open at '
            "15:00).",
        ),
        (
            "ETH",
            "1h",
            "17:00",
            "17:00-18:00 ET is the daily maintenance break: no bar opens at 17:00.",
        ),
        ("RTH", "30m", "09:45", "RTH's 30m bars open at 09:30, 10:00, …, 16:30: none at 09:45."),
        ("RTH", "1h", "08:00", "RTH (09:30-17:00 ET) has no bars at 08:00."),
    ],
)
def test_an_empty_where_on_a_time_no_bar_opens_at_says_why(
    engine_settings, minutes, session, frame, at, said
) -> None:
    stamps = pd.DatetimeIndex(minutes["timestamp"])
    clock = stamps.strftime("%H:%M")
    if at == "17:00":  # no minute bar at all in the break
        assert not (stamps.hour == 17).any()
    else:  # minutes trade then, inside another bar
        assert (clock == at).any()
    query = {"session": session, "from": frame, "period": "2024", "where": f"time() == '{at}'"}
    result = execute({**query, "select": "count()"}, "NQ", settings=engine_settings)
    assert result.summary.value == 0
    assert warnings_with(result, f"{at}") == [said]


def test_an_empty_where_for_other_reasons_says_nothing_of_times(engine_settings) -> None:
    """15:30 is a bar; 15:00 as one of two times (or) is not why nothing matched."""
    query = {"session": "RTH", "from": "1h", "period": "2024", "select": "count()"}
    for where in ("time() == '15:30' and close < 0", "time() == '15:00' or close < 0"):
        result = execute({**query, "where": where}, "NQ", settings=engine_settings)
        assert result.summary.value == 0
        assert warnings_with(result, "none at") == []
