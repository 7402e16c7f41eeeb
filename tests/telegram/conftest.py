"""Telegram tests run offline: the real python-telegram-bot talks only to the fake Bot API.

``fake_telegram`` is a started :class:`FakeBotAPI` on 127.0.0.1 in the test's event loop;
``telegram_bot`` is an initialized ``telegram.Bot`` pointed at it. Any request PTB makes to a
host other than loopback is refused and fails the test.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fake_bot_api import FakeBotAPI
from telegram import Bot
from telegram.error import NetworkError
from telegram.request import HTTPXRequest

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
# Variables httpx reads on its own; a developer's shell must not route 127.0.0.1 via a proxy.
_PROXY_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def telegram_offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Refuse any Bot API request off loopback; yields the refused URLs (fails if any)."""
    for name in _PROXY_ENV:
        monkeypatch.delenv(name, raising=False)
    # PTB 22 warns on every int-valued duration (RetryAfter.retry_after, ...) unless opted in;
    # with warnings as errors that would raise. Durations are datetime.timedelta in tests.
    monkeypatch.setenv("PTB_TIMEDELTA", "1")
    refused: list[str] = []
    real_do_request = HTTPXRequest.do_request

    async def loopback_only(self: HTTPXRequest, url: str, *args: Any, **kwargs: Any) -> Any:
        host = urlsplit(url).hostname
        if host not in LOOPBACK:
            refused.append(url)
            raise NetworkError(
                f"tests must not reach {host}: build the bot with "
                "fake_telegram.application_builder() or fake_telegram.make_bot()"
            )
        return await real_do_request(self, url, *args, **kwargs)

    monkeypatch.setattr(HTTPXRequest, "do_request", loopback_only)
    yield refused
    assert not refused, f"Bot API requests off loopback: {refused}"


@pytest.fixture
async def fake_telegram() -> AsyncIterator[FakeBotAPI]:
    fake = FakeBotAPI()
    await fake.start()
    yield fake
    await fake.stop()
    assert not fake.errors, "the fake Bot API failed:\n" + "\n".join(fake.errors)


@pytest.fixture
async def telegram_bot(fake_telegram: FakeBotAPI) -> AsyncIterator[Bot]:
    async with fake_telegram.make_bot() as bot:
        yield bot


@pytest.fixture
def db_url(tmp_path: Path, sample_settings: object) -> str:
    """A fresh SQLite database for the bot; the engine answers from the NQ sample."""
    return f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"


@pytest.fixture(autouse=True)
async def no_task_left() -> AsyncIterator[None]:
    """Fail a test that leaves a task of its loop running once the bot, its servers and
    its fakes are closed. Such a task may still await the database (its aiosqlite thread
    then calls back into the closed loop, reported at the next test's setup on that
    worker) or ignore the cancellation the loop's close sends it (the teardown hangs until
    the suite's timeout). The tasks found are cancelled and awaited here, so that the
    failure is this test's, with their stacks."""
    yield
    current = asyncio.current_task()
    left = [task for task in asyncio.all_tasks() if task is not current and not task.done()]
    if not left:
        return
    stacks = []
    for task in left:
        stack = io.StringIO()
        task.print_stack(file=stack)
        stacks.append(stack.getvalue())
        task.cancel()
    _, pending = await asyncio.wait(left, timeout=5)
    ignored = f"; {len(pending)} ignored their cancellation" if pending else ""
    pytest.fail(f"{len(left)} tasks left running{ignored}:\n" + "\n".join(stacks))
