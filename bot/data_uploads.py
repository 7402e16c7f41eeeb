"""Files of bars an admin sends to the bot: staged, checked with the importer, imported only
when the admin presses Import.

Import adds a file that continues the stored imported bars (``--append``: an admin sending
each day's new bars) and replaces the data otherwise (``--replace``); the report the admin
reads before pressing says which, with the stored bars it replaces. Every Import used to
replace: two daily files in a row left one day of data, and the history, kept for one
generation only, was deleted by the second without a word.

Nothing Telegram-specific here: an offer is a staged file plus a small JSON record beside it
in ``{data_dir}/.uploads/{id}/``, so an offer survives a restart of the bot, and the import
is ``barb.data.importer``'s, the same code as ``barb data import``.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from barb.data.importer import (
    CheckedFile,
    ImportRefused,
    ImportResult,
    Mode,
    check_file,
    plan_write,
    write_checked,
)
from barb.data.store import data_path, previous_path, read_meta
from barb.data.validation import ImportReport
from barb.errors import BarbError, DataError
from barb.settings import EngineSettings

UPLOADS_DIR = ".uploads"
RECORD = "offer.json"
# Telegram lets bots download files up to 20 MB; larger ones go through `barb data import`.
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


class Offer(BaseModel):
    """A file waiting for the admin's Import or Cancel."""

    id: str
    symbol: str
    file_name: str  # as sent, for messages and the data's source
    user_id: int
    chat_id: int
    created_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC))


@dataclass(frozen=True)
class Checked:
    """What the check found: the report when the file could be read, else only the error."""

    offer: Offer
    report: ImportReport | None
    error: str | None  # one sentence when the file is refused

    @property
    def importable(self) -> bool:
        return self.error is None and self.report is not None and self.report.ok


class DataUploads:
    """Offers of uploaded files, kept under the data directory."""

    def __init__(self, settings: EngineSettings):
        self.settings = settings
        self.root = Path(settings.data_dir) / UPLOADS_DIR

    def new_offer(self, file_name: str, symbol: str, user_id: int, chat_id: int) -> Offer:
        offer = Offer(
            id=uuid.uuid4().hex[:12],
            symbol=symbol.upper(),
            file_name=file_name or "upload.csv",
            user_id=user_id,
            chat_id=chat_id,
        )
        folder = self.root / offer.id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / RECORD).write_text(offer.model_dump_json(), encoding="utf-8")
        return offer

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

    def check(self, offer: Offer) -> Checked:
        """The validation report of the staged file, with what Import will do to the stored
        data (blocking: run it in a thread)."""
        try:
            checked = check_file(
                self.path(offer), offer.symbol, self.settings, name=offer.file_name
            )
        except BarbError as exc:
            return Checked(offer, None, str(exc))
        if not checked.report.ok:
            return Checked(
                offer, checked.report, str(ImportRefused(checked.report, offer.file_name))
            )
        try:
            _, sentence = self._plan(checked)
        except BarbError as exc:
            return Checked(offer, checked.report, str(exc))
        if sentence:
            checked.report.notes.append(sentence)
        return Checked(offer, checked.report, None)

    def accept(self, offer: Offer) -> ImportResult:
        """Import the staged file (checked again, with the same code), appending or replacing
        as the check said, and keeping the previous file; the offer is then gone. Raises
        ``BarbError``."""
        try:
            checked = check_file(
                self.path(offer), offer.symbol, self.settings, name=offer.file_name
            )
            mode, _ = self._plan(checked)
            return write_checked(checked, self.settings, mode)
        finally:
            self.discard(offer)

    def _plan(self, checked: CheckedFile) -> tuple[Mode, str]:
        """Append when the file continues the stored imported bars (every bar they share
        agrees), else replace; and the sentence that tells the admin so before Import. For
        NQ holding 20,700 imported bars and a file of the next day's 1,380: ("append",
        "Import adds the file's 1,380 new bars to the stored NQ data (20,700 bars,
        2024-03-04 to 2024-03-22).")."""
        symbol = checked.instrument.symbol
        target = data_path(symbol, self.settings)
        if not target.exists():
            return "replace", ""
        current = read_meta(target)
        sample = ", the synthetic sample" if current.source == "synthetic" else ""
        stored = (
            f"the stored {symbol} data ({current.rows:,} bars, {current.first_date} to "
            f"{current.last_date}{sample})"
        )
        if current.source == "imported" and checked.frame is not None:
            try:
                plan = plan_write(checked, self.settings, "append")
            except BarbError:
                pass  # it does not continue the stored bars: replaced, as said below
            else:
                if plan.added == 0:
                    raise DataError(
                        f"every bar of {checked.name} is already in {stored}; there is "
                        "nothing to import."
                    )
                sentence = f"Import adds the file's {plan.added:,} new bars to {stored}."
                return "append", f"{sentence} {plan.note}" if plan.note else sentence
        sentence = (
            f"Import replaces {stored}; `barb data restore {symbol}` brings it back until "
            "the next import."
        )
        if checked.frame is not None:
            note = plan_write(checked, self.settings, "replace").note
            sentence += f" {note}" if note else ""
        kept = previous_path(target)
        if kept.exists():
            old = read_meta(kept)
            sentence += (
                f" The data kept from before ({old.rows:,} bars, {old.first_date} to "
                f"{old.last_date}) is then deleted."
            )
        return "replace", sentence

    def discard(self, offer: Offer) -> None:
        shutil.rmtree(self.root / offer.id, ignore_errors=True)
