"""A group's row names the supergroup it became.

A group upgraded to a supergroup gets a new id; ``ChatRepository.migrate`` moves its rows
there, done by the replica that got Telegram's service message. The other replicas knew
the move only once Telegram told them too, and meanwhile one's sending pass over the
supergroup did not wait for an answer still going out under the group's lock (r47a #1).
``chats.moved_to`` keeps the move for every replica to read. Groups moved before have none.

Revision ID: 0014_chat_moves
Revises: 0013_anonymous_preferences
Create Date: 2026-12-04 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_chat_moves"
down_revision: str | Sequence[str] | None = "0013_anonymous_preferences"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("chats") as batch:
        batch.add_column(sa.Column("moved_to", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chats") as batch:
        batch.drop_column("moved_to")
