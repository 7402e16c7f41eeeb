"""One handler per kind of button; ``BUTTONS`` maps each callback-data prefix to its handler.

Presses on a plan (Run, Cancel, a suggested reply) go through the assistant's confirm gate
(``Assistant.take``): it alone decides whether a press may go ahead. Any other press computes
nothing and says why: the answer is on its way (the plan runs) or below (it ran), the plan was
cancelled or replaced, or it is out of date (reset, expired); a plan whose buttons can do
nothing loses them, if it still shows them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import CallbackQuery, Message, Update
from telegram.error import BadRequest, ChatMigrated, TelegramError
from telegram.ext import ContextTypes

from barb.i18n import LANGUAGES, N_, language
from barb.instruments import available_instruments, load_instrument
from bot.assistant.gate import Press, Taken, Verdict, verdict_on
from bot.assistant.orchestrator import option_text, plan_language, question_asked, shown_queries
from bot.store.records import Chat, PendingAction
from bot.telegram import keyboards
from bot.telegram.answering import (
    answer_cancel,
    answer_question,
    edit_plan_status,
    question_work,
    remove_keyboard,
    run_plan,
    run_work,
)
from bot.telegram.asking import ask, too_fast
from bot.telegram.commands import may_change_settings, offered_examples
from bot.telegram.render import query_html
from bot.telegram.settings_view import settings_view
from bot.telegram.update_context import UpdateContext, load_context
from bot.texts import language_for, t
from bot.work_order import acknowledged

log = logging.getLogger(__name__)

Handler = Callable[[UpdateContext, CallbackQuery, list[str]], Awaitable[None]]


async def acknowledge(query: CallbackQuery, text: str | None = None) -> None:
    """Stop the button spinning. Telegram may refuse (a query id that expired while the bot
    was down) or fail (HTTP 500): the press is handled all the same, only the spinner
    lingers, so that is logged and nothing more."""
    try:
        await query.answer(text)
    except TelegramError as exc:
        log.info("press %s not acknowledged: %s", query.id, exc)


def _pressed_message_id(query: CallbackQuery) -> int | None:
    return query.message.message_id if query.message else None


def _shows_buttons(query: CallbackQuery) -> bool:
    """The pressed message still has buttons, as Telegram has it now (a press carries the
    message in its current state): removing buttons it no longer shows is refused."""
    message = query.message
    markup = message.reply_markup if isinstance(message, Message) else None
    return markup is not None and any(markup.inline_keyboard)


async def _refused(ctx: UpdateContext, query: CallbackQuery, taken: Taken, press: Press) -> None:
    """A press that may not go ahead says why, in the presser's language (the toast is
    theirs): to the one who asked, the plan's own, as "Running…" was (a Russian question
    from an English phone pressed Run twice and read "Считаю…", then "Already running");
    to anyone else, their Telegram's. A plan whose buttons can do nothing loses them, if it
    still shows them."""
    action = taken.action
    theirs = action is not None and action.user_id == ctx.user_id
    lang = plan_language(action) if theirs else ctx.lang
    await acknowledge(query, t(taken.verdict.text_key(press), lang))
    message_id = _pressed_message_id(query)
    if taken.verdict.buttons_dead and message_id is not None and _shows_buttons(query):
        await remove_keyboard(ctx.svc, ctx.bot, ctx.chat_id, message_id)


# --- the plan's buttons ---------------------------------------------------------------------


async def _take(
    ctx: UpdateContext, query: CallbackQuery, action_id: str, press: Press, work: dict[str, Any]
) -> Taken | None:
    """The confirm gate's decision on Run or Cancel (``Assistant.take``), the press made as
    the presser, or, on a plan an anonymous admin asked (``_asked_by_group``), as the group
    when the presser is one of its admins. None when it may not go ahead: the press was
    answered why, and a plan whose buttons can do nothing lost them."""
    svc = ctx.svc
    taken = await svc.assistant.take(
        action_id, ctx.user_id, press, work=work, update_id=ctx.update_id
    )
    shown = taken.action
    if taken.verdict is Verdict.NOT_YOURS and shown is not None and _asked_by_group(ctx, shown):
        if not await _group_admin_pressed(ctx, query):
            return None
        taken = await svc.assistant.take(
            action_id, shown.user_id, press, work=work, update_id=ctx.update_id
        )
    if taken.verdict is not Verdict.OK or taken.action is None:
        await _refused(ctx, query, taken, press)
        return None
    return taken


def _asked_by_group(ctx: UpdateContext, action: PendingAction) -> bool:
    """Whether ``action`` was asked on behalf of the group it is in, by an anonymous admin
    (``update_context.asker_of``: its asker is the group; the group it was, before Telegram
    made it a supergroup). Telegram shows the bot no person behind it, and a press always
    comes from someone's own account: any of the group's admins may press its buttons."""
    return ctx.in_group and ctx.svc.moves.same(action.user_id, ctx.chat_id)


async def _group_admin_pressed(ctx: UpdateContext, query: CallbackQuery) -> bool:
    """The presser is one of the group's admins (Telegram's answer, kept a minute:
    ``ChatAdmins``). If not, or if Telegram cannot say, the press is answered so, and
    False: nothing is pressed."""
    try:
        admin = await ctx.svc.chat_admins.is_admin(ctx.bot, ctx.chat_id, ctx.user_id)
    except TelegramError as exc:
        await _admins_unknown(ctx, query, exc)
        return False
    if not admin:
        await acknowledge(query, t("not_yours_anonymous", ctx.lang))
    return admin


async def on_run(ctx: UpdateContext, query: CallbackQuery, parts: list[str]) -> None:
    """Run: the frozen plan runs, exactly as shown."""
    svc = ctx.svc
    action_id = parts[0] if parts else ""
    # Claimed before anything else, with the run recorded in flight: a double press (or two
    # devices) cannot run twice, and a kill -9 from here on leaves the run for the next start.
    taken = await _take(ctx, query, action_id, Press.RUN, run_work(action_id, ctx.lang))
    if taken is None:  # refused, and told why
        return
    assert taken.work_id is not None
    action = taken.action
    # The plan's own language from here on, not the presser's: its status is written under
    # it, and the answer is in it too.
    lang = plan_language(action)
    plan_message_id = _pressed_message_id(query)
    with svc.backlog.joined() as ahead:
        # Acknowledging comes after the claim and does not decide the run: a press Telegram
        # forgot (expired while the bot was down, a 500) still runs.
        await acknowledge(query, t("running", lang))
        running = t("running_queued", lang, ahead=ahead) if ahead else t("running", lang)
        await edit_plan_status(
            svc, ctx.bot, action, plan_message_id, running, lang, record_move=True
        )
        acknowledged()
        await run_plan(
            svc,
            ctx.bot,
            action,
            lang=lang,
            work_id=taken.work_id,
            chat=ctx.chat,
            plan_message_id=plan_message_id,
        )


async def on_cancel(ctx: UpdateContext, query: CallbackQuery, parts: list[str]) -> None:
    """Cancel: nothing runs; the model is told and answers briefly."""
    action_id = parts[0] if parts else ""
    # Cancelled with its wording recorded in flight: a kill -9 from here on leaves it for
    # the next start.
    taken = await _take(ctx, query, action_id, Press.CANCEL, run_work(action_id, ctx.lang))
    if taken is None:  # refused, and told why
        return
    assert taken.work_id is not None and taken.action is not None
    lang = plan_language(taken.action)  # the plan's, as for Run
    await acknowledge(query, t("cancelled", lang))
    acknowledged()
    await answer_cancel(
        ctx.svc,
        ctx.bot,
        taken.action,
        lang=lang,
        work_id=taken.work_id,
        plan_message_id=_pressed_message_id(query),
    )


async def on_option(ctx: UpdateContext, query: CallbackQuery, parts: list[str]) -> None:
    """A suggested reply: asked as if typed, once however often it is pressed."""
    svc = ctx.svc
    action_id = parts[0] if parts else ""
    option = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    # Read first: a tap on a question already answered is told so before it counts against
    # the questions' rate limit.
    shown = await svc.store.pending.get(action_id)
    owner = ctx.user_id
    verdict = verdict_on(shown, owner)
    if verdict is Verdict.NOT_YOURS and shown is not None and _asked_by_group(ctx, shown):
        if not await _group_admin_pressed(ctx, query):
            return
        owner = shown.user_id
        verdict = verdict_on(shown, owner)
    answer = option_text(shown, option)
    if verdict is not Verdict.OK:
        await _refused(ctx, query, Taken(verdict=verdict, action=shown), Press.OPTION)
        return
    if answer is None:  # no such reply: nothing to ask
        await acknowledge(query)
        return
    # A press has no message of its own: what it asks replies to the question the
    # clarification was asked about, as every plan and answer does (its plan replied to
    # nothing, p46ac #8).
    # Asked as the one who asked the question, and limited as theirs: the group, for an
    # anonymous admin's.
    asker = ctx.asker.model_copy(update={"reply_to": question_asked(shown), "user_id": owner})
    if await too_fast(ctx, answer, asker=asker):
        await acknowledge(query)  # not yet: the question and its buttons stay
        return
    # Claimed with the question recorded in flight, as Run claims its plan: a second tap
    # (or a second device) is told the question was answered, and a kill -9 from here on
    # leaves the question for the next start, which answers the clarification with it.
    work = question_work(asker, answer, asker.reply_to, clarification=action_id)
    taken = await svc.assistant.take(
        action_id,
        owner,
        Press.OPTION,
        work=work,
        update_id=ctx.update_id,
    )
    if taken.verdict is not Verdict.OK or taken.work_id is None:
        await _refused(ctx, query, taken, Press.OPTION)
        return
    await acknowledge(query)
    message_id = _pressed_message_id(query)
    if message_id is not None:
        await remove_keyboard(ctx.svc, ctx.bot, ctx.chat_id, message_id)
    # A continuation the model fails puts the replies back (``answering._offer_again``).
    await answer_question(
        svc,
        ctx.bot,
        asker,
        answer,
        work_id=taken.work_id,
        reply_to=asker.reply_to,
        chat=ctx.chat,
        clarification=action_id,  # this one, not whichever is open when the model is free
        question_id=work["question_id"],
    )


# --- other buttons --------------------------------------------------------------------------


async def on_show_query(ctx: UpdateContext, query: CallbackQuery, parts: list[str]) -> None:
    """The Barb Script behind an answer, to check it or run it again with /query."""
    await acknowledge(query)
    question_id = parts[0] if parts else ""
    rows = [row.data for row in await ctx.svc.store.transcript.question(ctx.chat_id, question_id)]
    answered = [data for data in rows if data and shown_queries(data)]
    # Every query of the answer: two in one plan (NQ's and ES's) are both shown.
    shown = [query for data in answered for query in shown_queries(data)]
    if not shown:
        await ctx.say_text(t("no_query", ctx.lang))
        return
    # In the answer's language, as its plan below the query is (not the presser's phone's),
    # and, in a group, replying to the question as the answer does: both are kept with the
    # answer's data (answers stored before they were: the presser's language, no reply).
    answered_in = answered[-1].get("language")
    lang = language(answered_in) if answered_in else ctx.lang
    heading = t("query_shown", lang)
    # A long query comes in several messages, each a whole <pre> block: said together.
    messages = [m for data in shown for m in query_html(heading, data["query"], data.get("plan"))]
    # A reply to the query ("and for ES?") follows this answer, not the chat's last data.
    await ctx.say(*messages, reply_to=answered[-1].get("reply_to"), question_id=question_id)


async def on_held_file(ctx: UpdateContext, query: CallbackQuery, parts: list[str]) -> None:
    """The CSV behind an answer's button, sent once; a press after it was sent is told so."""
    sender = ctx.sender()
    released = None
    if len(parts) == 2 and parts[1].isdigit():
        released = await sender.release_held(ctx.chat_id, parts[0], int(parts[1]))
    await acknowledge(query, None if released else t("csv_gone", ctx.lang))
    async with ctx.svc.chat_lock(ctx.chat_id):
        # Under the chat's lock, as the sending pass sends: one of them sends it, once.
        if released is not None:
            await sender.send_released(released)
        # Sent (or on its way, or no longer kept): its button can do nothing more, while
        # the answer's Query button stays. Under the lock too: two CSVs of one message
        # pressed together take their buttons away one after the other.
        await _drop_spent_buttons(ctx, query, parts[0] if parts else "")


async def _drop_spent_buttons(ctx: UpdateContext, query: CallbackQuery, question_id: str) -> None:
    """The pressed button goes from its message, and so does every other CSV button of the
    answer whose file is no longer kept, the others stay; nothing is asked of Telegram when
    the message no longer shows them.

    The press carries the message as it was when pressed: two CSVs pressed together ("NQ ·
    CSV", "ES · CSV") both carry both buttons, and the second edit put the first, spent
    button back (p43e #8). What the outbox still keeps says which are spent, whatever the
    press saw."""
    message = query.message
    if not isinstance(message, Message) or message.reply_markup is None or not query.data:
        return
    kept = {
        keyboards.data(keyboards.HELD_FILE, question_id, file.payload.get("proof"))
        for file in await ctx.svc.store.outbox.held(ctx.chat_id, question_id)
    }
    files = keyboards.data(keyboards.HELD_FILE, question_id) + keyboards.SEPARATOR
    spent = [
        button.callback_data
        for row in message.reply_markup.inline_keyboard
        for button in row
        if isinstance(button.callback_data, str)
        and button.callback_data.startswith(files)
        and button.callback_data not in kept
    ]
    left = keyboards.without(message.reply_markup, query.data, *spent)
    if left is message.reply_markup:
        return
    try:
        await ctx.bot.edit_message_reply_markup(ctx.chat_id, message.message_id, reply_markup=left)
    except TelegramError as exc:  # edited or deleted meanwhile: nothing to take away
        log.debug(
            "button %s of %s/%s not removed: %s", query.data, ctx.chat_id, message.message_id, exc
        )


async def on_instrument(ctx: UpdateContext, query: CallbackQuery, parts: list[str]) -> None:
    """An instrument chosen under /instrument: in a group, the group's, so its admins' to
    choose, as its /settings switches are (p46ah #10)."""
    if not await _switch_allowed(ctx, query):
        return
    await acknowledge(query)
    symbol = parts[0] if parts else ""
    if symbol not in available_instruments():
        return
    await ctx.svc.store.chats.set_instrument(ctx.chat_id, symbol)
    name = load_instrument(symbol).name
    await query.edit_message_text(t("instrument_set", ctx.lang, instrument=symbol, name=name))


#: The switches under /settings that change the chat for everyone in it.
CHAT_SWITCHES = frozenset({"confirm", "charts", "language"})


async def on_setting(ctx: UpdateContext, query: CallbackQuery, parts: list[str]) -> None:
    """A switch under /settings; the settings message shows the new state. A group's
    switches are its admins' to press; anyone else is told so and nothing changes."""
    name = parts[0] if parts else ""
    if name in CHAT_SWITCHES and not await _switch_allowed(ctx, query):
        return
    await acknowledge(query)
    store = ctx.svc.store
    current = ctx.chat.settings
    chat = ctx.chat
    if name == "confirm":
        chat = await store.chats.update_settings(
            ctx.chat_id, confirm_queries=not current.confirm_queries
        )
    elif name == "charts":
        chat = await store.chats.update_settings(ctx.chat_id, charts=not current.charts)
    elif name == "language":
        # Telegram's language, then each of Barb's in turn, and round again.
        choices = ("auto", *LANGUAGES)
        chosen = choices[(choices.index(current.language) + 1) % len(choices)]
        chat = await store.chats.update_settings(ctx.chat_id, language=chosen)
    elif name == "forget":  # the presser's own memory (a group's /settings has no button)
        await store.preferences.clear(ctx.user_id)
    await _show_settings_again(ctx, query, chat)


async def _switch_allowed(ctx: UpdateContext, query: CallbackQuery) -> bool:
    """The presser may change what the chat is for everyone (``may_change_settings``);
    if not, or if Telegram cannot say, the press is answered why and False."""
    try:
        allowed = await may_change_settings(ctx)
    except TelegramError as exc:
        await _admins_unknown(ctx, query, exc)
        return False
    if not allowed:
        await acknowledge(query, t("settings_admins_only", ctx.lang))
    return allowed


async def _admins_unknown(ctx: UpdateContext, query: CallbackQuery, exc: TelegramError) -> None:
    """Telegram did not say whether the presser is the group's admin (a 502, a timeout, the
    bot removed): nothing changes and the press is answered, never "Something broke" in the
    group. A group that became a supergroup (``ChatMigrated``) moves there, as the sender
    moves it; the switch is pressed again under /settings in the supergroup."""
    if isinstance(exc, ChatMigrated):
        log.info("chat %s is now %s", ctx.chat_id, exc.new_chat_id)
        await ctx.svc.chat_moved(ctx.chat_id, exc.new_chat_id)
    else:
        log.warning("admins of %s not known for %s: %s", ctx.chat_id, ctx.user_id, exc)
    await acknowledge(query, t("settings_admins_unknown", ctx.lang))


async def on_forget_preference(ctx: UpdateContext, query: CallbackQuery, parts: list[str]) -> None:
    """One remembered preference forgotten; only its owner's press finds it."""
    pref_id = int(parts[0]) if parts and parts[0].isdigit() else None
    store = ctx.svc.store
    forgotten = pref_id is not None and await store.preferences.remove(ctx.user_id, pref_id)
    # Answered once the (short) delete is done, so that the answer can say whether it was.
    key = N_("preference_forgotten") if forgotten else N_("preference_not_found")
    await acknowledge(query, t(key, ctx.lang))
    if forgotten:
        await _show_settings_again(ctx, query, ctx.chat)


async def _show_settings_again(ctx: UpdateContext, query: CallbackQuery, chat: Chat) -> None:
    # In a group, never the presser's memory: the message is everyone's (and one sent before
    # groups saw the switches alone loses the memory it showed).
    preferences = None if ctx.in_group else await ctx.svc.store.preferences.for_user(ctx.user_id)
    # In the language the settings now say, if that is what changed.
    lang = language_for(chat.settings.language, "", ctx.asker.language_code)
    text, markup = settings_view(chat.settings, preferences, lang)
    try:
        await query.edit_message_text(text, reply_markup=markup)
    except BadRequest as exc:
        # Nothing changed (forgetting when nothing is remembered): the message is right as
        # it is, and the press was already answered.
        if "not modified" not in exc.message.lower():
            raise


async def on_example(ctx: UpdateContext, query: CallbackQuery, parts: list[str]) -> None:
    """An example question: asked as if typed."""
    await acknowledge(query)
    index = int(parts[0]) if parts and parts[0].isdigit() else -1
    questions = offered_examples(ctx)
    if 0 <= index < len(questions):
        await ask(ctx, questions[index])


BUTTONS: dict[str, Handler] = {
    keyboards.RUN: on_run,
    keyboards.CANCEL: on_cancel,
    keyboards.OPTION: on_option,
    keyboards.SHOW_QUERY: on_show_query,
    keyboards.HELD_FILE: on_held_file,
    keyboards.INSTRUMENT: on_instrument,
    keyboards.SETTING: on_setting,
    keyboards.FORGET_PREFERENCE: on_forget_preference,
    keyboards.EXAMPLE: on_example,
}


def callback(handle: Handler) -> Callable[[Update, ContextTypes.DEFAULT_TYPE], Awaitable[None]]:
    """The PTB callback for one kind of button: the update's context, loaded once."""

    async def on_press(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None
        _, parts = keyboards.parse(query.data or "")
        ctx = await load_context(update, context)
        await handle(ctx, query, parts)

    on_press.__name__ = handle.__name__
    on_press.__doc__ = handle.__doc__
    return on_press


async def on_unknown_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A button of an older version of the bot: out of date, and its buttons go."""
    ctx = await load_context(update, context)
    query = update.callback_query
    assert query is not None
    await _refused(ctx, query, Taken(verdict=Verdict.STALE), Press.RUN)


__all__ = ["BUTTONS", "acknowledge", "callback", "on_unknown_button"]
