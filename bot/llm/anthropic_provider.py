"""The Anthropic Messages adapter, with prompt caching.

The system prompt and the tool definitions are the same on every call of a conversation, so
they are marked ``cache_control: ephemeral`` (the system block, and the last tool: a cache
breakpoint covers everything before it). Later calls then read them from the cache at a
tenth of the input price; usage reports the cache reads and writes separately.

Wire shape: an assistant turn is text and ``tool_use`` blocks; tool results go back as
``tool_result`` blocks in a *user* message, all results of one turn in one message (the API
wants consecutive same-role turns merged, and results before any text).
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import anthropic
from anthropic.types import Message as AnthropicMessage
from pydantic import SecretStr, ValidationError

from bot.llm.errors import BadResponse, LLMError, ProviderTimeout, ProviderUnavailable
from bot.llm.http_errors import error_for_status, redact
from bot.llm.messages import Message, ModelResponse, ToolCall, ToolSpec, Usage
from bot.llm.pricing import PriceTable
from bot.llm.sdk_provider import (
    UNREADABLE_BODY,
    WRONG_SHAPE,
    SDKProvider,
    capped_retry_after,
    unreadable_body,
    wrong_shape,
)

log = logging.getLogger(__name__)

#: The SDK's client, without retries that wait out a long ``retry-after``.
_CLIENT = capped_retry_after(anthropic.AsyncAnthropic)

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-sonnet-4-6"
#: Sent to a proxy behind ANTHROPIC_BASE_URL that needs no key. Passing a key at all also
#: stops the SDK from looking for credentials in profiles on disk.
PLACEHOLDER_KEY = "not-needed"
CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


class AnthropicProvider(SDKProvider):
    """``LLMProvider`` on ``anthropic.AsyncAnthropic().messages``."""

    name = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"

    def __init__(
        self,
        *,
        model: str | None = None,
        api_key: SecretStr | None = None,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        prices: PriceTable | None = None,
    ) -> None:
        super().__init__(
            model=model or DEFAULT_MODEL,
            api_key=api_key,
            base_url=base_url or DEFAULT_BASE_URL,
            timeout_s=timeout_s,
            max_retries=max_retries,
            prices=prices,
        )
        self._client = _CLIENT(
            api_key=api_key.get_secret_value() if api_key else PLACEHOLDER_KEY,
            base_url=self.base_url,
            timeout=timeout_s,
            max_retries=max_retries,
        )

    async def complete(
        self,
        *,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        max_tokens: int = 1024,
    ) -> ModelResponse:
        self._check_allowed()
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": to_anthropic_messages(messages),
        }
        if system:
            request["system"] = [{"type": "text", "text": system, "cache_control": CACHE_CONTROL}]
        if tools:
            request["tools"] = to_anthropic_tools(tools)
        started = time.monotonic()
        try:
            wire = await self._client.messages.create(**request)
        except anthropic.AnthropicError as err:
            raise self._error(err) from _cause(err)
        except UNREADABLE_BODY as err:
            raise unreadable_body(self._where, err, provider=self.name) from None
        try:
            response = from_anthropic_message(wire, model=self.model)
        except WRONG_SHAPE as err:
            raise wrong_shape(self._where, err, provider=self.name) from None
        return self._finish(response, started)

    def _error(self, err: anthropic.AnthropicError) -> LLMError:
        if isinstance(err, anthropic.APITimeoutError):
            return ProviderTimeout(self._timeout_message(), provider=self.name)
        if isinstance(err, anthropic.APIConnectionError):
            return ProviderUnavailable(self._unreachable_message(err.__cause__), provider=self.name)
        if isinstance(err, anthropic.APIStatusError):
            return error_for_status(
                err.status_code, err.response.headers, err.body, self.endpoint, err.request_id
            )
        return BadResponse(
            f"{self._where} sent an answer the SDK could not read "
            f"({type(err).__name__}: {redact(str(err), self.endpoint.secret)}).",
            provider=self.name,
        )

    async def aclose(self) -> None:
        await self._client.close()


def _cause(err: BaseException) -> BaseException | None:
    # HTTP errors are not chained: everything useful (status, the server's redacted reason,
    # the request id) is in Barb's message, while the SDK's message quotes the server
    # verbatim, which may quote the key, and chained causes end up in logged tracebacks.
    if isinstance(err, anthropic.APIStatusError):
        return None
    return err


# --- neutral -> wire ---------------------------------------------------------------------


def to_anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Wire messages; consecutive turns of the same wire role are merged into one."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue  # the API rejects empty content
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    return wire


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if message.role == "tool":
        results: list[dict[str, Any]] = []
        for result in message.tool_results:
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": _safe_id(result.call_id),
                "content": result.content,
            }
            if result.is_error:
                block["is_error"] = True
            results.append(block)
        return "user", results
    blocks: list[dict[str, Any]] = []
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": _safe_id(call.id),
                "name": call.name,
                "input": call.arguments,
            }
        )
    return message.role, blocks


def _safe_id(call_id: str) -> str:
    # Anthropic ids must match ^[a-zA-Z0-9_-]+$; a transcript started on another provider
    # may carry other characters. The same mapping on both sides keeps the pairs matched.
    return _UNSAFE_ID.sub("_", call_id) or "call"


def to_anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    wire = [
        {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
        for tool in tools
    ]
    if wire:
        wire[-1]["cache_control"] = CACHE_CONTROL
    return wire


# --- wire -> neutral ---------------------------------------------------------------------


def from_anthropic_message(wire: object, *, model: str) -> ModelResponse:
    if not isinstance(wire, AnthropicMessage):
        raise BadResponse(
            f"The Anthropic API for {model!r} answered without a message "
            f"(got {type(wire).__name__}).",
            provider="anthropic",
        )
    # The SDK builds its types without validating them, so a null content arrives as None.
    content = wire.content
    if (
        not isinstance(content, list)
        or wire.usage is None
        or not all(hasattr(block, "type") for block in content)
    ):
        raise BadResponse(
            f"The Anthropic API for {model!r} answered with no content list or no usage.",
            provider="anthropic",
        )
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in wire.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {}
            calls.append(ToolCall(id=block.id, name=block.name, arguments=arguments))
        # Other blocks (thinking, server tools) are not used by Barb and not kept.
    try:
        message = Message.assistant(text="\n".join(texts) or None, tool_calls=calls)
    except ValidationError as err:
        raise BadResponse(
            f"Unreadable message from {model!r}: {err}", provider="anthropic"
        ) from err
    usage = wire.usage
    return ModelResponse(
        message=message,
        usage=Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0,
        ),
        model=wire.model or model,
        stop_reason=wire.stop_reason,
    )
