"""A select item read back: its function and its bare column arguments
(``percentile(gap, 90) as p90`` -> ``percentile``, (``gap``, None))."""

from __future__ import annotations

import re

# A select item: its function and what is between its parentheses.
_CALL = re.compile(r"^\s*(?P<func>[A-Za-z_]\w*)\s*\((?P<args>.*)\)", re.DOTALL)
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def parse_call(text: str) -> tuple[str, tuple[str | None, ...]]:
    """``percentile(gap, 90) as p90`` -> (``percentile``, (``gap``, None))."""
    func, parts = call_args(text)
    return func, tuple(p if _NAME.match(p) else None for p in parts)


def call_args(text: str) -> tuple[str, list[str]]:
    """``arg_max(hour(), high) as h`` -> (``arg_max``, [``hour()``, ``high``])."""
    text = re.split(r"\s+as\s+", text, flags=re.IGNORECASE)[0]
    match = _CALL.match(text)
    if not match or not _one_call(match.group("args")):
        return "", []
    return match.group("func").lower(), [p.strip() for p in _split_args(match.group("args"))]


def _one_call(args: str) -> bool:
    """Whether the parentheses matched are one call's: ``correlation(x, y) * std(x) /
    std(y)`` is arithmetic on three calls (a beta), not a correlation of ``x`` and ``y) *
    std(x) / std(y``."""
    depth = 0
    for ch in args:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


def _split_args(text: str) -> list[str]:
    """Arguments split at top-level commas (``f(a, b), c`` -> two)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]
