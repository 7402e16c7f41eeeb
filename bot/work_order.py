"""The order in which Barb serves work under load: acknowledgements first, then oldest first.

Several queues are shared by every chat: SQLite's single writer, and Telegram's flood limit
(about 30 requests a second across chats). A question needs several turns at each. With
plain first-come queues each of its turns would wait behind one turn of every other question
in progress: under a burst every answer would advance one step at a time and all would
finish together, late. So these queues serve work in order of when it began (``arrived``),
the first question asked being the first answered, with one exception: until the person has
been acknowledged (the button stopped spinning, the plan says "Running…"), that work comes
before everything else, since it is small and someone is watching it.

The place of the current work travels in a context variable, so the tasks a handler starts
inherit it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar

#: (0 while the person waits to be acknowledged, 1 for the work itself, 2 for decoration
#: such as 'typing…'; when the work began).
Priority = tuple[int, float]
_work: ContextVar[Priority | None] = ContextVar("barb_work", default=None)


def arrived(at: float | None = None) -> None:
    """Work for someone begins now (or ``at``, a ``time.monotonic()``) in the current task
    and those it starts; it comes first until ``acknowledged``."""
    _work.set((0, time.monotonic() if at is None else at))


def acknowledged() -> None:
    """The person has seen the work start: from now on it queues by its age."""
    _enter_phase(1)


def decoration() -> None:
    """What the current task sends from now on is decoration ('typing…'): it waits until
    no other work does."""
    _enter_phase(2)


def _enter_phase(phase: int) -> None:
    current = _work.get()
    _work.set((phase, current[1] if current else time.monotonic()))


def priority() -> Priority:
    """The current work's place in the queue (lower first); unmarked work (housekeeping)
    counts as begun now."""
    return _work.get() or (1, time.monotonic())


class PriorityGate:
    """An asyncio lock whose waiters are served by ``priority()`` (then in arrival order).

    A released gate is handed to the next waiter directly, so a newcomer cannot slip in
    ahead of those already waiting.
    """

    def __init__(self) -> None:
        self._held = False
        self._waiting: list[tuple[Priority, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    @property
    def waiting(self) -> int:
        return sum(not future.done() for _, _, future in self._waiting)

    @asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        await self._acquire(priority())
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, rank: Priority) -> None:
        if not self._held and not self._waiting:
            self._held = True
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (rank, next(self._arrivals), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()  # handed the gate just as we were cancelled: pass it on
            raise  # a cancelled waiter stays in the heap, done, and is skipped

    def _release(self) -> None:
        while self._waiting:
            _, _, future = heapq.heappop(self._waiting)
            if not future.done():
                future.set_result(None)  # the gate stays held, now by that waiter
                return
        self._held = False
