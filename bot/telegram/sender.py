"""Sending a reply: proof (photo + CSV), commentary, plan with buttons. Stored before sent."""

from __future__ import annotations

from typing import Any

from telegram import Bot, InlineKeyboardMarkup, Message
from telegram.constants import ParseMode

from bot.assistant.replies import Proof, Reply
from bot.store.repository import Store
from bot.telegram import keyboards
from bot.telegram.render import answer_html, caption, plan_html
from bot.texts import t


class Sender:
    """Every message goes through the outbox: stored, then sent, then marked sent."""

    def __init__(self, bot: Bot, store: Store):
        self.bot = bot
        self.store = store

    async def text(
        self,
        chat_id: int,
        html_text: str,
        *,
        markup: InlineKeyboardMarkup | None = None,
        question_id: str | None = None,
        reply_to: int | None = None,
    ) -> Message:
        payload = {"text": html_text, "parse_mode": "HTML"}
        queued = await self.store.outbox.enqueue(chat_id, "text", payload, question_id=question_id)
        try:
            message = await self.bot.send_message(
                chat_id,
                html_text,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
                reply_to_message_id=reply_to,
                allow_sending_without_reply=True,
            )
        except Exception as exc:
            await self.store.outbox.mark_failed(queued.id, type(exc).__name__)
            raise
        await self.store.outbox.mark_sent(queued.id, message.message_id)
        return message

    async def file(
        self,
        chat_id: int,
        kind: str,
        content: bytes,
        filename: str,
        caption_html: str | None,
        *,
        question_id: str | None = None,
    ) -> Message:
        payload: dict[str, Any] = {"filename": filename, "caption": caption_html}
        queued = await self.store.outbox.enqueue(
            chat_id,
            kind,
            payload,
            content=content,
            question_id=question_id,  # type: ignore[arg-type]
        )
        try:
            if kind == "photo":
                message = await self.bot.send_photo(
                    chat_id,
                    content,
                    caption=caption_html,
                    parse_mode=ParseMode.HTML,
                    filename=filename,
                )
            else:
                message = await self.bot.send_document(
                    chat_id,
                    content,
                    filename=filename,
                    caption=caption_html,
                    parse_mode=ParseMode.HTML,
                )
        except Exception as exc:
            await self.store.outbox.mark_failed(queued.id, type(exc).__name__)
            raise
        await self.store.outbox.mark_sent(queued.id, message.message_id)
        return message

    async def proof(self, chat_id: int, proof: Proof, question_id: str | None) -> None:
        """The chart as a photo and the CSV as a document: two messages (albums can't mix)."""
        first_line = proof.summary_text.splitlines()[0] if proof.summary_text else ""
        lines = [first_line, *proof.plan.splitlines()[:4]]
        if proof.chart_png and proof.chart_name:
            await self.file(
                chat_id,
                "photo",
                proof.chart_png,
                proof.chart_name,
                caption(lines),
                question_id=question_id,
            )
        if proof.csv and proof.csv_name:
            rows = f"{proof.rows:,} rows" if proof.rows else ""
            await self.file(
                chat_id,
                "document",
                proof.csv,
                proof.csv_name,
                caption([rows]) or None,
                question_id=question_id,
            )

    async def reply(self, chat_id: int, reply: Reply, *, reply_to: int | None = None) -> None:
        lang = reply.language
        for proof in reply.proofs:
            await self.proof(chat_id, proof, reply.question_id)
        if reply.text:
            chunks = answer_html(reply.text)
            for i, chunk in enumerate(chunks):
                last = i == len(chunks) - 1
                markup = (
                    keyboards.show_query(reply.question_id, lang)
                    if last and reply.proofs and reply.question_id
                    else None
                )
                await self.text(
                    chat_id,
                    chunk,
                    markup=markup,
                    question_id=reply.question_id,
                    reply_to=reply_to if i == 0 else None,
                )
        pending = reply.pending
        if pending is None:
            return
        if pending.kind == "confirm":
            parts = plan_html(pending.text, t("plan_header", lang), pending.plan or "")
            markup = keyboards.confirm(pending.id, lang)
        else:
            parts = [pending.text]
            markup = keyboards.options(pending.id, pending.options) if pending.options else None
        message = None
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            message = await self.text(
                chat_id, part, markup=markup if last else None, question_id=reply.question_id
            )
        if message is not None:
            await self.store.pending.set_message(pending.id, message.message_id)
