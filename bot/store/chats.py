"""Chats (instrument, settings, detected language) and people's remembered preferences."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.store.errors import UnknownChat
from bot.store.records import (
    DEFAULT_INSTRUMENT,
    SINGLE_VALUED_PREFERENCES,
    Chat,
    ChatSettings,
    ChatType,
    Preference,
    PreferenceKind,
    values_of,
)
from bot.store.schema import (
    ChatRow,
    InFlightRow,
    MessageRow,
    OutboxRow,
    PendingActionRow,
    PreferenceRow,
)
from bot.store.transactions import Clock, Repository, in_line, rowcount

MAX_PREFERENCE_CHARS = 300
#: The first key of the transaction locks that put one person's preference writes in line
#: ("Pref" in ASCII), apart from the replica names' (``replicas.LOCK_CLASS``).
PREFERENCE_LOCK_CLASS = 0x50726566


class ChatRepository(Repository):
    async def get(self, chat_id: int) -> Chat | None:
        async with self._read() as session:
            row = await session.get(ChatRow, chat_id)
            return None if row is None else Chat.model_validate(row)

    async def ensure(self, chat_id: int, chat_type: ChatType) -> Chat:
        """The stored chat, created with the defaults the first time it is seen.

        Telegram turns a group into a supergroup under a new id, so a stored type never
        changes here; it is only recorded.
        """
        existing = await self.get(chat_id)
        if existing is not None:
            return existing
        now = self._now()
        try:
            async with self._write() as session:
                row = await session.get(ChatRow, chat_id)
                if row is None:
                    row = ChatRow(
                        id=chat_id,
                        type=chat_type,
                        instrument=DEFAULT_INSTRUMENT,
                        settings=ChatSettings().model_dump(mode="json"),
                        language=None,
                        created_at=now,
                        updated_at=now,
                    )
                    session.add(row)
                return Chat.model_validate(row)
        except IntegrityError:
            # Another replica created it between our read and our insert (PostgreSQL; on
            # SQLite the write lock serialises the two). Theirs is as good as ours.
            chat = await self.get(chat_id)
            if chat is None:
                raise
            return chat

    async def migrate(self, old_id: int, new_id: int) -> bool:
        """A group Telegram upgraded to a supergroup, which has a new id: the group's
        instrument, settings and language, its conversation, plans, outbox and work in
        flight, and what its anonymous admins had remembered (their preferences, under
        the group's id), move to ``new_id``, in one transaction. True if anything moved.

        Telegram says so twice (a service message in each chat), and a send to the old id
        is refused with the new one (``ChatMigrated``), so it may be called several times:
        only rows still under the old id move, and the new chat takes the group's settings
        only while it has none of its own (stored with the defaults, never changed). The
        old chat's row stays (empty), naming the new one (``moves_of``): work still under
        way for it stores its reply there, and that reply moves when Telegram refuses it.
        Example: plan #2 waiting in group -555 when it becomes -100777: Run pressed in
        -100777 runs it there, and its answer goes there.
        """
        if old_id == new_id:
            return False
        async with self._write() as session:
            old = await session.get(ChatRow, old_id, with_for_update=True)
            if old is None:
                return False
            old.moved_to = new_id
            now = self._now()
            new = await session.get(ChatRow, new_id, with_for_update=True)
            if new is None:
                new = ChatRow(id=new_id, type="supergroup", settings={}, created_at=now)
                session.add(new)
            if new.updated_at is None or new.updated_at == new.created_at:
                # Stored now, or on first sight with the defaults (a press there came
                # first): the group's choices are its own, and so is its age, which tells
                # a later call that they were taken.
                new.instrument, new.settings = old.instrument, old.settings
                new.language, new.created_at, new.updated_at = old.language, old.created_at, now
            await session.flush()
            moved = 0
            for table in (MessageRow, OutboxRow):
                result = await session.execute(
                    update(table).where(table.chat_id == old_id).values(chat_id=new_id),
                    execution_options={"synchronize_session": False},
                )
                moved += rowcount(result)
            # What the group's anonymous admins asked is the group's (its id as the asker,
            # ``update_context.asker_of``): the supergroup's, as its admins now write as it.
            await session.execute(
                update(MessageRow)
                .where(MessageRow.chat_id == new_id, MessageRow.user_id == old_id)
                .values(user_id=new_id),
                execution_options={"synchronize_session": False},
            )
            # What they had Barb remember (``tools._remember``, as the group): the
            # supergroup's prompts read it under its id. Of a single-valued kind it may hold
            # one already (a later call: work begun in the group stored one meanwhile): the
            # one stated last stays, as ``PreferenceRepository.add`` would keep it.
            result = await session.execute(
                update(PreferenceRow).where(PreferenceRow.user_id == old_id).values(user_id=new_id),
                execution_options={"synchronize_session": False},
            )
            moved += rowcount(result)
            for kind in sorted(SINGLE_VALUED_PREFERENCES):
                of_kind = (PreferenceRow.user_id == new_id, PreferenceRow.kind == kind)
                last = select(func.max(PreferenceRow.id)).where(*of_kind).scalar_subquery()
                await session.execute(
                    delete(PreferenceRow).where(*of_kind, PreferenceRow.id != last),
                    execution_options={"synchronize_session": False},
                )
            # Plans and questions in flight name their asker's chat (where they are
            # answered) in their payload too.
            for table in (PendingActionRow, InFlightRow):
                rows = await session.scalars(select(table).where(table.chat_id == old_id))
                for row in rows:
                    row.chat_id = new_id
                    if row.user_id == old_id:
                        row.user_id = new_id
                    row.payload = _moved(row.payload, old_id, new_id)
                    moved += 1
            return moved > 0

    async def moves_of(self, chat_ids: Collection[int]) -> list[tuple[int, int]]:
        """The moves (``migrate``, by any replica) into or out of these chats: (old id, new
        id) pairs. Example: ``[(-555, -100777)]`` for ``[-100777]``, and for ``[-555]``
        (replies still queued under the group's id), once either replica handled the
        upgrade's service message.

        Reads every move, not the chats: they are few (a group is upgraded once in its
        life; the partial index ``ix_chats_moved_to`` holds only them), while the chats a
        sending pass asks about can be tens of thousands after a long outage, past the
        bound parameters a statement may have (asyncpg: 32767; r47e #2)."""
        if not chat_ids:
            return []
        wanted = set(chat_ids)
        query = select(ChatRow.id, ChatRow.moved_to).where(ChatRow.moved_to.is_not(None))
        async with self._read() as session:
            return [
                (old, new)
                for old, new in await session.execute(query.order_by(ChatRow.id))
                if new is not None and (old in wanted or new in wanted)
            ]

    async def set_instrument(self, chat_id: int, instrument: str) -> Chat:
        return await self._change(chat_id, instrument=instrument)

    async def set_language(self, chat_id: int, language: str | None) -> Chat:
        """Record the language the model detected in the chat (None: not known)."""
        return await self._change(chat_id, language=language)

    async def set_settings(self, chat_id: int, settings: ChatSettings) -> Chat:
        return await self._change(chat_id, settings=settings.model_dump(mode="json"))

    async def update_settings(self, chat_id: int, **changes: Any) -> Chat:
        """Change some settings, validated (an unknown name or a bad value raises
        ``pydantic.ValidationError``), read and written in one transaction so that two
        toggles at once do not undo each other."""
        async with self._write() as session:
            row = await self._locked(session, chat_id)
            current = ChatSettings.from_stored(row.settings)
            updated = ChatSettings.model_validate(current.model_dump() | changes)
            row.settings = updated.model_dump(mode="json")
            row.updated_at = self._now()
            await session.flush()
            return Chat.model_validate(row)

    async def _change(self, chat_id: int, **values: Any) -> Chat:
        async with self._write() as session:
            row = await self._locked(session, chat_id)
            for name, value in values.items():
                setattr(row, name, value)
            row.updated_at = self._now()
            await session.flush()
            return Chat.model_validate(row)

    @staticmethod
    async def _locked(session: AsyncSession, chat_id: int) -> ChatRow:
        # FOR UPDATE on PostgreSQL (SQLite's write lock already covers it).
        row = await session.get(ChatRow, chat_id, with_for_update=True)
        if row is None:
            raise UnknownChat(chat_id)
        return row


def _moved(payload: Any, old_id: int, new_id: int) -> Any:
    """``payload`` with every asker of chat ``old_id`` (``{"chat_id": -555, "chat_type":
    "group", …}``) in chat ``new_id``, a supergroup."""
    if isinstance(payload, list):
        return [_moved(item, old_id, new_id) for item in payload]
    if not isinstance(payload, dict):
        return payload
    moved = {key: _moved(value, old_id, new_id) for key, value in payload.items()}
    if moved.get("chat_id") == old_id:
        moved["chat_id"] = new_id
        if moved.get("chat_type") == "group":
            moved["chat_type"] = "supergroup"
        if moved.get("user_id") == old_id:  # asked by an anonymous admin, as the group
            moved["user_id"] = new_id
    return moved


class PreferenceRepository(Repository):
    """Per person, not per chat: "answer in points" said in a group holds in private too."""

    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], clock: Clock, *, max_per_user: int
    ) -> None:
        super().__init__(sessions, clock)
        self._max_per_user = max_per_user

    async def for_user(self, user_id: int) -> list[Preference]:
        """Oldest first, the order they were stated in."""
        async with self._read() as session:
            rows = await session.scalars(
                select(PreferenceRow)
                .where(PreferenceRow.user_id == user_id)
                .order_by(PreferenceRow.id)
            )
            return [Preference.model_validate(row) for row in rows]

    async def add(self, user_id: int, text: str, *, kind: PreferenceKind = "note") -> Preference:
        """Remember one preference; beyond the limit the oldest are forgotten.

        A kind other than ``note`` replaces the person's earlier preference of that kind
        ("only ETH now" after "only RTH"). What a valid value of each kind is, the caller
        decides (``bot.assistant.tools``); the store refuses an unknown kind, empty text,
        and text over ``MAX_PREFERENCE_CHARS`` (``ValueError``): every preference goes
        into every prompt.
        """
        text = " ".join(text.split())
        if kind not in values_of(PreferenceKind):
            raise ValueError(f"a preference is one of {', '.join(values_of(PreferenceKind))}")
        if not text:
            raise ValueError("a preference needs some text")
        if len(text) > MAX_PREFERENCE_CHARS:
            raise ValueError(f"a preference is at most {MAX_PREFERENCE_CHARS} characters")
        async with self._write() as session:
            await _in_line(session, user_id)
            if kind in SINGLE_VALUED_PREFERENCES:
                await session.execute(
                    delete(PreferenceRow).where(
                        PreferenceRow.user_id == user_id, PreferenceRow.kind == kind
                    ),
                    execution_options={"synchronize_session": False},
                )
            row = PreferenceRow(user_id=user_id, kind=kind, text=text, created_at=self._now())
            session.add(row)
            await session.flush()
            count = await session.scalar(
                select(func.count()).where(PreferenceRow.user_id == user_id)
            )
            excess = (count or 0) - self._max_per_user
            if excess > 0:
                oldest = await session.scalars(
                    select(PreferenceRow.id)
                    .where(PreferenceRow.user_id == user_id)
                    .order_by(PreferenceRow.id)
                    .limit(excess)
                )
                await session.execute(
                    delete(PreferenceRow).where(PreferenceRow.id.in_(list(oldest))),
                    execution_options={"synchronize_session": False},
                )
            return Preference.model_validate(row)

    async def remove(self, user_id: int, preference_id: int) -> bool:
        """Forget one preference of this person (someone else's id is not found)."""
        async with self._write() as session:
            result = await session.execute(
                delete(PreferenceRow).where(
                    PreferenceRow.id == preference_id, PreferenceRow.user_id == user_id
                ),
                execution_options={"synchronize_session": False},
            )
            return rowcount(result) == 1

    async def clear(self, user_id: int) -> int:
        async with self._write() as session:
            result = await session.execute(
                delete(PreferenceRow).where(PreferenceRow.user_id == user_id),
                execution_options={"synchronize_session": False},
            )
            return rowcount(result)


async def _in_line(session: AsyncSession, user_id: int) -> None:
    """Wait for the person's other preference writes to commit (PostgreSQL: a transaction
    lock per person; SQLite's write lock already does it). Without it two replicas storing
    "only RTH" and "only ETH" at once each deleted the earlier one of that kind they could
    see, neither the other's, and both stayed; the limit of ``max_per_user`` was passed the
    same way."""
    await in_line(session, PREFERENCE_LOCK_CLASS, user_id)
