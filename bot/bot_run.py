"""The running `barb bot`: Telegram, the store, the workers and the assistant, started in
order and stopped on a signal (``barb bot``'s settings are read by ``bot.bot_cli`` first)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import click
from telegram.error import TelegramError
from telegram.ext import Application

from barb.reference import query_examples
from barb.settings import default_settings
from bot.assistant.orchestrator import MALFORMED_ATTEMPTS, Assistant, AssistantSettings
from bot.llm.provider import LLMProvider
from bot.llm.sdk_provider import RETRY_AFTER_CAP_S
from bot.llm.settings import LLMSettings
from bot.pool.choice import make_runner
from bot.settings import BotSettings
from bot.startup_errors import (
    database_failed,
    read_settings,
    replica_name_taken,
    schema_not_ready,
    telegram_failed,
)
from bot.store.db import open_store
from bot.store.errors import SchemaError
from bot.store.housekeeping import keep_leases, keep_tidy
from bot.store.replicas import ReplicaNameTaken
from bot.store.settings import StoreSettings
from bot.telegram.app import (
    StoppableUpdates,
    build_application,
    graced,
    keep_sending,
    on_startup,
    receiving,
)
from bot.telegram.services import SERVICES_KEY, BotServices, RateLimiter

log = logging.getLogger(__name__)


@asynccontextmanager
async def connected(application: Application, api_url: str | None) -> AsyncIterator[None]:
    """The Application initialized (``getMe``: the token works, the server answers), shut
    down on exit; a Telegram failure on the way in becomes a ``StartupError``."""
    try:
        await application.initialize()
    except TelegramError as exc:
        raise telegram_failed(exc, api_url) from None
    try:
        yield
    finally:
        await application.shutdown()


@asynccontextmanager
async def running_bot(
    settings: BotSettings,
    provider: LLMProvider,
    store_settings: StoreSettings | None = None,
    *,
    shutdown: Shutdown | None = None,
    llm_settings: LLMSettings | None = None,
) -> AsyncIterator[tuple[Application, BotServices]]:
    """The bot, started and receiving updates, with its housekeeping; stopped on exit.

    Telegram is asked first, so that a wrong token or an unreachable server is reported
    before anything else starts. On exit, answers in progress get ``shutdown_grace_s`` (or
    until ``shutdown.hurry`` is set) to finish; the rest are stopped and resumed at the next
    start, and the worker processes are stopped with them.
    """
    assert settings.telegram_token is not None
    application = build_application(
        settings.telegram_token.get_secret_value(),
        base_url=settings.telegram_api_base_url,
        base_file_url=settings.telegram_api_file_url,
        max_rate=settings.telegram_max_rate,
        shared_flood_url=settings.queue_url,
    )
    stopping = shutdown or Shutdown()
    # Read once: the runner drops the checks the assistant no longer waits for.
    assistant_settings = AssistantSettings()
    async with connected(application, settings.telegram_api_base_url):
        store_settings = store_settings or read_settings(StoreSettings)
        try:
            store = await open_store(store_settings)
        except SchemaError as exc:
            raise schema_not_ready(exc) from None
        except Exception as exc:
            raise database_failed(exc, _safe_url(store_settings)) from None
        try:
            # Before anything is taken over: under a live replica's name this one would
            # take its work as its own previous life's.
            await store.replicas.hold()
        except ReplicaNameTaken as exc:
            await store.close()
            raise replica_name_taken(exc) from None
        except BaseException:
            await store.close()
            raise
        runner = make_runner(
            settings,
            warm_instruments=("NQ",),
            check_wait_s=assistant_settings.check_wait_s,
            keep_taken_s=resume_window_s(
                store_settings, settings, llm_settings or read_settings(LLMSettings)
            ),
        )
        try:
            services = BotServices(
                settings=settings,
                assistant=Assistant(
                    provider,
                    store,
                    runner,
                    settings=assistant_settings,
                    engine_settings=default_settings(),
                ),
                store=store,
                runner=runner,
                limiter=RateLimiter(settings.questions_per_minute),
                examples=query_examples(),
            )
            application.bot_data[SERVICES_KEY] = services
            try:
                await application.start()
                background = [
                    asyncio.create_task(
                        keep_tidy(store, on_expired=services.assistant.keep_expired)
                    ),
                    asyncio.create_task(keep_leases(store, store_settings.work_lease_s / 3)),
                ]
                background[-1].add_done_callback(stopping.on_leases_ended)
                updates = contextlib.AsyncExitStack()
                passes_end = asyncio.Event()
                try:
                    try:
                        # Its resumption is stopped with the answers in progress, after
                        # the grace period (``_stop_answering``), not with the housekeeping.
                        await on_startup(application)
                        await updates.enter_async_context(receiving(application, settings))
                    except TelegramError as exc:
                        raise telegram_failed(exc, settings.telegram_api_base_url) from None
                    # What is loaded by now lives as long as the bot: out of the cyclic
                    # collector's full passes (~70 ms each over the libraries' objects, an
                    # event-loop stall).
                    gc.freeze()
                    # Stopped with the answers in progress, after its step under way.
                    graced(
                        application,
                        keep_sending(application, settings.sending_pass_s, until=passes_end),
                        "barb-sending-pass",
                    )
                    yield application, services
                finally:
                    passes_end.set()
                    for task in background:
                        task.cancel()
                    # Ended before the store closes: a pass cut mid-statement still rolls
                    # back on the database's thread, which must find the loop running.
                    await asyncio.wait(background, timeout=STUCK_AFTER_S)
                    await updates.aclose()
                    await _stop_answering(application, settings.shutdown_grace_s, stopping)
            finally:
                if application.running:
                    await application.stop()
                await services.close()
        finally:
            await runner.close()
            if not await store.close():  # logged; its driver's thread would hold the exit
                stopping.stuck = True


def answer_turn_s(llm: LLMSettings) -> float:
    """The longest the model's turn that words a run's answer takes (between the answer
    taken and its reply stored): each try waits ``BARB_LLM_TIMEOUT_S``, tried
    ``BARB_LLM_MAX_RETRIES`` times more, each retry after a wait of at most
    ``RETRY_AFTER_CAP_S`` (a rate limit's ``retry-after``, or the SDK's own backoff, shorter).
    A malformed answer (HTTP 200 that is no usable answer) is asked for once more
    (``MALFORMED_ATTEMPTS``), with the SDK's tries again: a model that took its whole time
    to write a broken tool call makes the person wait for both. Default: 2 × (3 × 60 s +
    2 × 20 s) = 440 s. Before, the malformed retry was not counted (220 s), as if such an
    answer always came back at once."""
    tries = llm.max_retries + 1
    one_call = tries * llm.timeout_s + llm.max_retries * RETRY_AFTER_CAP_S
    return MALFORMED_ATTEMPTS * one_call


def resume_window_s(
    store_settings: StoreSettings, settings: BotSettings, llm: LLMSettings
) -> float:
    """How long after a run's answer is taken a reader may still come for it, when the bot
    is killed before the reply is stored: the model's turn wording it (``answer_turn_s``,
    from the model's configured timeout and retries), the killed replica's lease on the run
    (``work_lease_s``), then the sending pass of the replica taking it over
    (``sending_pass_s``). A restart under the same name resumes it at once. A reader later
    than that computes the query again; nothing is lost. Default: 440 + 90 + 60 = 590 s."""
    return answer_turn_s(llm) + store_settings.work_lease_s + settings.sending_pass_s


@dataclass
class Shutdown:
    """How a running bot is being stopped."""

    #: Set: the bot is to stop (a signal, or its name taken by another process).
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    #: Set: the answers in progress are stopped now, without their grace period.
    hurry: asyncio.Event = field(default_factory=asyncio.Event)
    #: Another process took this replica's name while it ran (its lock's connection had
    #: dropped): it stops and exits as a start under a taken name does.
    name_taken: ReplicaNameTaken | None = None
    #: Something did not stop when told (its stack is logged), or the database did not
    #: close: end the process without waiting for it, once the rest is closed.
    stuck: bool = False

    def on_leases_ended(self, task: asyncio.Task[None]) -> None:
        """``keep_leases`` ends only when cancelled or when the name was taken: then stop."""
        error = None if task.cancelled() else task.exception()
        if isinstance(error, ReplicaNameTaken):
            self.name_taken = error
            self.stop.set()


#: Once the answers in progress were told to stop, how long python-telegram-bot may take to
#: wind down before the bot logs what is stuck and closes the rest anyway.
STUCK_AFTER_S = 10.0


async def _stop_answering(application: Application, grace_s: float, shutdown: Shutdown) -> None:
    """Let the answers in progress finish for ``grace_s``; then stop the ones left. What
    they stored stays: an unsent reply is sent, an unfinished run resumed, at the next
    start."""
    stopping = asyncio.create_task(application.stop())
    hurried = asyncio.create_task(shutdown.hurry.wait())
    await asyncio.wait({stopping, hurried}, timeout=grace_s, return_when=asyncio.FIRST_COMPLETED)
    hurried.cancel()
    if stopping.done():
        await stopping
        return
    processor = application.update_processor
    stopped = processor.stop_running() if isinstance(processor, StoppableUpdates) else 0
    log.warning("stopped %d answers in progress; they resume at the next start", stopped)
    done, _ = await asyncio.wait({stopping}, timeout=STUCK_AFTER_S)
    if done:
        await stopping
        return
    shutdown.stuck = True
    for task in asyncio.all_tasks():
        if task is not asyncio.current_task():
            stack = io.StringIO()
            task.print_stack(file=stack)
            log.warning("still running at shutdown: %s", stack.getvalue().strip())


def _safe_url(settings: StoreSettings) -> str:
    try:
        return settings.safe_url
    except Exception:  # not even a URL: name the setting instead
        return "that BARB_DATABASE_URL names"


async def serve(settings: BotSettings, provider: LLMProvider) -> None:
    """Run until SIGTERM or Ctrl+C; a second one stops what is still running at once."""
    shutdown = Shutdown()
    stop = shutdown.stop

    def on_signal() -> None:
        if stop.is_set():
            shutdown.hurry.set()
        else:
            stop.set()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    async with running_bot(settings, provider, shutdown=shutdown) as (application, _):
        click.echo(f"Barb is running as @{application.bot.username}. Ctrl+C stops it.")
        await stop.wait()
        if shutdown.name_taken is not None:
            raise replica_name_taken(shutdown.name_taken)
        click.echo(
            f"Stopping: answers in progress get {settings.shutdown_grace_s:g} s to finish "
            "(Ctrl+C again stops them now; they resume at the next start).",
            err=True,
        )
    if shutdown.stuck:
        # The workers and the database are closed; waiting for what is stuck (logged above)
        # would only keep a supervisor waiting.
        logging.shutdown()
        os._exit(0)
