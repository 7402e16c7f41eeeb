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


async def test_a_chats_replies_go_out_while_its_model_lock_is_held() -> None:
    """A question holds the chat's model lock while the model thinks: a command after it
    takes the reply lock at once (after the question has queued: arrival order), and the
    question's answer goes out after it; a later question waits for the model lock."""
    locks = ChatLocks()
    thinking = asyncio.Event()
    log: list[str] = []

    async def question(name: str, before_lock_s: float = 0.0) -> None:
        locks.arrive(7)
        try:
            await asyncio.sleep(before_lock_s)
            async with locks.hold(7, "model"):
                log.append(f"{name} thinks")
                await thinking.wait()
                async with locks.hold(7):
                    log.append(f"{name} answered")
        finally:
            leave_turn()

    async def command(before_lock_s: float) -> None:
        locks.arrive(7)
        try:
            await asyncio.sleep(before_lock_s)
            async with locks.hold(7):
                log.append("help")
        finally:
            leave_turn()

    first = asyncio.create_task(question("q1", before_lock_s=0.03))
    help_ = asyncio.create_task(command(0.0))  # reaches its lock first, goes after q1 queued
    second = asyncio.create_task(question("q2"))
    await asyncio.wait_for(help_, 5)  # while q1 still thinks
    thinking.set()
    await asyncio.gather(first, second)

    assert log == ["q1 thinks", "help", "q1 answered", "q2 thinks", "q2 answered"]
    assert len(locks) == 0


async def test_a_supergroup_waits_for_work_its_group_began_before_the_upgrade() -> None:
    """Work begun in group -555 holds the group's lock when Telegram says it is supergroup
    -100777 now: the supergroup's next holder waits for it (p46ah #6: the sending pass
    flushed the supergroup while the group's answer still went out there), and neither
    lock outlives them."""
    locks = ChatLocks()
    let_go = asyncio.Event()
    log: list[str] = []

    async def group_answer() -> None:
        async with locks.hold(-555):
            log.append("answer starts")
            await let_go.wait()
            log.append("answer ends")

    async def supergroup_pass() -> None:
        async with locks.hold(-100777):
            log.append("pass")

    answering = asyncio.create_task(group_answer())
    await asyncio.sleep(0)
    locks.moves.moved(-555, -100777)
    passing = asyncio.create_task(supergroup_pass())
    await asyncio.sleep(0.01)
    assert log == ["answer starts"]
    let_go.set()
    await asyncio.gather(answering, passing)

    assert log == ["answer starts", "answer ends", "pass"]
    assert len(locks) == 0
    async with locks.hold(-555):  # the group's id is the supergroup's lock from now on
        assert len(locks) == 1
