"""Store fixtures: every store test runs twice, on a fresh SQLite file and on a fresh database
of a real PostgreSQL server (``postgres_server``, started once per session by the suite's
conftest from ``tests/servers/postgres.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from servers.postgres import PostgresServer
from store_fixtures import SETTINGS_ENV, FakeClock, sqlite_settings

from bot.store import Store, StoreSettings, open_store
from bot.store.migrate import upgrade_schema

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(autouse=True)
def _no_store_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SETTINGS_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    # A folder that does not exist yet: opening the store creates it.
    return tmp_path / "state" / "barb.db"


@pytest.fixture
async def blank_settings(
    backend: str, db_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[StoreSettings]:
    """An empty database: no tables, no Alembic revision."""
    if backend == "sqlite":
        yield sqlite_settings(db_path)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    name = await server.create_database()
    try:
        yield postgres_settings(server, name)
    finally:
        await server.drop_database(name)


@pytest.fixture
async def settings(
    backend: str, db_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[StoreSettings]:
    """A database ready for ``open_store``: SQLite migrates itself when opened; PostgreSQL
    is migrated beforehand, as ``barb db upgrade`` does in a deployment (here: copied from
    a database migrated once per session, which is much quicker)."""
    if backend == "sqlite":
        yield sqlite_settings(db_path)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    if server.name not in _MIGRATED:
        template = await server.create_database()
        await upgrade_schema(postgres_settings(server, template))
        _MIGRATED[server.name] = template
    name = await server.create_database(template=_MIGRATED[server.name])
    try:
        yield postgres_settings(server, name)
    finally:
        await server.drop_database(name)


#: Per server: the database migrated to head that the others are copied from.
_MIGRATED: dict[str, str] = {}


def postgres_settings(server: PostgresServer, database: str, **overrides: object) -> StoreSettings:
    return StoreSettings(
        _env_file=None,  # type: ignore[call-arg]  # pydantic-settings' init-only option
        database_url=server.url(database),
        **overrides,  # type: ignore[arg-type]
    )


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2025, 3, 14, 21, 30, tzinfo=UTC))


@pytest.fixture
async def store(settings: StoreSettings, clock: FakeClock) -> AsyncIterator[Store]:
    opened = await open_store(settings, clock=clock)
    try:
        yield opened
    finally:
        await opened.close()
