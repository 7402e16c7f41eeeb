"""Initial schema: chats, preferences, transcript, pending actions, usage, updates, outbox.

Revision ID: 0001
Revises:
Create Date: 2026-11-22 15:10:42.516427
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# An auto-incrementing id: BIGINT on PostgreSQL, SQLite's INTEGER rowid alias there.
AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "chats",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("instrument", sa.String(length=16), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("language", sa.String(length=8), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "type IN ('private', 'group', 'supergroup')", name=op.f("ck_chats_type")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chats")),
    )

    op.create_table(
        "preferences",
        sa.Column("id", AUTO_ID, nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_preferences")),
    )
    op.create_index("ix_preferences_user_id_id", "preferences", ["user_id", "id"])

    op.create_table(
        "messages",
        sa.Column("id", AUTO_ID, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("question_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=True),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("model_summary", sa.Text(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("role IN ('user', 'assistant', 'tool')", name=op.f("ck_messages_role")),
        sa.ForeignKeyConstraint(
            ["chat_id"],
            ["chats.id"],
            name=op.f("fk_messages_chat_id_chats"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_messages")),
    )
    op.create_index("ix_messages_chat_id_id", "messages", ["chat_id", "id"])
    op.create_index(
        "ix_messages_chat_id_question_id_id", "messages", ["chat_id", "question_id", "id"]
    )

    op.create_table(
        "pending_actions",
        sa.Column("id", sa.String(length=16), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("kind IN ('confirm', 'clarify')", name=op.f("ck_pending_actions_kind")),
        sa.CheckConstraint(
            "status IN ('pending', 'running', 'done', 'cancelled', 'declined', 'expired')",
            name=op.f("ck_pending_actions_status"),
        ),
        sa.ForeignKeyConstraint(
            ["chat_id"],
            ["chats.id"],
            name=op.f("fk_pending_actions_chat_id_chats"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pending_actions")),
    )
    op.create_index("ix_pending_actions_chat_id_status", "pending_actions", ["chat_id", "status"])
    op.create_index(
        "ix_pending_actions_status_created_at", "pending_actions", ["status", "created_at"]
    )

    op.create_table(
        "usage",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cache_read_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cache_write_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost_micro_usd", sa.BigInteger(), nullable=False),
        sa.Column("calls", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("day", "chat_id", "user_id", "model", name=op.f("pk_usage")),
    )
    op.create_index("ix_usage_day_user_id", "usage", ["day", "user_id"])

    op.create_table(
        "processed_updates",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_processed_updates")),
    )
    op.create_index(op.f("ix_processed_updates_received_at"), "processed_updates", ["received_at"])

    op.create_table(
        "outbox",
        sa.Column("id", AUTO_ID, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("question_id", sa.String(length=32), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("telegram_message_id", sa.BigInteger(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("kind IN ('text', 'photo', 'document')", name=op.f("ck_outbox_kind")),
        sa.CheckConstraint("status IN ('queued', 'sent', 'failed')", name=op.f("ck_outbox_status")),
        sa.ForeignKeyConstraint(
            ["chat_id"],
            ["chats.id"],
            name=op.f("fk_outbox_chat_id_chats"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
    )
    op.create_index("ix_outbox_status_chat_id_id", "outbox", ["status", "chat_id", "id"])


def downgrade() -> None:
    # Children before the chats they reference; dropping a table drops its indexes.
    for table in (
        "outbox",
        "processed_updates",
        "usage",
        "pending_actions",
        "messages",
        "preferences",
        "chats",
    ):
        op.drop_table(table)
