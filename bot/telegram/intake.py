"""Updates in: stored before Telegram is told they arrived, handled once, none lost.

python-telegram-bot's Updater hands an update to the handlers and confirms it to Telegram
with its next ``getUpdates`` (``offset`` = last + 1) before a handler has recorded anything:
a kill in between lost the update. Barb polls itself instead (or serves its own webhook):

1. ``getUpdates`` with the offset of the updates received so far;
2. the updates are stored (``store.updates.receive``, one transaction); one already stored
   (a redelivery) is dropped;
3. the new ones go to the Application's ``update_queue`` and are handled as before;
4. only then does the next ``getUpdates`` (or the webhook's 200) confirm them.

An update is marked handled when its handlers end (``StoppableUpdates.on_handled``), or as
soon as its first reply is stored or its work is recorded in flight, in that transaction
(``bot.store.updates.mark_handled``; ``bot.telegram.handling``). At start-up the
updates this replica stored and did not handle (its last process was killed or stopped in
between) are handled first, once; those of a replica that is gone (its lease expired) are
taken over then and by the periodic pass (``bot.telegram.app.keep_sending``), each by
exactly one replica (``UpdateRepository.take_over``).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import tornado.netutil
import tornado.web
from telegram import Update
from telegram.error import RetryAfter, TelegramError, TimedOut
from telegram.ext import Application
from tornado.httpserver import HTTPServer

from bot.kill_points import KillPoint, reached
from bot.store.repository import Store
from bot.telegram.stopping import cancel_and_wait
from bot.work_order import arrived

log = logging.getLogger(__name__)

#: After a failed getUpdates, wait this long, doubling up to the cap, before the next.
RETRY_FIRST_S = 0.5
RETRY_CAP_S = 30.0
WEBHOOK_PATH = "telegram"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class Intake:
    """Where updates enter the bot: stored, then queued for the Application's handlers."""

    def __init__(
        self,
        application: Application,  # type: ignore[type-arg]
        store: Store,
        *,
        poll_timeout_s: int = 10,
        kill_at: KillPoint | None = None,
    ) -> None:
        self.application = application
        self.store = store
        self.poll_timeout_s = poll_timeout_s
        self.kill_at = kill_at

    async def receive(self, updates: Sequence[Update]) -> int:
        """Store ``updates``, then queue the ones not seen before; how many were new. An
        exception (the database failing) leaves them unconfirmed: Telegram sends them again."""
        # Someone is waiting on these: their storing comes before work already acknowledged
        # (``bot.work_order``), as PTB's queue put them before it.
        arrived()
        fresh = set(await self.store.updates.receive([(u.update_id, u.to_dict()) for u in updates]))
        reached("update_stored", self.kill_at)
        for update in updates:
            if update.update_id in fresh:
                await self.application.update_queue.put(update)
        return len(fresh)

    async def handle_stored(self) -> int:
        """Queue the updates this replica's previous process stored and did not handle, and
        those of replicas that are gone; how many."""
        return await handle_orphaned(self.application, self.store, own=True)

    async def handled(self, update: object) -> None:
        """The update's handlers have ended (``StoppableUpdates.on_handled``)."""
        if isinstance(update, Update):
            await self.store.updates.handled(update.update_id)

    async def poll(self) -> None:
        """Long polling until cancelled; each batch stored before the next call confirms it."""
        bot = self.application.bot
        offset: int | None = None
        timeout = timedelta(seconds=self.poll_timeout_s)
        wait_s = RETRY_FIRST_S
        while True:
            try:
                updates = await bot.get_updates(
                    offset=offset, timeout=timeout, allowed_updates=Update.ALL_TYPES
                )
                if updates:
                    await self.receive(updates)
                    offset = updates[-1].update_id + 1
            except TimedOut:
                continue  # a long poll that outlived its connection: ask again
            except RetryAfter as exc:
                await asyncio.sleep(_seconds(exc.retry_after))
                continue
            except Exception as exc:
                # Telegram unreachable, another instance polling (Conflict), the token
                # revoked, the database failing: nothing was confirmed, so nothing is lost;
                # try again, later (never a polling task that died unseen).
                level = logging.WARNING if isinstance(exc, TelegramError) else logging.ERROR
                log.log(level, "receiving updates failed; retrying in %.1fs", wait_s, exc_info=exc)
                await asyncio.sleep(wait_s)
                wait_s = min(wait_s * 2, RETRY_CAP_S)
                continue
            wait_s = RETRY_FIRST_S


async def handle_orphaned(
    application: Application,  # type: ignore[type-arg]
    store: Store,
    *,
    own: bool = False,
) -> int:
    """Take over the updates stored and not handled by a replica that is gone (its lease
    expired) and queue them for the handlers; with ``own``, at start-up, this replica's own
    as well. How many."""
    stored = await store.updates.take_over(own=own)
    for update_id, payload in stored:
        try:
            update = Update.de_json(payload, application.bot)
        except Exception:  # stored by a version that read it differently: not start-up's end
            log.exception("stored update %s cannot be read; dropped", update_id)
            await store.updates.handled(update_id)
            continue
        await application.update_queue.put(update)
    if stored:
        log.info("handling %d updates received and left unhandled by a stop", len(stored))
    return len(stored)


def _seconds(period: timedelta | float) -> float:
    return period.total_seconds() if isinstance(period, timedelta) else float(period)


@asynccontextmanager
async def polling(intake: Intake) -> AsyncIterator[None]:
    """Long polling while inside: the webhook (if one was set) removed first, the updates a
    previous process left unhandled queued, then polling. Stopped on exit; what was received
    and not confirmed is sent again by Telegram and refused as a duplicate."""
    await intake.application.bot.delete_webhook()
    await intake.handle_stored()
    task = asyncio.create_task(intake.poll(), name="barb-intake-polling")
    try:
        yield
    finally:
        await cancel_and_wait(task)


class _WebhookHandler(tornado.web.RequestHandler):
    """One update per POST, stored before the 200 that tells Telegram it arrived."""

    def initialize(self, intake: Intake, secret: str | None) -> None:
        self.intake = intake
        self.secret = secret

    async def post(self) -> None:
        if self.secret is not None and not hmac.compare_digest(
            self.request.headers.get(SECRET_HEADER, ""), self.secret
        ):
            self.set_status(403)
            return
        try:
            payload: Any = json.loads(self.request.body)
            update = Update.de_json(payload, self.intake.application.bot)
        except (ValueError, TypeError, KeyError):
            log.warning("webhook: a request that is not an update was refused")
            self.set_status(400)
            return
        try:
            await self.intake.receive([update])
        except Exception:
            # Not stored: a 500 makes Telegram send it again later.
            log.exception("webhook: update %s not stored", update.update_id)
            self.set_status(500)
            return
        self.set_status(200)


@asynccontextmanager
async def webhook(
    intake: Intake, *, listen: str, port: int, url: str, secret: str | None
) -> AsyncIterator[int]:
    """Serve Telegram's webhook at ``/telegram`` while inside; yields the port listened on
    (``port`` 0 picks a free one). Updates left unhandled by a previous process first."""
    app = tornado.web.Application(
        [(rf"/{WEBHOOK_PATH}", _WebhookHandler, {"intake": intake, "secret": secret})],
        log_function=lambda handler: None,
    )
    server = HTTPServer(app)
    sockets = tornado.netutil.bind_sockets(port, listen)
    server.add_sockets(sockets)
    await intake.handle_stored()
    try:
        await intake.application.bot.set_webhook(
            f"{url.rstrip('/')}/{WEBHOOK_PATH}",
            secret_token=secret,
            allowed_updates=Update.ALL_TYPES,
        )
        yield sockets[0].getsockname()[1]
    finally:
        server.stop()
        await server.close_all_connections()
