"""The real loop, engine and storage, driven by the scripted provider."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.assistant.orchestrator import Assistant, AssistantSettings
from bot.llm.scripted import ScriptedProvider
from bot.pool.runner import InlineRunner
from bot.store.db import open_store
from bot.store.repository import Store
from bot.store.settings import StoreSettings


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'barb.db'}"


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    opened = await open_store(StoreSettings(database_url=db_url))
    yield opened
    await opened.close()


@pytest.fixture
def make_assistant(store: Store, sample_settings) -> Callable[..., Assistant]:
    """An Assistant on the real engine (sample data), store and an inline query runner."""

    def build(*turns, settings: AssistantSettings | None = None, **kwargs) -> Assistant:
        provider = ScriptedProvider(turns, **kwargs)
        return Assistant(
            provider,
            store,
            InlineRunner(),
            settings=settings or AssistantSettings(),
            engine_settings=sample_settings,
        )

    return build
