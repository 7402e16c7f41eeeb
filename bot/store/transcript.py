"""The transcript: every message of a chat, grouped by the question it belongs to.

Each forum topic of a group is a conversation of its own (``thread_id``; ``None`` outside
topics): a question in one topic is asked with that topic's earlier questions and last data,
never another topic's.

A row's ``payload`` is the provider-neutral message as the assistant serialised it; the
store neither reads nor changes it. ``data`` is what the person saw, so that "of those, which
were the most volatile?" can be answered from the last data shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy import ColumnElement, Select, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.store.records import QUESTION_ID_LENGTH, NewMessage, StoredMessage
from bot.store.schema import MessageRow
from bot.store.transactions import Clock, Repository, rowcount

#: Batches of one prune: past this, the rest waits for the next pass (an hour later).
PRUNE_BATCHES = 20
#: Chats trimmed to their last questions per pass.
PRUNE_CHATS = 100


def _conversation(chat_id: int, thread_id: int | None) -> ColumnElement[bool]:
    """The rows of one conversation: the chat's, in forum topic ``thread_id`` (``None``: not
    in a topic)."""
    in_thread = (
        MessageRow.thread_id.is_(None) if thread_id is None else MessageRow.thread_id == thread_id
    )
    return (MessageRow.chat_id == chat_id) & in_thread


def _asked_by(chat_id: int, user_id: int) -> Select[tuple[str]]:
    """The ids of the questions ``user_id`` asked in the chat. Only a question's first
    (user) row carries who asked; the rest share its id."""
    return select(MessageRow.question_id).where(
        MessageRow.chat_id == chat_id, MessageRow.user_id == user_id
    )


class TranscriptRepository(Repository):
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        clock: Clock,
        *,
        keep_questions: int = 200,
        keep_for: timedelta = timedelta(days=90),
        batch: int = 500,
    ) -> None:
        super().__init__(sessions, clock)
        #: Retention (``prune``): a chat's last questions, asked within ``keep_for``.
        self.keep_questions = keep_questions
        self.keep_for = keep_for
        self.batch = batch

    async def append(
        self,
        chat_id: int,
        question_id: str,
        messages: Sequence[NewMessage],
        *,
        thread_id: int | None = None,
    ) -> list[StoredMessage]:
        """Add the rows of one question, in order, in one transaction; ``thread_id``: the
        forum topic it was asked in."""
        if not 0 < len(question_id) <= QUESTION_ID_LENGTH:
            raise ValueError(f"a question id has 1 to {QUESTION_ID_LENGTH} characters")
        now = self._now()
        async with self._write_for_chat(chat_id) as session:
            rows = [
                MessageRow(
                    chat_id=chat_id,
                    thread_id=thread_id,
                    question_id=question_id,
                    user_id=message.user_id,
                    role=message.role,
                    payload=message.payload,
                    model_summary=message.model_summary,
                    data=message.data,
                    created_at=now,
                )
                for message in messages
            ]
            session.add_all(rows)
            await session.flush()
            return [StoredMessage.model_validate(row) for row in rows]

    async def recent(
        self,
        chat_id: int,
        questions: int,
        *,
        thread_id: int | None = None,
        user_id: int | None = None,
    ) -> list[StoredMessage]:
        """The rows of the conversation's last ``questions`` questions, oldest first: the
        chat's, in forum topic ``thread_id`` (``None``: not in a topic); with ``user_id``,
        only the questions that person asked.

        A question is recent by its latest row, so one resumed after a confirmation counts
        from when it was answered.
        """
        if questions <= 0:
            return []
        condition = _conversation(chat_id, thread_id)
        if user_id is not None:
            condition = condition & MessageRow.question_id.in_(_asked_by(chat_id, user_id))
        latest = (
            select(MessageRow.question_id)
            .where(condition)
            .group_by(MessageRow.question_id)
            .order_by(func.max(MessageRow.id).desc())
            .limit(questions)
        )
        async with self._read() as session:
            rows = await session.scalars(
                select(MessageRow)
                .where(MessageRow.chat_id == chat_id, MessageRow.question_id.in_(latest))
                .order_by(MessageRow.id)
            )
            return [StoredMessage.model_validate(row) for row in rows]

    async def question(self, chat_id: int, question_id: str) -> list[StoredMessage]:
        """The rows of one question, oldest first (e.g. to resume it after a confirmation)."""
        async with self._read() as session:
            rows = await session.scalars(
                select(MessageRow)
                .where(MessageRow.chat_id == chat_id, MessageRow.question_id == question_id)
                .order_by(MessageRow.id)
            )
            return [StoredMessage.model_validate(row) for row in rows]

    async def last_data(
        self, chat_id: int, *, thread_id: int | None = None, user_id: int | None = None
    ) -> StoredMessage | None:
        """The latest row of the conversation (the chat's, in forum topic ``thread_id``)
        that showed the person data (for "of those…" follow-ups); with ``user_id``, of a
        question that person asked (a group member's "and for ES?" follows their own)."""
        condition = _conversation(chat_id, thread_id) & MessageRow.data.is_not(None)
        if user_id is not None:
            condition = condition & MessageRow.question_id.in_(_asked_by(chat_id, user_id))
        async with self._read() as session:
            row = await session.scalar(
                select(MessageRow).where(condition).order_by(MessageRow.id.desc()).limit(1)
            )
            return None if row is None else StoredMessage.model_validate(row)

    async def forget_question(self, chat_id: int, question_id: str) -> int:
        """Remove one question's rows: its answer was never shown (a /cancel stopped it on
        its way out), so the next question must not be asked as if it had been. The rows
        removed."""
        condition = (MessageRow.chat_id == chat_id) & (MessageRow.question_id == question_id)
        async with self._write_for_chat(chat_id) as session:
            result = await session.execute(
                delete(MessageRow).where(condition),
                execution_options={"synchronize_session": False},
            )
            return rowcount(result)

    async def clear(self, chat_id: int, *, user_id: int | None = None) -> int:
        """Forget the chat's conversation (/reset); its settings and usage stay. With
        ``user_id``, only the questions that person asked, with their answers (a group
        member's /reset leaves the others' questions alone)."""
        condition = MessageRow.chat_id == chat_id
        if user_id is not None:
            condition = condition & MessageRow.question_id.in_(_asked_by(chat_id, user_id))
        async with self._write() as session:
            result = await session.execute(
                delete(MessageRow).where(condition),
                execution_options={"synchronize_session": False},
            )
            return rowcount(result)

    async def prune(self) -> int:
        """Retention: each chat keeps its last ``keep_questions`` questions asked within
        ``keep_for``; the rest go, whole (a question with its answer and data). The rows
        removed. Without it the table grew for ever, every chat's every answer's data.

        Bounded work: at most ``PRUNE_BATCHES`` short transactions of ``batch`` questions
        each, other writers served between them (the write gate serves the bot's own work
        first); whatever is left goes in the next pass. Old rows are found from the
        table's start (ids grow with time): a pass with nothing old reads ``batch`` rows."""
        removed = 0
        for _ in range(PRUNE_BATCHES):
            cutoff = self._now() - self.keep_for
            oldest = select(MessageRow.id, MessageRow.created_at).order_by(MessageRow.id)
            async with self._read() as session:
                old = list(await session.execute(oldest.limit(self.batch)))
            ids = [row_id for row_id, created in old if created < cutoff]
            if not ids:
                break
            async with self._read() as session:
                questions = set(
                    await session.execute(
                        select(MessageRow.chat_id, MessageRow.question_id)
                        .where(MessageRow.id.in_(ids))
                        .distinct()
                    )
                )
            removed += await self._remove(list(questions))
            await asyncio.sleep(0)  # the bot's own work first
            if len(ids) < self.batch:
                break
        return removed + await self._prune_counts()

    async def _prune_counts(self) -> int:
        """Chats past ``keep_questions`` questions lose their oldest ones."""
        over = (
            select(MessageRow.chat_id)
            .group_by(MessageRow.chat_id)
            .having(func.count(func.distinct(MessageRow.question_id)) > self.keep_questions)
            .limit(PRUNE_CHATS)
        )
        async with self._read() as session:
            chats = list(await session.scalars(over))
        removed, batches = 0, 0
        for chat_id in chats:
            while batches < PRUNE_BATCHES:
                older = (
                    select(MessageRow.question_id)
                    .where(MessageRow.chat_id == chat_id)
                    .group_by(MessageRow.question_id)
                    .order_by(func.max(MessageRow.id).desc())
                    .offset(self.keep_questions)
                    .limit(self.batch)
                )
                async with self._read() as session:
                    questions = [(chat_id, q) for q in await session.scalars(older)]
                if not questions:
                    break
                removed += await self._remove(questions)
                batches += 1
                await asyncio.sleep(0)
        return removed

    async def _remove(self, questions: Sequence[tuple[int, str]]) -> int:
        """Delete the rows of these (chat, question) pairs, in one transaction."""
        removed = 0
        by_chat: dict[int, list[str]] = {}
        for chat_id, question_id in questions:
            by_chat.setdefault(chat_id, []).append(question_id)
        async with self._write() as session:
            for chat_id, ids in by_chat.items():
                result = await session.execute(
                    delete(MessageRow).where(
                        MessageRow.chat_id == chat_id, MessageRow.question_id.in_(ids)
                    ),
                    execution_options={"synchronize_session": False},
                )
                removed += rowcount(result)
        return removed
