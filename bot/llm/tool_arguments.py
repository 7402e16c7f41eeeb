"""Reading a tool call's arguments from the JSON text a model sent.

Strict where ``json.loads`` is lenient: an object naming a key twice is refused, not read
as its last value. A model that wrote two "where" keys meant both conditions; JSON keeps
the second, the first was dropped and the query ran without it, with nothing said (p31a
Q18). Refused, the call goes back to the model with the reason, and it writes one.
"""

from __future__ import annotations

import json
from typing import Any


class UnreadableArguments(ValueError):
    """The text is not one JSON object with each key once; the message says why, plainly."""


def read_arguments(text: str) -> dict[str, Any]:
    """The JSON object in ``text``; raises ``UnreadableArguments`` (or ``RecursionError``
    for nesting deeper than Python's stack, which no honest query reaches)."""

    def once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise UnreadableArguments(
                    f'they name "{name}" twice in one object, and JSON keeps only the last; '
                    "write it once, holding both (two conditions as one where joined with and)"
                )
            seen.add(name)
        return dict(pairs)

    try:
        value = json.loads(text, object_pairs_hook=once_each)
    except json.JSONDecodeError as exc:
        raise UnreadableArguments(
            f"they are not valid JSON ({exc.msg} at position {exc.pos})"
        ) from None
    if not isinstance(value, dict):
        raise UnreadableArguments(f"they are a JSON {type(value).__name__}, not an object")
    return value


def unreadable_reason(text: str) -> str:
    """Why ``text`` was kept raw, for the model: the reason ``read_arguments`` gives."""
    try:
        read_arguments(text)
    except UnreadableArguments as exc:
        return str(exc)
    except RecursionError:
        return "they are nested too deep to read"
    return "they were sent in a form the tool cannot take"
