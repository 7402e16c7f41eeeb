"""A stage's ``where`` as the subtitle says it: in words when it is made of a closed set of
forms (an event's days, a time of day, a weekday) joined by ``and``; otherwise the query's
code, quoted so it reads as code. «где cpi and time() == '09:30' · с cpi» had put query
code in a Russian sentence."""

from __future__ import annotations

import re

from barb.charts.words import Words
from barb.errors import BarbError
from barb.i18n import N_
from barb.script import ast
from barb.script.parser import parse_expression

_CLOCK = re.compile(r"\d{2}:\d{2}")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def where_text(condition: str, events: set[str], words: Words) -> tuple[str, set[str]]:
    """The subtitle's part for ``condition``, and the ``events`` (joined days) it names in
    words, which need no "with cpi" of their own."""
    try:
        expr = parse_expression(condition, step="where")
    except BarbError:
        expr = None
    terms = _and_terms(expr) if expr is not None else []
    said = [_term_text(term, events, words) for term in terms]
    if terms and all(text is not None for text, _ in said):
        named = {event for _, event in said if event}
        return words("sub.only", conditions=", ".join(t for t, _ in said if t)), named
    return words("sub.where", condition=words("sub.code", code=condition)), set()


def _and_terms(expr: ast.Expr) -> list[ast.Expr]:
    if isinstance(expr, ast.Logical) and expr.op == "and":
        return [*_and_terms(expr.left), *_and_terms(expr.right)]
    return [expr]


def _term_text(term: ast.Expr, events: set[str], words: Words) -> tuple[str | None, str]:
    """One term in words and the event it names ("" for none); None when it is no closed
    form."""
    negated = isinstance(term, ast.Not)
    inner = term.operand if isinstance(term, ast.Not) else term
    if isinstance(inner, ast.Column) and inner.name in events:
        key = N_("sub.not_event_days") if negated else N_("sub.event_days")
        return words(key, event=inner.name), inner.name
    if negated or not isinstance(inner, ast.Compare) or inner.op != "==":
        return None, ""
    call, value = inner.left, inner.right
    if not isinstance(call, ast.Call) or call.args:
        return None, ""
    if call.name == "time" and isinstance(value, ast.String) and _CLOCK.fullmatch(value.value):
        return words("sub.at_time", time=value.value), ""
    if call.name == "dayofweek" and isinstance(value, ast.Number) and value.value in range(7):
        return words.weekdays[int(value.value)], ""
    if call.name == "dayname" and isinstance(value, ast.String) and value.value in _WEEKDAYS:
        return words.weekdays[_WEEKDAYS.index(value.value)], ""
    return None, ""
