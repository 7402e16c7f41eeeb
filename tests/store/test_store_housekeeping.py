"""Housekeeping: a day-old plan expires; fresh ones stay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.store.db import open_store
from bot.store.housekeeping import tidy
from bot.store.settings import StoreSettings


async def test_old_plans_expire(tmp_path) -> None:
    now = [datetime(2026, 1, 5, 12, tzinfo=UTC)]
    store = await open_store(
        StoreSettings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'h.db'}"),
        clock=lambda: now[0],
    )
    try:
        await store.chats.ensure(1, "private")
        old = await store.pending.create(1, 1, "confirm", {"x": 1})
        now[0] += timedelta(hours=25)
        fresh = await store.pending.create(1, 1, "confirm", {"x": 2})
        await tidy(store)
        assert (await store.pending.get(old.id)).status == "expired"
        assert (await store.pending.get(fresh.id)).status == "pending"
    finally:
        await store.close()
