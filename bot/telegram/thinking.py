"""Questions being answered, which /cancel and /reset may stop.

A question's turn (waiting for the chat's model lock, then the model thinking, queries
run on the way) holds no lock the chat's replies need, so a /cancel sent meanwhile is
handled at once: it stops the turn, and the question is dropped unanswered (a /reset
stops it too, and forgets it). Once the turn holds the chat's reply lock its answer is
going out and can no longer be stopped: /cancel then waits for it and drops the plan it
brought, so nothing of the question comes after the confirmation.

With several replicas a /cancel may reach one that does not hold the question (HAProxy
moved the chat): that one marks it stopped in the database, and the holder, which reads the
marks of its turns every ``STOPS_READ_EVERY_S``, stops the turn as its own /cancel would.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

from bot.telegram.chat_moves import ChatMoves
from bot.telegram.stopping import cancel_and_wait

log = logging.getLogger(__name__)

#: How often a process thinking about questions reads whether another replica stopped one
#: (one read for all of them, only while there are any): the model's turn, and its
#: 'typing…', end this long at most after the other replica said "Stopped".
STOPS_READ_EVERY_S = 2.0

#: Which of the given work ids another replica stopped (``InFlightRepository.stopped``).
StoppedElsewhere = Callable[[Collection[int]], Awaitable[set[int]]]


@dataclass(eq=False)
class Turn:
    """One question's turn, from its handler (or its resumption after a restart)."""

    chat_id: int
    user_id: int
    #: Its work in flight, which the /cancel that stops it ends (with its confirmation).
    work_id: int
    task: asyncio.Task[object]
    stopped: bool = False
    #: Stopped by a /cancel or /reset another replica handled: no confirmation here ends
    #: its work in flight, the turn does.
    elsewhere: bool = False
    #: Set once the turn has let go of what it was doing (stopped or not).
    ended: asyncio.Event = field(default_factory=asyncio.Event)


class Thinking:
    def __init__(
        self,
        stopped_elsewhere: StoppedElsewhere | None = None,
        *,
        every_s: float = STOPS_READ_EVERY_S,
    ) -> None:
        self._turns: list[Turn] = []
        #: Read while there are turns; None: one process alone (tests), nothing to read.
        self.stopped_elsewhere = stopped_elsewhere
        self.every_s = every_s
        self._reader: asyncio.Task[None] | None = None
        self._reader_sleeps = False
        #: A group's turns are found from the supergroup it became (``BotServices``).
        self.moves = ChatMoves()

    @asynccontextmanager
    async def stoppable(self, chat_id: int, user_id: int, work_id: int) -> AsyncIterator[Turn]:
        """The block may be stopped by ``stop`` until it calls ``going_out``; a stopped block
        ends quietly, with ``Turn.stopped`` set. Any other cancellation (a shutdown) goes on."""
        task = asyncio.current_task()
        assert task is not None
        turn = Turn(chat_id, user_id, work_id, task)
        self._turns.append(turn)
        self._read_stops()
        try:
            yield turn
        except asyncio.CancelledError:
            if not turn.stopped or task.uncancel() > 0:
                raise
        else:
            if turn.stopped:  # the cancellation was swallowed on the way: not ours to keep
                task.uncancel()
        finally:
            self.going_out(turn)
            turn.ended.set()

    async def close(self) -> None:
        """At shutdown, once the handlers have ended: stop reading the other replicas'
        stops, a read in progress too (its turns are gone), so that nothing of this awaits
        the database once the store is closed."""
        if self._reader is not None:
            await cancel_and_wait(self._reader)

    def going_out(self, turn: Turn) -> None:
        """The turn's answer is being sent (its chat's reply lock is held): not stoppable."""
        if turn in self._turns:
            self._turns.remove(turn)
        if not self._turns and self._reader is not None and self._reader_sleeps:
            self._reader.cancel()  # nothing left to read about (never cut mid-read)

    @contextmanager
    def sending(self, turn: Turn) -> Iterator[None]:
        """The turn sends something before its answer (a /start greeting), holding the
        chat's reply lock: not stoppable meanwhile, so that a ``stop`` made without that
        lock (/reset) never cuts a message short."""
        self.going_out(turn)
        try:
            yield
        finally:
            self._turns.append(turn)
            self._read_stops()

    def turns(self, chat_id: int, user_id: int) -> list[Turn]:
        """The person's turns in the chat that ``stop`` would stop now. (An asker's id is
        compared through the moves too: the group's anonymous admins ask as the group.)"""
        return [
            t
            for t in self._turns
            if self.moves.same(t.chat_id, chat_id) and self.moves.same(t.user_id, user_id)
        ]

    def others(self, chat_id: int, user_id: int) -> list[Turn]:
        """The turns of the chat's other members (in a group), which the person cannot
        stop. Example: Alice's question the model thinks about when Bob sends /reset."""
        return [
            t
            for t in self._turns
            if self.moves.same(t.chat_id, chat_id) and not self.moves.same(t.user_id, user_id)
        ]

    def stop(self, chat_id: int, user_id: int) -> list[Turn]:
        """Stop the person's turns in the chat that are not going out (none of them is
        sending: a turn sends only once out of this list, see ``sending``), then wait for
        each ``Turn.ended``."""
        stopped = self.turns(chat_id, user_id)
        for turn in stopped:
            self._stop(turn)
        return stopped

    def _stop(self, turn: Turn) -> None:
        self.going_out(turn)
        turn.stopped = True
        turn.task.cancel()

    def _read_stops(self) -> None:
        """Read the stops of other replicas while there are turns (started once)."""
        if self.stopped_elsewhere is None or (self._reader and not self._reader.done()):
            return
        # In a context of its own, not the handler's it happens to be started from.
        self._reader = asyncio.get_running_loop().create_task(
            self._keep_reading_stops(), name="barb-stops-elsewhere", context=contextvars.Context()
        )

    async def _keep_reading_stops(self) -> None:
        assert self.stopped_elsewhere is not None
        while self._turns:
            self._reader_sleeps = True
            try:
                await asyncio.sleep(self.every_s)
            finally:
                self._reader_sleeps = False
            turns = list(self._turns)
            try:
                stopped = await self.stopped_elsewhere([turn.work_id for turn in turns])
            except Exception as exc:  # the database away: the next read may succeed
                log.warning("could not read which questions were stopped elsewhere: %s", exc)
                continue
            for turn in turns:
                if turn.work_id in stopped and turn in self._turns:
                    log.info("question %s stopped by another replica", turn.work_id)
                    turn.elsewhere = True
                    self._stop(turn)
