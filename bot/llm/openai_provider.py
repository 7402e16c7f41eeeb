"""The OpenAI Chat Completions adapter; with a base URL, any OpenAI-compatible server.

vLLM, llama.cpp's server and Ollama speak the same wire format, so one adapter serves them
all. Differences handled here:

- A local server needs no key, but the SDK insists on one: a placeholder is sent.
- With no model configured and a custom base URL, the first model the server lists
  (GET /models) is used, so that ``OPENAI_BASE_URL`` alone is enough.
- The official API takes ``max_completion_tokens`` (required by its reasoning models);
  compatible servers are sent the older, universally understood ``max_tokens``.
- Small local models sometimes send tool arguments that are not a JSON object (or name a
  key twice: ``bot.llm.tool_arguments``). Such a call
  is kept, with the raw text under ``RAW_ARGUMENTS_KEY`` ("_raw"), rather than failing the
  turn: the tool's argument validation then fails, and that error goes back to the model,
  which can retry (pydantic-ai's approach). ``BadResponse`` is kept for answers that carry
  no usable message at all.
- OpenAI has no ``is_error`` flag on tool results: a failed result's text is prefixed
  with ``ERROR: `` so the model still sees it failed.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from pydantic import SecretStr, ValidationError

from bot.llm.errors import (
    BadResponse,
    ConfigError,
    LLMError,
    ProviderTimeout,
    ProviderUnavailable,
    RequestRejected,
)
from bot.llm.http_errors import error_for_status, redact
from bot.llm.messages import (
    RAW_ARGUMENTS_KEY,
    STOP_END_TURN,
    STOP_MAX_TOKENS,
    STOP_TOOL_USE,
    Message,
    ModelResponse,
    ToolCall,
    ToolSpec,
    Usage,
)
from bot.llm.pricing import PriceTable
from bot.llm.sdk_provider import (
    UNREADABLE_BODY,
    WRONG_SHAPE,
    SDKProvider,
    capped_retry_after,
    unreadable_body,
    wrong_shape,
)
from bot.llm.tool_arguments import UnreadableArguments, read_arguments

log = logging.getLogger(__name__)

#: The SDK's client, without retries that wait out a long ``retry-after``.
_CLIENT = capped_retry_after(openai.AsyncOpenAI)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4.1-mini"
#: Sent as the key to servers that need none; the SDK refuses to start without one.
PLACEHOLDER_KEY = "not-needed"
ERROR_PREFIX = "ERROR: "

_STOP_REASONS = {"stop": STOP_END_TURN, "tool_calls": STOP_TOOL_USE, "length": STOP_MAX_TOKENS}


class OpenAIProvider(SDKProvider):
    """``LLMProvider`` on ``openai.AsyncOpenAI().chat.completions``."""

    name = "openai"
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"

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
        custom_server = base_url is not None and base_url.rstrip("/") != DEFAULT_BASE_URL
        if model is None and not custom_server:
            model = DEFAULT_MODEL
        super().__init__(
            model=model,
            api_key=api_key,
            base_url=base_url or DEFAULT_BASE_URL,
            timeout_s=timeout_s,
            max_retries=max_retries,
            prices=prices,
        )
        self._token_param = "max_tokens" if custom_server else "max_completion_tokens"
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
        model = await self._resolve_model()
        request: dict[str, Any] = {
            "model": model,
            "messages": to_openai_messages(system, messages),
            self._token_param: max_tokens,
        }
        if tools:
            request["tools"] = to_openai_tools(tools)
        started = time.monotonic()
        try:
            completion = await self._client.chat.completions.create(**request)
        except openai.OpenAIError as err:
            raise self._error(err) from _cause(err)
        except UNREADABLE_BODY as err:
            raise unreadable_body(self._where, err, provider=self.name) from None
        try:
            response = from_openai_completion(completion, model=model)
        except WRONG_SHAPE as err:
            raise wrong_shape(self._where, err, provider=self.name) from None
        return self._finish(response, started)

    async def _resolve_model(self) -> str:
        if self._model is not None:
            return self._model
        try:
            page = await self._client.models.list()
            ids = [entry.id for entry in page.data]
        except openai.OpenAIError as err:
            error = self._error(err)
            if not isinstance(error, ConfigError | RequestRejected | BadResponse):
                raise error from _cause(err)  # down, slow, busy or refused: say so as such
            # The server answered but has no usable model list: only a setting can help.
            raise ConfigError(
                f"No model is configured and {self._where} could not list its models "
                f"({error}). Set BARB_LLM_MODEL to the model name that server serves.",
                provider=self.name,
            ) from _cause(err)
        if not ids:
            raise ConfigError(
                f"No model is configured and {self._where} lists none: "
                "set BARB_LLM_MODEL to the model name that server serves.",
                provider=self.name,
            )
        self._model = ids[0]
        log.info("No BARB_LLM_MODEL set: using %r, the first model %s lists", ids[0], self._where)
        return ids[0]

    def _error(self, err: openai.OpenAIError) -> LLMError:
        if isinstance(err, openai.APITimeoutError):
            return ProviderTimeout(self._timeout_message(), provider=self.name)
        if isinstance(err, openai.APIConnectionError):
            return ProviderUnavailable(self._unreachable_message(err.__cause__), provider=self.name)
        if isinstance(err, openai.APIStatusError):
            return error_for_status(
                err.status_code, err.response.headers, err.body, self.endpoint, err.request_id
            )
        secret = self.endpoint.secret
        return BadResponse(
            f"{self._where} sent an answer the SDK could not read "
            f"({type(err).__name__}: {redact(str(err), secret)}).",
            provider=self.name,
        )

    async def aclose(self) -> None:
        await self._client.close()


def _cause(err: BaseException) -> BaseException | None:
    # HTTP errors are not chained: everything useful (status, the server's redacted reason,
    # the request id) is in Barb's message, while the SDK's message quotes the server
    # verbatim, which may quote the key, and chained causes end up in logged tracebacks.
    if isinstance(err, openai.APIStatusError):
        return None
    return err


# --- neutral -> wire ---------------------------------------------------------------------


def to_openai_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    """The system prompt first, then one wire message per turn (one per tool result)."""
    wire: list[dict[str, Any]] = []
    if system:
        wire.append({"role": "system", "content": system})
    for message in messages:
        if message.role == "user":
            wire.append({"role": "user", "content": message.text or ""})
        elif message.role == "assistant":
            if not message.text and not message.tool_calls:
                continue  # an empty turn; some servers reject it
            out: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                out["tool_calls"] = [_to_openai_call(call) for call in message.tool_calls]
            wire.append(out)
        else:
            for result in message.tool_results:
                content = ERROR_PREFIX + result.content if result.is_error else result.content
                wire.append({"role": "tool", "tool_call_id": result.call_id, "content": content})
    return wire


def _to_openai_call(call: ToolCall) -> dict[str, Any]:
    # Always valid JSON, even for a call kept with RAW_ARGUMENTS_KEY: servers that render
    # the history through a chat template parse these strings back.
    return {
        "id": call.id,
        "type": "function",
        "function": {
            "name": call.name,
            "arguments": json.dumps(call.arguments, ensure_ascii=False),
        },
    }


def to_openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]


# --- wire -> neutral ---------------------------------------------------------------------


def from_openai_completion(completion: object, *, model: str) -> ModelResponse:
    """The neutral response; ``BadResponse`` if there is no message to read."""
    if not isinstance(completion, ChatCompletion) or not completion.choices:
        raise BadResponse(
            f"The OpenAI-compatible server for {model!r} answered without a message "
            f"(got {type(completion).__name__}).",
            provider="openai",
        )
    choice = completion.choices[0]
    wire = choice.message
    # The SDK builds its types without validating them, so a null message arrives as None.
    if wire is None or any(
        getattr(call, "function", None) is None for call in wire.tool_calls or []
    ):
        raise BadResponse(
            f"The OpenAI-compatible server for {model!r} answered with a null message "
            "or a tool call without a function.",
            provider="openai",
        )
    calls = [
        ToolCall(
            id=call.id,
            name=call.function.name,
            arguments=parse_arguments(call.function.arguments, tool=call.function.name),
        )
        for call in wire.tool_calls or []
        if getattr(call, "type", "function") == "function"
    ]
    text = wire.content or wire.refusal or None
    try:
        message = Message.assistant(text=text, tool_calls=calls)
    except ValidationError as err:
        raise BadResponse(f"Unreadable message from {model!r}: {err}", provider="openai") from err
    reason = choice.finish_reason
    return ModelResponse(
        message=message,
        usage=_usage(completion),
        model=completion.model or model,
        stop_reason=_STOP_REASONS.get(reason, reason) if reason else None,
    )


def parse_arguments(raw: object, *, tool: str) -> dict[str, Any]:
    """A tool call's JSON arguments; text that is not a JSON object is kept under ``_raw``."""
    if isinstance(raw, dict):  # some servers send an object where a string is due
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    text = raw if isinstance(raw, str) else str(raw)
    try:
        return read_arguments(text)
    except UnreadableArguments as exc:
        log.info("Tool call %r arguments kept under %r: %s", tool, RAW_ARGUMENTS_KEY, str(exc)[:80])
        return {RAW_ARGUMENTS_KEY: text}
    except RecursionError:
        # Nested deeper than Python's stack: not a model's honest attempt at a query.
        raise BadResponse(
            f"The arguments of the call to {tool[:80]!r} are nested too deep to read.",
            provider="openai",
        ) from None


def _usage(completion: ChatCompletion) -> Usage:
    usage = completion.usage
    if usage is None:  # some local servers report none
        return Usage()
    details = usage.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details else 0
    written = (details.cache_write_tokens or 0) if details else 0
    return Usage(
        # prompt_tokens includes the cached part; Usage.input_tokens is the uncached rest.
        input_tokens=max(usage.prompt_tokens - cached - written, 0),
        output_tokens=usage.completion_tokens,
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )
