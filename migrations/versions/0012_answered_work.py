"""An outbox row says which work in flight it answers.

After a restart or a take-over, a question is handed back instead of asked again when the
chat has moved on: a later question of it was answered meanwhile. "Later" was read from
when the reply was stored, so the answer to the question asked just before it (stored
while it waited for the model) counted, and a question only queued behind another was
handed back as "interrupted, and later messages were answered before it" (p46ah #2).
``outbox.answers_work`` keeps the work's id, which orders the chat's questions as asked.
Rows stored before have none: they count as no later question's answer.

Revision ID: 0012_answered_work
Revises: 0011_topic_conversations
Create Date: 2026-12-03 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_answered_work"
down_revision: str | Sequence[str] | None = "0011_topic_conversations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WORK_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("answers_work", WORK_ID, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("answers_work")
