"""Files of bars an admin sends to the bot: staged, checked with the importer, imported only
when the admin presses Import.

Import adds a file that continues the stored imported bars (``--append``: an admin sending
each day's new bars) and replaces the data otherwise (``--replace``); the report the admin
reads before pressing says which, with the stored bars it replaces. Every Import used to
replace: two daily files in a row left one day of data, and the history, kept for one
generation only, was deleted by the second without a word.

The offer keeps the mode its report said and the ``stored_version`` it was chosen against,
and Import writes in that mode only while the stored data is still that one: a Thursday
file offered as "adds 1,380 new bars", pressed after Friday's was imported, replaced the
5,520 stored bars by its 1,380, since the mode used to be chosen again at the press.

Nothing Telegram-specific here: an offer is a staged file plus a small JSON record beside it
in ``{data_dir}/.uploads/{id}/``, so an offer survives a restart of the bot, and the import
is ``barb.data.importer``'s, the same code as ``barb data import``. The record keeps what
Import writes from just before the data file is replaced: a press handled again after the
bot stopped (or was killed) mid-import is answered from it, and the file is never imported
twice. Once the reply is stored the staged file goes and the record stays as the offer's
outcome, so that a second press reads "Already imported" rather than "send it again". An
offer nobody presses for ``OFFER_LIFETIME`` expires, as a plan does, and one whose check
never ended (the bot was killed in it) goes at the next start or upload.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import logging
import os
import re
import shutil
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from barb.data.importer import (
    CheckedFile,
    ImportRefused,
    ImportResult,
    Mode,
    StoredChanged,
    check_file,
    plan_write,
    write_checked,
)
from barb.data.store import (
    DamagedData,
    DataMeta,
    data_path,
    previous_path,
    read_meta,
    stored_version,
    version_of,
    write_lock,
)
from barb.data.validation import ImportReport
from barb.errors import BarbError, DataError
from barb.i18n import decimal
from barb.settings import EngineSettings
from bot.store.housekeeping import PLAN_LIFETIME
from bot.texts import t
from bot.upload_caption import UploadOptions

log = logging.getLogger(__name__)

UPLOADS_DIR = ".uploads"
RECORD = "offer.json"
# Telegram lets bots download files up to 20 MB; larger ones go through `barb data import`.
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
#: A .gz or .zip upload unpacked past this is refused: minute bars as CSV shrink five to ten
#: times, while a crafted archive unpacked gigabytes onto the bot's disk.
MAX_UNPACKED_BYTES = 200_000_000
#: An offer untouched this long expires as a plan does, and its staged file (up to 20 MB)
#: is removed at the next upload or start: unpressed uploads stayed under .uploads for good.
OFFER_LIFETIME = PLAN_LIFETIME
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


class Imported(BaseModel):
    """What Import wrote, as its reply says it: "ES: imported 6,900 bars; the data now runs
    Mar 18, 2024 to Mar 22, 2024. The previous data is kept (…)"."""

    meta: DataMeta  # of the file now in place
    added: int
    kept: bool  # the file it replaced is kept for `barb data restore`
    cleaned: str = ""  # the killed writes' temporary files it removed, in the admin's language
    version: str = ""  # the ``stored_version`` the write gives the data (``version_of``)
    # A --fill-volumes import: ``added`` bars got volumes, and ``note`` says on which dates
    # (and which still have none), in the admin's language.
    filled: bool = False
    note: str = ""


class Offer(BaseModel):
    """A file waiting for the admin's Import or Cancel."""

    id: str
    symbol: str
    file_name: str  # as sent, for messages and the data's source
    user_id: int
    chat_id: int
    created_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC))
    # From the caption (``--timezone Asia/Dubai``): the check's, and so Import's.
    options: UploadOptions = Field(default_factory=UploadOptions)
    # Set by the check: what its report said Import does, and to which stored data.
    mode: Mode | None = None
    stored: str | None = None  # ``stored_version`` of the data the mode was chosen against
    # When the record was last written (offered, checked, pressed, imported); None in the
    # records of the version before, which expire from ``created_at``.
    saved_at: dt.datetime | None = None
    # What Import is about to write, recorded just before the data file is replaced: found
    # stored (its ``version``) after a kill, the write was this offer's.
    importing: Imported | None = None
    imported: Imported | None = None  # set once Import wrote
    # The reply saying it was imported is stored: the staged file is gone, and the record
    # is the offer's outcome, which a second press is answered from, until it expires.
    said: bool = False

    def expired(self, now: dt.datetime | None = None) -> bool:
        """Untouched for longer than ``OFFER_LIFETIME``."""
        now = now or dt.datetime.now(dt.UTC)
        return now - (self.saved_at or self.created_at) > OFFER_LIFETIME

    @property
    def unsaid(self) -> bool:
        """Import wrote (or was about to write) the data and the reply saying so is not
        stored yet: the press is handled again at the next start, however long the bot was
        down, and is answered from this record."""
        return (self.imported is not None or self.importing is not None) and not self.said


@dataclass(frozen=True)
class Checked:
    """What the check found: the report when the file could be read, else only the error."""

    offer: Offer
    report: ImportReport | None
    error: str | None  # one sentence when the file is refused
    plan: str = ""  # what Import will do to the stored data, in the admin's language

    @property
    def importable(self) -> bool:
        return self.error is None and self.report is not None and self.report.ok


class DataUploads:
    """Offers of uploaded files, kept under the data directory.

    A new offer's folder is locked (``flock``, as ``write_lock`` locks the data directory)
    until its check ends or it is discarded: an offer with no mode whose folder nobody
    holds had its download or check killed, and ``expire`` removes it at once, while the
    offer another replica (or chat) is checking is left alone. The killed check's staged
    copy (up to 20 MB) stayed for good, beside the offer made when the upload was handled
    again at the next start."""

    def __init__(self, settings: EngineSettings):
        self.settings = settings
        self.root = Path(settings.data_dir) / UPLOADS_DIR
        self._held: dict[str, int] = {}  # offer id -> descriptor holding its folder's lock
        self._holding = threading.Lock()  # the check ends in a worker thread

    def new_offer(
        self,
        file_name: str,
        symbol: str,
        user_id: int,
        chat_id: int,
        options: UploadOptions | None = None,
    ) -> Offer:
        self.expire()  # a new upload is when the old ones nobody pressed are let go
        offer = Offer(
            id=uuid.uuid4().hex[:12],
            symbol=symbol.upper(),
            file_name=file_name or "upload.csv",
            user_id=user_id,
            chat_id=chat_id,
            options=options or UploadOptions(),
        )
        folder = self.root / offer.id
        folder.mkdir(parents=True)
        fd = os.open(folder, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)  # a new folder: nobody else holds it
        with self._holding:
            self._held[offer.id] = fd
        return self._save(offer)  # locked before it has a record: never taken for killed

    def _release(self, offer_id: str) -> None:
        """Let go of the lock on an offer's folder (its check ended, or it is discarded)."""
        with self._holding:
            fd = self._held.pop(offer_id, None)
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the lock

    def _save(self, offer: Offer) -> Offer:
        """Write the record whole or not at all (it may hold the only word of an import),
        stamped with the time; the offer as saved."""
        offer = offer.model_copy(update={"saved_at": dt.datetime.now(dt.UTC)})
        folder = self.root / offer.id
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{RECORD}.tmp"
        tmp.write_text(offer.model_dump_json(), encoding="utf-8")
        os.replace(tmp, folder / RECORD)
        return offer

    def expire(self, now: dt.datetime | None = None) -> list[str]:
        """Remove the offers untouched for longer than ``OFFER_LIFETIME`` (a folder whose
        record cannot be read counts from its own time), and those never checked that nobody
        is checking (the bot was killed in the download or the check); the ids removed.
        An offer whose import is not said yet stays (``Offer.unsaid``): this runs at the
        start before the stored presses are handled again, and a bot stopped mid-import and
        down over a day answered its press with "send it again" of an imported file."""
        now = now or dt.datetime.now(dt.UTC)
        removed = []
        folders = sorted(self.root.iterdir()) if self.root.is_dir() else []
        for folder in folders:
            if not re.fullmatch(r"[0-9a-f]{12}", folder.name):
                continue
            try:
                try:
                    offer = self.get(folder.name)
                except ValueError:  # a record cut short, or of an unknown form
                    offer = None
                if offer is not None:
                    old = not offer.unsaid and (
                        offer.expired(now) or (offer.mode is None and not _held(folder))
                    )
                else:
                    changed = dt.datetime.fromtimestamp(folder.stat().st_mtime, dt.UTC)
                    old = now - changed > OFFER_LIFETIME
            except OSError:  # removed meanwhile (another replica starting), or unreadable
                continue
            if old:
                self._release(folder.name)
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder.name)
        if removed:
            log.info("expired %d upload offers nobody pressed: %s", len(removed), removed)
        return removed

    def path(self, offer: Offer) -> Path:
        """Where the file's bytes go: its own name (made safe), so that .gz and .zip stay so."""
        name = _UNSAFE.sub("_", Path(offer.file_name).name).strip(". ") or "upload.csv"
        return self.root / offer.id / name

    def get(self, offer_id: str) -> Offer | None:
        if not re.fullmatch(r"[0-9a-f]{12}", offer_id):
            return None
        record = self.root / offer_id / RECORD
        if not record.exists():
            return None
        return Offer.model_validate_json(record.read_text(encoding="utf-8"))

    def check(self, offer: Offer, lang: str = "en") -> Checked:
        """The validation report of the staged file, with what Import will do to the stored
        data in ``lang`` (blocking: run it in a thread); an importable file's offer keeps
        that mode and the stored data's version for ``accept``. The offer's folder is let
        go of at the end (``new_offer`` locked it)."""
        try:
            return self._check(offer, lang)
        finally:
            self._release(offer.id)

    def _check(self, offer: Offer, lang: str) -> Checked:
        try:
            checked = self._read(offer, lang)
        except BarbError as exc:
            return Checked(offer, None, str(exc))
        if not checked.report.ok:
            return Checked(
                offer, checked.report, str(ImportRefused(checked.report, offer.file_name))
            )
        try:
            target = data_path(offer.symbol, self.settings)
            # Under the write lock, so that the mode and the version are of one stored file.
            with write_lock(target):
                version = stored_version(target)
                mode, sentence, note = self._plan(checked, lang, bool(offer.options.fill_volumes))
        except BarbError as exc:
            return Checked(offer, checked.report, str(exc))
        except Exception as exc:  # a damaged stored file: OSError, ArrowInvalid, pydantic's
            log.warning("cannot plan the import of %s as %s", offer.id, offer.symbol, exc_info=True)
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            error = t("upload_stored_unreadable", lang, symbol=offer.symbol, reason=reason)
            return Checked(offer, checked.report, error)
        if note:
            checked.report.notes.append(note)
        offer = self._save(offer.model_copy(update={"mode": mode, "stored": version}))
        return Checked(offer, checked.report, None, sentence)

    def accept(self, offer: Offer, lang: str = "en") -> Imported:
        """Import the staged file (checked again, with the same code), appending or replacing
        as the check said, and keeping the previous file. What it writes is recorded with the
        offer just before the data file is replaced (``importing``, with the version the
        write gives the data) and once it is in place (``imported``): the bot stopped
        mid-import and, handling the press again at its start, said "send it again" of an
        imported file; killed just after the rename, it said "the stored data changed" of
        its own write. An offer already imported gives that record and writes nothing.
        Raises ``BarbError`` (the offer is then gone), and refuses when the stored data
        changed since the check: the mode said may no longer fit, and falling back from
        append to replace deleted history."""
        planned = self.get(offer.id)  # the record, with what the check said
        if planned is None or planned.mode is None:  # gone, or staged by the version before
            self.discard(offer)
            raise DataError(t("upload_gone", lang))
        done = self.outcome(planned)
        if done is not None:
            return done
        planned = self._save(planned)  # pressed: not expired while it imports
        recorded: list[Imported] = []

        def imported(result: ImportResult) -> Imported:
            return Imported(
                meta=result.meta,
                added=result.added,
                kept=result.kept,
                cleaned=result.cleaned,
                version=version_of(result.meta),
                filled=planned.mode == "volumes",
                note=result.note if planned.mode == "volumes" else "",
            )

        def writing(result: ImportResult) -> None:
            self._save(planned.model_copy(update={"importing": imported(result)}))

        def record(result: ImportResult) -> None:
            done = imported(result)
            self._save(planned.model_copy(update={"imported": done}))
            recorded.append(done)

        try:
            checked = self._read(planned, lang)  # with the options the check used
            write_checked(
                checked,
                self.settings,
                planned.mode,
                expect=planned.stored,
                writing=writing,
                written=record,
            )
        except StoredChanged:
            self.discard(offer)
            raise DataError(t("upload_stored_changed", lang, symbol=offer.symbol)) from None
        except BaseException:
            if not recorded:  # nothing was written: nothing to tell later
                self.discard(offer)
            raise
        self._drop_staged(offer)
        return recorded[0]

    def outcome(self, offer: Offer) -> Imported | None:
        """What Import wrote of ``offer`` (blocking: run it in a thread), or None: its
        record's, or what it was about to write when that is the data stored (the bot was
        killed between replacing the data file and recording it; the version holds the
        write's own time, so no other write gives it), recorded now."""
        if offer.imported is not None or offer.importing is None:
            return offer.imported
        target = data_path(offer.symbol, self.settings)
        with write_lock(target):
            found = stored_version(target)
        if found != offer.importing.version:  # killed before the rename: nothing written
            return None
        self._save(offer.model_copy(update={"imported": offer.importing}))
        self._drop_staged(offer)
        return offer.importing

    def keep_outcome(self, offer: Offer) -> None:
        """The reply saying the offer was imported is stored (or refused for good): its
        record stays as the offer's outcome until it expires, so that a second press of its
        buttons (or of a second copy of the offer a lost response made Telegram show) is
        told what happened to it."""
        planned = self.get(offer.id)
        if planned is None or planned.said:
            return
        self._save(planned.model_copy(update={"said": True}))
        self._drop_staged(offer)

    def _drop_staged(self, offer: Offer) -> None:
        """Remove the staged file (up to 20 MB) of an offer imported: its record says what
        was written, and nothing reads the file again."""
        folder = self.root / offer.id
        for path in folder.iterdir() if folder.is_dir() else ():
            if path.name != RECORD:
                path.unlink(missing_ok=True)

    def _read(self, offer: Offer, lang: str) -> CheckedFile:
        """The staged file read with its caption's options, refusals advising them as a
        caption ("send the file again with the caption `--timezone Asia/Dubai`")."""
        return check_file(
            self.path(offer),
            offer.symbol,
            self.settings,
            name=offer.file_name,
            lang=lang,
            advice="caption",
            unpacked_limit=MAX_UNPACKED_BYTES,
            **offer.options.arguments(),
        )

    def _plan(
        self, checked: CheckedFile, lang: str, fill_volumes: bool = False
    ) -> tuple[Mode, str, str]:
        """Append when the file continues the stored imported bars (every bar they share
        agrees), else replace; the sentence in ``lang`` that tells the admin so before
        Import; and the importer's note on the write (a hole it leaves, another
        instrument's prices), which joins its report. For NQ holding 20,700 imported bars
        and a file of the next day's 1,380: ("append", "Import adds the file's 1,380 new
        bars to the stored NQ data (20,700 bars, 2024-03-04 to 2024-03-22).", "")."""
        symbol = checked.instrument.symbol
        target = data_path(symbol, self.settings)
        if fill_volumes:
            # The caption's --fill-volumes: the command's checks refuse a file whose bars
            # of those dates are not the stored ones. What it fills is said once done.
            plan = plan_write(checked, self.settings, "volumes")
            sentence = t(
                "upload_fills_volumes",
                lang,
                plural_of=plan.added,
                added=decimal(plan.added, lang),
                symbol=symbol,
            )
            return "volumes", sentence + _kept_deleted(target, lang), ""
        if not target.exists():
            # Nothing stored to compare with: the file is held to the instrument's known
            # level (refused far from it unless the caption says --any-level).
            return "replace", "", plan_write(checked, self.settings, "replace").note
        try:
            current = read_meta(target)
        except DamagedData:
            # The way out of a damaged stored file is to write a good one over it; the
            # importer's note (in the report) says what cannot be read, and that it is not kept.
            sentence = t("upload_replaces_damaged", lang, symbol=symbol)
            return "replace", sentence, plan_write(checked, self.settings, "replace").note
        sample = t("upload_sample", lang) if current.source == "synthetic" else ""
        stored = _span(current.rows, current.first_date, current.last_date, lang, sample)
        why = ""
        if current.source == "imported" and checked.frame is not None:
            try:
                plan = plan_write(checked, self.settings, "append")
            except BarbError as exc:
                # It does not continue the stored bars: replaced, as said below, and why,
                # when it runs past them as the next day's file would (ES's next week sent
                # as NQ's was offered as a replace of three weeks, the reason unsaid).
                if checked.frame["timestamp"].iloc[-1].date() > current.last_date:
                    why = " " + t("upload_not_appended", lang, reason=_reason(exc, checked))
            else:
                if plan.added == 0:
                    raise DataError(
                        t(
                            "upload_nothing_new",
                            lang,
                            file=checked.name,
                            symbol=symbol,
                            stored=stored,
                        )
                    )
                sentence = t(
                    "upload_appends",
                    lang,
                    plural_of=plan.added,
                    added=decimal(plan.added, lang),
                    symbol=symbol,
                    stored=stored,
                )
                return "append", sentence + _kept_deleted(target, lang), plan.note
        replace = plan_write(checked, self.settings, "replace")
        if not replace.replaces:  # its bars cannot be read, though its footer can
            return "replace", t("upload_replaces_damaged", lang, symbol=symbol), replace.note
        sentence = t("upload_replaces", lang, symbol=symbol, stored=stored)
        return "replace", sentence + why + _kept_deleted(target, lang), replace.note

    def discard(self, offer: Offer) -> None:
        self._release(offer.id)
        shutil.rmtree(self.root / offer.id, ignore_errors=True)


# Where an --append refusal goes on to say what the command line should do next.
_NOTHING_WRITTEN = re.compile(r"\s*(?:Nothing was written|Ничего не записано)\b.*$", re.S)


def _reason(exc: BarbError, checked: CheckedFile) -> str:
    """Why --append refuses a file, for the offer that replaces instead: the refusal
    without the file's name before it or the command-line advice after it."""
    reason = str(exc).removeprefix(f"{checked.name}: ")
    reason = _NOTHING_WRITTEN.sub("", reason).rstrip(" ;")
    return reason if reason.endswith((".", "?")) else reason + "."


def _held(folder: Path) -> bool:
    """Whether some process (this one included) holds the lock on an offer's folder: it is
    downloading or checking the file. The kernel lets go of a killed holder's lock."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _kept_deleted(target: Path, lang: str) -> str:
    """The sentence (with its leading space) naming the kept file a write over ``target``
    deletes, '' when none is kept: only one generation is kept, and an append keeps the data
    it adds to as a replace does, so the data kept from before the last import went
    without a word when the next day's file was appended."""
    kept = previous_path(target)
    if not kept.exists():
        return ""
    old = read_meta(kept)
    return " " + t(
        "upload_kept_deleted", lang, span=_span(old.rows, old.first_date, old.last_date, lang)
    )


def _span(rows: int, first: object, last: object, lang: str, sample: str = "") -> str:
    """Stored bars in brackets: "(20,700 bars, 2024-03-04 to 2024-03-22)",
    «(20 700 баров, 2024-03-04 — 2024-03-22)»."""
    bars = t("upload_bars", lang, plural_of=rows, rows=decimal(rows, lang))
    return t("upload_span", lang, bars=bars, first=first, last=last, sample=sample)
