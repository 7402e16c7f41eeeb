"""/query's notes in a Russian chat: the notes of the query itself (the bars and session
taken, a limit cutting a tie, the CSV holding the first rows) in Russian, read from what the
engine really writes; any other note in its English under the lead-in that says so."""

from __future__ import annotations

import pytest

from barb.interpreter import execute
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
