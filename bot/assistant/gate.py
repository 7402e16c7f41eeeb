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
    """Whether a press may go ahead; otherwise the catalog key of the sentence saying why."""

    OK = "ok"
    STALE = "stale"
    NOT_YOURS = "not_yours"
    RUNNING = "running"

    @property
    def text_key(self) -> str:
        keys = {"not_yours": N_("not_yours"), "running": N_("already")}
        return keys.get(self.value, N_("plan_stale"))


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
    """Why a press may not go ahead (or OK): the action as it stands now."""
    if action is None:
        return Verdict.STALE
    if action.user_id != user_id and action.status in ("pending", "running"):
        return Verdict.NOT_YOURS
    if action.status == "pending":
        return Verdict.OK
    if action.status == "running":
        return Verdict.RUNNING
    return Verdict.STALE  # done, cancelled, declined (reset or superseded), expired
