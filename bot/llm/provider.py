"""What the assistant loop needs from a language model, and nothing more."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from bot.llm.messages import Message, ModelResponse, ToolSpec


@runtime_checkable
class LLMProvider(Protocol):
    """One model behind one API. Implementations: OpenAI-compatible, Anthropic, scripted.

    ``complete`` sends the whole conversation (providers are stateless) and returns the
    model's next assistant message. It raises only ``bot.llm.errors.LLMError`` subclasses.
    """

    name: str
    model: str

    async def complete(
        self,
        *,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        max_tokens: int = 1024,
    ) -> ModelResponse: ...
