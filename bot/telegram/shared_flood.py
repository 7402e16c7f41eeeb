"""Telegram's flood limit shared by every replica of the bot, through Redis.

The limit is per bot token, not per process: two replicas sending 30 requests a second each
would together be flood-controlled. So with ``BARB_QUEUE_URL`` set, each request also takes
its turn from one moving-window budget in Redis (the ``limits`` library), and a
``RetryAfter`` seen by one replica holds every replica for the time Telegram named (a Redis
key that expires then). Each replica keeps serving its own waiting requests in order
(``bot.telegram.flood``); this only adds the budget they share.

Redis being away must not stop the bot's replies: a failed call is logged and the request
goes on with the replica's own limit only.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import time

import redis.asyncio as aioredis
from limits import RateLimitItem, RateLimitItemPerSecond
from limits.aio.storage import RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

#: Shortest pause between two looks at a full budget (its reset time is to the millisecond).
_MIN_WAIT_S = 0.005
#: Added to Telegram's RetryAfter, as the replica's own hold does.
HOLD_MARGIN_S = 0.1
#: A Redis that does not answer must not hold replies back for long.
REDIS_TIMEOUT_S = 1.0


def _rate_item(per_second: float) -> RateLimitItem:
    """``limits`` counts whole requests in a window: 30.5/s keeps to 30 in any second, and
    0.5/s is 1 in any 2 seconds (never a longer window, which would allow a burst)."""
    if per_second >= 1:
        return RateLimitItemPerSecond(int(per_second))
    return RateLimitItemPerSecond(1, multiples=math.ceil(1 / per_second))


def token_key(token: str) -> str:
    """The token's name in Redis: a digest, never the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


class SharedFloodBudget:
    """One bot token's request budget and RetryAfter hold, in Redis."""

    def __init__(self, url: str, token: str, per_second: float) -> None:
        """``per_second`` 0: no shared budget, only the shared RetryAfter hold."""
        # One connection pool for the budget (``limits``) and the hold, closed with them.
        self._pool = aioredis.ConnectionPool.from_url(
            url, socket_connect_timeout=REDIS_TIMEOUT_S, socket_timeout=REDIS_TIMEOUT_S
        )
        storage = RedisStorage(f"async+{url}", implementation="redispy", connection_pool=self._pool)
        self._window = MovingWindowRateLimiter(storage) if per_second > 0 else None
        self._item = _rate_item(per_second) if per_second > 0 else None
        self._key = f"barb:flood:{token_key(token)}"
        self._hold_key = f"{self._key}:hold"
        self._redis = aioredis.Redis(connection_pool=self._pool)

    async def acquire(self) -> None:
        """Wait until the token's budget over all replicas has room, and take one request."""
        if self._window is None or self._item is None:
            return
        try:
            while not await self._window.hit(self._item, self._key):
                stats = await self._window.get_window_stats(self._item, self._key)
                await asyncio.sleep(max(_MIN_WAIT_S, stats.reset_time - time.time()))
        except (RedisError, OSError):
            log.warning("shared flood limit unavailable (Redis); this replica's own limit only")

    async def hold(self, seconds: float) -> None:
        """Telegram said to wait: every replica waits until then (a longer hold stays)."""
        millis = int((seconds + HOLD_MARGIN_S) * 1000)
        try:
            if await self._redis.pttl(self._hold_key) < millis:
                await self._redis.set(self._hold_key, b"1", px=millis)
        except (RedisError, OSError):
            log.warning("shared flood hold unavailable (Redis); held on this replica only")

    async def wait_while_held(self) -> None:
        try:
            while (millis := await self._redis.pttl(self._hold_key)) > 0:
                await asyncio.sleep(millis / 1000)
        except (RedisError, OSError):
            log.warning("shared flood hold unreadable (Redis); this replica's own hold only")

    async def close(self) -> None:
        await self._redis.aclose()
        await self._pool.disconnect()
