"""Files of bars an admin sends to the bot: staged, checked with the importer, imported only
when the admin presses Import.

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

from barb.data.importer import ImportRefused, ImportResult, check_file, import_file
from barb.data.validation import ImportReport
from barb.errors import BarbError
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
        """The validation report of the staged file (blocking: run it in a thread)."""
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
        return Checked(offer, checked.report, None)

    def accept(self, offer: Offer) -> ImportResult:
        """Import the staged file (checked again, with the same code), replacing the data and
        keeping the previous file; the offer is then gone. Raises ``BarbError``."""
        try:
            return import_file(
                self.path(offer), offer.symbol, self.settings, mode="replace", name=offer.file_name
            )
        finally:
            self.discard(offer)

    def discard(self, offer: Offer) -> None:
        shutil.rmtree(self.root / offer.id, ignore_errors=True)
