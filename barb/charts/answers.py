"""The numbers a scalar or dict result answered, read back from the query's select (the
``then`` stage's when there is one), and how each is written: ``mean_range = 239.9 points``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from barb.charts.columns import unit
from barb.charts.value_text import format_value, with_unit
from barb.charts.words import ENGLISH, Words
from barb.proof_names import as_list
from barb.result import Result

# A select item: its function and what is between its parentheses.
_CALL = re.compile(r"^\s*(?P<func>[A-Za-z_]\w*)\s*\((?P<args>.*)\)", re.DOTALL)
_NAME = re.compile(r"^[A-Za-z_]\w*$")
CORRELATION = frozenset({"correlation", "corr"})


@dataclass(frozen=True)
class Aggregate:
    """One selected number: its output name, function, bare column arguments and value."""

    name: str
    func: str
    args: tuple[str | None, ...]
    value: Any

    @property
    def column(self) -> str | None:
        """The first argument when it is a bare column (``range`` in ``mean(range)``)."""
        return self.args[0] if self.args else None


def final_stage(query: dict[str, Any]) -> dict[str, Any]:
    """The stage whose select made the answer: ``then`` when the query has one."""
    then = query.get("then")
    return then if isinstance(then, dict) and then else query


def select_items(query: dict[str, Any]) -> list[str]:
    return as_list(final_stage(query).get("select"))


def parse_call(text: str) -> tuple[str, tuple[str | None, ...]]:
    """``percentile(gap, 90) as p90`` -> (``percentile``, (``gap``, None))."""
    text = re.split(r"\s+as\s+", text, flags=re.IGNORECASE)[0]
    match = _CALL.match(text)
    if not match:
        return "", ()
    parts = [p.strip() for p in _split_args(match.group("args"))]
    return match.group("func").lower(), tuple(p if _NAME.match(p) else None for p in parts)


def _split_args(text: str) -> list[str]:
    """Arguments split at top-level commas (``f(a, b), c`` -> two)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def read_aggregates(result: Result) -> list[Aggregate]:
    summary = result.summary
    assert summary is not None
    if summary.type == "scalar":
        pairs = [((summary.columns or ["value"])[0], summary.value)]
    else:
        pairs = list((summary.values or {}).items())
    texts = select_items(result.query)
    out = []
    for i, (name, value) in enumerate(pairs):
        func, args = parse_call(texts[i] if i < len(texts) else name)
        out.append(Aggregate(name, func, args, value))
    return out


def answer_value(agg: Aggregate, result: Result, words: Words = ENGLISH) -> str:
    """The number with its unit: ``239.9 points``."""
    agg_unit = unit(agg.name, result) or (unit(agg.column, result) if agg.column else None)
    if agg.func in CORRELATION:
        agg_unit = None
    return with_unit(format_value(agg.value, agg_unit, words=words), agg_unit, words)


def answer_text(agg: Aggregate, result: Result, words: Words = ENGLISH) -> str:
    """``mean_range = 239.9 points``: the number the person asked for, with its unit."""
    return words("answer", name=agg.name, value=answer_value(agg, result, words))
