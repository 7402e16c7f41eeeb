"""Answering a question, running a confirmed plan or a ``/query``, wording a cancelled plan:
the work a restart must not lose.

Each begins by recording itself in flight (``store.in_flight``) and end in the transaction
that stores their reply in the outbox, so that a process killed in between leaves a row the
next start resumes (``bot.telegram.recovery``). The handlers and the recovery share these
functions: a resumed question is answered exactly as the first attempt would have been.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from telegram import Bot
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, ChatMigrated, NetworkError, RetryAfter, TelegramError

from bot.assistant.orchestrator import asked_in, pending_payload, plan_language
from bot.assistant.replies import Asker, Reply
from bot.store import WorkStopped
from bot.store.errors import database_failing
from bot.store.records import Chat, PendingAction, RunOutcome, new_question_id
from bot.telegram import keyboards
from bot.telegram.render import escape, plan_html
from bot.telegram.sender import NotDelivered
from bot.telegram.services import BotServices
from bot.telegram.thinking import Turn
from bot.texts import t
from bot.work_order import acknowledged

log = logging.getLogger(__name__)


class DatabaseAway(Exception):
    """Work in flight stopped because the database stopped answering. It stays in flight,
    held by this replica, and is resumed by the sending pass once the database answers
    again (``recovery.resume_abandoned``): an outage that began while a query computed
    must not leave the plan "Running…" until the next restart."""

    def __init__(self, work_id: int) -> None:
        super().__init__(f"work {work_id} stopped: the database is unreachable")
        self.work_id = work_id


async def _unless_database_away(svc: BotServices, work_id: int, failure: Exception) -> None:
    """Raise ``DatabaseAway`` (the work set aside for later) when the database does not
    answer now, or failed the write itself (SQLite locked by another process past its busy
    timeout, the disk full, the file read-only: ``database_failing``); a failure while it
    answers is a bug, for the caller to handle. A lock held past the busy timeout while a
    run's answer was stored was such a "bug": "Something broke on my side (reference …)",
    the numbers computed thrown away and the plan handed back."""
    if not database_failing(failure) and await svc.store.reachable():
        return
    svc.abandoned.add(work_id)
    raise DatabaseAway(work_id) from failure


@asynccontextmanager
async def _finished_if_it_fails(
    svc: BotServices, work_id: int, chat_id: int
) -> AsyncIterator[None]:
    """Around answering work in flight ``work_id``: a reply stored but not delivered stays
    in flight (it will be sent), and so does work the database went away under; any other
    failure is a bug, not a crash: the person is told by the error handler, and the work is
    finished so that a restart does not ask again what failed here. A notice held back
    about it is withdrawn before that sentence (``_after_notices``)."""
    try:
        yield
    except NotDelivered:
        raise
    except Exception as failure:
        await _unless_database_away(svc, work_id, failure)
        await _after_notices(svc, chat_id)
        await svc.store.in_flight.finish(work_id)
        raise


#: Why a notice Telegram held back is never sent (the outbox row's error).
NOTICE_WITHDRAWN = "withdrawn: the answer it spoke of went out first"


async def _after_notices(svc: BotServices, chat_id: int) -> None:
    """Wait for a notice being said about this work (checked while it was still running,
    or thinking) to be out: the answer comes after it, never between its messages. One
    Telegram held back is withdrawn (still queued, it would come after the answer, saying
    "cannot be stopped: the answer is on its way" of an answer already there, p46c N1).
    Called however the work ends: before its answer, before the sentence saying it failed,
    and when its question is stopped."""
    async with svc.notice_lock(chat_id):
        # Said in the supergroup about work begun in the group it was, too (``_say_now``).
        for said_in in {chat_id, svc.moves.current(chat_id)}:
            for reply_id in svc.held_notices.pop(said_in, []):
                await svc.store.outbox.mark_failed(reply_id, NOTICE_WITHDRAWN)


@asynccontextmanager
async def _unsent_forgotten(
    svc: BotServices,
    turn: Turn,
    chat_id: int,
    clarification: str | None,
    answer: Callable[[], Reply | None],
) -> AsyncIterator[None]:
    """Around a question's turn: stopped (/cancel, /reset), nothing it would have sent is
    remembered as said, before the turn ends (the /cancel's confirmation and the /reset's
    forgetting come after). Before the model ``answer``ed, a suggested reply's claimed
    ``clarification`` is declined; after, its answer, already stored with its question,
    is forgotten too (``Assistant.unsent``). A failure before the answer declines the
    clarification as well; a shutdown, or the database away, leaves it claimed: the next
    start continues it.

    A stopped answer is forgotten, not sent: the /cancel says "Stopped: that question will
    not be answered.", and the person, who cannot see that the answer was ready (it waited
    only for the chat's earlier messages to go out), asked for exactly that. Sending it
    with a "too late" note would answer a question they had just withdrawn, and a plan
    among it would be cancelled at once anyway. Before, the answer was dropped but stayed
    in the transcript, and the model took it for seen in the next question."""
    try:
        yield
    except Exception:
        if clarification is not None and answer() is None and await svc.store.reachable():
            await svc.assistant.decline_claimed(clarification)
        raise
    finally:
        if turn.stopped:
            reply = answer()
            if reply is not None:
                await svc.assistant.unsent(chat_id, reply, clarification)
            elif clarification is not None:
                await svc.assistant.decline_claimed(clarification)


#: The plan message already says "Running…": "sending photo…" only once a query takes a while.
QUERY_ACTION_AFTER_S = 1.0


def question_work(
    asker: Asker, text: str, reply_to: int | None, *, clarification: str | None = None
) -> dict[str, Any]:
    """What a restart needs to ask the question again: who asked, what, where to reply,
    and, for a suggested reply's press, the clarification it answers (its action id); and
    the question's id, drawn once here, so that every attempt at it (a restart's, another
    replica's) is the same question: its queries run at once (no plan) keep their names
    on the queue workers (``jobs.run_key``), and a resumed attempt takes the job the one
    before sent instead of computing it again."""
    work = {
        "asker": asker.model_dump(mode="json"),
        "text": text,
        "reply_to": reply_to,
        "question_id": new_question_id(),
    }
    if clarification is not None:
        work["clarification"] = clarification
    return work


def run_work(action_id: str, lang: str) -> dict[str, Any]:
    """What a restart needs to run a confirmed plan again (the action: its frozen query), or
    to have a cancelled one worded again; ``lang`` (the presser's) only for a sentence when
    that fails: the plan is resumed in its own language."""
    return {"action_id": action_id, "language": lang}


async def answer_question(
    svc: BotServices,
    bot: Bot,
    asker: Asker,
    text: str,
    *,
    work_id: int,
    reply_to: int | None = None,
    chat: Chat | None = None,
    preface: str | None = None,
    clarification: str | None = None,
    question_id: str | None = None,
) -> None:
    """Ask the assistant, showing 'typing…', and send its reply; the reply's storing
    finishes the work in flight ``work_id``, whose ``question_id`` it is (``question_work``;
    None in work recorded before it had one). ``chat``, if the caller has it, saves reading
    it again; ``preface`` (HTML) is said first; ``clarification``: the one a suggested
    reply's press claimed, which ``text`` answers (``Assistant.ask``). A turn stopped or
    failed before the model answered it leaves it declined, not claimed for good.

    The turn holds the chat's model lock throughout (questions are answered one at a time,
    in order) and its reply lock only to send: a command sent while the model thinks is
    answered at once, and a /cancel or /reset stops the turn (``Thinking``), the question
    dropped and nothing of it sent. Once the answer holds the reply lock it goes out whole,
    nothing of the chat between its messages."""
    sender = svc.sender(bot)
    chat_id = asker.chat_id
    reply: Reply | None = None  # the assistant's reply, once in hand (stored with its question)
    thinking = False  # the model lock is this turn's: no run of the chat is going
    async with _finished_if_it_fails(svc, work_id, chat_id), AsyncExitStack() as held:
        async with (
            svc.thinking.stoppable(chat_id, asker.user_id, work_id) as turn,
            _unsent_forgotten(svc, turn, chat_id, clarification, lambda: reply),
        ):
            await held.enter_async_context(svc.model_lock(chat_id))
            thinking = True
            if preface is not None:
                async with svc.chat_lock(chat_id):
                    with svc.thinking.sending(turn):
                        await sender.text(
                            chat_id, preface, reply_to=asker.reply_to, thread_id=asker.thread_id
                        )
            async with svc.showing(bot, chat_id):
                acknowledged()  # 'typing…' is on its way
                # Plans waiting for this person lose their buttons and say they were
                # replaced, in their own language: the new message declines them. In a
                # group, other members' plans stay: only the person who asked can end theirs;
                # and so do the person's plans in other forum topics.
                waiting = await svc.store.pending.open_for_chat(chat_id, user_id=asker.user_id)
                for action in waiting:
                    if (
                        action.kind == "confirm"
                        and action.status == "pending"
                        and action.message_id
                        and asked_in(action) == asker.thread_id
                    ):
                        plan_lang = plan_language(action)
                        replaced = t("plan_replaced", plan_lang)
                        await edit_plan_status(
                            svc, bot, action, action.message_id, replaced, plan_lang
                        )
                reply = await svc.assistant.ask(
                    asker, text, chat=chat, clarification=clarification, question_id=question_id
                )
            # Taken while the turn may still be stopped: a /cancel holding it stops the
            # turn, and one that comes after finds the answer out and its plan to drop.
            await held.enter_async_context(svc.chat_lock(chat_id))
            svc.thinking.going_out(turn)
        if turn.elsewhere:
            await _stopped_elsewhere(svc, work_id, reply)
        if turn.stopped:
            # The /cancel's confirmation ends the work in flight. A notice held back about
            # this turn goes with it; one stopped while it waited for the model lock leaves
            # the notices of the run holding that lock, whose answer is still to come.
            if thinking:
                await _after_notices(svc, chat_id)
            return
        assert reply is not None
        # No longer thinking (``going_out``): another member's /reset told "I am answering
        # another member now" before that has its sentence out first (``notice_lock``).
        await _after_notices(svc, chat_id)
        if clarification is not None:
            await _offer_again(svc, bot, clarification)
        try:
            await sender.reply(
                chat_id,
                reply,
                reply_to=reply_to,
                thread_id=asker.thread_id,
                answers=work_id,
            )
        except WorkStopped:
            # Stopped by another replica after this one last read (``Thinking``): nothing
            # was stored, and the answer goes unsaid, as if stopped a moment earlier.
            await svc.assistant.unsent(chat_id, reply, clarification)
            await _stopped_elsewhere(svc, work_id, reply)


async def _stopped_elsewhere(svc: BotServices, work_id: int, reply: Reply | None) -> None:
    """A question another replica's /cancel or /reset stopped (it said so): its plan or
    clarifying question, stored by the model and never shown, is declined without a word
    to the transcript (that replica's /reset may have just cleared it), and the work ends
    here, since that replica's confirmation did not end it."""
    if reply is not None and reply.pending is not None:
        await svc.store.pending.resolve(reply.pending.id, "declined", was=("pending",))
    await svc.store.in_flight.finish(work_id)
    log.info("question %s not answered: stopped by another replica", work_id)


async def _offer_again(svc: BotServices, bot: Bot, action_id: str) -> None:
    """A clarification whose continuation the model failed waits for its reply again
    (``continue_claimed``): its suggested replies come back under it before the failure is
    said, so that the person told to try again can press one again. Also for a reply whose
    press a restart cut (the first life took its buttons away). Nothing is asked of
    Telegram when the clarification was answered or ended meanwhile."""
    action = await svc.store.pending.get(action_id)
    if action is None or action.status != "pending" or not action.message_id:
        return
    options = pending_payload(action).view.options
    try:
        await bot.edit_message_reply_markup(
            action.chat_id, action.message_id, reply_markup=keyboards.options(action_id, options)
        )
    except TelegramError as exc:  # deleted meanwhile: nothing to offer them under
        log.debug("replies of %s/%s not offered again: %s", action.chat_id, action.message_id, exc)


async def answer_query(
    svc: BotServices,
    bot: Bot,
    asker: Asker,
    text: str,
    *,
    work_id: int,
    chat: Chat | None = None,
    question_id: str | None = None,
) -> None:
    """``/query``: run the person's Barb Script under the chat's lock and send the result;
    the reply's storing finishes the work in flight ``work_id`` (``question_id``: its
    payload's, ``question_work``). While it waits its turn
    or computes, a /cancel or /reset says at once that it cannot be stopped
    (``svc.queries``)."""
    showing = svc.showing(bot, asker.chat_id, ChatAction.UPLOAD_PHOTO, after_s=QUERY_ACTION_AFTER_S)
    async with _finished_if_it_fails(svc, work_id, asker.chat_id):
        # Counted, so that a Run pressed meanwhile sees it ahead.
        with svc.backlog.joined():
            async with AsyncExitStack() as held:
                # Under way while it waits for the locks too: a /cancel sent right after
                # the /query, or while it waits its turn, says at once it cannot be stopped.
                with svc.queries.running(asker.chat_id, asker.user_id):
                    # The model lock first, as all the chat's model and engine work takes it.
                    await held.enter_async_context(svc.model_lock(asker.chat_id))
                    await held.enter_async_context(svc.chat_lock(asker.chat_id))
                    await held.enter_async_context(showing)
                    acknowledged()
                    reply = await svc.assistant.query_command(
                        asker, text, chat=chat, work_id=work_id, question_id=question_id
                    )
                # No longer under way: a /cancel's or /reset's notice checked before that
                # is out before the answer (``notice_lock``), never between its messages.
                await _after_notices(svc, asker.chat_id)
                await svc.sender(bot).reply(
                    asker.chat_id,
                    reply,
                    reply_to=asker.reply_to,
                    thread_id=asker.thread_id,
                    answers=work_id,
                )


async def answer_cancel(
    svc: BotServices,
    bot: Bot,
    action: PendingAction,
    *,
    lang: str,
    work_id: int,
    plan_message_id: int | None = None,
) -> None:
    """A cancelled plan: the model is told and answers briefly, under the chat's lock; the
    plan says "Cancelled."; the reply's storing finishes the work in flight ``work_id``."""
    asker = pending_payload(action).paused.state.asker
    async with (
        _finished_if_it_fails(svc, work_id, action.chat_id),
        svc.model_lock(action.chat_id),
        svc.chat_lock(action.chat_id),
        svc.showing(bot, action.chat_id),
    ):
        reply = await svc.assistant.cancelled(action)
        message_id = plan_message_id or action.message_id
        await edit_plan_status(svc, bot, action, message_id, t("cancelled", lang), lang)
        await svc.sender(bot).reply(
            action.chat_id,
            reply,
            reply_to=asker.reply_to,
            thread_id=asker.thread_id,
            answers=work_id,
        )


async def run_plan(
    svc: BotServices,
    bot: Bot,
    action: PendingAction,
    *,
    lang: str,
    work_id: int,
    chat: Chat | None = None,
    plan_message_id: int | None = None,
) -> None:
    """Run a claimed plan (its frozen query), send the answer, and mark the plan done; the
    run in flight ``work_id`` ends once the plan says so.

    The plan is ended under the chat's lock, the one its answer was sent under: the sending
    pass, which ends the runs a handler left answered (``recovery.finish_answered_runs``),
    takes that lock too and finds the run over, so that a long flood-control hold on the
    answer or on the edit does not have both say "Done."."""
    if svc.moves.current(action.chat_id) != action.chat_id:
        # The group became a supergroup since the plan was read (its "Running…" was refused
        # so): the plan moved there with the group's settings and conversation, and runs as
        # it is stored now. Its locks are the supergroup's, the chat the press came from:
        # under the group's id the press never took its place in the supergroup's line of
        # updates (``ChatLocks.hold``), and a /cancel sent there meanwhile waited for the
        # whole run. Its question and answer are kept in the supergroup's conversation, not
        # under the group's id, which nothing reads any more.
        action = await svc.store.pending.get(action.id) or action
        chat = None  # read again as the move left it: the group's settings, at the new id
    chat_id = action.chat_id
    message_id = plan_message_id or action.message_id
    async with svc.model_lock(chat_id), svc.chat_lock(chat_id):
        try:
            async with svc.showing(
                bot, chat_id, ChatAction.UPLOAD_PHOTO, after_s=QUERY_ACTION_AFTER_S
            ):
                reply = await svc.assistant.continue_claimed(action, chat=chat)
                # The plan is no longer "running": a /cancel's "cannot be stopped" notice
                # checked before that is out before the answer (``notice_lock``).
                await _after_notices(svc, chat_id)
                # In a group the answer replies to the question, in its forum topic.
                asker = pending_payload(action).paused.state.asker
                await svc.sender(bot).reply(
                    chat_id,
                    reply,
                    reply_to=asker.reply_to,
                    thread_id=asker.thread_id,
                    answers=work_id,
                )
        except NotDelivered:
            # The answer is stored and will be sent: the plan says how it ended once it has
            # been (``recovery.finish_answered_runs``), not "Done." above a chart to come.
            raise
        except Exception as failure:
            await _unless_database_away(svc, work_id, failure)
            # Before the sentence saying it failed: "the answer is on its way" no longer is.
            await _after_notices(svc, chat_id)
            work = await svc.store.in_flight.get(work_id)
            if work is not None and work.answered_at is not None:
                outcome = work.outcome or "done"
                await end_plan(svc, bot, action, work_id, lang, outcome, message_id)
            elif work is not None:
                # A bug, not a crash: the answer never came, so the plan can be pressed
                # again. That outcome is stored with the run, which ends only once the plan
                # shows its buttons: if Telegram fails the edit now, the sending pass or the
                # next start makes it (``recovery.finish_answered_runs``), as for any
                # answered run.
                await svc.store.pending.reopen(action.id, run=work_id)
                await end_plan(svc, bot, action, work_id, lang, "reopened", message_id)
            raise
        await end_plan(svc, bot, action, work_id, lang, reply.plan_outcome, message_id)


async def end_plan(
    svc: BotServices,
    bot: Bot,
    action: PendingAction,
    work_id: int,
    lang: str,
    outcome: RunOutcome,
    message_id: int | None = None,
) -> None:
    """After a run's reply is stored, its plan message shows how it ended: "Done.",
    "Failed." (the model's explanation follows), or, when it failed on Barb's side before
    anything was shown, the plan with its Run and Cancel buttons again. Only then is the run
    over: a kill in between, or Telegram unreachable, leaves it for the next start or the
    next sending pass (``bot.telegram.app.keep_sending``), which read the stored outcome."""
    message_id = message_id or action.message_id
    status: str | None = t("run_failed", lang) if outcome == "failed" else t("done", lang)
    if outcome == "reopened":
        status = None  # its Run and Cancel buttons again
        current = await svc.store.pending.get(action.id)
        if current is None or current.status != "pending":
            # Declined meanwhile (a new question, /reset) while the edit waited for
            # Telegram: its buttons would only say "out of date".
            await svc.store.in_flight.finish(work_id)
            return
    if await edit_plan_status(svc, bot, action, message_id, status, lang):
        await svc.store.in_flight.finish(work_id)


async def edit_plan_status(
    svc: BotServices,
    bot: Bot,
    action: PendingAction,
    message_id: int | None,
    status: str | None,
    lang: str,
    *,
    record_move: bool = False,
) -> bool:
    """The plan message loses its buttons and shows where it stands ("Running…", "Done.");
    with no ``status``, it is the plan with its Run and Cancel buttons again.

    The text is rendered again from the stored plan, as it was sent, so that the status can
    be set after a restart, with no callback query at hand. False if Telegram could not be
    reached (worth trying again); True once edited, or refused for good (not modified, gone).
    """
    if message_id is None:
        return True
    # A move already known: straight to the supergroup, not refused there once more.
    action = action.model_copy(update={"chat_id": svc.moves.current(action.chat_id)})
    view = pending_payload(action).view
    body = plan_html(view.text, t("plan_header", lang), view.plan or "")[-1]
    text = body if status is None else f"{body}\n\n⏵ {escape(status)}"
    markup = keyboards.confirm(action.id, lang) if status is None else None
    try:
        await bot.edit_message_text(
            text,
            chat_id=action.chat_id,
            message_id=message_id,
            parse_mode=ParseMode.HTML,
            reply_markup=markup,
        )
    except (NetworkError, RetryAfter) as exc:
        if isinstance(exc, BadRequest):  # a NetworkError to PTB; retrying will not help
            log.debug("plan message %s not edited: %s", message_id, exc)
            return True
        log.info("plan message %s not edited yet: %s", message_id, exc)
        return False
    except ChatMigrated as exc:
        # The group is a supergroup now, its messages there under the same ids. Before,
        # a plan run before the move was known kept its Run and Cancel and never showed
        # "Running…" or "Done.": both edits were refused at the group's id.
        if exc.new_chat_id == action.chat_id:
            return True
        if record_move:
            # Only where nothing of the handler is left to do under the group's id (a Run:
            # ``run_plan`` reads the plan again as the move left it). Mid-handler, a /reset
            # cleared a conversation that had just moved and a question was asked with no
            # history and stored where nothing reads it (r48a): a refused send at the end,
            # or the service message, records the move there.
            log.info("chat %s is now %s", action.chat_id, exc.new_chat_id)
            await svc.chat_moved(action.chat_id, exc.new_chat_id)
        moved = action.model_copy(update={"chat_id": exc.new_chat_id})
        return await edit_plan_status(svc, bot, moved, message_id, status, lang)
    except TelegramError as exc:  # gone, blocked: nothing to show it to
        log.debug("plan message %s not edited: %s", message_id, exc)
    return True


async def remove_keyboard(svc: BotServices, bot: Bot, chat_id: int, message_id: int) -> None:
    """The message's buttons go (a press refused for good, a reply chosen). Mid-handler: a
    move Telegram tells of here is left for the handler's sends to record (see
    ``edit_plan_status``)."""
    chat_id = svc.moves.current(chat_id)
    try:
        await bot.edit_message_reply_markup(chat_id, message_id, reply_markup=None)
    except ChatMigrated as exc:  # in the supergroup the group became, as a plan's status
        if exc.new_chat_id != chat_id:
            await remove_keyboard(svc, bot, exc.new_chat_id, message_id)
    except TelegramError:  # already edited or deleted: nothing to remove
        log.debug("keyboard of %s/%s already gone", chat_id, message_id)
