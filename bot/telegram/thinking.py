"""Questions being answered, which /cancel and /reset may stop.

A question's turn (waiting for the chat's model lock, then the model thinking, queries
run on the way) holds no lock the chat's replies need, so a /cancel sent meanwhile is
handled at once: it stops the turn, and the question is dropped unanswered (a /reset
stops it too, and forgets it). Once the turn holds the chat's reply lock its answer is
going out and can no longer be stopped: /cancel then waits for it and drops the plan it
brought, so nothing of the question comes after the confirmation.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field


@dataclass(eq=False)
class Turn:
    """One question's turn, from its handler (or its resumption after a restart)."""

    chat_id: int
    user_id: int
    #: Its work in flight, which the /cancel that stops it ends (with its confirmation).
    work_id: int
    task: asyncio.Task[object]
    stopped: bool = False
    #: Set once the turn has let go of what it was doing (stopped or not).
    ended: asyncio.Event = field(default_factory=asyncio.Event)


class Thinking:
    def __init__(self) -> None:
        self._turns: list[Turn] = []

    @asynccontextmanager
    async def stoppable(self, chat_id: int, user_id: int, work_id: int) -> AsyncIterator[Turn]:
        """The block may be stopped by ``stop`` until it calls ``going_out``; a stopped block
        ends quietly, with ``Turn.stopped`` set. Any other cancellation (a shutdown) goes on."""
        task = asyncio.current_task()
        assert task is not None
        turn = Turn(chat_id, user_id, work_id, task)
        self._turns.append(turn)
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

    def going_out(self, turn: Turn) -> None:
        """The turn's answer is being sent (its chat's reply lock is held): not stoppable."""
        if turn in self._turns:
            self._turns.remove(turn)

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

    def turns(self, chat_id: int, user_id: int) -> list[Turn]:
        """The person's turns in the chat that ``stop`` would stop now."""
        return [t for t in self._turns if t.chat_id == chat_id and t.user_id == user_id]

    def others(self, chat_id: int, user_id: int) -> list[Turn]:
        """The turns of the chat's other members (in a group), which the person cannot
        stop. Example: Alice's question the model thinks about when Bob sends /reset."""
        return [t for t in self._turns if t.chat_id == chat_id and t.user_id != user_id]

    def stop(self, chat_id: int, user_id: int) -> list[Turn]:
        """Stop the person's turns in the chat that are not going out (none of them is
        sending: a turn sends only once out of this list, see ``sending``), then wait for
        each ``Turn.ended``."""
        stopped = self.turns(chat_id, user_id)
        for turn in stopped:
            self.going_out(turn)
            turn.stopped = True
            turn.task.cancel()
        return stopped
