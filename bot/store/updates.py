"""Telegram updates as received: stored before Telegram is told, handled once.

Telegram counts an update delivered once the bot asks ``getUpdates`` for a later offset (or
its webhook answers 200). Barb stores each update before that, so a process killed between
receiving an update and recording its work loses nothing: the next start handles what was
stored and not handled. The primary key refuses an update delivered twice (a redelivery after
a restart, a webhook retried, two replicas behind one webhook).

An update is *handled* once its handlers have ended, or as soon as its first reply is stored
or the work it started is recorded in flight (``mark_handled`` in that same transaction):
from then on the stored reply or the work's own record is what a restart takes up, and
handling the update again would do it twice.

With several replicas on one database each update is held by the replica that stored it,
under a lease it renews while it lives (``renew``), as work in flight is: at start-up a
replica replays its own unhandled updates (its previous life's, under the same replica id)
and those whose lease expired, and later only the latter (``take_over``). The take-over is
done under row locks, so of two replicas racing for an update exactly one gets it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.store.records import Lease, json_object
from bot.store.schema import ReceivedUpdateRow
from bot.store.transactions import Clock, Repository, rowcount

_NO_SYNC = {"synchronize_session": False}


async def mark_handled(session: AsyncSession, update_id: int | None, now: datetime) -> None:
    """In the caller's transaction: the update ``update_id`` needs no handling any more. Its
    JSON (the person's words) goes; the id stays, to refuse a redelivery."""
    if update_id is None:
        return
    await session.execute(
        update(ReceivedUpdateRow)
        .where(ReceivedUpdateRow.update_id == update_id, ReceivedUpdateRow.handled_at.is_(None))
        .values(handled_at=now, payload=None),
        execution_options=_NO_SYNC,
    )


class UpdateRepository(Repository):
    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], clock: Clock, *, lease: Lease
    ) -> None:
        super().__init__(sessions, clock)
        self.lease = lease

    async def receive(self, updates: Sequence[tuple[int, Mapping[str, Any]]]) -> list[int]:
        """Store (update id, JSON) pairs in one transaction; the ids stored now, in the order
        given. An id already stored (a redelivery) is left out: it is handled, or will be."""
        if not updates:
            return []
        rows = {update_id: json_object(payload, "update") for update_id, payload in updates}
        try:
            async with self._write() as session:
                known = set(
                    await session.scalars(
                        select(ReceivedUpdateRow.update_id).where(
                            ReceivedUpdateRow.update_id.in_(rows)
                        )
                    )
                )
                now = self._now()
                session.add_all(
                    ReceivedUpdateRow(
                        update_id=update_id,
                        payload=payload,
                        received_at=now,
                        handled_at=None,
                        lease_owner=self.lease.owner,
                        lease_expires_at=now + self.lease.duration,
                    )
                    for update_id, payload in rows.items()
                    if update_id not in known
                )
                return [update_id for update_id in rows if update_id not in known]
        except IntegrityError:
            if len(rows) == 1:
                # Another replica stored it between our read and our insert: theirs to handle.
                return []
        # Several, one of them stored meanwhile by someone else: one at a time.
        fresh = []
        for update_id, payload in rows.items():
            fresh += await self.receive([(update_id, payload)])
        return fresh

    async def handled(self, update_id: int) -> None:
        """The update's handlers have ended."""
        async with self._write() as session:
            await mark_handled(session, update_id, self._now())

    async def unhandled(self) -> list[tuple[int, dict[str, Any]]]:
        """Updates stored and not handled, by any replica, oldest first (a look only: what
        a replica handles it takes with ``take_over``)."""
        async with self._read() as session:
            rows = await session.execute(
                select(ReceivedUpdateRow.update_id, ReceivedUpdateRow.payload)
                .where(
                    ReceivedUpdateRow.handled_at.is_(None),
                    ReceivedUpdateRow.payload.is_not(None),
                )
                .order_by(ReceivedUpdateRow.update_id)
            )
            return [(update_id, payload) for update_id, payload in rows]

    async def unhandled_messages(self, chat_id: int) -> list[tuple[int, dict[str, Any]]]:
        """The new messages of chat ``chat_id`` stored and not handled yet, by any replica,
        oldest first: a chat's own, not every chat's to read through."""
        # NUMERIC: a group's id is past 32 bits, where PostgreSQL's INTEGER cast fails.
        chat = ReceivedUpdateRow.payload[("message", "chat", "id")].as_numeric(20, 0)
        async with self._read() as session:
            rows = await session.execute(
                select(ReceivedUpdateRow.update_id, ReceivedUpdateRow.payload)
                .where(
                    ReceivedUpdateRow.handled_at.is_(None),
                    ReceivedUpdateRow.payload.is_not(None),
                    chat == chat_id,
                )
                .order_by(ReceivedUpdateRow.update_id)
            )
            return [(update_id, payload) for update_id, payload in rows]

    async def unhandled_of(self, update_ids: Sequence[int]) -> set[int]:
        """Which of ``update_ids`` are stored and not handled yet, by any replica."""
        if not update_ids:
            return set()
        async with self._read() as session:
            rows = await session.scalars(
                select(ReceivedUpdateRow.update_id).where(
                    ReceivedUpdateRow.update_id.in_(update_ids),
                    ReceivedUpdateRow.handled_at.is_(None),
                )
            )
            return set(rows)

    async def take_over(self, *, own: bool = False) -> list[tuple[int, dict[str, Any]]]:
        """Updates not handled whose replica is gone (its lease expired), oldest first, now
        held by this one, to be handled here; with ``own``, also this replica's own (at
        start-up: its previous life's). Two replicas taking over at once take different
        updates: on PostgreSQL the rows are locked, and those another replica has locked are
        skipped (and re-checked, so not taken, once it has renewed their lease); SQLite
        writes one transaction at a time."""
        now = self._now()
        gone = or_(
            ReceivedUpdateRow.lease_owner.is_(None), ReceivedUpdateRow.lease_expires_at <= now
        )
        if own:
            gone = or_(gone, ReceivedUpdateRow.lease_owner == self.lease.owner)
        async with self._write() as session:
            rows = list(
                await session.execute(
                    select(ReceivedUpdateRow.update_id, ReceivedUpdateRow.payload)
                    .where(
                        gone,
                        ReceivedUpdateRow.handled_at.is_(None),
                        ReceivedUpdateRow.payload.is_not(None),
                    )
                    .order_by(ReceivedUpdateRow.update_id)
                    .with_for_update(skip_locked=True)
                )
            )
            if not rows:
                return []
            await session.execute(
                update(ReceivedUpdateRow)
                .where(ReceivedUpdateRow.update_id.in_([update_id for update_id, _ in rows]))
                .values(lease_owner=self.lease.owner, lease_expires_at=now + self.lease.duration),
                execution_options=_NO_SYNC,
            )
            return [(update_id, payload) for update_id, payload in rows]

    async def renew(self) -> int:
        """This replica is alive: extend the leases on the updates it holds and has not
        handled yet; how many."""
        async with self._write() as session:
            result = await session.execute(
                update(ReceivedUpdateRow)
                .where(
                    ReceivedUpdateRow.lease_owner == self.lease.owner,
                    ReceivedUpdateRow.handled_at.is_(None),
                )
                .values(lease_expires_at=self._now() + self.lease.duration),
                execution_options=_NO_SYNC,
            )
            return rowcount(result)

    async def prune(self, older_than: timedelta) -> int:
        """Forget handled updates received more than ``older_than`` ago; Telegram keeps an
        update for at most 24 hours, so a day or two is enough. An update not handled yet is
        kept: the next start handles it."""
        cutoff = self._now() - older_than
        async with self._write() as session:
            result = await session.execute(
                delete(ReceivedUpdateRow).where(
                    ReceivedUpdateRow.received_at < cutoff,
                    ReceivedUpdateRow.handled_at.is_not(None),
                ),
                execution_options=_NO_SYNC,
            )
            return rowcount(result)
