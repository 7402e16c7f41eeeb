"""Wiring: the PTB Application, its handlers and commands. ``main`` only wires."""

from __future__ import annotations

import logging

from telegram import BotCommand, Update
from telegram.ext import (
    AIORateLimiter,
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    MessageHandler,
    TypeHandler,
    filters,
)

from bot.settings import BotSettings
from bot.telegram import handlers
from bot.telegram.services import SERVICES_KEY, BotServices

log = logging.getLogger(__name__)

COMMANDS = [
    ("start", "What Barb does, with examples"),
    ("help", "How to ask, and the commands"),
    ("instrument", "Choose NQ, ES or CL"),
    ("settings", "Confirmation, charts, language"),
    ("reset", "Forget this conversation"),
    ("query", "Run Barb Script JSON directly"),
    ("examples", "Example questions"),
    ("usage", "Tokens and cost today"),
]


async def on_startup(application: Application) -> None:
    """Once the bot is started: register the commands shown in Telegram's menu."""
    await application.bot.set_my_commands([BotCommand(name, text) for name, text in COMMANDS])


WEBHOOK_PATH = "telegram"


async def start_updates(application: Application, settings: BotSettings) -> None:
    """Receive updates: a webhook when BARB_WEBHOOK_URL is set, long polling otherwise."""
    if settings.webhook_url:
        await application.updater.start_webhook(
            listen=settings.webhook_listen,
            port=settings.webhook_port,
            url_path=WEBHOOK_PATH,
            webhook_url=f"{settings.webhook_url.rstrip('/')}/{WEBHOOK_PATH}",
        )
        log.info("webhook listening on port %s", settings.webhook_port)
    else:
        await application.updater.start_polling()
        log.info("long polling as @%s", application.bot.username)


def build_application(
    token: str,
    services: BotServices,
    *,
    base_url: str | None = None,
    rate_limiter: bool = True,
) -> Application:
    """The bot: updates of different chats run concurrently, one chat's in order (its lock)."""
    builder: ApplicationBuilder = Application.builder().token(token).concurrent_updates(True)
    if base_url:
        root = base_url.rstrip("/")
        builder = builder.base_url(f"{root}/bot").base_file_url(f"{root}/file/bot")
    if rate_limiter:
        # Flood control: waits and retries on RetryAfter instead of losing the message.
        builder = builder.rate_limiter(AIORateLimiter(max_retries=3))
    application = builder.build()
    application.bot_data[SERVICES_KEY] = services

    application.add_handler(TypeHandler(Update, handlers.drop_duplicates), group=-2)
    application.add_handler(TypeHandler(Update, handlers.enforce_access), group=-1)
    application.add_handler(CommandHandler("start", handlers.cmd_start))
    application.add_handler(CommandHandler("help", handlers.cmd_help))
    application.add_handler(CommandHandler("instrument", handlers.cmd_instrument))
    application.add_handler(CommandHandler("settings", handlers.cmd_settings))
    application.add_handler(CommandHandler("reset", handlers.cmd_reset))
    application.add_handler(CommandHandler("query", handlers.cmd_query))
    application.add_handler(CommandHandler("examples", handlers.cmd_examples))
    application.add_handler(CommandHandler("usage", handlers.cmd_usage))
    application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, handlers.on_text))
    application.add_handler(CallbackQueryHandler(handlers.on_button))
    application.add_error_handler(handlers.on_error)
    return application
