"""Sending a reply: proof (photo + CSV), commentary, plan with buttons. Stored before sent.

Every message goes through the outbox: the messages of a reply are stored together, then
each is sent and marked sent. Telegram's answers decide what happens to one that fails:

- flood control (``RetryAfter``) and network trouble are waited out and retried a few
  times; if Telegram is still unreachable the message stays queued, and ``flush`` sends it
  later (at start-up and every minute while the bot runs), so an answer that cost a query
  and a model call is not lost;
- a refusal (the person blocked the bot, the chat is gone, a bad request) will not change
  by retrying: the message is marked failed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from telegram import Bot, InlineKeyboardMarkup, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest, NetworkError, RetryAfter

from barb.summary_text import count_text
from bot.assistant.replies import Proof, Reply
from bot.store import NewReply, OutgoingReply
from bot.store.repository import Store
from bot.telegram import keyboards
from bot.telegram.render import answer_html, caption, plan_html
from bot.texts import t

log = logging.getLogger(__name__)


class NotDelivered(Exception):
    """Telegram could not be reached in time: the message is still queued."""


@dataclass(frozen=True)
class Patience:
    """How long one message is retried before it is left queued for a later flush."""

    attempts: int = 4
    backoff_s: tuple[float, ...] = (1.0, 2.0, 4.0)
    #: A RetryAfter longer than this leaves the message queued instead of holding the chat.
    max_wait_s: float = 30.0


def text_reply(
    html_text: str,
    *,
    markup: InlineKeyboardMarkup | None = None,
    reply_to: int | None = None,
    pending_id: str | None = None,
) -> NewReply:
    """A text message; the buttons are stored with it so that a later flush sends them too."""
    payload: dict[str, Any] = {"text": html_text, "parse_mode": ParseMode.HTML.value}
    if markup is not None:
        payload["reply_markup"] = markup.to_dict()
    if reply_to is not None:
        payload["reply_to"] = reply_to
    if pending_id is not None:
        payload["pending_id"] = pending_id
    return NewReply(kind="text", payload=payload)


def file_reply(kind: str, content: bytes, filename: str, caption_html: str | None) -> NewReply:
    payload = {"filename": filename, "caption": caption_html}
    return NewReply(kind=kind, payload=payload, content=content)  # type: ignore[arg-type]


def proof_replies(proof: Proof) -> list[NewReply]:
    """The chart as a photo and the CSV as a document: two messages (albums can't mix)."""
    first_line = proof.summary_text.splitlines()[0] if proof.summary_text else ""
    replies = []
    if proof.chart_png and proof.chart_name:
        # The headline: the number the chart proves, in the person's language, one line.
        lines = [proof.headline or first_line, *proof.plan.splitlines()[:4]]
        replies.append(file_reply("photo", proof.chart_png, proof.chart_name, caption(lines)))
    if proof.csv and proof.csv_name:
        rows = count_text(proof.rows, "row") if proof.rows else ""
        replies.append(file_reply("document", proof.csv, proof.csv_name, caption([rows]) or None))
    return replies


def reply_messages(reply: Reply, reply_to: int | None = None) -> list[NewReply]:
    """Every message of a reply, in the order the person should see them."""
    lang = reply.language
    messages = [m for proof in reply.proofs for m in proof_replies(proof)]
    if reply.text:
        chunks = answer_html(reply.text)
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            markup = (
                keyboards.show_query(reply.question_id, lang)
                if last and reply.proofs and reply.question_id
                else None
            )
            messages.append(text_reply(chunk, markup=markup, reply_to=reply_to if i == 0 else None))
    pending = reply.pending
    if pending is not None:
        if pending.kind == "confirm":
            parts = plan_html(pending.text, t("plan_header", lang), pending.plan or "")
            markup = keyboards.confirm(pending.id, lang)
        else:
            parts = [pending.text]
            markup = keyboards.options(pending.id, pending.options) if pending.options else None
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            messages.append(
                text_reply(
                    part,
                    markup=markup if last else None,
                    pending_id=pending.id if last else None,
                )
            )
    return messages


class Sender:
    def __init__(self, bot: Bot, store: Store, patience: Patience | None = None):
        self.bot = bot
        self.store = store
        self.patience = patience or Patience()

    async def text(
        self, chat_id: int, html_text: str, *, markup: InlineKeyboardMarkup | None = None
    ) -> int:
        """Send one HTML message; its Telegram message id."""
        [queued] = await self.store.outbox.enqueue_many(
            chat_id, [text_reply(html_text, markup=markup)]
        )
        return await self.deliver(queued)

    async def reply(self, chat_id: int, reply: Reply, *, reply_to: int | None = None) -> None:
        """Store all of a reply's messages, then send them in order.

        Those Telegram took are marked sent together once the others are sent or have
        failed: one write for the reply rather than one per message (a crash between two
        messages of a reply may send the first again; a duplicate beats a lost answer).
        """
        queued = await self.store.outbox.enqueue_many(
            chat_id, reply_messages(reply, reply_to), question_id=reply.question_id
        )
        sent: dict[int, Message] = {}
        refused: Exception | None = None
        try:
            for message in queued:
                try:
                    sent[message.id] = await self._send(message)
                except NotDelivered:
                    raise  # the rest waits its turn, in order
                except Exception as exc:  # this one is refused; the others may still go
                    refused = refused or exc
        finally:
            await self._record_sent(queued, sent)
        if refused is not None:
            raise refused

    async def flush(self, chat_id: int | None = None, older_than: timedelta | None = None) -> int:
        """Send what is still queued (of one chat, or all); the number of messages sent.

        A chat whose next message cannot be delivered is left for the next flush, so its
        messages never arrive out of order.
        """
        sent = 0
        stuck: set[int] = set()
        for message in await self.store.outbox.unsent(chat_id, older_than=older_than):
            if message.chat_id in stuck:
                continue
            try:
                await self.deliver(message)
                sent += 1
            except NotDelivered:
                stuck.add(message.chat_id)
            except Exception:  # refused for good: already marked failed, the next one may go
                log.warning("queued reply %s to chat %s refused", message.id, message.chat_id)
        return sent

    async def deliver(self, queued: OutgoingReply) -> int:
        """Send a stored message and mark it sent; its Telegram message id."""
        message = await self._send(queued)
        await self._record_sent([queued], {queued.id: message})
        return message.message_id

    async def _send(self, queued: OutgoingReply) -> Message:
        """Send a stored message, retried through flood control and network trouble; marked
        failed when Telegram refuses it."""
        send = self._call(queued)
        for attempt in range(self.patience.attempts):
            try:
                return await send()
            except RetryAfter as exc:
                wait = exc.retry_after
                seconds = wait.total_seconds() if isinstance(wait, timedelta) else float(wait)
                if seconds > self.patience.max_wait_s:
                    raise NotDelivered(f"flood control: retry after {seconds:.0f}s") from exc
                delay = seconds
            except BadRequest as exc:  # a NetworkError to PTB, but retrying will not help
                await self.store.outbox.mark_failed(queued.id, f"BadRequest: {exc}")
                raise
            except NetworkError:  # TimedOut included
                delay = self.patience.backoff_s[min(attempt, len(self.patience.backoff_s) - 1)]
            except Exception as exc:  # Forbidden (blocked), chat gone, …: final
                await self.store.outbox.mark_failed(queued.id, f"{type(exc).__name__}: {exc}")
                raise
            if attempt < self.patience.attempts - 1:
                log.info("reply %s to chat %s: retrying in %.1fs", queued.id, queued.chat_id, delay)
                await asyncio.sleep(delay)
        raise NotDelivered(f"reply {queued.id} to chat {queued.chat_id} is still queued")

    async def _record_sent(self, queued: list[OutgoingReply], sent: dict[int, Message]) -> None:
        if not sent:
            return
        await self.store.outbox.mark_sent({i: m.message_id for i, m in sent.items()})
        for message in queued:
            pending_id = message.payload.get("pending_id")
            if pending_id and message.id in sent:
                await self.store.pending.set_message(pending_id, sent[message.id].message_id)

    def _call(self, queued: OutgoingReply) -> Callable[[], Awaitable[Message]]:
        """The Bot API call that sends ``queued``, ready to be retried."""
        payload = queued.payload
        chat_id = queued.chat_id
        if queued.kind == "text":
            markup = payload.get("reply_markup")
            return lambda: self.bot.send_message(
                chat_id,
                payload["text"],
                parse_mode=payload.get("parse_mode"),
                reply_markup=InlineKeyboardMarkup.de_json(markup, self.bot) if markup else None,
                reply_to_message_id=payload.get("reply_to"),
                allow_sending_without_reply=True,
            )
        assert queued.content is not None, "a queued file keeps its bytes until it is sent"
        content = queued.content
        send_file = self.bot.send_photo if queued.kind == "photo" else self.bot.send_document
        return lambda: send_file(
            chat_id,
            content,
            caption=payload.get("caption"),
            parse_mode=ParseMode.HTML,
            filename=payload["filename"],
        )
