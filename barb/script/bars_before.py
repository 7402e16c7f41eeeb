"""The highest or lowest of a bar column over the data's bars before a stage's first row.

cummax() and cummin() without a unit start at the period's first bar, and the bars before
it are read only to say whether they went beyond (``_warn_history_beyond``) and, when they
did, to run the stage again with the running high read from all history
(``barb.caveats.running_history``). Over a month of 1-minute bars that was the whole first
stage evaluated over every bar since 2008 (0.5-0.6 s of CPU on NQ's ETH bars), for one
number. Of a bar's own column (cummax(close), cummin(low): drawdowns, new highs) that number
is the data's own: the stage is run on the rows the rest of the query reads
(``barb.script.reach``'s ``to_event``), and the extreme before them is read here, from the
session's whole-history frame where it is cached, or from each trading date's extremes
(built once per process and column) where the frames are built per query. The answer is
the one over all history, bar for bar: a maximum is exact, and its first row is the one
``np.nanargmax`` over every bar would find.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from barb.frames import Dataset

# A bar's own columns, the data's whatever the query (a map cannot write them).
BAR_COLUMNS = frozenset({"open", "high", "low", "close", "volume", "range"})
# Trading dates built at a time for their extremes (1-minute ETH bars: a few MB each).
_DAYS_AT_ONCE = 256


@dataclass(frozen=True)
class Extreme:
    """The highest (lowest) value before the rows, its bar's timestamp and trading date."""

    value: float
    timestamp: pd.Timestamp
    trading_date: pd.Timestamp


@dataclass(frozen=True)
class BarsBefore:
    """The bars of ``session`` at ``timeframe`` before a stage's first row (its timestamp
    ``opens``, its trading date ``first``), when that is not the data's first bar."""

    dataset: Dataset
    session: str
    timeframe: str
    opens: np.datetime64
    first: np.datetime64

    def extreme(self, column: str, highest: bool) -> Extreme | None:
        """The highest (``highest``) or lowest ``column`` before the rows, at its first bar;
        None when no bar before them holds a value."""
        if self.dataset.sliced(self.session, self.timeframe):
            return self._from_days(column, highest)
        full = self.dataset.frame(self.session, self.timeframe)
        stamps = full["timestamp"].to_numpy()
        rows = int(np.searchsorted(stamps, np.datetime64(self.opens, "ns"), side="left"))
        if rows < len(full) and stamps[rows] != np.datetime64(self.opens, "ns"):
            raise AssertionError("the rows are not a slice of the whole-history frame")
        values = _values(full.iloc[:rows], column)
        return _at_first(full.iloc[:rows], values, highest)

    def _from_days(self, column: str, highest: bool) -> Extreme | None:
        index = self.dataset.day_index(self.session, self.timeframe)
        # A frame built per query begins at its first trading date's first bar
        # (``period_rows._sliced_rows``): the dates before it are wholly before the rows.
        days = int(np.searchsorted(index.dates, np.datetime64(self.first, "ns"), side="left"))
        if days <= 0:
            return None
        extremes = self.dataset.derived(
            f"day_extremes/{self.session}/{self.timeframe}/{column}/{'max' if highest else 'min'}",
            lambda: self._day_extremes(len(index.dates), column, highest),
        )[:days]
        value = (np.fmax if highest else np.fmin).reduce(extremes)
        if np.isnan(value):
            return None
        day = int(np.flatnonzero(extremes == value)[0])
        bars = self.dataset.frame_for_days(self.session, self.timeframe, day, day + 1)
        return _at_first(bars, _values(bars, column), highest)

    def _day_extremes(self, days: int, column: str, highest: bool) -> np.ndarray:
        """Each trading date's highest (lowest) ``column``, NaN where none."""
        reduce = np.fmax if highest else np.fmin
        out = np.full(days, np.nan)
        index = self.dataset.day_index(self.session, self.timeframe)
        for first in range(0, days, _DAYS_AT_ONCE):
            stop = min(days, first + _DAYS_AT_ONCE)
            bars = self.dataset.frame_for_days(self.session, self.timeframe, first, stop)
            values = _values(bars, column)
            starts = (index.starts[first:stop] - index.starts[first]).astype(np.int64)
            held = starts < len(values)
            out[first:stop][held] = reduce.reduceat(values, starts[held])
        return out


def _values(bars: pd.DataFrame, column: str) -> np.ndarray:
    """``column`` of ``bars`` as floats: a 1-minute frame's range is its high - low, as
    ``barb.frames.with_range`` makes it."""
    if column == "range" and "range" not in bars.columns:
        return bars["high"].to_numpy(dtype=np.float64) - bars["low"].to_numpy(dtype=np.float64)
    return pd.to_numeric(bars[column], errors="coerce").to_numpy(dtype=np.float64)


def _at_first(bars: pd.DataFrame, values: np.ndarray, highest: bool) -> Extreme | None:
    if not len(values) or np.isnan(values).all():
        return None
    at = int(np.nanargmax(values) if highest else np.nanargmin(values))
    return Extreme(
        float(values[at]),
        pd.Timestamp(bars["timestamp"].iloc[at]),
        pd.Timestamp(bars["trading_date"].iloc[at]),
    )
