"""The bot's SQLite database failing a write under a run: what does the person end up with?

Another process holds SQLite's write lock (a ``sqlite3`` shell left in a transaction, a long
``barb db`` command) past the bot's busy timeout, just as a run's answer is to be stored.
Reads still answer meanwhile (WAL), so the failure looked like a bug: "Something broke on my
side (reference …)", the numbers computed thrown away, the plan handed back with Run. Now it
is the database's: the person is told it is not answering and that the answer will come, and
the sending pass finishes the run once the lock is let go: one answer, the plan "Done.".
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from typing import Any

import pytest
from bot_harness import ALICE, ask_and_get_plan, barb_bot, brain, keyboard_data, press
from fake_bot_api import FakeBotAPI

from bot.llm.messages import ModelRequest
from bot.pool.jobs import QueryJob, QueryOutcome
from bot.pool.runner import InlineRunner
from bot.store.errors import database_failing
from bot.texts import t


class Locker:
    """Another process's connection holding the database's write lock until ``release``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.held = threading.Event()
        self.release = threading.Event()

    def hold(self) -> None:
        threading.Thread(target=self._hold, daemon=True).start()
        self.held.wait()

    def _hold(self) -> None:
        connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        connection.execute("BEGIN EXCLUSIVE")
        self.held.set()
        self.release.wait(60)
        connection.execute("ROLLBACK")
        connection.close()


class LocksOnceComputed(InlineRunner):
    """Computes the run, then has the database locked before its answer can be stored."""

    def __init__(self, locker: Locker) -> None:
        self.locker = locker
        self.runs = 0

    async def run(self, job: QueryJob) -> QueryOutcome:
        outcome = await super().run(job)
        self.runs += 1
        if self.runs == 1:
            # Waited for off the event loop: the bot's own connection may be in the middle
            # of a write transaction (the sending pass, every 0.3 s), which it cannot end
            # while the loop is blocked; the lock was then never taken (30 s, under load).
            await asyncio.to_thread(self.locker.hold)
        return outcome


async def test_a_run_whose_answer_meets_a_locked_database_is_answered_once_it_is_free(
    fake_telegram: FakeBotAPI, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BARB_SQLITE_BUSY_TIMEOUT_MS", "300")
    fake = fake_telegram
    locker = Locker(db_url.split("///", 1)[1])
    runner = LocksOnceComputed(locker)
    async with barb_bot(fake, db_url, runner=runner, keep_sending_every_s=0.3) as svc:
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "Average range by weekday?")
        run, _ = keyboard_data(plan)
        await press(fake, ALICE, ALICE, plan, run)
        said = await fake.wait_said(2, chat_id=ALICE, timeout=30)
        assert said[-1]["text"] == t("database_away", "en")
        assert "Something broke" not in said[-1]["text"]
        locker.release.set()

        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE, timeout=30)
        assert "5 groups by weekday" in photo.params["caption"]
        await fake.wait_for("editMessageText", 2, chat_id=ALICE)
        assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Done.")
        for _ in range(100):  # the run's record goes just after the "Done." edit
            if not await svc.store.in_flight.open():
                break
            await asyncio.sleep(0.1)
        assert await svc.store.in_flight.open() == []
    assert runner.runs == 2  # computed again once the database took writes
    assert len(fake.calls("sendPhoto", chat_id=ALICE)) == 1
    texts = [call.params["text"] for call in fake.calls("sendMessage", chat_id=ALICE)]
    assert not any("Something broke" in text for text in texts)
    # The plan never got its Run button back: nothing to press again.
    edits = fake.calls("editMessageText", chat_id=ALICE)
    assert all(not (call.params.get("reply_markup") or {}) for call in edits)


async def test_a_lock_that_outlasts_the_first_resumption_still_gets_the_answer(
    fake_telegram: FakeBotAPI,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The lock still held when the sending pass resumes the run: its first write fails.
    Finishing the work failed the same way, and the run, no longer set aside, said
    "Running…" until the next start. Now it is set aside again, and answered once the lock
    is let go."""
    monkeypatch.setenv("BARB_SQLITE_BUSY_TIMEOUT_MS", "300")
    caplog.set_level(logging.WARNING, logger="bot.telegram.recovery")
    fake = fake_telegram
    locker = Locker(db_url.split("///", 1)[1])
    runner = LocksOnceComputed(locker)
    async with barb_bot(fake, db_url, runner=runner, keep_sending_every_s=0.3) as svc:
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "Average range by weekday?")
        run, _ = keyboard_data(plan)
        await press(fake, ALICE, ALICE, plan, run)
        tries: list[int] = []
        retry = svc.store.in_flight.retry

        async def counted_retry(work_id: int) -> None:  # a resumption's first write
            tries.append(work_id)
            await retry(work_id)

        monkeypatch.setattr(svc.store.in_flight, "retry", counted_retry)
        said = await fake.wait_said(2, chat_id=ALICE, timeout=30)
        assert said[-1]["text"] == t("database_away", "en")
        for _ in range(300):  # until the sending pass has tried to resume it twice
            if len(tries) >= 2:
                break
            await asyncio.sleep(0.1)
        assert len(tries) >= 2  # before: tried once, then dropped until the next start
        assert any("failed a write while work" in r.message for r in caplog.records)
        locker.release.set()

        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE, timeout=30)
        assert "5 groups by weekday" in photo.params["caption"]
        await fake.wait_for("editMessageText", 2, chat_id=ALICE)
        assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Done.")
        for _ in range(100):
            if not await svc.store.in_flight.open():
                break
            await asyncio.sleep(0.1)
        assert await svc.store.in_flight.open() == []
    assert len(fake.calls("sendPhoto", chat_id=ALICE)) == 1


async def test_a_question_whose_plan_meets_a_locked_database_gets_it_once_it_is_free(
    fake_telegram: FakeBotAPI, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same lock taken while the model thinks: the plan cannot be stored. The person
    is told the database is not answering, then gets the plan once (the model asked again,
    from the same transcript), not "Something broke"."""
    monkeypatch.setenv("BARB_SQLITE_BUSY_TIMEOUT_MS", "300")
    fake = fake_telegram
    locker = Locker(db_url.split("///", 1)[1])
    requests: list[ModelRequest] = []

    def model(request: ModelRequest) -> Any:
        requests.append(request)
        if len(requests) == 1:
            locker.hold()
        return brain(request)

    async with barb_bot(fake, db_url, model=model, keep_sending_every_s=0.3) as svc:
        fake.inject(
            fake.message_update(chat_id=ALICE, user_id=ALICE, text="Average range by weekday?")
        )
        [said] = await fake.wait_said(1, chat_id=ALICE, timeout=30)
        assert said["text"] == t("database_away", "en")
        locker.release.set()
        said = await fake.wait_said(2, chat_id=ALICE, timeout=30)
        assert keyboard_data(said[-1])  # the plan, with its Run and Cancel
        for _ in range(100):
            if not await svc.store.in_flight.open():
                break
            await asyncio.sleep(0.1)
        assert await svc.store.in_flight.open() == []
    assert len(requests) == 2
    assert requests[1].messages == requests[0].messages
    assert len(fake.calls("sendMessage", chat_id=ALICE)) == 2


@pytest.mark.parametrize(
    ("message", "failing"),
    [
        ("database is locked", True),
        ("database or disk is full", True),
        ("attempt to write a readonly database", True),
        ("disk I/O error", True),
        ("no such column: chat_id", False),
        ("UNIQUE constraint failed: chats.id", False),
    ],
)
def test_the_database_failing_is_told_from_a_bug(message: str, failing: bool) -> None:
    try:
        try:
            raise sqlite3.OperationalError(message)
        except sqlite3.Error as exc:
            raise RuntimeError("wrapped, as SQLAlchemy wraps it") from exc
    except RuntimeError as wrapped:
        assert database_failing(wrapped) is failing
    assert database_failing(ValueError(message)) is False
