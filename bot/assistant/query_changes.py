"""What a corrected query changes in what is computed, compared on the parsed queries.

After a query error the model sends a fix. A fix that touches what is computed (instrument,
session, timeframe, period, filters, columns, aggregates) must be shown to the person again
before it runs; one that only touches the rest (order, row limit, the query's spelling) may
run at once. The comparison is on parsed expressions, so ``mean( range )`` and
``MEAN(range)`` are the same aggregate while ``mean(high)`` is not.
"""

from __future__ import annotations

from typing import Any, Literal

from barb.errors import QueryError
from barb.script.parser import parse_expression, parse_select_item
from barb.script.query import Query, Stage, parse_query

Part = Literal[
    "instrument", "session", "timeframe", "period", "filters", "columns", "aggregates", "form"
]
#: The parts that decide what is computed, in the order a person reads a plan.
COMPUTED: tuple[Part, ...] = (
    "instrument",
    "session",
    "timeframe",
    "period",
    "filters",
    "columns",
    "aggregates",
)


def _expression(text: str | None) -> object:
    if text is None:
        return None
    try:
        return parse_expression(text)
    except QueryError:
        return " ".join(text.split())  # unreadable either way: compare the words


def _select_item(text: str) -> object:
    try:
        return parse_select_item(text)
    except QueryError:
        return " ".join(text.split())


def _word(value: str | None) -> str | None:
    return value.strip().upper() if isinstance(value, str) and value.strip() else None


def _aggregates(stage: Stage) -> tuple[object, ...]:
    return (
        tuple(_select_item(s) for s in stage.select),
        tuple(_expression(g) for g in stage.group_by),
    )


def computed_parts(raw: dict[str, Any]) -> dict[Part, object] | None:
    """Each part of what ``raw`` computes in a comparable form; None if it cannot be read."""
    try:
        query: Query = parse_query(raw)
    except QueryError:
        return None
    then = query.then
    return {
        "instrument": (
            _word(query.instrument),
            tuple((_word(j.instrument), _word(j.source), j.filter) for j in query.join),
        ),
        "session": _word(query.session),
        "timeframe": (query.timeframe or "").strip().lower() or None,
        "period": " ".join((query.period or "").lower().split()) or None,
        "filters": (
            _expression(query.where),
            _expression(then.where) if then is not None else None,
        ),
        "columns": (
            tuple((name, _expression(text)) for name, text in query.map.items()),
            tuple((n, _expression(x)) for n, x in then.map.items()) if then is not None else (),
        ),
        "aggregates": (_aggregates(query), _aggregates(then) if then is not None else None),
    }


def changed_parts(before: dict[str, Any], after: dict[str, Any]) -> list[Part]:
    """The parts of what is computed that differ; ``["form"]`` when only the rest differs
    (order, limit, spelling); ``[]`` when the two queries are the same."""
    old, new = computed_parts(before), computed_parts(after)
    if old is None or new is None:
        # One of them cannot be read: nothing can be said to be unchanged.
        return list(COMPUTED) if before != after else []
    changed = [part for part in COMPUTED if old[part] != new[part]]
    if changed:
        return changed
    return ["form"] if before != after else []


def changes_what_is_computed(parts: list[Part]) -> bool:
    return any(part in COMPUTED for part in parts)
