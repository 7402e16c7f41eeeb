"""What the handlers work with: the assistant, the store, limits, per-chat ordering."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Collection, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from telegram.constants import ChatAction
from telegram.ext import ContextTypes

from barb.reference import Example
from bot.assistant.orchestrator import Assistant
from bot.pool.runner import QueryRunner
from bot.settings import BotSettings
from bot.store.records import LimitScope
from bot.store.repository import Store
from bot.telegram.chat_admins import ChatAdmins
from bot.telegram.chat_moves import ChatMoves
from bot.telegram.running import Queries
from bot.telegram.sender import Patience, Sender
from bot.telegram.split_questions import SplitQuestions, StoredParts
from bot.telegram.stopping import cancel_and_wait
from bot.telegram.thinking import Thinking
from bot.work_order import decoration

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from telegram import Bot

log = logging.getLogger(__name__)

SERVICES_KEY = "barb_services"
# A chat action shows for about 5 s: repeat a little sooner while work goes on.
CHAT_ACTION_EVERY_S = 4.0


@dataclass(frozen=True)
class RateLimiter:
    """Questions (or /query runs) per person per minute, a sliding window.

    Counted in the database (``store.rate_limits``), not in this process: every replica
    sees the same window, and a restart forgives nothing.
    """

    per_minute: int
    scope: LimitScope = "question"

    async def check(self, store: Store, user_id: int) -> float:
        """0 if the person may go ahead (and this one counts), else seconds to wait."""
        return await store.rate_limits.take(self.scope, user_id, self.per_minute)


class ChatActionBudget:
    """A token bucket for repeated chat actions, shared by all chats.

    "typing…" is decoration, but Telegram counts it against the same ~30 requests a second as
    the answers. Under load, when many chats wait at once, repeating it every 4 s for each of
    them would crowd out the answers and make the wait longer still; past the budget a repeat
    (or a delayed first action) is skipped. An action shown at once is always sent.
    """

    def __init__(self, per_second: float = 5.0, clock: Any = time.monotonic):
        self.per_second = per_second
        self._clock = clock
        self._tokens = per_second
        self._at = clock()

    def allow(self) -> bool:
        now = self._clock()
        self._tokens = min(self.per_second, self._tokens + (now - self._at) * self.per_second)
        self._at = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False


class Backlog:
    """How many answers are being worked on, to tell someone who joins how many are ahead."""

    def __init__(self) -> None:
        self.size = 0

    @contextlib.contextmanager
    def joined(self) -> Iterator[int]:
        """Count this answer in while the block runs; yields how many were ahead of it."""
        ahead = self.size
        self.size += 1
        try:
            yield ahead
        finally:
            self.size -= 1


@dataclass(eq=False)
class _Turn:
    """An update's place among its chat's updates, taken when it arrives."""

    chat_id: int
    locks: ChatLocks
    #: Set once the update has queued for its chat's lock, or ended without it.
    queued: asyncio.Event = field(default_factory=asyncio.Event)


#: The turn of the update the current task handles (set by ``ChatLocks.arrive``).
_turn: ContextVar[_Turn | None] = ContextVar("barb_chat_turn", default=None)


#: A chat's locks. Its replies go out under "replies", one update's at a time, in order. A
#: question's model turn holds "model" (one turn at a time, so that each is asked with the
#: one before it in the transcript) and takes "replies" only to send: a command sent while
#: the model thinks is answered at once. "notices": a sentence said at once while other
#: work holds "replies" (/cancel's "cannot be stopped…"), from the check that it is true to
#: its delivery; that work's answer takes it before going out (``notice_lock``).
Lane = Literal["replies", "model", "notices"]


class ChatLocks:
    """Per chat, one lock per lane with work in progress or waiting; dropped when the last
    task leaves, so that the chats seen once over the bot's life do not pile up.

    A chat's updates take their first lock (of either lane) in the order they arrived, not
    in the order their handlers reach it: before the lock each does its own database round
    trips (the update recorded, the chat read, the question put in flight), and on a
    database server those finish in any order, which would let a question overtake the
    greeting sent before it. Whoever takes both lanes takes "model" first.
    """

    def __init__(self) -> None:
        self._locks: dict[tuple[int, Lane], tuple[asyncio.Lock, int]] = {}
        self._turns: dict[int, list[_Turn]] = {}
        #: A group's locks are the supergroup's it became, once Telegram said so: work
        #: begun in the group takes its next lock in line with the supergroup's updates.
        self.moves = ChatMoves()

    def __len__(self) -> int:
        return len(self._locks)

    def arrive(self, chat_id: int) -> None:
        """An update of the chat arrived (call before the handler's first await): its
        ``hold`` comes after those of the chat's earlier updates still being handled."""
        turn = _Turn(chat_id, self)
        self._turns.setdefault(chat_id, []).append(turn)
        _turn.set(turn)

    def _leave(self, turn: _Turn) -> None:
        turn.queued.set()
        turns = self._turns.get(turn.chat_id, [])
        if turn in turns:
            turns.remove(turn)
        if not turns:
            self._turns.pop(turn.chat_id, None)

    async def earlier_queued(self, chat_id: int) -> None:
        """Wait until the chat's updates that arrived before the current task's have queued
        for a lock (or ended): a question sent before it is then in ``Thinking``. Example:
        /reset stops the question sent just before it, not only the ones the model had
        already begun."""
        turn = _turn.get()
        turns = self._turns.get(chat_id, [])
        if turn is not None and turn.chat_id == chat_id and turn in turns:
            for earlier in turns[: turns.index(turn)]:
                await earlier.queued.wait()

    @asynccontextmanager
    async def hold(self, chat_id: int, lane: Lane = "replies") -> AsyncIterator[None]:
        """The chat's lock of ``lane``, after the chat's earlier updates (``arrive``).

        A supergroup's lock is also its group's while work begun in the group before the
        upgrade still holds or waits for the group's: its reply, which Telegram refused at
        the group's id, goes on at the supergroup's (``Sender.reply``), and a flush of the
        supergroup (the sending pass) waits for it rather than sending the same messages
        (p46ah #6). Example: the answer's chart moved the chat from -555 to -100777; its
        commentary is going out under -555's lock; the sending pass over -100777 takes
        -555's lock, then -100777's, and finds the commentary sent.
        """
        turn = _turn.get()
        # "notices" is no update's place in line: held briefly, beside the other two.
        in_line = lane != "notices"
        if in_line:
            await self.earlier_queued(chat_id)
        chat = self.moves.current(chat_id)
        # The group's first (in use only by work begun before the move), then the chat's.
        keys = [(old, lane) for old in self.moves.before(chat) if (old, lane) in self._locks]
        keys.append((chat, lane))
        locks = []
        for key in keys:
            lock, users = self._locks.get(key, (asyncio.Lock(), 0))
            self._locks[key] = (lock, users + 1)
            locks.append(lock)
        try:
            if in_line and turn is not None and turn.chat_id == chat_id:
                # Queued on the lock in this same step (asyncio.Lock serves its waiters in
                # order): the next update of the chat may now queue behind this one.
                turn.queued.set()
            async with contextlib.AsyncExitStack() as held:
                for lock in locks:
                    await held.enter_async_context(lock)
                yield
        finally:
            for key, lock in zip(keys, locks, strict=True):
                users = self._locks[key][1] - 1
                if users:
                    self._locks[key] = (lock, users)
                else:
                    del self._locks[key]


def leave_turn() -> None:
    """The current task's update is handled: the chat's later updates no longer wait for it
    (called by the update processor once the update's handlers are done)."""
    turn = _turn.get()
    if turn is not None:
        _turn.set(None)
        turn.locks._leave(turn)


@dataclass
class BotServices:
    settings: BotSettings
    assistant: Assistant
    store: Store
    runner: QueryRunner
    limiter: RateLimiter
    #: The example questions offered as buttons, in each person's language (example_questions).
    examples: Sequence[Example]
    #: /query's own limit: it costs no tokens, so it does not count against the questions'.
    #: Built from ``settings.queries_per_minute`` unless given.
    query_limiter: RateLimiter = None  # type: ignore[assignment]
    patience: Patience = field(default_factory=Patience)
    chat_actions: ChatActionBudget = field(default_factory=ChatActionBudget)
    locks: ChatLocks = field(default_factory=ChatLocks)
    #: Questions being answered, which /cancel may stop.
    thinking: Thinking = field(default_factory=Thinking)
    #: /query runs under way (waiting their turn or computing), which /cancel and /reset
    #: speak of at once.
    queries: Queries = field(default_factory=Queries)
    backlog: Backlog = field(default_factory=Backlog)
    #: Per chat, the notices said under ``notice_lock`` that Telegram held back past the
    #: sender's patience (their outbox ids, still queued): the answer they speak of as on
    #: its way withdraws them as it goes out (``answering._after_notices``).
    held_notices: dict[int, list[int]] = field(default_factory=dict)
    #: Work in flight set aside because the database stopped answering under it
    #: (``answering.DatabaseAway``): resumed by the sending pass once it answers again.
    abandoned: set[int] = field(default_factory=set)
    #: Who may change a group's settings, as Telegram answered within the last minute.
    chat_admins: ChatAdmins = field(default_factory=ChatAdmins)
    #: Groups that became supergroups: the turns, runs and locks kept in memory under the
    #: group's id are found under the supergroup's (``chat_moved``).
    moves: ChatMoves = field(default_factory=ChatMoves)
    #: The outbox ids this process's tasks are sending (``Sender.deliver``): a message in
    #: one task's hands is not sent by another, whatever chat lock each holds.
    sending: set[int] = field(default_factory=set)
    #: Long questions waiting for the parts Telegram's apps split them into.
    split_questions: SplitQuestions = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.split_questions is None:
            self.split_questions = SplitQuestions(
                self.settings.split_window_s, StoredParts(self.store.updates)
            )
        if self.query_limiter is None:
            self.query_limiter = RateLimiter(self.settings.queries_per_minute, scope="query")
        self.locks.moves = self.thinking.moves = self.queries.moves = self.moves
        if self.thinking.stopped_elsewhere is None:  # a /cancel another replica handled
            self.thinking.stopped_elsewhere = self.store.in_flight.stopped

    async def close(self) -> None:
        """Once the handlers have ended, before the runner and the store close: end the
        tasks the services run in the background."""
        await self.thinking.close()

    async def chat_moved(self, old_id: int, new_id: int) -> bool:
        """A group became a supergroup: what the database keeps of it moves there
        (``ChatRepository.migrate``; True if anything moved), and what this process keeps
        in memory is found there. Example: /cancel in the supergroup stops the question
        the model was thinking about when the group was upgraded."""
        return await self.moves.record(self.store, old_id, new_id)

    async def learn_moves(self, chat_ids: Collection[int]) -> None:
        """Learn the moves into and out of these chats that another replica recorded (it got
        Telegram's service message; ``ChatRepository.moves_of``), before taking their
        locks: a supergroup's lock is then also its group's (``ChatLocks.hold``), and the
        group's replies still queued under its id go to the supergroup under both.
        Example: the sending pass over -100777 waits for the answer going out under -555's
        lock.

        Best-effort: when the moves cannot be read, the pass goes on with those it knows
        (a message in another task's hands is still not sent twice: ``Sender.deliver``)."""
        try:
            moves = await self.store.chats.moves_of(chat_ids)
        except Exception:
            log.exception("could not read the chats' moves; going on without them")
            return
        for old_id, new_id in moves:
            self.moves.moved(old_id, new_id)

    def sender(self, bot: Bot) -> Sender:
        return Sender(
            bot, self.store, self.patience, self.moves, self.sending, self.runner.answered
        )

    def showing(
        self, bot: Bot, chat_id: int, action: str = ChatAction.TYPING, *, after_s: float = 0.0
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """'typing…' (or ``action``) in the chat while the block runs, from ``after_s`` on,
        within the budget."""
        return chat_action(bot, chat_id, action, budget=self.chat_actions, after_s=after_s)

    def chat_lock(self, chat_id: int) -> contextlib.AbstractAsyncContextManager[None]:
        """Messages of one chat are handled in order; different chats run concurrently.
        Every reply of the chat is sent under it."""
        return self.locks.hold(chat_id)

    def notice_lock(self, chat_id: int) -> contextlib.AbstractAsyncContextManager[None]:
        """A notice said without ``chat_lock`` (the work it speaks of holds it) is checked
        and sent under this; that work's answer takes it just before going out. A notice
        is then either whole before the answer, or, checked once the answer is going out,
        not said. Example: /cancel three seconds into a run: "cannot be stopped: the
        answer is on its way" before the answer's chart, never between its messages."""
        return self.locks.hold(chat_id, "notices")

    def model_lock(self, chat_id: int) -> contextlib.AbstractAsyncContextManager[None]:
        """Work of one chat that the model or the engine does: one at a time, in order;
        taken before ``chat_lock``, never while holding it."""
        return self.locks.hold(chat_id, "model")


def services(context: ContextTypes.DEFAULT_TYPE) -> BotServices:
    return context.application.bot_data[SERVICES_KEY]


@asynccontextmanager
async def chat_action(
    bot: Bot,
    chat_id: int,
    action: str = ChatAction.TYPING,
    *,
    budget: ChatActionBudget | None = None,
    every_s: float = CHAT_ACTION_EVERY_S,
    after_s: float = 0.0,
) -> AsyncIterator[None]:
    """Keep 'typing…' (or 'sending photo…') visible while the block runs; with ``after_s``,
    only once it has run that long (work done sooner needs no sign, and under load every
    request counts against Telegram's limit)."""

    done = asyncio.Event()

    async def send() -> None:
        # A chat action is decoration: never fail the answer for it, nor wait past the next.
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for drops a cancellation that
        # arrives as the request completes, and the block's end would then wait on a loop
        # that never stops (seen under load: thousands of actions, a handler stuck).
        with contextlib.suppress(Exception):
            async with asyncio.timeout(every_s):
                await bot.send_chat_action(chat_id, action)

    async def repeat() -> None:
        if after_s > 0:
            await asyncio.sleep(after_s)
        else:
            await send()  # the answer's first sign of life: always, at once
            await asyncio.sleep(every_s)
        # The rest waits for the budget, and goes after every answer waiting for Telegram's
        # flood limit.
        decoration()
        while not done.is_set():  # the flag too: a lost cancellation must not keep it going
            if budget is None or budget.allow():
                await send()
            await asyncio.sleep(every_s)

    task = asyncio.create_task(repeat())
    try:
        yield
    finally:
        done.set()
        await cancel_and_wait(task)
