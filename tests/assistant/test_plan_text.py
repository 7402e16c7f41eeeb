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


def test_counts_in_the_plan_agree_with_their_number() -> None:
    """ "first 1 row", "первые 3 строки", "последние 2 бара": not "1 rows", "3 строк"."""
    nq, last = load_instrument("NQ"), dt.date(2026, 1, 7)

    def lines(lang: str, limit: int, bars: int) -> str:
        query = {**QUERY, "limit": limit, "period": f"last_{bars}_bars"}
        return render_plan(query, nq, last, lang)

    assert "first 1 row\n" in lines("en", 1, 1) and "the last 1 bar\n" in lines("en", 1, 1)
    assert "первые 3 строки" in lines("ru", 3, 2) and "последние 2 бара" in lines("ru", 3, 2)
    assert "первые 5 строк" in lines("ru", 5, 25) and "последние 25 баров" in lines("ru", 5, 25)
    assert "первая 21 строка" in lines("ru", 21, 21) and "последний 21 бар" in lines("ru", 21, 21)
