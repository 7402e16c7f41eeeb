"""The OpenAI adapter against a fake Chat Completions server: the real SDK over a real socket."""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import AsyncIterator

import pytest
from llm_fake_api import (
    OPENAI_PATH,
    Canned,
    FakeAPIServer,
    closed_port,
    openai_completion,
    openai_error,
)
from pydantic import SecretStr

from bot.llm.errors import (
    AuthenticationFailed,
    ConfigError,
    ModelRequestsForbidden,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    RequestRejected,
)
from bot.llm.messages import Message, ToolResult, ToolSpec, Usage
from bot.llm.openai_provider import OpenAIProvider, parse_arguments
from bot.llm.pricing import PriceTable

KEY = "sk-test-0123456789abcdef"
SYSTEM = "You are Barb."
QUERY_TOOL = ToolSpec(
    name="execute_query",
    description="Run a Barb Script query.",
    parameters={
        "type": "object",
        "properties": {"session": {"type": "string"}},
        "required": ["session"],
    },
)


def make(server_url: str, **overrides: object) -> OpenAIProvider:
    options: dict[str, object] = {
        "model": "gpt-4o-mini",
        "api_key": SecretStr(KEY),
        "base_url": f"{server_url}/v1",
        "timeout_s": 5.0,
        "max_retries": 2,
    }
    options.update(overrides)
    return OpenAIProvider(**options)  # type: ignore[arg-type]


@pytest.fixture
async def provider(server: FakeAPIServer) -> AsyncIterator[OpenAIProvider]:
    async with make(server.url) as provider:
        yield provider


async def test_text_answer_with_usage_and_cost(
    server: FakeAPIServer, provider: OpenAIProvider
) -> None:
    server.queue(
        OPENAI_PATH,
        openai_completion(
            "Wednesday is the most volatile day.",
            prompt_tokens=1000,
            cached_tokens=400,
            completion_tokens=50,
        ),
    )

    response = await provider.complete(
        system=SYSTEM, messages=[Message.user("Which day is most volatile?")], tools=[]
    )

    assert response.message == Message.assistant("Wednesday is the most volatile day.")
    assert response.stop_reason == "end_turn"
    assert response.model == "gpt-4o-mini-2024-07-18"
    # prompt_tokens includes the cached part; Usage keeps them apart.
    assert response.usage == Usage(input_tokens=600, output_tokens=50, cache_read_tokens=400)
    expected = PriceTable.default().cost("gpt-4o-mini", response.usage)
    assert expected is not None
    assert response.cost_usd == pytest.approx(expected)
    assert response.cost_usd == pytest.approx((600 * 0.15 + 400 * 0.075 + 50 * 0.60) / 1e6)

    (sent,) = server.requests
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body["model"] == "gpt-4o-mini"
    assert sent.body["max_tokens"] == 1024  # a compatible server gets the classic name
    assert "tools" not in sent.body
    assert sent.body["messages"] == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Which day is most volatile?"},
    ]


async def test_tool_call_then_result_in_wire_shape(
    server: FakeAPIServer, provider: OpenAIProvider
) -> None:
    server.queue(
        OPENAI_PATH,
        openai_completion(
            "I'll average the RTH range.",
            tool_calls=[("call_abc", "execute_query", '{"session": "RTH"}')],
        ),
        openai_completion("Done: 48.2 points."),
    )
    history = [Message.user("Average RTH range?")]

    first = await provider.complete(system=SYSTEM, messages=history, tools=[QUERY_TOOL])

    assert first.stop_reason == "tool_use"
    (call,) = first.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_abc", "execute_query", {"session": "RTH"})
    assert first.message.text == "I'll average the RTH range."
    assert server.requests[0].body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "execute_query",
                "description": "Run a Barb Script query.",
                "parameters": QUERY_TOOL.parameters,
            },
        }
    ]

    history += [
        first.message,
        Message.tool(
            ToolResult(call_id="call_abc", name="execute_query", content='{"mean": 48.2}'),
            ToolResult(call_id="call_xyz", name="get_events", content="unknown", is_error=True),
        ),
    ]
    second = await provider.complete(system=SYSTEM, messages=history, tools=[QUERY_TOOL])

    assert second.message.text == "Done: 48.2 points."
    wire = server.requests[1].body["messages"]
    assert wire[2]["role"] == "assistant"
    assert wire[2]["content"] == "I'll average the RTH range."
    (wire_call,) = wire[2]["tool_calls"]
    assert wire_call["id"] == "call_abc"
    assert wire_call["type"] == "function"
    assert wire_call["function"]["name"] == "execute_query"
    assert json.loads(wire_call["function"]["arguments"]) == {"session": "RTH"}
    assert wire[3:] == [
        {"role": "tool", "tool_call_id": "call_abc", "content": '{"mean": 48.2}'},
        {"role": "tool", "tool_call_id": "call_xyz", "content": "ERROR: unknown"},
    ]


async def test_malformed_tool_arguments_are_kept_raw(
    server: FakeAPIServer, provider: OpenAIProvider
) -> None:
    server.queue(
        OPENAI_PATH,
        openai_completion(tool_calls=[("call_1", "execute_query", "{session: RTH")]),
        openai_completion("ok"),
    )

    response = await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    (call,) = response.message.tool_calls
    assert call.arguments == {"_raw": "{session: RTH"}
    assert response.message.text is None

    # Sent back, the call is valid JSON again (servers re-parse it for chat templates).
    history = [
        Message.user("q"),
        response.message,
        Message.tool(ToolResult(call_id="call_1", name="execute_query", content="bad JSON")),
    ]
    await provider.complete(system=SYSTEM, messages=history, tools=[])
    sent_args = server.requests[1].body["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(sent_args) == {"_raw": "{session: RTH"}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        ("   ", {}),
        (None, {}),
        ("[1, 2]", {"_raw": "[1, 2]"}),
        # A key named twice is not read as its last value (p31a Q18: a dropped "where").
        (
            '{"query": {"where": "a", "where": "b"}}',
            {"_raw": '{"query": {"where": "a", "where": "b"}}'},
        ),
        ('"text"', {"_raw": '"text"'}),
        ({"already": "parsed"}, {"already": "parsed"}),
    ],
)
def test_parse_arguments(raw: object, expected: dict[str, object]) -> None:
    assert parse_arguments(raw, tool="t") == expected


async def test_rate_limit_then_success_is_retried(
    server: FakeAPIServer, provider: OpenAIProvider
) -> None:
    server.queue(
        OPENAI_PATH,
        openai_error(429, "slow down", headers={"retry-after": "0"}),
        openai_completion("fine"),
    )

    response = await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert response.message.text == "fine"
    assert len(server.requests_to(OPENAI_PATH)) == 2


async def test_rate_limit_after_retries_carries_retry_after(server: FakeAPIServer) -> None:
    server.queue(OPENAI_PATH, openai_error(429, "quota", headers={"retry-after": "7"}))

    async with make(server.url, max_retries=0) as provider:
        with pytest.raises(RateLimited) as caught:
            await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert caught.value.retry_after == 7.0
    assert "busy" in caught.value.user_message


async def test_server_errors_exhaust_retries(
    server: FakeAPIServer, provider: OpenAIProvider
) -> None:
    # retry-after-ms keeps the SDK's backoff short; the retry policy itself is the SDK's.
    failure = openai_error(500, "boom", headers={"retry-after-ms": "5"})
    server.queue(OPENAI_PATH, failure, failure, failure)

    with pytest.raises(ProviderUnavailable) as caught:
        await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert len(server.requests_to(OPENAI_PATH)) == 3  # max_retries + 1
    assert "HTTP 500" in str(caught.value)
    assert caught.value.user_message == (
        "The language model is not reachable right now; please try again in a minute."
    )


async def test_slow_answer_times_out(server: FakeAPIServer) -> None:
    server.queue(OPENAI_PATH, Canned(body={}, delay_s=3.0))

    async with make(server.url, timeout_s=0.5, max_retries=0) as provider:
        with pytest.raises(ProviderTimeout) as caught:
            await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert "BARB_LLM_TIMEOUT_S" in str(caught.value)


async def test_bad_key_names_the_variable_and_never_the_key(
    server: FakeAPIServer, provider: OpenAIProvider, caplog: pytest.LogCaptureFixture
) -> None:
    # Real servers quote (part of) the key back; this one quotes all of it.
    server.queue(OPENAI_PATH, openai_error(401, f"Incorrect API key provided: {KEY}"))
    caplog.set_level(logging.DEBUG)

    with pytest.raises(AuthenticationFailed) as caught:
        await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    error = caught.value
    assert "OPENAI_API_KEY" in str(error)
    assert len(server.requests) == 1  # a 401 is not retried
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
    url = f"http://127.0.0.1:{closed_port()}"
    async with make(url, max_retries=0) as provider:
        with pytest.raises(ProviderUnavailable) as caught:
            await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert "OPENAI_BASE_URL" in str(caught.value)


async def test_unknown_model_names_the_setting(
    server: FakeAPIServer, provider: OpenAIProvider
) -> None:
    server.queue(OPENAI_PATH, openai_error(404, "The model `gpt-4o-mini` does not exist"))

    with pytest.raises(ConfigError) as caught:
        await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert "BARB_LLM_MODEL" in str(caught.value)


async def test_rejected_request_keeps_the_servers_reason(
    server: FakeAPIServer, provider: OpenAIProvider
) -> None:
    reason = f"maximum context length is 8192 tokens (key {KEY})"
    server.queue(OPENAI_PATH, openai_error(400, reason))

    with pytest.raises(RequestRejected) as caught:
        await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert "maximum context length" in str(caught.value)
    # A key quoted by the server is redacted, and the SDK's verbatim error is not chained.
    assert KEY not in "".join(traceback.format_exception(caught.value))


async def test_base_url_alone_uses_the_first_served_model(server: FakeAPIServer) -> None:
    server.queue("/v1/models", Canned(body={"object": "list", "data": [_model("qwen2.5-7b")]}))
    server.queue(OPENAI_PATH, openai_completion("hi", model="qwen2.5-7b"), openai_completion("x"))

    async with OpenAIProvider(base_url=f"{server.url}/v1", max_retries=0) as provider:
        assert provider.model == "auto"
        response = await provider.complete(system="", messages=[Message.user("q")], tools=[])
        await provider.complete(system="", messages=[Message.user("q")], tools=[])

    assert provider.model == "qwen2.5-7b"
    assert response.cost_usd is None  # a local model has no price: unknown, not free
    assert len(server.requests_to("/v1/models")) == 1  # resolved once
    chat = server.requests_to(OPENAI_PATH)[0]
    assert chat.body["model"] == "qwen2.5-7b"
    assert chat.headers["authorization"] == "Bearer not-needed"
    assert chat.body["messages"] == [{"role": "user", "content": "q"}]  # no empty system


async def test_a_server_without_a_model_list_asks_for_the_model(server: FakeAPIServer) -> None:
    server.queue("/v1/models", openai_error(404, "not found"))

    async with OpenAIProvider(base_url=f"{server.url}/v1", max_retries=0) as provider:
        with pytest.raises(ConfigError, match=r"could not list its models.*Set BARB_LLM_MODEL"):
            await provider.complete(system="", messages=[Message.user("q")], tools=[])


async def test_offline_guard_refuses_the_real_api() -> None:
    async with OpenAIProvider(api_key=SecretStr(KEY)) as provider:  # api.openai.com
        with pytest.raises(ModelRequestsForbidden) as caught:
            await provider.complete(system=SYSTEM, messages=[Message.user("q")], tools=[])

    assert "api.openai.com" in str(caught.value)
    assert KEY not in str(caught.value)


def _model(model_id: str) -> dict[str, object]:
    return {"id": model_id, "object": "model", "created": 0, "owned_by": "local"}
