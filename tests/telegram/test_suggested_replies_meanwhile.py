"""A suggested reply pressed while other work of the chat goes on (p43e #2, #3).

A press claims its clarification and asks its reply as a question, which waits for the
chat's model lock like any other. Whatever happens meanwhile (a /cancel, a typed message),
only that press answers that clarification, and every message gets an answer. The model
thinks until the test lets it (``let_go``): no test waits a fixed time.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from bot_harness import ALICE, BOB, GROUP, barb_bot, keyboard_data, press
from fake_bot_api import FakeBotAPI
from test_commands_meanwhile import (
    QUERY,
    QUERY_NOTICES,
    HeldRunner,
    group_texts,
    in_group,
    rows,
    until,
)

from bot.llm.messages import ModelRequest
from bot.llm.scripted import ScriptedProvider, text, tool_call
from bot.store.records import Claim
from bot.telegram.services import BotServices
from bot.texts import t

# The headline of /query's count of daily rows, as the chart names it in each language.
COUNT_HEADLINE = {"en": "number of days = ", "ru": "количество дней = "}

BEST_DAY = "which was the best day?"


class Model:
    """Asks "Best by what?" about the best day; says which reply it was given; answers
    anything else as a question of its own. A question about weekdays is thought about
    until ``let_go``."""

    def __init__(self) -> None:
        self.thinking = asyncio.Event()
        self.let_go = asyncio.Event()

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.let_go.set()  # a failed test must not leave the bot's shutdown waiting for it

    async def __call__(self, request: ModelRequest) -> Any:
        last = request.messages[-1]
        if last.role == "tool":
            return text("Continued with: " + last.tool_results[-1].content)
        question = last.text or ""
        if question == BEST_DAY:
            return tool_call(
                "ask_user_clarification",
                question_text="Best by what?",
                suggested_replies=["Widest range", "Biggest gain"],
            )
        if "weekday" in question:
            self.thinking.set()
            await self.let_go.wait()
        return text("A question of its own: " + question)


async def test_a_press_stopped_by_cancel_declines_its_clarification(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """In a group, Alice presses "Widest range" while Bob's question holds the chat's
    model, then sends /cancel. Before: her clarification stayed "running" for good (no
    /cancel or /reset could end it), and her next, unrelated question was fed to the model
    as the answer to "Best by what?". Now the stopped press declines it, as /cancel does a
    waiting clarification; her next question is a question of its own."""
    fake = fake_telegram
    model = Model()
    provider = ScriptedProvider([model] * 20)
    async with barb_bot(fake, db_url, provider=provider) as svc, model:
        in_group(fake, ALICE, BEST_DAY)
        [asked] = await fake.wait_said(1, chat_id=GROUP)
        widest, _ = keyboard_data(asked)
        in_group(fake, BOB, "average range by weekday?")
        await asyncio.wait_for(model.thinking.wait(), 20)
        await press(fake, GROUP, ALICE, asked, widest)
        await until(lambda: svc.thinking.turns(GROUP, ALICE), "the reply waiting", fake)
        in_group(fake, ALICE, "/cancel")
        said = await fake.wait_said(2, chat_id=GROUP, timeout=10)
        assert said[1]["text"] == t("cancel_question", "en"), fake.describe()
        assert rows(db_url, "SELECT user_id, kind, status FROM pending_actions") == [
            (ALICE, "clarify", "declined")
        ]
        model.let_go.set()
        await fake.wait_said(3, chat_id=GROUP)
        in_group(fake, ALICE, "how many inside days?")
        await fake.wait_said(4, chat_id=GROUP)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    assert group_texts(fake)[2:] == [
        "A question of its own: average range by weekday?",
        "A question of its own: how many inside days?",
    ]
    # The model read the clarification declined, never "the person answered".
    last = provider.requests[-1].messages
    assert not any("answered" in r.content for m in last for r in m.tool_results)
    assert rows(db_url, "SELECT kind FROM in_flight") == []


async def test_a_press_stopped_by_reset_is_forgotten_with_its_clarification(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """/reset instead of /cancel: the clarification is declined and forgotten with the
    rest. Before: it stayed "running", and the next question was answered as its reply,
    with the first question, which the reset had forgotten, handed back to the model."""
    fake = fake_telegram
    model = Model()
    provider = ScriptedProvider([model] * 20)
    async with barb_bot(fake, db_url, provider=provider) as svc, model:
        in_group(fake, ALICE, BEST_DAY)
        [asked] = await fake.wait_said(1, chat_id=GROUP)
        in_group(fake, BOB, "average range by weekday?")
        await asyncio.wait_for(model.thinking.wait(), 20)
        await press(fake, GROUP, ALICE, asked, keyboard_data(asked)[0])
        await until(lambda: svc.thinking.turns(GROUP, ALICE), "the reply waiting", fake)
        in_group(fake, ALICE, "/reset")
        await fake.wait_said(2, chat_id=GROUP, timeout=10)
        model.let_go.set()
        await fake.wait_said(4, chat_id=GROUP)
        in_group(fake, ALICE, "how many inside days?")
        await fake.wait_said(5, chat_id=GROUP)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    assert group_texts(fake)[1:] == [
        t("reset_after_other", "en"),
        "A question of its own: average range by weekday?",
        t("reset_question_group", "en"),
        "A question of its own: how many inside days?",
    ]
    assert rows(db_url, "SELECT status FROM pending_actions") == [("declined",)]
    # Alice's last question is read with Bob's only, marked as his: her first one was
    # forgotten.
    last = provider.requests[-1].messages
    assert [m.text for m in last if m.role == "user"] == [
        "[asked by another member of the group] average range by weekday?",
        "how many inside days?",
    ]
    assert not any(m.tool_results for m in last)


@pytest.mark.parametrize(
    ("command", "lang", "done"),
    [("/cancel", "en", "cancel_question"), ("/reset", "ru", "reset_question")],
    ids=["cancel-en", "reset-ru"],
)
async def test_a_press_waiting_behind_a_query_then_cancel_or_reset_says_so_at_once(
    fake_telegram: FakeBotAPI, db_url: str, command: str, lang: str, done: str
) -> None:
    """p44b #7 (4b): in a private chat, "Widest range" pressed while the person's /query
    computes, then /cancel or /reset. Before: silent for the whole query, the sentence only
    after its result. Now the "cannot be stopped…" sentence comes at once; the result
    follows whole, then the stopped reply's confirmation; the clarification is declined
    and the next question is a question of its own."""
    fake = fake_telegram
    model = Model()
    provider = ScriptedProvider([model] * 20)
    runner = HeldRunner()

    def says(text: str) -> None:
        fake.inject(
            fake.message_update(chat_id=ALICE, user_id=ALICE, text=text, language_code=lang)
        )

    async with barb_bot(fake, db_url, provider=provider, runner=runner) as svc, model, runner:
        says(BEST_DAY)
        [asked] = await fake.wait_said(1, chat_id=ALICE)
        says(QUERY)
        await asyncio.wait_for(runner.running.wait(), 20)
        await press(fake, ALICE, ALICE, asked, keyboard_data(asked)[0], language_code=lang)
        await until(lambda: svc.thinking.turns(ALICE, ALICE), "the reply waiting", fake)
        says(command)
        said = await fake.wait_said(2, chat_id=ALICE, timeout=10)
        assert said[1]["text"] == QUERY_NOTICES[command, lang], fake.describe()
        assert not runner.release.is_set()  # said while the query still computes
        runner.release.set()
        await fake.wait_said(4, chat_id=ALICE)
        says("how many inside days?")
        await fake.wait_said(5, chat_id=ALICE)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    said = [m["text"] for m in fake.said(ALICE)]
    assert said[2].startswith(COUNT_HEADLINE[lang]), fake.describe()  # the /query's result, whole
    assert said[3:] == [t(done, lang), "A question of its own: how many inside days?"]
    assert rows(db_url, "SELECT status FROM pending_actions") == [("declined",)]
    last = provider.requests[-1].messages
    assert not any("answered" in r.content for m in last for r in m.tool_results)
    assert rows(db_url, "SELECT kind FROM in_flight") == []


async def test_a_message_typed_as_a_reply_is_pressed_is_answered(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """ "Biggest gain, please" is typed; between its turn reading the clarification as
    waiting and claiming it, "Widest range" is pressed and claims it first. Before: the
    typed message's claim was lost and it got nothing at all, its question finished as if
    answered. Now the press answers the clarification and the typed text is answered as a
    question of its own."""
    fake = fake_telegram
    model = Model()
    provider = ScriptedProvider([model] * 20)
    async with barb_bot(fake, db_url, provider=provider) as svc, model:
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=BEST_DAY))
        [asked] = await fake.wait_said(1, chat_id=ALICE)
        widest, _ = keyboard_data(asked)
        read, pressed = asyncio.Event(), asyncio.Event()
        _hold_the_typed_read_until_the_press(svc, read, pressed)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="Biggest gain, please"))
        await asyncio.wait_for(read.wait(), 20)
        await press(fake, ALICE, ALICE, asked, widest)
        await fake.wait_said(3, chat_id=ALICE)

        async def idle() -> bool:
            return await svc.store.in_flight.open() == []

        await until(idle, "nothing in flight", fake)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    said = [m["text"] for m in fake.said(ALICE)]
    assert sorted(said[1:]) == [
        "A question of its own: Biggest gain, please",
        "Continued with: " + "The person answered: Widest range",
    ], fake.describe()
    assert rows(db_url, "SELECT status FROM pending_actions") == [("done",)]
    assert len(provider.requests) == 3


async def test_a_press_that_fails_before_the_model_declines_its_clarification(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """A suggested reply's turn fails (a bug) before the model is asked. Before: the
    clarification stayed "running", and the next, unrelated message was taken as its
    answer. Now it is declined with the failure: the person reads the one sentence about
    it, and the next message is a question of its own."""
    fake = fake_telegram
    model = Model()
    provider = ScriptedProvider([model] * 20)
    async with barb_bot(fake, db_url, provider=provider) as svc, model:
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=BEST_DAY))
        [asked] = await fake.wait_said(1, chat_id=ALICE)
        pending = svc.store.pending
        real_read = pending.open_for_chat

        async def broken(chat_id: int, *, user_id: int | None = None) -> list[Any]:
            if sys._getframe(1).f_code.co_name == "answer_question":
                pending.open_for_chat = real_read  # type: ignore[method-assign]
                raise RuntimeError("a bug on the way to the model")
            return await real_read(chat_id, user_id=user_id)

        pending.open_for_chat = broken  # type: ignore[method-assign]
        await press(fake, ALICE, ALICE, asked, keyboard_data(asked)[0])
        [_, failed] = await fake.wait_said(2, chat_id=ALICE)
        assert failed["text"].startswith("Something broke on my side"), fake.describe()
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="how many inside days?"))
        await fake.wait_said(3, chat_id=ALICE)
        await until(lambda: len(svc.locks) == 0, "the chat's locks let go", fake)

    assert fake.said(ALICE)[2]["text"] == "A question of its own: how many inside days?"
    assert rows(db_url, "SELECT status FROM pending_actions") == [("declined",)]
    assert rows(db_url, "SELECT kind FROM in_flight") == []


def _hold_the_typed_read_until_the_press(
    svc: BotServices, read: asyncio.Event, pressed: asyncio.Event
) -> None:
    """The typed message's turn reads the open clarifications (``Assistant.ask``), sets
    ``read``, and goes on with what it read only once a press has claimed the clarification
    (``pressed``): the window between two database round trips, made wide."""
    pending = svc.store.pending
    real_read, real_claim = pending.open_for_chat, pending.claim

    async def claim(*args: Any, **kwargs: Any) -> Claim:
        claimed = await real_claim(*args, **kwargs)
        if claimed.won and kwargs.get("work") is not None:  # the press's, with its question
            pressed.set()
        return claimed

    async def open_for_chat(chat_id: int, *, user_id: int | None = None) -> list[Any]:
        found = await real_read(chat_id, user_id=user_id)
        if sys._getframe(1).f_code.co_name == "ask" and not read.is_set():
            read.set()
            await asyncio.wait_for(pressed.wait(), 20)
        return found

    pending.claim = claim  # type: ignore[method-assign]
    pending.open_for_chat = open_for_chat  # type: ignore[method-assign]
