"""Store fixtures: a fresh SQLite file per test, and a clock the test moves by hand."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from store_fixtures import SETTINGS_ENV, FakeClock, sqlite_settings

from bot.store import Store, StoreSettings, open_store


@pytest.fixture(autouse=True)
def _no_store_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SETTINGS_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    # A folder that does not exist yet: opening the store creates it.
    return tmp_path / "state" / "barb.db"


@pytest.fixture
def settings(db_path: Path) -> StoreSettings:
    return sqlite_settings(db_path)


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
