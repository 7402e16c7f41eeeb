"""CI's run of the whole set: `barb eval --provider scripted` plays each question's reference
query through the real assistant, confirm gate, runner and summaries, and must pass 100%.

Questions that need an engine feature not merged yet are skipped, and the run says how many;
once the features exist (their probes pass) nothing is skipped.
"""

from __future__ import annotations

import json

import pytest
from cli_thread import invoke_cli

from barb.data.store import data_path, read_meta
from barb.instruments import load_instrument
from barb.settings import EngineSettings
from bot.assistant.plan import pinned
from bot.eval.features import available
from bot.eval.question_set import load_questions

pytestmark = pytest.mark.slow


def test_scripted_eval_passes_every_question(eval_settings, tmp_path) -> None:
    questions = load_questions()
    present = available({name for q in questions for name in q.requires}, eval_settings)
    must_skip = {q.id for q in questions if not all(present[name] for name in q.requires)}

    outcome = invoke_cli(["eval", "--provider", "scripted", "--out", str(tmp_path)])

    report = json.loads((tmp_path / "eval_report.json").read_text(encoding="utf-8"))
    failed = {r["id"]: r["note"] or r["answer"] for r in report["results"] if r["status"] != "pass"}
    skipped = {r["id"] for r in report["results"] if r["status"] == "skipped"}
    assert skipped == must_skip
    assert {k: v for k, v in failed.items() if k not in skipped} == {}
    assert outcome.exit_code == 0, outcome.output
    totals = report["totals"]
    assert totals["passed"] == totals["ran"] == len(questions) - len(must_skip)
    if must_skip:
        assert f"{len(must_skip)} skipped" in outcome.output
    else:
        assert "skipped" not in outcome.output
    for result in report["results"]:
        if result["status"] == "pass":
            # Each turn asked its one reference query, and the scores came from it.
            question = next(q for q in questions if q.id == result["id"])
            assert result["tool_calls"] == len(question.turns)
            [ran] = result["queries"]
            # The assistant may fill in the chat's instrument; the rest is the reference, its
            # period counted from the data's end run as the dates the plan showed.
            symbol = ran.get("instrument", question.instrument)
            if "instrument" not in question.turns[-1].query:
                ran.pop("instrument", question.instrument)
            assert ran == as_planned(question.turns[-1].query, symbol, eval_settings)
            assert result["seen"] and result["said"]
    markdown = (tmp_path / "eval_report.md").read_text(encoding="utf-8")
    rows = [line for line in markdown.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == len(questions)
    assert sum("| pass |" in row for row in rows) == totals["passed"]


def as_planned(query: dict, symbol: str, settings: EngineSettings) -> dict:
    """``query`` as its plan pins it: a period counted from the data's end, as dates."""
    instrument = load_instrument(symbol, settings)
    last = read_meta(data_path(instrument.symbol, settings)).last_date
    return pinned(query, last, instrument.calendar)
