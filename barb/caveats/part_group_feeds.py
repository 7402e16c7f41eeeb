"""A second stage's statistic taken over the first stage's groups, one of which holds only
part of its week, month or year (``barb.caveats.ranked_groups.PartGroups``): "the mean of each
year's maximum drawdown" read -20.41 over 19 years, 2026's 4 days among them (-21.49
without it). The warning of 2026 said its group was partial, not that the mean was taken
over it. Said in that warning, with the statistic's value without it, only where it moves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from barb.caveats.ranked_groups import PartGroups
from barb.caveats.scope import OpenGroup
from barb.planning import SelectItem, StagePlan
from barb.result import PartCounted
from barb.script import ast
from barb.script.calendar_names import MONTHS
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate_aggregate
from barb.script.library import lookup
from barb.summary_text import count_text, listed_text, value_text
from barb.time_keys import calendar_part

# Aggregates to which a part group is no lesser row: a total over the groups holds its days
# as the whole data does, and first()/last() pick a row by its place.
_TOTALS = frozenset({"sum", "first", "last"})


def say_fed(
    parts: PartGroups,
    stage: StagePlan,
    ctx: EvalContext,
    rows: pd.DataFrame,
    query: Mapping[str, Any] | None = None,
) -> None:
    """Add to each part group's warning the second stage's (``stage``) statistics that it
    is one of the rows of and that it moves. ``rows`` are the rows the stage kept (after
    its where), as its aggregates read them; ``ctx`` the stage's context; ``query`` the
    whole query, which says which keys are months of the year."""
    if stage.shape == "table" or not len(rows):
        return
    items = [item for item in stage.select if item.aggregate and _compares(item.expr)]
    if not items:
        return
    for at, group in enumerate(parts.groups):
        if group is None or any(column not in rows.columns for column in group.values):
            continue
        part = group.rows(rows)
        # The part group is one row (a year among years), not a key of many (days by year).
        if np.count_nonzero(part) != 1:
            continue
        months = _month_keys(stage, query)
        parts.texts[at] += _fed_text(stage, items, ctx, rows, part, group, parts.counted, months)


def _month_keys(stage: StagePlan, query: Mapping[str, Any] | None) -> frozenset[str]:
    """The stage's group keys that hold a month of the year (1 to 12)."""
    if query is None:
        return frozenset()
    return frozenset(n for n, _ in stage.group_keys if calendar_part(n, query) == "month")


def _key_value(key: str, value: object, months: frozenset[str]) -> str:
    """ "month 9 (Sep)": a month of the year by its number, as the table lists it, with its
    name, as the noise warning names it; "In month 1, the second stage's…" had the number
    alone."""
    text = value_text(value)
    if key in months and isinstance(value, int | np.integer) and 1 <= value <= len(MONTHS):
        return f"{text} ({MONTHS[int(value) - 1][:3]})"
    return text


def _compares(expr: ast.Expr) -> bool:
    """Whether the select item weighs each group as one value (a mean, a median, a count,
    an arg_max), not only totals or picks them."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and node.name.lower() not in _TOTALS:
            spec = lookup(node.name)
            if spec is not None and spec.is_aggregate:
                return True
    return False


def _fed_text(
    stage: StagePlan,
    items: list[SelectItem],
    ctx: EvalContext,
    rows: pd.DataFrame,
    part: np.ndarray,
    group: OpenGroup,
    counted: list[PartCounted],
    months: frozenset[str] = frozenset(),
) -> str:
    """' The second stage's mean_dd (-20.41) is over 19 rows, this year among them: without
    it -21.49.' Of a grouped stage, the statistics of the group it falls in: ' In month 1,
    the second stage's…', and of a group named by one word, its counts plainly: ' Mon's 16
    weeks include this week: without it, 15.' ("In day Mon, the second stage's weeks (16)
    is over 16 rows, it among them" was hard to read). A count of a group that moved is
    added to ``counted`` for a chart to note under its bar."""
    unit = group.unit
    members, named = np.ones(len(rows), dtype=bool), ""
    keys_text: dict[str, str] = {}
    if stage.group_keys:
        keys = [name for name, _ in stage.group_keys]
        at = int(np.flatnonzero(part)[0])
        values = [rows[key].iloc[at] for key in keys]
        if any(pd.isna(value) for value in values):
            return ""  # in no group of the stage
        for key, value in zip(keys, values, strict=True):
            # A row whose key is empty is in no group, as the stage's group_by leaves it.
            members &= (rows[key] == value).to_numpy(dtype=bool, na_value=False)
        pairs = zip(keys, values, strict=True)
        named = ", ".join(f"{k} {_key_value(k, v, months)}" for k, v in pairs)
        keys_text = {key: value_text(value) for key, value in zip(keys, values, strict=True)}
    alone = ""
    if np.count_nonzero(members) < 2:
        alone = _alone_text(items, ctx, rows[members], named, unit)
        # Its count is the part group alone: "month of the yearly high" counted 2026's 4
        # days as January's 1 year, a bar like the whole years' with no mark (p44a Q29).
        items = [item for item in items if named and _is_count(item.expr)]
    moved = []
    for item in items:
        with_it = _value(item, ctx, rows[members])
        without = _value(item, ctx, rows[members & ~part])
        if value_text(with_it) != value_text(without):
            moved.append((item.name, value_text(with_it), value_text(without)))
            if named and _is_count(item.expr):  # a group's bar a chart draws
                found = PartCounted(
                    keys=keys_text,
                    column=item.name,
                    without=float(without),  # type: ignore[arg-type]  # a count: a number
                    unit=unit,
                    label=group.label,
                    cut=group.cut,
                )
                counted.append(found)
    if not moved or alone:  # "the only row of same true" says its count too
        return alone
    withouts = listed_text([without for _, _, without in moved])
    word = _word(stage, rows, part)
    counts = {item.name for item in items if _is_count(item.expr)}
    if word is not None and all(name in counts for name, _, _ in moved):
        said = listed_text([f"{with_it} {name}" for name, with_it, _ in moved])
        return f" {word}'s {said} include this {unit}: without it, {withouts}."
    stats = listed_text([f"{name} ({with_it})" for name, with_it, _ in moved])
    verb = "is" if len(moved) == 1 else "are"
    n = count_text(int(np.count_nonzero(members)), "row")
    where = f" In {named}, the" if named else " The"
    if np.count_nonzero(members) < 2:
        return f"{where} second stage's {stats} {verb} this {unit} alone."
    return (
        f"{where} second stage's {stats} {verb} over {n}, this {unit} among them: without it "
        f"{withouts}."
    )


def _alone_text(
    items: list[SelectItem], ctx: EvalContext, rows: pd.DataFrame, named: str, unit: str
) -> str:
    """' In the second stage it is the only row of year 2026: its best_month (1) and n (0)
    are this month's own, compared with no other.' The best month of each year read month 1,
    0 inside days, for 2026, whose 4 days are all of January (p40e Q09): a best of one. Not
    of a count of the rows (1, plainly), nor of an ungrouped stage."""
    items = [item for item in items if not _is_count(item.expr)]
    if not named or not items:
        return ""
    stats = listed_text([f"{item.name} ({value_text(_value(item, ctx, rows))})" for item in items])
    verb = "is" if len(items) == 1 else "are"
    return (
        f" In the second stage it is the only row of {named}: its {stats} {verb} this "
        f"{unit}'s own, compared with no other."
    )


def _word(stage: StagePlan, rows: pd.DataFrame, part: np.ndarray) -> str | None:
    """The group the part falls in when one key names it by a word ("Mon"), else None (a
    number reads plainly only beside its key: "month 1")."""
    if len(stage.group_keys) != 1:
        return None
    value = rows[stage.group_keys[0][0]].iloc[int(np.flatnonzero(part)[0])]
    return value if isinstance(value, str) and value.strip() else None


def _is_count(expr: ast.Expr) -> bool:
    """count() of the rows: its value is how many rows, the noun its name says ("weeks")."""
    return isinstance(expr, ast.Call) and expr.name.lower() == "count" and not expr.args


def _value(item: SelectItem, ctx: EvalContext, rows: pd.DataFrame) -> object:
    """The select item over ``rows`` alone, in a context of its own (no warning of it
    reaches the result)."""
    sub = dataclasses.replace(
        ctx, frame=rows.reset_index(drop=True), period=None, warnings=[], row_warnings=[]
    )
    return evaluate_aggregate(item.expr, sub, None)
