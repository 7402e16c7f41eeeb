"""Time on the x axis: the spacing of the bars, and date ticks that name their day or month,
or, for daily and longer bars, ticks at bars named by their bar label (as in the CSV)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import matplotlib.dates as mdates
import numpy as np
from matplotlib.axes import Axes

from barb.charts.style import FIG_W_IN, TICK_PT
from barb.charts.words import ENGLISH, Words

MAX_LABELLED_BARS = 60  # bars named by their labels (2024-03) up to this many, else by dates
MIN_YEARS_NAMED = 3  # bars over this many years or more are named by year on the axis
# A bar label that begins with its year: 2008-01, 2008-Q1, 2008-01-02.
_DATED = re.compile(r"^\d{4}-")
BAR_DAYS = {"daily": 1.0, "weekly": 7.0, "monthly": 30.0, "quarterly": 91.0, "yearly": 365.0}


def bar_step(x: np.ndarray, timeframe: str) -> float:
    """Days between bars: the usual gap in the data, or the timeframe's length for one bar."""
    if len(x) > 1:
        return float(np.median(np.diff(x)))
    return BAR_DAYS.get(timeframe) or intraday_days(timeframe)


def bar_slot(x: np.ndarray, step: float) -> float:
    """The room each bar (or group of bars side by side) has: the usual gap, or the
    smallest one where two bars stand closer. Over a week a Friday and the Monday after make
    the median gap 1.5 days, and bars that wide ran into the next day's."""
    gaps = np.diff(np.sort(x[np.isfinite(x)]))
    gaps = gaps[gaps > 0]
    return min(step, float(gaps.min())) if gaps.size else step


def intraday_days(timeframe: str) -> float:
    match = re.fullmatch(r"(\d+)([mh])", timeframe)
    if not match:
        return 1.0
    minutes = int(match.group(1)) * (60 if match.group(2) == "h" else 1)
    return minutes / 1440


def date_axis(
    ax: Axes, x: np.ndarray, step: float = 1.0, words: Words = ENGLISH, max_ticks: int = 6
) -> None:
    # A phone-wide axis has room for about five short dates ("Apr", "2024").
    locator = mdates.AutoDateLocator(minticks=min(3, max_ticks - 1), maxticks=max_ticks)
    # Room for only three dates over two years: every 12 months, not a warning.
    locator.intervald[mdates.MONTHLY] = [1, 2, 3, 4, 6, 12]
    # Every label names its day or month ("Jan 07", not "07"): the offset line is dropped,
    # the title already carries the dates.
    formatter = mdates.ConciseDateFormatter(
        locator,
        formats=words.date_formats,
        zero_formats=words.date_zero_formats,
        show_offset=False,
    )
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(formatter)
    if len(x):
        lo, hi = float(np.nanmin(x)), float(np.nanmax(x))
        # A few bars still get an axis of dates around them, not hours around one candle.
        pad = max(0.01 * (hi - lo), (8 * step - (hi - lo)) / 2, step)
        ax.set_xlim(lo - pad, hi + pad)
        if lo == hi:
            # One row is named by its date, on it: the running total of a single trade on
            # 2024-03-08 read 05.03, 07.03, 09.03, 11.03, dates with no row, and not its own.
            day = mdates.num2date(lo).replace(tzinfo=None)
            clock = "%Y-%m-%d %H:%M" if step < 1 and (day.hour or day.minute) else "%Y-%m-%d"
            ax.set_xticks([lo], [day.strftime(clock)])


def label_axis(
    ax: Axes,
    x: np.ndarray,
    labels: Sequence[str | None],
    step: float = 1.0,
    words: Words = ENGLISH,
) -> None:
    """A date axis whose ticks sit on bars and read as those bars' labels (``2023-01``).

    The date locator proposes round places (each year's start, say); each tick moves to the
    first bar on or after its place, so its text is a real bar's label, not a calendar date
    that may have no bar (a holiday, the 1st of a month that began on a weekend).
    """
    width_pt = ax.get_position().width * FIG_W_IN * 72
    label_pt = max((len(s) for s in labels if s is not None), default=4) * TICK_PT * 0.62
    max_ticks = max(2, int(width_pt // (label_pt + 14)))
    years = _year_labels(x, labels)
    if years is not None and len({y for y in years if y}) >= MIN_YEARS_NAMED:
        # Bars over several years named by year, on each year's first bar: 18 years of
        # monthly bars read "2008-01" and "2020-01" alone, twelve years apart and none over
        # the last six, and 2022-2025 read "2022-01", "2024-01"; by year the ticks step
        # evenly (2008, 2012 … 2024; 2022, 2023, 2024, 2025).
        labels = years
        label_pt = 4 * TICK_PT * 0.62
        max_ticks = max(2, int(width_pt // (label_pt + 14)))
    date_axis(ax, x, step, words, max_ticks=max_ticks)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    finite = np.isfinite(xs)
    if not finite.any():
        return
    lo, hi = ax.get_xlim()
    named = [int(r) for r in order[finite] if labels[r] is not None]
    if len(named) <= 2 * max_ticks:
        # Few bars (four quarters): name every one, or every other, as their spacing allows;
        # the round dates of the locator could fall on one of them only.
        gaps = np.diff([x[r] for r in named])
        spacing_pt = float(gaps.min()) / (hi - lo) * width_pt if gaps.size else width_pt
        every = max(1, math.ceil((label_pt + 8) / max(spacing_pt, 1e-9)))
        if every > 1 and 1 < len(named) <= max_ticks and _fit_around(ax, x, named, label_pt):
            every = 1  # two weeks drawn 8 weeks wide named only one of them
        picks = named[::every]
        if 1 < len(picks) <= max_ticks or len(named) == 1:
            ax.set_xticks([x[r] for r in picks], [str(labels[r]) for r in picks])
            return
    locator = ax.xaxis.get_major_locator()
    wanted = np.asarray(
        locator.tick_values(mdates.num2date(lo), mdates.num2date(hi)), dtype="float64"
    )
    picks = np.unique(np.searchsorted(xs[finite], wanted, side="left"))
    picks = picks[picks < finite.sum()]
    rows = order[np.flatnonzero(finite)[picks]]
    rows = [r for r in rows if labels[r] is not None]
    # A label centred on a tick near the right end must not run off the figure.
    room_pt = (1 - ax.get_position().x1) * FIG_W_IN * 72
    rows = [r for r in rows if (hi - x[r]) / (hi - lo) * width_pt + room_pt >= label_pt / 2]
    rows = _apart(rows, x, (label_pt + 8) / width_pt * (hi - lo))
    if rows:
        ax.set_xticks([x[r] for r in rows], [str(labels[r]) for r in rows])


def _year_labels(x: np.ndarray, labels: Sequence[str | None]) -> list[str | None] | None:
    """Bar labels that begin with their year (``2008-01``, ``2008-Q1``, ``2008-01-02``) as
    that year on each year's first bar and none on the others; None for labels of another
    form (a year alone, a time)."""
    if not any(s is not None for s in labels):
        return None
    if not all(s is None or _DATED.match(s) for s in labels):
        return None
    years: list[str | None] = [None] * len(labels)
    seen: set[str] = set()
    for row in np.argsort(x, kind="stable"):
        label = labels[row]
        if label is not None and np.isfinite(x[row]) and label[:4] not in seen:
            seen.add(label[:4])
            years[row] = label[:4]
    return years


def _fit_around(ax: Axes, x: np.ndarray, named: list[int], label_pt: float) -> bool:
    """Narrow the axis around a few bars until each one's label fits beside the next, when
    that still leaves room at both ends for half a label; whether it did. The axis is made
    eight bars wide so that a few bars are not drawn as slabs, and two weekly bars a week
    apart on it stood closer than one label's width: one of the two went unnamed."""
    width_pt = ax.get_position().width * FIG_W_IN * 72
    at = np.array([x[r] for r in named], dtype="float64")
    gap = float(np.diff(at).min())
    span = gap * width_pt / (label_pt + 8)  # the widest axis on which labels do not touch
    lo, hi = ax.get_xlim()
    pad = (span - (at[-1] - at[0])) / 2
    half_label = (label_pt / 2 + 4) / width_pt * span
    if span >= hi - lo or pad < max(half_label, gap / 2):
        return False
    ax.set_xlim(at[0] - pad, at[-1] + pad)
    return True


def _apart(rows: list[int], x: np.ndarray, gap: float) -> list[int]:
    """The rows whose ticks stand at least ``gap`` apart, left to right. Round dates moved
    to the next bar can land close together where the rows are sparse (14 golden crosses
    over 18 years: 2010's tick moved to 2012-05-28, beside 2009-02-12), and the labels ran
    into each other."""
    kept: list[int] = []
    for row in sorted(rows, key=lambda r: x[r]):
        if not kept or x[row] - x[kept[-1]] >= gap:
            kept.append(row)
    return kept
