"""Pending actions: confirmations and clarifications waiting for a button press.

They live in the database so that a restart between the question and the press loses
nothing. Every change of status is one conditional UPDATE ("… WHERE status = 'pending'")
whose row count says whether this caller made it, so a double press, or two replicas
receiving the same press, cannot both run the query.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.store.in_flight import new_row
from bot.store.records import (
    Claim,
    FinalStatus,
    Lease,
    PendingAction,
    PendingKind,
    PendingStatus,
    Placed,
    WorkKind,
    json_object,
    new_pending_id,
)
from bot.store.schema import InFlightRow, PendingActionRow
from bot.store.transactions import Clock, Repository, in_line, rowcount
from bot.store.updates import mark_handled

_NO_SYNC = {"synchronize_session": False}
_OPEN: tuple[PendingStatus, ...] = ("pending", "running")
#: The first key of the transaction lock ``place`` takes per chat on PostgreSQL ("Plan" in
#: ASCII), apart from the preferences' and the replica names' lock classes.
PLAN_LOCK_CLASS = 0x506C616E


class PendingRepository(Repository):
    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], clock: Clock, *, lease: Lease
    ) -> None:
        super().__init__(sessions, clock)
        #: The lease a run recorded by ``claim`` starts with.
        self.lease = lease

    async def create(
        self,
        chat_id: int,
        user_id: int,
        kind: PendingKind,
        payload: Mapping[str, Any],
        *,
        message_id: int | None = None,
    ) -> PendingAction:
        """Store a new pending action; its ``id`` goes into the buttons' callback_data."""
        stored_payload = json_object(payload, "payload")
        async with self._write_for_chat(chat_id) as session:
            row = _new_row(chat_id, user_id, kind, stored_payload, message_id, self._now())
            session.add(row)
            await session.flush()
            return PendingAction.model_validate(row)

    async def place(
        self,
        chat_id: int,
        user_id: int,
        kind: PendingKind,
        payload: Mapping[str, Any],
        *,
        same_conversation: Callable[[PendingAction], bool],
        asked: Callable[[PendingAction], int | None],
    ) -> Placed:
        """Store a new action as its person's one open action in its conversation: in the
        same transaction, their actions still pending there (``same_conversation``) are
        declined, as a new message declines them, if their question was asked before this
        one's (``asked``: its Telegram message id; unknown counts as earlier). One whose
        question was asked after this one's was there first: this one is stored declined
        (its Run says "out of date"), as if the later message had come after it.

        Why in one transaction: two replicas each handling one of two questions sent
        quickly (HAProxy moved the chat) each declined what was open when their question
        came, nothing yet, then each stored its plan: two plans with live Run buttons. On
        PostgreSQL a transaction lock per chat puts the two in line (SQLite's write lock
        already does); a press racing it waits on the rows' FOR UPDATE, as for
        ``decline_for_chat``."""
        stored_payload = json_object(payload, "payload")
        now = self._now()
        async with self._write_for_chat(chat_id) as session:
            await in_line(session, PLAN_LOCK_CLASS, chat_id)
            rows = await session.scalars(
                select(PendingActionRow)
                .where(
                    PendingActionRow.chat_id == chat_id,
                    PendingActionRow.user_id == user_id,
                    PendingActionRow.status == "pending",
                )
                .order_by(PendingActionRow.created_at, PendingActionRow.id)
                .with_for_update()
            )
            row = _new_row(chat_id, user_id, kind, stored_payload, None, now)
            new = PendingAction.model_validate(row)
            mine = asked(new)
            replaced: list[PendingAction] = []
            for other in rows:
                action = PendingAction.model_validate(other)
                if not same_conversation(action):
                    continue
                theirs = asked(action)
                if mine is not None and theirs is not None and theirs > mine:
                    row.status, row.resolved_at = "declined", now
                    continue
                other.status, other.resolved_at = "declined", now
                replaced.append(
                    action.model_copy(update={"status": "declined", "resolved_at": now})
                )
            session.add(row)
            await session.flush()
            return Placed(action=PendingAction.model_validate(row), replaced=replaced)

    async def get(self, action_id: str) -> PendingAction | None:
        async with self._read() as session:
            row = await session.get(PendingActionRow, action_id)
            return None if row is None else PendingAction.model_validate(row)

    async def open_for_chat(
        self, chat_id: int, *, user_id: int | None = None
    ) -> list[PendingAction]:
        """The chat's actions still pending or running, oldest first; with ``user_id``, only
        that person's (in a group, each member's plans are their own)."""
        condition = (PendingActionRow.chat_id == chat_id) & PendingActionRow.status.in_(_OPEN)
        if user_id is not None:
            condition = condition & (PendingActionRow.user_id == user_id)
        async with self._read() as session:
            rows = await session.scalars(
                select(PendingActionRow)
                .where(condition)
                .order_by(PendingActionRow.created_at, PendingActionRow.id)
            )
            return [PendingAction.model_validate(row) for row in rows]

    async def recent_for_chat(self, chat_id: int, limit: int = 50) -> list[PendingAction]:
        """The chat's last ``limit`` actions, whatever became of them, newest first."""
        async with self._read() as session:
            rows = await session.scalars(
                select(PendingActionRow)
                .where(PendingActionRow.chat_id == chat_id)
                .order_by(PendingActionRow.created_at.desc(), PendingActionRow.id.desc())
                .limit(limit)
            )
            return [PendingAction.model_validate(row) for row in rows]

    async def set_message(self, action_id: str, message_id: int) -> bool:
        """Remember the Telegram message that carries the action's buttons."""
        async with self._write() as session:
            result = await session.execute(
                update(PendingActionRow)
                .where(PendingActionRow.id == action_id)
                .values(message_id=message_id),
                execution_options=_NO_SYNC,
            )
            return rowcount(result) == 1

    async def claim(
        self,
        action_id: str,
        user_id: int,
        *,
        max_age: timedelta | None = None,
        work: Mapping[str, Any] | None = None,
        update_id: int | None = None,
        kind: WorkKind = "run",
    ) -> Claim:
        """A press: pending → running for the person it belongs to, read and changed in one
        transaction; ``won`` is True for exactly one caller.

        Not won if the action is not theirs, unknown, no longer pending (already pressed,
        cancelled, declined, expired) or older than ``max_age`` (so a stale button cannot run
        a query before ``expire`` has got to it); ``action`` tells which, for the reply.

        With ``work``, a won claim also records the run as in flight (its payload), in the
        same transaction: a plan marked running always has a run that the next start finds;
        the press's update (``update_id``) is handled from then on. A suggested reply's
        press records the question it asks (``kind="question"``) the same way.
        """
        now = self._now()
        async with self._write() as session:
            # FOR UPDATE (PostgreSQL; SQLite's write lock covers it): two replicas receiving
            # the same press read one after the other.
            row = await session.get(PendingActionRow, action_id, with_for_update=True)
            if row is None:
                return Claim(action=None, won=False)
            won = (
                row.user_id == user_id
                and row.status == "pending"
                and (max_age is None or row.created_at >= now - max_age)
            )
            in_flight = None
            if won:
                row.status = "running"
                if work is not None:
                    in_flight = new_row(
                        row.chat_id, user_id, kind, work, now, self.lease, update_id
                    )
                    session.add(in_flight)
                    await mark_handled(session, update_id, now)
                await session.flush()
            work_id = in_flight.id if in_flight is not None else None
            return Claim(action=PendingAction.model_validate(row), won=won, work_id=work_id)

    async def reopen(self, action_id: str, *, run: int | None = None) -> bool:
        """running (or done) → pending: a run that never delivered its answer, handed back to
        the person so that Run can be pressed again.

        With ``run``, that run in flight is marked answered with the outcome "reopened" in
        the same transaction, as a stored reply would mark it: it is over once its plan
        shows the buttons again (``end_plan``), and if Telegram fails that edit now, the
        sending pass or the next start makes it from the stored outcome."""
        async with self._write() as session:
            result = await session.execute(
                update(PendingActionRow)
                .where(
                    PendingActionRow.id == action_id,
                    PendingActionRow.status.in_(("running", "done")),
                )
                .values(status="pending", resolved_at=None),
                execution_options=_NO_SYNC,
            )
            if run is not None:
                await session.execute(
                    update(InFlightRow)
                    .where(InFlightRow.id == run, InFlightRow.answered_at.is_(None))
                    .values(answered_at=self._now(), outcome="reopened"),
                    execution_options=_NO_SYNC,
                )
            return rowcount(result) == 1

    async def cancel(
        self,
        action_id: str,
        user_id: int,
        *,
        work: Mapping[str, Any] | None = None,
        update_id: int | None = None,
    ) -> Claim:
        """pending → cancelled (the Cancel button); not won if Run was pressed first.

        With ``work``, a won cancel also records the model's wording of it as in flight, in
        the same transaction (and the press's update ``update_id`` is handled from then on).
        """
        now = self._now()
        async with self._write() as session:
            result = await session.execute(
                update(PendingActionRow)
                .where(
                    PendingActionRow.id == action_id,
                    PendingActionRow.user_id == user_id,
                    PendingActionRow.status == "pending",
                )
                .values(status="cancelled", resolved_at=now),
                execution_options=_NO_SYNC,
            )
            won = rowcount(result) == 1
            row = await session.get(PendingActionRow, action_id)
            if row is None:
                return Claim(action=None, won=False)
            in_flight = None
            if won and work is not None:
                in_flight = new_row(
                    row.chat_id, user_id, "cancel", work, now, self.lease, update_id
                )
                session.add(in_flight)
                await mark_handled(session, update_id, now)
                await session.flush()
            work_id = in_flight.id if in_flight is not None else None
            return Claim(action=PendingAction.model_validate(row), won=won, work_id=work_id)

    async def resolve(
        self,
        action_id: str,
        status: FinalStatus = "done",
        *,
        was: tuple[PendingStatus, ...] = _OPEN,
    ) -> bool:
        """Close an open (pending or running) action, e.g. running → done once answered;
        ``was``: the statuses it may be closed from (a clarification whose reply was
        stopped before the model answered it: running or done → declined)."""
        now = self._now()
        async with self._write() as session:
            result = await session.execute(
                update(PendingActionRow)
                .where(PendingActionRow.id == action_id, PendingActionRow.status.in_(was))
                .values(status=status, resolved_at=now),
                execution_options=_NO_SYNC,
            )
            return rowcount(result) == 1

    async def decline_for_chat(
        self,
        chat_id: int,
        *,
        user_id: int | None = None,
        since: datetime | None = None,
        unshown: bool = False,
        ids: Collection[str] | None = None,
    ) -> list[PendingAction]:
        """pending → declined for every action of the chat (only ``user_id``'s, and created
        at or after ``since``, if given; with ``unshown``, only those whose message was
        never sent; with ``ids``, only those): the person wrote a new message instead of
        pressing. Returns them (their ``message_id``s, to remove the buttons)."""
        condition = PendingActionRow.chat_id == chat_id
        if ids is not None:
            condition = condition & PendingActionRow.id.in_(list(ids))
        if user_id is not None:
            condition = condition & (PendingActionRow.user_id == user_id)
        if since is not None:
            condition = condition & (PendingActionRow.created_at >= since)
        if unshown:
            condition = condition & PendingActionRow.message_id.is_(None)
        return await self._close_pending("declined", condition)

    async def expire(self, older_than: timedelta) -> list[PendingAction]:
        """pending → expired for actions created more than ``older_than`` ago, any chat."""
        cutoff = self._now() - older_than
        return await self._close_pending("expired", PendingActionRow.created_at < cutoff)

    async def _close_pending(
        self, status: FinalStatus, condition: ColumnElement[bool]
    ) -> list[PendingAction]:
        now = self._now()
        async with self._write() as session:
            # FOR UPDATE (PostgreSQL; SQLite's write lock covers it): a press arriving
            # meanwhile waits for this transaction, then finds the action closed.
            rows = list(
                await session.scalars(
                    select(PendingActionRow)
                    .where(condition, PendingActionRow.status == "pending")
                    .order_by(PendingActionRow.created_at, PendingActionRow.id)
                    .with_for_update()
                )
            )
            if not rows:
                return []
            await session.execute(
                update(PendingActionRow)
                .where(
                    PendingActionRow.id.in_([row.id for row in rows]),
                    PendingActionRow.status == "pending",
                )
                .values(status=status, resolved_at=now),
                execution_options=_NO_SYNC,
            )
            return [
                PendingAction.model_validate(row).model_copy(
                    update={"status": status, "resolved_at": now}
                )
                for row in rows
            ]


def _new_row(
    chat_id: int,
    user_id: int,
    kind: PendingKind,
    payload: dict[str, Any],
    message_id: int | None,
    now: datetime,
) -> PendingActionRow:
    """A new action's row, waiting for a press."""
    return PendingActionRow(
        id=new_pending_id(),
        chat_id=chat_id,
        user_id=user_id,
        kind=kind,
        payload=payload,
        status="pending",
        message_id=message_id,
        created_at=now,
        resolved_at=None,
    )
