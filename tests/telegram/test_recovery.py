"""Start-up after a crash, in process: work left in flight that has had its two attempts is
handed back in one sentence; an update stored and never handled is handled once.

The kill -9 tests (``test_faults_kill.py``) reach these states with a real process; here the
database is left in the state a killed process leaves, which costs no process start.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from bot_harness import ALICE, WEEKDAY_RANGE, ask_and_get_plan, barb_bot, keyboard_data
from fake_bot_api import FakeBotAPI

from bot.assistant.replies import Asker
from bot.llm.errors import ProviderTimeout
from bot.llm.messages import ModelRequest
from bot.llm.scripted import text, tool_call, turn
from bot.store.db import open_store
from bot.store.records import NewReply
from bot.store.settings import StoreSettings
from bot.telegram import keyboards
from bot.telegram.answering import question_work, run_work


async def _until(condition: Any, what: str, fake: FakeBotAPI, timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{fake.describe()}")
        await asyncio.sleep(0.02)


async def _left_twice(db_url: str, kind: str, payload: dict[str, Any], **cancel: Any) -> None:
    """As a process killed during the second attempt leaves it: in flight, attempts = 2."""
    store = await open_store(StoreSettings(database_url=db_url))
    try:
        await store.chats.ensure(ALICE, "private")
        if cancel:
            claim = await store.pending.cancel(cancel["action_id"], ALICE, work=payload)
            assert claim.won and claim.work_id is not None
            work_id = claim.work_id
        else:
            work_id = (await store.in_flight.start(ALICE, ALICE, kind, payload)).id  # type: ignore[arg-type]
        assert await store.in_flight.retry(work_id)
    finally:
        await store.close()


async def _nothing_in_flight(db_url: str) -> bool:
    store = await open_store(StoreSettings(database_url=db_url))
    try:
        return await store.in_flight.open() == []
    finally:
        await store.close()


async def test_a_query_command_killed_twice_is_handed_back(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    asker = Asker(chat_id=ALICE, user_id=ALICE, language_code="en")
    typed = json.dumps(WEEKDAY_RANGE)
    await _left_twice(db_url, "query", question_work(asker, typed, None))

    async with barb_bot(fake, db_url):
        [said] = await fake.wait_said(1, chat_id=ALICE)
        assert said["text"] == "I was restarted while running your /query: please send it again."
    assert fake.calls("sendPhoto") == []  # not run a third time
    assert await _nothing_in_flight(db_url)


async def test_a_cancel_killed_twice_is_handed_back_without_the_model(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    requests: list[ModelRequest] = []

    def model(request: ModelRequest) -> Any:
        requests.append(request)
        if request.messages[-1].role == "user":
            return turn("By weekday.", tool_call("execute_query", query=WEEKDAY_RANGE))
        return text("Cancelled; anything else?")

    async with barb_bot(fake, db_url, model=model):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "Range by weekday?")
    [cancel] = [d for d in keyboard_data(plan) if d.startswith(keyboards.CANCEL)]
    action_id = keyboards.parse(cancel)[1][0]
    await _left_twice(db_url, "cancel", run_work(action_id, "en"), action_id=action_id)

    async with barb_bot(fake, db_url, model=model):
        said = await fake.wait_said(2, chat_id=ALICE)
        assert said[-1]["text"] == (
            "I was restarted while cancelling this plan: it is cancelled, nothing was computed."
        )
        await _until(
            lambda: fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Cancelled."),
            "the plan marked cancelled",
            fake,
        )
    assert len(requests) == 1  # only the question's: the hand-back does not ask the model
    assert "reply_markup" not in fake.message(ALICE, plan["message_id"])
    assert await _nothing_in_flight(db_url)


async def test_an_update_stored_and_never_handled_is_handled_once(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """As a process killed after storing an update leaves it; Telegram, never told, delivers
    it again at the restart: one answer."""
    fake = fake_telegram
    update = fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello")
    store = await open_store(StoreSettings(database_url=db_url))
    try:
        assert await store.updates.receive([(update["update_id"], update)])
    finally:
        await store.close()
    fake.inject(update)  # not confirmed: Telegram sends it again

    async with barb_bot(fake, db_url) as svc:
        [said] = await fake.wait_said(1, chat_id=ALICE)
        assert said["text"] == "Hi! Ask me about the bars."
        # Received again and refused (its id stored), and its one handling ended.
        await fake.wait_confirmed(update["update_id"])
        for _ in range(500):
            if not await svc.store.updates.unhandled():
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("the stored update was never marked handled")
    assert len(fake.said(ALICE)) == 1


async def test_a_question_queued_behind_an_answered_one_is_asked_again_after_a_restart(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p46ah #2: Alice said hello and asked for the weekday ranges while the model answered
    the hello; the process was killed while it thought about the second. Before: the hello's
    answer, stored after the second question began, counted as "later messages were
    answered", and the restart said "Your question … was interrupted, and later messages
    were answered before it: please ask it again". Now only an answer to a question asked
    after it counts: the restart asks it again and shows its plan."""
    fake = fake_telegram
    asker = Asker(chat_id=ALICE, user_id=ALICE, language_code="en")
    store = await open_store(StoreSettings(database_url=db_url))
    try:
        await store.chats.ensure(ALICE, "private")
        hello = await store.in_flight.start(
            ALICE, ALICE, "question", question_work(asker, "hello", None)
        )
        weekday = "average range by weekday"
        queued = question_work(asker, weekday, None)
        await store.in_flight.start(ALICE, ALICE, "question", queued)
        answer = NewReply(kind="text", payload={"text": "Hi! Ask me about the bars."})
        [sent] = await store.outbox.enqueue_many(
            ALICE, [answer], question_id="hello", answers=hello.id
        )
        assert await store.outbox.mark_sent({sent.id: 1}) == 1
    finally:
        await store.close()

    async with barb_bot(fake, db_url):
        [plan] = await fake.wait_said(1, chat_id=ALICE)
        assert "Run" in str(plan.get("reply_markup")), plan["text"]
    assert await _nothing_in_flight(db_url)


async def test_a_suggested_reply_cut_by_a_shutdown_answers_its_clarification_after_it(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p43e #7: "Widest range" is pressed under "Best by what?"; a shutdown stops the turn
    while the model reads the reply. Before: the clarification was left done, and at the
    next start "Widest range" was asked as a question of its own, without the question it
    answers. Now the next start answers the clarification with it: the model reads the
    question, its clarification and the reply, once."""
    fake = fake_telegram
    held, thinking = True, asyncio.Event()
    requests: list[ModelRequest] = []

    async def model(request: ModelRequest) -> Any:
        requests.append(request)
        last = request.messages[-1]
        if last.role == "tool":
            if held:  # the first life: the model is still reading when the shutdown comes
                thinking.set()
                await asyncio.Event().wait()
            return text("Continued with: " + last.tool_results[-1].content)
        if last.text == "which was the best day?":
            return tool_call(
                "ask_user_clarification",
                question_text="Best by what?",
                suggested_replies=["Widest range", "Biggest gain"],
            )
        return text("A question of its own: " + (last.text or ""))

    async with barb_bot(fake, db_url, model=model) as svc:
        asked = await ask_and_get_plan(fake, ALICE, ALICE, "which was the best day?")
        fake.inject(
            fake.callback_update(
                chat_id=ALICE,
                user_id=ALICE,
                message_id=asked["message_id"],
                data=keyboard_data(asked)[0],
            )
        )
        await asyncio.wait_for(thinking.wait(), 20)
        # As a shutdown past its grace period stops the answers in progress
        # (``StoppableUpdates.stop_running``): the handler's task is cancelled.
        [cut] = svc.thinking.turns(ALICE, ALICE)
        cut.task.cancel()
        await asyncio.wait_for(cut.ended.wait(), 20)
        assert [w.kind for w in await svc.store.in_flight.open()] == ["question"]
    held = False

    async with barb_bot(fake, db_url, model=model):
        said = await fake.wait_said(2, chat_id=ALICE)
        await _until(lambda: len(requests) == 3, "the reply read", fake)

    assert said[1]["text"] == "Continued with: The person answered: Widest range"
    assert [m.role for m in requests[-1].messages] == ["user", "assistant", "tool"]
    assert await _nothing_in_flight(db_url)


@pytest.mark.parametrize(
    ("question", "failure"),
    [
        (
            "which was the best day?",
            "The language model took too long to answer; please try again in a minute.",
        ),
        (
            "какой день был лучшим?",
            "Языковая модель отвечала слишком долго; попробуйте через минуту.",
        ),
    ],
    ids=["en", "ru"],
)
async def test_a_suggested_reply_the_model_fails_on_after_a_restart_is_offered_again(
    fake_telegram: FakeBotAPI, db_url: str, question: str, failure: str
) -> None:
    """p46c C1: "Widest range" is pressed, a shutdown cuts the turn, and at the next start
    the model times out on the reply. The clarification waited for its reply again, but its
    buttons, taken away at the press, stayed gone: "please try again" meant typing it, and
    the timeout read "not reachable". Now the replies come back under the question before
    the failure is said, and the failure says the model took too long."""
    fake = fake_telegram
    held, thinking = True, asyncio.Event()

    async def model(request: ModelRequest) -> Any:
        if request.messages[-1].role == "tool":
            if held:  # the first life: the model is still reading when the shutdown comes
                thinking.set()
                await asyncio.Event().wait()
            raise ProviderTimeout("no answer within 60 s", provider="scripted")
        return tool_call(
            "ask_user_clarification",
            question_text="Best by what?",
            suggested_replies=["Widest range", "Biggest gain"],
        )

    async with barb_bot(fake, db_url, model=model) as svc:
        asked = await ask_and_get_plan(fake, ALICE, ALICE, question)
        replies = keyboard_data(asked)
        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=asked["message_id"], data=replies[0]
            )
        )
        await asyncio.wait_for(thinking.wait(), 20)
        await _until(
            lambda: not keyboard_data(fake.message(ALICE, asked["message_id"])),
            "the pressed buttons taken away",
            fake,
        )
        [cut] = svc.thinking.turns(ALICE, ALICE)
        cut.task.cancel()  # as a shutdown past its grace period does
        await asyncio.wait_for(cut.ended.wait(), 20)
    held = False

    async with barb_bot(fake, db_url, model=model) as svc:
        said = await fake.wait_said(2, chat_id=ALICE)
        assert said[1]["text"] == failure
        # Pressable again by the time the person reads "try again".
        assert keyboard_data(fake.message(ALICE, asked["message_id"])) == replies
        [action] = await svc.store.pending.open_for_chat(ALICE)
        assert action.status == "pending"
    assert await _nothing_in_flight(db_url)
