"""Helpers shared by the store tests (imported by name: the test folders are not packages)."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import asyncpg
from sqlalchemy import make_url

from bot.store import StoreSettings

PRIVATE_CHAT = 1001
GROUP_CHAT = -100_200_300_400
ALICE = 501
BOB = 502


class FakeClock:
    """Stands still until told to move."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


#: The variables StoreSettings reads; conftest clears them so a developer's shell is ignored.
SETTINGS_ENV = tuple(f"BARB_{name.upper()}" for name in StoreSettings.model_fields)


def sqlite_settings(path: Path, **overrides: object) -> StoreSettings:
    """Settings for a SQLite file, ignoring any .env file."""
    return StoreSettings(
        _env_file=None,  # type: ignore[call-arg]  # pydantic-settings' init-only option
        database_url=f"sqlite+aiosqlite:///{path}",
        **overrides,  # type: ignore[arg-type]
    )


async def count_rows(settings: StoreSettings, table: str) -> int:
    """Rows in ``table`` as a client other than the store's sees them: the sqlite3 module on
    the file, or a plain asyncpg connection."""
    url = make_url(settings.database_url)
    if url.get_backend_name() == "sqlite":
        with sqlite3.connect(str(url.database)) as raw:
            return int(raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    connection = await asyncpg.connect(url.set(drivername="postgresql").render_as_string(False))
    try:
        return int(await connection.fetchval(f"SELECT count(*) FROM {table}"))
    finally:
        await connection.close()
