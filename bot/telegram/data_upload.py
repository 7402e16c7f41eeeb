"""An admin sends a CSV or Parquet file of bars: the bot replies with the validation report
and Import / Cancel buttons, and imports with the same code as `barb data import`.

The instrument is the one named in the file's caption, else the chat's; the caption also
carries the import options, as on the command line (``--timezone Asia/Dubai --interval 5m``,
``bot.upload_caption``), which the check and the Import use. Only admins may
import; only the admin who sent the file may press its buttons. In a group, only a file an
admin sends with the bot's @name in the caption is taken. A bot whose queries run on
workers (``BARB_QUEUE_URL``) imports the file only when every live worker of the instrument
reads the bot's own data directory (one machine); otherwise it refuses the file, with the
command to run where the workers are.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shlex
from pathlib import Path

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from barb.errors import BarbError
from barb.i18n import N_, day, decimal
from barb.instruments import available_instruments
from bot.data_uploads import MAX_UPLOAD_BYTES, Checked, DataUploads, Imported, Offer
from bot.telegram import handlers, keyboards
from bot.telegram.buttons import acknowledge
from bot.telegram.render import escape
from bot.telegram.sender import NotDelivered, Sender
from bot.telegram.services import BotServices, services
from bot.telegram.update_context import load_context
from bot.texts import t
from bot.upload_caption import CaptionError, read_caption

log = logging.getLogger(__name__)

IMPORT = "di"
CANCEL = "dc"
#: The callback_data this module answers (registered before the general button handler).
PATTERN = rf"^(?:{IMPORT}|{CANCEL}){keyboards.SEPARATOR}"
REPORT_CHARS = 3500  # the report in one message, under Telegram's 4096 with the heading
_COMMAND = re.compile(r"`([^`]+)`")


def offer_keyboard(offer_id: str, lang: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(
                    t("upload_import_button", lang), callback_data=keyboards.data(IMPORT, offer_id)
                ),
                InlineKeyboardButton(
                    t("cancel_button", lang), callback_data=keyboards.data(CANCEL, offer_id)
                ),
            ]
        ]
    )


def _desk(svc: BotServices) -> DataUploads:
    return DataUploads(svc.assistant.engine_settings)


def expire_offers(svc: BotServices) -> None:
    """At the start: let go of the uploads nobody pressed for ``OFFER_LIFETIME``."""
    _desk(svc).expire()


async def _data_on_workers(svc: BotServices, symbol: str) -> bool:
    """Whether the queries of ``symbol`` may run on workers' data other than the bot's own
    directory (``CeleryRunner.data_on_workers``), which an import there never reaches: the
    admin was told "imported" and every answer after came from the workers' old bars.
    Refused, not sent to the workers: one file applied on some workers of an instrument and
    not on others (one away, one whose stored data differs) would answer one question from
    two sets of bars. Workers on the bot's machine reading its directory see the import as
    the in-process pool does."""
    return await svc.assistant.runner.data_on_workers(
        symbol, svc.assistant.engine_settings.data_dir
    )


def _import_command(file_name: str | None, symbol: str, options: str) -> str:
    """The command that imports the file on a worker's machine: ``barb data import
    'nq 5m.csv' -i NQ --interval 5m`` (a backtick would end the command's code span)."""
    name = Path(file_name or "FILE").name.replace("`", "")
    return " ".join(
        part for part in ("barb data import", shlex.quote(name), "-i", symbol, options) if part
    )


def _html(text: str) -> str:
    """A text of ours as HTML, a command in backticks set as code: «Прежние данные
    сохранены (<code>barb data restore ES</code> вернёт их).», where escaped alone the
    backticks were shown as they are."""
    return _COMMAND.sub(r"<code>\1</code>", escape(text))


def _report_html(checked: Checked, lang: str) -> str:
    offer = checked.offer
    lines = [t("upload_report", lang, file=escape(offer.file_name), symbol=offer.symbol)]
    if checked.report is not None:
        text = checked.report.text()
        if len(text) > REPORT_CHARS:
            text = text[:REPORT_CHARS] + "\n…"
        lines.append(f"<pre>{escape(text)}</pre>")
    # Said only for a file Import would take: above a refusal of the caption's own option
    # ("--date-order month-first does not fit the file's dates"), "Import uses the same"
    # contradicted the line below it.
    if offer.options.given() and checked.error is None:
        described = offer.options.described(lang)
        command = offer.options.command()
        lines.append(_html(t("upload_options", lang, command=command, described=described)))
    if checked.plan:
        lines.append(_html(checked.plan))
    if checked.error is not None:
        lines.append(_html(t("upload_refused", lang, reason=checked.error)))
    return "\n".join(lines)


#: Where the caption of each recent album is kept in this process as well, in the
#: application's bot_data: set before any await, so that the album's next file, handled at
#: once beside the first (its caption's row not yet written), finds it.
ALBUM_CAPTIONS = "upload_album_captions"
ALBUMS_KEPT = 64
#: How long a captionless file of an album waits for its first file's caption to be written
#: (another replica may handle that one), in steps.
ALBUM_WAIT_S, ALBUM_STEP_S = 1.0, 0.1


async def _album_caption(
    context: ContextTypes.DEFAULT_TYPE,
    svc: BotServices,
    chat_id: int,
    group: str | None,
    caption: str | None,
) -> str | None:
    """The caption a file is read with: its own, or for a file of an album (several files
    sent at once) without one, the album's. A phone puts the caption the admin types under
    an album on its first file only: the second of two ES files sent "ES --timezone
    Asia/Dubai" was checked as the chat's NQ in New York time. Kept in the database too, not
    only in this process: a restart between the album's files lost it."""
    if group is None:
        return caption
    albums: dict[tuple[int, str], str] = context.application.bot_data.setdefault(ALBUM_CAPTIONS, {})
    if caption:
        albums[chat_id, group] = caption
        while len(albums) > ALBUMS_KEPT:  # the oldest album first (dicts keep their order)
            albums.pop(next(iter(albums)))
        await svc.store.albums.remember(chat_id, group, caption)
        return caption
    loop = asyncio.get_running_loop()
    deadline = loop.time() + ALBUM_WAIT_S
    while True:
        kept = albums.get((chat_id, group)) or await svc.store.albums.caption(chat_id, group)
        if kept is not None or loop.time() >= deadline:
            return kept
        await asyncio.sleep(ALBUM_STEP_S)


#: Names of the files an admin imports bars from (``barb.data``'s importer reads these).
_BARS_SUFFIXES = (".csv", ".txt", ".tsv", ".parquet", ".gz", ".zip")


def _bars_file(name: str | None) -> bool:
    return (name or "").lower().endswith(_BARS_SUFFIXES)


async def on_document(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A file of bars: check it and offer to import it (admins only)."""
    message = update.effective_message
    document = message.document if message else None
    if message is None or document is None:
        return
    svc = services(context)
    chat_id = update.effective_chat.id
    user_id = update.effective_user.id
    is_admin = user_id in svc.settings.admins
    # Only an admin's albums are kept: anyone's file in a group would write a row.
    caption_text = (
        await _album_caption(context, svc, chat_id, message.media_group_id, message.caption)
        if is_admin
        else message.caption
    )
    handed_over = update.effective_chat.type == ChatType.PRIVATE or (
        f"@{context.bot.username}".lower() in (caption_text or "").lower()
    )
    if not is_admin and _bars_file(document.file_name):
        # A file of bars from someone who may not import it: said so, with what they can do.
        # Its caption ("@Barb NQ") was asked as a question, told "I can't see pictures".
        await handlers.on_not_text(update, context, line=N_("upload_admins_only"))
        return
    if not is_admin or not handed_over:
        # Anyone else's file is like any message Barb cannot read: one line on what it does.
        await handlers.on_not_text(update, context)
        return
    sender = svc.sender(context.bot)
    # The chat is stored (replies are stored before they are sent, and belong to a chat),
    # and its /settings language is the replies' (Telegram's language_code was, alone).
    ctx = await load_context(update, context)
    chat, lang = ctx.chat, ctx.lang
    # Under the chat's lock, as every reply of the chat is sent (``UpdateContext.say``).
    async with svc.chat_lock(chat_id):
        known = {s.upper() for s in available_instruments(svc.assistant.engine_settings)}
        try:
            caption = read_caption(caption_text, known, lang)
        except CaptionError as exc:  # nothing fetched, nothing staged
            await sender.text(chat_id, _html(t("upload_refused", lang, reason=str(exc))))
            return
        symbol = caption.symbol or chat.instrument
        if await _data_on_workers(svc, symbol):  # nothing fetched, nothing staged
            command = _import_command(document.file_name, symbol, caption.options.command())
            await sender.text(
                chat_id, _html(t("upload_on_workers", lang, symbol=symbol, command=command))
            )
            return
        # After the workers' refusal: "send it zipped" would only be refused again there.
        if (document.file_size or 0) > MAX_UPLOAD_BYTES:
            await sender.text(chat_id, _html(t("upload_too_large", lang)))
            return
        desk = _desk(svc)
        offer = desk.new_offer(
            document.file_name or "upload.csv",
            symbol,
            user_id,
            chat_id,
            caption.options,
        )
        try:
            async with svc.showing(context.bot, chat_id):
                try:
                    telegram_file = await context.bot.get_file(document.file_id)
                    await telegram_file.download_to_drive(desk.path(offer))
                except Exception as exc:
                    log.warning("could not download %s", document.file_id, exc_info=True)
                    desk.discard(offer)
                    # A document without its size (Telegram's file_size is optional) over
                    # 20 MB is refused by getFile: "send it again" sent the admin round.
                    too_big = isinstance(exc, TelegramError) and "too big" in str(exc).lower()
                    key = N_("upload_too_large") if too_big else N_("upload_download_failed")
                    await sender.text(chat_id, _html(t(key, lang)))
                    return
                # The check reads the whole file with pandas and Arrow: off the event loop.
                checked = await asyncio.to_thread(desk.check, offer, lang)
        except BaseException:  # a bug, or the bot stopping: no file is left staged
            desk.discard(offer)
            raise
        if not checked.importable:
            desk.discard(offer)
            await sender.text(chat_id, _report_html(checked, lang))
            return
        markup = offer_keyboard(offer.id, lang)
        try:
            await sender.text(chat_id, _report_html(checked, lang), markup=markup)
        except TelegramError:
            # Refused for good (the admin blocked the bot, the chat is gone): its buttons
            # will never be pressed, and its staged copy stayed for good.
            desk.discard(offer)
            raise


async def on_upload_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Import or Cancel under a checked file."""
    query = update.callback_query
    # First, so the button stops spinning. Telegram refuses to answer a press it delivers
    # late (made while the bot was down) or one handled again after a stop: the bare
    # ``query.answer()`` raised, and the admin read "Something broke" and nothing was imported.
    await acknowledge(query)
    prefix, parts = keyboards.parse(query.data or "")
    svc = services(context)
    ctx = await load_context(update, context)  # the chat's /settings language, as everywhere
    lang, chat_id = ctx.lang, ctx.chat_id
    sender = svc.sender(context.bot)
    # Under the chat's lock, as every reply of the chat is sent (``UpdateContext.say``).
    async with svc.chat_lock(chat_id):
        desk = _desk(svc)
        offer = desk.get(parts[0]) if parts else None
        if offer is None:
            await sender.text(chat_id, escape(t("upload_gone", lang)))
            return
        if ctx.user_id != offer.user_id:
            await sender.text(chat_id, escape(t("upload_not_yours", lang)))
            return
        # Set when this press is handled again: the bot stopped (or was killed) after Import
        # wrote the data and before the reply saying so was stored.
        result = offer.imported
        if result is None and offer.importing is not None:
            result = await asyncio.to_thread(desk.outcome, offer)
        if result is not None and (offer.said or prefix == CANCEL):
            # A second press (or one on the second copy of the offer a lost response left)
            # read "send it again" of a file imported a moment ago.
            await _tell(sender, chat_id, desk, offer, _outcome(result, prefix, lang))
            return
        if result is None:
            if query.message is not None:
                try:
                    await query.message.edit_reply_markup(reply_markup=None)
                except Exception:  # already edited: the buttons are gone either way
                    log.debug("keyboard of the upload offer already gone")
            if prefix == CANCEL:
                desk.discard(offer)
                await sender.text(chat_id, escape(t("upload_cancelled", lang)))
                return
            if offer.expired():
                desk.discard(offer)
                await sender.text(chat_id, escape(t("upload_expired", lang)))
                return
            # Asked again: offered before the bot sent its queries to workers, or before a
            # worker of another machine joined.
            if await _data_on_workers(svc, offer.symbol):
                desk.discard(offer)
                command = _import_command(offer.file_name, offer.symbol, offer.options.command())
                text = t("upload_on_workers", lang, symbol=offer.symbol, command=command)
                await sender.text(chat_id, _html(text))
                return
            async with svc.showing(context.bot, chat_id):
                try:
                    result = await asyncio.to_thread(desk.accept, offer, lang)
                except BarbError as exc:
                    await sender.text(chat_id, _html(t("upload_refused", lang, reason=str(exc))))
                    return
        await _tell(sender, chat_id, desk, offer, _imported(result, lang))


async def _tell(sender: Sender, chat_id: int, desk: DataUploads, offer: Offer, text: str) -> None:
    """Send what became of an imported offer and, once the reply is stored (sent, queued
    for the sending pass, or refused for good: the staged copy then stayed for good), keep
    the offer's record as its outcome, which the next press is answered from ("Already
    imported: …"). Until then the record is what a press handled again after a stop is
    answered from, with the reply itself."""
    try:
        await sender.text(chat_id, _html(text))
    except (NotDelivered, TelegramError):
        desk.keep_outcome(offer)
        raise
    desk.keep_outcome(offer)


def _outcome(result: Imported, prefix: str, lang: str) -> str:
    """A press on an offer already imported: "Already imported: ES: imported 6,900 bars; …",
    or for Cancel "Too late to cancel: the file was already imported (`barb data restore ES`
    brings the previous data back)."."""
    symbol = result.meta.instrument
    if prefix != CANCEL:
        return t("upload_already_imported", lang, imported=_imported(result, lang, again=True))
    if result.kept:
        return t("upload_too_late_to_cancel", lang, symbol=symbol)
    return t("upload_too_late_to_cancel_first", lang, symbol=symbol)


def _imported(result: Imported, lang: str, again: bool = False) -> str:
    """What Import did: "ES: imported 6,900 bars; the data now runs Mar 18, 2024 to
    Mar 22, 2024. The previous data is kept (`barb data restore ES` brings it back)."; said
    ``again``, without the temporary files it removed then."""
    meta = result.meta
    if result.filled:  # "Imported into NQ. Filled in the volumes of 1,380 bars on …"
        text = t("upload_filled_volumes", lang, symbol=meta.instrument, filled=result.note)
    else:
        text = _bars_imported(result, lang)
    # Only when this import kept the data it replaced: after a first import there is
    # nothing for `barb data restore` to bring back, yet the bot said there was.
    if result.kept:
        text += " " + t("upload_previous_kept", lang, symbol=meta.instrument)
    if result.cleaned and not again:
        text += " " + result.cleaned
    return text


def _bars_imported(result: Imported, lang: str) -> str:
    meta = result.meta
    return t(
        "upload_imported",
        lang,
        plural_of=result.added,
        symbol=meta.instrument,
        bars=decimal(result.added, lang),
        first=day(meta.first_date, lang),
        last=day(meta.last_date, lang),
    )
