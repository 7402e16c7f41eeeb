"""A run's outcome is stored with its answer, for its plan message.

A run is marked answered when its reply is stored, and its plan message is edited next
("Done.", "Failed.", or its buttons again when it failed before anything was shown). When
that edit waited for a restart or for Telegram to come back, the outcome was gone and every
such plan said "Done.", a failed one included. ``in_flight.outcome`` keeps it. Rows answered
before have none, and say "Done." as they did.

Revision ID: 0009_run_outcomes
Revises: 0008_update_owners
Create Date: 2026-11-27 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_run_outcomes"
down_revision: str | Sequence[str] | None = "0008_update_owners"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Copied, not imported: a revision must keep doing what it did when the code moves on.
OUTCOMES = ("done", "failed", "reopened")


def upgrade() -> None:
    allowed = ", ".join(f"'{outcome}'" for outcome in OUTCOMES)
    with op.batch_alter_table("in_flight") as batch:
        batch.add_column(sa.Column("outcome", sa.String(length=16), nullable=True))
        batch.create_check_constraint(op.f("ck_in_flight_outcome"), f"outcome IN ({allowed})")


def downgrade() -> None:
    with op.batch_alter_table("in_flight") as batch:
        batch.drop_constraint(op.f("ck_in_flight_outcome"), type_="check")
        batch.drop_column("outcome")
