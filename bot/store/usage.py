"""Token and cost counters per UTC day, chat, person and model, for limits and for admins."""

from __future__ import annotations

from datetime import date
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.records import UsageLine, UsageTotals
from bot.store.schema import UsageRow
from bot.store.transactions import Repository, rowcount

COUNTERS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost_micro_usd",
    "calls",
    "unpriced_calls",
)
KEY = ("day", "chat_id", "user_id", "model")
#: Dialects with INSERT … ON CONFLICT DO UPDATE (same API in SQLAlchemy for both).
NATIVE_UPSERT = frozenset({"sqlite", "postgresql"})

_table = cast(Table, UsageRow.__table__)


def _micro_usd(cost_usd: float) -> int:
    return round(cost_usd * 1_000_000)


def _totals(row: Any) -> dict[str, Any]:
    """Counters of a SUM row as UsageTotals fields (cost back in dollars)."""
    return {
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "cache_read_tokens": row.cache_read_tokens,
        "cache_write_tokens": row.cache_write_tokens,
        "cost_usd": row.cost_micro_usd / 1_000_000,
        "calls": row.calls,
        "unpriced_calls": row.unpriced_calls,
    }


class UsageRepository(Repository):
    async def record(
        self,
        chat_id: int,
        user_id: int,
        model: str,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        cost_usd: float | None = None,
        calls: int = 1,
    ) -> None:
        """Add one model call (or several) to today's counters (UTC day, from the clock).

        ``cost_usd=None`` (a model without a known price) counts the tokens and the calls,
        and marks the calls unpriced: their cost is unknown, not zero.
        """
        amounts = {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_read_tokens": cache_read_tokens,
            "cache_write_tokens": cache_write_tokens,
            "cost_micro_usd": _micro_usd(cost_usd or 0.0),
            "calls": calls,
            "unpriced_calls": calls if cost_usd is None else 0,
        }
        if any(value < 0 for value in amounts.values()):
            raise ValueError(f"usage cannot be negative: {amounts}")
        key = {"day": self._now().date(), "chat_id": chat_id, "user_id": user_id, "model": model}
        async with self._write() as session:
            dialect = (await session.connection()).dialect.name
            if dialect in NATIVE_UPSERT:
                await _upsert(session, dialect, key, amounts)
            else:
                await _update_or_insert(session, key, amounts)

    async def for_user(self, user_id: int, day: date | None = None) -> UsageTotals:
        """One person's totals for a day (default: today, UTC) over all chats and models."""
        return await self._sum(day, _table.c.user_id == user_id)

    async def for_chat(self, chat_id: int, day: date | None = None) -> UsageTotals:
        return await self._sum(day, _table.c.chat_id == chat_id)

    async def total(self, day: date | None = None) -> UsageTotals:
        """Every chat together (for admins)."""
        return await self._sum(day)

    async def report(self, day: date | None = None) -> list[UsageLine]:
        """The day's lines per chat, person and model, most expensive first (for admins)."""
        day = day or self._now().date()
        async with self._read() as session:
            rows = await session.execute(
                select(_table)
                .where(_table.c.day == day)
                .order_by(_table.c.cost_micro_usd.desc(), *(_table.c[name] for name in KEY))
            )
            return [
                UsageLine(
                    day=row.day,
                    chat_id=row.chat_id,
                    user_id=row.user_id,
                    model=row.model,
                    **_totals(row),
                )
                for row in rows
            ]

    async def _sum(self, day: date | None, *conditions: ColumnElement[bool]) -> UsageTotals:
        day = day or self._now().date()
        sums = [func.coalesce(func.sum(_table.c[name]), 0).label(name) for name in COUNTERS]
        async with self._read() as session:
            row = (
                await session.execute(select(*sums).where(_table.c.day == day, *conditions))
            ).one()
            return UsageTotals(**_totals(row))


async def _upsert(
    session: AsyncSession, dialect: str, key: dict[str, Any], amounts: dict[str, int]
) -> None:
    """One INSERT … ON CONFLICT DO UPDATE: atomic without a lock or a retry."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    statement = insert(_table).values(**key, **amounts)
    await session.execute(
        statement.on_conflict_do_update(
            index_elements=list(KEY),
            set_={name: _table.c[name] + statement.excluded[name] for name in COUNTERS},
        )
    )


async def _update_or_insert(
    session: AsyncSession, key: dict[str, Any], amounts: dict[str, int]
) -> None:
    """The portable way: increment in place; insert if there was no row; if another
    transaction inserted it meanwhile, increment that one."""
    where = [_table.c[name] == value for name, value in key.items()]
    increment = (
        update(_table)
        .where(*where)
        .values({name: _table.c[name] + amount for name, amount in amounts.items()})
    )
    if rowcount(await session.execute(increment)) == 1:
        return
    try:
        async with session.begin_nested():
            await session.execute(_table.insert().values(**key, **amounts))
    except IntegrityError:
        await session.execute(increment)
