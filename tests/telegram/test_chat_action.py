"""'typing…' is repeated while work goes on, and repeats share a budget across chats."""

from __future__ import annotations

import asyncio
import contextlib

from fake_bot_api import FakeBotAPI
from telegram import Bot

from bot.telegram.services import ChatActionBudget, chat_action


class FrozenClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_the_action_is_repeated_while_the_block_runs(
    telegram_bot: Bot, fake_telegram: FakeBotAPI
) -> None:
    # Waits for the repeats rather than for a set time: on a loaded machine one request
    # can take longer than the period, and a fixed sleep then sees fewer than it should.
    async with asyncio.timeout(10), chat_action(telegram_bot, 5, "upload_photo", every_s=0.05):
        while len(fake_telegram.calls("sendChatAction", chat_id=5)) < 4:
            await asyncio.sleep(0.01)
    count = len(fake_telegram.calls("sendChatAction", chat_id=5))
    await asyncio.sleep(0.15)

    assert count >= 4
    assert len(fake_telegram.calls("sendChatAction", chat_id=5)) == count  # stopped with it
    assert {r.params["action"] for r in fake_telegram.calls("sendChatAction")} == {"upload_photo"}


async def test_repeats_past_the_budget_are_skipped(
    telegram_bot: Bot, fake_telegram: FakeBotAPI
) -> None:
    clock = FrozenClock()
    budget = ChatActionBudget(per_second=2, clock=clock)  # two tokens, never refilled
    async with chat_action(telegram_bot, 5, budget=budget, every_s=0.02):
        await asyncio.sleep(0.2)

    # The first action, then the two repeats the budget allowed.
    assert len(fake_telegram.calls("sendChatAction", chat_id=5)) == 3


def test_the_budget_refills_with_time() -> None:
    clock = FrozenClock()
    budget = ChatActionBudget(per_second=4, clock=clock)

    assert [budget.allow() for _ in range(5)] == [True] * 4 + [False]
    clock.now += 0.5  # two tokens back
    assert [budget.allow() for _ in range(3)] == [True, True, False]
    clock.now += 60  # never more than one second's worth
    assert sum(budget.allow() for _ in range(10)) == 4


async def test_a_delayed_action_shows_only_when_the_work_takes_that_long(
    telegram_bot: Bot, fake_telegram: FakeBotAPI
) -> None:
    async with chat_action(telegram_bot, 5, "upload_photo", after_s=0.2, every_s=0.05):
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.25)
    assert fake_telegram.calls("sendChatAction", chat_id=5) == []

    loop = asyncio.get_running_loop()
    began = loop.time()
    async with asyncio.timeout(10), chat_action(telegram_bot, 6, "upload_photo", after_s=0.2):
        while not fake_telegram.calls("sendChatAction", chat_id=6):
            await asyncio.sleep(0.01)
    assert loop.time() - began >= 0.2  # not before its delay, however slow the machine


async def test_a_delayed_first_action_waits_for_the_budget_too(
    telegram_bot: Bot, fake_telegram: FakeBotAPI
) -> None:
    budget = ChatActionBudget(per_second=1, clock=FrozenClock())  # one token, never refilled
    async with (
        chat_action(telegram_bot, 7, budget=budget, after_s=0.05, every_s=10),
        chat_action(telegram_bot, 8, budget=budget, after_s=0.05, every_s=10),
    ):
        await asyncio.sleep(0.2)

    assert len(fake_telegram.calls("sendChatAction")) == 1


class InstantBot:
    """A bot whose chat action is answered at once, and says so: the block can end in the
    very loop step in which a request completes, the moment a cancellation used to be lost
    (Python 3.11's wait_for returned the finished request's result instead of raising)."""

    def __init__(self) -> None:
        self.sent = asyncio.Event()
        self.calls = 0

    async def send_chat_action(self, chat_id: int, action: str) -> bool:
        self.calls += 1
        self.sent.set()
        return True


async def test_the_repeats_stop_when_the_block_ends_as_a_request_completes() -> None:
    bot = InstantBot()
    async with asyncio.timeout(5), chat_action(bot, 1, every_s=0.01):  # type: ignore[arg-type]
        await bot.sent.wait()
    calls = bot.calls
    await asyncio.sleep(0.1)  # ten periods: a loop still running would have sent again
    assert calls == 1
    assert bot.calls == calls


async def test_a_timeout_around_the_block_still_fires() -> None:
    """The block's end waits for the repeats to stop; a caller's timeout that fires during
    that wait (a request slow to give up) must not be taken for theirs and swallowed."""

    class SlowToStop(InstantBot):
        async def send_chat_action(self, chat_id: int, action: str) -> bool:
            self.calls += 1
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                await asyncio.sleep(0.3)  # finishing its write before it gives up
            return True

    bot = SlowToStop()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(0.1), chat_action(bot, 1, every_s=30):  # type: ignore[arg-type]
            await asyncio.sleep(0.02)
        raise AssertionError("the timeout was swallowed")
    assert bot.calls == 1
