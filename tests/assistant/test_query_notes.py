"""/query's notes in a Russian chat: the engine's notes that are values (``barb.notes``: the
bars and session taken, a limit cutting a tie, the CSV holding the first rows, an unfinished
week left out) in Russian, from the answer's JSON; any other note in its English under the
lead-in that says so. The model reads each note's English as the engine always wrote it."""

from __future__ import annotations

import pytest

import barb.notes as notes_of
from barb.interpreter import execute
from barb.notes import Note, note_specs, note_words
from barb.settings import EngineSettings
from bot.assistant.result_text import person_text
from bot.texts import t


def notes(query: dict, settings: EngineSettings, lang: str) -> tuple[list[str], list[str]]:
    """The notes /query shows: those said in the chat's language, those in English."""
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.error
    lines = person_text(result.to_dict(), lang).split("\n")
    said, english, into = [], [], None
    for line in lines:
        if line == t("notes", lang):
            into = said
        elif line == t("engine_notes", lang):
            into = english
        elif line.startswith("⚠ ") and into is not None:
            into.append(line[2:].replace("\\", ""))
        elif not line:
            into = None
    return said, english


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            {"select": "count()"},
            [
                "Таймфрейм не указан: взяты дневные бары.",
                "Сессия не указана: дневные бары взяты по RTH (сессия по умолчанию).",
            ],
        ),
        (
            {"from": "1h", "period": "2024", "select": "count()"},
            [
                "Сессия не указана: часовые бары взяты за весь торговый день (ETH), а не по "
                "сессии по умолчанию RTH."
            ],
        ),
    ],
)
def test_the_notes_of_the_query_itself_read_russian(
    sample_settings: EngineSettings, query: dict, expected: list[str]
) -> None:
    said, english = notes(query, sample_settings, "ru")
    for note in expected:
        assert note in said, (said, english)
    assert not any(note.startswith(("No session", "No 'from'")) for note in english)


def test_the_csv_note_counts_the_bars_it_is_over(sample_settings: EngineSettings) -> None:
    import pandas as pd

    from barb.data.store import data_path

    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=["timestamp", "minute"])
    rth_2024 = bars[
        (bars["timestamp"].dt.year == 2024) & bars["minute"].between(570, 1019)
    ]  # 09:30-17:00
    query = {"from": "1m", "session": "RTH", "period": "2024", "select": "mean(range)"}
    said, english = notes(query, sample_settings, "ru")
    rows = f"{len(rth_2024):,}".replace(",", "\u00a0")
    assert f"Число посчитано по {rows} строкам; в CSV первые 50\u00a0000 из них." in said
    assert not english or not any(n.startswith("The number is over") for n in english)


def test_a_tie_cut_by_the_limit_is_said_with_the_rows_and_the_limit_to_raise(
    sample_settings: EngineSettings,
) -> None:
    """Months by their days over 400 points, limit 3: the third place ties with another."""
    query = {
        "from": "daily",
        "session": "RTH",
        "where": "range > 400",
        "group_by": "month()",
        "select": "count()",
        "sort": "count desc",
        "limit": 3,
    }
    result = execute(query, "NQ", settings=sample_settings)
    table = result.table
    assert table is not None
    said, english = notes(query, sample_settings, "ru")
    [tie] = [n for n in said if n.startswith("лимит 3 режет ничью")]
    third = int(table["count"].iloc[-1])
    assert f"count = {third} " in tie and "поднимите лимит до 4" in tie
    assert not any("cuts through a tie" in n for n in english)
    # In English too, the person is told what to do, not the model ("say it is a tie").
    said, english = notes(query, sample_settings, "en")
    [tie] = [n for n in said if n.startswith("limit 3 cuts through a tie")]
    assert tie.endswith("raise the limit to 4 to see them all.")
    assert not any("say it is a tie" in n for n in [*said, *english])


def open_week(settings: EngineSettings) -> tuple[str, str, str]:
    """The sample's last week, which its data's end cuts: its Monday, and the first and last
    trading dates the data holds of it, from the raw bars."""
    import pandas as pd

    from barb.data.store import data_path

    dates = pd.read_parquet(data_path("NQ", settings), columns=["trading_date"])["trading_date"]
    last = dates.max().normalize()
    monday = last - pd.Timedelta(days=last.dayofweek)
    held = dates[dates >= monday]
    return (monday.date().isoformat(), held.min().date().isoformat(), last.date().isoformat())


WEEKS_TO_THE_END = {"from": "weekly", "period": "2025-12-01:", "select": ["close"]}


def test_the_unfinished_week_left_out_reads_russian_and_the_model_reads_its_english(
    sample_settings: EngineSettings,
) -> None:
    """Weekly closes to the data's end: the week the data's end cuts is left out. The note
    said it only in English under «Примечания движка (на английском)» in a Russian chat."""
    monday, first, last = open_week(sample_settings)
    said, english = notes(WEEKS_TO_THE_END, sample_settings, "ru")
    assert english == []
    assert (
        f"Неделя {monday} ещё не закончилась (в данных только {first} — {last}); в расчёте "
        'только полные недели. Текущая неделя: «"period": "wtd"».'
    ) in said
    assert "Сессия не указана: недельные бары взяты по RTH (сессия по умолчанию)." in said
    result = execute(WEEKS_TO_THE_END, "NQ", settings=sample_settings)
    assert result.metadata is not None
    assert result.metadata.warnings == [
        "No session given for weekly bars: RTH (the default session) used.",
        f"The week {monday} is not over yet (the data covers only {first} — {last}): left "
        'out, so only whole weeks count. This week so far: "period": "wtd".',
    ]


def test_the_weeks_cut_by_the_datas_ends_read_russian(sample_settings: EngineSettings) -> None:
    """The data's first week began before it (its bar left out) and its last one is not over
    (its group holds 3 days): both notes were English in a Russian chat. Their days are
    counted here from the raw bars and the exchange's weekdays."""
    import pandas as pd

    from barb.data.store import data_path

    dates = pd.read_parquet(data_path("NQ", sample_settings), columns=["trading_date"])
    days = pd.DatetimeIndex(dates["trading_date"].unique()).normalize()
    first, last = days.min(), days.max()
    first_monday = first - pd.Timedelta(days=first.dayofweek)
    held_first = int((days < first_monday + pd.Timedelta(days=7)).sum())
    last_monday = last - pd.Timedelta(days=last.dayofweek)
    held_last = int((days >= last_monday).sum())
    # The sample begins on Wednesday 2008-01-02: Monday 2007-12-31 traded, 1 January not.
    assert (first.date().isoformat(), held_first, held_last) == ("2008-01-02", 3, 3)

    said, english = notes({"from": "weekly", "select": "count()"}, sample_settings, "ru")
    assert english == []
    assert (
        f"Неделя {first.date()} началась раньше, чем начинаются данные: в баре этой недели "
        f"только {held_first} из 4 торговых дней. Он не учтён: в расчёте только полные недели."
    ) in said
    # Days counted by week over all the data: the first week's row and the last week's group.
    said, english = notes(
        {"from": "daily", "group_by": "week()", "select": "count()"}, sample_settings, "ru"
    )
    assert english == []
    assert (
        f"Неделя {first.date()} началась раньше, чем начинаются данные: в строке этой недели "
        f"учтены только {held_first} из 4 торговых дней."
    ) in said
    query = {"from": "daily", "period": "2025-12-01:", "group_by": "week()", "select": "count()"}
    said, english = notes(query, sample_settings, "ru")
    assert english == []
    assert (
        f"Неделя {last_monday.date()} ещё не закончилась: в группе только бары по {last.date()}, "
        "где кончаются данные (период, который кончается раньше, сравнивает только полные "
        f"недели). В группе {held_last} торговых дня против 5 за всю неделю по календарю биржи."
    ) in said


def test_the_datas_last_days_a_where_reading_next_cannot_judge_read_russian(
    sample_settings: EngineSettings,
) -> None:
    """ "Days whose next close is higher": the data's last days have no next close. The note
    that says they are left out was English in a Russian chat; the days are the sample's
    last RTH dates, read from the raw bars."""
    import pandas as pd

    from barb.data.store import data_path

    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=["trading_date", "minute"])
    rth = bars.loc[bars["minute"].between(570, 959), "trading_date"]  # 09:30-16:00
    days = [str(d.date()) for d in sorted(rth.unique())[-3:]]
    query = {"from": "daily", "where": "next(close) > close", "select": "count()"}
    said, english = notes(query, sample_settings, "ru")
    assert english == []
    assert (
        f"{days[-1]} (последний день в данных) выпадает из расчёта: «where» читает «next()», а "
        "следующего дня ещё нет, так что у условия там нет значения (строка не оставлена и не "
        "отброшена)."
    ) in said
    query = {"from": "daily", "where": "next(close, 3) > close", "select": "count()"}
    said, english = notes(query, sample_settings, "ru")
    assert english == []
    assert (
        f"Последние 3 дня в данных ({days[0]} — {days[-1]}) выпадают из расчёта: «where» читает "
        "«next()» за концом данных, так что у условия на них нет значения (строки не оставлены "
        "и не отброшены)."
    ) in said


def test_a_size_by_year_over_changed_price_levels_reads_russian(
    sample_settings: EngineSettings,
) -> None:
    """ "Average daily range by year": the years' price levels differ 13.7 times, which the
    note says with the years' mean closes, counted here from the raw bars (RTH's daily close,
    the last close of 09:30-17:00, over the whole years)."""
    import pandas as pd

    from barb.data.store import data_path

    bars = pd.read_parquet(
        data_path("NQ", sample_settings), columns=["trading_date", "minute", "close"]
    )
    closes = bars[bars["minute"].between(570, 1019)].groupby("trading_date")["close"].last()
    years = closes.groupby(closes.index.year).mean()
    years = years[years.index < closes.index.max().year]  # the last year is not over
    low, high = years.idxmin(), years.idxmax()
    ratio = f"{years.max() / years.min():.1f}".replace(".", ",")

    def grouped(value: float) -> str:
        return f"{value:,.0f}".replace(",", "\u00a0")

    query = {"from": "daily", "group_by": "year()", "select": "mean(range)"}
    said, english = notes(query, sample_settings, "ru")
    assert english == []
    assert (
        f"mean_range — в пунктах, а уровень цены за эти годы изменился в {ratio} раза "
        f"(средний close {grouped(years[low])} в {low}, {grouped(years[high])} в {high}): "
        "значение каждого года растёт вместе с ценой, так что годы сравнивают уровни цены не "
        "меньше, чем размеры движений. Чтобы размеры были сравнимы между годами, берите "
        "процент (range / open * 100)."
    ) in said


# What the engine wrote before its notes were values, word for word: the model reads the
# same English.
ENGINE_ENGLISH = [
    (notes_of.NO_FROM, {}, "No 'from' given: daily bars used."),
    (
        notes_of.DEFAULT_SESSION,
        {"timeframe": "1h", "session": "RTH"},
        "No session given for 1h bars: RTH (the default session) used.",
    ),
    (
        notes_of.WHOLE_DAY,
        {"timeframe": "5m", "default": "RTH"},
        "No session given for 5m bars: ETH (the whole trading day) used, not the default RTH.",
    ),
    (
        notes_of.CSV_FIRST_ROWS,
        {"rows": 106422, "held": 50000},
        "The number is over 106,422 rows; the CSV holds the first 50,000 of them.",
    ),
    (
        notes_of.TABLE_FIRST_ROWS,
        {"rows": "410415", "held": "50000"},
        "The table has 410415 rows; only the first 50000 are kept for display. Add a limit "
        "or aggregate.",
    ),
    (
        notes_of.LIMIT_TIE,
        {"limit": "3", "tied": "2", "value": "count = 7 (Mar, Oct)", "kept": "1", "next": "4"},
        "limit 3 cuts through a tie: 2 rows have count = 7 (Mar, Oct), and 1 of them is kept, "
        "the first in the rows' order; say it is a tie, or raise the limit to 4.",
    ),
    (
        notes_of.LIMIT_TIE,
        {"limit": "1000", "tied": "1200", "value": "n = 1", "kept": "2", "next": "2199"},
        "limit 1000 cuts through a tie: 1200 rows have n = 1, and 2 of them are kept, the "
        "first in the rows' order; say it is a tie, or raise the limit to 2199.",
    ),
    (notes_of.NO_BARS, {}, "No bars matched: the result is empty."),
    (
        notes_of.HOLIDAY_ROWS,
        {
            "count": "49",
            "traded": Note.of(notes_of.SOME_SHORT, count="47"),
            "example": "2008-05-26",
        },
        "49 of the rows are US holiday sessions (the stock market closed, 47 traded short "
        'hours), e.g. 2008-05-26: "where": "not holiday()" leaves them out when the question '
        "is about the stock market's days.",
    ),
    (
        notes_of.HOLIDAY_ROWS,
        {
            "count": "1",
            "traded": Note.of(notes_of.TRADED_IN_FULL, hours="15:30-16:00"),
            "example": "2012-10-29",
        },
        "1 of the rows is a US holiday session (the stock market closed, 15:30-16:00 traded in "
        'full), e.g. 2012-10-29: "where": "not holiday()" leaves them out when the question is '
        "about the stock market's days.",
    ),
    (
        notes_of.START_LEFT_OUT,
        {
            "unit": "week",
            "label": "2008-01-02",
            "bar": "",
            "held": 3,
            "total": 4,
        },
        "The week 2008-01-02 began before the data starts: its weekly bar holds only 3 of its 4 "
        "days. Left out: only whole weeks count.",
    ),
    (
        notes_of.START_LEFT_OUT,
        {
            "unit": "year",
            "label": "2008",
            "bar": " (2008-01-02)",
            "held": 251,
            "total": 253,
        },
        "The year 2008 began before the data starts: its yearly bar (2008-01-02) holds only 251 "
        "of its 253 days. Left out: only whole years count.",
    ),
    (
        notes_of.START_ROW,
        {"unit": "week", "label": "2008-01-02", "held": 3, "total": 4},
        "The week 2008-01-02 began before the data starts: its row counts only 3 of its 4 days.",
    ),
    (
        notes_of.OPEN_GROUP,
        {"unit": "year", "label": "2026", "last": "2026-01-07", "held": None},
        "The year 2026 is not over: its group holds only the bars up to 2026-01-07, where the "
        "data ends (a period ending before it compares whole years only).",
    ),
    (
        notes_of.OPEN_GROUP,
        {
            "unit": "week",
            "label": "2026-01-05",
            "last": "2026-01-07",
            "held": Note.of(notes_of.GROUP_DAYS, count=1, total=5, unit="week"),
        },
        "The week 2026-01-05 is not over: its group holds only the bars up to 2026-01-07, where "
        "the data ends (a period ending before it compares whole weeks only). It holds 1 day, "
        "against 5 in the whole week (the exchange's calendar).",
    ),
    (
        notes_of.UNJUDGED_LAST,
        {"unit": "day", "label": "2026-01-07"},
        "2026-01-07, the data's last day, is left out: the where reads next(), and no day "
        "follows it yet, so the where has no value there (neither kept nor dropped).",
    ),
    (
        notes_of.UNJUDGED_LAST_ROWS,
        {"unit": "bar", "label": "2026-01-07 15:55 — 2026-01-07 16:55", "rows": "1200"},
        "The data's last 1200 bars (2026-01-07 15:55 — 2026-01-07 16:55) are left out: the "
        "where reads next() past the data's end, so it has no value on them (neither kept nor "
        "dropped).",
    ),
    (
        notes_of.LEVELS_BY_YEAR,
        {
            "name": "mean_range",
            "unit": "points",
            "ratio": "13.7",
            "low": 1372,
            "low_year": "2009",
            "high": 18782,
            "high_year": Note.of(
                notes_of.PART_YEAR, year="2026", first="2026-01-02", last="2026-01-07"
            ),
            "percent": "range / open * 100",
        },
        "mean_range is in points over years whose price level changed 13.7x (mean close 1,372 "
        "in 2009, 18,782 in 2026 (2026-01-02 — 2026-01-07 only)): each year's value grows with "
        "its price, so the years compare price levels as much as sizes. For a size comparable "
        "across years use percent (range / open * 100).",
    ),
    (
        notes_of.OPEN_LEFT_OUT,
        {
            "unit": "year",
            "label": "2026",
            "first": "2026-01-02",
            "last": "2026-01-07",
            "to_date": "ytd",
            "ahead": "2025",
        },
        "The year 2026 is not over yet (the data covers only 2026-01-02 — 2026-01-07): left "
        'out, so only whole years count. This year so far: "period": "ytd". next() reads no '
        "year after 2025, the last whole one: it is empty there, not the unfinished year's.",
    ),
]


@pytest.mark.parametrize(("kind", "values", "english"), ENGINE_ENGLISH)
def test_a_note_is_the_engines_english_and_travels_as_json(kind, values, english) -> None:
    import json
    import pickle

    note = Note.of(kind, **values)
    assert note == english
    spec = json.loads(json.dumps(note_specs([note, "a plain warning"]), default=dict))
    assert list(spec) == [english]  # a plain sentence has no key to say it by
    spec = {english: note_specs([note])[english].model_dump()}
    assert note_words(english, spec, "ru") == note.words("ru") != english
    assert pickle.loads(pickle.dumps(note)).words("ru") == note.words("ru")


def test_every_kind_of_note_is_written_in_russian() -> None:
    """Every key a note is said by (its own, a person's, its unit's words) has a Russian
    text of its own in the barb catalog, with the English one's values."""
    from string import Formatter

    from barb.i18n import messages

    english, russian = messages("barb", "en"), messages("barb", "ru")
    keys = {k for kind in notes_of.KINDS.values() for k in (kind.key, kind.person) if k}
    keys |= {key for words in notes_of._UNIT_WORDS.values() for key in words.values()}
    keys |= {key for words in notes_of._GROUP_WORDS.values() for key in words.values()}
    keys |= {key for words in notes_of._LAST_WORDS.values() for key in words.values()}
    keys |= set(notes_of._IN_UNIT.values())
    keys.add(notes_of._NEXT_EMPTY)
    assert len(notes_of.KINDS) >= 8
    for key in sorted(keys):
        assert russian.get(key) and russian[key] != english[key], key

        def fields(template: str) -> set[str]:
            return {name for _, name, _, _ in Formatter().parse(template) if name}

        assert fields(russian[key]) == fields(english[key]), key
