"""The store: one object the application opens at start-up and passes to whoever needs it.

Its repositories are grouped by concern (``store.chats``, ``store.transcript``,
``store.pending``…); each method is one transaction and returns frozen records, so no
caller ever holds a session or an ORM object.
"""

from __future__ import annotations

import asyncio
import logging
from types import TracebackType

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from bot.store.albums import AlbumCaptionRepository
from bot.store.chats import ChatRepository, PreferenceRepository
from bot.store.in_flight import InFlightRepository
from bot.store.outbox import OutboxRepository
from bot.store.pending import PendingRepository
from bot.store.rate_limits import RateLimitRepository
from bot.store.records import Lease
from bot.store.replicas import ReplicaNames
from bot.store.settings import StoreSettings
from bot.store.transactions import Clock, utc_now
from bot.store.transcript import TranscriptRepository
from bot.store.updates import UpdateRepository
from bot.store.usage import UsageRepository
from bot.work_order import PriorityGate

log = logging.getLogger(__name__)

#: How long closing the database may take before it is left to the process's end. SQLAlchemy
#: waits for a connection's close through any cancellation (its async context managers
#: shield it), so a driver thread that never answers (aiosqlite's, stuck in a call) would
#: hold the bot's shutdown forever. Nothing is lost by leaving it: an open transaction is
#: rolled back by the database when the process ends.
CLOSE_WITHIN_S = 10.0


class Store:
    """Use ``open_store(settings)``, which checks (or on SQLite migrates) the database
    first; then ``close()``."""

    def __init__(
        self, engine: AsyncEngine, *, settings: StoreSettings, clock: Clock = utc_now
    ) -> None:
        self._engine = engine
        # expire_on_commit=False: records are built after the commit from loaded rows.
        sessions = async_sessionmaker(engine, expire_on_commit=False)
        self.chats = ChatRepository(sessions, clock)
        self.preferences = PreferenceRepository(
            sessions, clock, max_per_user=settings.max_preferences_per_user
        )
        self.transcript = TranscriptRepository(
            sessions,
            clock,
            keep_questions=settings.transcript_keep_questions,
            keep_for=settings.transcript_keep_for,
            batch=settings.transcript_prune_batch,
        )
        work_lease = Lease(owner=settings.replica_id, duration=settings.work_lease)
        self.pending = PendingRepository(sessions, clock, lease=work_lease)
        self.usage = UsageRepository(sessions, clock)
        self.rate_limits = RateLimitRepository(sessions, clock)
        self.updates = UpdateRepository(sessions, clock, lease=work_lease)
        #: This replica's name, held by the bot for its life (``ReplicaNames.hold``).
        self.replicas = ReplicaNames(
            engine, settings.replica_id, clock=clock, gone_after=settings.work_lease
        )
        self.outbox = OutboxRepository(
            sessions,
            clock,
            owner=settings.replica_id,
            lease=settings.outbox_lease,
            replicas=self.replicas,
        )
        self.in_flight = InFlightRepository(sessions, clock, lease=work_lease)
        self.albums = AlbumCaptionRepository(sessions, clock)
        if engine.dialect.name == "sqlite":
            gate = PriorityGate()
            for repository in (
                self.chats,
                self.preferences,
                self.transcript,
                self.pending,
                self.usage,
                self.rate_limits,
                self.updates,
                self.outbox,
                self.in_flight,
                self.albums,
            ):
                repository.write_gate = gate

    async def reachable(self, timeout_s: float = 2.0) -> bool:
        """Whether the database answers now: a failure seen while it does not is the
        outage's, not a bug's (``bot.telegram.answering``)."""
        try:
            async with asyncio.timeout(timeout_s), self._engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception:
            return False
        return True

    async def close(self) -> bool:
        """Let go of the replica name and close every pooled connection (SQLite then folds
        its WAL file back); False, logged, if that did not end within ``CLOSE_WITHIN_S``
        (the close goes on in the background; the caller may end the process)."""
        closing = asyncio.create_task(self._close(), name="barb-store-close")
        done, _ = await asyncio.wait({closing}, timeout=CLOSE_WITHIN_S)
        if not done:
            log.error(
                "the database did not close within %g s (its driver is not answering): "
                "left open; what was not committed is rolled back when the process ends",
                CLOSE_WITHIN_S,
            )
            return False
        await closing
        return True

    async def _close(self) -> None:
        await self.replicas.release()
        await self._engine.dispose()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
