"""Two replicas behind HAProxy, two workers on Redis, one PostgreSQL: many chats at once, then
one part broken at a time. What each person ends up with is asserted chat by chat.

Run with `make test-scale` (HAProxy comes from Debian's package); not part of `make test`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pandas as pd
import pytest
from fake_bot_api import FakeBotAPI
from scale_cluster import (
    SECRET,
    Cluster,
    ask,
    charts,
    plan_status,
    plans,
    press_run,
    run_button,
    running_cluster,
    tag,
    texts,
)
from servers.postgres import PostgresServer, running_postgres

from barb.data.store import read_meta
from barb.i18n import day
from barb.settings import EngineSettings
from bot.telegram.intake import WEBHOOK_PATH
from bot.texts import t

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
        assert answers_question(photo["caption"], tag(chat)), photo["caption"]
    ids = [m["message_id"] for m in [*delivered_in_order(cluster, chat)]]
    # In order, but a chart on the wire at a kill and its resend may end either way round:
    # Telegram holds the first for its 3 s delay, and the other replica's copy, sent once
    # the reply's lease ran out, can end first (seen on a loaded machine).
    before_charts = len(ids) - charts_seen
    assert ids[:before_charts] == sorted(ids[:before_charts]), ids
    assert min(ids[before_charts:]) > max(ids[:before_charts]), ids
    assert plan_status(fake, chat, plan) == "⏵ Done."


def answers_question(caption: str, question: str) -> bool:
    """The chart's caption is the headline (the number, from the engine) and then the model's
    commentary, which quotes the question's tag and the result it was given."""
    return f"\n\nAnswer {question}: Result:" in caption


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
    # The surviving replica took the victim's unfinished work over, or, where the work was
    # done before the kill, its queued replies.
    survivor = cluster.replicas[1].env["BARB_REPLICA_ID"]
    taken_over = {
        c for c in victim_chats if survivor in cluster.owners[c] | cluster.senders.get(c, set())
    }
    assert victim_chats - on_the_wire <= taken_over


async def test_a_recent_period_counts_from_the_workers_data_not_from_today(
    cluster: Cluster,
) -> None:
    """The replicas hold no data (only the workers' machines do, as deployed): /start names
    the workers' data, and "the last 3 days" is shown and run as the sample's last three
    trading days, which the workers say they serve. Before, /start said "data ? — ?" and
    the plan counted the days from today while the workers ran another span."""
    fake = cluster.fake
    [chat] = CHATS[:1]
    ask(fake, chat, "/start")  # it says the workers' data too (before: "data ? — ?")
    meta = read_meta(cluster.data_dir / "NQ.parquet")
    await cluster.wait_until(lambda: texts(fake, chat), "the welcome")
    assert (
        f"data {day(meta.first_date, 'en')} — {day(meta.last_date, 'en')}" in texts(fake, chat)[0]
    )
    ask(fake, chat, f"{tag(chat)} recent average range?")
    await cluster.wait_until(lambda: plans(fake, chat), "the plan")
    [plan] = plans(fake, chat)
    bars = pd.read_parquet(cluster.data_dir / "NQ.parquet", columns=["trading_date"])
    first, *_, last = sorted(bars["trading_date"].unique())[-3:]
    span = f"{pd.Timestamp(first):%Y-%m-%d} — {pd.Timestamp(last):%Y-%m-%d}"
    assert f"Period: {span}" in plan["text"], plan["text"]
    press_run(fake, chat, plan)
    await cluster.wait_until(lambda: charts(fake, chat), "the answer")
    # The plan ran the dates it showed (its stored query).
    [done] = await cluster.rows(
        "SELECT payload::text AS payload FROM pending_actions WHERE chat_id = $1", chat
    )
    assert f'"period": "{span.replace(" — ", ":")}"' in done["payload"], done["payload"]


async def answered(cluster: Cluster, chat: int, number: int) -> None:
    """The chat's question ``number`` gets its plan; Run on it gives its answer."""
    fake = cluster.fake
    ask(fake, chat, f"{tag(chat, number)} average range by weekday?")
    await cluster.wait_until(lambda: len(plans(fake, chat)) == number, f"plan {number} of {chat}")
    plan = plans(fake, chat)[-1]
    assert f"Plan {tag(chat, number)}:" in plan["text"]
    press_run(fake, chat, plan)
    await cluster.wait_until(
        lambda: any(tag(chat, number) in p["caption"] for p in charts(fake, chat))
        and plan_status(fake, chat, plan) == "⏵ Done.",
        f"answer {number} of {chat}",
    )


async def test_redis_restarted_briefly_nothing_stuck_and_answers_after(cluster: Cluster) -> None:
    """Redis (the queue and the shared flood limit) goes away and comes back empty, as a
    restart without persistence leaves it. A Run pressed during the outage gets one
    sentence and its plan's Run button back; a question asked during it gets its plan (the
    replies go out under each replica's own flood limit); after it, the same Run answers,
    and so do the other plan and a new question."""
    fake = cluster.fake
    a, b = CHATS[:2]
    await ask_everyone(cluster, [a], "average range by weekday?")
    cluster.redis.stop()
    press_run(fake, a, plans(fake, a)[0])
    ask(fake, b, f"{tag(b)} average range by weekday?")
    await cluster.wait_until(
        lambda: plans(fake, b) and len(texts(fake, a)) == 3, "a's sentence and b's plan"
    )
    cluster.redis.start()
    plan_a = plans(fake, a)[0]
    await cluster.wait_until(
        lambda: run_button(fake.message(a, plan_a["message_id"])) is not None,
        "a's plan with its Run button again",
    )
    before_ref, after_ref = t("query_broke", "en", ref="REF").split("REF")
    assert texts(fake, a)[2].startswith(before_ref) and texts(fake, a)[2].endswith(after_ref)
    assert charts(fake, a) == []
    press_run(fake, a, plan_a)  # the same plan, pressed again once Redis is back
    await cluster.wait_until(
        lambda: charts(fake, a) and plan_status(fake, a, plan_a) == "⏵ Done.",
        "a's answer after the outage",
    )

    press_run(fake, b, plans(fake, b)[0])
    await cluster.wait_until(lambda: charts(fake, b), "b's answer after the outage")
    await answered(cluster, a, 2)
    await cluster.settled()
    chart_a, chart_a2 = charts(fake, a)
    [chart_b] = charts(fake, b)
    assert answers_question(chart_a["caption"], tag(a))
    assert answers_question(chart_a2["caption"], tag(a, 2))
    assert answers_question(chart_b["caption"], tag(b))
    assert len(texts(fake, a)) == 4 and len(texts(fake, b)) == 1  # nothing twice
    # The limiter fell back to each replica's own budget while Redis was away.
    logs = "".join(replica.log for replica in cluster.replicas)
    assert "shared flood limit unavailable (Redis); this replica's own limit only" in logs


@pytest.fixture
async def own_postgres() -> AsyncIterator[PostgresServer]:
    """A PostgreSQL of this test's own, which it stops and starts again."""
    with running_postgres() as server:
        yield server


async def test_postgresql_away_briefly_the_replicas_recover_nothing_lost_or_twice(
    fake_telegram: FakeBotAPI,
    own_postgres: PostgresServer,
    sample_settings: EngineSettings,
    tmp_path: Path,
) -> None:
    """PostgreSQL stopped for a moment and started again, with plans waiting for Run. A Run
    pressed and a question asked while it is away cannot be stored, so the replica answers
    Telegram's webhook call with an error and Telegram delivers them again; once the
    database is back (the replicas' pooled connections are tested and replaced), the Run
    gives exactly one answer and the question its plan, then its answer; nothing twice."""
    fake = fake_telegram
    data_dir = Path(sample_settings.data_dir).resolve()
    async with running_cluster(fake, own_postgres, tmp_path, data_dir) as cluster:
        a, b = CHATS[:2]
        await ask_everyone(cluster, [a, b], "average range by weekday?")
        await cluster.settled()
        own_postgres.halt()
        refused = len([d for d in fake.webhook_deliveries if d[1] != 200])
        press_run(fake, a, plans(fake, a)[0])
        ask(fake, b, f"{tag(b, 2)} average range by weekday?")
        await cluster.wait_until(
            lambda: len([d for d in fake.webhook_deliveries if d[1] != 200]) >= refused + 4,
            "the updates refused while the database is away, and delivered again",
        )
        assert len(texts(fake, a)) == 2 and len(texts(fake, b)) == 2  # nothing said meanwhile
        own_postgres.resume()

        plan_a = plans(fake, a)[0]
        await cluster.wait_until(
            lambda: charts(fake, a) and plan_status(fake, a, plan_a) == "⏵ Done.", "a's answer"
        )
        await cluster.wait_until(lambda: len(plans(fake, b)) == 2, "b's second plan")
        plan_b = plans(fake, b)[1]
        assert f"Plan {tag(b, 2)}:" in plan_b["text"]
        press_run(fake, b, plan_b)
        await cluster.wait_until(
            lambda: charts(fake, b) and plan_status(fake, b, plan_b) == "⏵ Done.", "b's answer"
        )
        await cluster.settled()
        for chat in (a, b):
            assert len(charts(fake, chat)) == 1, cluster.describe()
        assert answers_question(charts(fake, a)[0]["caption"], tag(a))
        assert answers_question(charts(fake, b)[0]["caption"], tag(b, 2))
        assert len(texts(fake, a)) == 2 and len(texts(fake, b)) == 3  # nothing twice


async def _post_to(replica_port: str, update: dict) -> int:
    """Deliver ``update`` to one replica's webhook directly, as Telegram's retry of a
    delivery that HAProxy routed while the ring changed would."""
    import httpx

    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.post(
            f"http://127.0.0.1:{replica_port}/{WEBHOOK_PATH}",
            json=update,
            headers={"X-Telegram-Bot-Api-Secret-Token": SECRET},
        )
    return response.status_code


async def test_a_plan_made_on_one_replica_pressed_on_both_at_once_runs_once(
    cluster: Cluster,
) -> None:
    """A double tap on Run, one press reaching each replica at the same moment (HAProxy
    moved the chat between them: a replica marked down a moment, a rolling restart): the
    plan was made and stored by one replica, both read it from PostgreSQL. The query runs
    once on the workers, the person gets one chart, and the plan says Done once."""
    fake = cluster.fake
    chat = CHATS[0]
    await ask_everyone(cluster, [chat], "average range by weekday?")
    [plan] = plans(fake, chat)
    received = sum(w.log.read_text().count("Task barb.query[") for w in cluster.workers)
    data = run_button(plan)
    assert data is not None
    presses = [
        fake.prepare(
            fake.callback_update(
                chat_id=chat, user_id=chat, message_id=plan["message_id"], data=data
            )
        )
        for _ in cluster.replicas
    ]
    ports = [replica.env["BARB_WEBHOOK_PORT"] for replica in cluster.replicas]
    statuses = await asyncio.gather(*map(_post_to, ports, presses))
    assert statuses == [200, 200]
    await cluster.wait_until(
        lambda: charts(fake, chat) and plan_status(fake, chat, plan) == "⏵ Done.", "the answer"
    )
    await cluster.settled()
    assert_conversation(cluster, chat)  # one chart, nothing twice
    runs = sum(w.log.read_text().count("Task barb.query[") for w in cluster.workers) - received
    assert runs == 1, [w.log.read_text()[-2000:] for w in cluster.workers]
