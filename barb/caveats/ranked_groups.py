"""A ranking topped by a group that holds only part of its week, month or year: the data's
unfinished last one (``scope.open_group``) or one the period's start or end cuts
(``calendar.period_cuts``). Its warning then names the first whole group, found
among all of the ranking stage's groups before its limit, in the first stage or in a second
(``then``) one: "the month with the least volume since 2023-03-15" read March 2023's 12
days."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from barb.bar_labels import unit_label
from barb.caveats.calendar import PeriodCut
from barb.caveats.scope import OpenGroup, key_columns
from barb.planning import Plan
from barb.ranking import in_sort_order, order_text
from barb.result import PartCounted
from barb.script.query import SortKey
from barb.summary_text import value_text


@dataclass(frozen=True)
class Ranked:
    """The part ``group`` a stage's sort puts first, and the ``first`` whole group's row."""

    group: OpenGroup
    first: pd.Series


def cut_group(plan: Plan, cut: PeriodCut) -> OpenGroup | None:
    """The first stage's group a period cut is, by the key columns that name it: a week()
    column holds the week's Monday, year() the year, month() and quarter() their number
    within it. None when the keys do not name it alone (month() without year() groups the
    Marches of every year)."""
    keys = key_columns(plan)
    day = pd.Timestamp(cut.start)
    if cut.unit == "week":
        week = keys.get("week")
        if week is None:
            return None
        label = unit_label(cut.start, "week")
        return OpenGroup("week", label, {week: label}, {week: day}, cut.edge)
    year = keys.get("year")
    if year is None:
        return None
    values: dict[str, object] = {year: day.year}
    if cut.unit in ("month", "quarter"):
        key = keys.get(cut.unit)
        if key is None:
            return None
        values[key] = day.month if cut.unit == "month" else day.quarter
    label = unit_label(cut.start, cut.unit)
    return OpenGroup(cut.unit, label, {k: str(v) for k, v in values.items()}, values, cut.edge)


def narrowed(group: OpenGroup, columns: Sequence[str]) -> OpenGroup | None:
    """The part ``group`` as a second stage's rows name it: a month regrouped by its year
    alone is a part of that year. None when the rows do not hold its keys, or hold only its
    month: regrouped by month number, the open January is one of 19 Januaries, no year (it
    was named "the year 1", ranked against "the whole years" 2, 3…)."""
    values = {k: v for k, v in group.values.items() if k in columns}
    if values == group.values:
        return group
    if group.unit == "week" or len(values) != 1:
        return None
    [(column, year)] = values.items()
    if column != next(iter(group.values)) or not isinstance(year, int | np.integer):
        return None  # the year key comes first
    return OpenGroup("year", str(year), {column: str(year)}, values, group.cut)


def ranked_first(
    sort: Sequence[SortKey],
    keys: Sequence[str],
    parts: Sequence[OpenGroup],
    groups: pd.DataFrame | None,
) -> Ranked | None:
    """The part group that ``sort`` ranks first among all the stage's ``groups`` (before the
    limit), and the first whole group after it. None when the sort is by a group key (that
    is time order), when no part group ranks first, or when no whole group has a value."""
    if not parts or not sort or groups is None or not len(groups) or sort[0].column in keys:
        return None
    if any(k.column not in groups.columns for k in sort):
        return None
    if any(column not in groups.columns for part in parts for column in part.values):
        return None
    ranked = in_sort_order(groups, sort).reset_index(drop=True)
    masks = [part.rows(ranked) for part in parts]
    atop = next((part for part, mask in zip(parts, masks, strict=True) if mask[0]), None)
    whole = np.flatnonzero(~np.logical_or.reduce(masks))
    if atop is None or not len(whole):
        return None
    first = ranked.iloc[int(whole[0])]
    value = first[sort[0].column]
    if value is None or value != value:  # no whole group has a value to rank
        return None
    return Ranked(atop, first)


def ranked_text(
    sort: Sequence[SortKey], keys: Sequence[str], ranked: Ranked | None, unit: str
) -> str:
    """' Sorted by corr ascending, it ranks first: among the whole years the lowest corr is
    0.8834, in 2021.' ``unit`` is the warning's own group's: a second stage that regrouped
    its month by year names the year that ranks first."""
    if ranked is None:
        return ""
    first, group = ranked.first, ranked.group
    by = sort[0]
    value = first[by.column]
    named = (
        value_text(first[keys[0]])
        if len(keys) == 1
        else ", ".join(f"{key} {value_text(first[key])}" for key in keys)
    )
    order = order_text(sort)
    if len(sort) == 1:
        end = "highest" if by.descending else "lowest"
        what = f"the {end} {by.column} is {value_text(value)}, in {named}"
    else:
        what = f"the first is {named} ({by.column} = {value_text(value)})"
    subject = "it" if group.unit == unit else f"the {group.unit} {group.label}"
    return f" Sorted by {order}, {subject} ranks first: among the whole {group.unit}s {what}."


def part_groups(
    plan: Plan, open_: OpenGroup | None, open_texts: list[str], cuts: list[PeriodCut]
) -> PartGroups:
    """The data's open group with its warning (``open_texts``: none or one) and the groups
    the period's edges cut with theirs."""
    groups = [open_ for _ in open_texts] + [cut_group(plan, cut) for cut in cuts]
    return PartGroups(groups, [*open_texts, *(cut.text for cut in cuts)])


@dataclass
class PartGroups:
    """The first stage's groups that hold part of their unit, each with its warning: a
    ranking in either stage that one of them tops adds its sentence to that one's."""

    groups: list[OpenGroup | None]
    texts: list[str]
    # The second stage's values by group that count a part group (``say_fed``), for a chart.
    counted: list[PartCounted] = field(default_factory=list)

    def rank(
        self, sort: Sequence[SortKey], keys: Sequence[str], table: pd.DataFrame | None
    ) -> Ranked | None:
        """Rank ``table`` (a stage's every group, before its limit) by ``sort``, and say so
        in the warning of the part group it puts first."""
        if table is None:
            return None
        named = [(narrowed(g, list(table.columns)) if g else None) for g in self.groups]
        parts = [g for g in named if g is not None]
        ranked = ranked_first(sort, keys, parts, table)
        if ranked is not None:
            at = next(i for i, g in enumerate(named) if g is ranked.group)
            said = self.groups[at]
            assert said is not None
            self.texts[at] += ranked_text(sort, keys, ranked, said.unit)
        return ranked
