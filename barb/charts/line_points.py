"""The points a long line is drawn through: thinned to about ``LINE_POINTS`` (the lowest and
highest point of each slice, so the line looks the same and draws fast), and broken (a NaN)
only where the bars really pause.

Pauses are found on the bars themselves, before thinning: measured between thinned points, a
daily series' ordinary weekends looked like holes and the line came out dashed. Daily and
longer bars never break at weekends or holidays, only at a hole of weeks; intraday bars break
overnight and at weekends (an RTH-only series), never at the daily maintenance hour. A pause
that would show as a hole only a few pixels wide stays joined, so a long intraday series is
not dashed either.
"""

from __future__ import annotations

import math

import numpy as np

LINE_POINTS = 2_400  # lines are decimated (min/max per bucket) to about this many points
INTRADAY_STEP_DAYS = 0.5  # bars closer than this are intraday
PAUSE_BARS = 4.5  # intraday: a pause longer than this many usual bar spacings,
PAUSE_MIN_DAYS = 3 / 24  # and than three hours (the maintenance hour is no pause)
LONG_PAUSE_BARS = 10  # daily and longer: a hole of this many bar spacings (no closure is)
PAUSE_MIN_SHARE = 0.03  # any pause narrower than this share of the time shown stays joined


def pauses(x: np.ndarray, step: float) -> np.ndarray:
    """Indices ``i`` where the bars pause for long between ``x[i - 1]`` and ``x[i]`` (days)."""
    if len(x) < 2:
        return np.empty(0, dtype=np.intp)
    if step < INTRADAY_STEP_DAYS:
        least = max(PAUSE_BARS * step, PAUSE_MIN_DAYS)
    else:
        least = LONG_PAUSE_BARS * step
    span = float(np.nanmax(x) - np.nanmin(x))
    least = max(least, PAUSE_MIN_SHARE * span)
    return np.flatnonzero(np.diff(x) > least) + 1


def decimate(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep each slice's lowest and highest point: the line looks the same, drawn fast."""
    if len(x) <= LINE_POINTS:
        return x, y
    keep = _extremes(y)
    return x[keep], y[keep]


def broken_line(x: np.ndarray, y: np.ndarray, *, step: float) -> tuple[np.ndarray, np.ndarray]:
    """``decimate``d, with a NaN at every pause of the bars; both ends of a pause are kept,
    so the line stops at the last bar before it and starts again at the first after."""
    breaks = pauses(x, step)
    if not breaks.size:
        return decimate(x, y)
    keep = np.arange(len(x))
    if len(x) > LINE_POINTS:
        keep = np.union1d(_extremes(y), np.concatenate((breaks - 1, breaks)))
    at = np.searchsorted(keep, breaks)
    return _with_nan(x[keep], at), _with_nan(y[keep], at)


def broken_envelope(x: np.ndarray, y: np.ndarray, *, step: float) -> tuple[np.ndarray, ...]:
    """Per slice of the x axis: its first x, and the lowest, middle and highest y; a NaN
    before the first slice after each pause of the bars."""
    grid, offsets = _buckets(y, LINE_POINTS // 2)
    with np.errstate(all="ignore"):
        lo = np.nanmin(np.where(np.isnan(grid), np.inf, grid), axis=1)
        hi = np.nanmax(np.where(np.isnan(grid), -np.inf, grid), axis=1)
        mid = np.nanmean(grid, axis=1)
    columns = (x[offsets], lo, mid, hi)
    size = grid.shape[1]
    after = np.unique(-(-pauses(x, step) // size))  # the slice that starts after each pause
    after = after[after < len(offsets)]
    if not after.size:
        return columns
    return tuple(_with_nan(a, after) for a in columns)


def _extremes(y: np.ndarray) -> np.ndarray:
    return slice_extremes(y, LINE_POINTS // 2)


def slice_extremes(y: np.ndarray, slices: int) -> np.ndarray:
    """Sorted indices of the lowest and highest ``y`` of each of about ``slices`` equal
    slices, and of the first and last point: the line spans every bar, and ends where the
    value "now" is marked."""
    grid, offsets = _buckets(y, slices)
    lows = np.argmin(np.where(np.isnan(grid), np.inf, grid), axis=1) + offsets
    highs = np.argmax(np.where(np.isnan(grid), -np.inf, grid), axis=1) + offsets
    keep = np.unique(np.concatenate((lows, highs, [0, len(y) - 1])))
    return keep[keep < len(y)]


def _buckets(y: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``y`` as ``count`` rows of equal length (the last padded with NaN), and row starts."""
    size = math.ceil(len(y) / count)
    count = math.ceil(len(y) / size)
    padded = np.full(count * size, np.nan)
    padded[: len(y)] = y
    return padded.reshape(count, size), np.arange(count) * size


def _with_nan(values: np.ndarray, at: np.ndarray) -> np.ndarray:
    return np.insert(np.asarray(values, dtype="float64"), at, np.nan)
