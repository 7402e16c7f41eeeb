"""The provider-neutral conversation type: shapes per role, JSON round trips, usage sums."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from bot.llm.messages import (
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)

TRANSCRIPT = [
    Message.user("из них какие самые волатильные?"),
    Message.assistant(
        "Посчитаю.",
        [ToolCall(id="call_1", name="execute_query", arguments={"q": {"limit": 5}, "n": [1.5]})],
    ),
    Message.tool(
        ToolResult(call_id="call_1", name="execute_query", content='{"rows": 5}'),
        ToolResult(call_id="call_2", name="get_events", content="nope", is_error=True),
    ),
    Message.assistant("Вот пять дней."),
]


def test_transcript_round_trips_through_json() -> None:
    adapter = TypeAdapter(list[Message])

    assert adapter.validate_json(adapter.dump_json(TRANSCRIPT)) == TRANSCRIPT


def test_response_and_request_round_trip_through_json() -> None:
    response = ModelResponse(
        message=TRANSCRIPT[1],
        usage=Usage(input_tokens=1, output_tokens=2, cache_read_tokens=3, cache_write_tokens=4),
        model="m",
        stop_reason="tool_use",
        cost_usd=0.5,
    )
    request = ModelRequest(
        system="s", messages=TRANSCRIPT, tools=[ToolSpec(name="t", description="d")]
    )

    assert ModelResponse.model_validate_json(response.model_dump_json()) == response
    assert ModelRequest.model_validate_json(request.model_dump_json()) == request


@pytest.mark.parametrize(
    "fields",
    [
        {"role": "user", "text": "x", "tool_calls": [{"id": "1", "name": "t"}]},
        {"role": "tool", "tool_results": []},
        {
            "role": "tool",
            "text": "x",
            "tool_results": [{"call_id": "1", "name": "t", "content": ""}],
        },
        {"role": "assistant", "tool_results": [{"call_id": "1", "name": "t", "content": ""}]},
        {"role": "system", "text": "the system prompt is not a message"},
    ],
)
def test_a_message_fits_its_role(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Message.model_validate(fields)


def test_a_response_is_an_assistant_message() -> None:
    with pytest.raises(ValidationError):
        ModelResponse(message=Message.user("hi"), model="m")


def test_usage_adds_up() -> None:
    total = Usage(input_tokens=1, output_tokens=2, cache_read_tokens=3) + Usage(
        input_tokens=10, output_tokens=20, cache_write_tokens=40
    )

    assert total == Usage(
        input_tokens=11, output_tokens=22, cache_read_tokens=3, cache_write_tokens=40
    )
    assert total.prompt_tokens == 54
    assert sum([total, total], Usage()) == total + total
