"""Work in flight: a question being answered, a confirmed plan being run.

A row is written when the work begins. The transaction that stores its reply in the outbox
(``OutboxRepository.enqueue_many(..., answers=...)``) deletes a question's row, and marks a
run's answered (its plan message still says "Running…" until it is edited; then the row
goes), so at any moment a question is either in flight here or answered there. Rows left at
start-up belong to work the previous process did not finish (killed, crashed, redeployed):
the bot resumes them.

With several replicas each row carries a lease: the replica working on it renews it while
it lives (``renew``); a row whose lease has expired belongs to a replica that is gone, and
another one takes it over (``take_over``) and resumes it or hands it back.

A /cancel or /reset stops the person's question where the model thinks about it, in the
replica that holds it. One that reaches another replica (HAProxy moved the chat) marks the
row stopped (``stop_elsewhere``): the holder reads that (``stopped``) and stops its turn,
and a reply to a stopped question is never stored (``refuse_stopped``, in the reply's own
transaction), so no plan follows the confirmation whichever replica sent it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.store.errors import WorkStopped
from bot.store.records import InFlight, Lease, WorkKind, json_object
from bot.store.schema import InFlightRow
from bot.store.transactions import Clock, Repository, rowcount
from bot.store.updates import mark_handled

_NO_SYNC = {"synchronize_session": False}


#: In a row's payload: the Telegram update that asked for the work. Telegram numbers a bot's
#: updates in the order they reached it, one sequence for every replica: whether a question
#: came before a /cancel is read from it, not from two replicas' clocks (``stop_elsewhere``).
UPDATE_ID = "update_id"


def new_row(
    chat_id: int,
    user_id: int,
    kind: WorkKind,
    payload: Mapping[str, Any],
    now: datetime,
    lease: Lease,
    update_id: int | None = None,
) -> InFlightRow:
    """A row for work beginning now, held by this replica, asked for by the update
    ``update_id`` if any (also written by ``PendingRepository.claim``)."""
    if update_id is not None:
        payload = {**payload, UPDATE_ID: update_id}
    return InFlightRow(
        chat_id=chat_id,
        user_id=user_id,
        kind=kind,
        payload=json_object(payload, "payload"),
        attempts=1,
        created_at=now,
        answered_at=None,
        lease_owner=lease.owner,
        lease_expires_at=now + lease.duration,
    )


async def refuse_stopped(session: AsyncSession, work_id: int) -> None:
    """Raise ``WorkStopped`` if work ``work_id`` was stopped on another replica: in the
    transaction that would store its reply (``OutboxRepository.enqueue_many``), which a
    /cancel marking it meanwhile waits for or follows, never straddles."""
    # The row locked whether stopped or not: a /cancel's mark then comes wholly before this
    # transaction (seen here) or after it (the row gone, nothing to mark).
    stopped_at = await session.scalar(
        select(InFlightRow.stopped_at).where(InFlightRow.id == work_id).with_for_update()
    )
    if stopped_at is not None:
        raise WorkStopped(work_id)


class InFlightRepository(Repository):
    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], clock: Clock, *, lease: Lease
    ) -> None:
        super().__init__(sessions, clock)
        self.lease = lease

    async def start(
        self,
        chat_id: int,
        user_id: int,
        kind: WorkKind,
        payload: Mapping[str, Any],
        *,
        update_id: int | None = None,
        joined_updates: Sequence[int] = (),
    ) -> InFlight:
        """Record work that begins now; finished when its reply is stored. The update that
        asked for it (``update_id``), if any, is handled from here on, in the same
        transaction: a restart resumes the work, never handles the update again. So are
        ``joined_updates``: the parts of a question Telegram split, asked with it."""
        now = self._now()
        row = new_row(chat_id, user_id, kind, payload, now, self.lease, update_id)
        async with self._write_for_chat(chat_id) as session:
            session.add(row)
            for handled in (update_id, *joined_updates):
                await mark_handled(session, handled, now)
            await session.flush()
            return InFlight.model_validate(row)

    async def open(self) -> list[InFlight]:
        """Every piece of work begun and not finished, oldest first."""
        async with self._read() as session:
            rows = await session.scalars(select(InFlightRow).order_by(InFlightRow.id))
            return [InFlight.model_validate(row) for row in rows]

    async def take_over(self, *, own: bool = False) -> list[InFlight]:
        """Work whose replica is gone (its lease expired), oldest first, now held by this
        one; with ``own``, also this replica's own (at start-up: its previous life's, under
        the same ``replica_id``). Two replicas taking over at once take different rows."""
        now = self._now()
        gone = or_(InFlightRow.lease_owner.is_(None), InFlightRow.lease_expires_at <= now)
        if own:
            gone = or_(gone, InFlightRow.lease_owner == self.lease.owner)
        expires = now + self.lease.duration
        async with self._write() as session:
            rows = list(
                await session.scalars(
                    select(InFlightRow)
                    .where(gone)
                    .order_by(InFlightRow.id)
                    .with_for_update(skip_locked=True)
                )
            )
            if not rows:
                return []
            await session.execute(
                update(InFlightRow)
                .where(InFlightRow.id.in_([row.id for row in rows]))
                .values(lease_owner=self.lease.owner, lease_expires_at=expires),
                execution_options=_NO_SYNC,
            )
            return [
                InFlight.model_validate(row).model_copy(
                    update={"lease_owner": self.lease.owner, "lease_expires_at": expires}
                )
                for row in rows
            ]

    async def renew(self) -> int:
        """This replica is alive: extend the leases on all the work it holds; how many."""
        async with self._write() as session:
            result = await session.execute(
                update(InFlightRow)
                .where(InFlightRow.lease_owner == self.lease.owner)
                .values(lease_expires_at=self._now() + self.lease.duration),
                execution_options=_NO_SYNC,
            )
            return rowcount(result)

    async def elsewhere(self, chat_id: int) -> list[InFlight]:
        """The chat's questions and /query runs held by other replicas and not stopped,
        oldest first: what a /cancel or /reset handled here cannot see in this process.
        Example: Alice's /query computing on replica A when her /cancel reaches B."""
        async with self._read() as session:
            rows = await session.scalars(
                select(InFlightRow)
                .where(
                    InFlightRow.chat_id == chat_id,
                    InFlightRow.kind.in_(("question", "query")),
                    InFlightRow.stopped_at.is_(None),
                    InFlightRow.lease_owner != self.lease.owner,
                )
                .order_by(InFlightRow.id)
            )
            return [InFlight.model_validate(row) for row in rows]

    async def stop_elsewhere(
        self, chat_id: int, user_id: int, *, update_id: int | None, before: datetime
    ) -> int:
        """Mark stopped the person's questions in the chat that other replicas hold and that
        were asked before the /cancel (a question sent after it is not its to stop); how
        many. Their holders store no reply to them (``refuse_stopped``), stop their turns
        (``stopped``), and end them: this replica's confirmation does not.

        "Before" is by Telegram's update ids (the /cancel's ``update_id``), one sequence
        for every replica; this replica's clock (``before``, the /cancel's arrival) is
        compared with another's only for a row, or a /cancel, without one. Example: a
        question of update 812 stamped 10:00:05 by a replica whose clock runs 3 s ahead is
        stopped by the /cancel of update 813 arriving here at 10:00:03.
        """
        async with self._write() as session:
            rows = await session.execute(
                select(InFlightRow.id, InFlightRow.payload, InFlightRow.created_at).where(
                    InFlightRow.chat_id == chat_id,
                    InFlightRow.user_id == user_id,
                    InFlightRow.kind == "question",
                    InFlightRow.stopped_at.is_(None),
                    InFlightRow.lease_owner != self.lease.owner,
                )
            )
            asked_before = [
                work_id
                for work_id, payload, created_at in rows
                if _asked_before(payload.get(UPDATE_ID), created_at, update_id, before)
            ]
            if not asked_before:
                return 0
            result = await session.execute(
                update(InFlightRow)
                .where(
                    InFlightRow.id.in_(asked_before),
                    InFlightRow.stopped_at.is_(None),
                    InFlightRow.lease_owner != self.lease.owner,
                )
                .values(stopped_at=self._now()),
                execution_options=_NO_SYNC,
            )
            return rowcount(result)

    async def stopped(self, work_ids: Collection[int]) -> set[int]:
        """Which of ``work_ids`` another replica stopped (``stop_elsewhere``)."""
        if not work_ids:
            return set()
        async with self._read() as session:
            found = await session.scalars(
                select(InFlightRow.id).where(
                    InFlightRow.id.in_(list(work_ids)), InFlightRow.stopped_at.is_not(None)
                )
            )
            return set(found)

    async def get(self, work_id: int) -> InFlight | None:
        async with self._read() as session:
            row = await session.get(InFlightRow, work_id)
            return None if row is None else InFlight.model_validate(row)

    async def retry(self, work_id: int) -> bool:
        """The work starts again (after a restart): one attempt more."""
        async with self._write() as session:
            result = await session.execute(
                update(InFlightRow)
                .where(InFlightRow.id == work_id)
                .values(attempts=InFlightRow.attempts + 1),
                execution_options=_NO_SYNC,
            )
            return rowcount(result) == 1

    async def finish(self, work_id: int) -> bool:
        """The work ended without a stored reply (it failed, or was handed back): forget it.
        False if it was already finished."""
        async with self._write() as session:
            result = await session.execute(
                delete(InFlightRow).where(InFlightRow.id == work_id), execution_options=_NO_SYNC
            )
            return rowcount(result) == 1


def _asked_before(
    asked: int | None, created_at: datetime, update_id: int | None, before: datetime
) -> bool:
    """Whether work asked for by update ``asked`` and recorded at ``created_at`` came before
    the update ``update_id`` that arrived at ``before``."""
    if asked is not None and update_id is not None:
        return asked < update_id
    return created_at < before
