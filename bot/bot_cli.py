"""`barb bot`: start the Telegram bot, or say exactly what is missing to start it."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import click
from telegram.ext import Application

from barb.reference import query_examples
from barb.settings import default_settings
from bot.assistant.orchestrator import Assistant, AssistantSettings
from bot.llm.errors import ConfigError
from bot.llm.provider import LLMProvider
from bot.llm.settings import LLMSettings, make_provider
from bot.pool.runner import ProcessRunner
from bot.settings import BotSettings
from bot.store.db import open_store
from bot.store.housekeeping import keep_tidy
from bot.store.settings import StoreSettings
from bot.telegram.app import build_application, keep_sending, on_startup, start_updates
from bot.telegram.services import BotServices, RateLimiter

log = logging.getLogger(__name__)

TOKEN_STEPS = """\
No Telegram bot token: TELEGRAM_BOT_TOKEN is not set. To get one:
  1. In Telegram, open a chat with @BotFather and send /newbot.
  2. Choose a display name, then a username ending in "bot" (e.g. my_barb_bot).
  3. BotFather replies with a token like 123456789:AA...; export it:
       export TELEGRAM_BOT_TOKEN='123456789:AA...'
  4. For groups, send /setprivacy to @BotFather and keep privacy on: Barb answers only
     when mentioned or replied to.
Then run `barb bot` again."""

LLM_STEPS = """\
Barb also needs a language model. Export one of:
  export ANTHROPIC_API_KEY=...                          (Claude; optional BARB_LLM_MODEL)
  export OPENAI_API_KEY=...                             (OpenAI; optional BARB_LLM_MODEL)
  export OPENAI_BASE_URL=http://127.0.0.1:8000/v1       (a local vLLM / llama.cpp / Ollama server)
         BARB_LLM_MODEL=<the model it serves>"""

NO_KEY_HINT = (
    "Meanwhile `barb query '<Barb Script JSON>'` answers questions with no key, e.g.\n"
    '  barb query \'{"session": "RTH", "from": "daily", "select": "mean(range)"}\''
)


def configured() -> tuple[BotSettings, LLMProvider] | None:
    """Settings and provider, or None after printing exactly what is missing."""
    settings = BotSettings()
    problems = []
    if settings.telegram_token is None:
        problems.append(TOKEN_STEPS)
    provider = None
    try:
        provider = make_provider(LLMSettings())
    except ConfigError as exc:
        problems.append(f"{exc}\n{LLM_STEPS}")
    if problems:
        click.echo("\n\n".join([*problems, NO_KEY_HINT]), err=True)
        return None
    assert provider is not None
    return settings, provider


@asynccontextmanager
async def running_bot(
    settings: BotSettings, provider: LLMProvider, store_settings: StoreSettings | None = None
) -> AsyncIterator[tuple[Application, BotServices]]:
    """The bot, started and receiving updates, with its housekeeping; stopped on exit."""
    store = await open_store(store_settings or StoreSettings())
    runner = ProcessRunner(
        workers=settings.workers,
        timeout_s=settings.query_timeout_s,
        warm_instruments=("NQ",),
    )
    assistant = Assistant(
        provider, store, runner, settings=AssistantSettings(), engine_settings=default_settings()
    )
    services = BotServices(
        settings=settings,
        assistant=assistant,
        store=store,
        runner=runner,
        limiter=RateLimiter(settings.questions_per_minute),
        examples=[e.question for e in query_examples()],
    )
    assert settings.telegram_token is not None
    application = build_application(
        settings.telegram_token.get_secret_value(),
        services,
        base_url=settings.telegram_api_base_url,
        max_rate=settings.telegram_max_rate,
    )
    try:
        async with application:
            await application.start()
            await on_startup(application)
            await start_updates(application, settings)
            # What is loaded by now lives as long as the bot: out of the cyclic collector's
            # full passes (~70 ms each over the libraries' objects, an event-loop stall).
            gc.freeze()
            background = [
                asyncio.create_task(keep_tidy(store)),
                asyncio.create_task(keep_sending(application)),
            ]
            try:
                yield application, services
            finally:
                for task in background:
                    task.cancel()
                await application.updater.stop()
                await application.stop()
    finally:
        await runner.close()
        await store.close()


async def serve(settings: BotSettings, provider: LLMProvider) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with running_bot(settings, provider) as (application, _):
        click.echo(f"Barb is running as @{application.bot.username}. Ctrl+C stops it.")
        await stop.wait()


@click.command()
def bot() -> None:
    """Start the Telegram bot (long polling; webhook mode with BARB_WEBHOOK_URL)."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # httpx logs every request URL, and Telegram URLs carry the bot token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    ready = configured()
    if ready is None:
        sys.exit(2)
    asyncio.run(serve(*ready))
