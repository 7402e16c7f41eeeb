"""One chat's messages are handled in order, chats run side by side, and no lock outlives
the work it guarded."""

from __future__ import annotations

import asyncio
import contextlib

from bot.telegram.services import ChatLocks, leave_turn


async def test_one_chat_in_order_others_alongside_and_nothing_kept() -> None:
    locks = ChatLocks()
    log: list[str] = []

    async def work(chat: int, name: str, seconds: float) -> None:
        async with locks.hold(chat):
            log.append(f"{name} starts")
            await asyncio.sleep(seconds)
            log.append(f"{name} ends")

    first = asyncio.create_task(work(1, "a1", 0.05))
    await asyncio.sleep(0)
    second = asyncio.create_task(work(1, "a2", 0.0))
    other = asyncio.create_task(work(2, "b", 0.0))
    await asyncio.sleep(0.01)
    assert len(locks) == 1  # chat 1, held with one waiting; chat 2 is done and forgotten
    await asyncio.gather(first, second, other)

    assert log.index("b ends") < log.index("a1 ends")  # chat 2 did not wait for chat 1
    assert log.index("a1 ends") < log.index("a2 starts")  # chat 1 kept its order
    assert len(locks) == 0


async def test_a_failure_or_cancellation_releases_the_chat() -> None:
    locks = ChatLocks()

    async def fail() -> None:
        async with locks.hold(5):
            raise ValueError("boom")

    async def hang() -> None:
        async with locks.hold(5):
            await asyncio.sleep(10)

    with contextlib.suppress(ValueError):
        await fail()
    hung = asyncio.create_task(hang())
    await asyncio.sleep(0.01)
    hung.cancel()
    await asyncio.gather(hung, return_exceptions=True)

    assert len(locks) == 0
    async with locks.hold(5):  # free again
        pass


async def test_a_chats_updates_take_its_lock_in_the_order_they_arrived() -> None:
    """The first update is slower to reach the lock (its database round trips took longer):
    the second still waits for it; an update that ends without the lock lets the next go."""
    locks = ChatLocks()
    log: list[str] = []

    async def update(name: str, before_lock_s: float, *, uses_lock: bool = True) -> None:
        locks.arrive(7)  # as handlers.stamp_arrival does, before any await
        try:
            await asyncio.sleep(before_lock_s)
            if uses_lock:
                async with locks.hold(7):
                    log.append(name)
        finally:
            leave_turn()  # as the update processor does once the handlers are done

    await asyncio.gather(
        asyncio.create_task(update("greeting", 0.05)),
        asyncio.create_task(update("button", 0.02, uses_lock=False)),
        asyncio.create_task(update("question", 0.0)),
    )
    assert log == ["greeting", "question"]
    # Work with no update behind it (a resumed run, the sending pass) just queues.
    async with locks.hold(7):
        pass
    assert len(locks) == 0
