"""count(date()) on intraday bars counts bars, not dates (p45d #4: NQ's 5m RTH week of
2024-03-11 read count_date = 450, the 5 days' 90 bars each, with nothing said). The
warning gives the bars and the dates as pandas counts them, and the forms it names count
the dates."""

from __future__ import annotations

import pytest
from asking import RTH_DAILY, ask, warnings_with
from rth_bars import rth_minutes

FIVE_MINUTE_RTH = {"session": "RTH", "from": "5m"}


@pytest.mark.parametrize("counted", ["date()", "d"])
def test_a_count_of_dates_on_intraday_bars_is_said_to_count_bars(
    engine_settings, minutes, counted: str
) -> None:
    query = {"map": {"d": "date()"}, "select": f"count({counted}) as days"}
    result = ask(query, engine_settings, **FIVE_MINUTE_RTH)
    rth = rth_minutes(minutes)
    bars = rth["timestamp"].dt.floor("5min").nunique()
    dates = rth["day"].nunique()
    assert result.summary.value == bars
    (said,) = warnings_with(result, "each of which has a date")
    assert said.startswith(f"days counts the {bars:,} 5m bars kept"), said
    assert f"not the {dates:,} trading dates they fall on" in said, said
    named = {
        "group_by": "date()",
        "select": "count() as bars",
        "then": {"select": "count() as days"},
    }
    counted = ask(named, engine_settings, **FIVE_MINUTE_RTH)  # the form the warning names
    assert counted.summary.value == dates
    assert not warnings_with(counted, "each of which has a date")


def test_a_count_of_dates_on_daily_bars_says_nothing(engine_settings) -> None:
    result = ask({"select": "count(date())"}, engine_settings, **RTH_DAILY)
    assert not warnings_with(result, "each of which has a date")
