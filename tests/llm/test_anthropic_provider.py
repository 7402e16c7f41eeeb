"""The Anthropic adapter against a fake Messages server: the real SDK over a real socket."""

from __future__ import annotations

import logging
import traceback
from collections.abc import AsyncIterator

import pytest
from llm_fake_api import (
    ANTHROPIC_PATH,
    Canned,
    FakeAPIServer,
    anthropic_error,
    anthropic_message,
    closed_port,
    text_block,
    tool_use_block,
)
from pydantic import SecretStr

from bot.llm.anthropic_provider import AnthropicProvider, to_anthropic_messages
from bot.llm.errors import (
    AuthenticationFailed,
    ModelRequestsForbidden,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
)
from bot.llm.messages import Message, ToolCall, ToolResult, ToolSpec, Usage

KEY = "sk-ant-test-0123456789abcdef"
SYSTEM = "You are Barb, a trading-data analyst."
TOOLS = [
    ToolSpec(name="get_query_reference", description="The Barb Script reference."),
    ToolSpec(
        name="execute_query",
        description="Run a Barb Script query.",
        parameters={"type": "object", "properties": {"query": {"type": "object"}}},
    ),
]


def make(server_url: str, **overrides: object) -> AnthropicProvider:
    options: dict[str, object] = {
        "model": "claude-sonnet-4-6",
        "api_key": SecretStr(KEY),
        "base_url": server_url,
        "timeout_s": 5.0,
        "max_retries": 2,
    }
    options.update(overrides)
    return AnthropicProvider(**options)  # type: ignore[arg-type]


@pytest.fixture
async def provider(server: FakeAPIServer) -> AsyncIterator[AnthropicProvider]:
    async with make(server.url) as provider:
        yield provider


async def test_text_answer_with_cache_usage_and_cost(
    server: FakeAPIServer, provider: AnthropicProvider
) -> None:
    server.queue(
        ANTHROPIC_PATH,
        anthropic_message(
            text_block("Wednesday."),
            input_tokens=100,
            output_tokens=20,
            cache_read=2000,
            cache_write=500,
        ),
    )

    response = await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=TOOLS)

    assert response.message == Message.assistant("Wednesday.")
    assert response.stop_reason == "end_turn"
    assert response.usage == Usage(
        input_tokens=100, output_tokens=20, cache_read_tokens=2000, cache_write_tokens=500
    )
    # claude-*sonnet*: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    assert response.cost_usd == pytest.approx((100 * 3 + 20 * 15 + 2000 * 0.3 + 500 * 3.75) / 1e6)

    (sent,) = server.requests
    assert sent.headers["authorization"] == f"Bearer {KEY}"  # how this SDK version sends it
    assert sent.body["model"] == "claude-sonnet-4-6"
    assert sent.body["max_tokens"] == 1024
    assert sent.body["system"] == [
        {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
    ]
    first_tool, last_tool = sent.body["tools"]
    assert "cache_control" not in first_tool
    assert last_tool == {
        "name": "execute_query",
        "description": "Run a Barb Script query.",
        "input_schema": TOOLS[1].parameters,
        "cache_control": {"type": "ephemeral"},
    }
    assert sent.body["messages"] == [{"role": "user", "content": [text_block("q")]}]


async def test_tool_use_then_results_in_one_user_message(
    server: FakeAPIServer, provider: AnthropicProvider
) -> None:
    server.queue(
        ANTHROPIC_PATH,
        anthropic_message(
            text_block("Let me check."),
            tool_use_block("toolu_1", "get_query_reference", {}),
            tool_use_block("toolu_2", "execute_query", {"query": {"session": "RTH"}}),
        ),
        anthropic_message(text_block("48.2 points.")),
    )
    history = [Message.user("Average RTH range?")]

    first = await provider.complete(system=SYSTEM, messages=history, tools=TOOLS)

    assert first.stop_reason == "tool_use"
    assert first.message == Message.assistant(
        "Let me check.",
        [
            ToolCall(id="toolu_1", name="get_query_reference", arguments={}),
            ToolCall(id="toolu_2", name="execute_query", arguments={"query": {"session": "RTH"}}),
        ],
    )

    history += [
        first.message,
        Message.tool(ToolResult(call_id="toolu_1", name="get_query_reference", content="ref")),
        Message.tool(
            ToolResult(call_id="toolu_2", name="execute_query", content="bad", is_error=True)
        ),
    ]
    second = await provider.complete(system=SYSTEM, messages=history, tools=TOOLS)

    assert second.message.text == "48.2 points."
    assert server.requests[1].body["messages"] == [
        {"role": "user", "content": [text_block("Average RTH range?")]},
        {
            "role": "assistant",
            "content": [
                text_block("Let me check."),
                tool_use_block("toolu_1", "get_query_reference", {}),
                tool_use_block("toolu_2", "execute_query", {"query": {"session": "RTH"}}),
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ref"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "bad",
                    "is_error": True,
                },
            ],
        },
    ]


def test_results_come_before_a_following_user_text() -> None:
    wire = to_anthropic_messages(
        [
            Message.assistant(tool_calls=[ToolCall(id="call.1", name="t")]),
            Message.tool(ToolResult(call_id="call.1", name="t", content="declined")),
            Message.user("Actually, use ETH."),
            Message.assistant(""),  # empty turns are dropped, not sent empty
        ]
    )

    assert wire == [
        {"role": "assistant", "content": [tool_use_block("call_1", "t", {})]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "declined"},
                text_block("Actually, use ETH."),
            ],
        },
    ]


async def test_rate_limit_then_success_is_retried(
    server: FakeAPIServer, provider: AnthropicProvider
) -> None:
    server.queue(
        ANTHROPIC_PATH,
        anthropic_error(429, "slow down", headers={"retry-after": "0"}),
        anthropic_message(text_block("fine")),
    )

    response = await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert response.message.text == "fine"
    assert len(server.requests_to(ANTHROPIC_PATH)) == 2


async def test_rate_limit_after_retries(server: FakeAPIServer) -> None:
    server.queue(ANTHROPIC_PATH, anthropic_error(429, "quota", headers={"retry-after": "12"}))

    async with make(server.url, max_retries=0) as provider:
        with pytest.raises(RateLimited) as caught:
            await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert caught.value.retry_after == 12.0


async def test_overload_exhausts_retries(
    server: FakeAPIServer, provider: AnthropicProvider
) -> None:
    failure = anthropic_error(529, "Overloaded", headers={"retry-after-ms": "5"})
    server.queue(ANTHROPIC_PATH, failure, failure, failure)

    with pytest.raises(ProviderUnavailable) as caught:
        await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert len(server.requests_to(ANTHROPIC_PATH)) == 3  # max_retries + 1
    assert "HTTP 529" in str(caught.value)
    assert "Overloaded" in str(caught.value)


async def test_server_error_exhausts_retries(
    server: FakeAPIServer, provider: AnthropicProvider
) -> None:
    failure = anthropic_error(500, "boom", headers={"retry-after-ms": "5"})
    server.queue(ANTHROPIC_PATH, failure, failure, failure)

    with pytest.raises(ProviderUnavailable):
        await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert len(server.requests_to(ANTHROPIC_PATH)) == 3


async def test_slow_answer_times_out(server: FakeAPIServer) -> None:
    server.queue(ANTHROPIC_PATH, Canned(body={}, delay_s=3.0))

    async with make(server.url, timeout_s=0.5, max_retries=0) as provider:
        with pytest.raises(ProviderTimeout):
            await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])


async def test_bad_key_names_the_variable_and_never_the_key(
    server: FakeAPIServer, provider: AnthropicProvider, caplog: pytest.LogCaptureFixture
) -> None:
    server.queue(ANTHROPIC_PATH, anthropic_error(401, f"invalid x-api-key {KEY}"))
    caplog.set_level(logging.DEBUG)

    with pytest.raises(AuthenticationFailed) as caught:
        await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    error = caught.value
    assert "ANTHROPIC_API_KEY" in str(error)
    shown = [
        str(error),
        repr(error),
        error.user_message,
        "".join(traceback.format_exception(error)),
        caplog.text,
        repr(provider),
    ]
    for text in shown:
        assert KEY not in text


async def test_connection_refused_is_unavailable() -> None:
    async with make(f"http://127.0.0.1:{closed_port()}", max_retries=0) as provider:
        with pytest.raises(ProviderUnavailable) as caught:
            await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert "ANTHROPIC_BASE_URL" in str(caught.value)


async def test_offline_guard_refuses_the_real_api() -> None:
    async with AnthropicProvider(api_key=SecretStr(KEY)) as provider:
        with pytest.raises(ModelRequestsForbidden):
            await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])
