"""Turning replies into Telegram messages: the model's Markdown as HTML, our own text
escaped, everything split under Telegram's limits without cutting a tag."""

from __future__ import annotations

import html
import json
from typing import Any

from bot.telegram.markdown import Piece, blocks, join, render, split, utf16_len

MESSAGE_LIMIT = 4096
CAPTION_LIMIT = 1024
#: Room kept in a plan's last message for the status line its edits add ("⏵ Running…").
STATUS_ROOM = 96


def escape(text: str) -> str:
    return html.escape(text, quote=False)


def answer_html(markdown: str) -> list[str]:
    """The model's commentary (Markdown) as HTML messages, cut between blocks."""
    return render(markdown, MESSAGE_LIMIT)


def headed_answer_html(headlines: list[str], markdown: str) -> list[str]:
    """Answer messages with no chart above them: the headlines (each number in one bold
    line, as a chart's caption starts), then the model's commentary (Markdown)."""
    head: list[Piece] = []
    for line in headlines:
        if head:
            head.append(Piece("text", "\n"))
        head += [Piece("open", "<b>", "</b>"), Piece("text", line), Piece("close", "</b>")]
    return join([head, *blocks(markdown)] if head else blocks(markdown), MESSAGE_LIMIT)


def answer_caption(headline: str, markdown: str) -> str | None:
    """An answer's photo caption: the headline (the number, one line, in bold), then the
    model's commentary; None when the two do not fit in one caption."""
    head = f"<b>{escape(headline)}</b>\n\n" if headline else ""
    # Telegram counts what is shown, tags parsed away, in UTF-16 units (as ``render`` does).
    room = CAPTION_LIMIT - (utf16_len(headline) + 2 if headline else 0)
    if room <= 0:
        return None
    rendered = render(markdown, room)
    return head + rendered[0] if len(rendered) == 1 else None


def caption(lines: list[str], limit: int = CAPTION_LIMIT) -> str:
    """Our own lines as a photo caption within ``limit`` characters (cut with an ellipsis)."""
    text = "\n".join(line for line in lines if line)
    if utf16_len(escape(text)) <= limit:
        return escape(text)
    if limit < 2:  # no room for a letter and the ellipsis
        return ""
    text = text[:limit]
    while text and utf16_len(escape(text)) > limit - 1:
        text = text[:-1]
    return escape(text.rstrip() + "…")


def titled_caption(headline: str, lines: list[str]) -> str:
    """A chart's caption of our own lines: the headline in bold, as an answer's caption
    starts, then ``lines`` (the plan), all within the caption's limit."""
    if not headline:
        return caption(lines)
    head = caption([headline])
    rest = caption(lines, CAPTION_LIMIT - utf16_len(head) - 1)
    return f"<b>{head}</b>" + (f"\n{rest}" if rest else "")


def plan_html(explanation: str, plan_header: str, plan: str) -> list[str]:
    """The model's explanation (Markdown), then the plan under a bold header, in messages
    short enough for the last one to take a status line later; cut between paragraphs, as
    the commentary is (``answer_html``)."""
    plan_block = [
        Piece("open", "<b>", "</b>"),
        Piece("text", plan_header),
        Piece("close", "</b>"),
        Piece("text", f"\n{plan}"),
    ]
    return join([*blocks(explanation), plan_block], MESSAGE_LIMIT - STATUS_ROOM)


def query_html(header: str, query: dict[str, Any], plan: str | None) -> list[str]:
    """The query as it ran, in a ``<pre>`` block; a long one in several messages, each
    with its ``<pre>`` closed and opened again."""
    code = json.dumps(query, ensure_ascii=False, indent=1)
    pieces = [
        Piece("text", f"{header}\n"),
        Piece("open", '<pre><code class="language-json">', "</code></pre>"),
        Piece("text", code),
        Piece("close", "</code></pre>"),
    ]
    if plan:
        pieces.append(Piece("text", f"\n{plan}"))
    return split(pieces, MESSAGE_LIMIT)
