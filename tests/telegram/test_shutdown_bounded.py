"""`barb bot`'s own shutdown (``bot_run.running_bot``, in process: the fake Bot API, the
scripted model, the inline runner): bounded whatever the database does, and the work it
resumed at start-up given the same grace period as fresh work."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite
import pytest
from bot_harness import ALICE, WEEKDAY_RANGE, brain
from fake_bot_api import FakeBotAPI
from test_shutdown_tasks import tasks_left

from bot import bot_run
from bot.assistant.replies import Asker
from bot.llm.scripted import ScriptedProvider
from bot.pool.runner import InlineRunner
from bot.settings import BotSettings
from bot.store import repository
from bot.store.db import open_store
from bot.store.outbox import OutboxRepository
from bot.store.settings import StoreSettings
from bot.telegram.answering import question_work
from bot.telegram.app import StoppableUpdates


@asynccontextmanager
async def running(
    fake: FakeBotAPI, db_url: str, shutdown: bot_run.Shutdown, **settings: Any
) -> AsyncIterator[None]:
    """``running_bot`` as ``barb bot`` runs it (the inline runner instead of worker
    processes); its exit is the shutdown under test."""
    bot_settings = BotSettings(
        _env_file=None,  # type: ignore[call-arg]
        TELEGRAM_BOT_TOKEN=fake.token,
        TELEGRAM_API_BASE_URL=fake.url,
        **{"poll_timeout_s": 1, **settings},
    )
    provider = ScriptedProvider([brain] * 20)
    async with bot_run.running_bot(
        bot_settings, provider, StoreSettings(database_url=db_url), shutdown=shutdown
    ):
        yield


async def test_a_database_close_that_never_ends_does_not_hold_the_shutdown(
    fake_telegram: FakeBotAPI,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """aiosqlite's thread stops answering as the bot closes its database (a call stuck in
    the driver). SQLAlchemy waits for a connection's close through every cancellation, so
    before, the shutdown waited forever (a test's teardown hung until the suite's 300 s
    timeout). Now the close is given ``CLOSE_WITHIN_S``, then left with one log line, and
    the bot is marked stuck (``serve`` then ends the process). What was stored stays."""
    fake = fake_telegram
    monkeypatch.setattr(bot_run, "make_runner", lambda *args, **kwargs: InlineRunner())
    monkeypatch.setattr(repository, "CLOSE_WITHIN_S", 0.5)
    held = threading.Event()
    real_close = aiosqlite.Connection.close

    async def close_never_answered(self: aiosqlite.Connection) -> None:
        await self._execute(held.wait)  # the driver's thread taken by a call that hangs
        await real_close(self)

    shutdown = bot_run.Shutdown()
    try:
        async with running(fake, db_url, shutdown):
            fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello"))
            await fake.wait_said(1, chat_id=ALICE)
            monkeypatch.setattr(aiosqlite.Connection, "close", close_never_answered)
        # Reached: the shutdown ended.
        assert shutdown.stuck
        assert "the database did not close within 0.5 s" in caplog.text
    finally:
        held.set()  # the thread lets go: the close left running ends
        await asyncio.wait(tasks_left(), timeout=30)
    with sqlite3.connect(db_url.removeprefix("sqlite+aiosqlite:///")) as db:
        assert db.execute("SELECT count(*) FROM in_flight").fetchone() == (0,)
        assert db.execute("SELECT status FROM outbox").fetchall() == [("sent",)]
    assert len(fake.said(ALICE)) == 1


async def _left_in_flight(db_url: str, kind: str, payload: dict[str, Any]) -> None:
    """As a process killed during the work's first attempt leaves it."""
    store = await open_store(StoreSettings(database_url=db_url))
    try:
        await store.chats.ensure(ALICE, "private")
        await store.in_flight.start(ALICE, ALICE, kind, payload)  # type: ignore[arg-type]
    finally:
        await store.close()


async def test_work_resumed_at_start_up_gets_the_shutdown_grace_period(
    fake_telegram: FakeBotAPI, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `/query` left in flight by a crash is resumed at the next start, and that bot is
    stopped (SIGTERM) while the chart is on the wire. Before: the resumption was cancelled at
    once, without the grace period fresh work gets; the half-sent reply was run again at the
    following start (a second chart, or "please send it again"). Now it finishes within the
    grace period: one chart, its CSV once, and the next start has nothing left to do."""
    fake = fake_telegram
    monkeypatch.setattr(bot_run, "make_runner", lambda *args, **kwargs: InlineRunner())
    asker = Asker(chat_id=ALICE, user_id=ALICE, language_code="en")
    await _left_in_flight(db_url, "query", question_work(asker, json.dumps(WEEKDAY_RANGE), None))
    chart = fake.hold_next("sendPhoto", chat_id=ALICE)
    stopping = asyncio.Event()
    real_stop_answering = bot_run._stop_answering

    async def stop_answering(*args: Any) -> None:
        stopping.set()
        await real_stop_answering(*args)

    monkeypatch.setattr(bot_run, "_stop_answering", stop_answering)

    async def let_the_chart_go_once_stopping() -> None:
        await stopping.wait()
        chart.release()

    releasing = asyncio.create_task(let_the_chart_go_once_stopping())
    async with running(fake, db_url, bot_run.Shutdown(), shutdown_grace_s=30):
        await chart.arrived()  # the shutdown comes while the chart is on the wire
    await releasing
    async with running(fake, db_url, bot_run.Shutdown()):  # the next start
        await _settled(db_url)
    [said] = fake.said(ALICE)
    assert "photo" in said  # the chart, nothing else said ("please send it again")
    assert len(fake.calls("sendPhoto", ALICE)) == 1
    assert len(fake.calls("sendDocument", ALICE)) == 1


async def _settled(db_url: str) -> None:
    """Until nothing is in flight and every reply stored was sent."""
    path = db_url.removeprefix("sqlite+aiosqlite:///")
    while True:
        with sqlite3.connect(path) as db:
            working = db.execute("SELECT count(*) FROM in_flight").fetchone()[0]
            unsent = db.execute("SELECT count(*) FROM outbox WHERE status != 'sent'").fetchone()[0]
        if not working and not unsent:
            return
        await asyncio.sleep(0.05)


async def test_a_reply_the_sending_pass_has_on_the_wire_at_shutdown_is_sent_once(
    fake_telegram: FakeBotAPI, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A greeting Telegram refused (500 at each of the sender's 4 attempts) waits in the
    outbox for the sending pass; the bot is stopped (SIGTERM) while the pass
    has it on the wire. Before: the pass was cancelled at once, the reply cut on the wire
    (Telegram carried it out) and sent again at the next start: two greetings. Now the pass
    ends the step it is in within the grace period: one greeting, nothing left queued."""
    fake = fake_telegram
    monkeypatch.setattr(bot_run, "make_runner", lambda *args, **kwargs: InlineRunner())
    stopping = asyncio.Event()
    real_stop_answering = bot_run._stop_answering

    async def stop_answering(*args: Any) -> None:
        stopping.set()
        await real_stop_answering(*args)

    monkeypatch.setattr(bot_run, "_stop_answering", stop_answering)
    await _greeting_on_the_wire_at_stop(fake, db_url, stopping, shutdown_grace_s=30)
    assert len(fake.said(ALICE)) == 1


async def _greeting_on_the_wire_at_stop(
    fake: FakeBotAPI, db_url: str, stopping: asyncio.Event, shutdown_grace_s: float
) -> None:
    """A greeting Telegram refused at each of the sender's 4 attempts, the sending pass's
    attempt held on the wire until ``stopping`` is set during the bot's stop; then the
    next start, run until nothing is in flight or unsent."""
    fake.fail_next("sendMessage", error_code=500, times=4, chat_id=ALICE)
    grace = {"sending_pass_s": 0.3, "shutdown_grace_s": shutdown_grace_s}
    async with running(fake, db_url, bot_run.Shutdown(), **grace):
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello"))
        await fake.wait_for("sendMessage", 4, chat_id=ALICE, timeout=30)  # the sender's
        on_the_wire = fake.hold_next("sendMessage", chat_id=ALICE)
        await on_the_wire.arrived(timeout=30)  # the pass's attempt
        releasing = asyncio.create_task(_release_once(stopping, on_the_wire))
    await releasing
    async with running(fake, db_url, bot_run.Shutdown()):  # the next start
        await _settled(db_url)


async def _release_once(stopping: asyncio.Event, held: Any) -> None:
    await stopping.wait()
    held.release()


async def test_a_database_stuck_while_an_update_is_stored_does_not_hold_the_shutdown(
    fake_telegram: FakeBotAPI,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """aiosqlite's thread stops answering while the intake stores an update it received,
    and the bot is stopped. Before, the shutdown waited forever for the database's close.
    Now it ends (the close left after ``CLOSE_WITHIN_S``, the bot marked stuck), and the
    update, never confirmed to Telegram, is answered at the next start: nothing lost."""
    fake = fake_telegram
    monkeypatch.setattr(bot_run, "make_runner", lambda *args, **kwargs: InlineRunner())
    monkeypatch.setattr(repository, "CLOSE_WITHIN_S", 0.5)
    monkeypatch.setattr(bot_run, "STUCK_AFTER_S", 0.5)
    hanging, entered, held = threading.Event(), threading.Event(), threading.Event()
    real_execute = aiosqlite.Connection._execute

    def stuck() -> None:
        entered.set()
        held.wait()

    async def execute(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if hanging.is_set():
            await real_execute(self, stuck)
        return await real_execute(self, fn, *args, **kwargs)

    monkeypatch.setattr(aiosqlite.Connection, "_execute", execute)
    shutdown = bot_run.Shutdown()
    try:
        async with running(fake, db_url, shutdown):
            hanging.set()
            fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello"))
            await asyncio.to_thread(entered.wait, 30)  # the intake storing it, stuck
        assert shutdown.stuck
        assert "the database did not close within 0.5 s" in caplog.text
    finally:
        hanging.clear()
        held.set()
        await asyncio.wait(tasks_left(), timeout=30)
    async with running(fake, db_url, bot_run.Shutdown()):  # the next start
        await fake.wait_said(1, chat_id=ALICE)


async def test_a_reply_on_the_wire_when_the_grace_period_ends_is_recorded_sent(
    fake_telegram: FakeBotAPI, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As above, but the sending pass's step outlasts the grace period (many chats queued:
    here the one reply held on the wire past it), and is stopped with the answers in
    progress. Before: the call was cut, the reply left queued though Telegram carried it
    out, and sent again at the next start: two greetings. Now the stopped pass waits for
    the call on the wire (its own timeouts bound it) and records it sent: one greeting,
    nothing left queued."""
    fake = fake_telegram
    monkeypatch.setattr(bot_run, "make_runner", lambda *args, **kwargs: InlineRunner())
    stopped = asyncio.Event()
    real_stop_running = StoppableUpdates.stop_running

    def stop_running(self: StoppableUpdates) -> int:
        count = real_stop_running(self)
        stopped.set()
        return count

    monkeypatch.setattr(StoppableUpdates, "stop_running", stop_running)
    await _greeting_on_the_wire_at_stop(fake, db_url, stopped, shutdown_grace_s=0.2)
    assert len(fake.said(ALICE)) == 1


async def test_a_reply_being_recorded_sent_when_the_grace_period_ends_is_not_sent_again(
    fake_telegram: FakeBotAPI, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Telegram took the greeting, and the bot is writing it down as sent (a database slow
    to take the write: a lock held, a PostgreSQL failing over) when the grace period ends
    (or a second SIGTERM hurries the stop) and the answers in progress are stopped. Before:
    the stop cut the write, the greeting stayed queued though the person had it, and the
    next start sent it again: two greetings. Now the call and its record are one step the
    stop waits for: one greeting, nothing left queued."""
    fake = fake_telegram
    monkeypatch.setattr(bot_run, "make_runner", lambda *args, **kwargs: InlineRunner())
    stopped, recording = asyncio.Event(), asyncio.Event()
    real_stop_running = StoppableUpdates.stop_running
    real_mark_sent = OutboxRepository.mark_sent

    def stop_running(self: StoppableUpdates) -> int:
        count = real_stop_running(self)
        stopped.set()
        return count

    async def mark_sent(self: OutboxRepository, sent: Any) -> int:
        if not recording.is_set():  # the greeting's record: held until the stop comes
            recording.set()
            await stopped.wait()
        return await real_mark_sent(self, sent)

    monkeypatch.setattr(StoppableUpdates, "stop_running", stop_running)
    monkeypatch.setattr(OutboxRepository, "mark_sent", mark_sent)
    async with running(fake, db_url, bot_run.Shutdown(), shutdown_grace_s=0.2):
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello"))
        await asyncio.wait_for(recording.wait(), 30)
    assert len(fake.said(ALICE)) == 1
    async with running(fake, db_url, bot_run.Shutdown()):  # the next start
        await _settled(db_url)
    assert len(fake.said(ALICE)) == 1
