"""Sending a reply: proof (photo + CSV), commentary, plan with buttons. Stored before sent.

Every message goes through the outbox: the messages of a reply are stored together, then
each is sent and marked sent. Telegram's answers decide what happens to one that fails:

- flood control (``RetryAfter``) and network trouble are waited out and retried a few
  times; if Telegram is still unreachable the message stays queued, and ``flush`` sends it
  later (at start-up and every minute while the bot runs), so an answer that cost a query
  and a model call is not lost;
- a refusal (the person blocked the bot, the chat is gone, a bad request) will not change
  by retrying: the message is marked failed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from telegram import Bot, InlineKeyboardMarkup, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated, NetworkError, RetryAfter

from barb.i18n import N_, decimal
from barb.timeframes import TIMEFRAMES, timeframe_short
from bot.assistant.replies import Proof, Reply
from bot.store import NewReply, OutgoingReply
from bot.store.repository import Store
from bot.telegram import keyboards
from bot.telegram.chat_moves import ChatMoves
from bot.telegram.handling import update_in_hand
from bot.telegram.render import (
    answer_caption,
    answer_html,
    caption,
    escape,
    headed_answer_html,
    plan_html,
    titled_caption,
)
from bot.texts import t

log = logging.getLogger(__name__)


class NotDelivered(Exception):
    """Telegram could not be reached in time: the message is still queued."""


class Refused(Exception):
    """Telegram refused a stored message for good: it is marked failed."""


class ChartRefused(Exception):
    """Telegram refused a chart for good, and its caption went as a message in its place,
    saying the chart is missing (``Sender._caption_without_chart``): the person has the
    answer and knows what is not there, so this is no failure to report to them. (When
    that message is held back, ``NotDelivered`` is raised instead: the chat waits for it.)"""


class _NotRecorded(Exception):
    """Telegram took a message, and writing it down as sent failed (the database's error is
    the cause): raised as it came, never taken for Telegram refusing the message."""


@dataclass(frozen=True)
class Released:
    """A kept file asked for (``Sender.release_held``): on its way to the chat."""

    file: OutgoingReply
    #: This press queued it; False when an earlier press had and it is not sent yet.
    by_this_press: bool


@dataclass(frozen=True)
class Patience:
    """How long one message is retried before it is left queued for a later flush."""

    attempts: int = 4
    backoff_s: tuple[float, ...] = (1.0, 2.0, 4.0)
    #: A RetryAfter longer than this leaves the message queued instead of holding the chat.
    max_wait_s: float = 30.0
    #: How long a send waits for Telegram's answer before it counts as failed and is sent
    #: again. Telegram may still be taking the first (a chart's upload can take seconds
    #: under load), so a resend can be a duplicate: python-telegram-bot's 5 s read
    #: timeout sent a chart Telegram answered after 6 s twice.
    answer_s: float = 30.0
    #: What else an attempt may wait on besides the answer: a connection from the pool, the
    #: connection itself and a file's upload (python-telegram-bot's 1, 5 and 20 s).
    wire_s: float = 26.0

    @property
    def longest_send(self) -> timedelta:
        """How long one message can take before it is left queued: every attempt waiting
        out its timeouts, and the longest flood wait or backoff between each two; 314 s by
        default (4 × 56 s + 3 × 30 s). A replica holds a message at least this long before
        it sends it (``OutboxRepository.hold_to_send`` renews the lease)."""
        waits = max((self.max_wait_s, *self.backoff_s))
        return timedelta(
            seconds=self.attempts * (self.answer_s + self.wire_s) + (self.attempts - 1) * waits
        )


def text_reply(
    html_text: str,
    *,
    markup: InlineKeyboardMarkup | None = None,
    reply_to: int | None = None,
    pending_id: str | None = None,
    thread_id: int | None = None,
) -> NewReply:
    """A text message; the buttons are stored with it so that a later flush sends them too."""
    payload: dict[str, Any] = {"text": html_text, "parse_mode": ParseMode.HTML.value}
    if markup is not None:
        payload["reply_markup"] = markup.to_dict()
    if reply_to is not None:
        payload["reply_to"] = reply_to
    if pending_id is not None:
        payload["pending_id"] = pending_id
    if thread_id is not None:
        payload["thread_id"] = thread_id
    return NewReply(kind="text", payload=payload)


def file_reply(
    kind: str,
    content: bytes,
    filename: str,
    caption_html: str | None,
    *,
    markup: InlineKeyboardMarkup | None = None,
    held: bool = False,
    **extra: Any,
) -> NewReply:
    payload: dict[str, Any] = {"filename": filename, "caption": caption_html, **extra}
    if markup is not None:
        payload["reply_markup"] = markup.to_dict()
    return NewReply(kind=kind, payload=payload, content=content, held=held)  # type: ignore[arg-type]


def has_chart(proof: Proof) -> bool:
    return bool(proof.chart_png and proof.chart_name)


def has_csv(proof: Proof) -> bool:
    """Whether the answer has a CSV to give: none for no rows (a header alone, which came
    unasked and with no caption)."""
    return bool(proof.csv and proof.csv_name and proof.csv_rows > 0)


def chart_reply(
    proof: Proof,
    index: int,
    *,
    question_id: str | None,
    lang: str,
    commentary: str | None = None,
    query_button: bool = False,
) -> NewReply:
    """The chart as a photo, captioned with ``commentary`` (the headline and the model's
    commentary) when given, else the headline and the plan, with its CSV behind a button
    (kept with it, ``csv_reply``) when there is a question to hang it on: one message, one
    request."""
    assert proof.chart_png is not None and proof.chart_name is not None
    markup = None
    if question_id is not None:
        csv = [held_csv(proof, index)] if has_csv(proof) else []
        if csv or query_button:
            markup = keyboards.answer(question_id, lang, query=query_button, csv=csv)
    # What a message in the chart's place says if Telegram refuses it for good (a picture
    # of dimensions it will not take): in the answer's language, known only here.
    missing = t(N_("chart_refused_csv") if has_csv(proof) else N_("chart_refused"), lang)
    return file_reply(
        "photo",
        proof.chart_png,
        proof.chart_name,
        commentary or titled_caption(headline_of(proof), proof.plan.splitlines()[:4]),
        markup=markup,
        # The caption is the model's commentary: not to be lost with a refused chart.
        commentary=commentary is not None,
        without_chart=missing,
    )


def csv_reply(proof: Proof, index: int, lang: str, *, held: bool) -> NewReply:
    """The CSV as a document, captioned with its rows ("first 50,000 of 1,774,380 rows" when
    cut); ``held``: kept until its button is pressed."""
    assert proof.csv is not None and proof.csv_name is not None
    rows = decimal(proof.csv_rows, lang)
    if proof.csv_cut_from > proof.csv_rows:
        total = decimal(proof.csv_cut_from, lang)
        said = t("csv_caption_cut", lang, plural_of=proof.csv_cut_from, rows=rows, total=total)
    else:
        said = t("csv_caption", lang, plural_of=proof.csv_rows, rows=rows)
    return file_reply(
        "document", proof.csv, proof.csv_name, caption([said]), held=held, proof=index
    )


def held_csv(proof: Proof, index: int, name: str = "") -> keyboards.HeldCsv:
    return keyboards.HeldCsv(index, proof.csv_rows, proof.csv_cut_from, name)


def headline_of(proof: Proof) -> str:
    """The number the chart proves, in the person's language, one line."""
    first_line = proof.summary_text.splitlines()[0] if proof.summary_text else ""
    return proof.headline or first_line


def reply_messages(
    reply: Reply, reply_to: int | None = None, thread_id: int | None = None
) -> list[NewReply]:
    """Every message of a reply, in the order the person should see them; in a group each
    one replies to the question (``reply_to``) in its forum topic (``thread_id``)."""
    messages = _reply_messages(reply)
    for message in messages:
        if reply.asked is not None and reply.question_id is not None:
            message.payload["asked"] = reply.asked
            if reply.asked_parts:
                message.payload["asked_parts"] = reply.asked_parts
        if reply_to is not None:
            message.payload["reply_to"] = reply_to
        if thread_id is not None:
            message.payload["thread_id"] = thread_id
    return messages


def _reply_messages(reply: Reply) -> list[NewReply]:
    """The messages of a reply. An answer costs as few Bot API requests as it can (they count
    against Telegram's flood limit): the last chart's caption is its headline then the
    commentary when both fit in one, with the Query and CSV buttons under it; only a longer
    commentary is a message of its own (the caption is then the headline and the plan).

    An answer with no chart (charts off, nothing to draw) reads as one with a chart: its
    words first, the headline in bold at their top, the CSV behind a button under them.
    Without a question to hang buttons on (``/query``), the CSVs come as documents after
    the words: the numbers first. No rows, no CSV.
    """
    lang = reply.language
    question_id = reply.question_id
    proofs = reply.proofs
    text = _visible_text(reply)
    charted = [i for i, p in enumerate(proofs) if has_chart(p)]
    # Proofs with no chart: their headlines lead the words, their CSVs hang under them.
    bare = [i for i, p in enumerate(proofs) if not has_chart(p)]
    last_chart = charted[-1] if charted else None
    in_caption = (
        answer_caption(headline_of(proofs[last_chart]), text)
        if text and last_chart is not None and not bare
        else None
    )
    messages: list[NewReply] = []

    def kept_as(i: int) -> int:
        """The number proof ``i``'s kept CSV is asked for by: its place in the question."""
        number = proofs[i].number
        return i if number is None else number

    for i in charted:
        captioned = in_caption is not None and i == last_chart
        messages.append(
            chart_reply(
                proofs[i],
                kept_as(i),
                question_id=question_id,
                lang=lang,
                commentary=in_caption if captioned else None,
                # The answer's last word carries the Query button, here the captioned chart.
                query_button=captioned,
            )
        )
    names = told_apart(proofs, lang)
    headlines = _headlines(proofs, bare, names)
    if in_caption is None and (text or headlines):
        chunks = headed_answer_html(headlines, text)
        held = [i for i in bare if has_csv(proofs[i])] if question_id else []
        # One CSV under the words needs no name; several take their answers' names.
        csv_names = [names[i] if len(held) > 1 else "" for i in held]
        markup = None
        if question_id and proofs and (text or held):
            markup = keyboards.answer(
                question_id,
                lang,
                # Once the answer is saved (it has words): before, a plan is on its way.
                query=bool(text),
                csv=[
                    held_csv(proofs[i], kept_as(i), name)
                    for i, name in zip(held, csv_names, strict=True)
                ],
            )
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            messages.append(text_reply(chunk, markup=markup if last else None))
    for i, proof in enumerate(proofs):
        if has_csv(proof):
            messages.append(csv_reply(proof, kept_as(i), lang, held=question_id is not None))
    pending = reply.pending
    if pending is not None:
        if pending.kind == "confirm":
            parts = plan_html(pending.text, t("plan_header", lang), pending.plan or "")
            markup = keyboards.confirm(pending.id, lang)
        else:
            parts = answer_html(pending.text) or [escape(pending.text) or "?"]
            markup = keyboards.options(pending.id, pending.options) if pending.options else None
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            messages.append(
                text_reply(
                    part,
                    markup=markup if last else None,
                    pending_id=pending.id if last else None,
                )
            )
    return messages


def _headlines(proofs: list[Proof], shown: list[int], names: list[str]) -> list[str]:
    """The headlines of ``proofs[i]`` for i in ``shown``, each headed by its name when there
    are several (``told_apart``): "RTH: average range = 317.61 points" above "ETH: average
    range = 393.20 points", which had read alike (p48e); with charts, each chart's header
    names it."""
    lines = []
    for i in shown:
        name, line = names[i], headline_of(proofs[i])
        if line:
            lines.append(f"{name}: {line}" if name else line)
    return lines


def _scope(proof: Proof, lang: str) -> tuple[str, str, str, str]:
    """What a query ran on, as the engine says it: instrument, session, timeframe (in
    ``lang``), and the dates ("2025-01-02–2025-12-31")."""
    meta = proof.metadata
    tf = TIMEFRAMES.get(str(meta.get("timeframe") or proof.query.get("from") or ""))
    start, end = meta.get("period_start"), meta.get("period_end")
    return (
        str(meta.get("instrument") or proof.query.get("instrument") or ""),
        str(meta.get("session") or proof.query.get("session") or ""),
        timeframe_short(tf, lang) if tf is not None else "",
        f"{start or '…'}–{end or '…'}" if start or end else "",
    )


def told_apart(proofs: list[Proof], lang: str) -> list[str]:
    """What tells several answers (their headlines, their CSVs) apart, one name a proof:
    the parts of what each ran on that differ between them, of instrument, session,
    timeframe and dates ("NQ RTH", "NQ ETH", "ES RTH"); their order, as the plan numbers
    its queries ("1", "2"), when those do not tell them apart (a filter differs); nothing
    for one."""
    if len(proofs) < 2:
        return [""] * len(proofs)
    scopes = [_scope(proof, lang) for proof in proofs]
    differ = [k for k in range(4) if len({scope[k] for scope in scopes}) > 1]
    names = [" ".join(scope[k] for k in differ if scope[k]) for scope in scopes]
    if all(names) and len(set(names)) == len(names):
        return names
    return [str(n) for n in range(1, len(proofs) + 1)]


def _visible_text(reply: Reply) -> str:
    """The reply's words; when they would show nothing (blank, an empty code block), "(no
    answer)" beside an answer's charts, whose Query button rides on its words, and with
    nothing else a sentence saying the model's answer was empty (as the assistant says of
    a blank one): the person always reads something. An empty Reply (a press that lost a
    race) stays empty."""
    if reply.text and answer_html(reply.text):
        return reply.text
    if reply.proofs and reply.pending is None:
        return t("no_answer", reply.language)
    if reply.text:
        return t("blank_answer", reply.language)
    return ""


class Sender:
    def __init__(
        self,
        bot: Bot,
        store: Store,
        patience: Patience | None = None,
        moves: ChatMoves | None = None,
        sending: set[int] | None = None,
        answered: Callable[[Sequence[str]], None] | None = None,
    ):
        self.bot = bot
        self.store = store
        self.patience = patience or Patience()
        #: The groups this process knows became supergroups (``BotServices.moves``): what
        #: is queued or sent to one goes to the supergroup, with no refused call first.
        self.moves = moves or ChatMoves()
        #: The outbox messages this process's tasks are sending (``BotServices.sending``,
        #: shared by all its senders): one task at a time sends a message (``deliver``).
        self.sending = sending if sending is not None else set()
        #: Told the jobs whose answers a reply stored (``QueryRunner.answered``).
        self.answered = answered

    async def text(
        self,
        chat_id: int,
        html_text: str,
        *,
        markup: InlineKeyboardMarkup | None = None,
        reply_to: int | None = None,
        thread_id: int | None = None,
        answers: Sequence[int] = (),
        question_id: str | None = None,
    ) -> int:
        """Send one HTML message; its Telegram message id. ``answers``: work in flight it
        ends, in the transaction that stores it (a question /cancel stopped).
        ``question_id``: the question whose answer it shows (its query), which a reply to it
        follows (``OutboxRepository.question_of``)."""
        queued = await self.queue_text(
            chat_id,
            html_text,
            markup=markup,
            reply_to=reply_to,
            thread_id=thread_id,
            answers=answers,
            question_id=question_id,
        )
        await self._after_earlier(queued)
        return await self.deliver(queued)

    async def queue_text(
        self,
        chat_id: int,
        html_text: str,
        *,
        markup: InlineKeyboardMarkup | None = None,
        reply_to: int | None = None,
        thread_id: int | None = None,
        answers: Sequence[int] = (),
        question_id: str | None = None,
    ) -> OutgoingReply:
        """Store one HTML message for ``deliver``, as ``text`` does: for a caller that must
        know which message stays queued when Telegram holds it back (``NotDelivered``)."""
        message = text_reply(html_text, markup=markup, reply_to=reply_to, thread_id=thread_id)
        [queued] = await self.store.outbox.enqueue_many(
            self.moves.current(chat_id),
            [message],
            question_id=question_id,
            answers=answers or None,
            update_id=update_in_hand(),
        )
        return queued

    async def reply(
        self,
        chat_id: int,
        reply: Reply,
        *,
        reply_to: int | None = None,
        thread_id: int | None = None,
        answers: int | None = None,
    ) -> None:
        """Store all of a reply's messages (with the work in flight it ``answers`` and, for a
        run, how its plan ended, in the same transaction: ``OutboxRepository.enqueue_many``),
        then send them in order.

        Each message is marked sent as soon as Telegram has taken it: a crash in the middle
        of a reply resends at most the one message that was on the wire, never a photo
        already delivered.

        A group that became a supergroup on the way (Telegram refused the first message,
        ``ChatMigrated``) gets the rest at the supergroup's id, each once: the chat's lock
        held here is the supergroup's too from then on (``ChatLocks.hold``), so that no
        flush of the supergroup sends them meanwhile.
        """
        queued = await self.store.outbox.enqueue_many(
            self.moves.current(chat_id),
            reply_messages(reply, reply_to, thread_id),
            question_id=reply.question_id,
            answers=answers,
            outcome=reply.plan_outcome,
            update_id=update_in_hand(),
        )
        # Stored for the person: the queue's copies of the answers are no longer needed.
        jobs = [proof.job for proof in reply.proofs if proof.job is not None]
        if jobs and self.answered is not None:
            self.answered(jobs)
        refused: Exception | None = None
        if queued:
            await self._after_earlier(queued[0])
        for message in queued:
            if message.status == "held":  # sent when asked for
                continue
            try:
                await self.deliver(message)
            except NotDelivered:
                raise  # the rest waits its turn, in order
            except ChartRefused as exc:  # its words and buttons went, saying so
                log.warning("chart %s to chat %s refused: %s", message.id, chat_id, exc)
            except Exception as exc:  # this one is refused; the others may still go
                refused = refused or exc
        if refused is not None:
            raise refused

    async def _after_earlier(self, first: OutgoingReply) -> None:
        """A reply just queued goes after what its chat had queued before it by another
        replica: that replica's messages are sent first when it is gone (``claim`` takes
        them from a replica whose name has been free a work lease, or whose lease expired);
        behind a live one's, the reply stays queued (``NotDelivered``) and the sending pass
        sends it once they are out. Example: a replica killed with a chart on the wire; the
        chat's next question, answered by another replica, gets its plan after that chart,
        not before it. Call it under the chat's lock, as ``flush``."""
        chat_id = first.chat_id
        if not await self.store.outbox.queued_elsewhere(chat_id, first.id):
            return
        for message in await self.store.outbox.claim(chat_id):
            if message.id >= first.id:
                break
            try:
                await self.deliver(message)
            except NotDelivered:
                raise
            except Exception:  # refused for good: marked failed, the next one may go
                log.warning("queued reply %s to chat %s refused", message.id, chat_id)
        if await self.store.outbox.queued_elsewhere(chat_id, first.id):
            raise NotDelivered(f"reply {first.id} to chat {chat_id} waits behind another's")

    async def _caption_without_chart(self, refused: OutgoingReply) -> bool:
        """A chart Telegram refused for good takes its caption (the model's commentary, or
        the headline and the plan) and its buttons (the CSV's, the Query's) with it: they
        come as a message of their own, with one sentence saying the chart is missing and
        where its numbers are. Example: "…Answer: Mon 134.58 points…\n\nTelegram refused
        the chart, so it is not shown here; its numbers are in the CSV." with the CSV button.
        True once that message is sent.

        It takes the chart's place in the outbox (``OutboxRepository.stand_in``), so it keeps
        the chart's place in the chat: when Telegram holds it back it stays queued and
        ``NotDelivered`` is raised, and the chat's later messages wait behind it as behind
        any message still queued (p43e #5: they went on, and the caption came after them).

        A chart stored before the sentence was (no ``without_chart``) brings back only a
        commentary, without it, and its refusal is reported as any other (p40b F8)."""
        payload = refused.payload
        missing = payload.get("without_chart")
        if refused.kind != "photo" or not (missing or payload.get("commentary")):
            return False
        markup = payload.get("reply_markup")
        body = (
            payload["caption"] if missing is None else f"{payload['caption']}\n\n{escape(missing)}"
        )
        text = text_reply(
            body,
            markup=InlineKeyboardMarkup.de_json(markup, self.bot) if markup else None,
            reply_to=payload.get("reply_to"),
            thread_id=payload.get("thread_id"),
        )
        queued = await self.store.outbox.stand_in(refused, text)
        if queued is None:
            return False
        try:
            await self.deliver(queued)
        except NotDelivered:
            log.info("caption of a refused chart to chat %s waits", refused.chat_id)
            raise
        return missing is not None

    async def release_held(self, chat_id: int, question_id: str, proof: int) -> Released | None:
        """Queue the file of an answer kept until asked for (its CSV), to be sent with
        ``send_released``; the file if it is on its way: released now, or at an earlier press
        and not sent yet (Telegram holding it back); None if there is none (sent already, or
        no longer kept)."""
        for kept in await self.store.outbox.held(chat_id, question_id, released=True):
            if kept.payload.get("proof") == proof:
                # False if another press released it just now: on its way all the same.
                now = kept.status == "held" and await self.store.outbox.release(kept.id)
                return Released(kept, by_this_press=now)
        return None

    async def send_released(self, released: Released) -> None:
        """Send a file ``release_held`` queued as the sending pass sends: ``flush`` of its
        chat, which claims it with a lease after what the chat has queued before it, so that
        whichever of the press and the pass comes first sends it, once, and a file Telegram
        holds back past this sender's patience stays queued for the next pass. Call it under
        the chat's lock, as the pass flushes.

        Raises ``Refused`` if Telegram refused the file for good and this press is the one to
        say so: the press that released it, or the one whose own attempt was refused (the
        first press left it queued, held back by Telegram). The pass only logs a refusal, and
        a second press on the same file is not told again: one sentence per file."""
        file = released.file
        refused: set[int] = set()
        await self.flush(file.chat_id, refused=refused)
        if not (released.by_this_press or file.id in refused):
            return
        refusal = await self.store.outbox.refusal(file.id)
        if refusal is not None:
            raise Refused(f"file {file.id} to chat {file.chat_id}: {refusal}")

    async def flush(
        self,
        chat_id: int | None = None,
        older_than: timedelta | None = None,
        *,
        refused: set[int] | None = None,
    ) -> int:
        """Send what is still queued (of one chat, or all) and this replica may send (see
        ``OutboxRepository.claim``); the number of messages sent. The ids of the messages
        Telegram refused for good on the way are added to ``refused``, if given.

        A chat whose next message cannot be delivered is left for the next flush, so its
        messages never arrive out of order.
        """
        sent = 0
        stuck: set[int] = set()
        for message in await self.store.outbox.claim(chat_id, older_than=older_than):
            if message.chat_id in stuck:
                continue
            try:
                await self.deliver(message)
                sent += 1
            except NotDelivered:
                stuck.add(message.chat_id)
            except Exception:  # refused for good: already marked failed, the next one may go
                log.warning("queued reply %s to chat %s refused", message.id, message.chat_id)
                if refused is not None:
                    refused.add(message.id)
        return sent

    async def deliver(self, queued: OutgoingReply) -> int:
        """Send a stored message and mark it sent; its Telegram message id. Raises
        ``NotDelivered`` without sending it when another replica has claimed it meanwhile
        (this one's lease expired during the messages before it): theirs to send; and when
        another task of this process is sending it (``sending``).

        Leases keep two replicas from sending one message, not two tasks of one replica:
        both hold its lease. Example (r47a): a group's answer going out under the group's
        lock, its chat moved to the supergroup by another replica; this replica's sending
        pass over the supergroup, which does not know the move, claims the answer's chart
        and words. It finds the chart in the answer's hands and leaves the chat for later,
        instead of sending chart and words a second time.
        """
        moved_to = self.moves.current(queued.chat_id)
        if moved_to != queued.chat_id:  # moved there since it was read (``_send``)
            queued = queued.model_copy(update={"chat_id": moved_to})
        if queued.id in self.sending:
            raise NotDelivered(f"reply {queued.id} to chat {queued.chat_id}: being sent here")
        # Taken before the first await, given back once it is marked sent or left queued.
        self.sending.add(queued.id)
        try:
            if not await self.store.outbox.hold_to_send(queued):
                raise NotDelivered(f"reply {queued.id} to chat {queued.chat_id}: another replica's")
            try:
                message = await self._send(queued)  # recorded sent by ``_uncut``
            except NotDelivered:
                raise
            except _NotRecorded as exc:  # sent: the database's error goes on, as it came
                assert exc.__cause__ is not None
                raise exc.__cause__ from None
            except Exception as exc:
                refusal: Exception = exc
            else:
                return message.message_id
        finally:
            self.sending.discard(queued.id)
        # Refused for good: its stand-in (the same outbox row) is delivered in its turn.
        if await self._caption_without_chart(queued):
            raise ChartRefused(f"reply {queued.id}: {refusal}") from refusal
        raise refusal

    async def _send(self, queued: OutgoingReply) -> Message:
        """Send a stored message, retried through flood control and network trouble; marked
        failed when Telegram refuses it."""
        send = self._call(queued)
        for attempt in range(self.patience.attempts):
            try:
                return await self._uncut(queued, send)
            except _NotRecorded:  # sent: not to be retried, nor marked failed
                raise
            except RetryAfter as exc:
                wait = exc.retry_after
                seconds = wait.total_seconds() if isinstance(wait, timedelta) else float(wait)
                if seconds > self.patience.max_wait_s:
                    raise NotDelivered(f"flood control: retry after {seconds:.0f}s") from exc
                delay = seconds
            except ChatMigrated as exc:
                if exc.new_chat_id == queued.chat_id:  # not twice: a supergroup stays
                    await self.store.outbox.mark_failed(queued.id, f"ChatMigrated: {exc}")
                    raise
                # The group became a supergroup, under a new id: what is stored of it moves
                # there (if its service message has not moved it yet), this message too,
                # and goes there now; so does what is sent to the group from now on.
                log.info("chat %s is now %s", queued.chat_id, exc.new_chat_id)
                await self.moves.record(self.store, queued.chat_id, exc.new_chat_id)
                queued = queued.model_copy(update={"chat_id": exc.new_chat_id})
                send = self._call(queued)
                delay = 0.0
            except BadRequest as exc:  # a NetworkError to PTB, but retrying will not help
                await self.store.outbox.mark_failed(queued.id, f"BadRequest: {exc}")
                raise
            except NetworkError:  # TimedOut included
                delay = self.patience.backoff_s[min(attempt, len(self.patience.backoff_s) - 1)]
            except Exception as exc:  # Forbidden (blocked), chat gone, …: final
                await self.store.outbox.mark_failed(queued.id, f"{type(exc).__name__}: {exc}")
                raise
            if attempt < self.patience.attempts - 1:
                log.info("reply %s to chat %s: retrying in %.1fs", queued.id, queued.chat_id, delay)
                await asyncio.sleep(delay)
        raise NotDelivered(f"reply {queued.id} to chat {queued.chat_id} is still queued")

    async def _uncut(
        self, queued: OutgoingReply, send: Callable[[], Awaitable[Message]]
    ) -> Message:
        """One Bot API call sending ``queued`` and its record as sent, one step ended even if
        its task is cancelled meanwhile (a shutdown past its grace period, or hurried by a
        second SIGTERM, stops the answers and the sending pass in progress): Telegram may
        already have carried the call out, so it is waited for (its own timeouts bound it)
        and, if it went out, recorded sent before the cancel goes on. The record is part of
        the step: Telegram took the message while the database was slow to write it down
        (a lock held, a failover), and a stop cutting that write left it queued though the
        person had it; the next start sent it again. Only a cancel of this step's own wait
        (none comes from the bot: the stop cancels each task once) or the process's end (a
        kill, the stuck exit ``bot_run.STUCK_AFTER_S`` after the stop) can still cut it:
        then that one message may go twice."""

        async def send_and_record() -> Message:
            message = await send()
            try:
                await self._record_sent([queued], {queued.id: message})
            except Exception as exc:  # the database's, not Telegram's: not a refusal
                raise _NotRecorded(queued.id) from exc
            return message

        step = asyncio.ensure_future(send_and_record())
        try:
            return await asyncio.shield(step)
        except asyncio.CancelledError:
            try:
                await asyncio.wait([step])
            finally:
                step.cancel()  # a second cancel: not left running without its task
            if not step.cancelled() and step.exception() is None:
                log.info(
                    "reply %s to chat %s sent as its task was stopped", queued.id, queued.chat_id
                )
            raise

    async def _record_sent(self, queued: list[OutgoingReply], sent: dict[int, Message]) -> None:
        if not sent:
            return
        await self.store.outbox.mark_sent({i: m.message_id for i, m in sent.items()})
        for message in queued:
            pending_id = message.payload.get("pending_id")
            if pending_id and message.id in sent:
                await self.store.pending.set_message(pending_id, sent[message.id].message_id)

    def _call(self, queued: OutgoingReply) -> Callable[[], Awaitable[Message]]:
        """The Bot API call that sends ``queued``, ready to be retried."""
        payload = queued.payload
        chat_id = queued.chat_id
        answer_s = self.patience.answer_s
        if queued.kind == "text":
            markup = payload.get("reply_markup")
            return lambda: self.bot.send_message(
                chat_id,
                payload["text"],
                parse_mode=payload.get("parse_mode"),
                reply_markup=InlineKeyboardMarkup.de_json(markup, self.bot) if markup else None,
                reply_to_message_id=payload.get("reply_to"),
                allow_sending_without_reply=True,
                message_thread_id=payload.get("thread_id"),
                read_timeout=answer_s,
            )
        assert queued.content is not None, "a queued file keeps its bytes until it is sent"
        content = queued.content
        send_file = self.bot.send_photo if queued.kind == "photo" else self.bot.send_document
        markup = payload.get("reply_markup")
        return lambda: send_file(
            chat_id,
            content,
            caption=payload.get("caption"),
            parse_mode=ParseMode.HTML,
            filename=payload["filename"],
            reply_markup=InlineKeyboardMarkup.de_json(markup, self.bot) if markup else None,
            reply_to_message_id=payload.get("reply_to"),
            allow_sending_without_reply=True,
            message_thread_id=payload.get("thread_id"),
            read_timeout=answer_s,
        )
