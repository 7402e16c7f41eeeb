"""Groups that became supergroups while this process ran: the old id, the new one.

``ChatRepository.migrate`` moves what the database keeps of a group; what this process keeps
in memory by chat id (the turns ``Thinking`` may stop, the /query runs, the chat's locks)
stays under the id it began with. Those lookups compare ids through ``ChatMoves.current``,
so that work begun in the group is found from the supergroup (p46ah #3). The ``Sender``
learns a move from Telegram's refusal (``ChatMigrated``) as well as from the service
messages, and from then on queues and sends the group's replies at the supergroup's id.
Every move learned is recorded the one way, ``ChatMoves.record``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.store.repository import Store


class ChatMoves:
    """Old chat id → new, as Telegram said (a service message, or ``ChatMigrated``).

    Example: after ``moves.moved(-555, -100777)``, ``moves.current(-555) == -100777`` and
    ``moves.same(-555, -100777)``: Alice's question asked in the group, the model still
    thinking about it, is stopped by her /cancel in the supergroup. A group is upgraded once
    in its life: the map stays as small as the number of upgrades the process saw.
    """

    def __init__(self) -> None:
        self._to: dict[int, int] = {}

    def moved(self, old_id: int, new_id: int) -> None:
        if old_id != new_id:
            self._to[old_id] = new_id

    async def record(self, store: Store, old_id: int, new_id: int) -> bool:
        """Telegram said the group ``old_id`` is the supergroup ``new_id`` now (a service
        message, or a call refused with ``ChatMigrated``): what the database keeps of the
        group moves there, the move is stored for the other replicas (``chats.moved_to``;
        ``ChatRepository.migrate``, True if anything moved), and this process knows it.
        Whatever learns of a move records it here: a send, a plan's status edit, a
        service message."""
        moved = await store.chats.migrate(old_id, new_id)
        # Once the database has it: a reply queued under the new id needs its chat's row.
        self.moved(old_id, new_id)
        return moved

    def current(self, chat_id: int) -> int:
        """The id the chat has now (a supergroup is never upgraded again: one step)."""
        return self._to.get(chat_id, chat_id)

    def same(self, a: int, b: int) -> bool:
        return a == b or self.current(a) == self.current(b)

    def before(self, chat_id: int) -> list[int]:
        """The ids the chat had before (the group a supergroup was): ``[-555]`` for
        -100777 above."""
        return [old for old, new in self._to.items() if new == chat_id]
