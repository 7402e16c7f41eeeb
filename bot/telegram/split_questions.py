"""A question Telegram's clients split in parts, asked whole.

A message over 4096 characters is sent by the Telegram apps as several messages, a part
each, arriving within about a second. Each part was asked on its own: the second replaced
the first part's plan ("replaced by a newer one") and the model never read the question
whole. Here one person's text messages in one chat (and forum topic) that follow a long one
within ``window_s`` and can be its next part (``continues``) are joined to it, and asked
once.

Only a long message waits (``LONG_FROM`` characters, half Telegram's limit: the apps cut a
part at a paragraph or word boundary past the middle of the limit, so a first part can be
well under 4096). A short question, nearly every question, is asked at once as before:
making everyone wait a second and a half for the rare pasted essay would be a cost paid on
every answer. A long question waits ``window_s`` after its last part, a small delay beside
the model's reading it.

A message is a next part only if the app had to cut: the part before it and it, with the
whitespace dropped at the cut, are over the limit. "And in 2023?" sent a second after a
pasted question of 3000 characters is a question of its own (before, it was glued to the
end of the long one, and never answered as asked); it is asked after the long one, in the
order the person sent them.

The parts after the first join it even in a group where they do not mention Barb (only the
first part carries the @mention or the reply). Their updates are marked handled in the
transaction that records the joined question in flight (``InFlightRepository.start``), and
their handlers end only then: a kill before that leaves every part to be read again, and
joined again, at the next start; never a part lost, nor asked alone.

Across replicas (a webhook behind a load balancer: the parts may reach different ones) the
join holds through the shared store (``StoredParts``), where every update is stored before
Telegram is told it arrived, and Telegram sends one chat's updates in order, each after the
one before was answered: a part's first part is always stored before it. A replica given a
message behind another's long one still unhandled leaves it to the one gathering that
(``SplitQuestions.join``), which, before asking, takes the parts stored after its own
(``StoredParts.after``), and marks them handled with its question. If it did not take the
message (it was no part, or came too late), the message is asked on its own once the long
one is recorded. The store is every deployment's, SQLite's or PostgreSQL's; Redis is not
needed for this.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from telegram import Update

from bot.store.updates import UpdateRepository

log = logging.getLogger(__name__)

#: Telegram's limit for one message, in UTF-16 code units as its apps count it.
LIMIT = 4096
#: A message this long may be a split one's first part: the apps cut past the limit's middle.
LONG_FROM = LIMIT // 2
#: The whitespace an app or Telegram drops at a cut (a space, a line break or two), with room.
CUT_SLACK = 16

#: (chat id, forum topic or None, asker id): whose parts join.
Key = tuple[int, int | None, int]


def utf16_length(text: str) -> int:
    """A text's length as Telegram counts it: an emoji outside the BMP is two.

    >>> utf16_length("NQ 📈")
    5
    """
    return len(text.encode("utf-16-le")) // 2


def continues(before: int, text: str) -> bool:
    """Whether ``text`` can be the part that follows a message ``before`` long (UTF-16 code
    units, as sent): the app cut only a message over the limit, past its middle.

    >>> continues(4000, "and the rest of it")
    True
    >>> continues(3000, "and in 2023?")
    False
    """
    return before >= LONG_FROM and before + utf16_length(text) + CUT_SLACK > LIMIT


def key_of(update: Update) -> Key | None:
    """Whose parts a message's are: its chat, forum topic and sender (the chat it was sent on
    behalf of, as ``update_context.asker_of`` counts an anonymous admin); None for an update
    that is not a new message from someone."""
    message = update.message
    if message is None:
        return None
    sender = message.sender_chat or message.from_user
    if sender is None:
        return None
    thread = message.message_thread_id if message.is_topic_message else None
    return (message.chat.id, thread, sender.id)


def stored_message(payload: dict[str, Any]) -> tuple[Key, str, int] | None:
    """A stored update as a part: whose, its text and its message; None for anything else."""
    try:
        update = Update.de_json(payload, None)
    except Exception:  # stored by a version that read it differently: no part of anything
        return None
    key = key_of(update)
    if key is None or update.message is None or not update.message.text:
        return None
    return key, update.message.text, update.message.message_id


@dataclass(frozen=True)
class Part:
    """One message of a question: its update, its words as asked (the first part without
    its @mention) and its length as sent (``utf16_length``)."""

    update_id: int | None
    text: str
    length: int
    #: Its Telegram message: a reply to any part follows the question (``Asker.parts``).
    message_id: int | None = None


@dataclass
class Gathered:
    """A question as gathered: its parts, the first first, the rest in the order Telegram
    numbered them (a part another replica got is taken from the store after the ones that
    reached this one), handled once it is recorded (``recorded``)."""

    parts: list[Part]
    #: Set once the question is recorded in flight (or its handler ended): the parts'
    #: handlers, waiting for it, end then.
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    #: A part arrived: the first part's handler waits ``window_s`` more.
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    open: bool = True

    def ordered(self) -> list[Part]:
        first, *rest = self.parts
        return [first, *sorted(rest, key=lambda part: part.update_id or 0)]

    @property
    def text(self) -> str:
        """A lone message as it came; parts joined at the app's cut, one line break."""
        if len(self.parts) == 1:
            return self.parts[0].text
        return "\n".join(part.text.strip() for part in self.ordered())

    @property
    def joined_updates(self) -> list[int]:
        """The updates of the parts after the first, handled with the question."""
        return [p.update_id for p in self.parts[1:] if p.update_id is not None]

    @property
    def joined_messages(self) -> list[int]:
        """The Telegram messages of the parts after the first, in order."""
        return [p.message_id for p in self.ordered()[1:] if p.message_id is not None]

    @property
    def last(self) -> Part:
        return self.ordered()[-1]

    def recorded(self) -> None:
        """The question is recorded in flight, with the parts' updates handled."""
        self.settled.set()


#: A stored update's message as a part: whose it is (``Key``) and its text, or None for an
#: update that is not a person's text message.
ReadUpdate = Callable[[dict[str, Any]], tuple[Key, str, int] | None]


class StoredParts:
    """The parts of a question as stored by every replica: the received updates not handled
    yet (``UpdateRepository``), read back as messages with ``read``."""

    def __init__(
        self,
        updates: UpdateRepository,
        read: ReadUpdate = stored_message,
        *,
        poll_s: float = 0.1,
        patience: timedelta | None = None,
    ) -> None:
        self.updates = updates
        self.read = read
        self.poll_s = poll_s
        #: How long a message waits behind a long one: past its replica's lease another
        #: replica has taken it over and gathered it (twice the lease, for the pass's turn).
        self.patience = patience if patience is not None else updates.lease.duration * 2

    async def _messages(self, key: Key) -> list[Part]:
        """The person's text messages stored and not handled yet, in Telegram's order."""
        found = []
        for update_id, payload in await self.updates.unhandled_messages(key[0]):
            read = self.read(payload)
            if read is not None and read[0] == key:
                found.append(Part(update_id, read[1], utf16_length(read[1]), read[2]))
        return found

    async def after(self, key: Key, gathering: Gathered) -> list[Part]:
        """The parts of ``gathering`` (``key``'s) stored by any replica and not in it yet:
        the person's messages after its first, in order, each the one before's next part."""
        first = gathering.parts[0]
        if first.update_id is None:
            return []
        have = {p.update_id for p in gathering.parts}
        before, found = first.length, []
        for part in await self._messages(key):
            if part.update_id is None or part.update_id <= first.update_id:
                continue
            if not continues(before, part.text):
                break
            if part.update_id not in have:
                found.append(part)
            before = part.length
        return found

    async def long_before(self, key: Key, update_id: int) -> int | None:
        """The update of the person's message before ``update_id``, if it is a long one not
        handled yet (being gathered, here or by another replica); else None."""
        earlier = [p for p in await self._messages(key) if (p.update_id or 0) < update_id]
        if not earlier or earlier[-1].length < LONG_FROM:
            return None
        return earlier[-1].update_id


async def _after(gathering: Gathered, *, joined: bool) -> bool:
    """``joined`` once ``gathering`` is recorded (or given up)."""
    await gathering.settled.wait()
    return joined


class SplitQuestions:
    """The long questions of this process waiting for their next part, by ``Key``; with
    ``stored``, the parts other replicas received too."""

    def __init__(self, window_s: float, stored: StoredParts | None = None) -> None:
        self.window_s = window_s
        self.stored = stored
        self._open: dict[Key, Gathered] = {}

    async def join(
        self, key: Key, text: str, update_id: int | None, message_id: int | None = None
    ) -> bool:
        """A message of ``key``'s: True if it was a part of the question being gathered
        there (here or by another replica), joined to it (returns once that question is
        recorded); False if it is a message of its own, to be asked now (after a long one
        it came behind)."""
        if self.window_s <= 0 or not text.strip():
            return False
        here = self._join_here(key, text, update_id, message_id)
        if here is not None:
            return await here
        if self.stored is None or update_id is None:
            return False
        # Behind a long one stored and not handled: wait until it is, and see whether it
        # took this one as its part (its replica marks the parts it takes handled with it).
        waited_for = await self.stored.long_before(key, update_id)
        if waited_for is None:
            return False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.stored.patience.total_seconds()
        while loop.time() < deadline:
            # The long one may be this replica's, its gathering opened meanwhile: joined
            # here at once, rather than found in the store a window later.
            here = self._join_here(key, text, update_id, message_id)
            if here is not None:
                return await here
            unhandled = await self.stored.updates.unhandled_of([waited_for, update_id])
            if update_id not in unhandled:
                return True  # taken as a part, and handled with its question
            if waited_for not in unhandled:
                return False
            await asyncio.sleep(self.stored.poll_s)
        log.warning("a message waited %s behind a long one; asked alone", self.stored.patience)
        return False

    def _join_here(
        self, key: Key, text: str, update_id: int | None, message_id: int | None = None
    ) -> Coroutine[Any, Any, bool] | None:
        """With a question of ``key``'s being gathered here: the message joined to it if it
        can be its next part (``continues``), and what to await (True once the question is
        recorded; False, once it is, for a question of its own, asked after it). None with
        no question gathered here."""
        gathering = self._open.get(key)
        if gathering is None or not gathering.open:
            return None
        if update_id is not None and any(p.update_id == update_id for p in gathering.parts):
            return _after(gathering, joined=True)  # taken from the store already
        if not continues(gathering.last.length, text):
            return _after(gathering, joined=False)
        gathering.parts.append(Part(update_id, text, utf16_length(text), message_id))
        gathering.arrived.set()
        log.info("a part of %d characters joined the question in chat %s", len(text), key[0])
        return _after(gathering, joined=True)

    @asynccontextmanager
    async def gather(
        self,
        key: Key,
        text: str,
        sent: str,
        update_id: int | None = None,
        message_id: int | None = None,
    ) -> AsyncIterator[Gathered]:
        """The question ``text`` begins (``sent``: its message as sent, a mention and all;
        ``update_id``: its update), with the parts that follow it if it is long, once they
        stop coming. The parts' handlers end when the block does, if ``recorded`` was not
        called."""
        gathering = Gathered([Part(update_id, text, utf16_length(sent), message_id)])
        if gathering.parts[0].length < LONG_FROM or self.window_s <= 0 or key in self._open:
            gathering.open = False
            yield gathering
            return
        self._open[key] = gathering
        try:
            while True:
                gathering.arrived.clear()
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for drops a shutdown's
                # cancellation that comes as a part arrives, and the handler went on.
                try:
                    async with asyncio.timeout(self.window_s):
                        await gathering.arrived.wait()
                    continue
                except TimeoutError:
                    pass
                # The parts that reached other replicas (or this one before it opened).
                elsewhere = await self._stored_after(key, gathering)
                if not elsewhere:
                    break
                gathering.parts.extend(elsewhere)
                log.info("%d stored parts joined the question in chat %s", len(elsewhere), key[0])
            gathering.open = False
            del self._open[key]
            yield gathering
        finally:
            gathering.open = False
            if self._open.get(key) is gathering:
                del self._open[key]
            gathering.settled.set()

    async def _stored_after(self, key: Key, gathering: Gathered) -> Sequence[Part]:
        if self.stored is None:
            return []
        return await self.stored.after(key, gathering)
