"""The sending pass (``keep_sending``, every minute while the bot runs): each of its steps
runs whatever another does (r47e #2)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from types import SimpleNamespace
from typing import Any

import pytest
from bot_harness import barb_bot
from fake_bot_api import FakeBotAPI

from bot.telegram import app
from bot.telegram.services import SERVICES_KEY

CHAT = 4242


class PassApplication:
    """What ``keep_sending`` uses of the PTB Application: its services and ``create_task``."""

    def __init__(self, services: Any, bot: Any = None) -> None:
        self.bot_data = {SERVICES_KEY: services}
        self.bot = bot
        self.tasks: list[asyncio.Task[Any]] = []

    def create_task(self, coroutine: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(coroutine, name=name)
        self.tasks.append(task)
        return task


async def test_a_failing_step_does_not_skip_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, one ``try`` held every step: the updates of dead replicas or the queued
    replies failing (a statement refused, the database away) skipped the "Done." edits of
    answered runs and the resuming of orphaned and abandoned work, every minute."""
    ran: list[str] = []
    two_passes = asyncio.Event()

    async def fails(*args: Any, **kwargs: Any) -> int:
        raise RuntimeError("the number of query arguments cannot exceed 32767")

    async def finish(*args: Any, **kwargs: Any) -> int:
        ran.append("finish_answered_runs")
        if ran.count("finish_answered_runs") == 2:
            two_passes.set()
        return 0

    def resumes(name: str) -> Any:
        async def resume(*args: Any, **kwargs: Any) -> int:
            ran.append(name)
            return 0

        return resume

    monkeypatch.setattr(app, "handle_orphaned", fails)
    monkeypatch.setattr(app, "send_queued", fails)
    monkeypatch.setattr(app, "finish_answered_runs", finish)
    monkeypatch.setattr(app, "resume_abandoned", resumes("resume_abandoned"))
    monkeypatch.setattr(app, "resume_interrupted", resumes("resume_interrupted"))
    application = PassApplication(SimpleNamespace(store=None, abandoned={7}))

    sending = asyncio.create_task(app.keep_sending(application, every_s=0.01))  # type: ignore[arg-type]
    try:
        await asyncio.wait_for(two_passes.wait(), 10)
    finally:
        sending.cancel()
        await asyncio.gather(sending, *application.tasks, return_exceptions=True)

    assert {"finish_answered_runs", "resume_abandoned", "resume_interrupted"} <= set(ran)


async def test_queued_replies_go_when_the_moves_cannot_be_read(
    fake_telegram: FakeBotAPI, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Learning the moves other replicas recorded is best-effort: when they cannot be read,
    the pass sends what is queued all the same (a message in another task's hands is
    still not sent twice: ``Sender.deliver``)."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc, fake.make_bot() as bot:

        async def refused(*args: Any, **kwargs: Any) -> list[tuple[int, int]]:
            raise RuntimeError("the number of query arguments cannot exceed 32767")

        await svc.store.chats.ensure(CHAT, "private")
        fake.fail_next("sendMessage", retry_after=60, chat_id=CHAT)  # held back: queued
        with pytest.raises(Exception, match="flood control"):
            await svc.sender(bot).text(CHAT, "Still queued")
        monkeypatch.setattr(svc.store.chats, "moves_of", refused)

        sent = await app.send_queued(PassApplication(svc, bot))  # type: ignore[arg-type]

        assert sent == 1
        assert [m["text"] for m in fake.messages(CHAT)] == ["Still queued"]
