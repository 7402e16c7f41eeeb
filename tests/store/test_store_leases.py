"""Several replicas on one database: outbox rows and work in flight are held with leases.

Each replica is a store of its own (its own connection pool and ``replica_id``) on the same
database, as two bot processes would be; the clock is shared so that a lease can expire.
"""

from __future__ import annotations

import asyncio
import socket
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text as text_sql
from store_fixtures import ALICE, BOB, GROUP_CHAT, PRIVATE_CHAT, FakeClock

from bot.store import NewReply, Store, StoreSettings, open_store, replicas
from bot.store.housekeeping import keep_leases
from bot.store.replicas import ReplicaNameTaken

LEASE = timedelta(seconds=120)
#: How long a name is seen free before its replica counts as gone, shorter than the leases
#: here so that the leases do not decide.
GONE_AFTER = timedelta(seconds=5)
Opener = Callable[[str], Coroutine[Any, Any, Store]]


@pytest.fixture
async def replica(settings: StoreSettings, clock: FakeClock) -> AsyncIterator[Opener]:
    """Opens a store as the replica named; all are closed after the test."""
    opened: list[Store] = []

    async def open_as(name: str) -> Store:
        named = settings.model_copy(
            update={
                "replica_id": name,
                "outbox_lease_s": LEASE.total_seconds(),
                "work_lease_s": LEASE.total_seconds(),
            }
        )
        store = await open_store(named, clock=clock)
        opened.append(store)
        return store

    yield open_as
    for store in opened:
        await store.close()


def _texts(count: int) -> list[NewReply]:
    return [NewReply(kind="text", payload={"text": f"part {n}"}) for n in range(count)]


async def test_two_senders_send_every_row_exactly_once_in_order(
    replica: Opener, clock: FakeClock
) -> None:
    # A replica queued 300 replies in 30 chats and died before sending any.
    dead = await replica("dead")
    chats = [1000 + n for n in range(30)]
    for chat in chats:
        await dead.chats.ensure(chat, "private")
        await dead.outbox.enqueue_many(chat, _texts(10))
    clock.advance(LEASE + timedelta(seconds=1))
    queued = {reply.id: reply.chat_id for reply in await dead.outbox.unsent()}
    assert len(queued) == 300

    sent: list[tuple[str, int]] = []

    async def sender(store: Store, name: str, order: list[int]) -> None:
        # As the bot flushes: chat by chat, both replicas going through every chat. From
        # opposite ends, so that each surely sends some and they cross in the middle, whoever
        # the scheduler favours (in the same order, one can stay a chat ahead throughout).
        for chat in order:
            for reply in await store.outbox.claim(chat):
                sent.append((name, reply.id))
                await asyncio.sleep(0)  # the other sender runs meanwhile
                assert await store.outbox.mark_sent({reply.id: reply.id}) == 1

    first, second = await replica("a"), await replica("b")
    await asyncio.gather(sender(first, "a", chats), sender(second, "b", chats[::-1]))

    ids = [reply_id for _, reply_id in sent]
    assert sorted(ids) == sorted(queued)  # every row once: none twice, none left
    assert await first.outbox.unsent() == []
    assert {name for name, _ in sent} == {"a", "b"}  # they did send side by side
    by_chat: dict[int, list[int]] = defaultdict(list)
    for reply_id in ids:
        by_chat[queued[reply_id]].append(reply_id)
    assert all(order == sorted(order) for order in by_chat.values())


async def test_a_reply_is_the_senders_until_its_lease_expires(
    replica: Opener, clock: FakeClock
) -> None:
    first, second = await replica("a"), await replica("b")
    await first.chats.ensure(PRIVATE_CHAT, "private")
    [reply] = await first.outbox.enqueue_many(PRIVATE_CHAT, _texts(1))
    assert (reply.lease_owner, reply.lease_expires_at) == ("a", clock.now + LEASE)

    # "a" is sending it: "b" leaves it alone, however often it looks.
    assert await second.outbox.claim() == []
    clock.advance(LEASE - timedelta(seconds=1))
    assert await second.outbox.claim() == []

    # "a" died: once its lease has expired the reply is "b"'s, and no longer "a"'s.
    clock.advance(timedelta(seconds=2))
    [taken] = await second.outbox.claim()
    assert (taken.id, taken.lease_owner) == (reply.id, "b")
    assert await first.outbox.claim() == []
    assert await second.outbox.mark_sent({taken.id: 77}) == 1
    assert await second.outbox.claim() == []


async def test_a_replica_restarted_under_its_name_takes_its_replies_back_at_once(
    replica: Opener,
) -> None:
    before = await replica("bot-1")
    await before.chats.ensure(PRIVATE_CHAT, "private")
    replies = await before.outbox.enqueue_many(PRIVATE_CHAT, _texts(2))
    await before.close()

    after = await replica("bot-1")
    assert [r.id for r in await after.outbox.claim()] == [r.id for r in replies]


async def test_a_reply_waits_behind_an_earlier_one_held_elsewhere(
    replica: Opener, clock: FakeClock
) -> None:
    first, second = await replica("a"), await replica("b")
    await first.chats.ensure(PRIVATE_CHAT, "private")
    await first.chats.ensure(GROUP_CHAT, "group")
    [earlier] = await first.outbox.enqueue_many(PRIVATE_CHAT, _texts(1))
    [later] = await second.outbox.enqueue_many(PRIVATE_CHAT, _texts(1))
    [elsewhere] = await second.outbox.enqueue_many(GROUP_CHAT, _texts(1))

    # "b" may not overtake "a" in the same chat; another chat is not held up.
    assert [r.id for r in await second.outbox.claim()] == [elsewhere.id]
    clock.advance(LEASE + timedelta(seconds=1))
    assert [r.id for r in await second.outbox.claim()] == [earlier.id, later.id, elsewhere.id]


async def test_a_replica_name_is_held_by_one_process_and_a_gone_ones_replies_go_first(
    replica: Opener, settings: StoreSettings, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """p46n #1, #4: two live processes under one name kept each other's leases alive, and a
    killed replica's queued reply went out only after its lease (360 s), below newer ones.
    Now a replica holds its name while it lives: a twin cannot take it, and once the
    holder is gone (its name free at reads ``gone_after`` apart, a work lease in the bot,
    not the outbox's 360 s) its replies are claimed, before the newer ones of its chat."""
    if settings.migrates_at_start:
        pytest.skip("SQLite runs one process: no name to hold")
    monkeypatch.setattr(replicas, "HOLD_TRIES_S", 0.2)
    first, second = await replica("a"), await replica("b")
    await first.replicas.hold()
    await second.replicas.hold()
    with pytest.raises(ReplicaNameTaken):
        await (await replica("a")).replicas.hold()
    await first.chats.ensure(PRIVATE_CHAT, "private")
    [earlier] = await first.outbox.enqueue_many(PRIVATE_CHAT, _texts(1))
    [later] = await second.outbox.enqueue_many(PRIVATE_CHAT, _texts(1))
    second.replicas.gone_after = GONE_AFTER
    assert await second.replicas.gone(["a", "c"]) == set()  # "c": free at one read only
    clock.advance(GONE_AFTER)
    assert await second.replicas.gone(["a", "c"]) == {"c"}
    assert await second.outbox.claim() == []  # "a" lives: its reply goes first

    await first.close()  # "a" is killed within its lease
    assert await second.outbox.claim() == []  # free at one read: maybe a dropped lock
    clock.advance(GONE_AFTER)
    assert [r.id for r in await second.outbox.claim()] == [earlier.id, later.id]
    await (await replica("a")).replicas.hold()  # its name is free for its next life


async def _drop_name_lock(store: Store, name: str) -> None:
    """The server drops the connection holding ``name``'s lock (a PostgreSQL restart or
    failover, ``idle_session_timeout``, a proxy cutting an idle connection), and the lock is
    gone: pg_terminate_backend only signals the backend, which lets its locks go as it exits
    (read at once, the lock was still held once under three test workers)."""
    held = "FROM pg_locks WHERE locktype = 'advisory' AND classid = :cls AND objid = :key"
    key = {"cls": replicas.LOCK_CLASS, "key": replicas.name_key(name)}
    async with store._engine.connect() as conn:
        await conn.execute(text_sql(f"SELECT pg_terminate_backend(pid) {held}"), key)
        await conn.commit()
        for _ in range(500):
            if not (await conn.execute(text_sql(f"SELECT count(*) {held}"), key)).scalar():
                return
            await conn.commit()  # a fresh snapshot of pg_locks
            await asyncio.sleep(0.01)
    raise AssertionError(f"{name}'s lock outlived its connection by 5 s")


async def test_a_replica_whose_name_lock_dropped_takes_it_again(
    replica: Opener, settings: StoreSettings, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """p46ah #1: the lock's connection dropped and the replica still believed it held its
    name: another replica counted it gone and claimed the reply it was sending (sent
    twice), and a twin could start under its name. Now the renewal pass's ``check``
    finds the dead connection and holds the name again on a fresh one, and until then
    (a third of a work lease at most) the others do not count it gone: a name counts as
    gone once seen free for ``gone_after``."""
    if settings.migrates_at_start:
        pytest.skip("SQLite runs one process: no name to hold")
    monkeypatch.setattr(replicas, "HOLD_TRIES_S", 0.2)
    first, second = await replica("a"), await replica("b")
    second.replicas.gone_after = GONE_AFTER
    await first.replicas.hold()
    await second.replicas.hold()
    await first.chats.ensure(PRIVATE_CHAT, "private")
    await first.outbox.enqueue_many(PRIVATE_CHAT, _texts(1))
    assert len(await first.outbox.claim(PRIVATE_CHAT)) == 1  # "a" is sending it

    await _drop_name_lock(second, "a")
    # The loss itself, before a's check: the name is free, but b cannot tell a dropped lock
    # from a dead replica at one read. Before, b took a's reply it was sending: sent twice.
    assert await second.replicas.gone(["a"]) == set()
    assert await second.outbox.claim(PRIVATE_CHAT) == []
    clock.advance(GONE_AFTER / 2)  # a's check comes within a third of a work lease
    await first.replicas.check()
    assert first.replicas.held
    clock.advance(GONE_AFTER)
    assert await second.replicas.gone(["a"]) == set()
    assert await second.outbox.claim(PRIVATE_CHAT) == []  # "a" lives: its reply is its own
    with pytest.raises(ReplicaNameTaken):
        await (await replica("a")).replicas.hold()
    await first.replicas.check()  # a live connection: nothing to do
    assert first.replicas.held


async def test_a_replica_whose_name_was_taken_after_its_lock_dropped_stops(
    replica: Opener, settings: StoreSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """p46ah #1: when another process took the name while the lock's connection was down,
    the lease renewal ends with ``ReplicaNameTaken`` (the bot then exits as a start under a
    taken name does) and the replica no longer says it holds its name."""
    if settings.migrates_at_start:
        pytest.skip("SQLite runs one process: no name to hold")
    monkeypatch.setattr(replicas, "HOLD_TRIES_S", 0.2)
    first, second = await replica("a"), await replica("b")
    await first.replicas.hold()
    await second.replicas.hold()
    await _drop_name_lock(second, "a")
    twin = await replica("a")
    await twin.replicas.hold()
    with pytest.raises(ReplicaNameTaken):
        await asyncio.wait_for(keep_leases(first, every_s=0.01), timeout=30)
    assert not first.replicas.held
    assert await first.replicas.gone(["b"]) == set()  # not holding: it judges no one gone
    assert await second.replicas.gone(["a"]) == set()  # the twin holds "a"


async def test_a_restart_under_a_new_name_sends_the_dead_processs_replies_at_once(
    replica: Opener, settings: StoreSettings, clock: FakeClock
) -> None:
    """p46ah #5: a process killed with a reply on the wire, restarted under a new name (a
    recreated container's host name). On SQLite nothing holds a name, so the dead one's
    reply stayed leased for the whole lease (360 s by default) and every new reply to the
    chat waited behind it (``Sender._after_earlier``). Now a bot holding its name on SQLite
    is the file's only process: the old name is gone, its reply claimed at once, before
    the new one. On PostgreSQL the old name's lock went with its process: the same."""
    old = await replica("host-1")
    await old.chats.ensure(PRIVATE_CHAT, "private")
    [chart] = await old.outbox.enqueue_many(PRIVATE_CHAT, _texts(1))
    assert [r.id for r in await old.outbox.claim(PRIVATE_CHAT)] == [chart.id]
    await old.close()  # killed with it on the wire

    new = await replica("host-2")
    await new.replicas.hold()
    new.replicas.gone_after = GONE_AFTER
    [hello] = await new.outbox.enqueue_many(PRIVATE_CHAT, _texts(1))
    assert await new.outbox.queued_elsewhere(PRIVATE_CHAT, hello.id)  # the chart first
    if not settings.migrates_at_start:  # PostgreSQL: "host-1" free at reads GONE_AFTER apart
        assert await new.outbox.claim(PRIVATE_CHAT) == []
        clock.advance(GONE_AFTER)
    claimed = await new.outbox.claim(PRIVATE_CHAT)
    assert [(r.id, r.lease_owner) for r in claimed] == [(chart.id, "host-2"), (hello.id, "host-2")]
    assert await new.outbox.mark_sent({chart.id: 1}) == 1
    assert not await new.outbox.queued_elsewhere(PRIVATE_CHAT, hello.id)


async def test_a_sender_renews_the_lease_of_what_it_still_has_to_send(
    replica: Opener, clock: FakeClock
) -> None:
    """p43e #4: a lease taken when a reply is queued covers one message's send; before each
    message the sender holds the rest for one more, and no longer once another replica
    has taken it."""
    first, second = await replica("a"), await replica("b")
    await first.chats.ensure(PRIVATE_CHAT, "private")
    replies = await first.outbox.enqueue_many(PRIVATE_CHAT, _texts(3))
    assert await first.outbox.hold_to_send(replies[0])
    # The first message took most of the lease: the rest are held for another one.
    clock.advance(LEASE - timedelta(seconds=10))
    assert await first.outbox.hold_to_send(replies[1])
    clock.advance(timedelta(seconds=20))  # past the lease they were queued with
    assert await second.outbox.claim() == []

    clock.advance(LEASE)  # "a" died sending the second: "b" takes them over
    assert [r.id for r in await second.outbox.claim()] == [r.id for r in replies]
    # "a" was only slow, and comes back to the third: it is "b"'s now.
    assert not await first.outbox.hold_to_send(replies[2])


async def test_a_stand_in_takes_the_refused_messages_place(replica: Opener) -> None:
    """p43e #5: the message standing in for a refused one (a chart's caption) is queued in
    its place, ahead of the messages queued after it, whoever sends them."""
    first, second = await replica("a"), await replica("b")
    await first.chats.ensure(PRIVATE_CHAT, "private")
    chart, words = await first.outbox.enqueue_many(PRIVATE_CHAT, _texts(2))
    assert await first.outbox.mark_failed(chart.id, "BadRequest: PHOTO_INVALID")
    [caption] = _texts(1)
    stand_in = await first.outbox.stand_in(chart, caption)
    assert stand_in is not None
    assert (stand_in.id, stand_in.status, stand_in.lease_owner) == (chart.id, "queued", "a")
    assert [r.id for r in await first.outbox.unsent(PRIVATE_CHAT)] == [chart.id, words.id]
    assert await second.outbox.claim() == []  # "a" holds both
    assert await first.outbox.stand_in(chart, caption) is None  # queued, no longer refused


async def test_held_replies_are_not_claimed_until_released(replica: Opener) -> None:
    first, second = await replica("a"), await replica("b")
    await first.chats.ensure(PRIVATE_CHAT, "private")
    csv = NewReply(kind="document", payload={"filename": "x.csv"}, content=b"a,b", held=True)
    [held] = await first.outbox.enqueue_many(PRIVATE_CHAT, [csv], question_id="q1")
    assert held.lease_owner is None
    assert await second.outbox.claim() == []

    assert await second.outbox.release(held.id)  # the button was pressed on "b"
    assert await first.outbox.claim() == []
    assert [r.id for r in await second.outbox.claim()] == [held.id]


async def test_work_of_a_dead_replica_is_taken_over_after_its_lease(
    replica: Opener, clock: FakeClock
) -> None:
    first, second = await replica("a"), await replica("b")
    await first.chats.ensure(PRIVATE_CHAT, "private")
    question = await first.in_flight.start(PRIVATE_CHAT, ALICE, "question", {"text": "hi"})
    action = await first.pending.create(PRIVATE_CHAT, BOB, "confirm", {"plan": "mean"})
    run = (await first.pending.claim(action.id, BOB, work={"action_id": action.id})).work_id
    assert run is not None

    # "a" lives and renews its leases: nothing is taken from it.
    for _ in range(3):
        clock.advance(LEASE * 0.75)
        assert await first.in_flight.renew() == 2
        assert await second.in_flight.take_over() == []

    # "a" stops renewing (it died): after the lease, "b" has both, oldest first, once.
    clock.advance(LEASE + timedelta(seconds=1))
    taken = await second.in_flight.take_over()
    assert [(w.id, w.kind, w.lease_owner) for w in taken] == [
        (question.id, "question", "b"),
        (run, "run", "b"),
    ]
    assert await second.in_flight.take_over() == []
    assert await first.in_flight.renew() == 0  # "a" cannot take it back by renewing


async def test_two_replicas_taking_over_at_once_split_the_work(
    replica: Opener, clock: FakeClock
) -> None:
    dead = await replica("dead")
    await dead.chats.ensure(PRIVATE_CHAT, "private")
    started = [
        (await dead.in_flight.start(PRIVATE_CHAT, ALICE, "question", {"n": n})).id
        for n in range(40)
    ]
    clock.advance(LEASE + timedelta(seconds=1))
    first, second = await replica("a"), await replica("b")

    results = await asyncio.gather(*(s.in_flight.take_over() for s in [first, second] * 3))

    taken = [work.id for batch in results for work in batch]
    assert sorted(taken) == started


async def test_at_start_a_replica_takes_back_its_own_work_at_once(
    replica: Opener, clock: FakeClock
) -> None:
    before = await replica("bot-1")
    await before.chats.ensure(PRIVATE_CHAT, "private")
    work = await before.in_flight.start(PRIVATE_CHAT, ALICE, "question", {"text": "hi"})
    await before.close()

    after, other = await replica("bot-1"), await replica("bot-2")
    assert await other.in_flight.take_over() == []  # still within bot-1's lease
    assert await after.in_flight.take_over() == []  # a live replica's own work is its own
    assert [w.id for w in await after.in_flight.take_over(own=True)] == [work.id]


async def test_the_age_of_the_oldest_unsent_reply_is_what_to_watch(
    replica: Opener, clock: FakeClock
) -> None:
    store = await replica("a")
    assert await store.outbox.oldest_unsent_age() is None
    await store.chats.ensure(PRIVATE_CHAT, "private")
    [first] = await store.outbox.enqueue_many(PRIVATE_CHAT, _texts(1))
    clock.advance(timedelta(seconds=30))
    await store.outbox.enqueue_many(PRIVATE_CHAT, _texts(1))
    clock.advance(timedelta(seconds=15))
    assert await store.outbox.oldest_unsent_age() == timedelta(seconds=45)
    await store.outbox.mark_sent({first.id: 1})
    assert await store.outbox.oldest_unsent_age() == timedelta(seconds=15)


def test_replicas_are_named_by_default(settings: StoreSettings) -> None:
    if settings.migrates_at_start:
        # One process per SQLite file, whatever the host is called after a redeploy.
        assert settings.replica_id == "local"
    else:
        assert settings.replica_id == socket.gethostname()
    assert settings.model_copy(update={"replica_id": "bot-2"}).replica_id == "bot-2"


def _update(update_id: int) -> tuple[int, dict[str, object]]:
    return update_id, {"update_id": update_id, "message": {"text": f"question {update_id}"}}


async def test_a_live_replicas_unhandled_update_is_not_taken_by_another(
    replica: Opener, clock: FakeClock
) -> None:
    first, second = await replica("a"), await replica("b")
    assert await first.updates.receive([_update(1), _update(2)]) == [1, 2]
    await first.updates.handled(1)

    # "a" lives and renews its leases: "b" takes nothing, neither at its start nor later.
    assert await second.updates.take_over(own=True) == []
    for _ in range(3):
        clock.advance(LEASE * 0.75)
        assert await first.updates.renew() == 1  # the handled update needs no lease
        assert await second.updates.take_over() == []

    # "a" stops renewing (it died): after the lease, "b" has the unhandled one, once.
    clock.advance(LEASE + timedelta(seconds=1))
    assert await second.updates.take_over() == [_update(2)]
    assert await second.updates.take_over() == []
    assert await first.updates.renew() == 0  # "a" cannot take it back by renewing
    assert await first.updates.take_over(own=True) == []  # nor at its restart: "b" holds it
    assert await second.updates.unhandled() == [_update(2)]  # taken, still to be handled
    await second.updates.handled(2)
    clock.advance(LEASE + timedelta(seconds=1))
    assert await first.updates.take_over() == []  # handled: nobody's any more


async def test_an_expired_update_is_taken_by_exactly_one_of_two_racing_replicas(
    replica: Opener, clock: FakeClock
) -> None:
    dead = await replica("dead")
    stored = [_update(n) for n in range(100, 140)]
    assert await dead.updates.receive(stored) == [update_id for update_id, _ in stored]
    clock.advance(LEASE + timedelta(seconds=1))
    first, second = await replica("a"), await replica("b")

    results = await asyncio.gather(*(s.updates.take_over() for s in [first, second] * 3))

    taken = [item for batch in results for item in batch]
    assert sorted(taken, key=lambda item: item[0]) == stored  # each once: none twice, none left
    assert all(batch == sorted(batch, key=lambda item: item[0]) for batch in results)
    assert await first.updates.take_over() == await second.updates.take_over() == []


async def test_at_start_a_replica_replays_its_own_updates_at_once(
    replica: Opener, clock: FakeClock
) -> None:
    before = await replica("bot-1")
    await before.updates.receive([_update(7), _update(8)])
    await before.close()

    after, other = await replica("bot-1"), await replica("bot-2")
    assert await other.updates.take_over(own=True) == []  # still within bot-1's lease
    assert await after.updates.take_over() == []  # the periodic pass leaves its own alone
    assert await after.updates.take_over(own=True) == [_update(7), _update(8)]
    assert await after.updates.take_over(own=True) == [_update(7), _update(8)]  # still its own
    clock.advance(LEASE + timedelta(seconds=1))
    assert await other.updates.take_over() == [_update(7), _update(8)]  # it died again


async def test_updates_stored_before_replicas_had_names_are_anyones(replica: Opener) -> None:
    store = await replica("a")
    await store.updates.receive([_update(3)])
    async with store._engine.begin() as conn:  # as migration 0008 leaves an older row
        await conn.execute(
            text_sql("UPDATE received_updates SET lease_owner = NULL, lease_expires_at = NULL")
        )
    assert await (await replica("b")).updates.take_over() == [_update(3)]


async def test_a_cancel_elsewhere_stops_the_questions_asked_before_it_by_update_order(
    settings: StoreSettings, clock: FakeClock
) -> None:
    """p46ah #8: replica "a" runs 30 s ahead of "b", where Alice's /cancel (update 20)
    arrives. Her question of update 19, stamped by "a" 30 s later than "b"'s clock, is
    stopped; the one of update 21, asked after the /cancel, is not, nor is one of hers
    that "b" holds itself. A row without an update id falls back to the two clocks."""
    ahead = FakeClock(clock.now + timedelta(seconds=30))
    a = await open_store(settings.model_copy(update={"replica_id": "a"}), clock=ahead)
    b = await open_store(settings.model_copy(update={"replica_id": "b"}), clock=clock)
    try:
        await a.chats.ensure(PRIVATE_CHAT, "private")
        asked = {
            update_id: await a.in_flight.start(
                PRIVATE_CHAT, ALICE, "question", {"text": "range?"}, update_id=update_id
            )
            for update_id in (19, 21)
        }
        unnumbered = await a.in_flight.start(PRIVATE_CHAT, ALICE, "question", {"text": "hi"})
        own = await b.in_flight.start(PRIVATE_CHAT, ALICE, "question", {}, update_id=18)
        arrived = clock.now + timedelta(seconds=1)
        assert (
            await b.in_flight.stop_elsewhere(PRIVATE_CHAT, ALICE, update_id=20, before=arrived) == 1
        )
        works = [asked[19].id, asked[21].id, unnumbered.id, own.id]
        assert await a.in_flight.stopped(works) == {asked[19].id}
        # By the clocks, "a"'s row of 30 s ahead is after the /cancel; 40 s on, before it.
        later = arrived + timedelta(seconds=40)
        assert (
            await b.in_flight.stop_elsewhere(PRIVATE_CHAT, ALICE, update_id=None, before=later) == 2
        )
        assert await a.in_flight.stopped(works) == {asked[19].id, asked[21].id, unnumbered.id}
    finally:
        await a.close()
        await b.close()


async def test_after_a_postgresql_restart_no_replica_takes_a_live_ones_reply(
    replica: Opener, settings: StoreSettings, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL restarted while two replicas serve: every name lock goes with its
    connection at once, and each replica's pooled connections come back before its lock
    does (its ``check``, every third of a work lease). Each has a reply on the wire.
    Before: each one's next claim read the other's name free and took its reply, which
    both then sent (twice each), however long before its own check. Now a replica whose
    own lock is not granted judges no one gone, and one that holds its lock again waits
    until the other's name has been free for ``gone_after``, by which time a live replica
    holds it again: each sends its own reply, once."""
    if settings.migrates_at_start:
        pytest.skip("SQLite runs one process: no name to hold")
    monkeypatch.setattr(replicas, "HOLD_TRIES_S", 0.2)
    first, second = await replica("a"), await replica("b")
    for store in (first, second):
        await store.replicas.hold()
        store.replicas.gone_after = GONE_AFTER
    await first.chats.ensure(PRIVATE_CHAT, "private")
    await first.chats.ensure(GROUP_CHAT, "group")
    await first.outbox.enqueue_many(PRIVATE_CHAT, _texts(1))
    await second.outbox.enqueue_many(GROUP_CHAT, _texts(1))
    assert len(await first.outbox.claim(PRIVATE_CHAT)) == 1  # each on the wire
    assert len(await second.outbox.claim(GROUP_CHAT)) == 1

    await _drop_name_lock(second, "a")  # the restart: both locks gone with their connections
    await _drop_name_lock(second, "b")
    assert await first.outbox.claim(GROUP_CHAT) == []  # neither has checked its lock yet
    assert await second.outbox.claim(PRIVATE_CHAT) == []
    await first.replicas.check()  # "a" holds its name again first
    assert await first.outbox.claim(GROUP_CHAT) == []  # "b" free at one read: maybe a lock
    clock.advance(GONE_AFTER / 2)
    await second.replicas.check()
    clock.advance(GONE_AFTER)
    assert await first.outbox.claim(GROUP_CHAT) == []
    assert await second.outbox.claim(PRIVATE_CHAT) == []
