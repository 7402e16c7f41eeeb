"""CI's run of the whole set: `barb eval --provider scripted` plays each question's reference
query through the real assistant, confirm gate, runner and summaries, and must pass 100%.

The set runs in slices of consecutive questions (`barb eval --only <id> --only <id> ...`), one
test each, so that it spreads over the suite's workers instead of holding one for the whole
run; a slice, not a question, per test: each run of `barb eval` opens a fresh store (its
migrations) and reads the set, half a second that 161 runs would add to the suite. Each slice
checks what the whole-set run checked, over its questions: every one passes, the report's
totals and skipped count, the Markdown table's rows, each query as its plan pinned it.

Questions that need an engine feature not merged yet are skipped, and the run says how many;
once the features exist (their probes pass) nothing is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_thread import invoke_cli

from barb.data.store import data_path, read_meta
from barb.instruments import load_instrument
from barb.settings import EngineSettings
from bot.assistant.plan import pinned
from bot.eval.features import available
from bot.eval.question_set import EvalQuestion, load_questions

pytestmark = pytest.mark.slow

QUESTIONS = load_questions()
#: Slices of at most this many questions (a few seconds each), as even as they can be;
#: every question is in one.
SLICE = 20
_COUNT = -(-len(QUESTIONS) // SLICE)
SLICES = [
    QUESTIONS[len(QUESTIONS) * i // _COUNT : len(QUESTIONS) * (i + 1) // _COUNT]
    for i in range(_COUNT)
]


@pytest.mark.parametrize("questions", SLICES, ids=[f"{s[0].id}..{s[-1].id}" for s in SLICES])
def test_scripted_eval_passes_every_question(
    questions: list[EvalQuestion], eval_settings: EngineSettings, tmp_path: Path
) -> None:
    # The questions whose engine features this checkout lacks (their probes fail); only the
    # slice's features are probed (the first probe of a kind warms up its bars).
    present = available({name for q in questions for name in q.requires}, eval_settings)
    skipping = {q.id for q in questions if not all(present[name] for name in q.requires)}
    only = [arg for q in questions for arg in ("--only", q.id)]

    outcome = invoke_cli(["eval", "--provider", "scripted", "--out", str(tmp_path), *only])

    report = json.loads((tmp_path / "eval_report.json").read_text(encoding="utf-8"))
    # `--only` takes tags too: an id that is also a tag would bring in other questions.
    assert [r["id"] for r in report["results"]] == [q.id for q in questions]
    failed = {r["id"]: r["note"] or r["answer"] for r in report["results"] if r["status"] != "pass"}
    skipped = {r["id"] for r in report["results"] if r["status"] == "skipped"}
    assert skipped == skipping
    assert {k: v for k, v in failed.items() if k not in skipped} == {}
    totals = report["totals"]
    assert totals["passed"] == totals["ran"] == len(questions) - len(skipping)
    # Exit 0 when every question that ran passed (a run where none ran is a failure).
    assert outcome.exit_code == (0 if totals["ran"] else 1), outcome.output
    if skipping:
        assert f"{len(skipping)} skipped" in outcome.output
    else:
        assert "skipped" not in outcome.output
    for result, question in zip(report["results"], questions, strict=True):
        if result["status"] == "pass":
            # Each turn asked its one reference query, and the scores came from it.
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
    assert [row.split(" | ")[0] for row in rows] == [f"| {q.id}" for q in questions]
    assert sum("| pass |" in row for row in rows) == totals["passed"]


def as_planned(query: dict, symbol: str, settings: EngineSettings) -> dict:
    """``query`` as its plan pins it: a period counted from the data's end, as dates."""
    instrument = load_instrument(symbol, settings)
    last = read_meta(data_path(instrument.symbol, settings)).last_date
    return pinned(query, last, instrument.calendar)
