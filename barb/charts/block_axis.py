"""Two keys whose first makes a few blocks (weekday × hour, year × month): each block's name
once, level, centred under its block, and the second key's labels inside every block at one
round step. Joined labels ("Пн · 00:00") turned 40° had stepped unevenly across the blocks
(Ср 08:00, then Ср 23:00) and named the weekday on every tick."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes

from barb.charts.axes import CHAR_PX, label_fit, slot_px
from barb.charts.style import INK, TICK_PT

MAX_BLOCKS = 12  # more first-key values than this (dates) keep the joined labels
# Steps of a time of day inside a block, in minutes; of other keys, in groups.
_CLOCK_STEPS = (15, 30, 60, 120, 180, 240, 360, 480, 720)
_STEPS = (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 25, 50)
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})")
# The block names' row under the inner labels, in points from the axis.
NAME_OFFSET_PT = TICK_PT * 2.1


@dataclass(frozen=True)
class Blocks:
    """The first key's blocks (a name and its first and past-last row each) and the rows
    whose second-key label is drawn."""

    names: list[str]
    starts: list[int]
    ends: list[int]
    inner: list[int]
    inner_labels: list[str]


def blocks_of(keys: list[list[str]], labels: list[str]) -> Blocks | None:
    """The blocks of two keys' labels (``keys`` key by key) when the joined ``labels`` do
    not fit level, one each, and a round step of the second key fits; else None."""
    if len(keys) != 2 or not labels:
        return None
    first, second = keys
    n = len(first)
    starts = [i for i in range(n) if i == 0 or first[i] != first[i - 1]]
    if not 2 <= len(starts) <= MAX_BLOCKS or len(set(first)) != len(starts):
        return None  # a name that comes back is no block
    rotate, step = label_fit(labels)
    if rotate == 0 and step == 1:
        return None  # every joined label fits level: nothing to gain
    ends = [*starts[1:], n]
    slot = slot_px(labels)
    if any(
        (end - start) * slot < len(first[start]) * CHAR_PX + 10
        for start, end in zip(starts, ends, strict=True)
    ):
        return None
    clock = [_CLOCK.fullmatch(s) for s in second]
    minutes = [int(m[1]) * 60 + int(m[2]) for m in clock if m] if all(clock) else None
    second = _whole_hours(second, minutes)
    # The slots from one inner label to the next: its width and a gap, an em between
    # numbers as the axis keeps them (``space_number_ticks``, which would drop every other
    # one), half a character between words (Пн, Чт of each year).
    width = max(map(len, second)) * CHAR_PX
    numbers = all(s.isdigit() for s in second)
    apart = math.ceil((width + (CHAR_PX / 0.62 if numbers else CHAR_PX / 2)) / slot)
    inner = _round_rows(minutes, starts, ends, apart)
    if inner is None:
        return None
    names = [first[s] for s in starts]
    return Blocks(names, starts, ends, inner, second)


def _whole_hours(second: list[str], minutes: list[int] | None) -> list[str]:
    """Whole hours as their hour alone ("06", "18"; the axis names the hour and its clock):
    "06:00" took twice the room, and a weekday's 24 hours had room for two."""
    if minutes is None or any(m % 60 for m in minutes):
        return list(second)
    return [f"{m // 60:02d}" for m in minutes]


def _round_rows(
    minutes: list[int] | None, starts: list[int], ends: list[int], apart: int
) -> list[int] | None:
    """The rows labelled inside the blocks: times of day (``minutes``) at the finest round
    step whose labels stand ``apart`` slots or more (across a block's edge too); other
    keys every few groups from each block's first."""
    if minutes is not None:
        options = [[i for i, m in enumerate(minutes) if m % step == 0] for step in _CLOCK_STEPS]
    else:
        options = [
            [i for start, end in zip(starts, ends, strict=True) for i in range(start, end, step)]
            for step in _STEPS
        ]
    for rows in options:
        if rows and (len(rows) == 1 or int(np.diff(rows).min()) >= apart):
            return rows
    return None


def block_ticks(ax: Axes, blocks: Blocks, positions: np.ndarray) -> None:
    """The inner labels as the axis's ticks, level; each block's name under them, centred
    on its block; a long tick at each block's edge."""
    ax.set_xticks(positions[blocks.inner], [blocks.inner_labels[i] for i in blocks.inner])
    edges = [(positions[s] + positions[s - 1]) / 2 for s in blocks.starts[1:]]
    ax.set_xticks(edges, minor=True)
    ax.tick_params(axis="x", which="minor", length=NAME_OFFSET_PT + TICK_PT, width=1.0, color=INK)
    for name, start, end in zip(blocks.names, blocks.starts, blocks.ends, strict=True):
        ax.annotate(
            name,
            xy=((positions[start] + positions[end - 1]) / 2, 0),
            xycoords=ax.get_xaxis_transform(),
            xytext=(0, -NAME_OFFSET_PT),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize=TICK_PT,
            fontweight="bold",
            color=INK,
            annotation_clip=False,
        )
    ax.set_xlim(positions[0] - 0.6, positions[-1] + 0.6)
