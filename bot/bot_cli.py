"""`barb bot`: start the Telegram bot, or say exactly what is missing to start it.

Only the settings are read here; what runs the bot (``bot.bot_run``) is imported once they
are known to be good, so that a missing token or a wrong value is named at once.
"""

from __future__ import annotations

import asyncio
import logging
import sys

import click

from barb.settings import EngineSettings
from bot.llm.errors import ConfigError, NoModelConfigured
from bot.llm.provider import LLMProvider
from bot.llm.settings import LLMSettings, make_provider
from bot.settings import BotSettings
from bot.startup_errors import StartupError, read_settings
from bot.store.settings import StoreSettings

TOKEN_STEPS = """\
No Telegram bot token: TELEGRAM_BOT_TOKEN is not set. To get one:
  1. In Telegram, open a chat with @BotFather and send /newbot.
  2. Choose a display name, then a username ending in "bot" (e.g. my_barb_bot).
  3. BotFather replies with a token like 123456789:AA...; export it:
       export TELEGRAM_BOT_TOKEN='123456789:AA...'
  4. For groups, send /setprivacy to @BotFather and keep privacy on: Barb answers only
     when mentioned or replied to."""

LLM_STEPS = """\
  export ANTHROPIC_API_KEY=...                          (Claude; optional BARB_LLM_MODEL)
  export OPENAI_API_KEY=...                             (OpenAI; optional BARB_LLM_MODEL)
  export OPENAI_BASE_URL=http://127.0.0.1:8000/v1       (a local vLLM / llama.cpp / Ollama server)
         BARB_LLM_MODEL=<the model it serves>"""

RUN_AGAIN = "Then run `barb bot` again."

NO_KEY_HINT = (
    "Meanwhile `barb query '<Barb Script JSON>'` answers questions with no key, e.g.\n"
    '  barb query \'{"session": "RTH", "from": "daily", "select": "mean(range)"}\''
)


def configured() -> tuple[BotSettings, LLMProvider] | None:
    """Settings and provider, or None after printing exactly what is missing.

    Raises ``StartupError`` for a setting that is set but wrong.
    """
    settings = read_settings(BotSettings)
    read_settings(EngineSettings)  # read again by each worker: a wrong value is named here
    read_settings(StoreSettings)  # read after getMe: a wrong database URL is named before it
    provider = model_problem = None
    try:
        provider = make_provider(read_settings(LLMSettings))
    except ConfigError as exc:
        model_problem = exc
    token_missing = settings.telegram_token is None
    if token_missing or model_problem is not None:
        click.echo(not_configured(token_missing, model_problem), err=True)
        return None
    assert provider is not None
    return settings, provider


def not_configured(token_missing: bool, model_problem: ConfigError | None) -> str:
    """What to set before `barb bot` can start: the token's steps, the model's, or both.

    The model's part opens "Barb also needs a language model" only after the token's steps;
    alone it is "No language model: ...". A provider chosen but not completed (e.g.
    ``BARB_LLM_PROVIDER=anthropic`` with no key) keeps its own sentence, which names the one
    variable missing.
    """
    parts = [TOKEN_STEPS] if token_missing else []
    if isinstance(model_problem, NoModelConfigured):
        lead = "Barb also needs a language model" if token_missing else "No language model"
        parts.append(
            f"{lead}: none of ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENAI_BASE_URL is set. "
            f"Export one of:\n{LLM_STEPS}"
        )
    elif model_problem is not None:
        parts.append(
            f"{'Barb also needs a language model: ' if token_missing else ''}{model_problem}"
        )
    return "\n\n".join([*parts, RUN_AGAIN, NO_KEY_HINT])


@click.command()
def bot() -> None:
    """Start the Telegram bot (long polling; webhook mode with BARB_WEBHOOK_URL)."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # httpx logs every request URL, and Telegram URLs carry the bot token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        ready = configured()
        if ready is None:
            sys.exit(2)
        # Imported only now: the engine, the charts and the assistant take seconds to load,
        # and a missing or wrong setting is named before that.
        from bot.bot_run import serve

        asyncio.run(serve(*ready))
    except StartupError as exc:
        click.echo(f"barb bot: {exc.sentence}", err=True)
        sys.exit(exc.exit_status)
    except KeyboardInterrupt:  # Ctrl+C before the bot was running: nothing to stop
        sys.exit(130)
