"""Each forum topic of a group is a conversation of its own.

The transcript was read per chat: in a forum group a question in topic 88 was asked with
topic 77's question and answer as history, and with topic 77's last data as the "those" of a
follow-up (p46ac #6). ``messages.thread_id`` keeps the topic a question was asked in, and
the history and the last data are read per (chat, topic). Rows stored before have none: they
stay the conversation outside topics (General), as they were.

Revision ID: 0011_topic_conversations
Revises: 0010_stopped_work
Create Date: 2026-12-02 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_topic_conversations"
down_revision: str | Sequence[str] | None = "0010_stopped_work"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("thread_id", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("thread_id")
