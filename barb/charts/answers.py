"""The numbers a scalar or dict result answered, read back from the query's select (the
``then`` stage's when there is one), and how each is written: ``mean_range = 239.9 points``."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from barb.charts.columns import column_name, counted_unit, timeframe, unit
from barb.charts.select_calls import parse_call
from barb.charts.tick_values import unit_number, unit_text
from barb.charts.time_of_day import part_text, time_text, value_kind
from barb.charts.words import ENGLISH, Words
from barb.column_units import SHARE
from barb.column_words import statistic_of
from barb.lineage import Lineage
from barb.proof_names import as_list
from barb.result import Result
from barb.script import ast
from barb.time_keys import zoned_clock

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
    kind = value_kind(agg.name, result, [agg.value])
    if kind is not None:  # a time of day: 10:12, not 612.3; another clock's named (20:07 MSK)
        zone = zoned_clock(agg.name, result.query)
        return time_text(agg.value, kind) + (f" {zone}" if zone else "")
    placed = part_text(agg.name, agg.value, result, words)
    if placed is not None:
        return placed  # the year of arg_max(year, n): 2025, not "2,025"
    # The answer's own expression says its unit (followed down to its columns); its first
    # column's would be wrong for max(volume) / mean(volume), a ratio, not contracts.
    agg_unit = unit(agg.name, result)
    if agg.func in CORRELATION or counted_unit(agg.name, result) is not None:
        agg_unit = None  # "number of days = 516": its name says the unit
    return unit_text(agg.value, agg_unit, result, words)


def answer_values(result: Result, words: Words = ENGLISH) -> dict[str, str]:
    """Each number a scalar or dict result answered, with its unit as the headline writes
    it (``answer_value``), by name: ``/query`` printed "mean_high_low: 138.34" beside a
    caption's "138.34 points". A missing value is left out (the text writes it "—")."""
    summary = result.summary
    if summary is None or summary.type not in ("scalar", "dict"):
        return {}
    result = result.for_chart()  # as the chart reads it, so that both say the same
    return {
        agg.name: answer_value(agg, result, words)
        for agg in read_aggregates(result)
        if not (agg.value is None or (isinstance(agg.value, float) and agg.value != agg.value))
    }


def answer_text(
    agg: Aggregate, result: Result, words: Words = ENGLISH, *, with_word: bool = True
) -> str:
    """``average range = 239.9 points``: the number the person asked for, with its unit,
    named as the plan names it (``column_name``); without its unit word (``with_word``
    False, ``average range = 239.9``) when the next answer says the same one."""
    name = column_name(agg.name, result, words)
    word = word_unit(agg, result)
    if with_word or word is None:
        return words("answer", name=name, value=answer_value(agg, result, words))
    return words("answer", name=name, value=unit_number(agg.value, word, result, words))


def one_column_answers(aggs: list[Aggregate], result: Result, words: Words = ENGLISH) -> str | None:
    """Answers of one bar column in one unit word, the column and the unit said once:
    "range: average 364.56 · median 343.50 · 90th percentile 516.30 points", where the
    three in full ran past three lines of a Russian chart's title; None unless there are
    several such answers, none of them named by the query."""
    lineage = Lineage(result.query)
    said: list[tuple[str, str]] = []
    for agg in aggs:
        found = lineage.definition(agg.name)
        expr = found[0] if found is not None else None
        pair = statistic_of(expr, words.language) if expr is not None else None
        if pair is None or ast.default_name(expr) != agg.name:  # an alias is the query's
            return None
        said.append(pair)
    if any(agg.value is None or agg.value != agg.value for agg in aggs):
        return None  # "n/a" of no rows is said as nothing matched
    units = {word_unit(agg, result) for agg in aggs}
    if len(aggs) < 2 or len({name for name, _ in said}) != 1 or len(units) != 1 or None in units:
        return None
    [word] = units
    values = [unit_number(agg.value, word, result, words) for agg in aggs]
    values[-1] = answer_value(aggs[-1], result, words)
    answers = " · ".join(f"{stat} {value}" for (_, stat), value in zip(said, values, strict=True))
    return words("answers_of", name=said[0][0], answers=answers)


def word_unit(agg: Aggregate, result: Result) -> str | None:
    """The unit a word after the answer's number names (points, contracts, days), which
    answers of one unit side by side can say once; None for a number written without one
    (a share's percent, a price, a time of day, a count its name says)."""
    if value_kind(agg.name, result, [agg.value]) is not None or agg.func in CORRELATION:
        return None
    if part_text(agg.name, agg.value, result, ENGLISH) is not None:
        return None
    found = unit(agg.name, result)
    if found in (None, "%", SHARE, "price") or counted_unit(agg.name, result) is not None:
        return None
    return found


def baseline(agg: Aggregate, result: Result, words: Words = ENGLISH) -> tuple[float, str] | None:
    """The answer's mean over all the period's rows, where a where or an event filter
    picked the rows it is over (``Metadata.baselines``), and its label as the answer's
    value is written: (0.5245, "all days: 52.4%") beside "p_up = 49.5%" after 3 down days.
    None for any other answer."""
    meta = result.metadata
    found = meta.baselines.get(agg.name) if meta is not None else None
    if found is None or not math.isfinite(found.value):
        return None
    value = answer_value(replace(agg, value=found.value), result, words)
    return found.value, words.baseline(timeframe(result), value)
