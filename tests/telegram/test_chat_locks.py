"""One chat's messages are handled in order, chats run side by side, and no lock outlives
the work it guarded."""

from __future__ import annotations

import asyncio
import contextlib

from bot.telegram.services import ChatLocks


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
