"""The one provider-neutral conversation type inside Barb.

Adapters convert these to and from each provider's wire format at the edge; everything else
(the assistant loop, the store, tests) speaks only these models. They are plain pydantic
models, so a transcript round-trips through JSON unchanged (``model_dump_json`` /
``model_validate_json``), which is how the store keeps them.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: Where a tool call's arguments go when the model sent text that is not a JSON object
#: (small local models do). The call is kept, not dropped, so that the tool's validation
#: error can go back to the model and it can retry.
RAW_ARGUMENTS_KEY = "_raw"

# Stop reasons, normalised to one vocabulary (Anthropic's) so the loop can check them
# without knowing the provider. Values a provider sends that have no equivalent pass through.
STOP_END_TURN = "end_turn"
STOP_TOOL_USE = "tool_use"
STOP_MAX_TOKENS = "max_tokens"

Role = Literal["user", "assistant", "tool"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """The model asks Barb to run one tool."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolResult(_Frozen):
    """Barb's answer to one tool call; ``is_error`` marks a failure the model should fix."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


class Message(_Frozen):
    """One turn of the conversation.

    - ``user``: ``text`` only.
    - ``assistant``: ``text`` and/or ``tool_calls``.
    - ``tool``: one or more ``tool_results`` (the answers to the previous assistant turn's
      calls), no text.

    The system prompt is not a message: it is passed to ``LLMProvider.complete`` on its own.
    """

    role: Role
    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_results: list[ToolResult] = Field(default_factory=list)

    @model_validator(mode="after")
    def _fits_role(self) -> Self:
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"only assistant messages carry tool_calls, not {self.role!r}")
        if self.role == "tool":
            if not self.tool_results:
                raise ValueError("a tool message needs at least one tool result")
            if self.text is not None:
                raise ValueError("a tool message carries tool_results only, not text")
        elif self.tool_results:
            raise ValueError(f"only tool messages carry tool_results, not {self.role!r}")
        return self

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role="user", text=text)

    @classmethod
    def assistant(
        cls, text: str | None = None, tool_calls: list[ToolCall] | None = None
    ) -> Message:
        return cls(role="assistant", text=text, tool_calls=tool_calls or [])

    @classmethod
    def tool(cls, *results: ToolResult) -> Message:
        return cls(role="tool", tool_results=list(results))


class ToolSpec(_Frozen):
    """A tool the model may call; ``parameters`` is a JSON schema of an object."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class Usage(_Frozen):
    """Tokens of one call, or a sum of calls (``a + b``).

    ``input_tokens`` counts only the uncached input: the whole prompt is
    ``input_tokens + cache_read_tokens + cache_write_tokens`` (Anthropic reports it so;
    the OpenAI adapter subtracts the cached part of ``prompt_tokens``), so that each part
    can be priced at its own rate.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def prompt_tokens(self) -> int:
        """The whole input, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


class ModelResponse(_Frozen):
    """One answer of the model: an assistant message plus what it cost."""

    message: Message
    usage: Usage = Field(default_factory=Usage)
    model: str
    stop_reason: str | None = None
    #: USD from the price table; None when the model is not in it (unknown is not free).
    cost_usd: float | None = None

    @model_validator(mode="after")
    def _is_assistant(self) -> Self:
        if self.message.role != "assistant":
            raise ValueError(f"a model response is an assistant message, not {self.message.role!r}")
        return self


class ModelRequest(_Frozen):
    """Everything a provider was asked in one call; the scripted provider records these."""

    system: str
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    max_tokens: int = 1024

    @property
    def last_message(self) -> Message | None:
        return self.messages[-1] if self.messages else None

    @property
    def tool_names(self) -> list[str]:
        return [tool.name for tool in self.tools]
