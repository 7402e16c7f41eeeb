"""The tables, as SQLAlchemy ORM models. Internal to ``bot.store``: nothing outside sees them.

Alembic's revisions in ``migrations/versions`` create exactly this schema; a test compares the
two after upgrading, so a change here without a revision fails the suite.

Portable on purpose: the types are ones SQLite and PostgreSQL both have (integer ids are
BIGINT on PostgreSQL, SQLite's INTEGER rowid alias there), and every timestamp is stored
and returned in UTC.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Date,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from bot.store.records import (
    ALBUM_ID_LENGTH,
    LEASE_OWNER_LENGTH,
    PENDING_ID_LENGTH,
    QUESTION_ID_LENGTH,
    ChatType,
    LimitScope,
    PendingKind,
    PendingStatus,
    PreferenceKind,
    ReplyKind,
    ReplyStatus,
    Role,
    RunOutcome,
    WorkKind,
    values_of,
)

# Named constraints, so that later migrations can drop or alter them by name (SQLite's
# batch mode needs names to recreate a table).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

#: An auto-incrementing id: BIGINT where the transcript may grow large, SQLite's rowid there.
AutoId = BigInteger().with_variant(Integer(), "sqlite")


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every database.

    SQLite keeps no offset and hands back naive values; PostgreSQL hands back the session's
    zone. Both come back as aware UTC, and a naive datetime is refused on the way in rather
    than guessed at.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: the store keeps aware UTC timestamps")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class PlainText(TypeDecorator[str]):
    """Text without NUL characters, which PostgreSQL's text cannot hold (SQLite's can).

    A NUL in free text (a model's note, an error message) carries no meaning; dropping it
    keeps the row instead of failing the write on one database and not the other.
    """

    impl = Text()
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else value.replace("\x00", "")


def _one_of(column: str, literal: Any) -> CheckConstraint:
    allowed = ", ".join(f"'{value}'" for value in values_of(literal))
    return CheckConstraint(f"{column} IN ({allowed})", name=column)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {  # noqa: RUF012 - SQLAlchemy reads it from the class
        datetime: UtcDateTime(),
        date: Date(),
        int: BigInteger(),
        str: PlainText(),
        # A None in Python is SQL NULL, not the JSON text "null", so IS NULL finds it.
        dict[str, Any]: JSON(none_as_null=True),
    }


class ChatRow(Base):
    __tablename__ = "chats"
    __table_args__ = (
        _one_of("type", ChatType),
        # The few groups that moved, read by every sending pass (``moves_of``).
        Index(
            "ix_chats_moved_to",
            "moved_to",
            postgresql_where=text("moved_to IS NOT NULL"),
            sqlite_where=text("moved_to IS NOT NULL"),
        ),
    )

    #: Telegram's chat id (negative for groups; beyond 32 bits).
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    type: Mapped[str] = mapped_column(String(16))
    instrument: Mapped[str] = mapped_column(String(16))
    settings: Mapped[dict[str, Any]]
    language: Mapped[str | None] = mapped_column(String(8))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    #: The supergroup this group became (``ChatRepository.migrate``): a replica that did
    #: not see Telegram say so learns it here (``ChatRepository.moves_of``).
    moved_to: Mapped[int | None]


class PreferenceRow(Base):
    __tablename__ = "preferences"
    __table_args__ = (
        Index("ix_preferences_user_id_id", "user_id", "id"),
        _one_of("kind", PreferenceKind),
    )

    id: Mapped[int] = mapped_column(AutoId, primary_key=True)
    #: A person, not a chat: what they said in one chat holds in every chat.
    user_id: Mapped[int]
    kind: Mapped[str] = mapped_column(String(16))
    text: Mapped[str]
    created_at: Mapped[datetime]


class MessageRow(Base):
    __tablename__ = "messages"
    __table_args__ = (
        _one_of("role", Role),
        # "The last N questions of a chat" groups by question and orders by id.
        Index("ix_messages_chat_id_question_id_id", "chat_id", "question_id", "id"),
        # "The last rows of a chat", e.g. the last data shown.
        Index("ix_messages_chat_id_id", "chat_id", "id"),
    )

    id: Mapped[int] = mapped_column(AutoId, primary_key=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id", ondelete="CASCADE"))
    #: The forum topic the question was asked in; NULL outside topics (General, private
    #: chats). Each topic is a conversation of its own.
    thread_id: Mapped[int | None]
    question_id: Mapped[str] = mapped_column(String(QUESTION_ID_LENGTH))
    user_id: Mapped[int | None]
    role: Mapped[str] = mapped_column(String(16))
    payload: Mapped[dict[str, Any]]
    model_summary: Mapped[str | None]
    data: Mapped[dict[str, Any] | None]
    created_at: Mapped[datetime]


class PendingActionRow(Base):
    __tablename__ = "pending_actions"
    __table_args__ = (
        _one_of("kind", PendingKind),
        _one_of("status", PendingStatus),
        # Declining a chat's open actions when a new message arrives.
        Index("ix_pending_actions_chat_id_status", "chat_id", "status"),
        # Expiring old open actions across all chats.
        Index("ix_pending_actions_status_created_at", "status", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(PENDING_ID_LENGTH), primary_key=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id", ondelete="CASCADE"))
    user_id: Mapped[int]
    kind: Mapped[str] = mapped_column(String(16))
    payload: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(16))
    message_id: Mapped[int | None]
    created_at: Mapped[datetime]
    resolved_at: Mapped[datetime | None]


class UsageRow(Base):
    """Counters per UTC day, chat, person and model, incremented in place.

    No foreign key to ``chats``: what was spent stays on the books even if a chat is removed.
    Cost is kept in millionths of a dollar so that many small increments add up exactly.
    """

    __tablename__ = "usage"
    __table_args__ = (Index("ix_usage_day_user_id", "day", "user_id"),)

    # Key order serves "a day", "a day and a chat" and the upsert's conflict target.
    day: Mapped[date] = mapped_column(primary_key=True)
    chat_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    user_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    model: Mapped[str] = mapped_column(String(128), primary_key=True)
    input_tokens: Mapped[int]
    output_tokens: Mapped[int]
    cache_read_tokens: Mapped[int]
    cache_write_tokens: Mapped[int]
    cost_micro_usd: Mapped[int]
    calls: Mapped[int]
    #: Calls of a model without a known price: their cost is not in ``cost_micro_usd``.
    unpriced_calls: Mapped[int] = mapped_column(server_default="0")


class ReceivedUpdateRow(Base):
    """Telegram updates as received: stored before Telegram is told they arrived, handled
    once (the primary key refuses a redelivery), marked handled when their handlers end or
    their work is recorded in flight."""

    __tablename__ = "received_updates"

    update_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    #: The update's JSON as Telegram sent it, to handle it after a restart; NULL once handled
    #: (and for the ids carried over from before it was kept).
    payload: Mapped[dict[str, Any] | None]
    received_at: Mapped[datetime] = mapped_column(index=True)
    handled_at: Mapped[datetime | None] = mapped_column(index=True)
    #: The replica that stored it and will handle it, renewed while it lives; expired (or
    #: NULL, stored before replicas had names) and not handled: another replica takes it.
    lease_owner: Mapped[str | None] = mapped_column(String(LEASE_OWNER_LENGTH))
    lease_expires_at: Mapped[datetime | None]


class OutboxRow(Base):
    __tablename__ = "outbox"
    __table_args__ = (
        _one_of("kind", ReplyKind),
        _one_of("status", ReplyStatus),
        Index("ix_outbox_status_chat_id_id", "status", "chat_id", "id"),
    )

    id: Mapped[int] = mapped_column(AutoId, primary_key=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id", ondelete="CASCADE"))
    question_id: Mapped[str | None] = mapped_column(String(QUESTION_ID_LENGTH))
    #: The work in flight (``InFlightRow.id``) it answers, when one: which question of the
    #: chat it answers, in the order they were asked (no key: the work's row goes with it).
    answers_work: Mapped[int | None] = mapped_column(AutoId)
    kind: Mapped[str] = mapped_column(String(16))
    payload: Mapped[dict[str, Any]]
    content: Mapped[bytes | None] = mapped_column(LargeBinary)
    status: Mapped[str] = mapped_column(String(16))
    telegram_message_id: Mapped[int | None]
    error: Mapped[str | None]
    created_at: Mapped[datetime]
    sent_at: Mapped[datetime | None]
    #: The replica sending it, until ``lease_expires_at``; after that anyone may claim it.
    lease_owner: Mapped[str | None] = mapped_column(String(LEASE_OWNER_LENGTH))
    lease_expires_at: Mapped[datetime | None]


class InFlightRow(Base):
    """Questions and runs begun and not yet answered. A question's row goes when its reply is
    stored; a run's is marked answered then, and goes once its plan message says so."""

    __tablename__ = "in_flight"
    __table_args__ = (_one_of("kind", WorkKind), _one_of("outcome", RunOutcome))

    id: Mapped[int] = mapped_column(AutoId, primary_key=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id", ondelete="CASCADE"))
    user_id: Mapped[int]
    kind: Mapped[str] = mapped_column(String(16))
    payload: Mapped[dict[str, Any]]
    attempts: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime]
    answered_at: Mapped[datetime | None]
    outcome: Mapped[str | None] = mapped_column(String(16))
    #: The replica working on it, renewed while it works; expired: the replica is gone.
    lease_owner: Mapped[str | None] = mapped_column(String(LEASE_OWNER_LENGTH))
    lease_expires_at: Mapped[datetime | None]
    #: A question /cancel or /reset stopped on a replica that does not hold it: the holder
    #: stops its turn and stores no reply (``InFlightRepository.stop_elsewhere``).
    stopped_at: Mapped[datetime | None]


class RateWindowRow(Base):
    """A person's recent questions (or /query runs) for the per-minute limit, shared by
    every replica: the times, in seconds since the epoch, of those within the last minute."""

    __tablename__ = "rate_windows"
    __table_args__ = (_one_of("scope", LimitScope),)

    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    user_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    times: Mapped[list[float]] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(index=True)


class AlbumCaptionRow(Base):
    """The caption of a recent album of files (sent together), which Telegram puts on its
    first file only: each later file of the album is read with it, whichever replica
    handles it and after a restart (``AlbumCaptionRepository``)."""

    __tablename__ = "album_captions"

    chat_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    media_group_id: Mapped[str] = mapped_column(String(ALBUM_ID_LENGTH), primary_key=True)
    caption: Mapped[str]
    created_at: Mapped[datetime] = mapped_column(index=True)


metadata = Base.metadata
