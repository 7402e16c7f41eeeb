"""Which Telegram update the current task is handling, if any.

Set around an update's handlers (``app.StoppableUpdates``) and inherited by the tasks they
start. The transaction that stores a handler's reply in the outbox (``Sender``) marks that
update handled, as recording work in flight does: from then on a restart sends the stored
reply instead of handling the update again, so a reply is never written twice. Work resumed
at start-up, or sent by the sending pass, has no update in hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_in_hand: ContextVar[int | None] = ContextVar("barb_update_in_hand", default=None)


def update_in_hand() -> int | None:
    """The id of the update the current task is handling, or None."""
    return _in_hand.get()


@contextmanager
def handling(update_id: int | None) -> Iterator[None]:
    """The current task handles ``update_id`` while inside."""
    token = _in_hand.set(update_id)
    try:
        yield
    finally:
        _in_hand.reset(token)
