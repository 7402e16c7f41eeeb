"""SQLite runs the way the store relies on: WAL, foreign keys, a busy timeout, UTC."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.dialects.sqlite import dialect as sqlite_dialect
from store_fixtures import PRIVATE_CHAT, FakeClock, sqlite_settings

from bot.store import NewMessage, Store, StoreSettings, new_question_id, open_store
from bot.store.db import make_engine
from bot.store.schema import UtcDateTime


@pytest.fixture
def backend() -> str:
    """This module is about SQLite alone."""
    return "sqlite"


async def _pragma(settings: StoreSettings, name: str) -> object:
    engine = make_engine(settings)
    try:
        async with engine.connect() as connection:
            return (await connection.exec_driver_sql(f"PRAGMA {name}")).scalar()
    finally:
        await engine.dispose()


async def test_wal_mode_is_on(store: Store, settings: StoreSettings, db_path: Path) -> None:
    assert await _pragma(settings, "journal_mode") == "wal"
    # WAL is a property of the file: any other process opening it uses it too.
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_foreign_keys_and_busy_timeout(tmp_path: Path) -> None:
    settings = sqlite_settings(tmp_path / "x.db", sqlite_busy_timeout_ms=1234)

    assert await _pragma(settings, "foreign_keys") == 1
    assert await _pragma(settings, "busy_timeout") == 1234


async def test_the_state_folder_is_created(tmp_path: Path) -> None:
    path = tmp_path / "var" / "deep" / "barb.db"
    store = await open_store(sqlite_settings(path))
    await store.close()

    assert path.is_file()


async def test_deleting_a_chat_takes_its_rows_along(store: Store, settings: StoreSettings) -> None:
    await store.chats.ensure(PRIVATE_CHAT, "private")
    await store.transcript.append(
        PRIVATE_CHAT, new_question_id(), [NewMessage(role="user", payload={"text": "hi"})]
    )
    engine = make_engine(settings)
    try:
        async with engine.begin() as connection:
            await connection.execute(text("DELETE FROM chats"))
            remaining = await connection.execute(text("SELECT count(*) FROM messages"))
            assert remaining.scalar() == 0
    finally:
        await engine.dispose()


async def test_timestamps_are_aware_utc(store: Store, clock: FakeClock) -> None:
    chat = await store.chats.ensure(PRIVATE_CHAT, "private")
    assert chat.created_at.utcoffset() is not None
    assert chat.created_at == clock.now

    clock.now = datetime(2025, 3, 14, 12, 0)  # naive: a bug in the caller's clock
    with pytest.raises(ValueError, match="aware"):
        await store.chats.set_instrument(PRIVATE_CHAT, "ES")


def test_the_column_type_refuses_naive_datetimes() -> None:
    # The second line of defence, behind the repositories' clock check.
    with pytest.raises(ValueError, match="naive datetime"):
        UtcDateTime().process_bind_param(datetime(2025, 1, 1), dialect=sqlite_dialect())
