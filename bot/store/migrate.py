"""Alembic, configured in code: no ``alembic.ini``, no dependence on the working directory.

On SQLite the bot upgrades its database at start-up (``upgrade_schema``); on a shared server
``barb db upgrade`` does it as a deploy step and the bot only checks (``check_schema``).
Developers use the same configuration through ``python -m bot.store``.
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection
from sqlalchemy.pool import NullPool

from bot.store.engine import make_engine
from bot.store.errors import SchemaError
from bot.store.settings import PROJECT_ROOT, StoreSettings
from bot.store.transactions import WRITE_OPTION

MIGRATIONS_DIR = PROJECT_ROOT / "migrations"

# Replicas of the bot starting together on PostgreSQL queue on this lock instead of
# running the same migration twice ("barb" in ASCII; any constant would do).
_PG_MIGRATION_LOCK = 0x62617262

#: "0001", or "0007_shared_state": four digits first, in the order the changes were made.
_NUMBERED = re.compile(r"^(\d{4})(?:_\w+)?$")


def alembic_config(connection: Connection | None = None) -> Config:
    """The Alembic configuration; ``connection`` is the one ``migrations/env.py`` runs on."""
    config = Config()
    # ConfigParser reads "%" as interpolation; a path may contain one.
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    config.set_main_option("path_separator", "os")
    # Files named like the revision ids: 0001_initial.py, 0002_add_chat_timezone.py.
    config.set_main_option("file_template", "%%(rev)s_%%(slug)s")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def next_revision_id(script: ScriptDirectory) -> str:
    """ "0001", "0002"…: one numbered revision per change, in the order they were made."""
    numbers = [
        int(match.group(1))
        for rev in script.walk_revisions()
        if (match := _NUMBERED.match(rev.revision))
    ]
    return f"{max(numbers, default=0) + 1:04d}"


async def upgrade_schema(settings: StoreSettings, revision: str = "head") -> None:
    await _run_in_transaction(settings, f"upgrade to {revision}", command.upgrade, revision)


async def downgrade_schema(settings: StoreSettings, revision: str) -> None:
    await _run_in_transaction(settings, f"downgrade to {revision}", command.downgrade, revision)


async def check_schema(settings: StoreSettings) -> str:
    """The database's revision, if it is this version's head; else ``SchemaError`` saying
    to run ``barb db upgrade`` (or which version of Barb the database belongs to)."""
    head = head_revision()
    current = await current_revision(settings)
    if current == head and head is not None:
        return head
    if current is not None and current not in known_revisions():
        raise SchemaError(
            f"The database at {settings.safe_url} is at revision {current}, which this "
            f"version of Barb does not know: {newer_barb_fix()}"
        )
    state = "has no schema yet" if current is None else f"is at revision {current}, not {head}"
    raise SchemaError(f"The database at {settings.safe_url} {state}: run `barb db upgrade` first.")


def known_revisions() -> set[str]:
    """This version's revisions; a database at any other was migrated by a newer Barb."""
    return {rev.revision for rev in ScriptDirectory.from_config(alembic_config()).walk_revisions()}


def newer_barb_fix() -> str:
    """What to do with a database a newer Barb has migrated: run that version, or take the
    database back to this version's head with the newer version's `barb db downgrade`
    (only the newer code knows how to undo its own revisions)."""
    return (
        "a newer version of Barb has upgraded it: run that version, or with it run "
        f"`barb db downgrade {head_revision()}` to use this one."
    )


async def current_revision(settings: StoreSettings) -> str | None:
    engine = make_engine(settings, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(_current)
    finally:
        await engine.dispose()


def _current(connection: Connection) -> str | None:
    # Reading the revision is not news: Alembic's "Context impl …" lines are for migrations.
    migration_log = logging.getLogger("alembic.runtime.migration")
    level = migration_log.level
    migration_log.setLevel(logging.WARNING)
    try:
        return MigrationContext.configure(connection).get_current_revision()
    finally:
        migration_log.setLevel(level)


async def _run_in_transaction(
    settings: StoreSettings, what: str, alembic_command: Callable[..., Any], revision: str
) -> None:
    """Run an Alembic command in one transaction on its own short-lived connection.

    One transaction: a failed migration leaves nothing half done (SQLite and PostgreSQL
    both have transactional DDL). A writer from BEGIN: two processes starting at once on
    SQLite queue instead of both migrating.
    """
    engine = make_engine(settings, foreign_keys=False, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            await connection.execution_options(**{WRITE_OPTION: True})
            async with connection.begin():
                await connection.run_sync(_run_command, alembic_command, revision)
    except CommandError as exc:
        raise SchemaError(
            f"Cannot {what} the database at {settings.safe_url}: {exc}. If {newer_barb_fix()}"
        ) from exc
    finally:
        await engine.dispose()


def _run_command(
    connection: Connection, alembic_command: Callable[..., Any], revision: str
) -> None:
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_MIGRATION_LOCK})")
    alembic_command(alembic_config(connection), revision)
    if connection.dialect.name == "sqlite":
        # Foreign keys were off so that batch migrations could copy tables; check that
        # what they left still holds before committing it.
        broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
        if broken:
            raise SchemaError(f"the migration broke foreign keys: {broken[:5]}")


async def new_revision(message: str) -> Path:
    """Autogenerate the next numbered revision from the difference between the models and
    the schema at head; returns the new file.

    It runs against a scratch SQLite database, so it needs no running database. Read what
    it wrote before committing it: autogenerate misses CHECK constraints and renames.
    """
    with tempfile.TemporaryDirectory() as scratch:
        settings = StoreSettings(database_url=f"sqlite+aiosqlite:///{scratch}/scratch.db")
        await upgrade_schema(settings)
        engine = make_engine(settings, poolclass=NullPool)
        try:
            async with engine.connect() as connection:
                return await connection.run_sync(_autogenerate, message)
        finally:
            await engine.dispose()


def _autogenerate(connection: Connection, message: str) -> Path:
    config = alembic_config(connection)
    # Generated files are formatted like the rest of the code.
    config.set_section_option("post_write_hooks", "hooks", "ruff_fix ruff_format")
    for name, options in (("ruff_fix", "check --fix --quiet"), ("ruff_format", "format --quiet")):
        config.set_section_option("post_write_hooks", f"{name}.type", "module")
        config.set_section_option("post_write_hooks", f"{name}.module", "ruff")
        config.set_section_option(
            "post_write_hooks", f"{name}.options", f"{options} REVISION_SCRIPT_FILENAME"
        )
    rev_id = next_revision_id(ScriptDirectory.from_config(config))
    script = command.revision(config, message=message, autogenerate=True, rev_id=rev_id)
    if script is None or isinstance(script, list):
        raise SchemaError(f"Alembic did not write one revision for {message!r}: {script!r}")
    return Path(script.path)
