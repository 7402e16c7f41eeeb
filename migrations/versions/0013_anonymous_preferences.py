"""The preferences stored under Telegram's GroupAnonymousBot are deleted.

Every anonymous admin of every group writes as GroupAnonymousBot (user 1087968824), and
what one of them had Barb remember ("only RTH") was stored under that id: it went into the
prompts of every group's anonymous admins, and nobody could see or forget it (a group's
/settings lists no preferences, and no private chat is 1087968824's). An anonymous admin
now asks as the group (``update_context.asker_of``), so those rows are nobody's: Barb
would never read them again, and they are deleted. A downgrade cannot bring them back.

Revision ID: 0013_anonymous_preferences
Revises: 0012_answered_work
Create Date: 2026-12-04 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_anonymous_preferences"
down_revision: str | Sequence[str] | None = "0012_answered_work"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Telegram's account every anonymous group admin writes as.
GROUP_ANONYMOUS_BOT = 1087968824


def upgrade() -> None:
    preferences = sa.table("preferences", sa.column("user_id", sa.BigInteger()))
    op.execute(preferences.delete().where(preferences.c.user_id == GROUP_ANONYMOUS_BOT))


def downgrade() -> None:
    """Nothing to undo: the deleted rows were nobody's."""
