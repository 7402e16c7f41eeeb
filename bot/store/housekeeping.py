"""Periodic upkeep of the store: old plans expire, old bookkeeping rows go, and the leases
on the work and updates this replica holds are renewed while it lives."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta

from bot.store.records import PendingAction
from bot.store.replicas import ReplicaNameTaken
from bot.store.repository import Store

log = logging.getLogger(__name__)

PLAN_LIFETIME = timedelta(hours=24)
# Telegram keeps an undelivered update for at most 24 hours.
UPDATE_MEMORY = timedelta(days=2)
OUTBOX_MEMORY = timedelta(days=30)


#: Told of the plans (and clarifying questions) that expired, to keep them in the transcript.
OnExpired = Callable[[Sequence[PendingAction]], Awaitable[None]]


async def tidy(store: Store, on_expired: OnExpired | None = None) -> None:
    """One pass: plans nobody pressed for a day expire (their buttons then say so, and
    ``on_expired`` keeps them in the transcript: "run it" a day later is read knowing the
    plan was shown and never ran); old bookkeeping rows go; the transcript keeps each
    chat's last questions (``TranscriptRepository.prune``)."""
    expired = await store.pending.expire(PLAN_LIFETIME)
    if expired and on_expired is not None:
        await on_expired(expired)
    updates = await store.updates.prune(UPDATE_MEMORY)
    replies = await store.outbox.prune(OUTBOX_MEMORY)
    await store.rate_limits.prune()
    await store.albums.prune()
    messages = await store.transcript.prune()
    if expired or updates or replies or messages:
        log.info(
            "housekeeping: %d plans expired, %d update ids, %d sent replies and %d "
            "transcript rows dropped",
            len(expired),
            updates,
            replies,
            messages,
        )


async def keep_tidy(
    store: Store, every_s: float = 3600.0, *, on_expired: OnExpired | None = None
) -> None:
    """Run ``tidy`` now and then every ``every_s`` seconds until cancelled."""
    while True:
        try:
            await tidy(store, on_expired)
        except Exception:  # the next pass may succeed; never take the bot down for this
            log.exception("housekeeping failed")
        await asyncio.sleep(every_s)


async def keep_leases(store: Store, every_s: float) -> None:
    """Renew the leases on the work in flight and the unhandled updates this replica holds,
    every ``every_s`` seconds (a third of the lease), until cancelled: another replica takes
    them over only once this one has stopped renewing, i.e. has died.

    Each pass first checks that this replica still holds its name (``ReplicaNames.check``),
    and ends with ``ReplicaNameTaken`` when another process now holds it: the bot stops."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await store.replicas.check()
        except ReplicaNameTaken:
            raise
        except Exception:  # the database is away: not held until the next pass takes it
            log.exception("checking the hold on this replica's name failed")
        try:
            await store.in_flight.renew()
            await store.updates.renew()
        except Exception:  # the database is briefly away: the lease has slack for two misses
            log.exception("renewing this replica's leases failed")
