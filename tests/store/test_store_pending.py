"""Pending confirmations and clarifications: who may press, and each outcome happens once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from store_fixtures import ALICE, BOB, GROUP_CHAT, PRIVATE_CHAT, FakeClock

from bot.store import Claim, Store, UnknownChat, open_store
from bot.store.records import PENDING_ID_LENGTH


@pytest.fixture
async def chats(store: Store) -> Store:
    await store.chats.ensure(PRIVATE_CHAT, "private")
    await store.chats.ensure(GROUP_CHAT, "group")
    return store


async def test_ids_fit_in_callback_data(chats: Store) -> None:
    ids = {(await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {})).id for _ in range(20)}

    assert len(ids) == 20
    for action_id in ids:
        assert len(action_id) == PENDING_ID_LENGTH
        assert len(f"run:{action_id}".encode()) <= 64
        assert action_id.replace("-", "").replace("_", "").isalnum()


async def test_only_the_asker_can_claim(chats: Store) -> None:
    action = await chats.pending.create(GROUP_CHAT, ALICE, "confirm", {"plan": "…"})

    by_bob = await chats.pending.claim(action.id, BOB)
    assert by_bob.won is False
    assert by_bob.action == action  # what the press found, to tell Bob it is not his
    assert await chats.pending.claim("no-such-action", ALICE) == Claim(action=None, won=False)
    by_alice = await chats.pending.claim(action.id, ALICE)
    assert by_alice.won is True
    assert by_alice.action == action.model_copy(update={"status": "running"})
    again = await chats.pending.claim(action.id, ALICE)
    assert (again.won, again.action and again.action.status) == (False, "running")


async def test_run_and_cancel_pressed_together_one_wins(chats: Store) -> None:
    action = await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {})

    claim, cancelled = await asyncio.gather(
        chats.pending.claim(action.id, ALICE), chats.pending.cancel(action.id, ALICE)
    )
    ran = claim.won

    assert ran != cancelled.won
    stored = await chats.pending.get(action.id)
    assert stored is not None
    assert stored.status == ("running" if ran else "cancelled")


async def test_running_then_done(chats: Store, clock: FakeClock) -> None:
    action = await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {})
    await chats.pending.set_message(action.id, 4242)
    assert (await chats.pending.claim(action.id, ALICE)).won
    clock.advance(timedelta(seconds=3))

    assert await chats.pending.resolve(action.id, "done") is True
    assert await chats.pending.resolve(action.id, "done") is False

    done = await chats.pending.get(action.id)
    assert done is not None
    assert (done.status, done.message_id, done.resolved_at) == ("done", 4242, clock.now)
    assert await chats.pending.open_for_chat(PRIVATE_CHAT) == []


async def test_a_new_message_declines_what_the_chat_left_pending(chats: Store) -> None:
    asked = await chats.pending.create(GROUP_CHAT, ALICE, "clarify", {"options": ["RTH", "ETH"]})
    running = await chats.pending.create(GROUP_CHAT, BOB, "confirm", {})
    elsewhere = await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {})
    assert (await chats.pending.claim(running.id, BOB)).won

    declined = await chats.pending.decline_for_chat(GROUP_CHAT)

    assert [(a.id, a.status, a.payload) for a in declined] == [
        (asked.id, "declined", {"options": ["RTH", "ETH"]})
    ]
    assert (await chats.pending.claim(asked.id, ALICE)).won is False
    assert [a.id for a in await chats.pending.open_for_chat(GROUP_CHAT)] == [running.id]
    assert (await chats.pending.get(elsewhere.id)).status == "pending"  # type: ignore[union-attr]
    assert await chats.pending.decline_for_chat(GROUP_CHAT) == []


async def test_old_pending_actions_expire(chats: Store, clock: FakeClock) -> None:
    old = await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {})
    clock.advance(timedelta(hours=2))
    fresh = await chats.pending.create(GROUP_CHAT, BOB, "confirm", {})
    clock.advance(timedelta(minutes=5))

    expired = await chats.pending.expire(older_than=timedelta(hours=1))

    assert [(a.id, a.status, a.resolved_at) for a in expired] == [(old.id, "expired", clock.now)]
    assert (await chats.pending.claim(old.id, ALICE)).won is False
    assert (await chats.pending.claim(fresh.id, BOB)).won is True


async def test_an_unknown_chat_is_named(store: Store) -> None:
    with pytest.raises(UnknownChat, match="chat 999 is not stored"):
        await store.pending.create(999, ALICE, "confirm", {})


async def test_a_stale_button_cannot_run_before_expiry_catches_up(
    chats: Store, clock: FakeClock
) -> None:
    action = await chats.pending.create(PRIVATE_CHAT, ALICE, "confirm", {})
    clock.advance(timedelta(hours=25))

    stale = await chats.pending.claim(action.id, ALICE, max_age=timedelta(hours=24))
    assert stale.won is False
    assert (await chats.pending.claim(action.id, ALICE, max_age=timedelta(hours=26))).won


def _conversation(thread: int | None):  # type: ignore[no-untyped-def]
    return lambda action: action.payload.get("thread") == thread


def _asked(action) -> int | None:  # type: ignore[no-untyped-def]
    return action.payload.get("asked")


async def test_two_replicas_placing_plans_at_once_leave_the_later_questions_open(
    settings, clock: FakeClock
) -> None:
    """Two questions sent quickly, each planned by another replica (HAProxy moved the chat):
    each replica declined what was open when its question came (nothing yet), then stored
    its plan, and both plans kept a live Run. Now a plan is placed in one transaction that
    declines the person's older ones: whichever replica stores last, one plan stays open,
    the later question's (message 2), and the other is declined."""
    first = await open_store(settings, clock=clock)
    second = await open_store(settings, clock=clock)
    try:
        await first.chats.ensure(PRIVATE_CHAT, "private")
        for round_ in range(10):
            asked = 2 * round_ + 1
            placed = await asyncio.gather(
                *(
                    store.pending.place(
                        PRIVATE_CHAT,
                        ALICE,
                        "confirm",
                        {"thread": None, "asked": message},
                        same_conversation=_conversation(None),
                        asked=_asked,
                    )
                    for store, message in ((first, asked), (second, asked + 1))
                )
            )
            open_ = await first.pending.open_for_chat(PRIVATE_CHAT)
            assert [action.payload["asked"] for action in open_] == [asked + 1], round_
            earlier, later = (p.action for p in placed)
            assert later.status == "pending"
            # Stored declined (placed second), or stored first and replaced by the later one.
            replaced = [a.id for p in placed for a in p.replaced]
            assert earlier.status == "declined" or replaced == [earlier.id]
            assert (await first.pending.claim(earlier.id, ALICE)).won is False
            assert (await second.pending.claim(later.id, ALICE)).won is True
            assert await second.pending.resolve(later.id, "done")
    finally:
        await first.close()
        await second.close()


async def test_a_placed_plan_leaves_other_people_topics_and_presses_alone(chats: Store) -> None:
    """Only the person's pending actions in the same conversation are replaced: Bob's plan in
    the group, Alice's plan in another forum topic and her plan already running stay."""

    def place(user: int, thread: int | None, asked: int):  # type: ignore[no-untyped-def]
        return chats.pending.place(
            GROUP_CHAT,
            user,
            "confirm",
            {"thread": thread, "asked": asked},
            same_conversation=_conversation(thread),
            asked=_asked,
        )

    bobs = (await place(BOB, None, 1)).action
    other_topic = (await place(ALICE, 77, 2)).action
    running = (await place(ALICE, None, 3)).action
    assert (await chats.pending.claim(running.id, ALICE)).won
    waiting = (await place(ALICE, None, 4)).action

    newer = await place(ALICE, None, 5)

    assert [a.id for a in newer.replaced] == [waiting.id]
    open_ = {a.id: a.status for a in await chats.pending.open_for_chat(GROUP_CHAT)}
    assert open_ == {
        bobs.id: "pending",
        other_topic.id: "pending",
        running.id: "running",
        newer.action.id: "pending",
    }
    # A question asked before the one whose plan is open (a slow model's): stored declined.
    late = await place(ALICE, None, 4)
    assert (late.action.status, late.replaced) == ("declined", [])
    assert (await chats.pending.claim(late.action.id, ALICE)).won is False
