"""/query runs under way, which /cancel and /reset cannot stop but speak of at once.

A ``/query`` holds both of its chat's locks from its start to its answer (no model, no plan:
the person's own Barb Script). A /cancel or /reset sent meanwhile would otherwise wait,
silent, for the whole run, then answer after it (p44b #7). A run is under way from the
moment its handler starts it, while it still waits its turn for those locks: a /cancel
typed right after the /query found nothing computing yet and waited as silently (p46b #4).
A confirmed plan's run needs no entry here: its plan says "running" in the store.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from bot.telegram.chat_moves import ChatMoves


@dataclass(frozen=True, eq=False)
class _Run:
    chat_id: int
    user_id: int


class Queries:
    """In memory, as the chat's locks are: a chat's updates are handled by one process."""

    def __init__(self) -> None:
        self._runs: list[_Run] = []
        #: A group's runs are found from the supergroup it became (``BotServices``).
        self.moves = ChatMoves()

    @contextmanager
    def running(self, chat_id: int, user_id: int) -> Iterator[None]:
        """The block waits for the chat's locks and computes ``user_id``'s /query in the
        chat; its answer goes out after the block, once the notices said about it are out
        (``notice_lock``)."""
        run = _Run(chat_id, user_id)
        self._runs.append(run)
        try:
            yield
        finally:
            self._runs.remove(run)

    def whose(self, chat_id: int) -> int | None:
        """Who sent the chat's /query under way now, if one is. Example: Alice's /reset
        three seconds into her /query gives her own id; in a group, Bob's gives Alice's."""
        runs = (run for run in self._runs if self.moves.same(run.chat_id, chat_id))
        return next((run.user_id for run in runs), None)
