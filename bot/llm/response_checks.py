"""Is a model's answer well formed? Checked once, on the neutral message, for every provider.

The adapters turn what the SDKs could parse into a ``ModelResponse``; that is not yet an
answer Barb can act on. A tool call may name a tool that was never offered (or a name no
API would take back in the history), repeat another call's id, or carry arguments that JSON
cannot hold (``NaN``: Python's json module reads it, PostgreSQL and every strict parser
refuse it) or that are nested absurdly deep. Such a response is ``BadResponse``: the loop
retries it once and then gives up with a sentence of its own (``llm_bad_response``): the
model answered, so not the one for an unreachable model.

A tool's *arguments* that merely do not fit its schema are not malformed: that error goes
back to the model as the tool's result, for it to fix.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from bot.llm.errors import BadResponse
from bot.llm.messages import ModelResponse, ToolCall

#: Deeper than any real query needs (a Barb Script query is 3–4 levels); well below
#: Python's recursion limit, so nothing downstream that recurses can overflow.
MAX_ARGUMENT_DEPTH = 32
#: What both OpenAI and Anthropic accept as a tool name; anything else would also make the
#: next request, which carries this call in its history, fail.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def check_response(response: ModelResponse, tools: Iterable[str]) -> ModelResponse:
    """``response`` if its tool calls are usable; ``BadResponse`` naming the fault if not.

    ``tools`` are the names of the tools this conversation knows.
    """
    known = set(tools)
    seen: set[str] = set()
    for call in response.message.tool_calls:
        fault = _call_fault(call, known, seen)
        if fault:
            raise BadResponse(
                f"{response.model!r} sent a malformed tool call: {fault}.", provider=None
            )
        seen.add(call.id)
    return response


def _call_fault(call: ToolCall, known: set[str], seen: set[str]) -> str | None:
    if not TOOL_NAME.match(call.name):
        return f"the tool name {call.name[:80]!r} is not a valid name"
    if call.name not in known:
        return f"there is no tool {call.name!r}"
    if not call.id:
        return f"the call to {call.name} has no id"
    if call.id in seen:
        return f"the id {call.id[:80]!r} is used twice"
    return _arguments_fault(call.arguments)


def _arguments_fault(arguments: dict[str, Any]) -> str | None:
    """Walks the arguments without recursion: they may be deeper than the stack."""
    stack: list[tuple[Any, int]] = [(arguments, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Iterable[Any] = value.values()
            if any(not isinstance(key, str) for key in value):
                return "an argument object has a key that is not a string"
        elif isinstance(value, list | tuple):
            children = value
        elif isinstance(value, float) and not math.isfinite(value):
            return f"the arguments contain {value!r}, which is not JSON"
        elif value is None or isinstance(value, str | int | float | bool):
            continue
        else:
            return f"the arguments contain a {type(value).__name__}, which is not JSON"
        if depth > MAX_ARGUMENT_DEPTH:
            return f"the arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep"
        stack.extend((child, depth + 1) for child in children)
    return None
