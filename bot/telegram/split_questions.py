"""A question Telegram's clients split in parts, asked whole.

A message over 4096 characters is sent by the Telegram apps as several messages, a part
each, arriving within about a second. Each part was asked on its own: the second replaced
the first part's plan ("replaced by a newer one") and the model never read the question
whole. Here one person's text messages in one chat (and forum topic) that follow a long one
within ``window_s`` are joined to it, and asked once.

Only a long message waits (``LONG_FROM`` characters, half Telegram's limit: the apps cut a
part at a paragraph or word boundary, so a first part can be well under 4096). A short
question, nearly every question, is asked at once as before: making everyone wait a second
and a half for the rare pasted essay would be a cost paid on every answer. A long question
waits ``window_s`` after its last part, a small delay beside the model's reading it.

The parts after the first join it even in a group where they do not mention Barb (only the
first part carries the @mention or the reply). Their updates are marked handled in the
transaction that records the joined question in flight (``InFlightRepository.start``), and
their handlers end only then: a kill before that leaves every part to be read again, and
joined again, at the next start; never a part lost, nor asked alone.

Per process: with several replicas behind a webhook, parts that reach different replicas
are asked apart, as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

#: Telegram's limit for one message is 4096; a message this long may be a split one's first.
LONG_FROM = 2048

#: (chat id, forum topic or None, asker id): whose parts join.
Key = tuple[int, int | None, int]


@dataclass
class Gathered:
    """A question as gathered: its text (the parts joined by a line break) and the updates
    of the parts after the first, handled once it is recorded (``recorded``)."""

    parts: list[str]
    joined_updates: list[int] = field(default_factory=list)
    #: Set once the question is recorded in flight (or its handler ended): the parts'
    #: handlers, waiting for it, end then.
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    #: A part arrived: the first part's handler waits ``window_s`` more.
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    open: bool = True

    @property
    def text(self) -> str:
        """A lone message as it came; parts joined at the app's cut, one line break."""
        if len(self.parts) == 1:
            return self.parts[0]
        return "\n".join(part.strip() for part in self.parts)

    def recorded(self) -> None:
        """The question is recorded in flight, with the parts' updates handled."""
        self.settled.set()


class SplitQuestions:
    """The long questions of this process waiting for their next part, by ``Key``."""

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self._open: dict[Key, Gathered] = {}

    async def join(self, key: Key, text: str, update_id: int | None) -> bool:
        """A message of ``key``'s: True if it was a part of the question being gathered
        there, joined to it (returns once that question is recorded); False if it is a
        message of its own."""
        gathering = self._open.get(key)
        if gathering is None or not gathering.open or not text.strip():
            return False
        gathering.parts.append(text)
        if update_id is not None:
            gathering.joined_updates.append(update_id)
        gathering.arrived.set()
        log.info("a part of %d characters joined the question in chat %s", len(text), key[0])
        await gathering.settled.wait()
        return True

    @asynccontextmanager
    async def gather(self, key: Key, text: str, length: int) -> AsyncIterator[Gathered]:
        """The question ``text`` begins (``length``: its message's, before a mention was
        taken out), with the parts that follow it if it is long, once they stop coming.
        The parts' handlers end when the block does, if ``recorded`` was not called."""
        gathering = Gathered([text])
        if length < LONG_FROM or self.window_s <= 0 or key in self._open:
            gathering.open = False
            yield gathering
            return
        self._open[key] = gathering
        try:
            while True:
                gathering.arrived.clear()
                try:
                    await asyncio.wait_for(gathering.arrived.wait(), self.window_s)
                except TimeoutError:
                    break
            gathering.open = False
            del self._open[key]
            yield gathering
        finally:
            gathering.open = False
            if self._open.get(key) is gathering:
                del self._open[key]
            gathering.settled.set()
