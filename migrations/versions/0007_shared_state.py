"""Shared state for several replicas: leases on outbox rows and on work in flight, and the
per-person limits' windows in the database.

A replica that claims an outbox row or works on a question or run records its name and a
lease expiry; another replica takes the row over only once the lease has expired (its
owner is gone). ``rate_windows`` holds the last minute of each person's questions and
/query runs, so that the limits hold whichever replica a message reaches.

Revision ID: 0007_shared_state
Revises: 0005
Create Date: 2026-11-25 04:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_shared_state"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Copied, not imported: a revision must keep doing what it did when the code moves on.
LEASED_TABLES = ("outbox", "in_flight")
OWNER_LENGTH = 64


def upgrade() -> None:
    for table in LEASED_TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("lease_owner", sa.String(OWNER_LENGTH), nullable=True))
            batch.add_column(
                sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True)
            )
    op.create_table(
        "rate_windows",
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("times", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("scope IN ('question', 'query')", name=op.f("ck_rate_windows_scope")),
        sa.PrimaryKeyConstraint("scope", "user_id", name=op.f("pk_rate_windows")),
    )
    op.create_index(
        op.f("ix_rate_windows_updated_at"), "rate_windows", ["updated_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_rate_windows_updated_at"), table_name="rate_windows")
    op.drop_table("rate_windows")
    for table in reversed(LEASED_TABLES):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("lease_expires_at")
            batch.drop_column("lease_owner")
