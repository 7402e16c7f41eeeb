"""Telegram updates already handled, so that one delivered twice is handled once.

Telegram redelivers an update when the webhook did not answer in time, and two replicas
behind one webhook may both receive it; the primary key decides which one handles it.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError

from bot.store.schema import ProcessedUpdateRow
from bot.store.transactions import Repository, rowcount


class UpdateRepository(Repository):
    async def mark(self, update_id: int) -> bool:
        """Record the update; True the first time only (then handle it), False after."""
        try:
            async with self._write() as session:
                session.add(ProcessedUpdateRow(update_id=update_id, received_at=self._now()))
        except IntegrityError:
            # The primary key already holds it: portable, and the losing transaction held
            # nothing else.
            return False
        return True

    async def prune(self, older_than: timedelta) -> int:
        """Forget updates received more than ``older_than`` ago; Telegram keeps an update
        for at most 24 hours, so a day or two is enough."""
        cutoff = self._now() - older_than
        async with self._write() as session:
            result = await session.execute(
                delete(ProcessedUpdateRow).where(ProcessedUpdateRow.received_at < cutoff),
                execution_options={"synchronize_session": False},
            )
            return rowcount(result)
