"""Updates received carry their owner: the replica that stored them, and a lease expiry.

With several replicas on one database, the start-up pass that handles updates stored and not
handled took those another live replica was handling (a duplicate answer), and an update
stored by a replica that died for good was handled by nobody. Each update now records the
replica that stored it and a lease that replica renews while it lives, as work in flight
does: a replica replays its own and those whose lease expired. Rows stored before have no
owner and count as expired.

Revision ID: 0008_update_owners
Revises: 0007_shared_state
Create Date: 2026-11-25 04:45:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_update_owners"
down_revision: str | Sequence[str] | None = "0007_shared_state"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Copied, not imported: a revision must keep doing what it did when the code moves on.
OWNER_LENGTH = 64


def upgrade() -> None:
    with op.batch_alter_table("received_updates") as batch:
        batch.add_column(sa.Column("lease_owner", sa.String(OWNER_LENGTH), nullable=True))
        batch.add_column(sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("received_updates") as batch:
        batch.drop_column("lease_expires_at")
        batch.drop_column("lease_owner")
