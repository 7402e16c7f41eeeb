"""The model's faults are named (issue 15, part 6): a malformed response is asked for once
more, then the person hears that the model answered with something Barb could not read
(not that it is unreachable: it was reached); a model that will
not stop calling tools ends with a sentence of its own. Driven through the real loop, engine
and store with the scripted provider; the same faults over HTTP are in tests/llm."""

from __future__ import annotations

from typing import Any

import pytest

from bot.assistant.gate import Press
from bot.assistant.orchestrator import AssistantSettings
from bot.assistant.replies import Asker
from bot.bot_run import answer_turn_s
from bot.llm.errors import BadResponse
from bot.llm.messages import Message, ModelResponse, ToolCall
from bot.llm.scripted import text, tool_call, turn
from bot.llm.sdk_provider import RETRY_AFTER_CAP_S
from bot.llm.settings import LLMSettings, make_provider
from bot.texts import t

ALICE = Asker(chat_id=100, user_id=1)
UNREACHABLE = t("llm_unavailable", "en")
UNREADABLE = t("llm_bad_response", "en")
QUERY = {"session": "RTH", "from": "daily", "select": "mean(range)"}


def nested(depth: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def calls(*tool_calls: ToolCall) -> ModelResponse:
    return ModelResponse(message=Message.assistant(tool_calls=list(tool_calls)), model="scripted")


def null_message(request: Any) -> ModelResponse:
    # What the SDK adapters raise for a null message or a body that is not JSON.
    raise BadResponse("the server answered with a null message", provider="scripted")


MALFORMED = {
    "null message": null_message,
    "NaN in a query": calls(
        ToolCall(
            id="c1", name="execute_query", arguments={"query": {**QUERY, "limit": float("nan")}}
        )
    ),
    "infinity in a query": calls(
        ToolCall(id="c1", name="execute_query", arguments={"query": {"limit": float("inf")}})
    ),
    "arguments nested 5,000 deep": calls(
        ToolCall(id="c1", name="execute_query", arguments={"query": nested(5000)})
    ),
    "invalid tool name": calls(
        ToolCall(id="c1", name="execute query; DROP TABLE chats", arguments={"query": QUERY})
    ),
    "unknown tool": calls(ToolCall(id="c1", name="run_shell", arguments={"cmd": "ls"})),
    "one id for two calls": calls(
        ToolCall(id="c1", name="get_events", arguments={}),
        ToolCall(id="c1", name="get_indicators", arguments={}),
    ),
}


@pytest.mark.parametrize("fault", MALFORMED.values(), ids=list(MALFORMED))
async def test_a_malformed_response_is_retried_once_and_nothing_of_it_is_kept(
    make_assistant, store, fault
) -> None:
    assistant = make_assistant(fault, text("The average RTH range is 120 points."))

    reply = await assistant.ask(ALICE, "average range")

    assert not reply.failed
    assert reply.text == "The average RTH range is 120 points."
    first, second = assistant.provider.requests
    # The very same request again: the malformed answer left no trace in it.
    assert second.messages == first.messages == [Message.user("average range")]
    rows = await store.transcript.recent(ALICE.chat_id, 1)
    assert [row.role for row in rows] == ["user", "assistant"]
    assert rows[-1].payload["tool_calls"] == []


@pytest.mark.parametrize("fault", MALFORMED.values(), ids=list(MALFORMED))
async def test_a_second_malformed_response_is_said_as_such_not_as_unreachable(
    make_assistant, store, fault
) -> None:
    assistant = make_assistant(fault, fault, text("Hello again."))

    reply = await assistant.ask(ALICE, "average range")

    assert reply.failed
    # The model was reached and answered: "not reachable" sent the person looking for an
    # outage that was not there.
    assert (
        reply.text
        == UNREADABLE
        == (
            "The language model answered twice with something I could not read; please try "
            "again in a minute."
        )
    )
    assert reply.text != UNREACHABLE
    assert len(assistant.provider.requests) == 2  # retried once, not more
    rows = await store.transcript.recent(ALICE.chat_id, 1)
    assert [row.payload.get("text") for row in rows] == ["average range"]  # the question kept
    # Nothing is stuck: the next question is answered as usual.
    assert (await assistant.ask(ALICE, "hello")).text == "Hello again."


async def test_retries_are_per_model_call_not_per_question(make_assistant) -> None:
    nan_call = MALFORMED["NaN in a query"]
    assistant = make_assistant(
        nan_call,
        tool_call("get_concept", name="inside day"),
        nan_call,
        text("An inside day stays within the previous day's range."),
    )

    reply = await assistant.ask(ALICE, "what is an inside day?")

    assert reply.text == "An inside day stays within the previous day's range."
    assert len(assistant.provider.requests) == 4


async def test_a_model_that_keeps_calling_tools_is_stopped_with_its_own_sentence(
    make_assistant, store
) -> None:
    assistant = make_assistant(
        *[tool_call("get_events") for _ in range(6)],
        settings=AssistantSettings(max_tool_calls=2, max_model_calls=8),
    )

    reply = await assistant.ask(ALICE, "loop over the tools")

    assert reply.failed
    assert reply.text == t("tool_loop_limit", "en")
    assert reply.text not in (UNREACHABLE, UNREADABLE, t("too_many_steps", "en", steps=8))
    # Two tools ran; the third call was refused with the limit and the model was asked for
    # words without tools; it called a tool again, and the loop ended there.
    requests = assistant.provider.requests
    assert len(requests) == 4
    assert requests[-1].tools == []
    refused = requests[-1].messages[-1].tool_results
    assert refused[0].is_error and "limit" in refused[0].content
    # The transcript is whole: every call has its result, so the next question can use it.
    rows = await store.transcript.recent(ALICE.chat_id, 1)
    stored = [Message.model_validate(row.payload) for row in rows]
    answered = {r.call_id for m in stored for r in m.tool_results}
    assert {c.id for m in stored for c in m.tool_calls} == answered


async def test_the_tool_limit_still_lets_the_model_answer_in_words(make_assistant) -> None:
    assistant = make_assistant(
        tool_call("get_events"),
        tool_call("get_events"),
        text("FOMC, NFP and CPI are available."),
        settings=AssistantSettings(max_tool_calls=1),
    )

    reply = await assistant.ask(ALICE, "which events?")

    assert not reply.failed
    assert reply.text == "FOMC, NFP and CPI are available."


async def test_arguments_naming_a_key_twice_go_back_to_the_model_unrun(make_assistant) -> None:
    # What the OpenAI adapter keeps for arguments naming "where" twice (tests/llm): JSON
    # would keep the second condition and drop the first, which the model meant as well.
    twice = (
        '{"query": {"session": "RTH", "from": "daily", "where": "close > open", '
        '"where": "dayofweek() == 0", "select": "count()"}}'
    )
    assistant = make_assistant(
        calls(ToolCall(id="c1", name="execute_query", arguments={"_raw": twice})),
        text("I will write the two conditions as one."),
    )

    reply = await assistant.ask(ALICE, "how many up Mondays?")

    assert not reply.failed
    assert reply.pending is None  # nothing was put to the person to confirm
    result = assistant.provider.requests[1].messages[-1].tool_results[0]
    assert result.is_error
    assert 'they name "where" twice in one object' in result.content
    assert "one where joined with and" in result.content


async def test_the_answer_turns_bound_counts_a_malformed_answers_retry(make_assistant) -> None:
    """Run pressed; the model's first answer to the result is malformed (a broken tool
    call written in the model's whole time), the second good. The turn wording the answer
    made as many model calls as it made, each as long as the configured SDK client may
    take (its tries and the waits between them): ``answer_turn_s`` (how long a taken
    answer is kept for its run's resumption) must cover them all. Before, it counted one
    call (220 s with the default settings), not what the person waited (440 s)."""
    assistant = make_assistant(
        turn("Counting.", tool_call("execute_query", query=QUERY)),
        MALFORMED["NaN in a query"],
        text("The average RTH range is 120 points."),
    )
    plan = await assistant.ask(ALICE, "average range")
    asked_for_the_plan = len(assistant.provider.requests)
    done = await assistant.press(plan.pending.id, ALICE.user_id, Press.RUN)
    assert done.text == "The average RTH range is 120 points."
    calls_in_the_answer_turn = len(assistant.provider.requests) - asked_for_the_plan
    assert calls_in_the_answer_turn == 2
    for timeout_s, retries in [(60.0, 2), (300.0, 2), (20.0, 0)]:
        llm = LLMSettings(
            _env_file=None,
            BARB_LLM_TIMEOUT_S=timeout_s,
            BARB_LLM_MAX_RETRIES=retries,
            OPENAI_BASE_URL="http://127.0.0.1:9/v1",
            BARB_LLM_MODEL="m",
        )
        client = make_provider(llm)._client  # the SDK's own client: what one call waits
        one_call = (client.max_retries + 1) * client.timeout + retries * RETRY_AFTER_CAP_S
        assert answer_turn_s(llm) >= calls_in_the_answer_turn * one_call
