"""The bot on a real PostgreSQL: `barb db upgrade` as the deploy step, the bot refusing an
unmigrated database, a whole conversation, and what replicas share (the limits, a Run left
by a replica that died, the updates it stored and did not handle).

Each replica is the real bot wired as `barb bot` wires it (``barb_bot``), under its own
``BARB_REPLICA_ID``, one after the other against the same database and fake Bot API.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bot_harness import (
    ALICE,
    BOB,
    ask_and_get_plan,
    barb_bot,
    keyboard_data,
    press,
    settled_outbox,
)
from bot_process import BotProcess
from fake_bot_api import FakeBotAPI
from servers.postgres import PostgresServer, running_postgres
from small_bars import write_small_data
from sqlalchemy import text as text_sql
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from bot.assistant.replies import Asker
from bot.pool.jobs import QueryJob, QueryOutcome
from bot.pool.runner import InlineRunner
from bot.startup_errors import EXIT_BAD_SETTING, EXIT_SCHEMA_NOT_READY
from bot.store import InFlight, NewReply, StoreSettings, open_store, replicas
from bot.store.migrate import current_revision, head_revision, upgrade_schema
from bot.store.transactions import utc_now
from bot.telegram.answering import question_work, run_work
from bot.telegram.services import BotServices

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llm_fake_api import OPENAI_PATH, FakeAPIServer, openai_completion

NO_MODEL = "http://127.0.0.1:9"


@pytest.fixture
async def pg_url(postgres_server: PostgresServer, sample_settings: object) -> AsyncIterator[str]:
    """A fresh, empty database (no schema yet)."""
    name = await postgres_server.create_database()
    yield postgres_server.url(name)
    await postgres_server.drop_database(name)


async def _settled(svc: BotServices, leaving: int = 0) -> list[InFlight]:
    """The work in flight once the handlers are done with theirs (at most ``leaving`` rows
    are someone else's), or as it stands after ten seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10.0
    while len(work := await svc.store.in_flight.open()) > leaving and loop.time() < deadline:
        await asyncio.sleep(0.02)
    return work


def _as_replica(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("BARB_REPLICA_ID", name)


async def _run_barb(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "barb"),
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_the_bot_refuses_an_unmigrated_database_until_barb_db_upgrade(
    fake_telegram: FakeBotAPI, pg_url: str, tmp_path: Path
) -> None:
    # A password in the URL (the test server trusts 127.0.0.1 and ignores it): never printed.
    url = pg_url.replace("postgres@", "postgres:hunter2@")
    bot = BotProcess(fake_telegram, NO_MODEL, tmp_path, BARB_DATABASE_URL=url)
    finished = await bot.run_to_exit()
    assert finished.status == EXIT_SCHEMA_NOT_READY
    assert "Traceback" not in finished.output and "hunter2" not in finished.output
    [line] = finished.stderr.strip().splitlines()
    assert "has no schema yet: run `barb db upgrade` first" in line

    for _ in range(2):  # idempotent: the second run changes nothing and says the same
        status, out, err = await _run_barb("db", "upgrade", env=bot.env)
        assert status == 0, err
        assert out.strip().endswith(f"at revision {head_revision()}")
        assert "hunter2" not in out + err
    settings = StoreSettings(database_url=pg_url)
    assert await current_revision(settings) == head_revision()
    status, out, _ = await _run_barb("db", "current", env=bot.env)
    assert (status, out.strip().endswith("(head)")) == (0, True)


async def test_a_whole_conversation_on_postgresql(fake_telegram: FakeBotAPI, pg_url: str) -> None:
    fake = fake_telegram
    await upgrade_schema(StoreSettings(database_url=pg_url))
    async with barb_bot(fake, pg_url) as svc:
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "average range by weekday")
        assert "Run" in str(plan["reply_markup"])
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        assert photo.files["photo"].content[:4] == b"\x89PNG"
        assert "Answer:" in photo.params["caption"]
        await fake.wait_for("editMessageText", 2, chat_id=ALICE)
        assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Done.")
        assert await _settled(svc) == []  # the run's row goes once its plan says so
        rows = await svc.store.transcript.recent(ALICE, questions=1)
        assert rows[0].payload["text"] == "average range by weekday"


class HeldRunner(InlineRunner):
    """Computes a query only once ``release`` is set; ``started`` says one is waiting."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def run(self, job: QueryJob) -> QueryOutcome:
        self.started.set()
        await self.release.wait()
        return await super().run(job)


async def test_postgresql_gone_while_a_query_runs_the_answer_comes_once_it_is_back(
    fake_telegram: FakeBotAPI, sample_settings: object
) -> None:
    """PostgreSQL stops while a confirmed plan's query computes, so its answer cannot be
    stored. The person is told so in one sentence (sent straight to Telegram: the outbox
    is in the database); the plan stays "Running…"; once PostgreSQL is back, the sending
    pass resumes the run: one chart, the plan "Done.", nothing left in flight. Before, the
    plan said "Running…" until the bot was restarted."""
    fake = fake_telegram
    runner = HeldRunner()
    with running_postgres() as server:
        url = server.url(await server.create_database())
        await upgrade_schema(StoreSettings(database_url=url))
        async with barb_bot(fake, url, runner=runner, keep_sending_every_s=0.5) as svc:
            plan = await ask_and_get_plan(fake, ALICE, ALICE, "average range by weekday")
            await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
            await asyncio.wait_for(runner.started.wait(), 10)
            server.halt()
            runner.release.set()

            sent = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
            assert "database is not answering" in sent[-1].result["text"]
            assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Running…")
            assert fake.calls("sendPhoto", ALICE) == []

            server.resume()
            [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE, timeout=30)
            assert "Answer:" in photo.params["caption"]
            await fake.wait_for("editMessageText", 2, chat_id=ALICE)
            assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Done.")
            assert await _settled(svc) == []
            assert svc.abandoned == set()
            await asyncio.sleep(1.0)  # two more sending passes: nothing runs twice
            assert len(fake.calls("sendPhoto", ALICE)) == 1
            assert len(fake.calls("sendMessage", ALICE)) == 2


async def test_the_question_limit_holds_across_replicas(
    fake_telegram: FakeBotAPI, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_telegram
    await upgrade_schema(StoreSettings(database_url=pg_url))
    _as_replica(monkeypatch, "replica-a")
    async with barb_bot(fake, pg_url, questions_per_minute=2):
        assert "Hi!" in (await ask_and_get_plan(fake, ALICE, ALICE, "hello"))["text"]
        assert "Hi!" in (await ask_and_get_plan(fake, ALICE, ALICE, "hello again"))["text"]
    _as_replica(monkeypatch, "replica-b")
    async with barb_bot(fake, pg_url, questions_per_minute=2) as svc:
        # Alice's third question within the minute reaches the other replica: still held.
        reply = await ask_and_get_plan(fake, ALICE, ALICE, "and once more")
        assert "faster than I can answer" in reply["text"]
        assert "Hi!" in (await ask_and_get_plan(fake, BOB, BOB, "hello"))["text"]
        assert len(svc.assistant.provider.requests) == 1  # Bob's only


async def test_a_run_left_by_a_dead_replica_is_run_by_another_after_its_lease(
    fake_telegram: FakeBotAPI, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_telegram
    settings = StoreSettings(database_url=pg_url)
    await upgrade_schema(settings)
    _as_replica(monkeypatch, "replica-a")
    async with barb_bot(fake, pg_url):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "average range by weekday")
    action_id = keyboard_data(plan)[0].split(":", 1)[1]

    # Replica a took the press (as the Run button does) ten minutes ago and died: its lease
    # has long expired. Replica c is alive and answering Bob: its lease holds.
    long_ago = datetime.now(UTC) - timedelta(minutes=10)
    dead = await open_store(
        settings.model_copy(update={"replica_id": "replica-a"}), clock=lambda: long_ago
    )
    live = await open_store(settings.model_copy(update={"replica_id": "replica-c"}))
    try:
        claim = await dead.pending.claim(action_id, ALICE, work=run_work(action_id, "en"))
        assert claim.won and claim.work_id is not None
        await live.chats.ensure(BOB, "private")
        work = question_work(Asker(chat_id=BOB, user_id=BOB), "hi", reply_to=None)
        busy = await live.in_flight.start(BOB, BOB, "question", work)
    finally:
        await dead.close()
        await live.close()

    _as_replica(monkeypatch, "replica-b")
    async with barb_bot(fake, pg_url) as svc:
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        assert "Answer:" in photo.params["caption"]
        await fake.wait_for("editMessageText", chat_id=ALICE)
        assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Done.")
        # Bob's question is replica c's: replica b did not touch it.
        assert [(w.id, w.lease_owner) for w in await _settled(svc, leaving=1)] == [
            (busy.id, "replica-c")
        ]
        assert fake.calls("sendMessage", chat_id=BOB) == []


async def test_updates_left_by_a_dead_replica_are_handled_once_and_a_live_ones_left_alone(
    fake_telegram: FakeBotAPI, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_telegram
    settings = StoreSettings(database_url=pg_url)
    await upgrade_schema(settings)
    long_ago = datetime.now(UTC) - timedelta(minutes=10)

    async def stored_by(replica: str, update: dict[str, Any], *, dead: bool) -> None:
        """``update`` stored (and confirmed to Telegram) by ``replica``, never handled: it
        died ten minutes ago, or it lives and is busy with it."""
        named = settings.model_copy(update={"replica_id": replica})
        store = await open_store(named, clock=(lambda: long_ago) if dead else utc_now)
        try:
            assert await store.updates.receive([(update["update_id"], update)]) != []
        finally:
            await store.close()

    first = fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello", message_id=501)
    busy = fake.message_update(chat_id=BOB, user_id=BOB, text="hello", message_id=502)
    later = fake.message_update(chat_id=ALICE, user_id=ALICE, text="hi again", message_id=503)
    for n, update in enumerate((first, busy, later)):
        update["update_id"] = 9001 + n
    await stored_by("replica-a", first, dead=True)
    await stored_by("replica-c", busy, dead=False)

    _as_replica(monkeypatch, "replica-b")
    async with barb_bot(fake, pg_url, keep_sending_every_s=0.2) as svc:
        # At its start replica b handles what replica a left; replica c's is its own.
        [hello] = await fake.wait_said(1, chat_id=ALICE)
        assert "Hi!" in hello["text"]
        # Replica d stores one and dies while b runs: b's periodic pass takes it over.
        await stored_by("replica-d", later, dead=True)
        said = await fake.wait_said(2, chat_id=ALICE)
        assert "Hi!" in said[1]["text"]
        assert await svc.store.updates.unhandled() == [(busy["update_id"], busy)]
        async with svc.store._engine.connect() as conn:
            owners = await conn.execute(
                text_sql("SELECT update_id, lease_owner FROM received_updates ORDER BY 1")
            )
            assert [tuple(row) for row in owners] == [
                (9001, "replica-b"),
                (9002, "replica-c"),
                (9003, "replica-b"),
            ]
        assert fake.calls("sendMessage", chat_id=BOB) == []
    assert len(fake.said(ALICE)) == 2  # each once, none twice


async def test_a_second_replica_under_a_live_ones_name_refuses_to_start(
    fake_telegram: FakeBotAPI, pg_url: str, tmp_path: Path
) -> None:
    """p46n #1: two replicas started as bot-x kept each other's leases alive, so a question
    of the one killed was never answered. Now the second one does not start: exit 78 and
    one sentence naming BARB_REPLICA_ID."""
    settings = StoreSettings(database_url=pg_url, replica_id="bot-x")
    await upgrade_schema(settings)
    live = await open_store(settings)
    try:
        await live.replicas.hold()
        bot = BotProcess(
            fake_telegram, NO_MODEL, tmp_path, BARB_DATABASE_URL=pg_url, BARB_REPLICA_ID="bot-x"
        )
        finished = await bot.run_to_exit(timeout=60)
    finally:
        await live.close()
    assert finished.status == EXIT_BAD_SETTING
    assert "Traceback" not in finished.output
    last = finished.stderr.strip().splitlines()[-1]
    assert "running as 'bot-x'" in last and "BARB_REPLICA_ID" in last


async def test_a_replica_whose_name_was_taken_while_it_ran_exits_78_and_loses_nothing(
    fake_telegram: FakeBotAPI, pg_url: str, tmp_path: Path
) -> None:
    """The exit-78 path (p46ah #1): the real `barb bot` as bot-x answers one question (the
    model still thinking) with a second queued behind it, when its name lock's connection
    drops and a twin under bot-x takes the name before the next lease-renewal pass.

    The bot stops and exits 78 with one line naming BARB_REPLICA_ID, sending nothing; both
    questions stay in the database under bot-x; once the name is free, the next start
    under it answers both, in the order asked, each once."""
    fake = fake_telegram
    settings = StoreSettings(database_url=pg_url, replica_id="bot-x")
    await upgrade_schema(settings)
    model = FakeAPIServer().start()
    first, second = "Hello there.", "The first question was long."
    model.queue(
        OPENAI_PATH,
        replace(openai_completion(first), delay_s=60.0),  # still thinking at the stop
        openai_completion(first),
        openai_completion(second),
    )
    bot = BotProcess(
        fake,
        model.url,
        tmp_path,
        BARB_DATABASE_URL=pg_url,
        BARB_REPLICA_ID="bot-x",
        BARB_DATA_DIR=str(write_small_data(tmp_path / "data")),
        # The name is checked every third of the lease: each second.
        BARB_WORK_LEASE_S="3",
        BARB_SHUTDOWN_GRACE_S="1",
    )
    engine = create_async_engine(pg_url, poolclass=NullPool)  # closed is closed: no lock kept
    lock = {"cls": replicas.LOCK_CLASS, "key": replicas.name_key("bot-x")}
    twin = await engine.connect()
    try:
        await bot.start()
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="Hi"))
        await bot.wait_until(lambda: model.requests_to(OPENAI_PATH), "the model asked")
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="And then?"))

        async def questions() -> list[tuple[Any, ...]]:
            async with engine.connect() as conn:
                rows = await conn.execute(
                    text_sql(
                        "SELECT payload, lease_owner FROM in_flight WHERE kind = 'question' "
                        "AND answered_at IS NULL ORDER BY id"
                    )
                )
                return [tuple(row) for row in rows]

        for _ in range(600):
            if len(await questions()) == 2:
                break
            await asyncio.sleep(0.05)
        assert len(await questions()) == 2, bot.log

        # The twin waits for the name's lock first, so it gets it the moment the server
        # drops the bot's connection (standing in for a PostgreSQL restart or a proxy
        # cutting an idle connection), before the bot's next pass can take it again.
        waiting = asyncio.create_task(
            twin.execute(text_sql("SELECT pg_advisory_lock(:cls, :key)"), lock)
        )
        async with engine.connect() as conn:
            for _ in range(200):
                held = await conn.execute(
                    text_sql(
                        "SELECT granted, pid FROM pg_locks WHERE locktype = 'advisory' "
                        "AND classid = :cls AND objid = :key"
                    ),
                    lock,
                )
                rows = [tuple(row) for row in held]
                if sorted(granted for granted, _ in rows) == [False, True]:
                    break
                await asyncio.sleep(0.05)
            [holder] = [pid for granted, pid in rows if granted]
            await conn.execute(text_sql("SELECT pg_terminate_backend(:pid)"), {"pid": holder})
            await conn.commit()
        await asyncio.wait_for(waiting, 10)

        status = await bot.wait_exit(60)
        lines = [line for line in bot.log.splitlines() if line.strip()]
        assert status == EXIT_BAD_SETTING, bot.log
        assert lines[-1] == (
            "barb bot: Another replica is running as 'bot-x' on this database: give each "
            "replica its own BARB_REPLICA_ID (the host name by default), or stop the other "
            "one first."
        ), bot.log
        assert "Traceback" not in bot.log
        assert fake.said(ALICE) == []
        # Nothing queued is lost: both questions wait, under bot-x, for its next life.
        left = await questions()
        assert [payload["text"] for payload, _ in left] == ["Hi", "And then?"]
        assert {owner for _, owner in left} == {"bot-x"}

        await twin.close()  # the twin ends: its name is free
        await bot.start()
        await bot.wait_until(lambda: len(fake.said(ALICE)) == 2, "both answers")
        assert [m["text"] for m in fake.said(ALICE)] == [first, second]
        for _ in range(200):  # each marked answered just after its reply is stored
            if not await questions():
                break
            await asyncio.sleep(0.05)
        assert await questions() == []
    finally:
        bot.kill()
        await twin.close()
        await engine.dispose()
        model.stop()


async def test_a_dead_replicas_question_is_handed_back_when_a_later_one_was_answered(
    fake_telegram: FakeBotAPI, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """p46n #2: replica a died while the model planned Alice's first question; she asked
    again and replica b showed that plan. Taking the first question over after its lease,
    b declined every plan made since it began (the one she was looking at: Run said "out of
    date") and put the old question's plan under it. Now the old question is handed back
    in one sentence, and Run on the plan she has runs."""
    fake = fake_telegram
    settings = StoreSettings(database_url=pg_url)
    await upgrade_schema(settings)
    dead = await open_store(settings.model_copy(update={"replica_id": "replica-a"}))
    try:
        await dead.chats.ensure(ALICE, "private")
        work = question_work(Asker(chat_id=ALICE, user_id=ALICE), "median volume", reply_to=None)
        first = await dead.in_flight.start(ALICE, ALICE, "question", work)
    finally:
        await dead.close()

    _as_replica(monkeypatch, "replica-b")
    async with barb_bot(fake, pg_url, keep_sending_every_s=0.2) as svc:
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "average range by weekday")
        assert "Run" in str(plan["reply_markup"])
        async with svc.store._engine.begin() as conn:  # replica a's lease runs out
            await conn.execute(
                text_sql("UPDATE in_flight SET lease_expires_at = :t WHERE id = :id"),
                {"t": datetime.now(UTC) - timedelta(seconds=1), "id": first.id},
            )
        said = await fake.wait_said(2, chat_id=ALICE)
        assert said[1]["text"] == (
            "Your question “median volume” was interrupted, and later messages were "
            "answered before it: please ask it again."
        )
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        assert "Answer:" in photo.params["caption"]
        assert await _settled(svc) == []
        assert len(svc.assistant.provider.requests) == 2  # the plan and its answer only


async def test_a_dead_replicas_queued_reply_goes_before_a_newer_one(
    fake_telegram: FakeBotAPI, pg_url: str
) -> None:
    """p46n #4: replica a was killed with an answer on the wire; the chat's next question
    went to replica b, whose plan was sent at once, and a's answer came after a's outbox
    lease (360 s by default) below it. Now b's reply waits behind a's while a lives, and
    once a is gone (its name free at b's reads ``gone_after`` apart: a work lease, 90 s
    by default, shortened here) b sends a's first, then its own, with no outbox lease to
    wait out."""
    fake = fake_telegram
    settings = StoreSettings(database_url=pg_url)
    await upgrade_schema(settings)
    other = await open_store(settings.model_copy(update={"replica_id": "replica-a"}))
    try:
        await other.replicas.hold()
        await other.chats.ensure(ALICE, "private")
        earlier = NewReply(kind="text", payload={"text": "answer one"})
        await other.outbox.enqueue_many(ALICE, [earlier])
        async with barb_bot(fake, pg_url, keep_sending_every_s=0.3) as svc:
            svc.store.replicas.gone_after = timedelta(seconds=1)
            fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello"))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 10.0
            while len(await svc.store.outbox.unsent(ALICE)) < 2 and loop.time() < deadline:
                await asyncio.sleep(0.02)
            assert fake.said(ALICE) == []  # replica a lives: its answer goes first

            await other.close()  # replica a is killed
            fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello again"))
            texts = [m["text"] for m in await fake.wait_said(3, chat_id=ALICE)]
            assert texts[0] == "answer one" and all("Hi!" in text for text in texts[1:]), texts
            assert await settled_outbox(svc) == []
    finally:
        await other.close()
