"""Groups of two keys whose second is a few values (a time of day by 2020 and 2024): one
slot per first key with a bar per second key beside each other, each second key in its
colour and named in a legend. Joined into one row of labels ("09:30 · 2020", "09:30 · 2024"
…) the ticks named every other bar and no colour told the years apart, so the comparison
asked for could not be read.

Highest and lowest are each series' own ("2024: highest 09:30 95, lowest 16:30 12"): the
question compares the series, and an overall extreme said nothing about the other one.
When the two keys share labels (yesterday and today, each up or down) they are each slot's
own, first key first: "down ▲ up 1,148" over the series read as yesterday down, today up
(1,147), where it was today down after yesterday up (p40a #9); "down ▲ up 1,147" names the
bars of the slot "down", as the axis and the group_by order them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from barb.charts.style import ACCENT, HIGH, OVERLAY_COLORS

MIN_SERIES, MAX_SERIES = 2, 4
SERIES_COLORS = (ACCENT, HIGH, *OVERLAY_COLORS[2:])
SLOT_WIDTH = 0.8  # of a first key's slot, shared by its bars


@dataclass(frozen=True)
class SideBySide:
    """Where each of the grouped table's rows is drawn: in the slot of its first key
    (``slot``), as the bar of its second key (``series``)."""

    slots: list[str]  # the first key's labels, in the table's order
    names: list[str]  # the second key's labels, in its order
    slot: np.ndarray  # per table row
    series: np.ndarray  # per table row

    @property
    def width(self) -> float:
        return SLOT_WIDTH / len(self.names)

    def positions(self) -> np.ndarray:
        """Each row's bar centre on the axis of slots 0, 1, 2 …"""
        k = len(self.names)
        return self.slot + (self.series - (k - 1) / 2) * self.width

    @property
    def by_slot(self) -> bool:
        """Whether extremes are each slot's (its highest and lowest second key), not each
        series' across the slots: when a label of one key is also the other's."""
        return not set(self.slots).isdisjoint(self.names)

    def parts(self) -> tuple[list[str], np.ndarray]:
        """What the extremes are each of: the series' names and each row's series, or the
        slots' and each row's slot (``by_slot``)."""
        return (self.slots, self.slot) if self.by_slot else (self.names, self.series)

    def label(self, at: int) -> str:
        """Row ``at``'s label within its part: its slot's, or its series' (``by_slot``)."""
        if self.by_slot:
            return self.names[int(self.series[at])]
        return self.slots[int(self.slot[at])]

    def colors(self) -> list[str]:
        return [SERIES_COLORS[int(s)] for s in self.series]

    def handles(self) -> list[Patch]:
        return [
            Patch(facecolor=SERIES_COLORS[j], edgecolor="none", label=name)
            for j, name in enumerate(self.names)
        ]


def side_by_side(table: pd.DataFrame, by: list[str], keys: list[list[str]]) -> SideBySide | None:
    """The layout when ``by`` is two keys, the second with 2 to 4 values and each pair of
    keys one row; ``keys`` are each key's label of every row. None otherwise (one key, or a
    second key of many values: the joined labels stay)."""
    if len(by) != 2 or len(keys) != 2 or table.empty:
        return None
    first, second = keys
    pairs = list(zip(first, second, strict=True))
    if len(set(pairs)) != len(pairs):
        return None
    names = list(dict.fromkeys(_in_order(table[by[1]], second)))
    slots = list(dict.fromkeys(first))
    if not MIN_SERIES <= len(names) <= MAX_SERIES or len(slots) < 2:
        return None
    slot = np.array([slots.index(f) for f in first], dtype="float64")
    series = np.array([names.index(s) for s in second], dtype="float64")
    return SideBySide(slots, names, slot, series)


def _in_order(keys: pd.Series, labels: list[str]) -> list[str]:
    """The second key's labels sorted by its values (2020 before 2024 whichever slot comes
    first), as the table's own order when its values do not sort."""
    try:
        order = np.argsort(keys.to_numpy(), kind="stable")
    except TypeError:
        return labels
    return [labels[i] for i in order]


def series_extremes(
    values: np.ndarray, layout: SideBySide, ok: np.ndarray
) -> list[tuple[int, list[int], list[int]]]:
    """Each series (each slot, ``layout.by_slot``) with the rows of its highest and of its
    lowest value among the rows ``ok`` (those the result holds, whole periods): ties in
    full, none when fewer than two values are left to compare or they are all equal."""
    found = []
    names, part = layout.parts()
    for j in range(len(names)):
        mine = ok & (part == j) & np.isfinite(values)
        if mine.sum() < 2:
            continue
        top, bottom = values[mine].max(), values[mine].min()
        if top == bottom:
            continue
        at = np.flatnonzero(mine)
        high = [int(i) for i in at if values[i] == top]
        low = [int(i) for i in at if values[i] == bottom]
        found.append((j, high, low))
    return found
