"""A Telegram update is handled once; a reply is stored before it is sent."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import text as text_sql
from store_fixtures import ALICE, GROUP_CHAT, PRIVATE_CHAT, FakeClock

from bot.store import NewReply, Store, UnknownChat


def _update(update_id: int) -> tuple[int, dict[str, object]]:
    return update_id, {"update_id": update_id, "message": {"text": f"question {update_id}"}}


async def test_an_update_is_new_only_the_first_time(store: Store) -> None:
    assert await store.updates.receive([_update(1), _update(2)]) == [1, 2]
    assert await store.updates.receive([_update(1)]) == []
    assert await store.updates.receive([_update(2), _update(3)]) == [3]


async def test_an_update_delivered_twice_at_once_is_handled_once(store: Store) -> None:
    results = await asyncio.gather(*(store.updates.receive([_update(77)]) for _ in range(5)))

    assert sorted(results) == [[], [], [], [], [77]]


async def test_a_stored_update_waits_until_handled(store: Store) -> None:
    """What a restart finds: the updates stored and not handled, with their JSON, in order."""
    await store.updates.receive([_update(5), _update(4), _update(6)])
    await store.updates.handled(5)

    assert await store.updates.unhandled() == [_update(4), _update(6)]
    await store.updates.handled(4)
    await store.updates.handled(6)
    assert await store.updates.unhandled() == []


async def test_a_chats_unhandled_messages_are_found_by_its_id(store: Store) -> None:
    """``unhandled_messages``: a chat's new messages not handled yet, in order, a group's id
    past 32 bits too (PostgreSQL's INTEGER cast of it failed); another chat's, an edit or a
    press are not among them."""

    def message(update_id: int, chat_id: int, kind: str = "message") -> tuple[int, dict]:
        return update_id, {"update_id": update_id, kind: {"chat": {"id": chat_id}, "text": "x"}}

    await store.updates.receive(
        [
            message(1, GROUP_CHAT),
            message(2, PRIVATE_CHAT),
            message(3, GROUP_CHAT, "edited_message"),
            (4, {"update_id": 4, "callback_query": {"id": "q"}}),
            message(5, GROUP_CHAT),
            message(6, GROUP_CHAT),
        ]
    )
    await store.updates.handled(5)
    assert await store.updates.unhandled_messages(GROUP_CHAT) == [
        message(1, GROUP_CHAT),
        message(6, GROUP_CHAT),
    ]
    assert await store.updates.unhandled_messages(PRIVATE_CHAT) == [message(2, PRIVATE_CHAT)]
    assert await store.updates.unhandled_of([1, 2, 5, 99]) == {1, 2}


async def test_storing_a_reply_or_work_in_flight_handles_its_update(chats: Store) -> None:
    """The reply or the work's record and the update's end are one transaction: a restart
    either handles the update (nothing stored) or sends the reply / resumes the work (the
    update handled), never both."""
    await chats.updates.receive([_update(7), _update(8), _update(9)])
    reply = NewReply(kind="text", payload={"text": "/help's answer"})
    await chats.outbox.enqueue_many(PRIVATE_CHAT, [reply], update_id=7)
    await chats.in_flight.start(PRIVATE_CHAT, ALICE, "question", {"text": "q"}, update_id=8)
    action = await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {})
    claim = await chats.pending.claim(action.id, ALICE, work={"action_id": action.id}, update_id=9)
    assert claim.won

    assert await chats.updates.unhandled() == []
    assert [work.kind for work in await chats.in_flight.open()] == ["question", "run"]


async def test_a_won_cancel_is_recorded_in_flight(chats: Store) -> None:
    await chats.updates.receive([_update(10)])
    action = await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {})

    cancel = await chats.pending.cancel(
        action.id, ALICE, work={"action_id": action.id}, update_id=10
    )
    again = await chats.pending.cancel(action.id, ALICE, work={"action_id": action.id})

    assert cancel.won and cancel.work_id is not None
    assert cancel.action is not None and cancel.action.status == "cancelled"
    assert not again.won and again.work_id is None
    [work] = await chats.in_flight.open()
    assert (work.id, work.kind, work.payload) == (
        cancel.work_id,
        "cancel",
        {"action_id": action.id, "update_id": 10},  # ordered by update id across replicas
    )
    assert await chats.updates.unhandled() == []


async def test_old_handled_updates_are_pruned(store: Store, clock: FakeClock) -> None:
    await store.updates.receive([_update(1), _update(3)])
    await store.updates.handled(1)
    clock.advance(timedelta(hours=30))
    await store.updates.receive([_update(2)])

    assert await store.updates.prune(older_than=timedelta(days=1)) == 1
    # Not handled yet: kept, however old, for the next start to handle.
    assert await store.updates.unhandled() == [_update(2), _update(3)]
    assert await store.updates.receive([_update(2)]) == []


@pytest.fixture
async def chats(store: Store) -> Store:
    await store.chats.ensure(PRIVATE_CHAT, "private")
    await store.chats.ensure(GROUP_CHAT, "supergroup")
    return store


async def test_replies_wait_in_the_outbox_until_sent(chats: Store, clock: FakeClock) -> None:
    text = await chats.outbox.enqueue(
        PRIVATE_CHAT, "text", {"text": "<b>212.4</b>", "parse_mode": "HTML"}
    )
    chart = await chats.outbox.enqueue(
        PRIVATE_CHAT, "photo", {"caption": "NQ RTH"}, content=b"\x89PNG\r\n", question_id="q1"
    )
    other = await chats.outbox.enqueue(
        GROUP_CHAT, "document", {"filename": "a.csv"}, content=b"a,b\n"
    )

    assert await chats.outbox.unsent(PRIVATE_CHAT) == [text, chart]
    assert [r.id for r in await chats.outbox.unsent()] == [text.id, chart.id, other.id]

    clock.advance(timedelta(seconds=2))
    assert await chats.outbox.mark_sent({chart.id: 555}) == 1
    assert await chats.outbox.mark_sent({chart.id: 556, text.id: 557}) == 1  # text only
    assert await chats.outbox.mark_failed(other.id, "Forbidden: bot was blocked by the user")

    assert await chats.outbox.unsent() == []
    assert chart.content == b"\x89PNG\r\n"
    assert "content" not in repr(chart)
    async with chats._engine.connect() as conn:
        rows = await conn.execute(
            text_sql("SELECT id, status, telegram_message_id, content FROM outbox ORDER BY id")
        )
        assert [tuple(r) for r in rows] == [
            (text.id, "sent", 557, None),
            (chart.id, "sent", 555, None),  # the first mark stands; the bytes are gone
            (other.id, "failed", None, b"a,b\n"),
        ]


async def test_sent_replies_are_pruned(chats: Store, clock: FakeClock) -> None:
    sent = await chats.outbox.enqueue(PRIVATE_CHAT, "text", {"text": "a"})
    queued = await chats.outbox.enqueue(PRIVATE_CHAT, "text", {"text": "b"})
    await chats.outbox.mark_sent({sent.id: 1})
    clock.advance(timedelta(days=8))

    assert await chats.outbox.prune(older_than=timedelta(days=7)) == 1
    assert await chats.outbox.unsent() == [queued]


async def test_a_file_reply_needs_its_bytes(chats: Store) -> None:
    with pytest.raises(ValueError, match="photo reply needs its content"):
        await chats.outbox.enqueue(PRIVATE_CHAT, "photo", {"caption": "x"})
    with pytest.raises(UnknownChat):
        await chats.outbox.enqueue(12345, "text", {"text": "x"})


async def test_a_reply_is_queued_whole_and_in_order(chats: Store) -> None:
    from bot.store import NewReply

    reply = [
        NewReply(kind="photo", payload={"filename": "a.png"}, content=b"\x89PNG"),
        NewReply(kind="document", payload={"filename": "a.csv"}, content=b"a\n"),
        NewReply(kind="text", payload={"text": "212.4", "reply_markup": {"inline_keyboard": []}}),
    ]
    queued = await chats.outbox.enqueue_many(PRIVATE_CHAT, reply, question_id="q7")

    assert [q.kind for q in await chats.outbox.unsent(PRIVATE_CHAT)] == [
        "photo",
        "document",
        "text",
    ]
    assert {q.question_id for q in queued} == {"q7"}
    assert queued[2].payload["reply_markup"] == {"inline_keyboard": []}
    with pytest.raises(UnknownChat):
        await chats.outbox.enqueue_many(12345, reply)
    assert len(await chats.outbox.unsent()) == 3  # nothing of the refused reply was kept


async def test_only_replies_older_than_asked_are_flushed(chats: Store, clock: FakeClock) -> None:
    old = await chats.outbox.enqueue(PRIVATE_CHAT, "text", {"text": "a"})
    clock.advance(timedelta(seconds=90))
    await chats.outbox.enqueue(PRIVATE_CHAT, "text", {"text": "b"})

    assert await chats.outbox.unsent(older_than=timedelta(seconds=60)) == [old]


async def test_a_held_file_waits_until_asked_for_and_is_released_once(
    chats: Store, clock: FakeClock
) -> None:
    from bot.store import NewReply

    reply = [
        NewReply(kind="photo", payload={"filename": "a.png"}, content=b"\x89PNG"),
        NewReply(
            kind="document", payload={"filename": "a.csv", "proof": 0}, content=b"a\n", held=True
        ),
    ]
    photo, csv = await chats.outbox.enqueue_many(PRIVATE_CHAT, reply, question_id="q7")
    assert (photo.status, csv.status) == ("queued", "held")
    # Not sent with the answer, nor by a later flush: only when asked for.
    assert await chats.outbox.unsent() == [photo]
    assert await chats.outbox.held(PRIVATE_CHAT, "q7") == [csv]
    assert await chats.outbox.held(PRIVATE_CHAT, "q8") == []

    assert await chats.outbox.release(csv.id)
    assert not await chats.outbox.release(csv.id)  # a second press sends nothing more
    assert [r.id for r in await chats.outbox.unsent()] == [photo.id, csv.id]
    assert await chats.outbox.held(PRIVATE_CHAT, "q7") == []


async def test_a_file_never_asked_for_is_pruned_with_the_rest(
    chats: Store, clock: FakeClock
) -> None:
    from bot.store import NewReply

    held = NewReply(kind="document", payload={"filename": "a.csv"}, content=b"a\n", held=True)
    [csv] = await chats.outbox.enqueue_many(PRIVATE_CHAT, [held], question_id="q7")
    clock.advance(timedelta(days=8))

    assert await chats.outbox.prune(older_than=timedelta(days=7)) == 1
    assert not await chats.outbox.release(csv.id)


async def test_a_question_is_found_by_barbs_reply_or_by_the_message_that_asked_it(
    chats: Store,
) -> None:
    """``question_of``: Barb's sent message 900 (quoting message 70) is question q1's; so is
    message 70, the member's question it quoted; a later answer quoting 70 again (q2, asked
    again) wins; a message nothing quotes, or a reply not sent yet, is no question's."""
    plan = await chats.outbox.enqueue(
        GROUP_CHAT, "text", {"text": "Plan", "reply_to": 70}, question_id="q1"
    )
    again = await chats.outbox.enqueue(
        GROUP_CHAT, "text", {"text": "Answer", "reply_to": 70}, question_id="q2"
    )
    await chats.outbox.enqueue(
        GROUP_CHAT, "text", {"text": "Unsent", "reply_to": 71}, question_id="q3"
    )
    await chats.outbox.mark_sent({plan.id: 900, again.id: 901})
    assert await chats.outbox.question_of(GROUP_CHAT, 900) == "q1"
    assert await chats.outbox.question_of(GROUP_CHAT, 70) == "q2"
    assert await chats.outbox.question_of(GROUP_CHAT, 71) is None
    assert await chats.outbox.question_of(GROUP_CHAT, 72) is None
    assert await chats.outbox.question_of(PRIVATE_CHAT, 70) is None


async def test_in_a_private_chat_a_question_is_found_by_the_message_that_asked_it(
    chats: Store,
) -> None:
    """A private chat's replies quote nothing: the message that asked is stored with them
    (``asked``), and found by it; the latest question it asked wins, as in a group."""
    plan = await chats.outbox.enqueue(
        PRIVATE_CHAT, "text", {"text": "Plan", "asked": 40}, question_id="q1"
    )
    other = await chats.outbox.enqueue(
        PRIVATE_CHAT, "text", {"text": "Plan", "asked": 42}, question_id="q2"
    )
    await chats.outbox.mark_sent({plan.id: 41, other.id: 43})
    assert await chats.outbox.question_of(PRIVATE_CHAT, 40) == "q1"
    assert await chats.outbox.question_of(PRIVATE_CHAT, 42) == "q2"
    assert await chats.outbox.question_of(PRIVATE_CHAT, 44) is None
    assert await chats.outbox.question_of(GROUP_CHAT, 40) is None


async def test_a_split_questions_later_parts_and_its_plans_are_found(chats: Store) -> None:
    """A question the app sent in parts 40, 41 and 43 (42 another member's): a reply to
    any part is the question's, 42 no question's; the plans its messages carried are found
    from the question, newest first, however many the chat has had since."""
    payload = {"text": "Plan", "asked": 40, "asked_parts": [41, 43], "pending_id": "p1"}
    plan = await chats.outbox.enqueue(GROUP_CHAT, "text", payload, question_id="q1")
    again = await chats.outbox.enqueue(
        GROUP_CHAT, "text", {**payload, "pending_id": "p2"}, question_id="q1"
    )
    await chats.outbox.enqueue(GROUP_CHAT, "text", {"text": "Unsent"}, question_id="q1")
    await chats.outbox.mark_sent({plan.id: 44, again.id: 45})
    for part in (40, 41, 43, 44):
        assert await chats.outbox.question_of(GROUP_CHAT, part) == "q1"
    assert await chats.outbox.question_of(GROUP_CHAT, 42) is None
    assert await chats.outbox.question_of(PRIVATE_CHAT, 41) is None
    assert await chats.outbox.actions_of(GROUP_CHAT, "q1") == ["p2", "p1"]
    assert await chats.outbox.actions_of(GROUP_CHAT, "q2") == []
