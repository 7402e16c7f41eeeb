"""Replies can be held: stored with the answer, sent only when the person asks for them.

An answer's CSV is offered behind a button instead of sent with every answer (one Bot API
request fewer per answer under Telegram's flood limit); it waits in the outbox as ``held``.
Downgrade drops held replies (never asked for, so nothing the person has seen).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 01:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Copied, not imported: a revision must keep doing what it did when the code moves on.
BEFORE = ("queued", "sent", "failed")
AFTER = (*BEFORE, "held")


def _allow(statuses: tuple[str, ...]) -> None:
    allowed = ", ".join(f"'{status}'" for status in statuses)
    with op.batch_alter_table("outbox") as batch:
        batch.drop_constraint(op.f("ck_outbox_status"), type_="check")
        batch.create_check_constraint(op.f("ck_outbox_status"), f"status IN ({allowed})")


def upgrade() -> None:
    _allow(AFTER)


def downgrade() -> None:
    outbox = sa.table("outbox", sa.column("status", sa.String))
    op.get_bind().execute(outbox.delete().where(outbox.c.status == "held"))
    _allow(BEFORE)
