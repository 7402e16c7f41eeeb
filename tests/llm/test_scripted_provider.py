"""The scripted provider plays turns, scripts them from requests, and records every request."""

from __future__ import annotations

import pytest

from bot.llm.errors import ScriptExhausted
from bot.llm.messages import Message, ModelRequest, ToolResult, ToolSpec, Usage
from bot.llm.pricing import PriceTable
from bot.llm.provider import LLMProvider
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn

TOOLS = [ToolSpec(name="execute_query", description="Run a query.")]


def test_it_is_a_provider() -> None:
    assert isinstance(ScriptedProvider(), LLMProvider)


async def test_plays_turns_and_records_every_request() -> None:
    provider = ScriptedProvider(
        [
            turn("I'll average the range.", tool_call("execute_query", session="RTH")),
            "It is 48.2 points.",
        ]
    )
    history = [Message.user("Average range?")]

    first = await provider.complete(system="sys", messages=history, tools=TOOLS, max_tokens=50)
    (call,) = first.message.tool_calls
    history += [
        first.message,
        Message.tool(ToolResult(call_id=call.id, name=call.name, content="48.2")),
    ]
    second = await provider.complete(system="sys", messages=history, tools=TOOLS)

    assert first.message.text == "I'll average the range."
    assert (call.id, call.name, call.arguments) == ("call_1", "execute_query", {"session": "RTH"})
    assert first.stop_reason == "tool_use"
    assert second.message == Message.assistant("It is 48.2 points.")
    assert second.stop_reason == "end_turn"

    first_request, second_request = provider.requests
    assert first_request == ModelRequest(
        system="sys", messages=[Message.user("Average range?")], tools=TOOLS, max_tokens=50
    )
    assert second_request.last_message is not None
    assert second_request.last_message.tool_results[0].content == "48.2"
    assert second_request.tool_names == ["execute_query"]
    assert provider.remaining == 0


async def test_records_a_copy_of_the_history() -> None:
    provider = ScriptedProvider(["a"])
    history = [Message.user("q")]

    await provider.complete(system="", messages=history, tools=[])
    history.append(Message.assistant("later"))

    assert provider.requests[0].messages == [Message.user("q")]


async def test_callable_turns_script_the_answer_from_the_request() -> None:
    def echo(request: ModelRequest) -> str:
        assert request.last_message is not None
        return f"you said {request.last_message.text}"

    async def call_back(request: ModelRequest) -> Message:
        return tool_call("execute_query", n=len(request.messages))

    provider = ScriptedProvider([echo, call_back])

    first = await provider.complete(system="", messages=[Message.user("hi")], tools=[])
    second = await provider.complete(system="", messages=[Message.user("a")] * 3, tools=[])

    assert first.message.text == "you said hi"
    assert second.message.tool_calls[0].arguments == {"n": 3}


async def test_tool_call_ids_are_numbered_in_play_order() -> None:
    provider = ScriptedProvider([tool_call("a"), turn(tool_call("b"), tool_call("c"))])

    first = await provider.complete(system="", messages=[Message.user("q")], tools=[])
    second = await provider.complete(system="", messages=[Message.user("q")], tools=[])

    ids = [c.id for r in (first, second) for c in r.message.tool_calls]
    assert ids == ["call_1", "call_2", "call_3"]


async def test_fake_usage_and_cost() -> None:
    provider = ScriptedProvider(
        [
            text("default usage"),
            turn("own usage", usage=Usage(input_tokens=2_000_000)),
        ],
        model="claude-sonnet-4-6",
        usage=lambda request: Usage(input_tokens=1_000_000 * len(request.messages)),
        prices=PriceTable.default(),
    )

    first = await provider.complete(system="", messages=[Message.user("q")], tools=[])
    second = await provider.complete(system="", messages=[Message.user("q")], tools=[])

    assert first.usage == Usage(input_tokens=1_000_000)
    assert first.model == "claude-sonnet-4-6"
    assert first.cost_usd == pytest.approx(3.0)
    assert second.cost_usd == pytest.approx(6.0)
    assert (first.usage + second.usage).input_tokens == 3_000_000


async def test_without_prices_cost_is_unknown() -> None:
    provider = ScriptedProvider(["a"], usage=Usage(input_tokens=5))

    response = await provider.complete(system="", messages=[Message.user("q")], tools=[])

    assert response.usage == Usage(input_tokens=5)
    assert response.cost_usd is None


async def test_running_out_of_turns_says_what_it_got() -> None:
    provider = ScriptedProvider(["only one"])
    await provider.complete(system="", messages=[Message.user("first question")], tools=[])

    with pytest.raises(ScriptExhausted) as caught:
        await provider.complete(system="", messages=[Message.user("second question")], tools=[])

    message = str(caught.value)
    assert "given 1" in message
    assert "first question" in message
    assert "second question" in message
    assert len(provider.requests) == 2  # the unanswered request is recorded too


async def test_more_turns_can_be_queued() -> None:
    provider = ScriptedProvider()
    provider.add("late")

    response = await provider.complete(system="", messages=[Message.user("q")], tools=[])

    assert response.message.text == "late"


async def test_a_turn_must_be_an_assistant_message() -> None:
    provider = ScriptedProvider([Message.user("not the model's turn")])

    with pytest.raises(TypeError, match="assistant"):
        await provider.complete(system="", messages=[Message.user("q")], tools=[])
