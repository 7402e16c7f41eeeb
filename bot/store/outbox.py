"""Replies stored before they are sent.

The assistant enqueues a reply, the sender sends it and marks it sent. If the process dies
in between, the reply is still queued at start-up and is sent then: an answer that cost a
query and a model call is not lost to a restart. (It may be sent twice if the process died
after Telegram accepted it but before ``mark_sent``; a duplicate beats a lost answer.)
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select, update

from bot.store.errors import UnknownChat
from bot.store.records import OutgoingReply, ReplyKind, json_object
from bot.store.schema import ChatRow, OutboxRow
from bot.store.transactions import Repository, rowcount

_NO_SYNC = {"synchronize_session": False}
MAX_ERROR_CHARS = 500


class OutboxRepository(Repository):
    async def enqueue(
        self,
        chat_id: int,
        kind: ReplyKind,
        payload: Mapping[str, Any],
        *,
        content: bytes | None = None,
        question_id: str | None = None,
    ) -> OutgoingReply:
        """Queue a reply: ``payload`` holds text and parse mode, or caption and file name;
        ``content`` the bytes of a photo or document."""
        if kind != "text" and content is None:
            raise ValueError(f"a {kind} reply needs its content")
        stored_payload = json_object(payload, "payload")
        async with self._write() as session:
            if await session.get(ChatRow, chat_id) is None:
                raise UnknownChat(chat_id)
            row = OutboxRow(
                chat_id=chat_id,
                question_id=question_id,
                kind=kind,
                payload=stored_payload,
                content=content,
                status="queued",
                telegram_message_id=None,
                error=None,
                created_at=self._now(),
                sent_at=None,
            )
            session.add(row)
            await session.flush()
            return OutgoingReply.model_validate(row)

    async def unsent(self, chat_id: int | None = None) -> list[OutgoingReply]:
        """Queued replies in the order they were queued; all chats if ``chat_id`` is None
        (at start-up)."""
        query = select(OutboxRow).where(OutboxRow.status == "queued")
        if chat_id is not None:
            query = query.where(OutboxRow.chat_id == chat_id)
        async with self._read() as session:
            rows = await session.scalars(query.order_by(OutboxRow.id))
            return [OutgoingReply.model_validate(row) for row in rows]

    async def mark_sent(self, reply_id: int, telegram_message_id: int | None) -> bool:
        """Telegram accepted it. The file's bytes are dropped: they are in the chat now."""
        async with self._write() as session:
            result = await session.execute(
                update(OutboxRow)
                .where(OutboxRow.id == reply_id, OutboxRow.status == "queued")
                .values(
                    status="sent",
                    telegram_message_id=telegram_message_id,
                    content=None,
                    sent_at=self._now(),
                ),
                execution_options=_NO_SYNC,
            )
            return rowcount(result) == 1

    async def mark_failed(self, reply_id: int, error: str) -> bool:
        """Telegram refused it for good (blocked by the person, chat gone): stop trying."""
        async with self._write() as session:
            result = await session.execute(
                update(OutboxRow)
                .where(OutboxRow.id == reply_id, OutboxRow.status == "queued")
                .values(status="failed", error=error[:MAX_ERROR_CHARS]),
                execution_options=_NO_SYNC,
            )
            return rowcount(result) == 1

    async def prune(self, older_than: timedelta) -> int:
        """Delete sent and failed replies queued more than ``older_than`` ago."""
        cutoff = self._now() - older_than
        async with self._write() as session:
            result = await session.execute(
                delete(OutboxRow).where(
                    OutboxRow.status.in_(("sent", "failed")), OutboxRow.created_at < cutoff
                ),
                execution_options=_NO_SYNC,
            )
            return rowcount(result)
