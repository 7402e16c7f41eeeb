"""The plan shown before Run names everything that will run: the instrument, joined bars,
a count of bars back, and a second stage."""

from __future__ import annotations

import datetime as dt

import yaml

from barb.instruments import load_instrument
from barb.settings import PROJECT_ROOT
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
        "Compute: maximum range (top), by weekday",
        "Bars: ES, daily bars, session RTH (09:30–17:00 ET)",
        "Period: the last 30 bars",
        "With NQ RTH (09:30–17:00 ET) bars (nq_open … nq_volume)",
        "Order: top (highest first); first 3 rows",
        "Then: average top",
    ]


def _yaml_hours(symbol: str, session: str) -> str:
    with (PROJECT_ROOT / "instruments" / f"{symbol}.yaml").open() as file:
        spec = yaml.safe_load(file)["sessions"][session]
    return f"{spec['start']}–{spec['end']} ET"


def test_plan_gives_the_joined_instrument_s_own_hours() -> None:
    """The plan said "With CL bars" under NQ's "RTH (09:30–17:00 ET)": the person pressed
    Run on NQ's hours for both, while CL's RTH (its file) is another window; and a join's
    own session (CL's night beside NQ's day) is named with its hours."""
    nq = load_instrument("NQ")
    for join, session in (
        ({"instrument": "CL"}, "RTH"),
        (
            {"instrument": "CL", "session": "OVERNIGHT"},
            "OVERNIGHT",
        ),
    ):
        query = {"session": "RTH", "from": "daily", "join": join, "select": "count()"}
        hours = _yaml_hours("CL", session)
        assert hours != _yaml_hours("NQ", session)
        en = render_plan(query, nq, dt.date(2026, 1, 7), "en").splitlines()
        assert f"With CL {session} ({hours}) bars (cl_open … cl_volume)" in en
        ru = render_plan(query, nq, dt.date(2026, 1, 7), "ru").splitlines()
        assert f"Вместе с барами CL {session} ({hours}) (cl_open … cl_volume)" in ru


def test_plan_in_russian() -> None:
    text = render_plan(QUERY, load_instrument("NQ"), dt.date(2026, 1, 7), "ru")
    assert "Период: последние 30 баров" in text
    assert "Вместе с барами NQ" in text
    assert text.splitlines()[0] == "Посчитаю: максимум диапазона (top), по дню недели"
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
        "среднее «rng_pct», по дню недели (weekday)"
    )
    assert "Фильтр: диапазон < 150" in ru
    assert "Новые колонки: weekday = dayname(); rng_pct = range / open * 100" in ru
    en = render_plan(query, nq, last, "en").splitlines()
    assert en[0] == (
        "Compute: number of days, average range, median volume (vol), average rng_pct, by weekday"
    )
    assert "Filter: range < 150" in en
    # A comparison naming a column the query made, or calling a function, stays a formula;
    # the others beside it are in words, joined by the language's words.
    gap = {**query, "map": {"gap": "open - prev(close)"}, "where": "gap > 50 and range > 10"}
    assert "Фильтр: gap > 50 и диапазон > 10" in render_plan(gap, nq, last, "ru")
    share = {"session": "RTH", "from": "daily", "select": "mean(close > open)", "where": "1 > 0"}
    assert render_plan(share, nq, last, "ru").startswith(
        "Посчитаю: доля дней, где закрытие > открытие"
    )


def test_calendar_group_keys_are_words_and_a_second_stage_counts_the_first_s_groups() -> None:
    """f49g: the Russian plan read «по «year()»», «по «hour()»» (the query's code where the
    chart's subtitle says «по году») and, of the weekday making each week's high, «Затем:
    количество баров (weeks), по «day»»: the second stage counts the first's week groups,
    not bars. ``day`` (``arg_max(dayname(), high)``) is the query's name, quoted."""
    nq, last = load_instrument("NQ"), dt.date(2026, 1, 7)
    by_year = {"session": "RTH", "from": "daily", "group_by": "year()", "select": "mean(range)"}
    by_hour = {"session": "ETH", "from": "1h", "group_by": "hour()", "select": "mean(volume)"}
    assert render_plan(by_year, nq, last, "ru").splitlines()[0] == (
        "Посчитаю: средний диапазон (range), по году"
    )
    assert render_plan(by_hour, nq, last, "ru").splitlines()[0] == (
        "Посчитаю: средний объём (volume), по часу"
    )
    weeks = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "group_by": "week()",
        "select": "arg_max(dayname(), high) as day",
        "then": {"group_by": "day", "select": "count() as weeks"},
    }
    ru = render_plan(weeks, nq, last, "ru").splitlines()
    assert ru[0] == "Посчитаю: «arg_max(dayname(), high)» (day), по неделе"
    assert ru[-1] == "Затем: количество недель (weeks), по «day»"
    en = render_plan(weeks, nq, last, "en").splitlines()
    assert en[-1] == "Then: number of weeks, by day"
    # A second stage over groups with no calendar name counts groups.
    other = {**weeks, "group_by": "dayname()", "select": "max(range) as top"}
    other["then"] = {"select": "count()"}
    assert render_plan(other, nq, last, "ru").splitlines()[-1] == "Затем: количество групп"
    # A second stage's key the first stage's month() made is Barb's name, said once.
    months = {
        "session": "RTH",
        "from": "daily",
        "group_by": ["year()", "month()"],
        "select": "last(close) / first(open) - 1 as ret",
        "then": {"group_by": "month", "select": "mean(ret)"},
    }
    assert render_plan(months, nq, last, "ru").splitlines()[-1] == (
        "Затем: среднее «ret», по месяцу"
    )
    # Its where inside the line: «…, по месяцу; Фильтр: month in (9, 10)» began a sentence.
    autumn = {**months, "then": {**months["then"], "where": "month in (9, 10)"}}
    assert render_plan(autumn, nq, last, "ru").splitlines()[-1] == (
        "Затем: среднее «ret», по месяцу; где month in (9, 10)"
    )
    assert render_plan(autumn, nq, last, "en").splitlines()[-1] == (
        "Then: average ret, by month; where month in (9, 10)"
    )


def test_a_period_written_as_dates_reads_as_its_dates() -> None:
    """f49g: «Период: 2015: (2015-01-01 — …)» and «2020:2023 (2020-01-01 — 2023-12-31)»
    showed the query's token beside the dates it stands for."""
    nq, last = load_instrument("NQ"), dt.date(2026, 1, 7)

    def period(text: str) -> str:
        query = {"session": "RTH", "from": "daily", "period": text, "select": "count()"}
        return render_plan(query, nq, last, "ru").splitlines()[2]

    assert period("2015:") == "Период: 2015-01-01 — …"
    assert period(":2015") == "Период: … — 2015-12-31"
    assert period("2020:2023") == "Период: 2020-01-01 — 2023-12-31"
    assert period("2024-03") == "Период: 2024-03-01 — 2024-03-31"


def test_a_filter_that_calls_a_function_reads_in_words_around_the_call() -> None:
    """«Фильтр: gap_pct > 0.5 and close > open»: one name the query made, or one call, left
    the whole filter code, "and" and the bar columns in English, where a filter without
    them reads «закрытие > открытие и объём > 100000». Each comparison now reads as the
    others do: the bar columns in words where it calls nothing and names nothing else, the
    call as written; and, or, not always in words. The count's condition reads so too."""
    nq, last = load_instrument("NQ"), dt.date(2026, 1, 7)
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"gap_pct": "(open - prev(close)) / prev(close) * 100"},
        "where": "gap_pct > 0.5 and close > open or not inside_day() and rsi(close, 14) < 30",
        "select": "count(close > prev(close) and volume > 100000)",
    }
    words = {
        "ru": (
            "Фильтр: gap_pct > 0.5 и закрытие > открытие или не inside_day() и rsi(close, 14) < 30",
            "Посчитаю: количество дней, где close > prev(close) и объём > 100000",
        ),
        "en": (
            "Filter: gap_pct > 0.5 and close > open or not inside_day() and rsi(close, 14) < 30",
            "Compute: number of days where close > prev(close) and volume > 100000",
        ),
    }
    for lang, (where, count) in words.items():
        lines = render_plan(query, nq, last, lang).splitlines()
        assert where in lines
        assert lines[0] == count
    # Parenthesized where precedence needs it, in words too.
    grouped = {**query, "where": "(gap_pct > 0.5 or range > 300) and not (close > open)"}
    assert "Фильтр: (gap_pct > 0.5 или диапазон > 300) и не (закрытие > открытие)" in (
        render_plan(grouped, nq, last, "ru").splitlines()
    )


def test_a_quarter_is_named_once_in_words_beside_its_dates() -> None:
    """«Период: last_quarter (2025-10-01 — 2025-12-31)» put the query's token in a Russian
    sentence, and a quarter's dates alone do not say which quarter they are. Written as
    "2025-Q4", "last_quarter" or pinned to its dates (as the bot shows a plan), the quarter
    is said once, in words, beside its dates; any other span reads as before."""
    nq, last = load_instrument("NQ"), dt.date(2026, 1, 7)

    def period(text: str, lang: str) -> str:
        query = {"session": "RTH", "from": "daily", "period": text, "select": "count()"}
        return render_plan(query, nq, last, lang).splitlines()[2]

    for text in ("2025-Q4", "last_quarter", "2025-10-01:2025-12-31", "2025q4"):
        assert period(text, "en") == "Period: Q4 2025 (2025-10-01 — 2025-12-31)"
        assert period(text, "ru") == "Период: 4-й квартал 2025 (2025-10-01 — 2025-12-31)"
    assert period("2024-Q1", "ru") == "Период: 1-й квартал 2024 (2024-01-01 — 2024-03-31)"
    # Not a whole quarter: its dates, as before.
    assert period("2025-10-01:2025-12-30", "en") == "Period: 2025-10-01 — 2025-12-30"
    assert period("2025-11:2026-01", "en") == "Period: 2025-11-01 — 2026-01-31"
    assert period("qtd", "en") == "Period: qtd (2026-01-01 — 2026-01-07)"


def test_a_percentile_takes_its_ordinal_suffix() -> None:
    """ "Compute: 1th percentile of range, 22th percentile of range": the plan (and the
    chart's names, the same words) put "th" after every number."""
    nq, last = load_instrument("NQ"), dt.date(2026, 1, 7)
    query = {
        "session": "RTH",
        "from": "daily",
        "select": [f"percentile(range, {p})" for p in (1, 2, 3, 11, 22, 90)],
    }
    assert render_plan(query, nq, last, "en").splitlines()[0] == (
        "Compute: 1st percentile of range, 2nd percentile of range, 3rd percentile of range, "
        "11th percentile of range, 22nd percentile of range, 90th percentile of range"
    )
    assert (
        render_plan(query, nq, last, "ru")
        .splitlines()[0]
        .startswith("Посчитаю: 1-й перцентиль диапазона (range), 2-й перцентиль диапазона (range)")
    )


def test_a_plan_without_a_session_names_the_one_the_engine_reads(sample_settings) -> None:
    """Minute bars with no session read the whole trading day (ETH: the engine's rule, its
    warning "No session given for 1m bars: ETH … used, not the default RTH"), but the plan
    said "session RTH (09:30–17:00 ET)": the person pressed Run on a plan naming RTH and
    got a number over every bar of the day. Counted here over the raw file: the minute bars
    of the two trading dates, all of them."""
    import pandas as pd

    from barb.interpreter import execute

    period = "2025-12-01:2025-12-02"
    dates = pd.read_parquet(sample_settings.data_dir / "NQ.parquet", columns=["trading_date"])
    days = pd.to_datetime(dates["trading_date"])
    whole_days = int(days.between("2025-12-01", "2025-12-02").sum())
    nq = load_instrument("NQ")
    for timeframe, session, count in (
        ("1m", "ETH (18:00–17:00 ET)", whole_days),
        ("daily", "RTH (09:30–17:00 ET)", 2),
    ):
        query = {"from": timeframe, "period": period, "select": "count()"}
        plan = render_plan(query, nq, dt.date(2026, 1, 7), "en").splitlines()
        assert plan[1].endswith(f"session {session}"), plan
        assert execute(query, "NQ", settings=sample_settings).summary.value == count


def test_a_window_on_another_clock_is_named_as_written() -> None:
    """ "10:00-11:00 Moscow" read «сессия 10:00-11:00 MOSCOW»: only a named session is
    written in capitals (rth is RTH), with its hours."""
    nq = load_instrument("NQ")
    for session, shown in (
        ("10:00-11:00 Moscow", "сессия 10:00-11:00 Moscow"),
        ("rth", "сессия RTH (09:30–17:00 ET)"),
    ):
        query = {"session": session, "from": "daily", "select": "mean(range)"}
        bars = render_plan(query, nq, dt.date(2026, 1, 7), "ru").splitlines()[1]
        assert bars == f"Бары: NQ, дневные бары, {shown}"
