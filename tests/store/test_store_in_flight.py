"""Work in flight: recorded when it begins, gone (or marked answered) with its reply, and
still there after a restart when the process died in between."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from store_fixtures import ALICE, BOB, PRIVATE_CHAT, FakeClock

from bot.store import NewReply, Store, StoreSettings, UnknownChat, open_store

QUESTION = {"asker": {"chat_id": PRIVATE_CHAT, "user_id": ALICE}, "text": "range?"}
ANSWER = [NewReply(kind="text", payload={"text": "42"})]


@pytest.fixture
async def chats(store: Store) -> Store:
    await store.chats.ensure(PRIVATE_CHAT, "private")
    return store


async def test_work_outlives_the_process_until_its_reply_is_stored(
    chats: Store, settings: StoreSettings, clock: FakeClock
) -> None:
    question = await chats.in_flight.start(PRIVATE_CHAT, ALICE, "question", QUESTION)
    await chats.close()  # the process dies before answering

    reopened = await open_store(settings, clock=clock)
    try:
        [left] = await reopened.in_flight.open()
        assert left == question
        assert (left.kind, left.payload, left.attempts, left.answered_at) == (
            "question",
            QUESTION,
            1,
            None,
        )
        assert await reopened.in_flight.retry(left.id) is True
        assert (await reopened.in_flight.get(left.id)).attempts == 2  # type: ignore[union-attr]
        # The reply and the end of the work are one transaction.
        [queued] = await reopened.outbox.enqueue_many(PRIVATE_CHAT, ANSWER, answers=left.id)
        assert await reopened.in_flight.open() == []
        assert [m.id for m in await reopened.outbox.unsent()] == [queued.id]
    finally:
        await reopened.close()


async def test_a_run_is_recorded_with_the_claim_and_answered_with_its_reply(
    chats: Store, clock: FakeClock
) -> None:
    action = await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {"view": {}})

    lost = await chats.pending.claim(action.id, BOB, work={"action_id": action.id})
    assert (lost.won, lost.work_id) == (False, None)
    assert await chats.in_flight.open() == []

    claim = await chats.pending.claim(action.id, ALICE, work={"action_id": action.id})
    assert claim.won is True
    [run] = await chats.in_flight.open()
    assert (run.id, run.kind, run.user_id, run.payload) == (
        claim.work_id,
        "run",
        ALICE,
        {"action_id": action.id},
    )

    clock.advance(timedelta(seconds=3))
    await chats.outbox.enqueue_many(PRIVATE_CHAT, ANSWER, answers=run.id)
    [answered] = await chats.in_flight.open()  # its plan message is still to say "Done."
    assert answered.answered_at == clock.now
    assert await chats.in_flight.finish(run.id) is True
    assert await chats.in_flight.finish(run.id) is False
    assert await chats.in_flight.open() == []


async def test_two_presses_record_one_run(chats: Store) -> None:
    action = await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {})
    work = {"action_id": action.id}
    claims = await asyncio.gather(*(chats.pending.claim(action.id, ALICE, work=work) for _ in "ab"))
    assert sorted(c.won for c in claims) == [False, True]
    assert len(await chats.in_flight.open()) == 1


async def test_a_plan_handed_back_can_be_pressed_again(chats: Store) -> None:
    action = await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {})
    assert await chats.pending.reopen(action.id) is False  # pending already: nothing to do
    assert (await chats.pending.claim(action.id, ALICE)).won
    assert (await chats.pending.claim(action.id, ALICE)).won is False
    assert await chats.pending.reopen(action.id) is True
    assert (await chats.pending.claim(action.id, ALICE)).won
    await chats.pending.resolve(action.id, "done")
    assert await chats.pending.reopen(action.id) is True  # answered never: run again
    assert (await chats.pending.cancel(action.id, ALICE)).won  # Cancel works again too
    assert await chats.pending.reopen(action.id) is False  # a cancelled plan stays so


async def test_declining_since_leaves_older_plans(chats: Store, clock: FakeClock) -> None:
    older = await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {})
    clock.advance(timedelta(minutes=1))
    since = clock.now
    newer = await chats.pending.create(PRIVATE_CHAT, ALICE, "clarify", {})

    declined = await chats.pending.decline_for_chat(PRIVATE_CHAT, since=since)
    assert [a.id for a in declined] == [newer.id]
    assert (await chats.pending.get(older.id)).status == "pending"  # type: ignore[union-attr]


async def test_work_needs_a_stored_chat(store: Store) -> None:
    with pytest.raises(UnknownChat):
        await store.in_flight.start(PRIVATE_CHAT, ALICE, "question", QUESTION)
