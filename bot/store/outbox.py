"""Replies stored before they are sent.

The assistant enqueues a reply, the sender sends it and marks it sent. If the process dies
in between, the reply is still queued at start-up and is sent then: an answer that cost a
query and a model call is not lost to a restart. (It may be sent twice if the process died
after Telegram accepted it but before ``mark_sent``; a duplicate beats a lost answer.)

Several replicas share the outbox through leases: a replica sends only rows it holds a
lease on (its own replies, queued with one, or rows it claimed), and a row whose lease has
expired (its replica died) is claimed by another. ``claim`` locks the chats it takes with
``FOR NO KEY UPDATE SKIP LOCKED`` on PostgreSQL, so two replicas claiming at once take
different chats; SQLite's single writer already serialises them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import case, delete, exists, literal, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import aliased

from bot.store.in_flight import refuse_stopped
from bot.store.records import NewReply, OutgoingReply, ReplyKind, RunOutcome
from bot.store.replicas import ReplicaNames
from bot.store.schema import ChatRow, InFlightRow, OutboxRow
from bot.store.transactions import Clock, Repository, rowcount
from bot.store.updates import mark_handled

_NO_SYNC = {"synchronize_session": False}
MAX_ERROR_CHARS = 500
#: How far before a split question's later part its first part may be, in message ids
#: (a group's other messages between them), and how many replies to look through there.
_PARTS_SPAN = 1000
_PARTS_ROWS = 200


class OutboxRepository(Repository):
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        clock: Clock,
        *,
        owner: str,
        lease: timedelta,
        replicas: ReplicaNames | None = None,
    ) -> None:
        super().__init__(sessions, clock)
        #: This replica's name on the rows it sends, and how long it holds them.
        self.owner = owner
        self.lease = lease
        #: Which replicas are gone: their rows are claimable before their leases expire.
        self.replicas = replicas

    async def enqueue(
        self,
        chat_id: int,
        kind: ReplyKind,
        payload: Mapping[str, Any],
        *,
        content: bytes | None = None,
        question_id: str | None = None,
    ) -> OutgoingReply:
        """Queue one message: ``payload`` holds text and parse mode, or caption and file
        name; ``content`` the bytes of a photo or document."""
        reply = NewReply(kind=kind, payload=dict(payload), content=content)
        [queued] = await self.enqueue_many(chat_id, [reply], question_id=question_id)
        return queued

    async def enqueue_many(
        self,
        chat_id: int,
        replies: Sequence[NewReply],
        *,
        question_id: str | None = None,
        answers: int | Sequence[int] | None = None,
        outcome: RunOutcome | None = None,
        update_id: int | None = None,
    ) -> list[OutgoingReply]:
        """Queue the messages of one reply, in order, in one transaction: a crash while the
        first is being sent still leaves the others to send.

        ``answers``: the work in flight this reply answers, in the same transaction, so that
        a restart neither loses the reply nor works it out twice: a question, a cancel or a
        /query is finished, a run marked answered (its plan message is edited next) with its
        ``outcome``, which that edit shows even when it waits for a restart.
        ``update_id``: the Telegram update this reply answers is handled from here on.
        Several works: the questions a /cancel stopped, which its confirmation ends. One
        work that another replica's /cancel or /reset stopped: ``WorkStopped``, nothing
        stored.
        """
        now = self._now()
        async with self._write_for_chat(chat_id) as session:
            if isinstance(answers, int):
                await refuse_stopped(session, answers)
            await mark_handled(session, update_id, now)
            if answers is not None:
                work = InFlightRow.id.in_([answers] if isinstance(answers, int) else answers)
                await session.execute(
                    delete(InFlightRow).where(work, InFlightRow.kind != "run"),
                    execution_options=_NO_SYNC,
                )
                await session.execute(
                    update(InFlightRow).where(work).values(answered_at=now, outcome=outcome),
                    execution_options=_NO_SYNC,
                )
            if not replies:
                return []
            rows = [
                OutboxRow(
                    chat_id=chat_id,
                    question_id=question_id,
                    answers_work=answers if isinstance(answers, int) else None,
                    kind=reply.kind,
                    payload=reply.payload,
                    content=reply.content,
                    status="held" if reply.held else "queued",
                    telegram_message_id=None,
                    error=None,
                    created_at=now,
                    sent_at=None,
                    # The caller sends them next: no other replica may meanwhile.
                    lease_owner=None if reply.held else self.owner,
                    lease_expires_at=None if reply.held else now + self.lease,
                )
                for reply in replies
            ]
            session.add_all(rows)
            await session.flush()
            return [OutgoingReply.model_validate(row) for row in rows]

    async def unsent(
        self, chat_id: int | None = None, *, older_than: timedelta | None = None
    ) -> list[OutgoingReply]:
        """Queued replies in the order they were queued; all chats if ``chat_id`` is None,
        only those queued more than ``older_than`` ago if given (not the ones being sent)."""
        query = select(OutboxRow).where(OutboxRow.status == "queued")
        if chat_id is not None:
            query = query.where(OutboxRow.chat_id == chat_id)
        if older_than is not None:
            query = query.where(OutboxRow.created_at < self._now() - older_than)
        async with self._read() as session:
            rows = await session.scalars(query.order_by(OutboxRow.id))
            return [OutgoingReply.model_validate(row) for row in rows]

    async def claim(
        self, chat_id: int | None = None, *, older_than: timedelta | None = None
    ) -> list[OutgoingReply]:
        """Take the queued replies this replica may send now, in order, and hold them for
        ``lease``: those of no replica, its own (queued by this replica, or by its previous
        life under the same name) and those of a replica that is gone: its lease expired,
        or its name has been free a work lease (``ReplicaNames.gone``: killed, its rows
        taken then instead of after the outbox's longer lease; a name free at one read only
        may be a live replica's dropped lock).

        A reply behind one that another live replica holds waits, so that a chat's messages
        keep their order. ``chat_id`` and ``older_than`` narrow it as in ``unsent``. Call it
        under the chat's lock: this replica's own replies are claimable.
        """
        now = self._now()
        gone = await self._gone(chat_id, now)
        earlier = aliased(OutboxRow)
        held_elsewhere = exists().where(
            earlier.chat_id == OutboxRow.chat_id,
            earlier.id < OutboxRow.id,
            earlier.status == "queued",
            earlier.lease_owner != self.owner,
            earlier.lease_owner.not_in(gone),
            earlier.lease_expires_at > now,
        )
        due = [
            OutboxRow.status == "queued",
            or_(
                OutboxRow.lease_owner.is_(None),
                OutboxRow.lease_owner == self.owner,
                OutboxRow.lease_owner.in_(gone),
                OutboxRow.lease_expires_at <= now,
            ),
            ~held_elsewhere,
        ]
        if chat_id is not None:
            due.append(OutboxRow.chat_id == chat_id)
        if older_than is not None:
            due.append(OutboxRow.created_at < now - older_than)
        async with self._write() as session:
            # The chats first, SKIP LOCKED: a chat another replica is claiming right now is
            # theirs this time, so two replicas never split one chat's replies (and send
            # them out of order). NO KEY UPDATE: replies being queued meanwhile (their
            # foreign key's KEY SHARE lock) need not wait.
            chats = list(
                await session.scalars(
                    select(ChatRow.id)
                    .where(ChatRow.id.in_(select(OutboxRow.chat_id).where(*due)))
                    .order_by(ChatRow.id)
                    .with_for_update(skip_locked=True, key_share=True)
                )
            )
            if not chats:
                return []
            rows = list(
                await session.scalars(
                    select(OutboxRow)
                    .where(*due, OutboxRow.chat_id.in_(chats))
                    .order_by(OutboxRow.id)
                    .with_for_update()
                )
            )
            if not rows:
                return []
            expires = now + self.lease
            await session.execute(
                update(OutboxRow)
                .where(OutboxRow.id.in_([row.id for row in rows]))
                .values(lease_owner=self.owner, lease_expires_at=expires),
                execution_options=_NO_SYNC,
            )
            return [
                OutgoingReply.model_validate(row).model_copy(
                    update={"lease_owner": self.owner, "lease_expires_at": expires}
                )
                for row in rows
            ]

    async def answered_after(self, chat_id: int, work_id: int) -> bool:
        """Whether a question of the chat asked after work ``work_id`` was answered (its
        reply stored, sent or not): the chat has moved on from that work. Work ids follow
        the order things were asked in; the answer to an earlier question, stored while
        this one waited its turn, does not count, nor does a reply stored before replies
        kept the work they answer (``answers_work``).

        Example: questions 7 and 8 asked a second apart, 7's plan stored while 8 waited
        for the model: ``answered_after(chat, 8)`` is False, ``answered_after(chat, 7)``
        becomes True once 8's answer is stored."""
        query = select(OutboxRow.id).where(
            OutboxRow.chat_id == chat_id,
            OutboxRow.question_id.is_not(None),
            OutboxRow.answers_work > work_id,
        )
        async with self._read() as session:
            return await session.scalar(query.limit(1)) is not None

    async def queued_elsewhere(self, chat_id: int, before: int) -> bool:
        """Whether the chat has replies queued before reply ``before`` that another replica
        holds (its lease not expired): a reply queued now must not overtake them."""
        query = select(OutboxRow.id).where(
            OutboxRow.chat_id == chat_id,
            OutboxRow.id < before,
            OutboxRow.status == "queued",
            OutboxRow.lease_owner != self.owner,
            OutboxRow.lease_expires_at > self._now(),
        )
        async with self._read() as session:
            return await session.scalar(query.limit(1)) is not None

    async def _gone(self, chat_id: int | None, now: datetime) -> list[str]:
        """The replicas holding queued replies (of ``chat_id``, or any) that are gone
        before their leases expire; none unless this replica holds its name."""
        if self.replicas is None or not self.replicas.held:
            return []
        query = select(OutboxRow.lease_owner).where(
            OutboxRow.status == "queued",
            OutboxRow.lease_owner != self.owner,
            OutboxRow.lease_expires_at > now,
        )
        if chat_id is not None:
            query = query.where(OutboxRow.chat_id == chat_id)
        async with self._read() as session:
            holders = {owner for owner in await session.scalars(query.distinct()) if owner}
        return sorted(await self.replicas.gone(holders))

    async def hold_to_send(self, reply: OutgoingReply) -> bool:
        """Whether this replica may send ``reply`` now: the row is still queued, as read
        (not turned into a refused chart's stand-in), and held by this replica, whose lease
        on it and on the chat's other queued replies it holds is renewed to ``lease`` from
        now (which outlasts one message's send, retries and flood waits included:
        ``Patience.longest_send``). A reply of four messages, or a pass over a chat, can
        take longer than one lease on a slow Bot API, and the messages still to send must
        not meanwhile become another replica's to send again.

        False when another replica has claimed it (this one's lease had expired): it is
        theirs to send now; and when it was sent, refused or stood in since it was read: a
        copy claimed by the sending pass while an answer had it on the wire is not sent
        again once the answer has sent it (r47e #1). Always one statement, never the copy's
        own lease: the copy cannot tell what another task did with its row. Example: a
        reply queued at 12:00:00 with a 360 s lease whose first message took 300 s holds
        its second until 12:11:00.
        """
        expires = self._now() + self.lease
        async with self._write() as session:
            renewed = await session.execute(
                update(OutboxRow)
                .where(
                    OutboxRow.chat_id == reply.chat_id,
                    OutboxRow.status == "queued",
                    OutboxRow.lease_owner == self.owner,
                )
                .values(lease_expires_at=expires)
                .returning(OutboxRow.id, OutboxRow.kind),
                execution_options=_NO_SYNC,
            )
            # A refused chart's stand-in is its row, queued again as text (``stand_in``).
            return (reply.id, reply.kind) in {(id_, kind) for id_, kind in renewed}

    async def oldest_unsent_age(self) -> timedelta | None:
        """How long the oldest queued reply has waited (what to watch: it grows when no
        replica can send); None when nothing is queued."""
        async with self._read() as session:
            oldest = await session.scalar(
                select(OutboxRow.created_at)
                .where(OutboxRow.status == "queued")
                .order_by(OutboxRow.id)
                .limit(1)
            )
        return None if oldest is None else self._now() - oldest

    async def mark_sent(self, sent: Mapping[int, int | None]) -> int:
        """Telegram accepted these replies (reply id → Telegram message id), in one statement;
        the number marked (a reply already marked is left as it was). The files' bytes are
        dropped: they are in the chat now."""
        if not sent:
            return 0
        message_ids = case(
            {reply_id: literal(message_id) for reply_id, message_id in sent.items()},
            value=OutboxRow.id,
        )
        async with self._write() as session:
            result = await session.execute(
                update(OutboxRow)
                .where(OutboxRow.id.in_(list(sent)), OutboxRow.status == "queued")
                .values(
                    status="sent",
                    telegram_message_id=message_ids,
                    content=None,
                    sent_at=self._now(),
                    lease_owner=None,
                    lease_expires_at=None,
                ),
                execution_options=_NO_SYNC,
            )
            return rowcount(result)

    async def mark_failed(self, reply_id: int, error: str) -> bool:
        """Telegram refused it for good (blocked by the person, chat gone): stop trying."""
        async with self._write() as session:
            result = await session.execute(
                update(OutboxRow)
                .where(OutboxRow.id == reply_id, OutboxRow.status == "queued")
                .values(
                    status="failed",
                    error=error[:MAX_ERROR_CHARS],
                    lease_owner=None,
                    lease_expires_at=None,
                ),
                execution_options=_NO_SYNC,
            )
            return rowcount(result) == 1

    async def stand_in(self, refused: OutgoingReply, reply: NewReply) -> OutgoingReply | None:
        """``reply`` takes the place of ``refused``, a message Telegram refused for good
        (``mark_failed``): the same row, queued again and held by this replica, so that it
        goes out where the refused one would have, before the messages queued after it,
        however long Telegram holds it back. Example: a refused chart's caption, held back
        by flood control, still comes before the next chart. None if the row is not a
        failed one (sent or taken meanwhile)."""
        async with self._write() as session:
            row = await session.get(OutboxRow, refused.id, with_for_update=True)
            if row is None or row.status != "failed":
                return None
            row.kind = reply.kind
            row.payload = dict(reply.payload)
            row.content = reply.content
            row.status = "queued"
            row.lease_owner = self.owner
            row.lease_expires_at = self._now() + self.lease
            await session.flush()
            return OutgoingReply.model_validate(row)

    async def held(
        self, chat_id: int, question_id: str, *, released: bool = False
    ) -> list[OutgoingReply]:
        """The messages of an answer kept until asked for, in order; with ``released``, also
        its messages queued and not sent yet (among them a file already asked for)."""
        statuses = ("held", "queued") if released else ("held",)
        query = select(OutboxRow).where(
            OutboxRow.chat_id == chat_id,
            OutboxRow.question_id == question_id,
            OutboxRow.status.in_(statuses),
        )
        async with self._read() as session:
            rows = await session.scalars(query.order_by(OutboxRow.id))
            return [OutgoingReply.model_validate(row) for row in rows]

    async def question_of(self, chat_id: int, message_id: int) -> str | None:
        """The question Telegram message ``message_id`` of the chat belongs to: one of
        Barb's replies to it (an answer, its chart, its plan), else the person's message
        that asked it, which those replies name (``asked``; in a group they also quote it,
        ``reply_to``, all that replies stored before ``asked`` existed carry). None for a message
        neither, or whose rows are pruned. A person's reply to it follows that question:
        Alice's "@Barb and ES?" under Bob's question "CL range by weekday" was read with her
        own last data, not his; in a private chat, a reply to one's own earlier question
        followed the last answer instead."""
        sent = (
            select(OutboxRow.question_id)
            .where(
                OutboxRow.status == "sent",
                OutboxRow.chat_id == chat_id,
                OutboxRow.question_id.is_not(None),
            )
            .limit(1)
        )
        asked_by = or_(
            OutboxRow.payload["asked"].as_integer() == message_id,
            OutboxRow.payload["reply_to"].as_integer() == message_id,
        )
        async with self._read() as session:
            own = await session.scalar(sent.where(OutboxRow.telegram_message_id == message_id))
            if own is not None:
                return own
            # The latest question that message asked: a resumed or re-asked one answers last.
            asked = sent.where(asked_by).order_by(OutboxRow.id.desc())
            found = await session.scalar(asked)
            if found is not None:
                return found
            # A later part of a question the app split: its first part came just before it
            # (the parts arrive within seconds), and names the others (``asked_parts``).
            # Looked for among the replies to messages shortly before it, as JSON lists are
            # searched differently by each database.
            first = OutboxRow.payload["asked"].as_integer()
            split = (
                select(OutboxRow.question_id, OutboxRow.payload)
                .where(
                    OutboxRow.status == "sent",
                    OutboxRow.chat_id == chat_id,
                    OutboxRow.question_id.is_not(None),
                    first < message_id,
                    first >= message_id - _PARTS_SPAN,
                )
                .order_by(OutboxRow.id.desc())
                .limit(_PARTS_ROWS)
            )
            for question_id, payload in await session.execute(split):
                if message_id in payload.get("asked_parts", ()):
                    return question_id
            return None

    async def actions_of(self, chat_id: int, question_id: str) -> list[str]:
        """The pending actions (plans, clarifications) the question's sent messages carry,
        newest first: found from the question however long ago it was asked. A reply to a
        plan older than the chat's last fifty actions read the last data instead."""
        query = (
            select(OutboxRow.payload)
            .where(
                OutboxRow.status == "sent",
                OutboxRow.chat_id == chat_id,
                OutboxRow.question_id == question_id,
            )
            .order_by(OutboxRow.id.desc())
        )
        async with self._read() as session:
            payloads = await session.scalars(query)
            found = [p.get("pending_id") for p in payloads]
        return list(dict.fromkeys(p for p in found if isinstance(p, str)))

    async def release(self, reply_id: int) -> bool:
        """A held message asked for is queued to be sent, by this replica; False if it was
        already (a double press), so that it is sent once."""
        async with self._write() as session:
            result = await session.execute(
                update(OutboxRow)
                .where(OutboxRow.id == reply_id, OutboxRow.status == "held")
                .values(
                    status="queued",
                    lease_owner=self.owner,
                    lease_expires_at=self._now() + self.lease,
                ),
                execution_options=_NO_SYNC,
            )
            return rowcount(result) == 1

    async def refusal(self, reply_id: int) -> str | None:
        """Why Telegram refused the reply for good (``mark_failed``); None if it did not:
        sent, still queued, or gone."""
        query = select(OutboxRow.error).where(
            OutboxRow.id == reply_id, OutboxRow.status == "failed"
        )
        async with self._read() as session:
            return await session.scalar(query)

    async def prune(self, older_than: timedelta) -> int:
        """Delete sent, failed and never-asked-for replies queued more than ``older_than``
        ago."""
        cutoff = self._now() - older_than
        async with self._write() as session:
            result = await session.execute(
                delete(OutboxRow).where(
                    OutboxRow.status.in_(("sent", "failed", "held")),
                    OutboxRow.created_at < cutoff,
                ),
                execution_options=_NO_SYNC,
            )
            return rowcount(result)
