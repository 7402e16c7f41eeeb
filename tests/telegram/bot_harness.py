"""Barb's Telegram front end wired as `barb bot` wires it, against the fake Bot API.

Shared by the end-to-end tests: the scripted model (``brain``), the bot in a context manager
(``barb_bot``), and helpers to ask, read keyboards and press buttons.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fake_bot_api import FakeBotAPI

from barb.reference import query_examples
from barb.settings import EngineSettings
from bot.assistant.orchestrator import Assistant, AssistantSettings
from bot.llm.messages import ModelRequest
from bot.llm.provider import LLMProvider
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn
from bot.pool.runner import InlineRunner, QueryRunner
from bot.settings import BotSettings
from bot.store import OutgoingReply
from bot.store.db import open_store
from bot.store.settings import StoreSettings
from bot.telegram.app import build_application, keep_sending, on_startup, receiving
from bot.telegram.sender import Patience
from bot.telegram.services import BotServices, RateLimiter
from bot.telegram.stopping import cancel_and_wait

ALICE, BOB = 11, 22
GROUP = -100500
WEEKDAY_RANGE = {
    "session": "RTH",
    "from": "daily",
    "map": {"weekday": "dayname()"},
    "group_by": "weekday",
    "select": "mean(range)",
}
HEAVY = {
    "session": "ETH",
    "from": "1m",
    "map": {"a": "rolling_std(close, 500)", "b": "rolling_mean(a, 500)"},
    "select": "mean(b)",
}


def brain(request: ModelRequest):
    """A model that plans on a question and answers from the summary it is given."""
    last = request.messages[-1]
    if last.role == "user":
        question = last.text or ""
        if "slow" in question:
            return turn("Computing a heavy statistic.", tool_call("execute_query", query=HEAVY))
        if "weekday" in question:
            return turn(
                "I'll compute the average RTH range by weekday <over all data> & more.",
                tool_call("execute_query", query=WEEKDAY_RANGE),
            )
        return text("Hi! Ask me about the bars.")
    content = last.tool_results[-1].content
    if "Cancel" in content:
        return text("Cancelled; anything else?")
    return text("Answer: " + content.splitlines()[0])


@asynccontextmanager
async def barb_bot(
    fake: FakeBotAPI,
    db_url: str,
    *,
    model: Callable[[ModelRequest], Any] = brain,
    provider: LLMProvider | None = None,
    runner: QueryRunner | None = None,
    patience: Patience | None = None,
    keep_sending_every_s: float | None = None,
    engine_settings: EngineSettings | None = None,
    **settings: Any,
) -> AsyncIterator[BotServices]:
    store = await open_store(StoreSettings(database_url=db_url))
    await store.replicas.hold()  # as `barb bot` does
    runner = runner or InlineRunner()
    # getUpdates waits at most a second on the fake; the bot need not ask for longer.
    bot_settings = BotSettings(telegram_token=fake.token, **{"poll_timeout_s": 1, **settings})
    services = BotServices(
        settings=bot_settings,
        assistant=Assistant(
            provider or ScriptedProvider([model] * 200),
            store,
            runner,
            settings=AssistantSettings(),
            engine_settings=engine_settings,
        ),
        store=store,
        runner=runner,
        limiter=RateLimiter(bot_settings.questions_per_minute),
        examples=query_examples(),
        patience=patience or Patience(),
    )
    application = build_application(fake.token, services, base_url=fake.url)
    try:
        async with application:
            await application.start()
            try:
                await on_startup(application)  # as `barb bot` does once started
                async with receiving(application, bot_settings):
                    sending = None
                    if keep_sending_every_s is not None:  # `barb bot`'s sending pass, sooner
                        sending = asyncio.create_task(
                            keep_sending(application, keep_sending_every_s)
                        )
                    try:
                        yield services
                    finally:
                        if sending is not None:
                            await cancel_and_wait(sending)
            finally:
                if application.running:
                    await _stopped(application)
                await services.close()
    finally:
        await runner.close()
        await store.close()


#: How long the bot's stop may take in a test before the test fails with what still runs.
STOP_WITHIN_S = 60.0


async def _stopped(application: Any) -> None:
    """``application.stop()``, which waits for every handler: one that never ends (a
    database close SQLAlchemy waits for through every cancellation, its driver's thread
    stuck) fails the test with the stacks of what still runs, instead of holding its
    teardown until the suite's 300 s timeout."""
    stopping = asyncio.create_task(application.stop())
    done, _ = await asyncio.wait({stopping}, timeout=STOP_WITHIN_S)
    if done:
        await stopping
        return
    stacks = []
    for task in asyncio.all_tasks():
        if task is not asyncio.current_task() and not task.done():
            stack = io.StringIO()
            task.print_stack(file=stack)
            stacks.append(stack.getvalue())
    raise AssertionError(
        f"the bot did not stop within {STOP_WITHIN_S:g} s; still running:\n" + "\n".join(stacks)
    )


def commentary_of(caption: str) -> str:
    """The model's commentary in an answer chart's caption: what follows the headline (the
    caption's first line and a blank line); the whole caption when there is no blank line."""
    return caption.split("\n\n", 1)[-1]


def keyboard_data(message: dict[str, Any]) -> list[str]:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
    return [button["callback_data"] for row in rows for button in row]


async def ask_and_get_plan(
    fake: FakeBotAPI, chat_id: int, user_id: int, question: str, **kwargs: Any
) -> dict[str, Any]:
    """The next thing the person reads after asking: a message, or a photo's caption (an
    answer's commentary rides on its chart), as a message dict with ``text``."""
    before = len(fake.said(chat_id))
    fake.inject(fake.message_update(chat_id=chat_id, user_id=user_id, text=question, **kwargs))
    said = await fake.wait_said(before + 1, chat_id=chat_id)
    return said[before]


async def press(
    fake: FakeBotAPI,
    chat_id: int,
    user_id: int,
    message: dict[str, Any],
    data: str,
    **kwargs: Any,
):
    """``user_id`` presses the button ``data`` under ``message``."""
    fake.inject(
        fake.callback_update(
            chat_id=chat_id, user_id=user_id, message_id=message["message_id"], data=data, **kwargs
        )
    )


async def settled_outbox(svc: BotServices, timeout: float = 5.0) -> list[OutgoingReply]:
    """What is still queued once the handlers are done marking what they sent."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        queued = await svc.store.outbox.unsent()
        if not queued or asyncio.get_running_loop().time() > deadline:
            return queued
        await asyncio.sleep(0.02)


async def fetch_csv(fake: FakeBotAPI, chat_id: int, user_id: int, answer: dict[str, Any]):
    """Press the CSV button under an answer (the CSV is kept until asked for) and return the
    document that arrives."""
    before = len(fake.calls("sendDocument", chat_id=chat_id))
    [csv_button] = [d for d in keyboard_data(answer) if d.startswith("f:")]
    await press(fake, chat_id, user_id, answer, csv_button)
    documents = await fake.wait_for("sendDocument", before + 1, chat_id=chat_id)
    return documents[-1]
