"""The numbers a scalar or dict result answered, read back from the query's select, and how
each is written in a legend: ``mean_range = 239.9 points``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from barb.charts.columns import unit
from barb.charts.value_text import format_value, with_unit
from barb.proof_names import as_list
from barb.result import Result

# A select item's function and, when it is a bare column, its first argument.
_AGGREGATE = re.compile(r"^\s*(?P<func>[A-Za-z_]\w*)\s*\(\s*(?:(?P<arg>[A-Za-z_]\w*)\s*(?=[,)]))?")


@dataclass(frozen=True)
class Aggregate:
    """One selected number: its output name, function, bare column argument and value."""

    name: str
    func: str
    column: str | None
    value: Any


def read_aggregates(result: Result) -> list[Aggregate]:
    summary = result.summary
    assert summary is not None
    if summary.type == "scalar":
        pairs = [((summary.columns or ["value"])[0], summary.value)]
    else:
        pairs = list((summary.values or {}).items())
    texts = as_list(result.query.get("select"))
    out = []
    for i, (name, value) in enumerate(pairs):
        match = _AGGREGATE.match(texts[i] if i < len(texts) else name)
        func = match.group("func").lower() if match else ""
        out.append(Aggregate(name, func, match.group("arg") if match else None, value))
    return out


def answer_text(agg: Aggregate, result: Result) -> str:
    """``mean_range = 239.9 points``: the number the person asked for, with its unit."""
    agg_unit = unit(agg.name, result) or (unit(agg.column, result) if agg.column else None)
    return with_unit(f"{agg.name} = {format_value(agg.value, agg_unit)}", agg_unit)
