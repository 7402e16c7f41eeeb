"""Loading question files: a bad entry is refused with its id and the field at fault."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from barb.data.store import DataMeta
from barb.settings import EngineSettings
from bot.cli import main
from bot.eval.question_set import DEFAULT_QUESTIONS, QuestionSetError, load_questions

GOOD = """
- id: one
  lang: en
  question: Average RTH range?
  query: {session: RTH, from: daily, select: mean(range)}
  expected: [129.6]
"""


def write(tmp_path, text: str):
    path = tmp_path / "questions.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_one_turn_form_becomes_turns(tmp_path) -> None:
    [question] = load_questions(write(tmp_path, GOOD))
    assert question.turns[0].query == {"session": "RTH", "from": "daily", "select": "mean(range)"}
    assert question.instrument == "NQ" and question.tolerance == 0.002
    assert not question.follow_up


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace("lang: en", "lang: de"), "Question one in"),
        (GOOD.replace("expected: [129.6]", "expected: []"), "expected"),
        (GOOD.replace("  query:", "  turns: []\n  query:"), "not both"),
        (GOOD + GOOD, "Duplicate question ids in"),
        (GOOD + "  requires: [time_travel]\n", "unknown feature time_travel; known: first_last"),
        ("just text", "must be a non-empty YAML list"),
        ("- [unclosed", "Cannot read the questions"),
    ],
)
def test_bad_files_are_refused_with_the_reason(tmp_path, text: str, message: str) -> None:
    with pytest.raises(QuestionSetError, match=message):
        load_questions(write(tmp_path, text))


def test_the_cli_refuses_a_bad_file_in_one_sentence(tmp_path) -> None:
    path = write(tmp_path, GOOD.replace("lang: en", "lang: de"))
    outcome = CliRunner().invoke(main, ["eval", "--provider", "scripted", "--questions", str(path)])
    assert outcome.exit_code == 2
    assert "Question one in" in outcome.output and "Traceback" not in outcome.output


def test_the_cli_needs_a_key_for_a_real_provider(tmp_path, monkeypatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no .env here
    outcome = CliRunner().invoke(
        main, ["eval", "--provider", "anthropic", "--questions", str(write(tmp_path, GOOD))]
    )
    assert outcome.exit_code == 2
    assert "ANTHROPIC_API_KEY" in outcome.output


def test_the_cli_refuses_data_that_is_not_the_sample(tmp_path, monkeypatch) -> None:
    """The expected answers are the sample's: other data would be scored against numbers it
    cannot have."""
    empty = EngineSettings(data_dir=tmp_path / "nothing")
    monkeypatch.setattr("bot.eval.cli.default_settings", lambda: empty)
    outcome = CliRunner().invoke(main, ["eval", "--provider", "scripted"])
    assert outcome.exit_code == 2
    assert "No data for CL" in outcome.output and "barb data sample" in outcome.output

    imported = DataMeta.model_construct(source="imported")
    monkeypatch.setattr("bot.eval.cli.read_meta", lambda path: imported)
    outcome = CliRunner().invoke(main, ["eval", "--provider", "scripted"])
    assert outcome.exit_code == 2
    assert "is imported data" in outcome.output and "BARB_DATA_DIR" in outcome.output


@pytest.mark.parametrize("doc", ["README.md", "docs/eval.md"])
def test_the_docs_count_the_shipped_questions(doc: str) -> None:
    """The docs tell a user how big the set is; a set that grew must not leave them stale."""
    questions = load_questions(DEFAULT_QUESTIONS)
    russian = sum(question.lang == "ru" for question in questions)
    text = (Path(__file__).resolve().parents[2] / doc).read_text(encoding="utf-8")
    stated = re.search(r"(\d+) (?:trader )?questions[^(]*?\(?(\d+) of them in\s+Russian", text)
    assert stated is not None, f"{doc} no longer says how many questions there are"
    assert (int(stated[1]), int(stated[2])) == (len(questions), russian)
