"""The Alembic revisions and the models describe the same schema, both ways, on SQLite and
on PostgreSQL; who migrates (the bot on SQLite, `barb db upgrade` on a server)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from click.testing import CliRunner
from sqlalchemy import CheckConstraint, Connection, inspect, text
from sqlalchemy.pool import NullPool

from bot.db_cli import db
from bot.store import SchemaError, StoreSettings, open_store
from bot.store.db import make_engine
from bot.store.migrate import (
    MIGRATIONS_DIR,
    alembic_config,
    current_revision,
    downgrade_schema,
    head_revision,
    next_revision_id,
    upgrade_schema,
)
from bot.store.schema import metadata


@pytest.fixture
def settings(blank_settings: StoreSettings) -> StoreSettings:
    """Every test here starts from an empty database."""
    return blank_settings


async def _on_connection(settings: StoreSettings, fn: Any) -> Any:
    engine = make_engine(settings, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(fn)
    finally:
        await engine.dispose()


def _differences(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, metadata))


def _tables(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


def _normalised(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip()


def _allowed(sql: str) -> tuple[str, frozenset[str]]:
    """A CHECK's column and quoted values, however the database rewrote it (PostgreSQL
    reflects ``x IN ('a', 'b')`` as ``x::text = ANY (ARRAY['a'::character varying, …])``)."""
    column = re.match(r"\(*(\w+)", sql)
    return (column.group(1) if column else "", frozenset(re.findall(r"'([^']*)'", sql)))


Checks = dict[str, set[tuple[str, tuple[str, frozenset[str]]]]]


def _reflected_checks(connection: Connection) -> Checks:
    inspector = inspect(connection)
    return {
        table: {
            (check["name"], _allowed(_normalised(check["sqltext"])))
            for check in inspector.get_check_constraints(table)
        }
        for table in metadata.tables
    }


def _model_checks(connection: Connection) -> Checks:
    checks: Checks = {}
    for name, table in metadata.tables.items():
        checks[name] = set()
        for constraint in table.constraints:
            if isinstance(constraint, CheckConstraint):
                sqltext = constraint.sqltext.compile(dialect=connection.dialect)
                checks[name].add((str(constraint.name), _allowed(_normalised(str(sqltext)))))
    return checks


async def test_models_and_migrations_agree(settings: StoreSettings) -> None:
    await upgrade_schema(settings)

    assert await _on_connection(settings, _differences) == []


async def test_check_constraints_match_the_models(settings: StoreSettings) -> None:
    # Autogenerate does not compare CHECK constraints; this does.
    await upgrade_schema(settings)

    reflected = await _on_connection(settings, _reflected_checks)
    expected = await _on_connection(settings, _model_checks)

    assert reflected == expected
    assert (
        "ck_pending_actions_status",
        ("status", frozenset({"pending", "running", "done", "cancelled", "declined", "expired"})),
    ) in reflected["pending_actions"]


async def test_downgrade_to_base_and_upgrade_again(settings: StoreSettings) -> None:
    await upgrade_schema(settings)
    assert await current_revision(settings) == head_revision()

    await downgrade_schema(settings, "base")
    assert await current_revision(settings) is None
    assert await _on_connection(settings, _tables) == {"alembic_version"}

    await upgrade_schema(settings)
    assert await current_revision(settings) == head_revision()
    assert await _on_connection(settings, _differences) == []


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_sqlite_is_migrated_to_head_when_opened(settings: StoreSettings) -> None:
    for _ in range(2):  # and opening it again changes nothing
        store = await open_store(settings)
        await store.close()

    assert await current_revision(settings) == head_revision()
    assert await _on_connection(settings, _tables) >= {
        "chats",
        "preferences",
        "messages",
        "pending_actions",
        "usage",
        "received_updates",
        "outbox",
        "in_flight",
        "rate_windows",
    }


@pytest.mark.parametrize("backend", ["postgresql"])
async def test_a_server_database_is_not_migrated_by_the_bot(settings: StoreSettings) -> None:
    with pytest.raises(SchemaError, match=r"has no schema yet: run `barb db upgrade` first"):
        await open_store(settings)
    assert await _on_connection(settings, _tables) == set()

    await upgrade_schema(settings, "0004")
    with pytest.raises(SchemaError, match=r"is at revision 0004, not .*barb db upgrade"):
        await open_store(settings)

    await upgrade_schema(settings)
    await upgrade_schema(settings)  # a second deploy step changes nothing
    store = await open_store(settings)
    await store.close()
    assert await current_revision(settings) == head_revision()


async def test_a_database_from_a_newer_barb_is_refused_with_the_fix(
    settings: StoreSettings,
) -> None:
    await upgrade_schema(settings)

    async def stamp_unknown() -> None:
        engine = make_engine(settings, poolclass=NullPool)
        try:
            async with engine.begin() as connection:
                await connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
        finally:
            await engine.dispose()

    await stamp_unknown()

    # The fix is a documented command: this version's head, undone to by the newer Barb.
    fix = rf"9999.*newer version.*`barb db downgrade {head_revision()}`"
    with pytest.raises(SchemaError, match=fix):
        await open_store(settings)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_barb_db_downgrade_hands_the_database_to_an_older_barb(settings: StoreSettings) -> None:
    env = {"BARB_DATABASE_URL": settings.database_url}
    runner = CliRunner()
    assert runner.invoke(db, ["upgrade"], env=env).exit_code == 0
    older = "0008_update_owners"

    result = runner.invoke(db, ["downgrade", older], env=env)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith(f"at revision {older}")
    current = runner.invoke(db, ["current"], env=env)
    assert current.exit_code == 1
    assert f"at revision {older}, this version's head is {head_revision()}" in current.stdout


def test_revisions_are_numbered_in_order() -> None:
    script = ScriptDirectory.from_config(alembic_config())
    revisions = list(reversed(list(script.walk_revisions())))

    numbers = [int(rev.revision[:4]) for rev in revisions]
    assert numbers[0] == 1 and numbers == sorted(set(numbers))
    for rev in revisions:
        assert re.fullmatch(r"\d{4}(_\w+)?", rev.revision)
        assert rev.path is not None
        name = rev.path.removeprefix(str(MIGRATIONS_DIR / "versions") + "/")
        assert name == f"{rev.revision}.py" or name.startswith(f"{rev.revision}_")
    assert next_revision_id(script) == f"{numbers[-1] + 1:04d}"
