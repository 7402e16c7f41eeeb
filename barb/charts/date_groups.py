"""Ticks under groups keyed by a date (``group_by: date()``), drawn in time order at one
place each: on the first group of a month or a year, written as that group's label (as
``label_axis`` names daily bars) or, over several years, as the year.

A year of days by ``date()`` (252 groups, drawn as a line) was named by every 18th label,
"2024-01-02", "2024-01-29" … turned 40 degrees, fourteen of them across a phone-wide
chart: a slanted wall of dates at no round place.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from barb.charts.style import FIG_W_IN, TICK_PT
from barb.charts.time_axis import MIN_YEARS_NAMED

# Months between ticks, each a divisor of 12 so the ticks fall on the same months every
# year (Jan, Apr, Jul, Oct); years between ticks likewise round.
_MONTH_STEPS = (1, 2, 3, 6, 12)
_YEAR_STEPS = (1, 2, 5, 10, 20)


def date_group_ticks(labels: list[str]) -> bool:
    """Whether ``labels`` are dates (``2024-01-02``) in time order: ticks for them are
    ``set_date_group_ticks``'s."""
    if len(labels) < 2:
        return False
    days = pd.to_datetime(pd.Series(labels), format="%Y-%m-%d", errors="coerce")
    return bool(days.notna().all() and days.is_monotonic_increasing)


def set_date_group_ticks(ax: Axes, labels: list[str], x: np.ndarray) -> None:
    """Level ticks on the first group of every few months (named by its date) or, over
    ``MIN_YEARS_NAMED`` years or more, of every few years (named by the year), as many as
    fit across the axis; ``x`` is where each label's group is drawn."""
    days = pd.DatetimeIndex(pd.to_datetime(labels, format="%Y-%m-%d"))
    width_pt = ax.get_position().width * FIG_W_IN * 72
    years = days.year.to_numpy()
    by_year = len(np.unique(years)) >= MIN_YEARS_NAMED
    chars = 4 if by_year else max(map(len, labels))
    max_ticks = max(2, int(width_pt // (chars * TICK_PT * 0.62 + 14)))
    if by_year:
        starts = _firsts(years)
        step = _step(len(starts), max_ticks, _YEAR_STEPS)
        picked = [i for i in starts if years[i] % step == 0] or starts[:1]
        texts = [str(years[i]) for i in picked]
    else:
        months = (days.year * 12 + days.month - 1).to_numpy()
        starts = _firsts(months)
        step = _step(len(starts), max_ticks, _MONTH_STEPS)
        picked = [i for i in starts if (days.month[i] - 1) % step == 0] or starts[:1]
        texts = [labels[i] for i in picked]
    ax.set_xticks(x[picked], texts, minor=False)
    ax.set_xticks([], minor=True)
    for text in ax.get_xticklabels():
        text.set(rotation=0, ha="center", rotation_mode="default")


def _firsts(keys: np.ndarray) -> list[int]:
    """The index of each key's first row (keys in order)."""
    return [0, *(np.flatnonzero(np.diff(keys)) + 1).tolist()]


def _step(count: int, max_ticks: int, steps: tuple[int, ...]) -> int:
    """The smallest round step that leaves at most ``max_ticks`` of ``count`` ticks."""
    return next((s for s in steps if -(-count // s) <= max_ticks), steps[-1])
