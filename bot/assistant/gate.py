"""The confirm gate's vocabulary: the presses, the verdict on each, and typed queries.

``Assistant.take`` decides every press with these; Telegram and ``barb chat`` only show
what it decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from barb.errors import InvalidJSON, QueryError
from barb.i18n import N_
from barb.script.limits import load_query_text
from bot.store.records import PendingAction

#: Marks a line of a corrected plan that differs from the query that failed.
CHANGED_MARK = "✎"


class Press(StrEnum):
    """A button under a pending action."""

    RUN = "run"
    CANCEL = "cancel"
    OPTION = "option"


class Verdict(StrEnum):
    """Whether a press may go ahead; otherwise why not (``text_key`` says it)."""

    OK = "ok"
    #: Unknown (the chat was reset) or expired: nothing of it will run.
    STALE = "stale"
    NOT_YOURS = "not_yours"
    #: Claimed by Run: its query is computing, its answer on its way.
    RUNNING = "running"
    #: Run and answered: the answer is below the plan.
    DONE = "done"
    #: Cancelled, or set aside by a newer message (a correction, /cancel, /reset).
    DROPPED = "dropped"

    def text_key(self, press: Press) -> str:
        """The catalog key of the sentence answering ``press`` with this verdict: a second
        Run or a Cancel pressed while the plan runs, or once it is done, is told where the
        answer is, not to ask again; a suggested reply pressed again, while its question is
        answered or after, that the question was answered."""
        if self is Verdict.RUNNING and press is Press.CANCEL:
            return N_("running_cannot_cancel")
        if self in (Verdict.RUNNING, Verdict.DONE) and press is Press.OPTION:
            return N_("option_taken")
        keys = {
            Verdict.NOT_YOURS: N_("not_yours"),
            Verdict.RUNNING: N_("already_running"),
            Verdict.DONE: N_("already_done"),
            Verdict.DROPPED: N_("plan_dropped"),
        }
        return keys.get(self, N_("plan_stale"))

    @property
    def buttons_dead(self) -> bool:
        """The plan's buttons can do nothing any more: a message still showing them loses
        them. (Not while it runs: its status line replaces them anyway.)"""
        return self in (Verdict.STALE, Verdict.DONE, Verdict.DROPPED)


class Taken(BaseModel):
    """The gate's decision on a press, the action as it stands, and the run in flight."""

    verdict: Verdict
    action: PendingAction | None = None
    work_id: int | None = None


# Quotes phone keyboards put in place of the JSON ones.
_SMART_QUOTES = str.maketrans({c: '"' for c in "“”„‟«»″"} | {c: "'" for c in "‘’‚‛′"})


@dataclass(frozen=True)
class Unreadable:
    """Why typed Barb Script cannot run: the catalog key of the sentence, and its values;
    for a query the input limits refused, the engine's error (``QueryError.to_dict``)."""

    key: str
    params: dict[str, Any] = field(default_factory=dict)


def parse_query_text(text: str) -> dict[str, Any] | Unreadable:
    """Barb Script typed by a person: the query, or why it cannot be read. Smart quotes from
    a phone keyboard are read as the JSON quotes they stand for; the input limits apply
    before anything else (barb/script/limits.py)."""
    body = text.strip().strip("`").strip()
    if not body:
        return Unreadable(N_("query_usage"))
    first: InvalidJSON | None = None
    for candidate in (body, body.translate(_SMART_QUOTES)):
        try:
            query = load_query_text(candidate)
        except InvalidJSON as exc:
            first = first or exc  # where the text as typed broke
            continue
        except QueryError as exc:
            return Unreadable(N_("query_failed"), {"error": exc.to_dict()})
        return query if isinstance(query, dict) else Unreadable(N_("query_usage"))
    assert first is not None
    return Unreadable(
        N_("query_bad_json"),
        {
            "reason": str(first.details.get("reason") or first.message),
            "position": first.details.get("position"),
            "text": body,
        },
    )


def verdict_on(action: PendingAction | None, user_id: int) -> Verdict:
    """Why a press may not go ahead (or OK): the action as it stands now.

    A confirmed plan stays ``running`` until its answer is stored (``continue_claimed``), so
    a press meanwhile is told it is on its way; a clarification is ``running`` from the
    press of a suggested reply until the model has it, then ``done``.
    """
    if action is None:
        return Verdict.STALE
    if action.user_id != user_id and action.status in ("pending", "running"):
        return Verdict.NOT_YOURS
    verdicts = {
        "pending": Verdict.OK,
        "running": Verdict.RUNNING,
        "done": Verdict.DONE,
        "cancelled": Verdict.DROPPED,
        "declined": Verdict.DROPPED,
    }
    return verdicts.get(action.status, Verdict.STALE)  # expired
