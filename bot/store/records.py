"""What the store hands out and takes in: frozen pydantic models, never ORM objects.

The vocabularies (chat types, roles, statuses…) are ``Literal`` types defined once here; the
schema's CHECK constraints are generated from them, so a value the code can write is a value
the database accepts.
"""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

#: Telegram's chat types Barb answers in (channels are not served).
ChatType = Literal["private", "group", "supergroup"]
Language = Literal["auto", "en", "ru"]
Role = Literal["user", "assistant", "tool"]
PendingKind = Literal["confirm", "clarify"]
PendingStatus = Literal["pending", "running", "done", "cancelled", "declined", "expired"]
#: The statuses an action can end in; ``resolve`` accepts only these.
FinalStatus = Literal["done", "cancelled", "declined", "expired"]
ReplyKind = Literal["text", "photo", "document"]
#: ``held``: stored with the answer but sent only when asked for (the CSV behind its button).
ReplyStatus = Literal["queued", "sent", "failed", "held"]
#: What a remembered preference can be about. All but ``note`` hold one value per person
#: (a new one replaces the old); notes are short quoted sentences, several allowed.
PreferenceKind = Literal[
    "session", "instrument", "timezone", "language", "charts", "confirmation", "note"
]
#: The kinds a person holds at most one of.
SINGLE_VALUED_PREFERENCES: frozenset[str] = frozenset(get_args(PreferenceKind)) - {"note"}
#: Work a restart must not lose: a question being answered, a confirmed plan being run, a
#: cancelled plan being worded by the model, a ``/query`` running.
WorkKind = Literal["question", "run", "cancel", "query"]
#: How an answered run ended, for its plan message: "Done.", "Failed." (a query gave no
#: result), or its Run and Cancel buttons again (it failed on Barb's side before anything
#: was shown).
RunOutcome = Literal["done", "failed", "reopened"]
#: What a per-person limit counts: questions to the model, or /query runs.
LimitScope = Literal["question", "query"]

DEFAULT_INSTRUMENT = "NQ"
#: Telegram's callback_data holds 64 bytes; the id leaves room for a prefix such as "run:".
PENDING_ID_LENGTH = 16
#: A question id groups the transcript rows of one question; a uuid4 in hex.
QUESTION_ID_LENGTH = 32
#: A replica's name (``StoreSettings.replica_id``), recorded on the rows it holds a lease on.
LEASE_OWNER_LENGTH = 64
#: Telegram's media_group_id of an album (a string of digits, under 30 in practice).
ALBUM_ID_LENGTH = 64


@dataclass(frozen=True)
class Lease:
    """Who holds a row (work in flight, an update received), and for how long without
    renewing it."""

    owner: str
    duration: timedelta


def values_of(literal: Any) -> tuple[str, ...]:
    """The allowed values of a ``Literal`` type, for CHECK constraints and validation."""
    return tuple(get_args(literal))


def json_object(value: Mapping[str, Any], what: str) -> dict[str, Any]:
    """``value`` as a dict, after checking that JSON can hold it exactly.

    Checked before any SQL runs, so the error names the field rather than a statement;
    NaN and infinity are refused because PostgreSQL's json type refuses them.
    """
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} cannot be stored as JSON: {exc}") from exc
    return dict(value)


def new_pending_id() -> str:
    """A short URL-safe random id (96 bits): unguessable, and small enough for callback_data."""
    return secrets.token_urlsafe(12)


def new_question_id() -> str:
    return uuid.uuid4().hex


class _Record(BaseModel):
    # from_attributes: the repositories build records straight from ORM rows, and the
    # Literal fields check on the way out what the CHECK constraints held on the way in.
    model_config = ConfigDict(frozen=True, extra="forbid", from_attributes=True)


class ChatSettings(_Record):
    """What a chat has chosen with /settings. Unknown keys are an error when set in code."""

    confirm_queries: bool = True
    charts: bool = True
    language: Language = "auto"

    @classmethod
    def from_stored(cls, stored: dict[str, Any] | None) -> Self:
        """Read the stored JSON, ignoring keys this version does not know (an option since
        removed, or one a newer Barb added).

        Invalid stored values still raise: they can only come from a bug, not from a person.
        """
        known = {key: value for key, value in (stored or {}).items() if key in cls.model_fields}
        return cls.model_validate(known)


class Chat(_Record):
    id: int
    type: ChatType
    instrument: str
    settings: ChatSettings
    #: The language the model last detected for this chat (e.g. "ru"); None until it has.
    language: str | None
    created_at: datetime
    updated_at: datetime

    @field_validator("settings", mode="before")
    @classmethod
    def _read_stored(cls, value: Any) -> Any:
        return ChatSettings.from_stored(value) if isinstance(value, dict) else value


class Preference(_Record):
    """Something a person asked Barb to remember: ``kind`` "session", ``text`` "RTH".

    Data, never instructions: it reaches the model quoted, as a value of its kind.
    """

    id: int
    user_id: int
    kind: PreferenceKind
    text: str
    created_at: datetime


class NewMessage(_Record):
    """One transcript row to append; the store keeps ``payload`` and ``data`` opaquely."""

    role: Role
    payload: dict[str, Any]
    user_id: int | None = None
    #: For tool results: the text the model saw (the result's summary).
    model_summary: str | None = None
    #: What the person saw: the query, result metadata, a small table preview.
    data: dict[str, Any] | None = None

    @field_validator("payload", "data")
    @classmethod
    def _json_ready(cls, value: dict[str, Any] | None, info: ValidationInfo) -> Any:
        return None if value is None else json_object(value, str(info.field_name))


class StoredMessage(_Record):
    id: int
    chat_id: int
    thread_id: int | None = None
    question_id: str
    user_id: int | None
    role: Role
    payload: dict[str, Any]
    model_summary: str | None
    data: dict[str, Any] | None
    created_at: datetime


class PendingAction(_Record):
    """A confirmation or clarification waiting for a button press (or already answered)."""

    id: str
    chat_id: int
    #: The only person who may press its buttons.
    user_id: int
    kind: PendingKind
    payload: dict[str, Any]
    status: PendingStatus
    #: The Telegram message carrying the buttons, to edit once the action is resolved.
    message_id: int | None
    created_at: datetime
    resolved_at: datetime | None


class Claim(_Record):
    """A press on an action's button: the action as it stands after the press (None if the
    id is unknown), and whether this press claimed it."""

    action: PendingAction | None
    won: bool
    #: The run recorded as in flight with a won claim (``claim(..., work=...)``).
    work_id: int | None = None


class Placed(_Record):
    """A new action placed in its conversation (``PendingRepository.place``): the action,
    ``declined`` already if a later question's action was there first, and the older ones
    it replaced (declined)."""

    action: PendingAction
    replaced: list[PendingAction]


class InFlight(_Record):
    """Work begun and not yet answered: kept until its reply is stored, so that the next
    start can resume it if the process dies meanwhile."""

    id: int
    chat_id: int
    user_id: int
    kind: WorkKind
    #: A question or a /query: the asker, the text, the message to reply to; a run or a
    #: cancel: the action's id and the language.
    payload: dict[str, Any]
    #: How many times the work was started (1 when begun; +1 at each resumption).
    attempts: int
    created_at: datetime
    #: A run whose answer is stored, its plan message not yet marked done.
    answered_at: datetime | None = None
    #: How that run ended: what its plan message is to say, even after a restart.
    outcome: RunOutcome | None = None
    #: The replica working on it, and until when unless it renews the lease.
    lease_owner: str | None = None
    lease_expires_at: datetime | None = None
    #: A question stopped by a /cancel or /reset another replica handled: not answered.
    stopped_at: datetime | None = None


class UsageTotals(_Record):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    #: The cost of the priced calls only: see ``unpriced_calls``.
    cost_usd: float = 0.0
    calls: int = 0
    #: Calls of models without a known price, whose cost is not in ``cost_usd``.
    unpriced_calls: int = 0

    @property
    def price_known(self) -> bool:
        """Every call had a price: ``cost_usd`` is the whole cost."""
        return self.unpriced_calls == 0

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )


class UsageLine(UsageTotals):
    """One (day, chat, person, model) line of the usage table, for the admins' report."""

    day: date
    chat_id: int
    user_id: int
    model: str


class NewReply(_Record):
    """One message of a reply to queue: its kind, what the sender needs, and a file's bytes."""

    kind: ReplyKind
    #: Text, parse mode and buttons, or caption and file name.
    payload: dict[str, Any]
    content: bytes | None = Field(default=None, repr=False)
    #: Kept, not sent, until the person asks for it (``OutboxRepository.release``).
    held: bool = False

    @field_validator("payload")
    @classmethod
    def _json_ready(cls, value: dict[str, Any]) -> Any:
        return json_object(value, "payload")

    @field_validator("content")
    @classmethod
    def _file_has_bytes(cls, value: bytes | None, info: ValidationInfo) -> bytes | None:
        if info.data.get("kind", "text") != "text" and value is None:
            raise ValueError(f"a {info.data['kind']} reply needs its content")
        return value


class OutgoingReply(_Record):
    """A reply stored before it is sent, so that a crash between the two loses nothing."""

    id: int
    chat_id: int
    question_id: str | None
    kind: ReplyKind
    #: Text and parse mode, or caption and file name; what the sender needs besides the file.
    payload: dict[str, Any]
    #: The PNG or CSV bytes of a photo or document; dropped once sent.
    content: bytes | None = Field(default=None, repr=False)
    status: ReplyStatus
    telegram_message_id: int | None
    error: str | None
    created_at: datetime
    sent_at: datetime | None
    #: The replica that holds it while sending, until ``lease_expires_at``.
    lease_owner: str | None = None
    lease_expires_at: datetime | None = None
