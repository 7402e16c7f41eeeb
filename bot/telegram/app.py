"""Wiring: the PTB Application, its handlers and commands. ``main`` only wires."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import TypeVar

from telegram import Update
from telegram.constants import FloodLimit
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    MessageHandler,
    SimpleUpdateProcessor,
    TypeHandler,
    filters,
)

from bot.settings import BotSettings, telegram_api_url, telegram_file_url
from bot.telegram import data_upload, handlers, keyboards
from bot.telegram.buttons import BUTTONS, callback, on_unknown_button
from bot.telegram.commands import COMMANDS, MENU_LANGUAGES, handler, menu
from bot.telegram.flood import OrderedRateLimiter
from bot.telegram.handling import handling
from bot.telegram.intake import Intake, handle_orphaned, polling, webhook
from bot.telegram.recovery import finish_answered_runs, resume_abandoned, resume_interrupted
from bot.telegram.services import SERVICES_KEY, BotServices, leave_turn

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Messages that are not text: one line saying what Barb can do, no model call.
NOT_TEXT = (
    filters.PHOTO
    | filters.Document.ALL
    | filters.Sticker.ALL
    | filters.VOICE
    | filters.AUDIO
    | filters.VIDEO
    | filters.VIDEO_NOTE
    | filters.ANIMATION
    | filters.LOCATION
    | filters.CONTACT
    | filters.POLL
)


#: PTB's default for ``concurrent_updates(True)``.
CONCURRENT_UPDATES = 256


class StoppableUpdates(SimpleUpdateProcessor):
    """Updates handled concurrently, as with PTB's default processor, and the handlers still
    running at shutdown can be stopped (their work is resumed at the next start)."""

    def __init__(self, max_concurrent_updates: int = CONCURRENT_UPDATES) -> None:
        super().__init__(max_concurrent_updates)
        self._running: set[asyncio.Task[object]] = set()
        #: Called once an update's handlers have ended (``Intake.handled``).
        self.on_handled: Callable[[object], Awaitable[None]] | None = None

    async def do_process_update(self, update: object, coroutine: Awaitable[object]) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._running.add(task)
        try:
            with handling(update.update_id if isinstance(update, Update) else None):
                await coroutine  # PTB hands a handler's exception to the error handler
        finally:
            self._running.discard(task)
            # The update's place in its chat's line (taken by handlers.stamp_arrival) goes.
            leave_turn()
        # Not reached when stopped at shutdown: that update is handled at the next start.
        if self.on_handled is not None:
            try:
                await self.on_handled(update)
            except Exception:  # handled again at the next start: a duplicate, never a loss
                log.exception("could not mark an update handled")

    def track(self, task: asyncio.Task[object]) -> None:
        """Work begun outside an update (the start-up's resumption, the sending pass's) is
        stopped as the handlers are: given the shutdown's grace period (``Application.stop``
        waits for it), then cancelled by ``stop_running``."""
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    def stop_running(self) -> int:
        """Cancel every handler (and work ``track``ed) still running; how many there were."""
        for task in self._running:
            task.cancel()
        return len(self._running)


async def on_startup(application: Application) -> asyncio.Task[int]:
    """Once the bot is started: register the commands shown in Telegram's menu, send what a
    previous run stored but could not send, then resume the work it left unfinished (in
    the background: new updates are served meanwhile; a shutdown stops it as it stops
    fresh work, ``graced``). Uploads nobody pressed for a day are let go."""
    for number, lang in enumerate(MENU_LANGUAGES):
        # The first language is everyone's default; the others for their language_code.
        await application.bot.set_my_commands(menu(lang), language_code=lang if number else None)
    sent = await send_queued(application)
    if sent:
        log.info("sent %d replies queued before the start", sent)
    data_upload.expire_offers(application.bot_data[SERVICES_KEY])
    return graced(application, resume_interrupted(application), "barb-resume-interrupted")


def graced(
    application: Application,  # type: ignore[type-arg]
    work: Coroutine[object, object, T],
    name: str,
) -> asyncio.Task[T]:
    """Work in the background (resumed work, the sending pass) stopped at shutdown as
    fresh work is: after the grace period (``StoppableUpdates.track``). Before, it was
    cancelled as the shutdown began: a reply on the wire was cut, and sent again at the
    next start."""
    task = application.create_task(work, name=name)
    processor = getattr(application, "update_processor", None)
    if isinstance(processor, StoppableUpdates):
        processor.track(task)
    return task


async def send_queued(application: Application, older_than: timedelta | None = None) -> int:
    """Send the outbox's queued replies, each chat under its lock (in order, never twice)."""
    svc: BotServices = application.bot_data[SERVICES_KEY]
    sender = svc.sender(application.bot)
    chats = sorted({m.chat_id for m in await svc.store.outbox.unsent(older_than=older_than)})
    # A supergroup whose move another replica recorded waits for its group's answers, and
    # the group's replies still queued under its old id go under the supergroup's lock.
    await svc.learn_moves(chats)
    sent = 0
    for chat_id in chats:
        async with svc.chat_lock(chat_id):
            sent += await sender.flush(chat_id, older_than=older_than)
    return sent


async def keep_sending(
    application: Application,  # type: ignore[type-arg]
    every_s: float = 60.0,
    until: asyncio.Event | None = None,
) -> None:
    """While the bot runs: retry replies that Telegram did not take (network, flood control),
    and the "Done." of plans whose answer went out while Telegram was unreachable; take over
    the updates and the work of replicas that died.

    Only replies queued over ``every_s`` ago: younger ones may still be in their handler's
    hands. Once ``until`` is set (the shutdown), the step under way ends and no other
    starts: a reply on the wire is not cut (before: the pass was cancelled mid-send, and
    the reply Telegram had carried out was sent again at the next start). The work it
    resumed is stopped only once the grace period is over (``graced``), and stays in
    flight for the next start.
    """
    svc: BotServices = application.bot_data[SERVICES_KEY]
    resuming: asyncio.Task[int] | None = None
    abandoned: asyncio.Task[int] | None = None
    older_than = timedelta(seconds=every_s)
    stopping = until or asyncio.Event()
    while not await _stopped_within(stopping, every_s):
        # Each step on its own: one that fails (Telegram still down, a statement
        # refused) is tried again at the next pass, and never keeps the others from
        # running. Updates another replica stored and died before handling (lease
        # expired): to the handlers here, first, since that needs the database only.
        await _step("handling orphaned updates", handle_orphaned(application, svc.store))
        if stopping.is_set():
            return
        sent = await _step("sending queued replies", send_queued(application, older_than))
        if sent:
            log.info("sent %d queued replies", sent)
        if stopping.is_set():
            return
        await _step("finishing answered runs", finish_answered_runs(application, older_than))
        if stopping.is_set():
            return
        # This replica's own work the database went away under (its lease was kept),
        # resumed in the background too.
        if svc.abandoned and (abandoned is None or abandoned.done()):
            abandoned = graced(application, resume_abandoned(application), "barb-resume-abandoned")
        # Work of another replica that died (its lease expired): resumed here, in the
        # background, since answering may take a while.
        if resuming is None or resuming.done():
            resuming = graced(
                application, resume_interrupted(application, own=False), "barb-resume-orphans"
            )


async def _stopped_within(stopping: asyncio.Event, seconds: float) -> bool:
    """Wait ``seconds``, or less if ``stopping`` is set meanwhile; whether it is."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await stopping.wait()
    return stopping.is_set()


async def _step(name: str, step: Awaitable[T]) -> T | None:
    """One step of the sending pass (``keep_sending``); None, logged, when it fails."""
    try:
        return await step
    except Exception:
        log.exception("%s failed", name)
        return None


@asynccontextmanager
async def receiving(
    application: Application,  # type: ignore[type-arg]
    settings: BotSettings,
) -> AsyncIterator[Intake]:
    """Receive updates while inside: a webhook when BARB_WEBHOOK_URL is set, long polling
    otherwise; either way each update is stored before Telegram is told (``intake``)."""
    svc: BotServices = application.bot_data[SERVICES_KEY]
    intake = Intake(
        application, svc.store, poll_timeout_s=settings.poll_timeout_s, kill_at=settings.kill_at
    )
    processor = application.update_processor
    if isinstance(processor, StoppableUpdates):
        processor.on_handled = intake.handled
    if settings.webhook_url:
        secret = settings.webhook_secret
        async with webhook(
            intake,
            listen=settings.webhook_listen,
            port=settings.webhook_port,
            url=settings.webhook_url,
            secret=secret.get_secret_value() if secret else None,
        ) as port:
            log.info("webhook listening on port %s", port)
            yield intake
    else:
        async with polling(intake):
            log.info("long polling as @%s", application.bot.username)
            yield intake


def build_application(
    token: str,
    services: BotServices | None = None,
    *,
    base_url: str | None = None,
    base_file_url: str | None = None,
    max_rate: float = FloodLimit.MESSAGES_PER_SECOND,
    shared_flood_url: str | None = None,
) -> Application:
    """The bot: updates of different chats run concurrently, one chat's in order (its lock).

    ``base_url`` and ``base_file_url`` in PTB's form (``…/bot``, the token appended) or as
    the server's bare root. ``services`` may be given later (``bot_data[SERVICES_KEY]``),
    once the token is known to work. ``shared_flood_url`` (Redis) shares the token's flood
    limit with the other replicas of the bot.
    """
    builder: ApplicationBuilder = (
        Application.builder()
        .token(token)
        .concurrent_updates(StoppableUpdates())
        # Updates come in through ``intake`` (stored before they are confirmed), not PTB's
        # Updater, which confirms them before a handler has recorded anything.
        .updater(None)
    )
    if base_url or base_file_url:
        api_url = telegram_api_url(base_url or "https://api.telegram.org")
        builder = builder.base_url(api_url).base_file_url(telegram_file_url(base_file_url, api_url))
    # Flood control: at most ``max_rate`` requests a second overall (0: no throttle) and
    # Telegram's per-group limit; a RetryAfter is waited out and the request retried.
    shared = None
    if shared_flood_url:
        from bot.telegram.shared_flood import SharedFloodBudget  # Redis only when it is used

        shared = SharedFloodBudget(shared_flood_url, token, max_rate)
    builder = builder.rate_limiter(
        OrderedRateLimiter(overall_max_rate=max_rate, max_retries=3, shared=shared)
    )
    application = builder.build()
    if services is not None:
        application.bot_data[SERVICES_KEY] = services

    application.add_handler(TypeHandler(Update, handlers.stamp_arrival), group=-3)
    application.add_handler(TypeHandler(Update, handlers.ignore_unasked), group=-2)
    application.add_handler(TypeHandler(Update, handlers.enforce_access), group=-1)
    application.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, handlers.on_migrated))
    # Before the others: an edited text would otherwise be handled as a new message.
    application.add_handler(MessageHandler(filters.UpdateType.EDITED_MESSAGE, handlers.on_edited))
    for command in COMMANDS:
        application.add_handler(CommandHandler(command.name, handler(command)))
    application.add_handler(MessageHandler(filters.COMMAND, handlers.on_unknown_command))
    application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, handlers.on_text))
    # A data file from an admin is an import offer; any other non-text message gets one line.
    application.add_handler(MessageHandler(filters.Document.ALL, data_upload.on_document))
    application.add_handler(MessageHandler(NOT_TEXT, handlers.on_not_text))
    application.add_handler(
        CallbackQueryHandler(data_upload.on_upload_button, pattern=data_upload.PATTERN)
    )
    for prefix, on_press in BUTTONS.items():
        pattern = rf"^{re.escape(prefix)}({re.escape(keyboards.SEPARATOR)}|$)"
        application.add_handler(CallbackQueryHandler(callback(on_press), pattern=pattern))
    application.add_handler(CallbackQueryHandler(on_unknown_button))
    application.add_error_handler(handlers.on_error)
    return application
