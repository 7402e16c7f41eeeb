"""The plan shown before Run names everything that will run: the instrument, joined bars,
a count of bars back, and a second stage."""

from __future__ import annotations

import datetime as dt

from barb.instruments import load_instrument
from bot.assistant.plan import render_plan

QUERY = {
    "instrument": "ES",
    "session": "RTH",
    "from": "daily",
    "period": "last_30_bars",
    "join": {"instrument": "NQ"},
    "group_by": "dayname()",
    "select": "max(range) as top",
    "sort": "top desc",
    "limit": 3,
    "then": {"select": "mean(top)"},
}


def test_plan_names_the_query_instrument_joins_and_second_stage() -> None:
    text = render_plan(QUERY, load_instrument("NQ"), dt.date(2026, 1, 7), "en")
    assert text.splitlines() == [
        "Compute: maximum range (top), by dayname()",
        "Bars: ES, daily bars, session RTH (09:30–17:00 ET)",
        "Period: the last 30 bars",
        "With NQ bars (nq_open … nq_volume)",
        "Order: top (highest first); first 3 rows",
        "Then: average top",
    ]


def test_plan_in_russian() -> None:
    text = render_plan(QUERY, load_instrument("NQ"), dt.date(2026, 1, 7), "ru")
    assert "Период: последние 30 баров" in text
    assert "Вместе с барами NQ" in text
    assert text.splitlines()[-1] == "Затем: среднее top"
