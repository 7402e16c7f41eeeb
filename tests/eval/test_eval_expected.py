"""The question set's stored answers equal a second, independent computation.

Every expected number in bot/eval/questions.yaml is recomputed here from the raw minute bars
with hand-written pandas and TA-Lib (reference_answers.py), never through Barb.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from reference_answers import ANSWERS

from bot.eval.features import FEATURES
from bot.eval.question_set import load_questions

QUESTIONS = load_questions()

# What the set must cover (issue 11): every feature of the reference and the new ones.
COVERED_TAGS = {
    "sessions",
    "timeframes",
    "aggregates",
    "percentiles",
    "group_by",
    "windows",
    "indicators",
    "events",
    "patterns",
    "follow_up",
    "multi_instrument",
    "second_stage",
    "last_n_bars",
}


def test_the_set_is_large_bilingual_and_covers_every_feature() -> None:
    assert len(QUESTIONS) >= 60
    russian = [q for q in QUESTIONS if q.lang == "ru"]
    assert len(russian) * 3 >= len(QUESTIONS)
    assert {tag for q in QUESTIONS for tag in q.tags} >= COVERED_TAGS
    # Each feature being added is asked about at least twice, once in each language.
    for feature in FEATURES:
        langs = {q.lang for q in QUESTIONS if feature in q.requires}
        assert langs == {"en", "ru"}, feature
    assert {"fomc", "nfp", "cpi", "opex", "eia"} <= {
        str(step.query.get("join")) for q in QUESTIONS for step in q.turns
    }
    assert {"NQ", "ES", "CL"} == {q.instrument for q in QUESTIONS}


def test_every_question_has_an_independent_answer() -> None:
    assert {q.id for q in QUESTIONS} == set(ANSWERS)


@pytest.mark.slow
@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q.id)
def test_stored_answer_matches_the_independent_computation(question, eval_settings) -> None:
    computed = [float(v) for v in ANSWERS[question.id]()]
    # Stored with 7 significant digits.
    assert question.expected == pytest.approx(computed, rel=1e-6, abs=1e-9)


def test_the_documented_command_imports_the_reference_answers() -> None:
    """docs/eval.md's PYTHONPATH finds every module reference_answers imports (nyse_holidays
    lives in tests/, not tests/eval/)."""
    root = Path(__file__).resolve().parents[2]
    stated = re.search(
        r"`PYTHONPATH=(\S+) \S+ -m reference_answers", (root / "docs/eval.md").read_text()
    )
    assert stated is not None
    env = {**os.environ, "PYTHONPATH": stated[1]}
    done = subprocess.run(
        [sys.executable, "-c", "import reference_answers"], cwd=root, env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()
