"""Per-person limits counted in the database: the same window whichever replica is asked."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from store_fixtures import ALICE, BOB, FakeClock

from bot.store import Store, StoreSettings, open_store


async def test_a_person_past_the_limit_is_told_how_long_to_wait(
    store: Store, clock: FakeClock
) -> None:
    limits = store.rate_limits
    assert await limits.take("question", ALICE, 2) == 0
    assert await limits.take("question", ALICE, 2) == 0
    clock.advance(timedelta(seconds=15))
    assert await limits.take("question", ALICE, 2) == 45  # the first leaves the window in 45 s
    assert await limits.take("question", BOB, 2) == 0  # someone else is not held by it
    assert await limits.take("query", ALICE, 2) == 0  # nor are /query runs
    clock.advance(timedelta(seconds=45))
    assert await limits.take("question", ALICE, 2) == 0
    assert await limits.take("question", ALICE, 2) == 0
    assert await limits.take("question", ALICE, 2) == 60  # both in the window just now


async def test_the_limit_holds_across_replicas_and_restarts(
    settings: StoreSettings, clock: FakeClock
) -> None:
    first = await open_store(settings.model_copy(update={"replica_id": "a"}), clock=clock)
    second = await open_store(settings.model_copy(update={"replica_id": "b"}), clock=clock)
    try:
        # Ten questions at once, spread over two replicas: exactly three go ahead.
        waits = await asyncio.gather(
            *(s.rate_limits.take("question", ALICE, 3) for s in [first, second] * 5)
        )
        assert sorted(waits) == [0.0] * 3 + [60.0] * 7
    finally:
        await first.close()
    restarted = await open_store(settings.model_copy(update={"replica_id": "a"}), clock=clock)
    try:
        assert await restarted.rate_limits.take("question", ALICE, 3) == 60.0
        clock.advance(timedelta(seconds=60))
        assert await second.rate_limits.take("question", ALICE, 3) == 0
    finally:
        await restarted.close()
        await second.close()


async def test_people_who_stopped_asking_are_forgotten(store: Store, clock: FakeClock) -> None:
    for user in range(20):
        await store.rate_limits.take("question", user, 5)
    clock.advance(timedelta(seconds=30))
    await store.rate_limits.take("question", ALICE, 5)
    assert await store.rate_limits.prune() == 0

    clock.advance(timedelta(seconds=45))  # 75 s since the 20 asked, 45 s since ALICE did
    assert await store.rate_limits.prune() == 20
    assert await store.rate_limits.take("question", ALICE, 1) == 15  # her window stayed
