"""Turning replies into Telegram messages: escaped HTML, split under Telegram's limits."""

from __future__ import annotations

import html
import json
from typing import Any

MESSAGE_LIMIT = 4096
CAPTION_LIMIT = 1024
# Below the limit: HTML tags added around a chunk must not push it over.
CHUNK = 3900


def escape(text: str) -> str:
    return html.escape(text, quote=False)


def split_text(text: str, limit: int = CHUNK) -> list[str]:
    """Chunks under ``limit`` characters, cut at paragraph, line or word boundaries."""
    chunks: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        cut = max(
            rest.rfind("\n\n", 0, limit), rest.rfind("\n", 0, limit), rest.rfind(" ", 0, limit)
        )
        if cut <= limit // 2:
            cut = limit
        chunks.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        chunks.append(rest)
    return chunks


def answer_html(text: str) -> list[str]:
    """The model's commentary, escaped (it is plain text to us), in sendable pieces."""
    return [escape(chunk) for chunk in split_text(text)]


def caption(lines: list[str]) -> str:
    """A photo caption within 1024 characters (escaped, cut with an ellipsis if needed)."""
    text = "\n".join(lines)
    if len(text) > CAPTION_LIMIT - 2:
        text = text[: CAPTION_LIMIT - 2].rstrip() + "…"
    return escape(text)


def plan_html(explanation: str, plan_header: str, plan: str) -> list[str]:
    body = f"{escape(explanation)}\n\n<b>{escape(plan_header)}</b>\n{escape(plan)}".strip()
    return split_text(body) if len(body) > CHUNK else [body]


def query_html(header: str, query: dict[str, Any], plan: str | None) -> str:
    code = escape(json.dumps(query, ensure_ascii=False, indent=1))
    text = f"{escape(header)}\n<pre>{code}</pre>"
    if plan:
        text += f"\n{escape(plan)}"
    return text[:MESSAGE_LIMIT]
