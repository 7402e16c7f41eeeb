"""Pending confirmations and clarifications: who may press, and each outcome happens once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from store_fixtures import ALICE, BOB, GROUP_CHAT, PRIVATE_CHAT, FakeClock

from bot.store import Claim, Store, UnknownChat
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
