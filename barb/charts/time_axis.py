"""Time on the x axis: the spacing of the bars, and date ticks that name their day or month,
or, for daily and longer bars, ticks at bars named by their bar label (as in the CSV)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import matplotlib.dates as mdates
import numpy as np
from matplotlib.axes import Axes

BAR_DAYS = {"daily": 1.0, "weekly": 7.0, "monthly": 30.0, "quarterly": 91.0, "yearly": 365.0}


def bar_step(x: np.ndarray, timeframe: str) -> float:
    """Days between bars: the usual gap in the data, or the timeframe's length for one bar."""
    if len(x) > 1:
        return float(np.median(np.diff(x)))
    return BAR_DAYS.get(timeframe) or intraday_days(timeframe)


def intraday_days(timeframe: str) -> float:
    match = re.fullmatch(r"(\d+)([mh])", timeframe)
    if not match:
        return 1.0
    minutes = int(match.group(1)) * (60 if match.group(2) == "h" else 1)
    return minutes / 1440


def date_axis(ax: Axes, x: np.ndarray, step: float = 1.0) -> None:
    locator = mdates.AutoDateLocator(minticks=4, maxticks=9)
    # Every label names its day or month ("Jan 07", not "07"): the offset line is dropped,
    # the title already carries the dates.
    formatter = mdates.ConciseDateFormatter(
        locator,
        formats=["%Y", "%b", "%b %d", "%H:%M", "%H:%M", "%S.%f"],
        zero_formats=["", "%Y", "%b", "%b %d", "%H:%M", "%H:%M"],
        show_offset=False,
    )
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(formatter)
    if len(x):
        lo, hi = float(np.nanmin(x)), float(np.nanmax(x))
        # A few bars still get an axis of dates around them, not hours around one candle.
        pad = max(0.01 * (hi - lo), (8 * step - (hi - lo)) / 2, step)
        ax.set_xlim(lo - pad, hi + pad)


def label_axis(ax: Axes, x: np.ndarray, labels: Sequence[str | None], step: float = 1.0) -> None:
    """A date axis whose ticks sit on bars and read as those bars' labels (``2023-01``).

    The date locator proposes round places (each year's start, say); each tick moves to the
    first bar on or after its place, so its text is a real bar's label, not a calendar date
    that may have no bar (a holiday, the 1st of a month that began on a weekend).
    """
    date_axis(ax, x, step)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    finite = np.isfinite(xs)
    if not finite.any():
        return
    lo, hi = ax.get_xlim()
    locator = ax.xaxis.get_major_locator()
    wanted = np.asarray(
        locator.tick_values(mdates.num2date(lo), mdates.num2date(hi)), dtype="float64"
    )
    picks = np.unique(np.searchsorted(xs[finite], wanted, side="left"))
    picks = picks[picks < finite.sum()]
    rows = order[np.flatnonzero(finite)[picks]]
    rows = [r for r in rows if labels[r] is not None]
    if rows:
        ax.set_xticks([x[r] for r in rows], [str(labels[r]) for r in rows])
