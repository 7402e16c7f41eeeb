"""Errors of the store, for the developer (and the operator at start-up)."""

from __future__ import annotations

import sqlite3

from barb.errors import BarbError


class StoreError(BarbError):
    """Base of every error ``bot.store`` raises on purpose."""


class SchemaError(StoreError):
    """The database cannot be brought to the schema this version of Barb expects."""


class UnknownChat(StoreError):
    """A chat-scoped write for a chat that is not stored yet."""

    def __init__(self, chat_id: int) -> None:
        super().__init__(f"chat {chat_id} is not stored: call store.chats.ensure() first")
        self.chat_id = chat_id


class WorkStopped(StoreError):
    """The reply of a question a /cancel or /reset stopped on another replica: not stored.
    Example: the model on replica A has its plan ready after replica B said "Stopped: that
    question will not be answered."."""

    def __init__(self, work_id: int) -> None:
        super().__init__(f"work {work_id} was stopped: its reply is not stored")
        self.work_id = work_id


#: What SQLite says when the database itself fails a statement, not the code: another
#: process holding the write lock past the busy timeout (a ``sqlite3`` shell left in a
#: transaction, a long ``barb db`` command), a full disk, a file made read-only, a failing
#: disk. A read still answers during each of them, so ``Store.reachable`` cannot tell.
_SQLITE_FAILING = (
    "database is locked",
    "database table is locked",
    "database or disk is full",
    "attempt to write a readonly database",
    "disk i/o error",
    "unable to open database file",
)


def database_failing(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) is SQLite failing a write for a reason
    of the database's own (``_SQLITE_FAILING``), which passes when the lock is let go, the
    disk freed or the file made writable again.

    >>> database_failing(sqlite3.OperationalError("database is locked"))
    True
    >>> database_failing(sqlite3.OperationalError("no such column: x"))
    False
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sqlite3.Error):
            return str(current).lower().startswith(_SQLITE_FAILING)
        current = current.__cause__ or current.__context__
    return False
