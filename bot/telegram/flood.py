"""Telegram's flood limits, with the waiting requests served in ``bot.work_order``'s order.

The limits are those of PTB's ``AIORateLimiter`` (on the same ``aiolimiter`` buckets): at
most ``overall_max_rate`` requests a second across chats, ``group_max_rate`` a minute in one
group, and a ``RetryAfter`` from Telegram holds every request back for the time it names,
then the request is tried again. What differs is the queue: ``AIORateLimiter`` serves first
come, first served, so a burst of questions all finish at the end (each answer's four or five
messages wait behind a message of every other answer); here the person still waiting for the
button to stop spinning comes first, then the oldest question.

With several replicas of the bot (``BARB_QUEUE_URL``), a ``SharedFloodBudget`` adds the
token's budget and RetryAfter hold shared through Redis; the order above holds within each
replica. The per-group limit stays per replica: a chat's updates all go to one replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from aiolimiter import AsyncLimiter
from telegram.constants import FloodLimit
from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

from bot.work_order import PriorityGate

if TYPE_CHECKING:
    from bot.telegram.shared_flood import SharedFloodBudget

log = logging.getLogger(__name__)

JSONResult = bool | dict[str, Any] | list[dict[str, Any]]
MAX_IDLE_GROUPS = 512


class OrderedRateLimiter(BaseRateLimiter[int]):
    """Flood control for the bot's requests; 0 for a rate switches that limit off."""

    def __init__(
        self,
        overall_max_rate: float = FloodLimit.MESSAGES_PER_SECOND,
        group_max_rate: float = FloodLimit.MESSAGES_PER_MINUTE_PER_GROUP,
        max_retries: int = 3,
        shared: SharedFloodBudget | None = None,
    ) -> None:
        self._shared = shared
        self._overall = AsyncLimiter(overall_max_rate, 1) if overall_max_rate else None
        self._group_max_rate = group_max_rate
        self._groups: dict[int | str, AsyncLimiter] = {}
        self._turns = PriorityGate()
        self._max_retries = max_retries
        #: The event loop's time until which Telegram asked for quiet (RetryAfter).
        self._held_until = 0.0

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Close the shared budget's connection, if any."""
        if self._shared is not None:
            await self._shared.close()

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, JSONResult]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> JSONResult:
        chat_id = data.get("chat_id")
        with contextlib.suppress(ValueError, TypeError):
            chat_id = int(chat_id)  # type: ignore[arg-type]
        # Only requests to a chat count against the limits (answerCallbackQuery, getUpdates…
        # do not); negative ids and @usernames are groups and channels.
        group = chat_id if isinstance(chat_id, str) or (chat_id or 0) < 0 else None
        retries = rate_limit_args if rate_limit_args is not None else self._max_retries
        for attempt in range(retries + 1):
            if chat_id is not None:
                await self._wait_for_turn(group)
            await self._wait_while_held()
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as exc:
                if attempt == retries:
                    raise
                await self._hold(exc.retry_after)
        raise AssertionError("unreachable")  # the last attempt returns or raises

    async def _wait_for_turn(self, group: int | str | None) -> None:
        if group is not None and self._group_max_rate:
            await self._group_limiter(group).acquire()
        if self._overall is not None:
            # One request at a time waits on the bucket; the others wait in order for the gate.
            async with self._turns.held():
                await self._overall.acquire()
                if self._shared is not None:
                    await self._shared.acquire()

    def _group_limiter(self, group: int | str) -> AsyncLimiter:
        if len(self._groups) > MAX_IDLE_GROUPS:
            # Forget the groups whose bucket has drained: a new one would start the same.
            for key, limiter in list(self._groups.items()):
                if key != group and limiter.has_capacity(limiter.max_rate):
                    del self._groups[key]
        limiter = self._groups.get(group)
        if limiter is None:
            limiter = self._groups[group] = AsyncLimiter(self._group_max_rate, 60)
        return limiter

    async def _hold(self, retry_after: Any) -> None:
        """Telegram said to wait: nothing goes out until then (plus a margin)."""
        seconds = float(
            retry_after.total_seconds() if hasattr(retry_after, "total_seconds") else retry_after
        )
        log.info("flood control: Telegram asked to wait %.1f s", seconds)
        until = asyncio.get_running_loop().time() + seconds + 0.1
        self._held_until = max(self._held_until, until)
        if self._shared is not None:
            await self._shared.hold(seconds)

    async def _wait_while_held(self) -> None:
        loop = asyncio.get_running_loop()
        while (delay := self._held_until - loop.time()) > 0:
            await asyncio.sleep(delay)
        if self._shared is not None:
            await self._shared.wait_while_held()
