"""Telegram handlers: short, typed, one idea each. The work is in the assistant and Sender."""

from __future__ import annotations

import json
import logging
import uuid

from telegram import Chat as TelegramChat
from telegram import Message, MessageEntity, Update
from telegram.constants import ChatAction, ChatType, ParseMode
from telegram.error import Forbidden
from telegram.ext import ApplicationHandlerStop, ContextTypes

from barb.data.store import data_path, read_meta
from barb.errors import BarbError
from barb.instruments import available_instruments, load_instrument
from bot.assistant.plan import render_plan
from bot.assistant.replies import Asker, Proof, Reply
from bot.pool.jobs import QueryJob
from bot.store.records import Chat
from bot.telegram import keyboards
from bot.telegram.render import escape, query_html
from bot.telegram.sender import NotDelivered
from bot.telegram.services import BotServices, services
from bot.telegram.settings_view import settings_view
from bot.texts import language_for, t
from bot.work_order import acknowledged, arrived

log = logging.getLogger(__name__)

#: The plan message already says "Running…": "sending photo…" only once a query takes a while.
QUERY_ACTION_AFTER_S = 1.0


# --- gates (groups -3 to -1: run before every handler) --------------------------------------


async def stamp_arrival(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The work for this update begins now. Under load the queues every chat shares (store
    writes, Telegram's flood limit) serve what acknowledges someone first, then older
    updates, so that answers finish in the order they were asked (``bot.work_order``)."""
    arrived()


async def drop_duplicates(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The same update delivered twice is handled once."""
    if not await services(context).store.updates.mark(update.update_id):
        raise ApplicationHandlerStop


async def enforce_access(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Outside the allowlists nobody gets an answer, and nobody costs a token."""
    user = update.effective_user
    chat = update.effective_chat
    if chat is None or not services(context).settings.allows(user.id if user else None, chat.id):
        log.info("ignored update from user %s in chat %s", user and user.id, chat and chat.id)
        raise ApplicationHandlerStop


# --- helpers --------------------------------------------------------------------------------


def _asker(update: Update) -> Asker:
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None and user is not None
    chat_type = chat.type if chat.type in (ChatType.GROUP, ChatType.SUPERGROUP) else "private"
    return Asker(
        chat_id=chat.id, user_id=user.id, chat_type=chat_type, language_code=user.language_code
    )


def _addressed_text(message: Message, bot_id: int, username: str) -> str | None:
    """In a group: the question without the @mention, if the bot is mentioned or replied to."""
    text = message.text or ""
    if message.chat.type == TelegramChat.PRIVATE:
        return text
    mentioned = False
    for entity in message.entities or ():
        if entity.type == MessageEntity.MENTION:
            mention = message.parse_entity(entity)
            if mention.lstrip("@").lower() == username.lower():
                mentioned = True
                text = text.replace(mention, " ")
        elif entity.type == MessageEntity.TEXT_MENTION and entity.user and entity.user.id == bot_id:
            mentioned = True
            text = text.replace(message.parse_entity(entity), " ")
    replied = message.reply_to_message is not None and (
        message.reply_to_message.from_user is not None
        and message.reply_to_message.from_user.id == bot_id
    )
    return " ".join(text.split()) if (mentioned or replied) else None


async def _chat_and_lang(svc: BotServices, update: Update) -> tuple[Chat | None, str]:
    """The stored chat (None if new) and the language to answer the update in."""
    chat = await svc.store.chats.get(update.effective_chat.id) if update.effective_chat else None
    setting = chat.settings.language if chat else "auto"
    code = update.effective_user.language_code if update.effective_user else None
    return chat, language_for(setting, "", code)


async def _lang(svc: BotServices, update: Update) -> str:
    return (await _chat_and_lang(svc, update))[1]


async def _answer(
    svc: BotServices, update: Update, context: ContextTypes.DEFAULT_TYPE, text: str
) -> None:
    """Ask the assistant under the chat's lock, showing 'typing…', and send its reply."""
    asker = _asker(update)
    message = update.effective_message
    lang = language_for("auto", text, asker.language_code)
    wait = svc.limiter.check(asker.user_id)
    if wait:
        await message.reply_text(t("too_fast", lang, seconds=int(wait) + 1))
        return
    sender = svc.sender(context.bot)
    async with svc.chat_lock(asker.chat_id), svc.showing(context.bot, asker.chat_id):
        acknowledged()  # 'typing…' is on its way
        # Plans waiting for this person lose their buttons: the new message declines them.
        for action in await svc.store.pending.open_for_chat(asker.chat_id):
            if action.kind == "confirm" and action.message_id:
                await _remove_keyboard(context, asker.chat_id, action.message_id)
        reply = await svc.assistant.ask(asker, text)
        reply_to = message.message_id if asker.chat_type != "private" else None
        await sender.reply(asker.chat_id, reply, reply_to=reply_to)


async def _remove_keyboard(
    context: ContextTypes.DEFAULT_TYPE, chat_id: int, message_id: int
) -> None:
    try:
        await context.bot.edit_message_reply_markup(chat_id, message_id, reply_markup=None)
    except Exception:  # already edited or deleted: nothing to remove
        log.debug("keyboard of %s/%s already gone", chat_id, message_id)


# --- messages -------------------------------------------------------------------------------


async def on_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A question: every text in private chats; in groups only when addressed to the bot."""
    message = update.effective_message
    if message is None or not message.text:
        return
    text = _addressed_text(message, context.bot.id, context.bot.username)
    if not text:
        return
    svc = services(context)
    await svc.store.chats.ensure(message.chat.id, _asker(update).chat_type)
    await _answer(svc, update, context, text)


# --- buttons --------------------------------------------------------------------------------


async def on_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Run / Cancel / a suggested reply / show the query / settings and instrument choices."""
    query = update.callback_query
    prefix, parts = keyboards.parse(query.data or "")
    svc = services(context)
    chat, lang = await _chat_and_lang(svc, update)
    if prefix in (keyboards.RUN, keyboards.CANCEL, keyboards.OPTION):
        await _on_pending_button(svc, update, context, prefix, parts, chat, lang)
    elif prefix == keyboards.SHOW_QUERY:
        await query.answer()  # first, so the button stops spinning
        await _show_query(svc, update, context, parts[0], lang)
    elif prefix == keyboards.INSTRUMENT:
        await query.answer()
        await _set_instrument(svc, update, parts[0], lang)
    elif prefix == keyboards.SETTING:
        await query.answer()
        await _toggle_setting(svc, update, parts[0], lang)
    elif prefix == keyboards.FORGET_PREFERENCE:
        await _forget_preference(svc, update, parts, lang)
    elif prefix == keyboards.EXAMPLE:
        await query.answer()
        index = int(parts[0])
        if 0 <= index < len(svc.examples):
            await svc.store.chats.ensure(update.effective_chat.id, _asker(update).chat_type)
            await _answer(svc, update, context, svc.examples[index])
    else:
        await query.answer()


async def _on_pending_button(
    svc: BotServices,
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    prefix: str,
    parts: list[str],
    chat: Chat | None,
    lang: str,
) -> None:
    query = update.callback_query
    user_id = update.effective_user.id
    chat_id = update.effective_chat.id
    if prefix == keyboards.RUN:
        # Claim before anything else: a double press (or two devices) cannot run twice.
        claim = await svc.store.pending.claim(parts[0], user_id) if parts else None
        action = claim.action if claim else None
        usable = bool(claim and claim.won)
    else:
        action = await svc.store.pending.get(parts[0]) if parts else None
        usable = action is not None and action.status == "pending" and action.user_id == user_id
    if not usable:
        if action is None or action.status != "pending":
            await query.answer(t("gone" if action is None else "already", lang))
        else:
            await query.answer(t("not_yours", lang), show_alert=False)
        return
    assert action is not None
    sender = svc.sender(context.bot)
    if prefix == keyboards.RUN:
        with svc.backlog.joined() as ahead:
            await query.answer(t("running", lang))
            running = t("running_queued", lang, ahead=ahead) if ahead else t("running", lang)
            await _edit_status(query.message, running)
            acknowledged()
            async with (
                svc.chat_lock(chat_id),
                svc.showing(
                    context.bot, chat_id, ChatAction.UPLOAD_PHOTO, after_s=QUERY_ACTION_AFTER_S
                ),
            ):
                reply = await svc.assistant.continue_claimed(action, chat=chat)
                await sender.reply(chat_id, reply)
        await _edit_status(query.message, t("done", lang))
    elif prefix == keyboards.CANCEL:
        await query.answer(t("cancelled", lang))
        acknowledged()
        async with svc.chat_lock(chat_id), svc.showing(context.bot, chat_id):
            reply = await svc.assistant.resume(action.id, user_id, run=False)
            await _edit_status(query.message, t("cancelled", lang))
            await sender.reply(chat_id, reply)
    else:
        await query.answer()
        options = action.payload.get("view", {}).get("options", [])
        index = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else -1
        if not 0 <= index < len(options):
            return
        await _remove_keyboard(context, chat_id, query.message.message_id)
        async with svc.chat_lock(chat_id), svc.showing(context.bot, chat_id):
            acknowledged()  # the keyboard is gone, 'typing…' on its way
            reply = await svc.assistant.ask(_asker(update), options[index])
            await sender.reply(chat_id, reply)


async def _edit_status(message: Message | None, status: str) -> None:
    """The plan message loses its buttons and shows where it stands."""
    if message is None or not isinstance(message, Message):
        return
    body = (message.text_html or "").split("\n\n⏵", 1)[0]
    try:
        await message.edit_text(
            f"{body}\n\n⏵ {escape(status)}", parse_mode=ParseMode.HTML, reply_markup=None
        )
    except Exception:  # not modified / gone: the status is cosmetic
        log.debug("could not edit plan message %s", message.message_id)


async def _show_query(
    svc: BotServices,
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    question_id: str,
    lang: str,
) -> None:
    chat_id = update.effective_chat.id
    rows = await svc.store.transcript.question(chat_id, question_id)
    shown = [row.data for row in rows if row.data and row.data.get("query")]
    sender = svc.sender(context.bot)
    if not shown:
        await sender.text(chat_id, escape(t("no_query", lang)))
        return
    for data in shown:
        await sender.text(
            chat_id, query_html(t("query_shown", lang), data["query"], data.get("plan"))
        )


async def _set_instrument(svc: BotServices, update: Update, symbol: str, lang: str) -> None:
    chat_id = update.effective_chat.id
    if symbol not in available_instruments():
        return
    await svc.store.chats.ensure(chat_id, _asker(update).chat_type)
    await svc.store.chats.set_instrument(chat_id, symbol)
    instrument = load_instrument(symbol)
    await update.callback_query.edit_message_text(
        t("instrument_set", lang, instrument=symbol, name=instrument.name)
    )


async def _toggle_setting(svc: BotServices, update: Update, name: str, lang: str) -> None:
    chat_id = update.effective_chat.id
    chat = await svc.store.chats.ensure(chat_id, _asker(update).chat_type)
    current = chat.settings
    if name == "confirm":
        chat = await svc.store.chats.update_settings(
            chat_id, confirm_queries=not current.confirm_queries
        )
    elif name == "charts":
        chat = await svc.store.chats.update_settings(chat_id, charts=not current.charts)
    elif name == "language":
        cycle = {"auto": "en", "en": "ru", "ru": "auto"}
        chat = await svc.store.chats.update_settings(chat_id, language=cycle[current.language])
    elif name == "forget":
        await svc.store.preferences.clear(update.effective_user.id)
    await _show_settings_again(svc, update, chat, lang)


async def _forget_preference(svc: BotServices, update: Update, parts: list[str], lang: str) -> None:
    """One remembered preference forgotten; only its owner's press finds it."""
    query = update.callback_query
    pref_id = int(parts[0]) if parts and parts[0].isdigit() else None
    user_id = update.effective_user.id
    forgotten = pref_id is not None and await svc.store.preferences.remove(user_id, pref_id)
    # Answered once the (short) delete is done, so that the answer can say whether it was.
    await query.answer(t("preference_forgotten" if forgotten else "preference_not_found", lang))
    if forgotten:
        chat = await svc.store.chats.ensure(update.effective_chat.id, _asker(update).chat_type)
        await _show_settings_again(svc, update, chat, lang)


async def _show_settings_again(svc: BotServices, update: Update, chat: Chat, lang: str) -> None:
    preferences = await svc.store.preferences.for_user(update.effective_user.id)
    text, markup = settings_view(chat.settings, preferences, lang)
    await update.callback_query.edit_message_text(text, reply_markup=markup)


# --- commands -------------------------------------------------------------------------------


async def cmd_start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """What Barb does, the instrument, and three example questions as buttons."""
    svc = services(context)
    chat = await svc.store.chats.ensure(update.effective_chat.id, _asker(update).chat_type)
    lang = await _lang(svc, update)
    instrument = load_instrument(chat.instrument)
    try:
        meta = read_meta(data_path(instrument.symbol, svc.assistant.engine_settings))
        first, last = meta.first_date.isoformat(), meta.last_date.isoformat()
        note = t("synthetic_note", lang) if meta.source == "synthetic" else ""
    except (OSError, BarbError):
        first, last, note = "?", "?", ""
    text = t(
        "start",
        lang,
        instrument=instrument.symbol,
        name=escape(instrument.name),
        first=first,
        last=last,
        data_note=note,
    )
    await svc.sender(context.bot).text(
        update.effective_chat.id, text, markup=keyboards.examples(svc.examples[:3])
    )


async def cmd_help(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The commands and how to ask."""
    svc = services(context)
    lang = await _lang(svc, update)
    await svc.store.chats.ensure(update.effective_chat.id, _asker(update).chat_type)
    await svc.sender(context.bot).text(update.effective_chat.id, t("help", lang))


async def cmd_examples(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Example questions as buttons."""
    svc = services(context)
    lang = await _lang(svc, update)
    await svc.store.chats.ensure(update.effective_chat.id, _asker(update).chat_type)
    await svc.sender(context.bot).text(
        update.effective_chat.id,
        escape(t("examples_title", lang)),
        markup=keyboards.examples(svc.examples),
    )


async def cmd_instrument(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Buttons for NQ / ES / CL; the choice is remembered per chat."""
    svc = services(context)
    lang = await _lang(svc, update)
    chat = await svc.store.chats.ensure(update.effective_chat.id, _asker(update).chat_type)
    await svc.sender(context.bot).text(
        update.effective_chat.id,
        escape(t("instrument_prompt", lang, instrument=chat.instrument)),
        markup=keyboards.instruments(available_instruments(), chat.instrument),
    )


async def cmd_settings(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Confirmation on/off, charts on/off, language auto/en/ru, and what Barb remembers."""
    svc = services(context)
    lang = await _lang(svc, update)
    chat = await svc.store.chats.ensure(update.effective_chat.id, _asker(update).chat_type)
    preferences = await svc.store.preferences.for_user(update.effective_user.id)
    text, markup = settings_view(chat.settings, preferences, lang)
    await svc.sender(context.bot).text(update.effective_chat.id, escape(text), markup=markup)


async def cmd_reset(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Forget the conversation (settings and usage stay)."""
    svc = services(context)
    lang = await _lang(svc, update)
    chat_id = update.effective_chat.id
    await svc.store.chats.ensure(chat_id, _asker(update).chat_type)
    async with svc.chat_lock(chat_id):
        for action in await svc.store.pending.decline_for_chat(chat_id):
            if action.message_id:
                await _remove_keyboard(context, chat_id, action.message_id)
        await svc.store.transcript.clear(chat_id)
    await svc.sender(context.bot).text(chat_id, escape(t("reset_done", lang)))


async def cmd_query(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/query <Barb Script JSON>: run it directly, no model, same proof."""
    svc = services(context)
    message = update.effective_message
    chat_id = update.effective_chat.id
    chat = await svc.store.chats.ensure(chat_id, _asker(update).chat_type)
    raw = (message.text or "").split(maxsplit=1)
    lang = await _lang(svc, update)
    sender = svc.sender(context.bot)
    if len(raw) < 2:
        await sender.text(chat_id, escape(t("query_usage", lang)))
        return
    try:
        query = json.loads(raw[1])
    except json.JSONDecodeError as exc:
        await sender.text(chat_id, escape(t("query_bad_json", lang, error=exc.msg)))
        return
    if not isinstance(query, dict):
        await sender.text(chat_id, escape(t("query_usage", lang)))
        return
    wait = svc.limiter.check(update.effective_user.id)
    if wait:
        await sender.text(chat_id, escape(t("too_fast", lang, seconds=int(wait) + 1)))
        return
    showing = svc.showing(
        context.bot, chat_id, ChatAction.UPLOAD_PHOTO, after_s=QUERY_ACTION_AFTER_S
    )
    with svc.backlog.joined():  # counted, so that a Run pressed meanwhile sees it ahead
        async with svc.chat_lock(chat_id), showing:
            acknowledged()
            outcome = await svc.runner.run(
                QueryJob(
                    query=query,
                    instrument=chat.instrument,
                    chart=chat.settings.charts,
                    language=lang,
                )
            )
            if not outcome.ok:
                text = outcome.summary_text
                if (outcome.error or {}).get("error_type") == "QueryTimeout":
                    text = t("query_timeout", lang)
                await sender.text(chat_id, escape(text))
                return
            instrument = load_instrument(chat.instrument)
            meta = read_meta(data_path(instrument.symbol, svc.assistant.engine_settings))
            plan = render_plan(query, instrument, meta.last_date, lang)
            reply = Reply(
                text=outcome.summary_text,
                language=lang,
                proofs=[Proof.from_outcome(query, plan, outcome)],
            )
            await sender.reply(chat_id, reply)


async def cmd_usage(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Tokens and cost today; all chats for admins."""
    svc = services(context)
    lang = await _lang(svc, update)
    chat_id = update.effective_chat.id
    user_id = update.effective_user.id
    await svc.store.chats.ensure(chat_id, _asker(update).chat_type)
    mine = await svc.store.usage.for_user(user_id)
    lines = [t("usage_you", lang, tokens=mine.total_tokens, cost=mine.cost_usd, calls=mine.calls)]
    if user_id in svc.settings.admins:
        total = await svc.store.usage.total()
        chats = len({line.chat_id for line in await svc.store.usage.report()})
        lines.append(
            t(
                "usage_all",
                lang,
                tokens=total.total_tokens,
                cost=total.cost_usd,
                calls=total.calls,
                chats=chats,
            )
        )
    await svc.sender(context.bot).text(chat_id, escape("\n".join(lines)))


# --- errors ---------------------------------------------------------------------------------


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log with a reference id first, then one plain sentence to the person, never silence."""
    if isinstance(context.error, NotDelivered | Forbidden):
        # Telegram is unreachable, or the person blocked the bot: a message about it would
        # not arrive either. A reply not delivered yet is queued for the next flush.
        log.warning("reply not delivered: %s", context.error)
        return
    ref = uuid.uuid4().hex[:8]
    log.error("handler failed (ref %s)", ref, exc_info=context.error)
    if not isinstance(update, Update) or update.effective_chat is None:
        return
    lang = "en"
    if update.effective_user and (update.effective_user.language_code or "").startswith("ru"):
        lang = "ru"
    try:
        await context.bot.send_message(update.effective_chat.id, t("internal_error", lang, ref=ref))
    except Exception:  # Telegram itself is failing: the log line above is all we can do
        log.error("could not tell chat %s about ref %s", update.effective_chat.id, ref)
