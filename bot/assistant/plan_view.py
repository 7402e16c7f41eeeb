"""What a plan to confirm shows: every query it covers, and after an error what the fix
changed. Pure functions over queries; the plain-language plan itself is ``plan.render_plan``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from barb.i18n import N_
from bot.assistant.gate import CHANGED_MARK
from bot.assistant.query_changes import COMPUTED, changed_parts
from bot.assistant.replies import PlanView
from bot.texts import Language, t

#: The catalog key naming each part of a query that a fix can change.
PART_NAMES: dict[str, str] = {
    "instrument": N_("part_instrument"),
    "session": N_("part_session"),
    "timeframe": N_("part_timeframe"),
    "period": N_("part_period"),
    "filters": N_("part_filters"),
    "columns": N_("part_columns"),
    "aggregates": N_("part_aggregates"),
    "order": N_("part_order"),
}
#: The plain-language plan of one query (instrument, data and language already bound).
PlanOf = Callable[[dict[str, Any]], str]


def marked_plan(plan: str, failed_plan: str, parts: list[str], lang: Language) -> str:
    """``plan`` headed by what changed since the failed query, its changed lines marked."""
    before = set(failed_plan.splitlines())
    labels = ", ".join(t(PART_NAMES[part], lang) for part in parts)
    lines = [line if line in before else f"{CHANGED_MARK} {line}" for line in plan.splitlines()]
    return "\n".join([t("plan_changed", lang, parts=labels), *lines])


def plan_view(
    queries: list[dict[str, Any]],
    text: str,
    *,
    failed: dict[str, Any] | None,
    plan_of: PlanOf,
    lang: Language,
) -> PlanView:
    """The plan of every query, numbered when there are several; after an error
    (``failed``), what each fix changed is named and its lines are marked."""
    changed: list[str] = []
    blocks = []
    for number, query in enumerate(queries, start=1):
        plan = plan_of(query)
        if failed is not None:
            parts = [p for p in changed_parts(failed, query) if p in COMPUTED]
            changed += [p for p in parts if p not in changed]
            if parts:
                plan = marked_plan(plan, plan_of(failed), parts, lang)
        if len(queries) > 1:
            plan = t("plan_query_number", lang, n=number, total=len(queries)) + f"\n{plan}"
        blocks.append(plan)
    return PlanView(
        kind="confirm",
        text=text,
        plan="\n\n".join(blocks),
        query=queries[0],
        queries=queries,
        changed=changed,
    )
