"""Work in flight: a question being answered, a confirmed plan being run.

A row is written when the work begins. The transaction that stores its reply in the outbox
(``OutboxRepository.enqueue_many(..., answers=...)``) deletes a question's row, and marks a
run's answered (its plan message still says "Running…" until it is edited; then the row
goes), so at any moment a question is either in flight here or answered there. Rows left at
start-up belong to work the previous process did not finish (killed, crashed, redeployed):
the bot resumes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update

from bot.store.records import InFlight, WorkKind, json_object
from bot.store.schema import InFlightRow
from bot.store.transactions import Repository, rowcount
from bot.store.updates import mark_handled

_NO_SYNC = {"synchronize_session": False}


def new_row(
    chat_id: int, user_id: int, kind: WorkKind, payload: Mapping[str, Any], now: datetime
) -> InFlightRow:
    """A row for work beginning now (also written by ``PendingRepository.claim``)."""
    return InFlightRow(
        chat_id=chat_id,
        user_id=user_id,
        kind=kind,
        payload=json_object(payload, "payload"),
        attempts=1,
        created_at=now,
        answered_at=None,
    )


class InFlightRepository(Repository):
    async def start(
        self,
        chat_id: int,
        user_id: int,
        kind: WorkKind,
        payload: Mapping[str, Any],
        *,
        update_id: int | None = None,
    ) -> InFlight:
        """Record work that begins now; finished when its reply is stored. The update that
        asked for it (``update_id``), if any, is handled from here on, in the same
        transaction: a restart resumes the work, never handles the update again."""
        now = self._now()
        row = new_row(chat_id, user_id, kind, payload, now)
        async with self._write_for_chat(chat_id) as session:
            session.add(row)
            await mark_handled(session, update_id, now)
            await session.flush()
            return InFlight.model_validate(row)

    async def open(self) -> list[InFlight]:
        """Every piece of work begun and not finished, oldest first."""
        async with self._read() as session:
            rows = await session.scalars(select(InFlightRow).order_by(InFlightRow.id))
            return [InFlight.model_validate(row) for row in rows]

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
