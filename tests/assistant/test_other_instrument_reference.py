"""A question about another instrument than the chat's (CL in an NQ chat): the reference tools
answer with that instrument's times when the model names it, and a window carried over from
the chat's instrument is warned about in the result the model reads."""

from __future__ import annotations

import pytest

from bot.assistant.replies import Asker
from bot.assistant.tools import TOOLS
from bot.llm.scripted import text, tool_call, turn

ALICE = Asker(chat_id=100, user_id=1)

# NQ's 15-minute opening range, written for CL (whose RTH opens 09:00).
CARRIED = {
    "instrument": "CL",
    "session": "RTH",
    "from": "daily",
    "period": "2024",
    "map": {"or_high": "session_high('09:30-09:45')"},
    "select": "mean(high > or_high)",
}


def tool_results(request) -> list:
    return [r for m in request.messages if m.role == "tool" for r in m.tool_results]


@pytest.mark.parametrize(
    "name", ["get_query_reference", "get_indicators", "get_events", "get_concept"]
)
def test_the_reference_tools_take_an_instrument(name: str) -> None:
    spec = TOOLS[name].spec()
    assert "instrument" in spec.parameters["properties"]
    assert "instrument" not in spec.parameters.get("required", [])
    assert "pass instrument" in spec.description


async def test_the_reference_tools_answer_for_the_instrument_named(make_assistant) -> None:
    assistant = make_assistant(
        turn(
            "Looking up CL's opening range.",
            tool_call("get_concept", name="opening range", instrument="cl"),
            tool_call("get_concept", name="opening range"),
            tool_call("get_events", instrument="CL"),
            tool_call("get_events"),
            tool_call("get_query_reference", instrument="CL"),
            tool_call("get_events", instrument="GC"),
            tool_call("get_indicators", instrument="CL"),
            tool_call("get_indicators"),
        ),
        text("CL's opening range is 09:00-09:15."),
    )
    reply = await assistant.ask(ALICE, "How often does crude break its 15-minute opening range?")
    assert reply.text.startswith("CL's opening range")
    results = tool_results(assistant.provider.requests[1])
    cl_concept, nq_concept, cl_events, nq_events, cl_reference, unknown = results[:6]
    cl_indicators, nq_indicators = results[6:]
    assert "session_high('09:00-09:15')" in cl_concept.content
    assert "09:30-09:45" not in cl_concept.content
    assert "session_high('09:30-09:45')" in nq_concept.content
    assert "EVENTS for CL" in cl_events.content and "- eia" in cl_events.content
    assert "EVENTS for NQ" in nq_events.content and "- eia" not in nq_events.content
    assert "'09:00-09:15' = the 15-minute opening range" in cl_reference.content
    assert unknown.is_error and "unknown instrument 'GC'" in unknown.content
    # vwap() starts at each one's own RTH open (CL read NQ's "NQ RTH 09:30").
    assert "(CL RTH 09:00, ETH 18:00)" in cl_indicators.content
    assert "(NQ RTH 09:30, ETH 18:00)" in nq_indicators.content


async def test_a_window_carried_from_the_chats_instrument_is_warned(make_assistant) -> None:
    assistant = make_assistant(
        tool_call("execute_query", query=CARRIED),
        text("About 95%."),
    )
    reply = await assistant.ask(ALICE, "How often does CL break its 15-minute opening range?")
    done = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    assert done.text == "About 95%."
    [result] = tool_results(assistant.provider.requests[1])
    assert not result.is_error
    assert (
        "'09:30-09:45' starts at the open of ES's RTH, NQ's RTH (09:30), not CL's: CL's RTH "
        "opens at 09:00 (its first 15 minutes are '09:00-09:15')." in result.content
    )
