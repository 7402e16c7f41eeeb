"""An opening-range question end to end: concept lookup, a malformed window fixed after its
structured error (before any plan), and the answer from the window session."""

from __future__ import annotations

import re

import pytest

from barb import execute
from bot.assistant.replies import Asker
from bot.llm.scripted import text, tool_call, turn

ALICE = Asker(chat_id=100, user_id=1)

BAD = {"session": "9.30-9.45", "from": "daily", "select": "mean(range)"}
GOOD = {"session": "09:30-09:45", "from": "daily", "select": "mean(range)"}


def tool_results(request) -> list:
    return [r for m in request.messages if m.role == "tool" for r in m.tool_results]


async def test_opening_range_question_recovers_from_a_bad_window(make_assistant) -> None:
    assistant = make_assistant(
        tool_call("get_concept", name="opening range"),
        turn("I'll average the 09:30-09:45 range.", tool_call("execute_query", query=BAD)),
        tool_call("execute_query", query=GOOD),
        text("The 15-minute opening range averages that many points."),
    )
    reply = await assistant.ask(ALICE, "average 15-minute opening range?")
    concept = tool_results(assistant.provider.requests[1])[-1]
    assert "Opening range (OR)" in concept.content and "09:30-09:45" in concept.content
    # The malformed window never reaches a plan: its error goes back to the model at once,
    # and the one plan shown is the fix's, unmarked.
    assert reply.pending is not None and reply.pending.changed == []
    assert "Bars: NQ, daily bars, session 09:30-09:45" in reply.pending.plan
    assert "9.30-9.45" not in reply.pending.plan and "✎" not in reply.pending.plan
    done = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    assert done.text.startswith("The 15-minute opening range")
    requests = assistant.provider.requests
    [error] = tool_results(requests[2])[-1:]
    assert error.is_error and "InvalidSession" in error.content
    assert "HH:MM-HH:MM" in error.content
    result = tool_results(requests[3])[-1]
    assert not result.is_error
    [proof] = done.proofs
    assert result.content == proof.summary_text
    want = execute(GOOD, "NQ", settings=assistant.engine_settings).summary.value
    shown = re.search(r"mean_range = ([0-9.]+)", result.content)
    assert shown is not None and float(shown.group(1)) == pytest.approx(want, abs=0.01)
