"""What every handler starts from, loaded once per update: who, which chat, which language.

Before, each handler read the chat (some twice) and worked out the language on its own; now
one call builds an :class:`UpdateContext` and the handler uses only that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from telegram import Bot, InlineKeyboardMarkup, Message, Update
from telegram.constants import ChatType
from telegram.ext import ContextTypes

from bot.assistant.replies import Asker
from bot.store.records import Chat
from bot.telegram.render import escape
from bot.telegram.sender import Sender
from bot.telegram.services import BotServices, services
from bot.texts import Language, language_for


def _thread_of(message: Message | None) -> int | None:
    """The forum topic a message is in (only topics: other threads are not sendable)."""
    if message is None or not message.is_topic_message:
        return None
    return message.message_thread_id


def asker_of(update: Update) -> Asker:
    """Who wrote (or pressed), where, and where answers to them go.

    A message sent on behalf of a chat is that chat's: every anonymous admin of a group
    writes as Telegram's GroupAnonymousBot (1087968824) with ``sender_chat`` the group, so
    the asker is the group (its id, -100500), one asker for all of them, whose plans any of
    the group's admins may press (``buttons``: a press always comes from the person's own
    account). Example: an anonymous admin's /cancel drops the plan another anonymous admin
    was shown, and not Alice's own."""
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None and user is not None
    in_group = chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)
    message = update.effective_message
    # A press is on the bot's own message: its answer is placed by the stored question.
    asked = message if update.callback_query is None else None
    on_behalf = asked.sender_chat if asked is not None else None
    replied = asked.reply_to_message if asked is not None else None
    return Asker(
        chat_id=chat.id,
        user_id=on_behalf.id if on_behalf is not None else user.id,
        chat_type=chat.type if in_group else "private",
        language_code=user.language_code,
        reply_to=asked.message_id if asked is not None and in_group else None,
        thread_id=_thread_of(message),
        # Any message: only Barb's own are found among its sent replies (``Assistant``).
        replied_to=replied.message_id if replied is not None else None,
        message_id=asked.message_id if asked is not None else None,
    )


@dataclass(frozen=True)
class UpdateContext:
    """One update's world: services, bot, the asker, the stored chat and the language."""

    svc: BotServices
    bot: Bot
    asker: Asker
    chat: Chat
    lang: Language
    #: The update being handled: the work it starts, once recorded, ends its handling.
    update_id: int | None = None

    @property
    def chat_id(self) -> int:
        return self.asker.chat_id

    @property
    def user_id(self) -> int:
        return self.asker.user_id

    @property
    def in_group(self) -> bool:
        return self.asker.chat_type != "private"

    def sender(self) -> Sender:
        return self.svc.sender(self.bot)

    async def say(
        self,
        *html: str,
        markup: InlineKeyboardMarkup | None = None,
        reply_to: int | None = None,
        question_id: str | None = None,
    ) -> None:
        """HTML messages to the asker, in order, ``markup`` under the last: in a group,
        replies to their message (or to ``reply_to``: a press has no message of its own, and
        says what it shows under the question its answer replied to), in its forum topic.

        Sent under the chat's lock, as answers are: a reply to a later message of the chat
        neither overtakes the answer to an earlier one nor lands between its messages, and
        no flush of the chat's outbox (``Sender.flush``) takes a message from under it."""
        async with self.svc.chat_lock(self.chat_id):
            await self.say_held(*html, markup=markup, reply_to=reply_to, question_id=question_id)

    async def say_held(
        self,
        *html: str,
        markup: InlineKeyboardMarkup | None = None,
        answers: Sequence[int] = (),
        reply_to: int | None = None,
        question_id: str | None = None,
    ) -> None:
        """Like ``say``, for a caller that already holds the chat's lock: its work and the
        reply that confirms it are one hold, so that no other reply of the chat comes
        between them (the lock is not reentrant: ``say`` there would wait for itself).
        ``answers``: work in flight the first message ends, in the transaction storing it.
        ``question_id``: the question the messages show (the Query button's query), which a
        reply to them follows."""
        sender = self.sender()
        for number, part in enumerate(html, start=1):
            await sender.text(
                self.chat_id,
                part,
                markup=markup if number == len(html) else None,
                reply_to=reply_to if reply_to is not None else self.asker.reply_to,
                thread_id=self.asker.thread_id,
                answers=answers if number == 1 else (),
                question_id=question_id,
            )

    async def say_text(self, text: str, *, markup: InlineKeyboardMarkup | None = None) -> None:
        """Like ``say``, for plain text (escaped)."""
        await self.say(escape(text), markup=markup)


async def load_context(update: Update, context: ContextTypes.DEFAULT_TYPE) -> UpdateContext:
    """The chat is stored (created on first contact) and its language decided, once."""
    svc = services(context)
    asker = asker_of(update)
    chat = await svc.store.chats.ensure(asker.chat_id, asker.chat_type)
    lang = language_for(chat.settings.language, "", asker.language_code)
    return UpdateContext(
        svc=svc, bot=context.bot, asker=asker, chat=chat, lang=lang, update_id=update.update_id
    )
