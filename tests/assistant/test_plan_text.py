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
    assert text.splitlines()[0] == "Посчитаю: максимум диапазона (top), по «dayname()»"
    assert text.splitlines()[-1] == "Затем: среднее «top»"


def test_skew_and_kurt_are_named_in_words() -> None:
    query = {"session": "RTH", "from": "daily", "select": ["skew(ret)", "kurt(ret)"]}
    for lang, words in (
        ("en", "Compute: skewness of ret, excess kurtosis of ret"),
        ("ru", "асимметрия «ret», эксцесс «ret»"),
    ):
        text = render_plan(query, load_instrument("NQ"), dt.date(2026, 1, 7), lang)
        assert text.splitlines()[0].endswith(words)


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


def test_the_last_n_whole_weeks_are_dated_as_they_run() -> None:
    """last_2_weeks on weekly bars runs on the last 2 whole weeks: on data ending Wednesday
    2026-01-07 those are the weeks of Dec 22 and Dec 29, not the 14 days back from Jan 7;
    on data ending Friday 2026-01-09 the week of Jan 5 is whole."""
    nq = load_instrument("NQ")

    def period(timeframe: str, text: str, last: dt.date) -> str:
        query = {"session": "RTH", "from": timeframe, "period": text, "select": "count()"}
        return render_plan(query, nq, last, "en").splitlines()[2]

    wednesday, friday = dt.date(2026, 1, 7), dt.date(2026, 1, 9)
    assert period("weekly", "last_2_weeks", wednesday) == (
        "Period: last_2_weeks (2025-12-22 — 2026-01-04)"
    )
    assert period("weekly", "last_2_weeks", friday) == (
        "Period: last_2_weeks (2025-12-29 — 2026-01-11)"
    )
    assert period("monthly", "last_2_months", wednesday) == (
        "Period: last_2_months (2025-11-01 — 2025-12-31)"
    )
    # Daily bars count calendar days back.
    assert period("daily", "last_2_weeks", wednesday) == (
        "Period: last_2_weeks (2025-12-25 — 2026-01-07)"
    )


def test_russian_plans_name_columns_in_words_and_quote_the_query_s_names() -> None:
    """p38c: "Посчитаю: среднее range, по weekday" and "Фильтр: range < 150" dropped
    column names into Russian grammar. The bars' own columns take the catalog's words (the
    chart's headline has the same ones), a name the query made is quoted, and a formula
    naming one keeps its text."""
    nq, last = load_instrument("NQ"), dt.date(2026, 1, 7)
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"weekday": "dayname()", "rng_pct": "range / open * 100"},
        "where": "range < 150",
        "group_by": "weekday",
        "select": ["count()", "mean(range)", "median(volume) as vol", "mean(rng_pct)"],
    }
    ru = render_plan(query, nq, last, "ru").splitlines()
    assert ru[0] == (
        "Посчитаю: количество дней, средний диапазон (range), медиана объёма (vol), "
        "среднее «rng_pct», по «weekday»"
    )
    assert "Фильтр: диапазон < 150" in ru
    assert "Новые колонки: weekday = dayname(); rng_pct = range / open * 100" in ru
    en = render_plan(query, nq, last, "en").splitlines()
    assert en[0] == (
        "Compute: number of days, average range, median volume (vol), average rng_pct, by weekday"
    )
    assert "Filter: range < 150" in en
    # A condition naming a column the query made, or calling a function, stays a formula.
    gap = {**query, "map": {"gap": "open - prev(close)"}, "where": "gap > 50 and range > 10"}
    assert "Фильтр: gap > 50 and range > 10" in render_plan(gap, nq, last, "ru")
    share = {"session": "RTH", "from": "daily", "select": "mean(close > open)", "where": "1 > 0"}
    assert render_plan(share, nq, last, "ru").startswith(
        "Посчитаю: доля дней, где закрытие > открытие"
    )
