"""Usage counts the model calls that had no price, so that /usage says "price unknown"
rather than passing their cost off as $0.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25 01:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Calls recorded before this revision cannot be told apart: counted as priced, as they
    # were shown until now.
    with op.batch_alter_table("usage") as batch:
        batch.add_column(
            sa.Column("unpriced_calls", sa.BigInteger(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("usage") as batch:
        batch.drop_column("unpriced_calls")
