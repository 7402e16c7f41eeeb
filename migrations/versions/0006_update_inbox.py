"""Updates are stored before Telegram is told they arrived; Cancel and /query are work in flight.

``received_updates`` replaces ``processed_updates``: each update Barb receives is stored, with
its raw JSON, in the transaction that precedes the ``getUpdates`` (or the webhook's 200) that
confirms it to Telegram, and marked handled once its handlers end or its work is recorded in
flight. An update stored and not handled (a kill in between) is handled at the next start.
The ids already processed are kept, as handled, so that a redelivery is still refused.

``in_flight.kind`` also allows ``cancel`` (the model wording a cancellation) and ``query``
(a ``/query`` running). Downgrade drops those rows (their replies are lost, as before) and
the unhandled updates' JSON.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 03:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Copied, not imported: a revision must keep doing what it did when the code moves on.
KINDS_BEFORE = ("question", "run")
KINDS_AFTER = (*KINDS_BEFORE, "cancel", "query")


def _allow_kinds(kinds: tuple[str, ...]) -> None:
    allowed = ", ".join(f"'{kind}'" for kind in kinds)
    with op.batch_alter_table("in_flight") as batch:
        batch.drop_constraint(op.f("ck_in_flight_kind"), type_="check")
        batch.create_check_constraint(op.f("ck_in_flight_kind"), f"kind IN ({allowed})")


def upgrade() -> None:
    op.create_table(
        "received_updates",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("payload", sa.JSON(), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("handled_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_received_updates")),
    )
    op.create_index(op.f("ix_received_updates_received_at"), "received_updates", ["received_at"])
    op.create_index(op.f("ix_received_updates_handled_at"), "received_updates", ["handled_at"])
    op.execute(
        "INSERT INTO received_updates (update_id, payload, received_at, handled_at) "
        "SELECT update_id, NULL, received_at, received_at FROM processed_updates"
    )
    op.drop_table("processed_updates")
    _allow_kinds(KINDS_AFTER)


def downgrade() -> None:
    in_flight = sa.table("in_flight", sa.column("kind", sa.String))
    op.get_bind().execute(in_flight.delete().where(in_flight.c.kind.notin_(KINDS_BEFORE)))
    _allow_kinds(KINDS_BEFORE)
    op.create_table(
        "processed_updates",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_processed_updates")),
    )
    op.create_index(op.f("ix_processed_updates_received_at"), "processed_updates", ["received_at"])
    # Only the handled ones: an unhandled update was never processed under the old scheme.
    op.execute(
        "INSERT INTO processed_updates (update_id, received_at) "
        "SELECT update_id, received_at FROM received_updates WHERE handled_at IS NOT NULL"
    )
    op.drop_table("received_updates")
