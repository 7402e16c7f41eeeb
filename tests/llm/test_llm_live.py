"""One real call to a real provider, only when its key is in the environment.

Run with ``pytest -m live tests/llm``; costs a fraction of a cent. Skipped otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from bot.llm.messages import Message, ToolSpec
from bot.llm.offline import allow_model_requests
from bot.llm.settings import LLMSettings, make_provider

pytestmark = pytest.mark.live


@pytest.fixture
def real_requests() -> Iterator[None]:
    allow_model_requests(True)  # this test opts in; conftest resets it after
    yield


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_real_provider_calls_a_tool(provider: str, real_requests: None) -> None:
    if not os.environ.get(f"{provider.upper()}_API_KEY"):
        pytest.skip(f"{provider.upper()}_API_KEY is not set")
    llm = make_provider(LLMSettings(_env_file=None, provider=provider, max_retries=1))  # type: ignore[call-arg]
    tool = ToolSpec(
        name="get_weekday_range",
        description="Average daily range of a futures instrument for one weekday.",
        parameters={
            "type": "object",
            "properties": {"weekday": {"type": "string", "enum": ["Mon", "Tue", "Wed"]}},
            "required": ["weekday"],
        },
    )

    async with llm:  # type: ignore[attr-defined]
        response = await llm.complete(
            system="Use the tool to answer. Do not guess.",
            messages=[Message.user("What is the average range on Wednesdays?")],
            tools=[tool],
            max_tokens=200,
        )

    assert response.message.tool_calls, response
    assert response.message.tool_calls[0].name == "get_weekday_range"
    assert response.usage.output_tokens > 0
