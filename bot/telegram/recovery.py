"""At start-up: the work a previous process began and did not finish is resumed.

A process killed (kill -9, an OOM kill, a crash, a deploy) while the model was thinking or
a query was running leaves its work in flight (``store.in_flight``). Each piece is picked up
again the way it began: a question is asked again (the transcript is written only once the
question is answered, so the model starts from the same place), a confirmed plan is run
again (its query is frozen in the plan), a ``/query`` is run again, a cancelled plan's
wording is asked of the model again. Work that cannot be resumed is handed back to the
person in one sentence: a plan with a fresh Run button, a question or a /query to send
again, a cancellation confirmed without the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection
from datetime import UTC, datetime, timedelta

from telegram import Bot
from telegram.ext import Application

from barb.i18n import language
from bot.assistant.orchestrator import pending_payload, plan_language
from bot.assistant.replies import Asker, PendingView, Reply
from bot.store.errors import database_failing
from bot.store.records import InFlight, PendingAction, WorkKind
from bot.telegram.answering import (
    DatabaseAway,
    answer_cancel,
    answer_query,
    answer_question,
    edit_plan_status,
    end_plan,
    run_plan,
)
from bot.telegram.render import escape
from bot.telegram.sender import NotDelivered
from bot.telegram.services import SERVICES_KEY, BotServices
from bot.texts import language_for, t
from bot.work_order import acknowledged, arrived

log = logging.getLogger(__name__)

#: Work started this many times and still unfinished is handed back, not started again: it
#: may be what brings the process down.
MAX_ATTEMPTS = 2
#: Work older than this is handed back: after so long an answer would surprise more than
#: help, and a plan's data or the person's mind may have moved on.
MAX_AGE = timedelta(hours=24)
QUESTION_QUOTE_CHARS = 80
#: Waits between tries of a handed-back plan's status line when Telegram is not reached.
STATUS_RETRY_WAITS_S = (1.0, 2.0)


async def resume_interrupted(application: Application, *, own: bool = True) -> int:  # type: ignore[type-arg]
    """Resume (or hand back) every piece of work left in flight; how many there were.

    At start-up (``own``) that is this replica's own unfinished work and that of replicas
    whose lease has expired; later, only the latter (a replica that died meanwhile).
    Chats run concurrently; one chat's work in the order it began.
    """
    svc: BotServices = application.bot_data[SERVICES_KEY]
    work = await svc.store.in_flight.take_over(own=own)
    if not work:
        return 0
    log.info("resuming %d pieces of work interrupted by a stop", len(work))
    by_chat: dict[int, list[InFlight]] = defaultdict(list)
    for item in work:
        by_chat[item.chat_id].append(item)
    await asyncio.gather(*(_resume_chat(svc, application.bot, items) for items in by_chat.values()))
    return len(work)


async def resume_abandoned(application: Application) -> int:  # type: ignore[type-arg]
    """Resume the work this replica set aside when the database stopped answering under it
    (``answering.DatabaseAway``); how many. While the database still does not answer, the
    work stays set aside for the next pass."""
    svc: BotServices = application.bot_data[SERVICES_KEY]
    if not svc.abandoned:
        return 0
    ids = sorted(svc.abandoned)
    svc.abandoned.difference_update(ids)
    try:
        found = [await svc.store.in_flight.get(work_id) for work_id in ids]
    except Exception as exc:
        svc.abandoned.update(ids)
        log.warning("%d pieces of work wait for the database (%s)", len(ids), exc)
        return 0
    mine = (None, svc.store.in_flight.lease.owner)
    # Finished meanwhile, or taken over by another replica after this one's lease lapsed.
    work = [item for item in found if item is not None and item.lease_owner in mine]
    if work:
        log.info("resuming %d pieces of work the database went away under", len(work))
    by_chat: dict[int, list[InFlight]] = defaultdict(list)
    for item in work:
        by_chat[item.chat_id].append(item)
    await asyncio.gather(*(_resume_chat(svc, application.bot, items) for items in by_chat.values()))
    return len(work)


async def _resume_chat(svc: BotServices, bot: Bot, items: list[InFlight]) -> None:
    for position, item in enumerate(items):
        # Queued by when the person asked, as if the process had never stopped.
        arrived(time.monotonic() - (datetime.now(UTC) - item.created_at).total_seconds())
        if item.stopped_at is not None:
            # A /cancel or /reset another replica handled stopped it, and said so.
            await svc.store.in_flight.finish(item.id)
            continue
        try:
            if item.kind == "question":  # the chat's later questions resumed with it
                await _resume_question(svc, bot, item, along={i.id for i in items})
            else:
                await _RESUME[item.kind](svc, bot, item)
        except NotDelivered:
            log.warning("resumed work %s answered; its reply waits for Telegram", item.id)
        except DatabaseAway:
            # Set aside again, with the chat's later work: resumed in order once it is back.
            svc.abandoned.update(later.id for later in items[position:])
            log.warning("the database went away while work %s was resumed", item.id)
            return
        except Exception as exc:
            if database_failing(exc):
                # Still locked by another process (or full, or read-only): the attempt's own
                # first write failed. Set aside again, as above; finishing the work, a write
                # too, would fail and leave it "Running…" until the next start.
                svc.abandoned.update(later.id for later in items[position:])
                log.warning("the database failed a write while work %s was resumed", item.id)
                return
            # As the error handler does for a live update: a reference in the log, one plain
            # sentence to the person, and the work not tried again at the next start.
            ref = uuid.uuid4().hex[:8]
            log.exception("resuming work %s failed (ref %s)", item.id, ref)
            await svc.store.in_flight.finish(item.id)
            lang = language(item.payload.get("language"))
            sentence = escape(t("internal_error", lang, ref=ref))
            with contextlib.suppress(Exception):  # Telegram failing too: the log is all
                async with svc.chat_lock(item.chat_id):  # as every reply of the chat is sent
                    await svc.sender(bot).text(item.chat_id, sentence)


async def finish_answered_runs(application: Application, older_than: timedelta) -> int:  # type: ignore[type-arg]
    """Runs answered more than ``older_than`` ago whose plan still says "Running…" (Telegram
    was unreachable when it should have said "Done.", or the answer is still on its way):
    edit them now, once their chat's answer is sent; how many were edited."""
    svc: BotServices = application.bot_data[SERVICES_KEY]
    cutoff = datetime.now(UTC) - older_than
    # Only this replica's own: another live replica's plan is its to finish (it may still be
    # sending the answer), and a dead one's is taken over with its lease (resume_interrupted).
    own = (None, svc.store.in_flight.lease.owner)
    left = [
        item
        for item in await svc.store.in_flight.open()
        if item.kind == "run"
        and item.answered_at is not None
        and item.answered_at < cutoff
        and item.lease_owner in own
    ]
    edited = 0
    for item in left:
        if await svc.store.outbox.unsent(item.chat_id):
            continue  # the answer is not all there yet: "Done." waits for it
        await _resume_run(svc, application.bot, item)
        edited += 1
    return edited


def _give_up(item: InFlight) -> bool:
    too_old = datetime.now(UTC) - item.created_at > MAX_AGE
    return item.attempts >= MAX_ATTEMPTS or too_old


async def _resume_question(
    svc: BotServices, bot: Bot, item: InFlight, *, along: Collection[int] = ()
) -> None:
    """Ask the question again, or hand it back: after two attempts, after a day, or when
    the chat has moved on (``_overtaken``). ``along``: the work resumed with it."""
    asker = Asker.model_validate(item.payload["asker"])
    text: str = item.payload["text"]
    reply_to: int | None = item.payload.get("reply_to")
    # A suggested reply's press: the clarification it claimed (done once the model was
    # asked) waits for it again, to be answered by it now or by the person later.
    clarification: str | None = item.payload.get("clarification")
    if clarification is not None:
        await svc.store.pending.reopen(clarification)
    quote = text if len(text) <= QUESTION_QUOTE_CHARS else text[:QUESTION_QUOTE_CHARS] + "…"
    if _give_up(item):
        lang = language_for("auto", text, asker.language_code)
        reply = Reply(
            text=t("restarted_question", lang, question=quote), failed=True, language=lang
        )
        await _hand_back(svc, bot, asker.chat_id, reply, reply_to=reply_to, answers=item.id)
        log.info("question %s handed back after %d attempts", item.id, item.attempts)
        return
    if await _overtaken(svc, item, along):
        chat = await svc.store.chats.ensure(asker.chat_id, asker.chat_type)
        lang = language_for(chat.settings.language, text, asker.language_code)
        reply = Reply(
            text=t("overtaken_question", lang, question=quote), failed=True, language=lang
        )
        await _hand_back(svc, bot, asker.chat_id, reply, reply_to=reply_to, answers=item.id)
        log.info("question %s handed back: the chat's later questions were answered", item.id)
        return
    await svc.store.in_flight.retry(item.id)
    # What the interrupted attempt stored but never showed (a plan, a clarifying question:
    # their messages were not queued) goes; the new attempt makes its own. Only unshown:
    # a plan shown since is another question's (answered by another replica meanwhile).
    await svc.store.pending.decline_for_chat(
        asker.chat_id, user_id=asker.user_id, since=item.created_at, unshown=True
    )
    await answer_question(
        svc,
        bot,
        asker,
        text,
        work_id=item.id,
        reply_to=reply_to,
        clarification=clarification,
        question_id=item.payload.get("question_id"),  # the same question as before
    )
    log.info("question %s answered after a restart", item.id)


async def _overtaken(svc: BotServices, item: InFlight, along: Collection[int]) -> bool:
    """Whether the chat has moved on since the question began: a later question of it was
    answered, or is being answered, by a replica that lived on while this one's lease ran
    out. Its answer now would come below theirs, and its plan would be the one Run takes,
    so it is handed back instead. Work resumed ``along`` with it (a restart's, in order)
    does not count: one process answers a chat's questions in the order asked."""
    if await svc.store.outbox.answered_after(item.chat_id, item.id):
        return True
    return any(
        work.chat_id == item.chat_id
        and work.id > item.id
        and work.kind in ("question", "query")
        and work.id not in along
        for work in await svc.store.in_flight.open()
    )


async def _resume_query(svc: BotServices, bot: Bot, item: InFlight) -> None:
    asker = Asker.model_validate(item.payload["asker"])
    if _give_up(item):
        lang = language_for("auto", "", asker.language_code)
        reply = Reply(text=t("restarted_query", lang), failed=True, language=lang)
        await _hand_back(
            svc,
            bot,
            asker.chat_id,
            reply,
            reply_to=asker.reply_to,
            thread_id=asker.thread_id,
            answers=item.id,
        )
        log.info("/query %s handed back after %d attempts", item.id, item.attempts)
        return
    await svc.store.in_flight.retry(item.id)
    await answer_query(
        svc,
        bot,
        asker,
        item.payload["text"],
        work_id=item.id,
        question_id=item.payload.get("question_id"),
    )
    log.info("/query %s answered after a restart", item.id)


async def _resume_cancel(svc: BotServices, bot: Bot, item: InFlight) -> None:
    action = await svc.store.pending.get(item.payload["action_id"])
    if action is None:  # the chat was reset or removed meanwhile
        await svc.store.in_flight.finish(item.id)
        return
    lang = plan_language(action)  # the plan's own, as the press used
    acknowledged()  # the press was acknowledged before the model was asked
    if not _give_up(item):
        await svc.store.in_flight.retry(item.id)
        await answer_cancel(svc, bot, action, lang=lang, work_id=item.id)
        log.info("cancel of plan %s worded after a restart", action.id)
        return
    # Handed back: the plan is cancelled all the same; say so without the model.
    await _status_retried(svc, bot, action, t("cancelled", lang), lang)
    asker = pending_payload(action).paused.state.asker
    reply = Reply(text=t("restarted_cancel", lang), failed=True, language=lang)
    await _hand_back(
        svc,
        bot,
        action.chat_id,
        reply,
        reply_to=asker.reply_to,
        thread_id=asker.thread_id,
        answers=item.id,
    )
    log.info("cancel of plan %s handed back after %d attempts", action.id, item.attempts)


async def _resume_run(svc: BotServices, bot: Bot, item: InFlight) -> None:
    action = await svc.store.pending.get(item.payload["action_id"])
    if action is None:  # the chat was reset or removed meanwhile
        await svc.store.in_flight.finish(item.id)
        return
    lang = plan_language(action)  # the plan's own, as the press used
    acknowledged()  # the plan has said "Running…" since the press
    if item.answered_at is not None:  # answered; only its plan's status was missing
        # Under the chat's lock, as the run's own handler ends it (``answering.run_plan``):
        # one still at it holds the lock until its edit is through, and the run is then over.
        async with svc.chat_lock(action.chat_id):
            if await svc.store.in_flight.get(item.id) is not None:
                await end_plan(svc, bot, action, item.id, lang, item.outcome or "done")
        return
    if not _give_up(item):
        await svc.store.in_flight.retry(item.id)
        await run_plan(svc, bot, action, lang=lang, work_id=item.id)
        log.info("plan %s run after a restart", action.id)
        return
    # Handed back: the plan can be pressed again, from a fresh message with its buttons.
    await svc.store.pending.reopen(action.id)
    await _status_retried(svc, bot, action, t("interrupted", lang), lang)
    stored = pending_payload(action)
    view = stored.view.model_copy(update={"text": t("restarted_run", lang)})
    pending = PendingView(id=action.id, **view.model_dump())
    question_id = stored.paused.state.question_id
    asker = stored.paused.state.asker  # in a group: a reply to the question, in its topic
    reply = Reply(
        question_id=question_id,
        pending=pending,
        language=lang,
        asked=asker.message_id,
        asked_parts=asker.parts,
    )
    # Not marked answered: its plan is not done. A kill before the row goes hands it back
    # twice, which beats not at all.
    await _hand_back(
        svc, bot, action.chat_id, reply, reply_to=asker.reply_to, thread_id=asker.thread_id
    )
    await svc.store.in_flight.finish(item.id)
    log.info("plan %s handed back after %d attempts", action.id, item.attempts)


async def _status_retried(
    svc: BotServices, bot: Bot, action: PendingAction, status: str, lang: str
) -> None:
    """The handed-back plan's status line, tried again after a network error: this is the
    one chance to set it (its work row goes once the plan is handed back), and a CI run
    under load once left the old plan with no status beside the fresh one."""
    for wait in STATUS_RETRY_WAITS_S:
        if await edit_plan_status(svc, bot, action, action.message_id, status, lang):
            return
        await asyncio.sleep(wait)
    await edit_plan_status(svc, bot, action, action.message_id, status, lang)


async def _hand_back(
    svc: BotServices,
    bot: Bot,
    chat_id: int,
    reply: Reply,
    *,
    reply_to: int | None = None,
    thread_id: int | None = None,
    answers: int | None = None,
) -> None:
    """Send the reply that hands work back, under the chat's lock as every reply of a chat
    is sent: after what the chat's earlier work is sending, and never taken from under it
    by a flush of the chat's outbox."""
    async with svc.chat_lock(chat_id):
        await svc.sender(bot).reply(
            chat_id, reply, reply_to=reply_to, thread_id=thread_id, answers=answers
        )


_RESUME: dict[WorkKind, Callable[[BotServices, Bot, InFlight], Awaitable[None]]] = {
    "question": _resume_question,
    "run": _resume_run,
    "cancel": _resume_cancel,
    "query": _resume_query,
}
