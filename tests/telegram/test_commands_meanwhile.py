"""Commands sent while other work of the chat goes on: what the person reads, in what order.

/reset and /cancel confirm in the same hold of the chat's lock as their work, so that no
other reply of the chat comes between the two.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable

import pytest
from bot_harness import ALICE, ask_and_get_plan, barb_bot, keyboard_data
from fake_bot_api import FakeBotAPI

from bot.telegram.services import BotServices

QUESTION = "average RTH range by weekday?"


async def until(
    condition: Callable[[], bool | Awaitable[bool]],
    what: str,
    fake: FakeBotAPI,
    timeout: float = 20,
) -> None:
    """Wait for ``condition`` (on the fake or in the database), polling."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        met = condition()
        if inspect.isawaitable(met):
            met = await met
        if met:
            return
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{fake.describe()}")
        await asyncio.sleep(0.02)


async def questions_in_flight(svc: BotServices) -> int:
    return sum(work.kind == "question" for work in await svc.store.in_flight.open())


def texts_since(fake: FakeBotAPI, count: int) -> list[str]:
    return [message["text"] for message in fake.said(ALICE)[count:]]


@pytest.mark.parametrize(
    ("command", "confirmation"),
    [("/reset", "Conversation forgotten"), ("/cancel", "The plan is cancelled")],
)
async def test_a_command_confirms_before_the_reply_to_the_next_message(
    fake_telegram: FakeBotAPI, db_url: str, command: str, confirmation: str
) -> None:
    """The command drops a waiting plan (its buttons' removal slow to be answered) while
    the next message, a question, waits for the chat: the confirmation comes first, then
    the answer. Before, the command let the chat go between its work and its confirmation,
    and the answer came between them."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        plan = await ask_and_get_plan(fake, ALICE, ALICE, QUESTION)
        assert keyboard_data(plan)
        before = len(fake.said(ALICE))
        fake.fault_next("editMessageReplyMarkup", "slow", chat_id=ALICE, delay_s=1.5)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=command))
        await until(lambda: fake.calls("editMessageReplyMarkup", chat_id=ALICE), "the drop", fake)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello"))
        # The question is in flight: from here it goes straight to wait for the chat.
        await until(lambda: questions_in_flight(svc), "the question in flight", fake)
        await fake.wait_said(before + 2, chat_id=ALICE)

        async def answered() -> bool:
            return await questions_in_flight(svc) == 0

        await until(answered, "the question answered", fake)

        said = texts_since(fake, before)
        assert len(said) == 2, fake.describe()
        assert said[0].startswith(confirmation), fake.describe()
        assert said[1].startswith("Hi!"), fake.describe()
        # The plan was dropped by the command: its buttons are gone, it is declined.
        assert not keyboard_data(fake.message(ALICE, plan["message_id"]))
        assert [a.status for a in await svc.store.pending.open_for_chat(ALICE)] == []
