"""Errors of the store, for the developer (and the operator at start-up)."""

from __future__ import annotations

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
