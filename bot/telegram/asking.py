"""A question from a person: limited, recorded in flight, answered (``answering``)."""

from __future__ import annotations

from bot.assistant.replies import Asker
from bot.kill_points import reached
from bot.telegram.answering import answer_question, question_work
from bot.telegram.render import escape
from bot.telegram.split_questions import Gathered
from bot.telegram.update_context import UpdateContext
from bot.texts import language_for, t


async def ask(
    ctx: UpdateContext,
    text: str,
    *,
    preface: str | None = None,
    gathered: Gathered | None = None,
) -> None:
    """Ask the assistant ``text`` for the update's asker, within the questions' rate limit.

    ``preface`` (HTML) is said first, once the question is recorded: a reply marks its
    update handled, so saying it before would leave a question cut short by a kill -9 with
    nothing to resume it from (``/start ex1``'s greeting, then its example question).
    ``gathered``: the parts of a split question ``text`` joins, whose updates are handled
    with this one's (``split_questions``).
    """
    svc = ctx.svc
    if await too_fast(ctx, text, preface=preface):
        return
    asker = ctx.asker
    if gathered is not None and gathered.joined_messages:
        asker = asker.model_copy(update={"parts": gathered.joined_messages})
    reached("question_received", svc.settings.kill_at)
    # In flight before anything else, and the update handled in the same transaction: from
    # here a kill -9 leaves the question for the next start (before, its stored update).
    payload = question_work(asker, text, asker.reply_to)
    work = await svc.store.in_flight.start(
        asker.chat_id,
        asker.user_id,
        "question",
        payload,
        update_id=ctx.update_id,
        joined_updates=gathered.joined_updates if gathered is not None else (),
    )
    if gathered is not None:
        gathered.recorded()
    await answer_question(
        svc,
        ctx.bot,
        asker,
        text,
        work_id=work.id,
        reply_to=asker.reply_to,
        chat=ctx.chat,
        preface=preface,
        question_id=payload["question_id"],
    )


async def too_fast(
    ctx: UpdateContext,
    text: str,
    *,
    preface: str | None = None,
    asker: Asker | None = None,
) -> bool:
    """Past the questions' rate limit of the one ``text`` is asked as (``asker``, else the
    update's): they are told when to ask again (after ``preface``, if any), replying where
    their answer would, and True; else False, and ``text`` may be asked.

    A suggested reply pressed under an anonymous admin's question is the group's question
    (``buttons.on_option``): counted against the admin who pressed it, it was refused in the
    group for her own private questions ("Too many questions in a row"), while the group
    could ask on."""
    svc = ctx.svc
    asker = asker or ctx.asker
    wait = await svc.limiter.check(svc.store, asker.user_id)
    if not wait:
        return False
    lang = language_for(ctx.chat.settings.language, text, asker.language_code)
    sentence = escape(t("too_fast", lang, seconds=int(wait) + 1))
    await ctx.say(*([preface] if preface is not None else []), sentence, reply_to=asker.reply_to)
    return True
