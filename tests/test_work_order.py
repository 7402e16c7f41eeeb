"""Shared queues serve acknowledgements first, then oldest work; the gate is never lost."""

from __future__ import annotations

import asyncio

import pytest

from bot.work_order import PriorityGate, acknowledged, arrived


async def test_acknowledgements_first_then_oldest_work_then_arrival_order() -> None:
    gate = PriorityGate()
    order: list[str] = []
    release_first = asyncio.Event()

    async def write(
        name: str, started: float, hold: asyncio.Event | None = None, *, acked: bool = True
    ) -> None:
        arrived(started)
        if acked:
            acknowledged()
        async with gate.held():
            order.append(name)
            if hold is not None:
                await hold.wait()

    first = asyncio.create_task(write("holder", 50.0, release_first))
    await asyncio.sleep(0)
    waiters = [
        asyncio.create_task(write(name, started))
        for name, started in [("new", 30.0), ("old", 10.0), ("middle", 20.0), ("old-2", 10.0)]
    ]
    waiters.append(asyncio.create_task(write("press", 40.0, acked=False)))
    await asyncio.sleep(0.01)
    assert order == ["holder"] and gate.waiting == 5
    release_first.set()
    await asyncio.gather(first, *waiters)

    assert order == ["holder", "press", "old", "old-2", "middle", "new"]
    assert gate.waiting == 0


async def test_a_cancelled_waiter_does_not_keep_the_gate() -> None:
    gate = PriorityGate()
    hold = asyncio.Event()

    async def holder() -> None:
        async with gate.held():
            await hold.wait()

    async def waiter() -> None:
        async with gate.held():
            pass

    held = asyncio.create_task(holder())
    await asyncio.sleep(0)
    cancelled = asyncio.create_task(waiter())
    after = asyncio.create_task(waiter())
    await asyncio.sleep(0.01)
    cancelled.cancel()
    hold.set()
    await held
    await asyncio.wait_for(after, 1)  # the gate went past the cancelled waiter
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    async with gate.held():  # and it is free again
        pass
