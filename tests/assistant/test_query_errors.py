"""Typed Barb Script that does not run is explained in the person's language."""

from __future__ import annotations

import json

import pytest

from barb.errors import QueryError
from bot.assistant.gate import Unreadable, parse_query_text
from bot.assistant.orchestrator import Stopped
from bot.assistant.query_errors import ERROR_KINDS, unreadable_text
from bot.pool.jobs import killed_outcome
from bot.texts import t

# Text that makes Python's JSON decoder give each of its reasons, and the words a person
# reads for it.
BROKEN = {
    "": ("a value was expected", "ожидалось значение"),
    '{"a": 1 "b": 2}': ("a comma is missing", "не хватает запятой"),
    '{"a" 1}': ("a colon is missing", "не хватает двоеточия"),
    "{'a': 1}": ("a field name in double quotes", "ожидалось имя поля в двойных кавычках"),
    '{"a": "b}': ("a string is not closed", "строка не закрыта"),
    '{"a": "b\nc"}': ("a control character", "управляющий символ"),
    '{"a": "\\q"}': ("an invalid escape", "неверную последовательность"),
    '{"a": "\\u12"}': ("an invalid escape", "неверную последовательность"),
    '{"a": 1} x': ("text after the query", "лишний текст"),
}


@pytest.mark.parametrize("broken", list(BROKEN))
def test_every_reason_of_the_json_reader_is_said_in_both_languages(broken: str) -> None:
    with pytest.raises(json.JSONDecodeError) as raised:
        json.loads(broken)
    unreadable = Unreadable(
        "query_bad_json", {"reason": raised.value.msg, "position": raised.value.pos, "text": broken}
    )
    english, russian = BROKEN[broken]
    assert english in unreadable_text(unreadable, "en")
    said = unreadable_text(unreadable, "ru")
    assert russian in said
    assert "Expecting" not in said and "Invalid" not in said and "Extra" not in said


def test_a_json_error_says_where_the_text_broke() -> None:
    typed = '{"select": "mean(range)" "where": "close > open"}'
    bad = parse_query_text(typed)
    assert isinstance(bad, Unreadable)
    at = typed.index('"where"')
    assert f'(character {at + 1}: `"where": "close > open"}}`)' in unreadable_text(bad, "en")
    assert f'(символ {at + 1}: `"where"' in unreadable_text(bad, "ru")


@pytest.mark.parametrize(
    ("lang", "first"),
    [
        ("en", "The query did not run: a query too large."),
        ("ru", "Запрос не выполнен: запрос слишком большой."),
    ],
)
def test_a_refused_query_says_the_kind_then_the_engines_words(lang: str, first: str) -> None:
    bad = parse_query_text('{"select": ' + "[" * 50 + "]" * 50 + "}")
    assert isinstance(bad, Unreadable)
    kind, *lead, detail, hint = unreadable_text(bad, lang).split("\n")
    assert kind == first  # no field: the whole query was refused
    # In Russian the engine's English is said to be its own.
    assert lead == ([] if lang == "en" else ["Сообщение движка (на английском):"])
    assert detail == "`The query nests JSON more than 8 levels deep.`"
    assert hint.endswith('"select": ["mean(range)", "max(high)"]`')


def test_every_kind_of_engine_error_has_its_own_words() -> None:
    def subclasses(cls: type) -> list[type]:
        return [cls, *(s for sub in cls.__subclasses__() for s in subclasses(sub))]

    # The base, its JSON case (said by the reader's reason instead), the timeout (a stop,
    # said by the runner's sentence) and MultipleErrors (which takes its first error's type).
    aside = {"QueryError", "InvalidJSON", "QueryTimeout"}
    kinds = {c.error_type for c in subclasses(QueryError) if isinstance(c.error_type, str)}
    assert kinds - aside <= set(ERROR_KINDS)
    said = {t(ERROR_KINDS[kind], "ru") for kind in kinds - aside}
    assert len(said) == len(kinds - aside)  # no two kinds read alike


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (
            "en",
            "The system stopped the process running this query (reference ab12cd34), most "
            "likely because the server ran out of memory; try a shorter period or a longer "
            "timeframe (hourly or daily bars instead of minutes).",
        ),
        (
            "ru",
            "Система остановила процесс, считавший этот запрос (код ab12cd34), скорее всего "
            "из-за нехватки памяти на сервере; попробуйте период короче или таймфрейм "
            "крупнее (часовые или дневные бары вместо минутных).",
        ),
    ],
)
def test_a_worker_killed_by_the_system_is_said_as_such(lang: str, said: str) -> None:
    """A worker SIGKILLed mid-query (the kernel's OOM killer, most likely) was said as "a
    failure on my side … please try again", with the Run button back for the same query,
    which the system would most likely kill again. Now the person reads what happened and
    what to try instead, and the plan does not invite the same run again."""
    stopped = Stopped(killed_outcome("ab12cd34").error or {})
    assert stopped.sentence(lang) == said  # type: ignore[arg-type]
    assert not stopped.worth_pressing_again
    assert stopped.note == (
        "Stopped: the system killed the query's worker, most likely short of memory."
    )


@pytest.mark.parametrize(("select", "name"), [("mean(rnage)", "`range`"), ("volum", "`volume`")])
def test_a_guessed_name_is_asked_in_the_persons_words(
    sample_settings, select: str, name: str
) -> None:
    """``/query`` with a misspelt column in a Russian chat: the engine's hint "did you mean
    'range'?" came under «Подсказка:» in English. The guess is asked in Russian, the name
    as code; a hint that says more stays quoted as written."""
    from barb import execute

    error = execute({"from": "daily", "select": select}, "NQ", settings=sample_settings).error
    assert error is not None and str(error.hint).startswith("did you mean")  # the engine's
    bad = Unreadable("query_failed", {"error": error.to_dict()})
    assert unreadable_text(bad, "ru").split("\n")[-1] == f"Может быть, имелось в виду {name}?"
    assert unreadable_text(bad, "en").split("\n")[-1] == f"Did you mean {name}?"
    other = execute({"from": "daily", "select": "tr(14)"}, "NQ", settings=sample_settings).error
    assert other is not None
    told = unreadable_text(Unreadable("query_failed", {"error": other.to_dict()}), "ru")
    assert told.split("\n")[-1] == f"Подсказка: `{other.hint}`"
