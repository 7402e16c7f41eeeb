"""The captions of albums of files, kept in the database.

An album's caption (Telegram puts it on the first file only) was kept in the bot's memory:
a restart between the album's files, or another replica handling a later file, read that
file without it. ``album_captions`` holds each recent album's caption per chat.

Revision ID: 0016_album_captions
Revises: 0015_chat_moves_index
Create Date: 2026-11-29 02:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_album_captions"
down_revision: str | Sequence[str] | None = "0015_chat_moves_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Copied, not imported: a revision must keep doing what it did when the code moves on.
ALBUM_ID_LENGTH = 64


def upgrade() -> None:
    op.create_table(
        "album_captions",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("media_group_id", sa.String(length=ALBUM_ID_LENGTH), nullable=False),
        sa.Column("caption", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("chat_id", "media_group_id", name=op.f("pk_album_captions")),
    )
    op.create_index(
        op.f("ix_album_captions_created_at"), "album_captions", ["created_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_album_captions_created_at"), table_name="album_captions")
    op.drop_table("album_captions")
