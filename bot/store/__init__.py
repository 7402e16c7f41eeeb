"""The bot's state: chats, preferences, transcript, pending actions, usage, updates, outbox,
work in flight.

SQLAlchemy 2 async behind a small repository API (``Store``); SQLite (WAL) by default,
PostgreSQL for several replicas. ``open_store`` migrates a SQLite database with Alembic
first, and checks that a PostgreSQL one was migrated (``barb db upgrade``).
"""

from bot.store.db import open_store
from bot.store.errors import SchemaError, StoreError, UnknownChat, WorkStopped
from bot.store.records import (
    Chat,
    ChatSettings,
    ChatType,
    Claim,
    FinalStatus,
    InFlight,
    NewMessage,
    NewReply,
    OutgoingReply,
    PendingAction,
    PendingKind,
    PendingStatus,
    Placed,
    Preference,
    ReplyKind,
    ReplyStatus,
    Role,
    StoredMessage,
    UsageLine,
    UsageTotals,
    WorkKind,
    new_question_id,
)
from bot.store.repository import Store
from bot.store.settings import StoreSettings
from bot.store.transactions import Clock

__all__ = [
    "Chat",
    "ChatSettings",
    "ChatType",
    "Claim",
    "Clock",
    "FinalStatus",
    "InFlight",
    "NewMessage",
    "NewReply",
    "OutgoingReply",
    "PendingAction",
    "PendingKind",
    "PendingStatus",
    "Placed",
    "Preference",
    "ReplyKind",
    "ReplyStatus",
    "Role",
    "SchemaError",
    "Store",
    "StoreError",
    "StoreSettings",
    "StoredMessage",
    "UnknownChat",
    "UsageLine",
    "UsageTotals",
    "WorkKind",
    "WorkStopped",
    "new_question_id",
    "open_store",
]
