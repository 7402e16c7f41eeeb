"""Two replicas behind HAProxy, two workers on Redis, one PostgreSQL: many chats at once, then
one part broken at a time. What each person ends up with is asserted chat by chat.

Run with `make test-scale` (HAProxy comes from Debian's package); not part of `make test`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_bot_api import FakeBotAPI
from scale_cluster import (
    Cluster,
    ask,
    charts,
    plan_status,
    plans,
    press_run,
    running_cluster,
    tag,
    texts,
)
from servers.postgres import PostgresServer

from barb.settings import EngineSettings

pytestmark = pytest.mark.scale

CHATS = [7001 + 13 * i for i in range(12)]


@pytest.fixture
async def cluster(
    fake_telegram: FakeBotAPI,
    postgres_server: PostgresServer,
    sample_settings: EngineSettings,
    tmp_path: Path,
) -> AsyncIterator[Cluster]:
    data_dir = Path(sample_settings.data_dir).resolve()
    async with running_cluster(fake_telegram, postgres_server, tmp_path, data_dir) as cluster:
        watcher = asyncio.create_task(cluster.watch_owners())
        try:
            yield cluster
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher


async def ask_everyone(cluster: Cluster, chats: list[int], question: str) -> None:
    """Each chat says hello and asks at once; every chat gets its greeting, then its plan."""
    fake = cluster.fake
    for chat in chats:
        ask(fake, chat, f"hello {tag(chat)}")
        ask(fake, chat, f"{tag(chat)} {question}")
    await cluster.wait_until(
        lambda: all(plans(fake, chat) for chat in chats), f"{len(chats)} plans", timeout=90
    )


async def run_everyone(cluster: Cluster, chats: list[int]) -> None:
    for chat in chats:
        press_run(cluster.fake, chat, plans(cluster.fake, chat)[0])


def assert_conversation(cluster: Cluster, chat: int, *, charts_seen: int = 1) -> None:
    """The greeting, then one plan, then the answer's chart captioned with this chat's own
    answer (``charts_seen`` times), in that order; the plan says "Done."."""
    fake = cluster.fake
    said = texts(fake, chat)
    [plan] = plans(fake, chat)
    assert said[0] == f"Hi {tag(chat)}!", cluster.describe()
    assert said[1] == plan["text"] and f"Plan {tag(chat)}:" in plan["text"]
    assert len(said) == 2, said  # no sentence, nothing twice
    photos = charts(fake, chat)
    assert len(photos) == charts_seen, cluster.describe()
    for photo in photos:
        assert photo["caption"].startswith(f"Answer {tag(chat)}: Result:"), photo["caption"]
    ids = [m["message_id"] for m in [*delivered_in_order(cluster, chat)]]
    assert ids == sorted(ids)
    assert plan_status(fake, chat, plan) == "⏵ Done."


def delivered_in_order(cluster: Cluster, chat: int) -> list[dict]:
    """Every message the chat received, in the order the fake took them."""
    return [
        r.result
        for r in cluster.fake.requests
        if r.method in ("sendMessage", "sendPhoto")
        and r.params.get("chat_id") == chat
        and r.status == 200
    ]


async def all_done(cluster: Cluster, chats: list[int]) -> None:
    fake = cluster.fake
    await cluster.wait_until(
        lambda: all(
            charts(fake, c) and plan_status(fake, c, plans(fake, c)[0]) == "⏵ Done." for c in chats
        ),
        "every answer and every plan marked done",
        timeout=120,
    )
    await cluster.settled()


async def test_many_chats_through_haproxy_each_answered_once_in_order(cluster: Cluster) -> None:
    await ask_everyone(cluster, CHATS, "average range by weekday?")
    await run_everyone(cluster, CHATS)
    await all_done(cluster, CHATS)
    for chat in CHATS:
        assert_conversation(cluster, chat)
    # Each chat stayed on one replica, and both replicas served some.
    assert all(len(names) == 1 for names in cluster.owners.values()), cluster.owners
    assert {next(iter(n)) for n in cluster.owners.values()} == {"replica-1", "replica-2"}
    # Both workers computed: the queue spread the jobs.
    for worker in cluster.workers:
        assert "Task barb.query[" in worker.log.read_text()
    # Telegram's webhook calls all came through HAProxy with the secret, and were taken.
    assert {status for _, status in cluster.fake.webhook_deliveries} == {200}


async def test_a_worker_killed_mid_query_its_job_is_run_by_the_other(cluster: Cluster) -> None:
    """kill -9 of a whole `barb worker` (its children too) while it computes: the job it had
    taken, never acknowledged, goes back to the queue after the visibility timeout and the
    other worker runs it. Every person gets exactly one answer."""
    chats = CHATS[:4]
    doomed, survivor = cluster.workers
    await ask_everyone(cluster, chats, "heavy statistic please")
    await run_everyone(cluster, chats)
    await cluster.wait_until(lambda: cluster.started_by(doomed), "a job running on worker 1")
    [job] = cluster.started_by(doomed)
    doomed.kill()

    await all_done(cluster, chats)
    for chat in chats:
        assert_conversation(cluster, chat)
    # The killed worker's job was taken again, by the other worker.
    assert f"Task barb.query[{job}] received" in survivor.log.read_text()


async def test_a_replica_killed_mid_send_its_chats_are_finished_by_the_other(
    cluster: Cluster,
) -> None:
    """kill -9 of one replica while Telegram is slow to take the charts: HAProxy sends its
    chats to the other replica, which takes over its work and its replies once their leases
    expire. A chart that was on the wire at the kill was carried out by Telegram and is sent
    again (the bot never heard back: the one duplicate a kill can cause); every other chat
    gets exactly one answer, and every plan says "Done."."""
    fake = cluster.fake
    victim = cluster.replicas[0]
    await ask_everyone(cluster, CHATS, "average range by weekday?")
    victim_chats = cluster.chats_of(victim)
    assert victim_chats and victim_chats != set(CHATS), cluster.owners
    for chat in CHATS:
        fake.fault_next("sendPhoto", "slow", chat_id=chat, delay_s=3.0)
    await run_everyone(cluster, CHATS)
    await cluster.wait_until(
        lambda: any(fake.calls("sendPhoto", chat_id=c) for c in victim_chats),
        "a chart of the victim's chats on the wire",
    )
    victim.kill()
    # What the victim had sent before it died (nobody else sends its chats' replies until
    # their leases expire).
    await asyncio.sleep(0.5)
    on_the_wire = {c for c in victim_chats if fake.calls("sendPhoto", chat_id=c)}

    await all_done(cluster, CHATS)
    for chat in CHATS:
        assert_conversation(cluster, chat, charts_seen=2 if chat in on_the_wire else 1)
    # The surviving replica took the victim's unfinished work over.
    survivor = cluster.replicas[1].env["BARB_REPLICA_ID"]
    taken_over = {c for c in victim_chats if survivor in cluster.owners[c]}
    assert victim_chats - on_the_wire <= taken_over
