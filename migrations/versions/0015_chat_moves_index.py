"""The groups that moved, found by an index of their own.

Every sending pass reads the moves (``ChatRepository.moves_of``): all of them, not those of
the chats it is about to flush, whose number can pass a statement's bound parameters after
a long outage (r47e #2). Moves are rare (a group is upgraded once in its life), so a
partial index on ``chats.moved_to`` holds only them and the read does not scan every chat.

Revision ID: 0015_chat_moves_index
Revises: 0014_chat_moves
Create Date: 2026-12-04 11:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_chat_moves_index"
down_revision: str | Sequence[str] | None = "0014_chat_moves"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MOVED = sa.text("moved_to IS NOT NULL")


def upgrade() -> None:
    op.create_index(
        "ix_chats_moved_to", "chats", ["moved_to"], postgresql_where=MOVED, sqlite_where=MOVED
    )


def downgrade() -> None:
    op.drop_index("ix_chats_moved_to", table_name="chats")
