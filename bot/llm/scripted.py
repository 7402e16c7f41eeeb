"""A provider that plays back scripted turns and records every request it receives.

It ships in the package, not in tests, because tests, ``barb chat`` demos and benchmarks all
drive the real assistant loop with it (pydantic-ai's FunctionModel / simonw/llm's mock
model). Example::

    provider = ScriptedProvider([
        turn("I'll average the RTH range by weekday.", tool_call("execute_query", query=q)),
        lambda request: f"Got {request.last_message.tool_results[0].content}",
    ])
    ...
    assert provider.requests[1].last_message.role == "tool"

A turn is a ``ModelResponse`` (played as is), a ``Message`` (an assistant message), a
``str`` (assistant text), or a callable ``(ModelRequest) -> any of those`` (sync or async)
that scripts the turn from what the model was sent.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Self

from bot.llm.errors import ScriptExhausted
from bot.llm.messages import (
    STOP_END_TURN,
    STOP_TOOL_USE,
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolSpec,
    Usage,
)
from bot.llm.pricing import PriceTable

Reply = ModelResponse | Message | str
Turn = Reply | Callable[[ModelRequest], Reply | Awaitable[Reply]]
UsageFor = Usage | Callable[[ModelRequest], Usage]

#: Placeholder id of calls built by ``tool_call``; the provider numbers them when played.
AUTO_ID = ""


def text(content: str) -> Message:
    """An assistant turn that only says ``content``."""
    return Message.assistant(text=content)


def tool_call(name: str, /, **arguments: Any) -> Message:
    """An assistant turn that calls one tool. Its id is ``call_<n>``, numbered in play order."""
    return Message.assistant(tool_calls=[ToolCall(id=AUTO_ID, name=name, arguments=arguments)])


def turn(
    *parts: str | Message | ToolCall,
    usage: Usage | None = None,
    stop_reason: str | None = None,
    model: str = "scripted",
) -> ModelResponse:
    """One assistant turn from text and tool calls, e.g. an explanation plus a call.

    ``usage`` sets the fake token counts of this turn (for cost tests). When no
    ``stop_reason`` is given it is derived from the content. ``model`` is replaced by the
    provider's model when played, unless it was changed here.
    """
    texts: list[str] = []
    calls: list[ToolCall] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, ToolCall):
            calls.append(part)
        else:
            if part.text:
                texts.append(part.text)
            calls.extend(part.tool_calls)
    message = Message.assistant(text="\n".join(texts) or None, tool_calls=calls)
    return ModelResponse(
        message=message,
        usage=usage or Usage(),
        model=model,
        stop_reason=stop_reason or _stop_reason(message),
    )


class ScriptedProvider:
    """``LLMProvider`` that answers from a script. No network, deterministic."""

    name = "scripted"

    def __init__(
        self,
        turns: Iterable[Turn] = (),
        *,
        model: str = "scripted",
        usage: UsageFor | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        """``usage``: the fake usage of turns that set none (a fixed value, or from the
        request); ``prices``: price the turns (cost stays None without it)."""
        self.model = model
        self.requests: list[ModelRequest] = []
        self.responses: list[ModelResponse] = []
        self._turns: list[Turn] = list(turns)
        self._usage = usage
        self._prices = prices
        self._next_call = 0

    def add(self, *turns: Turn) -> None:
        """Queue more turns (e.g. between two questions of a test)."""
        self._turns.extend(turns)

    @property
    def remaining(self) -> int:
        return len(self._turns)

    async def complete(
        self,
        *,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        max_tokens: int = 1024,
    ) -> ModelResponse:
        # Recorded as a deep copy: the caller's list keeps growing after this call.
        request = ModelRequest(
            system=system,
            messages=[message.model_copy(deep=True) for message in messages],
            tools=list(tools),
            max_tokens=max_tokens,
        )
        self.requests.append(request)
        if not self._turns:
            raise ScriptExhausted(self._exhausted_message(), provider=self.name)
        scripted = self._turns.pop(0)
        reply = scripted(request) if callable(scripted) else scripted
        if inspect.isawaitable(reply):
            reply = await reply
        response = self._respond(reply, request)
        self.responses.append(response)
        return response

    def _respond(self, reply: Reply, request: ModelRequest) -> ModelResponse:
        if isinstance(reply, str):
            reply = text(reply)
        if isinstance(reply, Message):
            if reply.role != "assistant":
                raise TypeError(f"a scripted turn must be an assistant message, not {reply.role!r}")
            reply = ModelResponse(
                message=reply,
                usage=self._usage_for(request),
                model=self.model,
                stop_reason=_stop_reason(reply),
            )
        if not isinstance(reply, ModelResponse):
            raise TypeError(
                "a scripted turn must be a ModelResponse, a Message, a str, or a callable "
                f"returning one of those; got {type(reply).__name__}"
            )
        message = self._number_calls(reply.message)
        update: dict[str, Any] = {"message": message}
        if reply.model == "scripted":
            update["model"] = self.model
        if reply.usage == Usage() and self._usage is not None:
            update["usage"] = self._usage_for(request)
        response = reply.model_copy(update=update)
        if response.cost_usd is None and self._prices is not None:
            cost = self._prices.cost(response.model, response.usage)
            response = response.model_copy(update={"cost_usd": cost})
        return response

    def _usage_for(self, request: ModelRequest) -> Usage:
        if self._usage is None:
            return Usage()
        return self._usage(request) if callable(self._usage) else self._usage

    def _number_calls(self, message: Message) -> Message:
        if not any(call.id == AUTO_ID for call in message.tool_calls):
            return message
        calls = []
        for call in message.tool_calls:
            if call.id == AUTO_ID:
                self._next_call += 1
                call = call.model_copy(update={"id": f"call_{self._next_call}"})
            calls.append(call)
        return message.model_copy(update={"tool_calls": calls})

    def _exhausted_message(self) -> str:
        played = len(self.requests) - 1
        lines = [
            f"ScriptedProvider ran out of turns: it was given {played} and received request "
            f"#{played + 1}. Add a turn for it. Requests received (last message of each):"
        ]
        for number, request in enumerate(self.requests, start=1):
            lines.append(f"  #{number}: {_describe(request.last_message)}")
        return "\n".join(lines)

    async def aclose(self) -> None:
        """Nothing to release; here so that every shipped provider closes the same way."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (
            f"ScriptedProvider(model={self.model!r}, remaining={self.remaining}, "
            f"requests={len(self.requests)})"
        )


def _stop_reason(message: Message) -> str:
    return STOP_TOOL_USE if message.tool_calls else STOP_END_TURN


def _describe(message: Message | None, limit: int = 120) -> str:
    if message is None:
        return "(no messages)"
    if message.role == "tool":
        body = "; ".join(
            f"{r.name}{' (error)' if r.is_error else ''} -> {r.content}"
            for r in message.tool_results
        )
    elif message.tool_calls:
        body = ", ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
        if message.text:
            body = f"{message.text!r} + {body}"
    else:
        body = repr(message.text)
    if len(body) > limit:
        body = body[: limit - 1] + "…"
    return f"{message.role}: {body}"
