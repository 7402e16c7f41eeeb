"""/cancel and /reset reaching a replica that does not hold the chat's question or /query.

HAProxy moves a chat to another replica while its work goes on (its replica marked down a
moment, a rolling restart's grace, the ring changing); the chat's next update, a /cancel,
reaches a replica whose process knows nothing of that work (p46n #3, #5). The work is a row
in ``in_flight``, which both see: the /cancel marks the question stopped there and says
"Stopped", and the replica thinking about it stores no answer.

One side at a time, on one shared SQLite file: the bot under test, and the other replica's
store (``other_replica``) holding, or stopping, the chat's work.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta

import pytest
from bot_harness import ALICE, barb_bot
from fake_bot_api import FakeBotAPI
from test_commands_meanwhile import QUESTION, HeldModel, rows, until

from bot.assistant.replies import Asker
from bot.store import InFlight, Store, StoreSettings, WorkStopped, open_store
from bot.store.transactions import Clock, utc_now
from bot.telegram.answering import question_work
from bot.telegram.sender import text_reply
from bot.texts import t

OtherReplica = Callable[..., Awaitable[Store]]
#: The /cancel's update id in the tests that order by them.
CANCEL_UPDATE = 500


@pytest.fixture
async def other_replica(db_url: str) -> AsyncIterator[OtherReplica]:
    """Replica "a"'s store, beside the bot under test (replica "local"), opened once the bot
    has made the database."""
    opened: list[Store] = []

    async def open_(clock: Clock = utc_now) -> Store:
        store = await open_store(StoreSettings(database_url=db_url, replica_id="a"), clock=clock)
        opened.append(store)
        await store.chats.ensure(ALICE, "private")
        return store

    yield open_
    for store in opened:
        await store.close()


async def _held_there(store: Store, kind: str, text: str, update_id: int | None = None) -> InFlight:
    """Alice's question (or /query) in flight on the other replica: the model thinks there."""
    work = question_work(Asker(chat_id=ALICE, user_id=ALICE), text, None)
    return await store.in_flight.start(ALICE, ALICE, kind, work, update_id=update_id)  # type: ignore[arg-type]


async def test_cancel_stops_the_question_another_replica_thinks_about(
    fake_telegram: FakeBotAPI, db_url: str, other_replica: OtherReplica
) -> None:
    """Before: "There is no plan waiting to be cancelled.", and the plan came after it."""
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        there = await other_replica()
        work = await _held_there(there, "question", QUESTION)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/cancel"))
        [said] = await fake.wait_said(1, chat_id=ALICE)
        assert said["text"] == "Stopped: that question will not be answered."
        # The other replica's plan, ready now, is refused: nothing stored to be sent.
        plan = text_reply("I'll compute the average range by weekday.")
        with pytest.raises(WorkStopped):
            await there.outbox.enqueue_many(ALICE, [plan], answers=work.id)
        queued = [m.payload.get("text") for m in await there.outbox.unsent(ALICE)]
        assert plan.payload["text"] not in queued
        assert await there.in_flight.stopped([work.id]) == {work.id}


@pytest.mark.parametrize(
    ("skew_s", "question_update", "stopped"),
    [(30, CANCEL_UPDATE - 1, True), (-30, CANCEL_UPDATE + 1, False)],
    ids=["asked before, clock ahead", "asked after, clock behind"],
)
async def test_cancel_elsewhere_stops_the_questions_asked_before_it_whatever_the_clocks(
    fake_telegram: FakeBotAPI,
    db_url: str,
    other_replica: OtherReplica,
    skew_s: int,
    question_update: int,
    stopped: bool,
) -> None:
    """p46ah #8: "asked before the /cancel" was the other replica's clock (the question's
    ``created_at``) against this one's (the /cancel's arrival). With the other clock 30 s
    ahead, the question asked just before was not stopped ("There is no plan waiting to be
    cancelled.", then its plan came); 30 s behind, one asked just after was. Telegram's
    update ids order them, one sequence for every replica."""
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        there = await other_replica(lambda: utc_now() + timedelta(seconds=skew_s))
        work = await _held_there(there, "question", QUESTION, update_id=question_update)
        command = fake.message_update(chat_id=ALICE, user_id=ALICE, text="/cancel")
        fake.inject({**command, "update_id": CANCEL_UPDATE})
        [said] = await fake.wait_said(1, chat_id=ALICE)
        expected = "Stopped: that question will not be answered." if stopped else None
        assert said["text"] == (expected or t("cancel_nothing", "en"))
        assert await there.in_flight.stopped([work.id]) == ({work.id} if stopped else set())


async def test_reset_stops_the_question_another_replica_thinks_about(
    fake_telegram: FakeBotAPI, db_url: str, other_replica: OtherReplica
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        there = await other_replica()
        work = await _held_there(there, "question", QUESTION)
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/reset"))
        [said] = await fake.wait_said(1, chat_id=ALICE)
        assert said["text"] == t("reset_question", "en")
        assert await there.in_flight.stopped([work.id]) == {work.id}


async def test_cancel_says_a_query_another_replica_computes_cannot_be_stopped(
    fake_telegram: FakeBotAPI, db_url: str, other_replica: OtherReplica
) -> None:
    """Before: "There is no plan waiting to be cancelled.", then the /query's chart."""
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        there = await other_replica()
        work = await _held_there(there, "query", '{"from": "daily", "select": "count()"}')
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/cancel"))
        [said] = await fake.wait_said(1, chat_id=ALICE)
        assert said["text"] == t("running_cannot_cancel", "en")
        assert await there.in_flight.stopped([work.id]) == set()  # it runs on


@pytest.mark.parametrize("read", ["while thinking", "after the answer"])
async def test_a_question_another_replica_stopped_is_not_answered_here(
    fake_telegram: FakeBotAPI, db_url: str, other_replica: OtherReplica, read: str
) -> None:
    """The holder's side: another replica's /cancel marked the question stopped. Read while
    the model thinks, the turn is stopped there; marked after the last read, the answer is
    refused as it is stored. Either way no plan, nothing remembered, the work ended."""
    fake = fake_telegram
    model = HeldModel()
    async with barb_bot(fake, db_url, model=model) as svc, model:
        if read == "after the answer":
            svc.thinking.every_s = 3600.0  # never read before the answer is stored
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=QUESTION))
        await asyncio.wait_for(model.thinking.wait(), 20)
        there = await other_replica()
        assert (
            await there.in_flight.stop_elsewhere(ALICE, ALICE, update_id=None, before=utc_now())
            == 1
        )
        if read == "while thinking":
            await until(lambda: model.stopped == 1, "the model's turn stopped", fake)
        model.let_go.set()
        await until(lambda: not rows(db_url, "SELECT id FROM in_flight"), "work ended", fake)
        # The chat goes on as usual.
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello"))
        [said] = await fake.wait_said(1, chat_id=ALICE)
        assert said["text"] == "Hi! Ask me about the bars.", fake.describe()
        assert rows(db_url, "SELECT status FROM pending_actions WHERE status = 'pending'") == []
        history = await svc.store.transcript.recent(ALICE, questions=5)
        assert [m.payload.get("text") for m in history if m.role == "user"] == ["hello"]


async def test_a_stopped_question_of_a_dead_replica_is_not_asked_again(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The replica thinking about the question died after another one's /cancel stopped it
    (and said so): the replica taking its work over asks nothing and says nothing."""
    fake = fake_telegram
    long_ago = utc_now() - timedelta(minutes=10)
    dead = await open_store(
        StoreSettings(database_url=db_url, replica_id="dead"), clock=lambda: long_ago
    )
    canceller = await open_store(StoreSettings(database_url=db_url, replica_id="a"))
    try:
        await dead.chats.ensure(ALICE, "private")
        await _held_there(dead, "question", QUESTION)
        assert (
            await canceller.in_flight.stop_elsewhere(ALICE, ALICE, update_id=None, before=utc_now())
            == 1
        )
    finally:
        await dead.close()
        await canceller.close()
    async with barb_bot(fake, db_url) as svc:
        await until(lambda: not rows(db_url, "SELECT id FROM in_flight"), "work ended", fake)
        assert svc.assistant.provider.requests == []  # type: ignore[attr-defined]
    assert fake.said(ALICE) == []
