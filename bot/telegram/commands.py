"""The bot's commands: one table feeds both Telegram's menu and the handlers.

Each command is a small function of the update's context (``UpdateContext``) and its
arguments. The menu text of a command is a catalog entry (``command_start``) in each of
Barb's languages, registered per language with ``set_my_commands``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from telegram import BotCommand, Update
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from barb.i18n import LANGUAGES, N_, day
from barb.instruments import available_instruments, load_instrument
from barb.reference import example_questions
from bot.assistant.orchestrator import plan_language
from bot.store.records import PendingAction
from bot.store.transactions import utc_now
from bot.telegram import keyboards
from bot.telegram.answering import answer_query, edit_plan_status, question_work, remove_keyboard
from bot.telegram.asking import ask
from bot.telegram.render import escape
from bot.telegram.sender import NotDelivered
from bot.telegram.settings_view import settings_view
from bot.telegram.thinking import Turn
from bot.telegram.update_context import UpdateContext, load_context
from bot.telegram.usage_view import usage_text
from bot.texts import t

log = logging.getLogger(__name__)

# A command's work, given the update's context and the text after the command.
Run = Callable[[UpdateContext, str], Awaitable[None]]

#: Languages with a menu of their own; the first is also the default for everyone else.
MENU_LANGUAGES = LANGUAGES
#: ``/start ex3`` (a link t.me/<bot>?start=ex3) opens with example question 3.
EXAMPLE_LINK_PREFIXES = ("example", "ex")


@dataclass(frozen=True)
class Command:
    name: str
    run: Run
    #: The catalog key of its line in Telegram's menu.
    menu_text: str


async def start(ctx: UpdateContext, rest: str) -> None:
    """What Barb does, the instrument, and three example questions as buttons; a deep link
    (``t.me/<bot>?start=ex2``) then asks its example at once."""
    instrument = load_instrument(ctx.chat.instrument)
    # The data the questions run on: the workers' when they are on other machines (a
    # replica holds none there, and said "data ? — ?").
    meta = ctx.svc.assistant.data_meta(instrument)
    if meta is not None:
        first, last = day(meta.first_date, ctx.lang), day(meta.last_date, ctx.lang)
        note = t("synthetic_note", ctx.lang) if meta.source == "synthetic" else ""
    else:
        first, last, note = "?", "?", ""
    # The way an answer comes is the chat's /settings: with confirmation off there is no
    # plan to press Run on, and saying there is sends the person looking for a button.
    confirm = ctx.chat.settings.confirm_queries
    flow = N_("start_flow_confirm") if confirm else N_("start_flow_direct")
    # Likewise charts: with them off in /settings an answer brings the CSV alone.
    proof = N_("start_proof_chart") if ctx.chat.settings.charts else N_("start_proof_csv")
    text = t(
        "start",
        ctx.lang,
        flow=t(flow, ctx.lang, proof=t(proof, ctx.lang)),
        instrument=instrument.symbol,
        name=escape(instrument.name),
        first=first,
        last=last,
        data_note=note,
    )
    example = _linked_example(ctx, rest)
    if example is None:
        await ctx.say(text, markup=keyboards.examples(offered_examples(ctx)[:3]))
        return
    asked = t("start_example", ctx.lang, question=example)
    await ask(ctx, example, preface=f"{text}\n{escape(asked)}")


def _linked_example(ctx: UpdateContext, payload: str) -> str | None:
    payload = payload.strip().lower()
    for prefix in EXAMPLE_LINK_PREFIXES:
        number = payload.removeprefix(prefix).lstrip("_-")
        if payload.startswith(prefix) and number.isdigit():
            index = int(number) - 1
            questions = offered_examples(ctx)
            if 0 <= index < len(questions):
                return questions[index]
    return None


async def help_(ctx: UpdateContext, rest: str) -> None:
    """The commands and how to ask."""
    await ctx.say(t("help", ctx.lang))


async def examples(ctx: UpdateContext, rest: str) -> None:
    """Example questions as buttons."""
    await ctx.say_text(
        t("examples_title", ctx.lang), markup=keyboards.examples(offered_examples(ctx))
    )


def offered_examples(ctx: UpdateContext) -> list[str]:
    """The example questions in the person's language, with their chat instrument's times."""
    return example_questions(ctx.svc.examples, ctx.lang, load_instrument(ctx.chat.instrument))


async def instrument(ctx: UpdateContext, rest: str) -> None:
    """Buttons for NQ / ES / CL; the choice is remembered per chat. ``/instrument ES`` sets
    it at once, for whoever may press those buttons (``may_change_settings``): the symbol
    was ignored, the buttons shown, and the next question ran on NQ still. A symbol Barb
    does not know, or a member who may not, gets the buttons."""
    symbol = rest.strip().upper()
    if symbol in available_instruments() and await _may_switch(ctx):
        await ctx.svc.store.chats.set_instrument(ctx.chat_id, symbol)
        name = load_instrument(symbol).name
        await ctx.say_text(t("instrument_set", ctx.lang, instrument=symbol, name=name))
        return
    await ctx.say_text(
        t("instrument_prompt", ctx.lang, instrument=ctx.chat.instrument),
        markup=keyboards.instruments(available_instruments(), ctx.chat.instrument),
    )


async def may_change_settings(ctx: UpdateContext) -> bool:
    """Anyone in their private chat; in a group, its Telegram admins and Barb's own."""
    if not ctx.in_group or ctx.user_id in ctx.svc.settings.admins:
        return True
    return await ctx.svc.chat_admins.is_admin(ctx.bot, ctx.chat_id, ctx.user_id)


async def _may_switch(ctx: UpdateContext) -> bool:
    """``may_change_settings``, False when Telegram cannot say: the buttons are shown, and
    their press says why."""
    try:
        return await may_change_settings(ctx)
    except TelegramError as exc:
        log.warning("admins of %s not known for %s: %s", ctx.chat_id, ctx.user_id, exc)
        return False


async def settings(ctx: UpdateContext, rest: str) -> None:
    """Confirmation on/off, charts on/off, language auto/en/ru, and what Barb remembers
    (in a private chat only: a group sees the switches alone)."""
    preferences = None if ctx.in_group else await ctx.svc.store.preferences.for_user(ctx.user_id)
    text, markup = settings_view(ctx.chat.settings, preferences, ctx.lang)
    await ctx.say_text(text, markup=markup)


async def reset(ctx: UpdateContext, rest: str) -> None:
    """Forget the conversation (settings and usage stay). In a group, only the sender's
    part of it: their waiting plans and the questions they asked; the others' stay. A
    question of theirs the model is thinking about is stopped, unanswered, and forgotten
    with the rest. While other work holds the chat (a plan or a /query running, in a group
    another member's question), it says at once that the forgetting follows that answer."""
    user_id = ctx.user_id if ctx.in_group else None
    svc = ctx.svc
    arrived = utc_now()
    # The questions sent just before the /reset are in ``svc.thinking`` once this returns.
    await svc.locks.earlier_queued(ctx.chat_id)
    async with svc.notice_lock(ctx.chat_id):  # said only before that answer goes out
        running = await _whose_run(ctx)
        if running == ctx.user_id:
            # A running plan or /query holds both locks until its answer is out: said at
            # once, not after the whole run (p40b F25, p44b #7). The forgetting waits for
            # that answer: a plan's run stores its question and answer as it ends, so
            # clearing now would leave them as the one thing remembered after the reset.
            await _say_now(ctx, t("reset_after_run", ctx.lang))
        elif running is not None or await _others_thinking(ctx):
            # In a group the model lock may be another member's: that answer comes first.
            await _say_now(ctx, t("reset_after_other", ctx.lang))
    # The sender's own question the model thinks about is stopped before the model lock is
    # waited for: "forget" would otherwise wait, silent, for its plan, then cancel it.
    stopped = await _stop_questions(ctx)
    # The work and its confirmation in one hold of the chat's lock: a reply queued behind
    # the /reset (the answer to a message sent right after it) comes after "reset", not
    # between the two. The model lock first: a question sent after the /reset is asked
    # after it, and stays remembered.
    async with svc.model_lock(ctx.chat_id), svc.chat_lock(ctx.chat_id):
        elsewhere = await _stop_elsewhere(ctx, arrived)
        await _drop_plans(ctx)
        await svc.store.transcript.clear(ctx.chat_id, user_id=user_id)
        done = t("reset_question", ctx.lang) if stopped or elsewhere else t("reset_done", ctx.lang)
        if ctx.in_group:
            done = t("reset_done_group", ctx.lang)
            if stopped or elsewhere:
                done = t("reset_question_group", ctx.lang)
        # The stopped questions end with the confirmation (one transaction), as /cancel's.
        await ctx.say_held(escape(done), answers=[turn.work_id for turn in stopped])


async def cancel(ctx: UpdateContext, rest: str) -> None:
    """Stop the sender's question the model is answering, and drop their plan waiting for
    Run: it computes nothing and its buttons go (in a group, other members' stay). A plan
    or a /query already running cannot be stopped: that is said at once, as the Cancel
    button says it; in a group, another member's run, or question the model thinks about,
    is said to be theirs."""
    # A /query sent just before the /cancel is under way once this returns (as for /reset):
    # read before it, nothing ran yet, and the /cancel waited, silent, for its whole run,
    # then said there was nothing to cancel (p46b #4).
    arrived = utc_now()
    await ctx.svc.locks.earlier_queued(ctx.chat_id)
    async with ctx.svc.notice_lock(ctx.chat_id):
        # Not under the chat's lock: the run holds it until its answer is out, and the
        # person would hear nothing for the whole run, then "no plan waiting" (p40b F6).
        # The plan is "running" until just before its answer goes out, which waits for
        # this lock: a plan read as running here has its answer after the notice.
        running = await _whose_run(ctx)
        # Read with the run: read after the notice, a run failing meanwhile handed its plan
        # back, and this /cancel, told "the answer is on its way", dropped that plan too.
        alone = running is not None and not await _more_to_stop(ctx)
        if running is not None:
            said = t("running_cannot_cancel", ctx.lang)
            if running != ctx.user_id:  # another member's, in a group
                said = t("running_not_yours", ctx.lang)
            await _say_now(ctx, said)
    if alone:
        return
    # With a run going, a question asked after the Run, or a plan waiting, is stopped or
    # dropped once the run lets go of the chat; its confirmation follows the run's answer.
    # One hold for the work and its confirmation, as for /reset. A question whose answer is
    # going out holds this lock: its plan, once sent, is dropped here, after it.
    async with ctx.svc.chat_lock(ctx.chat_id):
        stopped = await _stop_questions(ctx)
        elsewhere = await _stop_elsewhere(ctx, arrived)
        dropped = await _drop_plans(ctx)  # with a plan the stopped turn stored, unshown
        done = t("cancel_nothing", ctx.lang)
        if any(action.kind == "confirm" for action in dropped):
            done = t("cancel_done", ctx.lang)
        elif dropped:  # a clarifying question: no plan was made (p40b F7)
            done = t("cancel_clarification", ctx.lang)
        if stopped or elsewhere:
            done = t("cancel_question", ctx.lang)
        elif not dropped and await _others_thinking(ctx):
            # In a group, the model thinks about another member's question: "nothing to
            # cancel" alone read as if the bot were idle (p44b #5). That answer, not going
            # out while this holds the chat's lock, comes after.
            done = t("thinking_not_yours", ctx.lang)
        # The stopped questions end with the confirmation (one transaction): a restart
        # in between asks them again, and never drops one without saying so.
        await ctx.say_held(escape(done), answers=[turn.work_id for turn in stopped])


async def _stop_questions(ctx: UpdateContext) -> list[Turn]:
    """Stop the sender's questions the model is answering or waits to answer, and wait
    until nothing of them can be stored any more; the turns stopped."""
    stopped = ctx.svc.thinking.stop(ctx.chat_id, ctx.user_id)
    for turn in stopped:
        await turn.ended.wait()
    return stopped


async def _stop_elsewhere(ctx: UpdateContext, arrived: datetime) -> int:
    """Stop the sender's questions that other replicas hold, asked before the command
    (HAProxy moved the chat while the model thought, p46n #3): marked stopped, their
    replicas store no answer to them. How many. "Before" by Telegram's update ids, not by
    two replicas' clocks; by the time the command ``arrived`` only for work without one."""
    return await ctx.svc.store.in_flight.stop_elsewhere(
        ctx.chat_id, ctx.user_id, update_id=ctx.update_id, before=arrived
    )


async def _others_thinking(ctx: UpdateContext) -> bool:
    """In a group, the model thinks about another member's question, here or on another
    replica. Example: Bob's /cancel while Alice's question is thought about."""
    if ctx.svc.thinking.others(ctx.chat_id, ctx.user_id):
        return True
    elsewhere = await ctx.svc.store.in_flight.elsewhere(ctx.chat_id)
    return any(w.kind == "question" and w.user_id != ctx.user_id for w in elsewhere)


async def _whose_run(ctx: UpdateContext) -> int | None:
    """Who started the chat's run computing now, if one is: a plan's or a /query's (both
    hold the chat's locks until their answer is out), the latter here or on another replica
    (HAProxy moved the chat while it computed, p46n #5). Example: Bob's /cancel while
    Alice's /query computes in their group gives Alice's id."""
    plan = await _running_plan(ctx)
    if plan is not None:
        return plan.user_id
    here = ctx.svc.queries.whose(ctx.chat_id)
    if here is not None:
        return here
    elsewhere = await ctx.svc.store.in_flight.elsewhere(ctx.chat_id)
    return next((w.user_id for w in elsewhere if w.kind == "query"), None)


async def _running_plan(ctx: UpdateContext) -> PendingAction | None:
    """The chat's plan that is running, if any: Run pressed, its query computing, its
    answer not yet stored. Example: /cancel three seconds into a 7 s run; in a group the
    run may be another member's."""
    actions = await ctx.svc.store.pending.open_for_chat(ctx.chat_id)
    running = (a for a in actions if a.kind == "confirm" and a.status == "running")
    return next(running, None)


async def _more_to_stop(ctx: UpdateContext) -> bool:
    """Beside the running plan or /query, something /cancel stops or drops: a question of the
    sender's the model is answering or waits to answer, or an action waiting for a press."""
    if ctx.svc.thinking.turns(ctx.chat_id, ctx.user_id):
        return True
    elsewhere = await ctx.svc.store.in_flight.elsewhere(ctx.chat_id)
    if any(w.kind == "question" and w.user_id == ctx.user_id for w in elsewhere):
        return True
    actions = await ctx.svc.store.pending.open_for_chat(ctx.chat_id, user_id=ctx.user_id)
    return any(action.status != "running" for action in actions)


async def _say_now(ctx: UpdateContext, text: str) -> None:
    """Say ``text`` without the chat's lock, which a running plan holds until its answer
    is out: a command's reply that cannot wait for it. Under ``notice_lock``, with the
    check that makes it true.

    Held back by Telegram, it stays queued until the answer it speaks of goes out, which
    withdraws it: that work holds the chat's lock, so the sending pass could only send it
    after the answer, where "the answer is on its way" is false (p46c N1). The command goes
    on all the same: a /reset still forgets once the answer is out."""
    sender = ctx.sender()
    queued = await sender.queue_text(
        ctx.chat_id,
        escape(text),
        reply_to=ctx.asker.reply_to,
        thread_id=ctx.asker.thread_id,
    )
    try:
        await sender.deliver(queued)
    except NotDelivered as exc:
        log.warning("notice to chat %s held back: %s", ctx.chat_id, exc)
        ctx.svc.held_notices.setdefault(queued.chat_id, []).append(queued.id)


async def _drop_plans(ctx: UpdateContext) -> list[PendingAction]:
    """Decline the sender's waiting plans (the model is told). A plan says "⏵ Cancelled."
    under it, as the Cancel button leaves it, so that scrolled back to it does not read as
    still open; a clarifying question loses its buttons. The actions declined."""
    actions = await ctx.svc.assistant.decline_pending(ctx.chat_id, ctx.user_id)
    for action in actions:
        if not action.message_id:
            continue  # stored by a stopped turn, never shown
        if action.kind == "confirm":
            lang = plan_language(action)  # the plan's own, as its other status lines
            await edit_plan_status(
                ctx.svc, ctx.bot, action, action.message_id, t("cancelled", lang), lang
            )
        else:
            await remove_keyboard(ctx.svc, ctx.bot, ctx.chat_id, action.message_id)
    return actions


async def query(ctx: UpdateContext, rest: str) -> None:
    """/query <Barb Script JSON>: run it directly, no model and no tokens, with the proof.
    It has its own rate limit and does not count against the questions'."""
    svc = ctx.svc
    wait = await svc.query_limiter.check(svc.store, ctx.user_id)
    if wait:
        await ctx.say_text(t("too_fast", ctx.lang, seconds=int(wait) + 1))
        return
    asker = ctx.asker
    # In flight before it runs, the update handled in the same transaction: a kill -9 from
    # here on leaves it for the next start.
    payload = question_work(asker, rest, asker.reply_to)
    work = await svc.store.in_flight.start(
        asker.chat_id, asker.user_id, "query", payload, update_id=ctx.update_id
    )
    await answer_query(
        svc,
        ctx.bot,
        asker,
        rest,
        work_id=work.id,
        chat=ctx.chat,
        question_id=payload["question_id"],
    )


async def usage(ctx: UpdateContext, rest: str) -> None:
    """Tokens and cost today; all chats for admins. A model without a price shows
    "price unknown", not $0 (``usage_view``)."""
    store = ctx.svc.store
    mine = await store.usage.for_user(ctx.user_id)
    everyone, chats = None, 0
    if ctx.user_id in ctx.svc.settings.admins:
        everyone = await store.usage.total()
        chats = len({line.chat_id for line in await store.usage.report()})
    await ctx.say_text(usage_text(mine, ctx.lang, everyone=everyone, chats=chats))


COMMANDS: tuple[Command, ...] = (
    Command("start", start, N_("command_start")),
    Command("help", help_, N_("command_help")),
    Command("instrument", instrument, N_("command_instrument")),
    Command("settings", settings, N_("command_settings")),
    Command("cancel", cancel, N_("command_cancel")),
    Command("reset", reset, N_("command_reset")),
    Command("query", query, N_("command_query")),
    Command("examples", examples, N_("command_examples")),
    Command("usage", usage, N_("command_usage")),
)


def menu(lang: str) -> list[BotCommand]:
    """Telegram's command menu in ``lang``, from the same table as the handlers."""
    return [BotCommand(c.name, t(c.menu_text, lang)) for c in COMMANDS]


def handler(command: Command) -> Callable[[Update, ContextTypes.DEFAULT_TYPE], Awaitable[None]]:
    """The PTB callback of ``command``: the update's context, loaded once, and its args."""

    async def handle(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        ctx = await load_context(update, context)
        message = update.effective_message
        words = (message.text or "").split(maxsplit=1) if message is not None else []
        await command.run(ctx, words[1] if len(words) > 1 else "")

    handle.__name__ = f"cmd_{command.name}"
    handle.__doc__ = command.run.__doc__
    return handle


__all__ = ["COMMANDS", "Command", "handler", "menu"]
