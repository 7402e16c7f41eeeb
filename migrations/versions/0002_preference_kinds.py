"""Preferences are data: each has a kind (session, instrument, timezone, language, charts,
confirmation or note); the free text saved before becomes short notes.

Until now a preference was any text up to 300 characters, pasted into later system prompts.
Each old row becomes a ``note`` if it still reads as one once normalised (whitespace
collapsed, control and format characters removed, at most ``NOTE_MAX_CHARS``); a row that
does not is deleted, and the count is logged. Notes reach the model quoted, as data.

Downgrade keeps every row, with the kind written into its text ("session: RTH").

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25 00:45:00
"""

import logging
import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")

# Copied, not imported: a revision must keep doing what it did when the code moves on.
KINDS = ("session", "instrument", "timezone", "language", "charts", "confirmation", "note")
NOTE_MAX_CHARS = 120

_preferences = sa.table(
    "preferences",
    sa.column("id", sa.Integer),
    sa.column("kind", sa.String),
    sa.column("text", sa.Text),
)


def as_note(text: str) -> str | None:
    """The text as a one-line note, or None when it is no short note."""
    printable = "".join(" " if unicodedata.category(c).startswith("C") else c for c in text)
    note = " ".join(printable.split())
    return note if 0 < len(note) <= NOTE_MAX_CHARS else None


def upgrade() -> None:
    allowed = ", ".join(f"'{kind}'" for kind in KINDS)
    with op.batch_alter_table("preferences") as batch:
        # The default only fills the existing rows; the code always names the kind.
        batch.add_column(
            sa.Column("kind", sa.String(length=16), nullable=False, server_default="note")
        )
        batch.create_check_constraint(op.f("ck_preferences_kind"), f"kind IN ({allowed})")
    with op.batch_alter_table("preferences") as batch:
        batch.alter_column("kind", server_default=None)

    connection = op.get_bind()
    dropped = 0
    for row_id, text in connection.execute(sa.select(_preferences.c.id, _preferences.c.text)):
        note = as_note(text)
        if note is None:
            dropped += 1
            connection.execute(_preferences.delete().where(_preferences.c.id == row_id))
        elif note != text:
            connection.execute(
                _preferences.update().where(_preferences.c.id == row_id).values(text=note)
            )
    if dropped:
        log.warning("Dropped %d saved preference(s) that were no short note.", dropped)


def downgrade() -> None:
    connection = op.get_bind()
    connection.execute(
        _preferences.update()
        .where(_preferences.c.kind != "note")
        .values(text=_preferences.c.kind + ": " + _preferences.c.text)
    )
    with op.batch_alter_table("preferences") as batch:
        batch.drop_constraint(op.f("ck_preferences_kind"), type_="check")
        batch.drop_column("kind")
