"""`barb bot` in webhook mode: Telegram posts the updates, each replica checks the secret.

The real bot process sets its webhook on the fake Bot API, which then delivers updates to it
over HTTP as Telegram does (``secret_token`` header, retried until a 2xx). A whole
conversation runs this way; a post without the secret is refused and handled by nobody; the
same update posted twice is answered once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from bot_process import BotProcess
from fake_bot_api import FakeBotAPI
from servers.haproxy import free_port
from test_faults_kill import (
    CHAT,
    OPENAI_PATH,
    USER,
    answer_turn,
    ask,
    assert_one_answer,
    plan_turn,
    plans,
    press_and_get_answer,
)

SECRET = "webhook-secret_42"


@pytest.fixture
def model() -> Iterator[object]:
    from llm_fake_api import FakeAPIServer

    server = FakeAPIServer().start()
    yield server
    server.stop()


@pytest.fixture
async def webhook_bot(
    fake_telegram: FakeBotAPI, model: object, tmp_path: Path, sample_settings: object
) -> AsyncIterator[BotProcess]:
    port = free_port()
    process = BotProcess(
        fake_telegram,
        model.url,  # type: ignore[attr-defined]
        tmp_path,
        BARB_WEBHOOK_URL=f"http://127.0.0.1:{port}",
        BARB_WEBHOOK_PORT=str(port),
        BARB_WEBHOOK_LISTEN="127.0.0.1",
        BARB_WEBHOOK_SECRET=SECRET,
    )
    yield process
    process.kill()


async def test_a_conversation_over_the_webhook(
    webhook_bot: BotProcess, fake_telegram: FakeBotAPI, model: object
) -> None:
    model.queue(OPENAI_PATH, plan_turn(), answer_turn())  # type: ignore[attr-defined]
    await webhook_bot.start()
    assert fake_telegram.webhook_secret == SECRET
    ask(fake_telegram)
    await press_and_get_answer(webhook_bot, fake_telegram)
    await assert_one_answer(webhook_bot, fake_telegram)
    assert not fake_telegram.calls("getUpdates")
    assert {status for _, status in fake_telegram.webhook_deliveries} == {200}


async def test_a_post_without_the_secret_is_refused_and_a_repeated_update_answered_once(
    webhook_bot: BotProcess, fake_telegram: FakeBotAPI, model: object
) -> None:
    model.queue(OPENAI_PATH, plan_turn(), answer_turn())  # type: ignore[attr-defined]
    await webhook_bot.start()
    url = fake_telegram.webhook_url
    update = fake_telegram.message_update(chat_id=CHAT, user_id=USER, text="Range by weekday?")
    async with httpx.AsyncClient() as client:
        for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"}):
            refused = await client.post(url, json=update, headers=headers)
            assert refused.status_code == 403
        good = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
        for _ in range(2):  # Telegram retrying an update it thinks was lost
            assert (await client.post(url, json=update, headers=good)).status_code == 200
    await webhook_bot.wait_until(lambda: plans(fake_telegram), "the plan")
    # One chat's updates are handled in order: once /help is answered, the repeat was handled.
    fake_telegram.inject(fake_telegram.message_update(chat_id=CHAT, user_id=USER, text="/help"))
    await webhook_bot.wait_until(lambda: len(fake_telegram.said(CHAT)) >= 2, "the answer to /help")
    assert len(plans(fake_telegram)) == 1
    assert len(model.requests_to(OPENAI_PATH)) == 1  # type: ignore[attr-defined]
