"""`barb db`: the database schema as a deploy step (`barb db upgrade`, `barb db current`),
and `barb db downgrade` to hand a database back to an older version of Barb.

On SQLite the bot migrates at start-up and these are optional; on PostgreSQL the bot only
checks the schema, so `barb db upgrade` runs once per deploy, before the replicas start.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Coroutine
from typing import Any, NoReturn, TypeVar

import click
from pydantic import ValidationError

from bot.startup_errors import EXIT_CANNOT_START, StartupError, bad_settings, database_failed
from bot.store.errors import SchemaError
from bot.store.migrate import (
    current_revision,
    downgrade_schema,
    head_revision,
    known_revisions,
    newer_barb_fix,
    upgrade_schema,
)
from bot.store.settings import StoreSettings

T = TypeVar("T")

#: `barb db current` on a database that is not at this version's head.
EXIT_NOT_AT_HEAD = 1


@click.group()
def db() -> None:
    """The database schema (BARB_DATABASE_URL): upgrade it, or say where it stands."""


@db.command()
@click.argument("revision", default="head")
def upgrade(revision: str) -> None:
    """Migrate the database to REVISION (default: this version's head); a no-op when it is
    there already. Prints the revision reached."""
    settings = _settings()
    # Alembic names each revision it applies, on stderr; stdout keeps the one-line result.
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    reached = _run(settings, _upgrade(settings, revision))
    click.echo(f"{settings.safe_url}: at revision {reached or 'base'}")


@db.command()
@click.argument("revision")
def downgrade(revision: str) -> None:
    """Undo the migrations after REVISION (e.g. 0008_update_owners, or base), so that an
    older version of Barb, whose head REVISION is, can run on the database. Run it with the
    version that migrated the database: only it knows how to undo its revisions. Prints the
    revision reached."""
    settings = _settings()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    reached = _run(settings, _downgrade(settings, revision))
    click.echo(f"{settings.safe_url}: at revision {reached or 'base'}")


@db.command()
def current() -> None:
    """Print the database's revision; exit status 1 if it is not this version's head."""
    settings = _settings()
    revision = _run(settings, current_revision(settings))
    head = head_revision()
    if revision == head:
        click.echo(f"{settings.safe_url}: at revision {revision} (head)")
        return
    if revision is not None and revision not in known_revisions():
        click.echo(f"{settings.safe_url}: at revision {revision}: {newer_barb_fix()}")
        sys.exit(EXIT_NOT_AT_HEAD)
    click.echo(
        f"{settings.safe_url}: at revision {revision or 'base'}, this version's head is "
        f"{head}: run `barb db upgrade`"
    )
    sys.exit(EXIT_NOT_AT_HEAD)


async def _upgrade(settings: StoreSettings, revision: str) -> str | None:
    await upgrade_schema(settings, revision)
    return await current_revision(settings)


async def _downgrade(settings: StoreSettings, revision: str) -> str | None:
    await downgrade_schema(settings, revision)
    return await current_revision(settings)


def _settings() -> StoreSettings:
    try:
        return StoreSettings()
    except ValidationError as exc:
        _fail(bad_settings(exc, StoreSettings))


def _run(settings: StoreSettings, work: Coroutine[Any, Any, T]) -> T:
    try:
        return asyncio.run(work)
    except SchemaError as exc:
        _fail(StartupError(str(exc), EXIT_CANNOT_START))
    except Exception as exc:  # unreachable server, bad credentials: one sentence, no trace
        _fail(database_failed(exc, settings.safe_url))


def _fail(error: StartupError) -> NoReturn:
    click.echo(error.sentence, err=True)
    sys.exit(error.exit_status)
