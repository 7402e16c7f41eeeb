"""A question from a person: limited, recorded in flight, answered (``answering``)."""

from __future__ import annotations

from bot.kill_points import reached
from bot.telegram.answering import answer_question, question_work
from bot.telegram.render import escape
from bot.telegram.update_context import UpdateContext
from bot.texts import language_for, t


async def ask(ctx: UpdateContext, text: str, *, preface: str | None = None) -> None:
    """Ask the assistant ``text`` for the update's asker, within the questions' rate limit.

    ``preface`` (HTML) is said first, once the question is recorded: a reply marks its
    update handled, so saying it before would leave a question cut short by a kill -9 with
    nothing to resume it from (``/start ex1``'s greeting, then its example question).
    """
    svc = ctx.svc
    if await too_fast(ctx, text, preface=preface):
        return
    asker = ctx.asker
    reached("question_received", svc.settings.kill_at)
    # In flight before anything else, and the update handled in the same transaction: from
    # here a kill -9 leaves the question for the next start (before, its stored update).
    work = await svc.store.in_flight.start(
        asker.chat_id,
        asker.user_id,
        "question",
        question_work(asker, text, asker.reply_to),
        update_id=ctx.update_id,
    )
    await answer_question(
        svc,
        ctx.bot,
        asker,
        text,
        work_id=work.id,
        reply_to=asker.reply_to,
        chat=ctx.chat,
        preface=preface,
    )


async def too_fast(ctx: UpdateContext, text: str, *, preface: str | None = None) -> bool:
    """Past the questions' rate limit: the person is told when to ask again (after
    ``preface``, if any), and True; else False, and ``text`` may be asked."""
    svc = ctx.svc
    wait = await svc.limiter.check(svc.store, ctx.user_id)
    if not wait:
        return False
    lang = language_for(ctx.chat.settings.language, text, ctx.asker.language_code)
    sentence = escape(t("too_fast", lang, seconds=int(wait) + 1))
    await ctx.say(*([preface] if preface is not None else []), sentence)
    return True
