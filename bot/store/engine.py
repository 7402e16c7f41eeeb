"""The engine for a database URL, and SQLite's connection settings.

Any SQLAlchemy async URL works. SQLite gets WAL mode, foreign keys, a busy timeout and
explicit transactions through connection events; the repositories use portable SQL only.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import URL, Connection, event, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bot.store.settings import StoreSettings
from bot.store.transactions import READ_OPTION, WRITE_OPTION

# NaN and infinity are refused when a row is written, not later by PostgreSQL's json type
# (SQLite would take them); non-ASCII text stays readable in the database.
_dump_json = partial(json.dumps, allow_nan=False, ensure_ascii=False)


def make_engine(
    settings: StoreSettings, *, foreign_keys: bool = True, **engine_options: Any
) -> AsyncEngine:
    """An async engine for ``settings.database_url``; SQLite files get their folder created.

    ``foreign_keys=False`` is for migrations only: SQLite's batch mode rebuilds a table by
    copying it, which enforced foreign keys would turn into cascading deletes.
    """
    url = make_url(settings.database_url)
    if url.get_backend_name() == "sqlite":
        _create_folder(url)
    if url.get_backend_name() != "sqlite":
        # A server restarted (or failed over) leaves every pooled connection dead: each is
        # tested when taken from the pool and replaced, instead of failing one request each.
        engine_options.setdefault("pool_pre_ping", True)
    engine = create_async_engine(
        url, echo=settings.echo_sql, json_serializer=_dump_json, **engine_options
    )
    if engine.dialect.name == "sqlite":
        _configure_sqlite(
            engine, busy_timeout_ms=settings.sqlite_busy_timeout_ms, foreign_keys=foreign_keys
        )
    return engine


def _create_folder(url: URL) -> None:
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return
    Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)


def _configure_sqlite(engine: AsyncEngine, *, busy_timeout_ms: int, foreign_keys: bool) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from the sqlite3 module, whose legacy mode starts no
        # transaction for SELECT or DDL (reads would not be repeatable, and a failed
        # migration would stay half applied); "begin" below emits BEGIN instead.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            # First, so that the statements below wait for another connection too.
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            # WAL: readers never block the writer nor each other. It is a property of the
            # file, so this also converts an existing database.
            cursor.execute("PRAGMA journal_mode=WAL")
            # In WAL mode NORMAL loses no committed transaction when the process crashes,
            # only (at worst) the last ones on a power cut, and saves an fsync per commit.
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
        finally:
            cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Connection) -> None:
        # A writer takes the write lock at BEGIN and so waits (busy_timeout) for another
        # writer; a deferred transaction that upgrades to writing could fail at once instead.
        # Other transactions stay deferred, so in WAL mode they never wait; a one-statement
        # read needs none (the statement is its own snapshot).
        options = connection.get_execution_options()
        if options.get(READ_OPTION, False):
            return
        connection.exec_driver_sql("BEGIN IMMEDIATE" if options.get(WRITE_OPTION) else "BEGIN")
