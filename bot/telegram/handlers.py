"""Telegram handlers for messages: gates, questions, what is not a question, errors.

Commands are in ``commands`` and buttons in ``buttons``; the work is in the assistant.
"""

from __future__ import annotations

import logging
import uuid

from telegram import Chat as TelegramChat
from telegram import Message, MessageEntity, Update
from telegram.error import ChatMigrated, Forbidden
from telegram.ext import ApplicationHandlerStop, ContextTypes

from barb.i18n import language
from bot.telegram.answering import DatabaseAway
from bot.telegram.asking import ask
from bot.telegram.render import escape
from bot.telegram.sender import NotDelivered
from bot.telegram.services import services
from bot.telegram.split_questions import key_of
from bot.telegram.update_context import load_context
from bot.texts import Language, language_for, t
from bot.work_order import arrived

log = logging.getLogger(__name__)


# --- gates (groups -3 and -1: run before every handler) --------------------------------------
# An update delivered twice never gets here: ``intake`` refuses it by its stored id.


async def stamp_arrival(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The work for this update begins now. Under load the queues every chat shares (store
    writes, Telegram's flood limit) serve what acknowledges someone first, then older
    updates, so that answers finish in the order they were asked (``bot.work_order``).
    Within a chat, its place in the line for the chat's lock is taken now."""
    arrived()
    if update.effective_chat is not None:
        services(context).locks.arrive(update.effective_chat.id)


async def ignore_unasked(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Only messages people send, and presses on the bot's buttons, are answered.

    python-telegram-bot hands edits and channel posts to the same handlers as messages: a
    typo fixed in an answered question was answered again, at the cost of a second model
    call, and a channel post, which has no sender, ended in "Something broke" posted to the
    channel. A message sent as a channel (a linked channel's post that Telegram forwards
    into its discussion group, "from" 777000, or a member posting as their channel) has no
    person to press its plan's Run. All of these are dropped, as chatter not addressed to
    the bot is; so are the other kinds of update (member changes, polls…)."""
    if update.callback_query is not None:
        return
    message = update.message
    if message is None and update.edited_message is not None:
        # An edit is not answered again, but the person is told so (``on_edited``).
        message = update.edited_message
    as_channel = message is not None and (
        bool(message.is_automatic_forward)
        or (message.sender_chat is not None and message.sender_chat.type == TelegramChat.CHANNEL)
    )
    if message is None or as_channel:
        chat = update.effective_chat
        log.debug("ignored update %s in chat %s", update.update_id, chat and chat.id)
        raise ApplicationHandlerStop


async def enforce_access(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Outside the allowlists nobody gets an answer, and nobody costs a token."""
    user = update.effective_user
    chat = update.effective_chat
    if chat is None or not services(context).settings.allows(user.id if user else None, chat.id):
        log.info("ignored update from user %s in chat %s", user and user.id, chat and chat.id)
        raise ApplicationHandlerStop


# --- messages -------------------------------------------------------------------------------


def _addressed_text(message: Message, bot_id: int, username: str) -> str | None:
    """In a group: the text (or caption) without the @mention, if the bot is mentioned or
    replied to; in a private chat all of it."""
    text = message.text or message.caption or ""
    if message.chat.type == TelegramChat.PRIVATE:
        return text
    mentioned = False
    entities = message.parse_entities() if message.text else message.parse_caption_entities()
    for entity, value in entities.items():
        by_name = entity.type == MessageEntity.MENTION and (
            value.lstrip("@").lower() == username.lower()
        )
        by_id = entity.type == MessageEntity.TEXT_MENTION and (
            entity.user is not None and entity.user.id == bot_id
        )
        if by_name or by_id:
            mentioned = True
            text = text.replace(value, " ")
    replied = message.reply_to_message is not None and (
        message.reply_to_message.from_user is not None
        and message.reply_to_message.from_user.id == bot_id
    )
    return " ".join(text.split()) if (mentioned or replied) else None


async def on_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A question: every text in private chats; in groups only when addressed to the bot."""
    message = update.effective_message
    if message is None or not message.text:
        return
    split = services(context).split_questions
    key = key_of(update)
    if key is None:
        return
    # A part of a long question Telegram split: in a group only its first part mentions Barb.
    if await split.join(key, message.text, update.update_id, message.message_id):
        return
    text = _addressed_text(message, context.bot.id, context.bot.username)
    if text is None:
        return  # in a group, not for us
    async with split.gather(
        key, text, message.text, update.update_id, message.message_id
    ) as gathered:
        ctx = await load_context(update, context)
        if not gathered.text:  # a bare "@Barb": say what to ask rather than nothing
            await ctx.say_text(t("mention_empty", ctx.lang, bot=context.bot.username))
            return
        await ask(ctx, gathered.text, gathered=gathered)


async def on_edited(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """An edited message addressed to Barb: not asked again (a second model call for a
    typo fixed), but said so, in reply to it. Before, an edit was dropped without a word:
    "NQ" edited to "ES" under a plan shown for NQ, then Run ran NQ, the person believing
    the edit was read. One line, no model call."""
    message = update.edited_message
    if message is None or not (message.text or message.caption):
        return
    text = _addressed_text(message, context.bot.id, context.bot.username)
    if not text or (message.text or "").startswith("/"):
        return  # in a group, not for us; a command edited is not a question
    ctx = await load_context(update, context)
    lang = language_for(ctx.chat.settings.language, text, ctx.asker.language_code)
    await ctx.say(escape(t("edit_not_read", lang)))


async def on_not_text(
    update: Update, context: ContextTypes.DEFAULT_TYPE, *, line: str | None = None
) -> None:
    """A photo, file, sticker, voice…: one line saying what Barb can do; no model call. One
    with a caption (a chart screenshot captioned "avg range on Mondays?") is asked its
    caption, told first that the picture is not seen: it was told "I read text only: ask
    in words", which it had. ``line``: the catalog key of the one line to say instead,
    caption or not (a file of bars from someone who may not import it)."""
    message = update.effective_message
    if message is None:
        return
    text = _addressed_text(message, context.bot.id, context.bot.username)
    if text is None:
        return  # in a group, not for us
    ctx = await load_context(update, context)
    if line is not None:
        await ctx.say(t(line, ctx.lang))
        return
    if text.strip() and not text.lstrip().startswith("/"):
        lang = language_for(ctx.chat.settings.language, text, ctx.asker.language_code)
        await ask(ctx, text, preface=escape(t("caption_asked", lang)))
        return
    await ctx.say(t("not_text", ctx.lang))


async def on_unknown_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A command Barb does not have: one line with the ones it has; no model call."""
    message = update.effective_message
    if message is None or not message.text:
        return
    command = message.text.split(maxsplit=1)[0]
    _, _, addressee = command.partition("@")
    if message.chat.type != TelegramChat.PRIVATE and (
        addressee.lower() != context.bot.username.lower()
    ):
        return  # in a group, /something without @Barb may be another bot's
    ctx = await load_context(update, context)
    await ctx.say(t("unknown_command", ctx.lang, command=command.partition("@")[0]))


async def on_migrated(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A group became a supergroup, which has a new id: its settings, conversation, plans
    and queued replies move there (``ChatRepository.migrate``). Telegram says so in both
    chats (``migrate_to_chat_id`` in the old, ``migrate_from_chat_id`` in the new); the
    second finds nothing left to move. Nothing is said: the members see Telegram's notice."""
    message = update.effective_message
    if message is None:
        return
    if message.migrate_to_chat_id is not None:
        old_id, new_id = message.chat.id, message.migrate_to_chat_id
    elif message.migrate_from_chat_id is not None:
        old_id, new_id = message.migrate_from_chat_id, message.chat.id
    else:
        return
    if await services(context).chat_moved(old_id, new_id):
        log.info("group %s became supergroup %s: its chat moved there", old_id, new_id)


# --- errors ---------------------------------------------------------------------------------


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log with a reference id first, then one plain sentence to the person, never silence."""
    if isinstance(context.error, NotDelivered | Forbidden):
        # Telegram is unreachable, or the person blocked the bot: a message about it would
        # not arrive either. A reply not delivered yet is queued for the next flush.
        log.warning("reply not delivered: %s", context.error)
        return
    if isinstance(context.error, ChatMigrated):
        # A call outside the outbox (which resends, ``Sender``) to a group that became a
        # supergroup: its state moves there; nothing internal broke, so nothing is said.
        log.info("chat moved to %s: %s", context.error.new_chat_id, context.error)
        if isinstance(update, Update) and update.effective_chat is not None:
            await services(context).chat_moved(update.effective_chat.id, context.error.new_chat_id)
        return
    away = isinstance(context.error, DatabaseAway)
    ref = uuid.uuid4().hex[:8]
    if away:
        # Not a bug: the work is set aside and finished once the database answers again.
        log.warning("%s (ref %s): %s", context.error, ref, context.error.__cause__)
    else:
        log.error("handler failed (ref %s)", ref, exc_info=context.error)
    if not isinstance(update, Update) or update.effective_chat is None:
        return
    telegram_code = update.effective_user.language_code if update.effective_user else None
    lang = (
        language(telegram_code) if away else await _chosen_language(context, update, telegram_code)
    )
    # Straight to Telegram, not through the outbox: it is in the database that failed.
    sentence = t("database_away", lang) if away else t("internal_error", lang, ref=ref)
    in_group = update.effective_chat.type != TelegramChat.PRIVATE
    message = update.effective_message if update.callback_query is None and in_group else None
    try:
        await context.bot.send_message(
            update.effective_chat.id,
            sentence,
            reply_to_message_id=message.message_id if message is not None else None,
            allow_sending_without_reply=True,
            message_thread_id=message.message_thread_id
            if message is not None and message.is_topic_message
            else None,
        )
    except Exception:  # Telegram itself is failing: the log line above is all we can do
        log.error("could not tell chat %s about ref %s", update.effective_chat.id, ref)


async def _chosen_language(
    context: ContextTypes.DEFAULT_TYPE, update: Update, telegram_code: str | None
) -> Language:
    """The language the chat chose in /settings, else Telegram's: the error is worded as
    everything else is. The database is read at most once more; if that fails too, the
    sentence is still sent, in Telegram's language."""
    assert update.effective_chat is not None
    try:
        chat = await services(context).store.chats.get(update.effective_chat.id)
    except Exception:  # the failure being reported may be the database's
        log.warning("language of chat %s not read for an error", update.effective_chat.id)
        chat = None
    return language_for(chat.settings.language if chat else "auto", "", telegram_code)
