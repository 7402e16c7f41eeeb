"""Questions per person per minute: the bot's limiters count in the store, each in its own
scope, so a /query does not use up a question and the window survives a restart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.store import StoreSettings, open_store
from bot.telegram.services import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


async def test_questions_and_queries_have_their_own_windows_that_survive_a_restart(
    tmp_path: Path,
) -> None:
    clock = Clock()
    settings = StoreSettings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}")
    questions, queries = RateLimiter(per_minute=2), RateLimiter(per_minute=1, scope="query")
    store = await open_store(settings, clock=clock)
    try:
        assert await questions.check(store, 1) == 0
        assert await queries.check(store, 1) == 0  # a /query is not a question
        clock.now += timedelta(seconds=15)
        assert await questions.check(store, 1) == 0
        assert await queries.check(store, 1) == 45
    finally:
        await store.close()

    reopened = await open_store(settings, clock=clock)
    try:
        assert await questions.check(reopened, 1) == 45  # a restart forgives nothing
        assert await questions.check(reopened, 2) == 0  # someone else is not held by it
        clock.now += timedelta(seconds=45)
        assert await questions.check(reopened, 1) == 0
    finally:
        await reopened.close()
