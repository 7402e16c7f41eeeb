"""min() and max() of a first stage's bar labels in a second stage: "the first and the last
time NQ fell this much" read "min() needs a number or a date … got text: date" (p33d C1).
The labels are text in time order, so their extremes are the first and last bars'. Expected
values from pandas over the hand-made RTH bars."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask
from rth_bars import rth_daily

from barb import execute


def test_the_first_and_last_date_of_the_rows_a_where_kept(engine_settings, minutes) -> None:
    days = rth_daily(minutes)
    down = days[days["close"] < days["open"]]
    assert 1 < len(down) < len(days)
    query = {
        "session": "RTH",
        "from": "daily",
        "where": "close < open",
        "select": ["date()", "range"],
        "then": {"select": ["count()", "min(date) as first_day", "max(date) as last_day"]},
    }

    values = ask(query, engine_settings).summary.values

    assert values["count"] == len(down)
    assert pd.Timestamp(values["first_day"]) == down.index.min()
    assert pd.Timestamp(values["last_day"]) == down.index.max()


@pytest.mark.parametrize("text", ["'abc'", "dayname()"])
def test_other_text_is_still_refused(engine_settings, text) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"label": text},
        "select": ["label"],
        "then": {"select": "min(label)"},
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert not result.ok
    assert "min() needs a number, a date or a time of day" in result.error.message
