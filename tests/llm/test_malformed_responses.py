"""Malformed model responses over a real socket, through the real OpenAI and Anthropic SDKs.

Every fault is an HTTP 200 whose body is no usable answer. Each must come out of the adapter
and the response check as ``BadResponse`` (never ``AttributeError``, ``RecursionError`` or a
``JSONDecodeError`` that would reach the person as "Something broke"), after exactly one
HTTP request: the SDK does not retry a 200, the assistant loop does (tests/assistant).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from llm_fake_api import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    Canned,
    FakeAPIServer,
    anthropic_invalid_tool_name,
    anthropic_message,
    anthropic_nan_query,
    anthropic_nested_input,
    anthropic_null_message,
    non_json_body,
    openai_completion,
    openai_invalid_tool_name,
    openai_nan_query,
    openai_nested_arguments,
    openai_null_message,
    text_block,
    tool_use_block,
)
from pydantic import SecretStr

from bot.llm.anthropic_provider import AnthropicProvider
from bot.llm.errors import BadResponse, ProviderUnavailable
from bot.llm.messages import Message, ToolSpec
from bot.llm.openai_provider import OpenAIProvider
from bot.llm.response_checks import check_response
from bot.llm.sdk_provider import SDKProvider

KEY = "sk-test-0123456789abcdef"
TOOLS = [
    ToolSpec(
        name="execute_query",
        description="Run a Barb Script query.",
        parameters={"type": "object", "properties": {"query": {"type": "object"}}},
    )
]

FAULTS: dict[str, dict[str, Callable[[], Canned]]] = {
    "openai": {
        "null message": openai_null_message,
        "body cut short": non_json_body,
        "HTML page": lambda: non_json_body("text/html"),
        "arguments nested 5,000 deep": openai_nested_arguments,
        "NaN in a query": openai_nan_query,
        "invalid tool name": openai_invalid_tool_name,
    },
    "anthropic": {
        "null message": anthropic_null_message,
        "body cut short": non_json_body,
        "HTML page": lambda: non_json_body("text/html"),
        "arguments nested 5,000 deep": anthropic_nested_input,
        "NaN in a query": anthropic_nan_query,
        "invalid tool name": anthropic_invalid_tool_name,
    },
}


def _openai_call_with(**fields: object) -> Callable[[], Canned]:
    def build() -> Canned:
        canned = openai_completion(tool_calls=[("call_1", "execute_query", '{"query": {}}')])
        call = canned.body["choices"][0]["message"]["tool_calls"][0]
        for name, value in fields.items():
            target = call["function"] if name in ("name", "arguments") else call
            target[name] = value
        return canned

    return build


def _edited(canned: Callable[[], Canned], edit: Callable[[dict], None]) -> Callable[[], Canned]:
    def build() -> Canned:
        made = canned()
        edit(made.body)
        return made

    return build


# Wrong types where the SDKs do not look (they build their types without validating them).
FAULTS["openai"].update(
    {
        "null call id": _openai_call_with(id=None),
        "null tool name": _openai_call_with(name=None),
        "content a number": _edited(
            lambda: openai_completion("x"),
            lambda body: body["choices"][0]["message"].update(content=42),
        ),
        "usage without counts": _edited(
            lambda: openai_completion("x"), lambda body: body["usage"].update(prompt_tokens=None)
        ),
    }
)
FAULTS["anthropic"].update(
    {
        "null text": _edited(
            lambda: anthropic_message(text_block("x")),
            lambda body: body["content"][0].update(text=None),
        ),
        "null tool name": _edited(
            lambda: anthropic_message(tool_use_block("toolu_1", "execute_query", {})),
            lambda body: body["content"][0].update(name=None),
        ),
        "usage without counts": _edited(
            lambda: anthropic_message(text_block("x")),
            lambda body: body["usage"].update(input_tokens=None),
        ),
    }
)
CASES = [(api, name) for api, faults in FAULTS.items() for name in faults]


def make(api: str, url: str) -> SDKProvider:
    if api == "openai":
        return OpenAIProvider(
            model="gpt-4o-mini", api_key=SecretStr(KEY), base_url=f"{url}/v1", max_retries=2
        )
    return AnthropicProvider(
        model="claude-sonnet-4-6", api_key=SecretStr(KEY), base_url=url, max_retries=2
    )


def good(api: str) -> Canned:
    if api == "openai":
        return openai_completion("A fine answer.")
    return anthropic_message(text_block("A fine answer."))


async def ask(provider: SDKProvider) -> Message:
    response = await provider.complete(
        system="You are Barb.", messages=[Message.user("average range")], tools=TOOLS
    )
    return check_response(response, [tool.name for tool in TOOLS]).message


@pytest.mark.parametrize(("api", "fault"), CASES, ids=[f"{a}: {f}" for a, f in CASES])
async def test_every_malformed_response_is_a_bad_response(
    server: FakeAPIServer, api: str, fault: str
) -> None:
    path = OPENAI_PATH if api == "openai" else ANTHROPIC_PATH
    server.queue(path, FAULTS[api][fault](), good(api))

    async with make(api, server.url) as provider:
        with pytest.raises(BadResponse) as raised:
            await ask(provider)
        assert len(server.requests_to(path)) == 1  # a 200 is not retried by the SDK
        # The same provider reads the next, well-formed answer: nothing is stuck.
        assert (await ask(provider)).text == "A fine answer."

    error = raised.value
    # It answered: not "not reachable", which sent the person looking for an outage.
    assert error.user_message != ProviderUnavailable.default_user_message
    assert "could not read" in error.user_message
    # The developer's message names the fault, not the body (which may quote anything).
    assert "upstream error" not in str(error)
    assert len(str(error)) < 400


@pytest.mark.parametrize("api", list(FAULTS))
async def test_a_call_nested_within_bounds_is_read(server: FakeAPIServer, api: str) -> None:
    # The depth check is a bound, not a ban on nesting: a real query passes.
    query = {"query": {"session": "RTH", "map": {"r": "high - low"}, "select": "mean(r)"}}
    if api == "openai":
        canned = openai_completion(tool_calls=[("call_1", "execute_query", json.dumps(query))])
    else:
        canned = anthropic_message(tool_use_block("toolu_1", "execute_query", query))
    server.queue(OPENAI_PATH if api == "openai" else ANTHROPIC_PATH, canned)

    async with make(api, server.url) as provider:
        message = await ask(provider)

    assert message.tool_calls[0].arguments == query
