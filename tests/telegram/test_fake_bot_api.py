"""The fake Bot API, driven by the real python-telegram-bot over a real socket."""

from __future__ import annotations

import asyncio
import datetime as dtm

import pytest
from fake_bot_api import FakeBotAPI, mention_entities, parse_html, png_bytes, polling
from telegram import Bot, BotCommand, InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.constants import ParseMode
from telegram.error import (
    BadRequest,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
)
from telegram.ext import CallbackQueryHandler, ContextTypes, MessageHandler, filters

CHAT = 4242
USER = 4242
GROUP = -100123


def keyboard(*data: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(d.title(), callback_data=d) for d in data]])


# ---- the plain Bot against the fake


async def test_get_me(telegram_bot: Bot, fake_telegram: FakeBotAPI) -> None:
    me = await telegram_bot.get_me()
    assert (me.id, me.username, me.is_bot) == (999, "barb_test_bot", True)
    assert telegram_bot.username == "barb_test_bot"  # initialize() called getMe already
    assert [r.method for r in fake_telegram.requests] == ["getMe", "getMe"]


async def test_wrong_token_is_unauthorized(fake_telegram: FakeBotAPI) -> None:
    bot = Bot("123456:WRONG", **fake_telegram.bot_kwargs())
    with pytest.raises(InvalidToken, match="rejected by the server") as caught:
        async with bot:
            pass
    assert str(caught.value.__cause__) == "Unauthorized"
    assert fake_telegram.requests[-1].status == 401


async def test_unknown_method_is_recorded_as_404(
    telegram_bot: Bot, fake_telegram: FakeBotAPI
) -> None:
    with pytest.raises(EndPointNotFound, match="sendHologram"):
        await telegram_bot.do_api_request("sendHologram", api_kwargs={"chat_id": CHAT})
    [call] = fake_telegram.calls("sendHologram")
    assert (call.status, call.params) == (404, {"chat_id": CHAT})


async def test_send_message_with_keyboard_reads_back(
    telegram_bot: Bot, fake_telegram: FakeBotAPI
) -> None:
    sent = await telegram_bot.send_message(CHAT, "Run it?", reply_markup=keyboard("yes", "no"))
    again = await telegram_bot.send_message(CHAT, "second")

    assert (sent.message_id, again.message_id) == (1, 2)
    assert sent.reply_markup == keyboard("yes", "no")
    assert sent.from_user is not None and sent.from_user.id == 999
    assert fake_telegram.message(CHAT, 1)["reply_markup"] == keyboard("yes", "no").to_dict()
    assert fake_telegram.sent_text(CHAT) == ["Run it?", "second"]
    call = fake_telegram.calls("sendMessage", chat_id=CHAT)[0]
    assert call.params["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "yes"


async def test_html_is_parsed_like_telegram(telegram_bot: Bot, fake_telegram: FakeBotAPI) -> None:
    sent = await telegram_bot.send_message(
        CHAT, "  <b>Plan</b> &lt;3 📈 <pre>x = 1</pre>\n", parse_mode=ParseMode.HTML
    )
    assert sent.text == "Plan <3 📈 x = 1"  # tags parsed, whitespace trimmed
    assert [(e.type, e.offset, e.length) for e in sent.entities] == [
        ("bold", 0, 4),
        ("pre", 11, 5),  # the emoji counts as two UTF-16 units
    ]
    assert fake_telegram.calls("sendMessage")[0].params["text"].startswith("  <b>Plan")

    # PTB drops "Bad Request: " and capitalizes the rest: match case-insensitively.
    with pytest.raises(BadRequest, match=r'(?i)parse entities: unsupported start tag "" at'):
        await telegram_bot.send_message(CHAT, "a < b", parse_mode=ParseMode.HTML)
    with pytest.raises(BadRequest, match=r"(?i)can't find end tag corresponding to start tag"):
        await telegram_bot.send_message(CHAT, "<b>open", parse_mode=ParseMode.HTML)
    with pytest.raises(BadRequest, match=r"(?i)message is too long"):
        await telegram_bot.send_message(CHAT, "x" * 4097)
    with pytest.raises(BadRequest, match=r"(?i)button_data_invalid"):
        await telegram_bot.send_message(CHAT, "hi", reply_markup=keyboard("x" * 65))
    assert fake_telegram.sent_text(CHAT) == ["Plan <3 📈 x = 1"]


def test_parse_html_details() -> None:
    text, entities = parse_html(
        '<a href="https://x.test/?a=1&amp;b=2">link</a> <pre><code class="language-json">{}'
        "</code></pre> <blockquote expandable>q</blockquote> &#128200;&nbsp;"
    )
    assert text == "link {} q 📈&nbsp;"  # unknown named entities stay as they are
    assert entities == [
        {"type": "text_link", "offset": 0, "length": 4, "url": "https://x.test/?a=1&b=2"},
        {"type": "pre", "offset": 5, "length": 2, "language": "json"},
        {"type": "expandable_blockquote", "offset": 8, "length": 1},
    ]


async def test_edit_message_text_and_markup(telegram_bot: Bot, fake_telegram: FakeBotAPI) -> None:
    sent = await telegram_bot.send_message(CHAT, "Run it?", reply_markup=keyboard("yes", "no"))
    msg_id = sent.message_id
    press = fake_telegram.callback_update(chat_id=CHAT, user_id=USER, message_id=msg_id, data="no")
    assert press["callback_query"]["message"]["reply_markup"] == keyboard("yes", "no").to_dict()

    edited = await telegram_bot.edit_message_reply_markup(
        CHAT, msg_id, reply_markup=keyboard("yes")
    )
    assert isinstance(edited, Message) and edited.reply_markup == keyboard("yes")
    with pytest.raises(BadRequest, match=r"(?i)message is not modified"):
        await telegram_bot.edit_message_reply_markup(CHAT, msg_id, reply_markup=keyboard("yes"))

    edited = await telegram_bot.edit_message_text(
        "<i>Running</i>", CHAT, msg_id, parse_mode=ParseMode.HTML
    )
    assert isinstance(edited, Message) and edited.text == "Running"
    state = fake_telegram.message(CHAT, msg_id)
    assert state["text"] == "Running"
    assert state["entities"] == [{"type": "italic", "offset": 0, "length": 7}]
    assert "reply_markup" not in state  # an edit without reply_markup drops the keyboard
    assert "edit_date" in state
    assert fake_telegram.sent_text(CHAT) == ["Run it?"]  # as sent; message() has the edits
    fake_telegram.inject(press)  # built before the edits: must not bring the old text back
    assert fake_telegram.message(CHAT, msg_id)["text"] == "Running"

    with pytest.raises(BadRequest, match=r"(?i)message is not modified"):
        await telegram_bot.edit_message_text("<i>Running</i>", CHAT, msg_id, parse_mode="HTML")
    with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):
        await telegram_bot.edit_message_text("x", CHAT, 777)
    assert await telegram_bot.edit_message_text("x", inline_message_id="inline-1") is True
    assert await telegram_bot.delete_message(CHAT, msg_id) is True
    with pytest.raises(BadRequest, match=r"(?i)message to delete not found"):
        await telegram_bot.delete_message(CHAT, msg_id)


async def test_replies(telegram_bot: Bot, fake_telegram: FakeBotAPI) -> None:
    question = fake_telegram.message_update(
        chat_id=GROUP, user_id=USER, text="hi", chat_type="group"
    )
    fake_telegram.inject(question)
    asked = question["message"]["message_id"]

    answer = await telegram_bot.send_message(GROUP, "hello", reply_to_message_id=asked)
    assert answer.reply_to_message is not None and answer.reply_to_message.text == "hi"
    assert answer.chat.type == "group" and answer.message_id == asked + 1

    with pytest.raises(BadRequest, match=r"(?i)message to be replied not found"):
        await telegram_bot.send_message(GROUP, "x", reply_to_message_id=99)
    sent = await telegram_bot.send_message(
        GROUP, "x", reply_to_message_id=99, allow_sending_without_reply=True
    )
    assert sent.reply_to_message is None

    follow_up = fake_telegram.message_update(
        chat_id=GROUP, user_id=USER, text="and?", chat_type="group", reply_to_bot=True
    )
    assert follow_up["message"]["reply_to_message"]["message_id"] == sent.message_id


async def test_send_photo_and_document(telegram_bot: Bot, fake_telegram: FakeBotAPI) -> None:
    png = png_bytes(1600, 900)
    photo = await telegram_bot.send_photo(
        CHAT, png, caption="<b>NQ</b> daily", parse_mode=ParseMode.HTML, filename="nq.png"
    )
    csv = b"date,close\n2024-01-02,16543.25\n"
    document = await telegram_bot.send_document(CHAT, csv, filename="nq rows.csv", caption="2 rows")

    [photo_call] = fake_telegram.calls("sendPhoto")
    upload = photo_call.files["photo"]
    assert (upload.filename, upload.content, upload.content_type) == ("nq.png", png, "image/png")
    assert photo_call.params == {
        "chat_id": CHAT,
        "caption": "<b>NQ</b> daily",
        "parse_mode": "HTML",
    }
    assert photo.caption == "NQ daily"
    sizes = [(p.width, p.height) for p in photo.photo]
    assert sizes == [(90, 51), (320, 180), (800, 450), (1280, 720), (1600, 900)]

    [doc_call] = fake_telegram.calls("sendDocument")
    assert (doc_call.files["document"].filename, doc_call.files["document"].content) == (
        "nq rows.csv",
        csv,
    )
    sent_doc = document.document
    assert sent_doc is not None
    assert (sent_doc.file_name, sent_doc.file_size, sent_doc.mime_type) == (
        "nq rows.csv",
        len(csv),
        "text/csv",
    )
    assert fake_telegram.sent_text(CHAT) == ["NQ daily", "2 rows"]

    # getFile and the file URL give back what was uploaded (base_file_url is honoured).
    file = await telegram_bot.get_file(sent_doc.file_id)
    assert bytes(await file.download_as_bytearray()) == csv

    with pytest.raises(BadRequest, match=r"(?i)image_process_failed"):
        await telegram_bot.send_photo(CHAT, b"not an image", filename="x.png")


async def test_fail_next(telegram_bot: Bot, fake_telegram: FakeBotAPI) -> None:
    fake_telegram.fail_next("sendMessage", retry_after=3)
    with pytest.raises(RetryAfter) as caught:
        await telegram_bot.send_message(CHAT, "hi")
    assert caught.value.retry_after == dtm.timedelta(seconds=3)  # PTB_TIMEDELTA=1 in conftest

    fake_telegram.fail_next("sendMessage", error_code=403, chat_id=7, times=2)
    await telegram_bot.send_message(CHAT, "another chat goes through")
    for _ in range(2):
        with pytest.raises(Forbidden, match="bot was blocked by the user"):
            await telegram_bot.send_message(7, "blocked")
    await telegram_bot.send_message(7, "unblocked")

    assert fake_telegram.sent_text(CHAT) == ["another chat goes through"]
    assert fake_telegram.sent_text(7) == ["unblocked"]
    assert [r.status for r in fake_telegram.calls("sendMessage")] == [429, 200, 403, 403, 200]


async def test_commands_and_small_methods(telegram_bot: Bot, fake_telegram: FakeBotAPI) -> None:
    commands = [BotCommand("start", "Start"), BotCommand("help", "How to ask")]
    assert await telegram_bot.set_my_commands(commands) is True
    assert await telegram_bot.get_my_commands() == tuple(commands)
    assert await telegram_bot.get_my_commands(language_code="de") == ()
    assert fake_telegram.my_commands() == [c.to_dict() for c in commands]
    with pytest.raises(BadRequest, match=r"(?i)bot_command_invalid"):
        await telegram_bot.set_my_commands([BotCommand("Bad-Name", "x")])

    assert await telegram_bot.send_chat_action(CHAT, "typing") is True
    assert await telegram_bot.set_webhook("https://example.test/hook") is True
    assert (await telegram_bot.get_webhook_info()).url == "https://example.test/hook"
    assert await telegram_bot.delete_webhook() is True
    assert (await telegram_bot.get_webhook_info()).url == ""


async def test_wait_for_timeout_summarises(telegram_bot: Bot, fake_telegram: FakeBotAPI) -> None:
    await telegram_bot.send_message(CHAT, "only this")
    summary = r"(?s)expected 1 sendPhoto.*sendMessage chat=4242 'only this' -> 200"
    with pytest.raises(AssertionError, match=summary):
        await fake_telegram.wait_for("sendPhoto", timeout=0.05)


async def test_offline_guard_refuses_the_real_api(telegram_offline: list[str]) -> None:
    with pytest.raises(NetworkError, match=r"tests must not reach api\.telegram\.org"):
        async with Bot("123456:TEST-TOKEN"):
            pass
    assert telegram_offline == ["https://api.telegram.org/bot123456:TEST-TOKEN/getMe"]
    telegram_offline.clear()  # refused on purpose here; the fixture fails on leftovers


# ---- updates


async def test_get_updates_offsets(telegram_bot: Bot, fake_telegram: FakeBotAPI) -> None:
    first = fake_telegram.inject(fake_telegram.message_update(chat_id=CHAT, user_id=USER, text="a"))
    later = fake_telegram.message_update(chat_id=CHAT, user_id=USER, text="b")
    second = fake_telegram.inject(later)

    updates = await telegram_bot.get_updates()
    assert [u.update_id for u in updates] == [first, second]
    assert [u.message.text for u in updates if u.message] == ["a", "b"]
    assert len(await telegram_bot.get_updates()) == 2  # not confirmed: delivered again
    assert [u.update_id for u in await telegram_bot.get_updates(offset=second)] == [second]
    assert await telegram_bot.get_updates(offset=second + 1) == ()
    assert fake_telegram.confirmed_offset == second + 1

    fake_telegram.inject(later)  # same update_id, already confirmed: never delivered again
    assert await telegram_bot.get_updates() == ()


async def test_long_poll_waits_for_an_injected_update(
    telegram_bot: Bot, fake_telegram: FakeBotAPI
) -> None:
    fake_telegram.long_poll_cap = 0.3
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await telegram_bot.get_updates(timeout=5) == ()
    assert 0.25 < loop.time() - started < 2.5  # waited, and ended by the cap, not timeout=5

    # With a long cap, an answer well before it came when the update arrived, not at the
    # cap (a margin a loaded machine keeps: no tight wall-clock bound).
    fake_telegram.long_poll_cap = 4.0
    update = fake_telegram.message_update(chat_id=CHAT, user_id=USER, text="late")
    loop.call_later(0.05, fake_telegram.inject, update)
    started = loop.time()
    [got] = await telegram_bot.get_updates(timeout=5)
    assert got.message is not None and got.message.text == "late"
    assert loop.time() - started < fake_telegram.long_poll_cap / 2


def test_factories_parse_into_ptb_objects(fake_telegram: FakeBotAPI) -> None:
    text = "/ask@barb_test_bot 📈 @alice_b and @bob_cat?"
    message = Update.de_json(
        fake_telegram.message_update(
            chat_id=GROUP, user_id=USER, text=text, chat_type="supergroup", reply_to_bot=True
        ),
        None,
    ).message
    assert message is not None and message.chat.type == "supergroup"
    assert list(message.parse_entities().values()) == ["/ask@barb_test_bot", "@alice_b", "@bob_cat"]
    assert [(e.type, e.offset, e.length) for e in message.entities] == [
        ("bot_command", 0, 18),
        ("mention", 22, 8),  # after the emoji: two UTF-16 units
        ("mention", 35, 8),
    ]
    assert mention_entities(text) == [e.to_dict() for e in message.entities[1:]]
    replied = message.reply_to_message
    assert replied is not None and replied.from_user is not None and replied.from_user.id == 999

    query = Update.de_json(
        fake_telegram.callback_update(chat_id=CHAT, user_id=USER, message_id=5, data="run:1"),
        None,
    ).callback_query
    assert query is not None and query.data == "run:1" and query.message is not None
    assert query.message.chat.type == "private"  # from the sign of the chat id
    assert isinstance(query.message, Message) and query.message.message_id == 5
    assert query.message.from_user is not None and query.message.from_user.id == 999
    in_group = fake_telegram.callback_update(chat_id=GROUP, user_id=USER, message_id=9, data="x")
    assert in_group["callback_query"]["message"]["chat"]["type"] == "supergroup"  # as known


async def test_polling_application_echoes_and_answers_buttons(fake_telegram: FakeBotAPI) -> None:
    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Echo the text, with a button."""
        assert update.message is not None
        await update.message.reply_text(update.message.text or "", reply_markup=keyboard("again"))

    async def button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Answer the press, then edit the message."""
        query = update.callback_query
        assert query is not None
        await query.answer()  # first: the client shows a spinner until the query is answered
        await query.edit_message_text(f"pressed {query.data}")

    application = fake_telegram.application_builder().build()
    application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, echo))
    application.add_handler(CallbackQueryHandler(button))

    async with polling(application):
        hello = fake_telegram.message_update(chat_id=CHAT, user_id=USER, text="hello")
        update_id = fake_telegram.inject(hello)
        [reply] = await fake_telegram.wait_for("sendMessage", chat_id=CHAT)
        assert reply.result["text"] == "hello"
        await fake_telegram.wait_confirmed(update_id)

        fake_telegram.inject(hello)  # the same update_id again, after PTB confirmed it: dropped
        reply_id = reply.result["message_id"]
        fake_telegram.inject(
            fake_telegram.callback_update(
                chat_id=CHAT, user_id=USER, message_id=reply_id, data="again"
            )
        )
        await fake_telegram.wait_for("answerCallbackQuery")
        await fake_telegram.wait_for("editMessageText")

    assert fake_telegram.sent_text(CHAT) == ["hello"]
    assert fake_telegram.message(CHAT, reply_id)["text"] == "pressed again"
    assert fake_telegram.pending_updates == []
    assert [r.status for r in fake_telegram.requests if r.method != "getUpdates"] == [200] * 5


async def test_transport_faults(telegram_bot: Bot, fake_telegram: FakeBotAPI) -> None:
    """Each fault mode reaches PTB as a real network would: an error, and Telegram's side
    effect only where the request was carried out."""
    fake_telegram.fault_next("sendMessage", "drop_before")
    with pytest.raises(NetworkError):
        await telegram_bot.send_message(CHAT, "lost on the way")
    fake_telegram.fault_next("sendMessage", "drop_after")
    with pytest.raises(NetworkError):
        await telegram_bot.send_message(CHAT, "delivered, unanswered")
    fake_telegram.fault_next("sendMessage", "html_502")
    with pytest.raises(NetworkError):
        await telegram_bot.send_message(CHAT, "nginx says no")
    fake_telegram.fault_next("sendMessage", "slow", delay_s=0.3)
    started = asyncio.get_running_loop().time()
    await telegram_bot.send_message(CHAT, "late")
    assert asyncio.get_running_loop().time() - started >= 0.3

    assert fake_telegram.sent_text(CHAT) == ["delivered, unanswered", "late"]
    faults = [(r.fault, r.status) for r in fake_telegram.calls("sendMessage")]
    assert faults == [("drop_before", 0), ("drop_after", 200), ("html_502", 502), ("slow", 200)]


async def test_outage(telegram_bot: Bot, fake_telegram: FakeBotAPI) -> None:
    fake_telegram.outage(0.5)
    with pytest.raises(NetworkError):
        await telegram_bot.send_message(CHAT, "down")
    with pytest.raises(NetworkError):
        await telegram_bot.get_updates()
    await asyncio.sleep(0.5)
    await telegram_bot.send_message(CHAT, "up again")
    assert fake_telegram.sent_text(CHAT) == ["up again"]
