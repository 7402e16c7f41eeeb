"""Chats and their settings; people's remembered preferences."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from pydantic import ValidationError
from store_fixtures import ALICE, BOB, GROUP_CHAT, PRIVATE_CHAT, FakeClock, sqlite_settings

from bot.store import ChatSettings, NewMessage, NewReply, Store, UnknownChat, open_store


async def test_a_new_chat_gets_the_defaults(store: Store, clock: FakeClock) -> None:
    assert await store.chats.get(PRIVATE_CHAT) is None

    chat = await store.chats.ensure(PRIVATE_CHAT, "private")

    assert (chat.id, chat.type, chat.instrument, chat.language) == (
        PRIVATE_CHAT,
        "private",
        "NQ",
        None,
    )
    assert chat.settings == ChatSettings(confirm_queries=True, charts=True, language="auto")
    assert chat.created_at == chat.updated_at == clock.now
    assert await store.chats.get(PRIVATE_CHAT) == chat


async def test_ensure_is_idempotent_under_concurrency(store: Store, clock: FakeClock) -> None:
    chats = await asyncio.gather(*(store.chats.ensure(GROUP_CHAT, "group") for _ in range(5)))
    clock.advance(timedelta(hours=1))
    again = await store.chats.ensure(GROUP_CHAT, "group")

    assert len(set(chats)) == 1
    assert again == chats[0]


async def test_settings_change_one_at_a_time(store: Store, clock: FakeClock) -> None:
    await store.chats.ensure(PRIVATE_CHAT, "private")
    clock.advance(timedelta(minutes=1))

    chat = await store.chats.update_settings(PRIVATE_CHAT, confirm_queries=False)
    chat = await store.chats.update_settings(PRIVATE_CHAT, language="en")

    assert chat.settings == ChatSettings(confirm_queries=False, charts=True, language="en")
    assert chat.updated_at == clock.now
    assert chat.created_at == clock.now - timedelta(minutes=1)

    replaced = await store.chats.set_settings(PRIVATE_CHAT, ChatSettings(charts=False))
    assert replaced.settings == ChatSettings(charts=False)


async def test_a_typo_or_a_bad_value_is_refused(store: Store) -> None:
    await store.chats.ensure(PRIVATE_CHAT, "private")

    with pytest.raises(ValidationError, match="languague"):
        await store.chats.update_settings(PRIVATE_CHAT, languague="en")
    with pytest.raises(ValidationError, match="language"):
        await store.chats.update_settings(PRIVATE_CHAT, language="de")

    assert (await store.chats.get(PRIVATE_CHAT)).settings == ChatSettings()  # type: ignore[union-attr]


def test_settings_a_newer_barb_stored_are_read() -> None:
    assert ChatSettings.from_stored({"charts": False, "dropped_option": 1}) == ChatSettings(
        charts=False
    )
    assert ChatSettings.from_stored(None) == ChatSettings()


async def test_instrument_and_language(store: Store) -> None:
    await store.chats.ensure(GROUP_CHAT, "supergroup")

    await store.chats.set_instrument(GROUP_CHAT, "CL")
    chat = await store.chats.set_language(GROUP_CHAT, "ru")

    assert (chat.instrument, chat.language) == ("CL", "ru")
    with pytest.raises(UnknownChat):
        await store.chats.set_instrument(PRIVATE_CHAT, "ES")


async def test_preferences_belong_to_a_person(store: Store) -> None:
    first = await store.preferences.add(ALICE, "  I only trade   RTH ")
    await store.preferences.add(ALICE, "answer in points")
    await store.preferences.add(BOB, "always English")

    assert [p.text for p in await store.preferences.for_user(ALICE)] == [
        "I only trade RTH",
        "answer in points",
    ]
    assert await store.preferences.remove(BOB, first.id) is False
    assert await store.preferences.remove(ALICE, first.id) is True
    assert [p.text for p in await store.preferences.for_user(ALICE)] == ["answer in points"]
    assert await store.preferences.clear(ALICE) == 1
    assert await store.preferences.for_user(ALICE) == []
    assert [p.text for p in await store.preferences.for_user(BOB)] == ["always English"]


async def test_only_the_latest_preferences_are_kept(tmp_path, clock: FakeClock) -> None:
    store = await open_store(
        sqlite_settings(tmp_path / "b.db", max_preferences_per_user=3), clock=clock
    )
    try:
        for n in range(5):
            await store.preferences.add(ALICE, f"rule {n}")
        assert [p.text for p in await store.preferences.for_user(ALICE)] == [
            "rule 2",
            "rule 3",
            "rule 4",
        ]
    finally:
        await store.close()


async def test_a_preference_has_sensible_text(store: Store) -> None:
    with pytest.raises(ValueError, match="needs some text"):
        await store.preferences.add(ALICE, "   ")
    with pytest.raises(ValueError, match="at most 300"):
        await store.preferences.add(ALICE, "x" * 301)
    with pytest.raises(ValueError, match="one of session"):
        await store.preferences.add(ALICE, "do as I say", kind="instructions")  # type: ignore[arg-type]


async def test_a_person_holds_one_preference_of_each_kind_but_many_notes(store: Store) -> None:
    await store.preferences.add(ALICE, "RTH", kind="session")
    await store.preferences.add(ALICE, "answer in points")
    await store.preferences.add(ALICE, "ETH", kind="session")  # replaces RTH
    await store.preferences.add(ALICE, "keep it short")
    await store.preferences.add(BOB, "RTH", kind="session")  # someone else's is theirs

    assert [(p.kind, p.text) for p in await store.preferences.for_user(ALICE)] == [
        ("note", "answer in points"),
        ("session", "ETH"),
        ("note", "keep it short"),
    ]
    assert [(p.kind, p.text) for p in await store.preferences.for_user(BOB)] == [("session", "RTH")]


async def test_a_group_upgraded_to_a_supergroup_moves_there_whole(
    store: Store, clock: FakeClock
) -> None:
    """Telegram gives the supergroup a new id: the group's settings, conversation, plans,
    outbox and work in flight move there in one go, the askers in payloads too; a second
    move (Telegram says it twice, and refuses sends to the old id) finds nothing to move."""
    supergroup = GROUP_CHAT - 1
    asker = {"chat_id": GROUP_CHAT, "user_id": ALICE, "chat_type": "group", "reply_to": 7}
    await store.chats.ensure(GROUP_CHAT, "group")
    await store.chats.update_settings(GROUP_CHAT, charts=False)
    await store.chats.set_instrument(GROUP_CHAT, "CL")
    await store.transcript.append(GROUP_CHAT, "q1", [NewMessage(role="user", payload={"t": 1})])
    plan = await store.pending.create(
        GROUP_CHAT, ALICE, "confirm", {"paused": {"state": {"asker": asker}}}
    )
    work = await store.in_flight.start(GROUP_CHAT, ALICE, "question", {"asker": asker})
    [queued] = await store.outbox.enqueue_many(GROUP_CHAT, [NewReply(kind="text", payload={})])
    clock.advance(timedelta(minutes=1))

    assert await store.chats.migrate(GROUP_CHAT, supergroup)

    chat = await store.chats.get(supergroup)
    assert chat is not None
    assert (chat.type, chat.instrument, chat.settings) == (
        "supergroup",
        "CL",
        ChatSettings(charts=False),
    )
    assert [m.chat_id for m in await store.transcript.recent(supergroup, 5)] == [supergroup]
    moved_asker = {**asker, "chat_id": supergroup, "chat_type": "supergroup"}
    moved_plan = await store.pending.get(plan.id)
    assert moved_plan is not None and moved_plan.chat_id == supergroup
    assert moved_plan.payload == {"paused": {"state": {"asker": moved_asker}}}
    moved_work = await store.in_flight.get(work.id)
    assert moved_work is not None
    assert (moved_work.chat_id, moved_work.payload) == (supergroup, {"asker": moved_asker})
    assert [(m.id, m.chat_id) for m in await store.outbox.unsent()] == [(queued.id, supergroup)]
    assert await store.transcript.recent(GROUP_CHAT, 5) == []

    # The supergroup's own choice since is not undone by Telegram's second notice.
    await store.chats.update_settings(supergroup, charts=True)
    assert not await store.chats.migrate(GROUP_CHAT, supergroup)
    assert (await store.chats.get(supergroup)).settings == ChatSettings()  # type: ignore[union-attr]


async def test_what_the_groups_anonymous_admins_asked_moves_as_the_supergroups(
    store: Store,
) -> None:
    """An anonymous admin asks as the group (its id the asker's): after the upgrade the
    question, plan and work in flight are the supergroup's, whose admins now write as it;
    Alice's stay hers."""
    supergroup = GROUP_CHAT - 1
    group = {"chat_id": GROUP_CHAT, "user_id": GROUP_CHAT, "chat_type": "group"}
    await store.chats.ensure(GROUP_CHAT, "group")
    await store.transcript.append(
        GROUP_CHAT,
        "q1",
        [
            NewMessage(role="user", payload={"t": 1}, user_id=GROUP_CHAT),
            NewMessage(role="user", payload={"t": 2}, user_id=ALICE),
        ],
    )
    plan = await store.pending.create(GROUP_CHAT, GROUP_CHAT, "confirm", {"asker": group})
    alices = await store.pending.create(GROUP_CHAT, ALICE, "confirm", {})
    work = await store.in_flight.start(GROUP_CHAT, GROUP_CHAT, "question", {"asker": group})

    await store.chats.migrate(GROUP_CHAT, supergroup)

    asked = [m.user_id for m in await store.transcript.recent(supergroup, 5)]
    assert asked == [supergroup, ALICE]
    moved = {"chat_id": supergroup, "user_id": supergroup, "chat_type": "supergroup"}
    moved_plan = await store.pending.get(plan.id)
    assert moved_plan is not None
    assert (moved_plan.user_id, moved_plan.payload) == (supergroup, {"asker": moved})
    assert (await store.pending.get(alices.id)).user_id == ALICE  # type: ignore[union-attr]
    moved_work = await store.in_flight.get(work.id)
    assert moved_work is not None
    assert (moved_work.user_id, moved_work.payload) == (supergroup, {"asker": moved})


async def test_what_the_groups_anonymous_admins_remembered_moves_as_the_supergroups(
    store: Store,
) -> None:
    """Preferences an anonymous admin stated (saved under the group's id) were left behind:
    after the upgrade the admins ask as the supergroup and found nothing remembered (r47a
    #2). Alice's stay hers; a later call keeps the single-valued one stated last."""
    supergroup = GROUP_CHAT - 1
    await store.chats.ensure(GROUP_CHAT, "group")
    await store.preferences.add(GROUP_CHAT, "only RTH", kind="session")
    await store.preferences.add(GROUP_CHAT, "answer in points")
    await store.preferences.add(ALICE, "only ETH", kind="session")

    assert await store.chats.migrate(GROUP_CHAT, supergroup)

    remembered = [(p.kind, p.text) for p in await store.preferences.for_user(supergroup)]
    assert remembered == [("session", "only RTH"), ("note", "answer in points")]
    assert await store.preferences.for_user(GROUP_CHAT) == []
    assert [p.text for p in await store.preferences.for_user(ALICE)] == ["only ETH"]

    # Work begun in the group, finishing after the move, stores one there: Telegram's
    # second notice moves it, in place of the earlier one of its kind.
    await store.preferences.add(GROUP_CHAT, "only ETH", kind="session")
    await store.chats.migrate(GROUP_CHAT, supergroup)
    remembered = [(p.kind, p.text) for p in await store.preferences.for_user(supergroup)]
    assert remembered == [("note", "answer in points"), ("session", "only ETH")]


async def test_a_move_is_read_by_every_replica(store: Store) -> None:
    """A replica that did not get Telegram's service message learns the move from the
    group's row (r47a #1: its sending pass over the supergroup did not wait for the
    group's answer under way), asked about the supergroup or about the group (replies
    still queued under the group's id, r47e #5)."""
    supergroup = GROUP_CHAT - 1
    await store.chats.ensure(GROUP_CHAT, "group")
    await store.chats.ensure(PRIVATE_CHAT, "private")
    assert await store.chats.moves_of([supergroup, GROUP_CHAT]) == []

    await store.chats.migrate(GROUP_CHAT, supergroup)

    assert await store.chats.moves_of([PRIVATE_CHAT, supergroup]) == [(GROUP_CHAT, supergroup)]
    assert await store.chats.moves_of([GROUP_CHAT]) == [(GROUP_CHAT, supergroup)]
    assert await store.chats.moves_of([PRIVATE_CHAT]) == []
    assert await store.chats.moves_of([]) == []


async def test_the_moves_of_a_long_outages_chats_are_read(store: Store) -> None:
    """r47e #2: after a long Telegram outage the sending pass asks about every chat with
    replies queued. Before, one bound parameter per chat: past 32767 (asyncpg) the
    statement was refused, and with it the whole pass, every minute."""
    supergroup = GROUP_CHAT - 1
    await store.chats.ensure(GROUP_CHAT, "group")
    await store.chats.migrate(GROUP_CHAT, supergroup)
    chats = [*range(-40_000, 0), supergroup]

    assert await store.chats.moves_of(chats) == [(GROUP_CHAT, supergroup)]


async def test_a_supergroup_first_seen_before_its_move_takes_the_groups_settings(
    store: Store, clock: FakeClock
) -> None:
    """A press in the supergroup can store it, with the defaults, before the move: the
    group's choices still go there."""
    supergroup = GROUP_CHAT - 1
    await store.chats.ensure(GROUP_CHAT, "group")
    await store.chats.update_settings(GROUP_CHAT, language="ru")
    clock.advance(timedelta(minutes=1))
    await store.chats.ensure(supergroup, "supergroup")

    await store.chats.migrate(GROUP_CHAT, supergroup)

    assert (await store.chats.get(supergroup)).settings.language == "ru"  # type: ignore[union-attr]


async def test_two_replicas_setting_one_kind_at_once_leave_one(settings, clock: FakeClock) -> None:
    """One person's "only RTH" and "only ETH" saved at the same moment by two replicas (two
    messages, HAProxy moving the chat). Each deleted the earlier one of that kind it could
    see, then stored its own: on PostgreSQL neither saw the other's, and both stayed, two
    contradictory sessions in every prompt after. Now the person's preferences are written
    one transaction at a time: one of them stays."""
    first = await open_store(settings, clock=clock)
    second = await open_store(settings, clock=clock)
    try:
        for round_ in range(10):
            await asyncio.gather(
                first.preferences.add(ALICE, f"RTH {round_}", kind="session"),
                second.preferences.add(ALICE, f"ETH {round_}", kind="session"),
            )
            sessions = [p for p in await first.preferences.for_user(ALICE) if p.kind == "session"]
            assert len(sessions) == 1, sessions
    finally:
        await first.close()
        await second.close()
