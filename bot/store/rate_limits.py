"""Per-person limits (questions, /query runs per minute), counted in the database.

A sliding window of one minute per person and scope: the times of the person's recent
questions, in one row that is read and written in one transaction under a row lock
(``FOR UPDATE`` on PostgreSQL; SQLite's write lock covers it). Every replica sees the same
window, so a person cannot get twice the limit by reaching two replicas, and a restart
forgives nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import Table, delete
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.records import LimitScope
from bot.store.schema import RateWindowRow
from bot.store.transactions import Repository, rowcount

WINDOW_S = 60.0

_table = cast(Table, RateWindowRow.__table__)


class RateLimitRepository(Repository):
    async def take(self, scope: LimitScope, user_id: int, per_minute: int) -> float:
        """0.0 if the person may go ahead (and this one is counted), else the seconds until
        the oldest of their last ``per_minute`` leaves the window."""
        now = self._now()
        stamp = now.timestamp()
        async with self._write() as session:
            row = await _locked(session, scope, user_id)
            if row is None:
                await _insert_if_missing(session, scope, user_id, now)
                row = await _locked(session, scope, user_id)
                assert row is not None, "inserted just above, in this transaction"
            recent = [t for t in row.times if stamp - t < WINDOW_S]
            if len(recent) >= per_minute:
                return WINDOW_S - (stamp - recent[-per_minute])
            row.times = [*recent, stamp]
            row.updated_at = now
            return 0.0

    async def prune(self, older_than: timedelta = timedelta(seconds=WINDOW_S)) -> int:
        """Forget the windows of people who have not asked for ``older_than``."""
        cutoff = self._now() - older_than
        async with self._write() as session:
            result = await session.execute(
                delete(RateWindowRow).where(RateWindowRow.updated_at < cutoff),
                execution_options={"synchronize_session": False},
            )
            return rowcount(result)


async def _locked(session: AsyncSession, scope: str, user_id: int) -> RateWindowRow | None:
    return await session.get(
        RateWindowRow, (scope, user_id), with_for_update=True, populate_existing=True
    )


async def _insert_if_missing(
    session: AsyncSession, scope: str, user_id: int, now: datetime
) -> None:
    """Two replicas seeing a person for the first time at once both go on, to one row: the
    loser's INSERT fails on the primary key inside its savepoint (any database)."""
    try:
        async with session.begin_nested():
            await session.execute(
                _table.insert().values(scope=scope, user_id=user_id, times=[], updated_at=now)
            )
    except IntegrityError:
        pass
