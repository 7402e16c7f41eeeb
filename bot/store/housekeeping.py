"""Periodic upkeep of the store: old plans expire, old bookkeeping rows go, and the leases
on the work and updates this replica holds are renewed while it lives."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from bot.store.replicas import ReplicaNameTaken
from bot.store.repository import Store

log = logging.getLogger(__name__)

PLAN_LIFETIME = timedelta(hours=24)
# Telegram keeps an undelivered update for at most 24 hours.
UPDATE_MEMORY = timedelta(days=2)
OUTBOX_MEMORY = timedelta(days=30)


async def tidy(store: Store) -> None:
    """One pass: plans nobody pressed for a day expire (their buttons then say so)."""
    expired = await store.pending.expire(PLAN_LIFETIME)
    updates = await store.updates.prune(UPDATE_MEMORY)
    replies = await store.outbox.prune(OUTBOX_MEMORY)
    await store.rate_limits.prune()
    if expired or updates or replies:
        log.info(
            "housekeeping: %d plans expired, %d update ids and %d sent replies dropped",
            len(expired),
            updates,
            replies,
        )


async def keep_tidy(store: Store, every_s: float = 3600.0) -> None:
    """Run ``tidy`` now and then every ``every_s`` seconds until cancelled."""
    while True:
        try:
            await tidy(store)
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
