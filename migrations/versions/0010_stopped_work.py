"""A question in flight can be stopped by a replica that does not hold it.

/cancel and /reset stop the person's question the model is thinking about. The turn lives
in the process that holds the question; with several replicas the /cancel may reach
another one (HAProxy moved the chat), which found nothing to stop, said "There is no plan
waiting to be cancelled.", and the plan came anyway (p46n #3). That replica now sets
``in_flight.stopped_at``; the holder stops the turn when it reads it, and refuses to store
the reply of a stopped question.

Revision ID: 0010_stopped_work
Revises: 0009_run_outcomes
Create Date: 2026-11-30 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_stopped_work"
down_revision: str | Sequence[str] | None = "0009_run_outcomes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("in_flight") as batch:
        batch.add_column(sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("in_flight") as batch:
        batch.drop_column("stopped_at")
