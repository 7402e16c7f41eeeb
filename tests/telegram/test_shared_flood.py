"""Telegram's flood limit is per bot token: two replicas of the bot share it through Redis.

Two real PTB applications with the same token (as two replicas) send through the fake Bot
API; the times at which the fake received their requests are counted per sliding second.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import pytest
from fake_bot_api import FakeBotAPI
from telegram.ext import Application

from bot.telegram.app import build_application

RATE = 10  # requests per second for the token
# The fake stamps a request when it answers it; the jitter between the budget's clock and
# that stamp (a busy machine) is allowed for by counting over less than a second.
WINDOW_S = 0.8


async def replicas(
    stack: AsyncExitStack, fake: FakeBotAPI, shared_url: str | None, count: int = 2
) -> list[Application]:
    apps = []
    for _ in range(count):
        app = build_application(
            fake.token, base_url=fake.url, max_rate=RATE, shared_flood_url=shared_url
        )
        await app.initialize()
        stack.push_async_callback(app.shutdown)
        apps.append(app)
    return apps


def busiest_window(stamps: list[float]) -> int:
    stamps = sorted(stamps)
    return max(sum(1 for t in stamps[i:] if t - start < WINDOW_S) for i, start in enumerate(stamps))


async def send_from_each(apps: list[Application], per_replica: int) -> None:
    await asyncio.gather(
        *(
            app.bot.send_message(chat_id=1000 * r + i, text=f"r{r} m{i}")
            for r, app in enumerate(apps)
            for i in range(per_replica)
        )
    )


@pytest.fixture
async def stack() -> AsyncIterator[AsyncExitStack]:
    async with AsyncExitStack() as stack:
        yield stack


async def test_two_replicas_together_keep_the_tokens_rate(
    fake_telegram: FakeBotAPI, redis_url: str, stack: AsyncExitStack
) -> None:
    apps = await replicas(stack, fake_telegram, redis_url)
    await send_from_each(apps, per_replica=2 * RATE)

    sent = [call.answered_at for call in fake_telegram.calls("sendMessage")]
    assert len(sent) == 4 * RATE
    assert busiest_window(sent) <= RATE
    # 40 requests at 10 a second: the first ten at once, the last three seconds later.
    assert max(sent) - min(sent) >= 3 * WINDOW_S


async def test_without_the_shared_budget_two_replicas_send_twice_the_rate(
    fake_telegram: FakeBotAPI, stack: AsyncExitStack
) -> None:
    """What the shared budget prevents (and the measure above would catch)."""
    apps = await replicas(stack, fake_telegram, None)
    await send_from_each(apps, per_replica=RATE)

    sent = [call.answered_at for call in fake_telegram.calls("sendMessage")]
    assert busiest_window(sent) > RATE


async def test_a_retry_after_seen_by_one_replica_holds_the_other(
    fake_telegram: FakeBotAPI, redis_url: str, stack: AsyncExitStack
) -> None:
    first, second = await replicas(stack, fake_telegram, redis_url)
    fake_telegram.fail_next("sendMessage", retry_after=1, chat_id=1)

    refused_then_sent = asyncio.create_task(first.bot.send_message(chat_id=1, text="a"))
    await fake_telegram.wait_for("sendMessage", 1)
    await asyncio.sleep(0.05)  # the other replica has not seen any 429 itself
    await second.bot.send_message(chat_id=2, text="b")
    await refused_then_sent

    calls = fake_telegram.calls("sendMessage")
    refused = next(call for call in calls if call.status == 429)
    others = [call for call in calls if call.params["chat_id"] == 2]
    assert [call.status for call in others] == [200]
    assert others[0].answered_at - refused.answered_at >= 1.0
    assert fake_telegram.sent_text(1) == ["a"]


async def test_with_redis_away_the_replica_still_sends_under_its_own_limit(
    fake_telegram: FakeBotAPI, stack: AsyncExitStack
) -> None:
    import socket

    with socket.socket() as probe:  # a port where nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (app,) = await replicas(stack, fake_telegram, f"redis://127.0.0.1:{port}/0", count=1)
    await send_from_each([app], per_replica=3)

    assert len(fake_telegram.calls("sendMessage")) == 3
