"""What a corrected query changes in what the person gets, compared on the parsed queries.

After a query error the model sends a fix. Only a fix that is the confirmed query itself,
written differently (``mean( range )`` for ``mean(range)``, its fields in another order, a
session in lower case), may run at once: every field of a query decides what rows or numbers
the person gets (with a limit, the order decides which rows), so a change to any of them is
shown again as a plan, the changed parts named. "5 biggest drops" confirmed, then fixed into
"sort": "chg_pct desc", "limit": 20, ran at once as the 20 biggest gains (p48e). The comparison
is on parsed expressions, so ``MEAN(range)`` is the same aggregate while ``mean(high)`` is not.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from barb.errors import QueryError
from barb.script.parser import parse_expression, parse_select_item
from barb.script.query import Query, Stage, parse_query

Part = Literal[
    "instrument",
    "session",
    "timeframe",
    "period",
    "filters",
    "columns",
    "aggregates",
    "order",
    "form",
]
#: The parts of a plan a fix can change, in the order a person reads a plan ("form" is how
#: a query is written, no part of what it computes).
COMPUTED: tuple[Part, ...] = tuple(part for part in get_args(Part) if part != "form")
#: The part of the plan each field of a query is read in, a second stage's fields as the
#: first's. Every field is here (a test holds it to ``Query.model_fields``): a field left out
#: would let its change run unseen.
PART_OF: dict[str, Part] = {
    "instrument": "instrument",
    "join": "instrument",
    "session": "session",
    "timeframe": "timeframe",
    "period": "period",
    "where": "filters",
    "map": "columns",
    "group_by": "aggregates",
    "select": "aggregates",
    "then": "aggregates",
    "sort": "order",
    "limit": "order",
}


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


def _stage(stage: Stage) -> dict[str, object]:
    """The clauses of one stage in a comparable form, by field."""
    return {
        "map": tuple((name, _expression(text)) for name, text in stage.map.items()),
        "where": _expression(stage.where),
        "group_by": tuple(_expression(g) for g in stage.group_by),
        "select": tuple(_select_item(s) for s in stage.select),
        "sort": tuple((key.column, key.descending) for key in stage.sort),
        "limit": stage.limit,
    }


def query_fields(raw: dict[str, Any]) -> dict[str, object] | None:
    """Every field of what ``raw`` computes in a comparable form, a second stage's as
    "then.sort" and so on; None if it cannot be read."""
    try:
        query: Query = parse_query(raw)
    except QueryError:
        return None
    fields: dict[str, object] = {
        "instrument": _word(query.instrument),
        "join": tuple((_word(j.instrument), _word(j.source), j.filter) for j in query.join),
        "session": _word(query.session),
        "timeframe": query.timeframe,  # its one name: "1m" is a minute, "1M" a month
        "period": " ".join((query.period or "").lower().split()) or None,
        **_stage(query),
        "then": query.then is not None,
    }
    # No second stage reads as an empty one: adding one names what it does (aggregates, and
    # the order if it sorts), not every clause it leaves out.
    then = _stage(query.then or Stage())
    return fields | {f"then.{name}": value for name, value in then.items()}


def changed_parts(before: dict[str, Any], after: dict[str, Any]) -> list[Part]:
    """The parts of the plan that differ; ``["form"]`` when only the spelling differs;
    ``[]`` when the two queries are the same."""
    old, new = query_fields(before), query_fields(after)
    if old is None or new is None:
        # One of them cannot be read: nothing can be said to be unchanged.
        return list(COMPUTED) if before != after else []
    differ = {
        PART_OF[name.removeprefix("then.")]
        for name in {*old, *new}
        if old.get(name) != new.get(name)
    }
    changed = [part for part in COMPUTED if part in differ]
    if changed:
        return changed
    return ["form"] if before != after else []


def runs_as_confirmed(failed: dict[str, Any], fix: dict[str, Any]) -> bool:
    """Whether ``fix`` is the confirmed query ``failed`` itself, at most written
    differently: only then may it run without a new plan.

    >>> runs_as_confirmed({"select": "mean(range)"}, {"select": "MEAN( range )"})
    True
    >>> runs_as_confirmed({"sort": "x asc", "limit": 5}, {"sort": "x desc", "limit": 5})
    False
    """
    return all(part == "form" for part in changed_parts(failed, fix))
