"""Tens of thousands of groups (an ETH hour of every date: 106,436) drawn as a couple of
thousand of them.

Every group drawn costs its label, its value's text and its place in the headline's search
for ties, each written one at a time: 50,000 groups took 7-9 s to draw and 3-4 s more for
the caption's headline, and the answer missed the bot's 20-second limit for all of it.
A line ~700 pixels wide shows no more than a couple of thousand points anyway, so above
``MAX_DRAWN_GROUPS`` the chart keeps, of each value drawn, the lowest and the highest group
of every stretch (the line looks the same, as ``line_points.decimate`` draws long lines),
the first and last group, and every group tied at the highest and at the lowest that the
headline names; how many tie there in all is counted over every group, so "lowest 1.0
points (12 tied)" stays true of the table. A note under the chart says so.

Above ``MAX_CHART_GROUPS`` no chart is drawn at all (``too_many_to_draw``): the groups are
still read one by one before they are thinned (their labels, their calendar order, the
headline's ties), about 40 µs each, and the minute groups of all history (6,382,050) took
170 s, far past the query's limit, which then lost the answer computed in 5 s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from barb.charts.columns import floats
from barb.charts.line_points import slice_extremes
from barb.result import Result, short_value

MAX_DRAWN_GROUPS = 2_000  # more groups than this are thinned to about this many
# More groups than this are not drawn: a year of minute groups (356,000) took 7-15 s.
MAX_CHART_GROUPS = 200_000
MAX_TIED_NAMED = 3  # groups the headline names in a tie; past this, it says how many
# Two values the model's summary rounds alike (to two decimals or finer) are this close.
_TIE_REACH = 0.01 * (1 + 1e-9)


@dataclass(frozen=True)
class Thinned:
    """The groups kept of a long grouped table, and what the headline needs of them all."""

    rows: np.ndarray  # the positions kept, ascending
    total: int  # the groups there are (of the result, when its table was itself spread)
    # Each value column's count of groups tied at its highest and at its lowest.
    ties: dict[str, tuple[int, int]]


def tied(values: np.ndarray, at: np.ndarray, extreme: float) -> list[int]:
    """The positions among ``at`` (ascending) whose value is ``extreme``, exactly or as the
    model's summary rounds both (``short_value``). Only values within its rounding of the
    extreme are rounded, one at a time: rounding every value took seconds of 50,000."""
    rounded = short_value(extreme)
    near = at[np.abs(values[at] - extreme) <= _TIE_REACH]
    same = values[near] == extreme
    rounded_alike = [i for i in near[~same] if short_value(values[i]) == rounded]
    return np.union1d(near[same], np.asarray(rounded_alike, dtype=near.dtype)).tolist()


def thin_groups(
    table: pd.DataFrame,
    columns: list[str],
    compared: np.ndarray,
    *,
    keep: tuple[int, ...] = (),
    total: int | None = None,
) -> Thinned | None:
    """The groups of ``table`` to draw when it has more than ``MAX_DRAWN_GROUPS``, else None.

    ``compared`` says which groups rank for highest and lowest (not the open one, not an
    empty one added); ``keep`` are positions drawn in any case (the open group, which its
    note names)."""
    count = len(table)
    if count <= MAX_DRAWN_GROUPS:
        return None
    slices = max(1, MAX_DRAWN_GROUPS // (2 * max(len(columns), 1)))
    rows = [np.array([0, count - 1, *keep], dtype=np.int64)]
    ties: dict[str, tuple[int, int]] = {}
    for name in columns:
        values = floats(table[name])
        rows.append(slice_extremes(values, slices))
        at = np.flatnonzero(np.isfinite(values) & compared)
        if not at.size:
            continue
        high = tied(values, at, float(values[at].max()))
        low = tied(values, at, float(values[at].min()))
        ties[name] = (len(high), len(low))
        # Enough of a tie for the headline to name it, or to see that it is too many to name.
        rows.append(np.array(high[: MAX_TIED_NAMED + 1] + low[: MAX_TIED_NAMED + 1]))
    kept = np.unique(np.concatenate(rows).astype(np.int64))
    return Thinned(kept, total or count, ties)


def too_many_to_draw(result: Result) -> str | None:
    """Why a grouped result has no chart, when it has more groups than ``MAX_CHART_GROUPS``,
    e.g. "No chart: 6,382,050 groups are too many to draw (the limit is 200,000); group by
    a coarser key, such as date() or hour(), for one."; else None. Counted from the
    summary, before the chart's own rows are built."""
    summary = result.summary
    if summary is None or summary.type != "grouped":
        return None
    groups = summary.rows
    if groups is None:
        groups = len(result.table) if result.table is not None else 0
    if groups <= MAX_CHART_GROUPS:
        return None
    return (
        f"No chart: {groups:,} groups are too many to draw (the limit is "
        f"{MAX_CHART_GROUPS:,}); group by a coarser key, such as date() or hour(), for one."
    )
