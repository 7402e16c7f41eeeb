"""The base of every repository: one session and one transaction per call.

A repository method opens a session, does its work in one transaction and returns records;
no session or ORM object leaves it. Writes announce themselves (``_write``) so that on
SQLite the transaction takes the write lock at BEGIN (see ``bot.store.engine``): a
transaction that read first and upgraded to a writer later could fail at once with
"database is locked" instead of waiting its turn.

Reads (``_read``) are single statements, and on SQLite they run without a BEGIN of their
own: in WAL mode one statement already reads one consistent snapshot, and every statement
costs several round trips to aiosqlite's thread (a read with BEGIN took eight, five
without). A read that needs several statements to agree must be written as one statement.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, Result, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.store.errors import UnknownChat
from bot.store.schema import ChatRow
from bot.work_order import PriorityGate

#: Returns the current time, aware; injected so that tests can cross a UTC midnight.
Clock = Callable[[], datetime]

#: Execution option that marks a transaction as a writer (BEGIN IMMEDIATE on SQLite).
WRITE_OPTION = "barb_write"
#: Execution option that marks a one-statement read (no BEGIN on SQLite).
READ_OPTION = "barb_read"


def utc_now() -> datetime:
    return datetime.now(UTC)


def rowcount(result: Result[Any]) -> int:
    """Rows matched by an UPDATE or DELETE (``Session.execute`` types them as plain Results)."""
    return cast(CursorResult[Any], result).rowcount


async def in_line(session: AsyncSession, lock_class: int, key: int) -> None:
    """Wait for the other transactions holding ``key`` of ``lock_class`` to commit
    (PostgreSQL: a transaction-level advisory lock; SQLite's write lock already puts every
    writer in line). Keys past 31 bits share a lock with others: they only wait for each
    other."""
    if session.get_bind().dialect.name == "postgresql":
        held = {"cls": lock_class, "key": key % 2**31}
        await session.execute(text("SELECT pg_advisory_xact_lock(:cls, :key)"), held)


class Repository:
    #: On SQLite, one writer at a time inside this process: writers queue in the event loop,
    #: in ``bot.work_order``'s order, instead of in SQLite's busy handler, whose sleeps (1, 2,
    #: 5 … 100 ms) under many chats cost more than the writes. Set by the Store; else None.
    write_gate: PriorityGate | None = None

    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self._sessions = sessions
        self._clock = clock

    def _now(self) -> datetime:
        now = self._clock()
        if now.tzinfo is None:
            raise ValueError("the store's clock must return an aware datetime")
        return now.astimezone(UTC)

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncSession]:
        """A session for one read statement (see the module's docstring)."""
        async with self._sessions() as session, session.begin():
            await session.connection(execution_options={READ_OPTION: True})
            yield session

    @asynccontextmanager
    async def _write_for_chat(self, chat_id: int) -> AsyncIterator[AsyncSession]:
        """A write of rows that belong to a chat. The chat's foreign key checks that it is
        stored (a statement fewer than asking first); ``UnknownChat`` names it if not, since
        SQLite's error would not say which chat, and an unstored chat is the caller's bug."""
        try:
            async with self._write() as session:
                yield session
        except IntegrityError as exc:
            async with self._read() as session:
                if await session.get(ChatRow, chat_id) is not None:
                    raise
            raise UnknownChat(chat_id) from exc

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncSession]:
        gate = self.write_gate.held() if self.write_gate else contextlib.nullcontext()
        async with gate, self._sessions() as session, session.begin():
            # The first connection use starts the transaction, with the option set.
            await session.connection(execution_options={WRITE_OPTION: True})
            yield session
