"""What an expression is evaluated against."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from barb.errors import UnknownSession
from barb.frames import resample_calendar
from barb.result import CutRun
from barb.script import ast
from barb.script.bars_before import BarsBefore
from barb.script.bincount import as_codes, bincount
from barb.script.clock_order import NightSession
from barb.script.conditions import is_condition, kleene, plain_if_known
from barb.script.event_history import HistoryCut
from barb.timeframes import timeframe


@dataclass(frozen=True)
class PartOfDay:
    """The query's session when it is a part of the day (the first hour, a window, the
    overnight hours): as the answer names it, and the whole session it lies in, whose daily
    bars daily() is said beside (``barb.script.daily_warnings``)."""

    named: str  # "RTH_OPEN (09:30-10:30)"
    whole: str  # "RTH"; "ETH" for the overnight hours


@dataclass
class EvalContext:
    """The rows an expression runs over, and how to reach other sessions' bars.

    ``frame`` has a RangeIndex and at least: ``timestamp`` (datetime64[ns], wall clock in the
    instrument's timezone: bar open for intraday, the first trading date for daily and longer),
    ``open``, ``high``, ``low``, ``close``, ``volume``, ``range`` and ``trading_date``
    (datetime64[ns] at midnight; for weekly and longer bars, the last trading date in the
    bar), plus columns added by ``map`` and ``join``.
    """

    frame: pd.DataFrame
    timeframe: str
    # Session name -> that session's daily bars indexed by trading_date
    # (columns open, high, low, close, volume); raises UnknownSession.
    session_bars: Callable[[str], pd.DataFrame]
    step: str = "map"
    # Which rows of ``frame`` are the period's own (the others are history before it, or
    # bars after it for next()); None when every row is. Running totals and ranks start at
    # the period: "cumulative return in 2024" runs from the first bar of 2024 (one restarted
    # each week, month… from its unit's first bar, which may lie before the period).
    period: np.ndarray | None = None
    # The calendar unit the query's period names ("2026": year; ``Period.calendar_unit``):
    # the restart streak()'s advice names where the period's rows fit several.
    period_unit: str | None = None
    # Things the person should know about the result (e.g. rows where a division by zero
    # gave an empty value); the evaluator appends, the interpreter reports them in metadata.
    warnings: list[str] = field(default_factory=list)
    # The instrument's exchange calendar (pandas_market_calendars name), for holiday() and
    # early_close(); None where the rows are not an instrument's bars.
    calendar: str | None = None
    # The instrument's time zone (IANA), whose wall clock the timestamps are: hour('UTC')
    # converts from it. None where the rows are not an instrument's bars.
    timezone: str | None = None
    # Every trading date of the instrument's data (datetime64[ns], ascending), whatever the
    # query's session or period: trading_day() counts a month's days over these.
    trading_dates: Callable[[], np.ndarray] | None = None
    # The instrument's day session (its default, RTH): session_close('15:59-16:00', 1) counts
    # back the dates it traded, so a date it did not trade (Good Friday) is stepped over and
    # one it closed early on (no 15:59 bar) is not: that value is missing, not older.
    day_session: str | None = None
    # Warnings about some rows only, said once the stage knows which rows it keeps (after
    # its where, or the rows a limit lists): each takes that mask over ``frame`` and gives its
    # sentence, or None when no kept row is concerned. A streak that began before the period
    # is noise when the where dropped that row.
    row_warnings: list[Callable[[np.ndarray], str | None]] = field(default_factory=list)
    # A second stage whose rows are the first stage's weeks (group_by week()): a year() there
    # is pointed to weekly bars, which keep each week whole.
    rows_are_weeks: bool = False
    # The columns holding week() labels (a map's "wk": "week()", a first stage's week key):
    # a date compared with one by == or in means its week, as with week() itself.
    week_columns: frozenset[str] = frozenset()
    # A second stage whose rows are the first stage's groups, not its listed rows: a year()
    # there is pointed to a key of its group_by, not to a column of its map.
    rows_are_groups: bool = False
    # A second stage whose rows are the first stage's groups by date(): that key's column,
    # each row's trading date, which cumsum(x, 'month') and streak(cond, 'year') restart by.
    row_dates: str | None = None
    # Intraday bars of a session that crosses midnight (OVERNIGHT): a comparison of times of
    # day as text there is said where it reads against the session's order.
    night: NightSession | None = None
    # A second stage over a listing of those bars: the first stage's columns that are each
    # bar's own time() ("select": ["time() as t", …]), whose rows hold no minute of the day
    # to tell them from the time of an event (``clock_order.bar_clocks``).
    bar_clock_columns: frozenset[str] = frozenset()
    # The columns holding a clock as a number, by the minutes one unit is ({"t": 1} of
    # hour() * 60 + minute(), ``zone_midnight.clock_columns``): an arg_max's tied values
    # are named as times of day.
    clock_columns: dict[str, int] = field(default_factory=dict)
    # The columns holding another zone's time() text, by that zone ({"t": "MSK"},
    # ``zone_midnight.text_clock_zones``): a hint for their minutes names that clock.
    text_zones: dict[str, str] = field(default_factory=dict)
    # A running high or low (cummax, cummin) under a period starts at its first bar; where
    # the bars before it went beyond, the warning waits here until the stage is run again
    # with them read from all history (``running_from_history``): said only when that
    # changes the answer (``barb.caveats.running_history``).
    history_beyond: list[str] = field(default_factory=list)
    running_from_history: bool = False
    # The query's session (a name, or a window's key): daily() evaluates its expression over
    # this session's daily bars. None where the rows are not a session's bars.
    session: str | None = None
    # That session when it is a part of the day, on intraday bars; None otherwise.
    part_of_day: PartOfDay | None = None
    # The weekly and monthly bars weekly() and monthly() built, by (session, unit): a query
    # reading last week's high, low and close resamples the daily bars once (3 ms for NQ).
    calendar_bars: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict)
    # A streak run the period cuts, by the warning that says it: the chart's form of that
    # warning (``Metadata.cut_runs``), taken for the chart only where the answer says that
    # very warning. Shared with the contexts a caveat runs a stage again on, whose warnings
    # (another period's numbers) are not the answer's.
    cut_runs: dict[str, CutRun] = field(default_factory=dict)
    # How the first stage's answer reads streak() of a condition (as written, "close <
    # prev(close)"): the comparisons with a number it is read through ("where": "run >= 3"),
    # or None when it reads the count itself (max(run), a listing) or is not known here
    # (``StagePlan.number_comparisons``). The run begun before the period is said as the
    # rows it moves across such a comparison, or as the longest run.
    streak_reads: Callable[[str], list[ast.Compare] | None] | None = None
    # The first stage's rows when they begin after the data's first bar though a count
    # since an event reads all history: where its event must lie (``event_history``).
    history_cut: HistoryCut | None = None
    # The data's bars before the first stage's rows, when those are cut short of its first
    # bar: a running high or low of a bar's column reads its extreme there
    # (``barb.script.bars_before``), the rows being the rest of the query's.
    bars_before: BarsBefore | None = None

    @property
    def intraday(self) -> bool:
        return timeframe(self.timeframe).intraday

    def on_daily_bars(self, session: str | None = None, unit: str = "daily") -> EvalContext:
        """A context over ``session``'s bars at ``unit`` (daily, weekly, monthly; by default
        the query's session's daily bars), all history: daily()'s argument is evaluated
        there, so its ATR warms up on the first day of data, not the period's. Weekly and
        monthly bars are the timeframe's own, built from these daily bars
        (``barb.frames.resample_calendar``): a week is labelled by its first trading date, a
        holiday Monday's by its Tuesday, and a week with no bars has none."""
        session = session or self.session
        if session is None:  # a chart's rows, evaluated again: no session's bars
            raise UnknownSession(f"{unit}() has no session's {unit} bars here.", step=self.step)
        bars = self.session_bars(session)
        if unit != "daily":
            built = self.calendar_bars.get((session, unit))
            if built is None:
                built = resample_calendar(bars.reset_index(drop=True), unit)
                self.calendar_bars[(session, unit)] = built
            bars = built
        return EvalContext(
            frame=bars.reset_index(drop=True),
            timeframe=unit,
            session_bars=self.session_bars,
            step=self.step,
            calendar=self.calendar,
            timezone=self.timezone,
            trading_dates=self.trading_dates,
            day_session=self.day_session,
            session=session,
        )

    def warn(self, message: str, *, once_per: str | None = None) -> None:
        """Say ``message`` once; with ``once_per``, say only the first message beginning
        with it: cummax(close) and cummax(high) over one period each found higher bars
        before it, and gave one sentence twice with two numbers (p29b Q10)."""
        if message in self.warnings:
            return
        if once_per is not None and any(w.startswith(once_per) for w in self.warnings):
            return
        self.warnings.append(message)

    def warn_rows(self, check: Callable[[np.ndarray], str | None]) -> None:
        """A warning that depends on which of ``frame``'s rows are kept (see row_warnings)."""
        self.row_warnings.append(check)

    def settle_row_warnings(self, kept: np.ndarray) -> None:
        """Say the row warnings that concern ``kept`` (a mask over the frame they were made
        on), and forget them all."""
        checks, self.row_warnings = self.row_warnings, []
        for check in checks:
            message = check(kept)
            if message is not None:
                self.warn(message)


@dataclass(frozen=True)
class RowGroups:
    """How select partitions the rows: all together, or by the values of group keys.

    Aggregate functions receive one of these and reduce through it, so each aggregate is
    written once and works both ungrouped (a scalar) and grouped (a Series indexed by the
    group keys, sorted, rows with a missing key left out).
    """

    length: int
    # Group number of each row, -1 for rows whose key is missing; None when ungrouped.
    codes: np.ndarray | None = None
    # One entry per group: the key (a MultiIndex for several keys).
    index: pd.Index | None = None
    # Rows per code, when grouping already counted them (the small-integer path).
    sizes: np.ndarray | None = None
    # Sparse codes (the small-integer path): the codes that have rows, one per group.
    # Codes then run over the key's whole span and results are cut down to these slots,
    # which is cheaper than renumbering millions of codes.
    slots: np.ndarray | None = None
    # Where an aggregate says what its value hides (rows tied with the one shown, in all or
    # in some groups).
    warn: Callable[[str], None] | None = field(default=None, compare=False)
    # The minutes one unit of the aggregate's first argument is, where that argument is a
    # column holding a clock as a number (``EvalContext.clock_columns``): what its tied
    # values are named by (arg_max's -360 as 18:00).
    arg_clock: int | None = field(default=None, compare=False)

    @classmethod
    def whole(cls, length: int, warn: Callable[[str], None] | None = None) -> RowGroups:
        return cls(length, warn=warn)

    @classmethod
    def by_keys(
        cls, frame: pd.DataFrame, keys: Sequence[str], warn: Callable[[str], None] | None = None
    ) -> RowGroups:
        # factorize(sort=True) orders each key by value (categories by their order) and
        # gives -1 for a missing key.
        if len(keys) == 1:
            small = _small_int_codes(frame[keys[0]])
            if small is not None:
                codes, uniques, sizes, slots = small
                index = pd.Index(uniques, name=keys[0])
                return cls(len(frame), codes, index, sizes, slots, warn=warn)
        else:
            small = _small_int_combination(frame, keys)
            if small is not None:
                codes, levels, sizes, slots = small
                index = pd.MultiIndex.from_arrays(levels, names=list(keys))
                return cls(len(frame), codes, index, sizes, slots, warn=warn)
        factorized = [factorized_key(frame[key]) for key in keys]
        if len(keys) == 1:
            codes, uniques = factorized[0]
            index = pd.Index(uniques, name=keys[0])
            return cls(len(frame), codes.astype(np.int64), index, warn=warn)
        level_codes = [codes.astype(np.int64) for codes, _ in factorized]
        sizes = [max(len(uniques), 1) for _, uniques in factorized]
        missing = np.logical_or.reduce([c < 0 for c in level_codes])
        codes, positions = _combination_codes([c[~missing] for c in level_codes], sizes)
        all_codes = np.full(len(frame), -1, dtype=np.int64)
        all_codes[~missing] = codes
        index = pd.MultiIndex.from_arrays(
            [uniques.take(pos) for (_, uniques), pos in zip(factorized, positions, strict=True)],
            names=list(keys),
        )
        return cls(len(frame), all_codes, index, warn=warn)

    def taken(
        self, positions: np.ndarray, warn: Callable[[str], None] | None = None
    ) -> RowGroups | None:
        """The grouping of the rows at ``positions`` (ascending, at least one) alone, with
        the groups and keys ``by_keys`` over those rows gives, read from these codes: a
        warning that weighs a statistic again over fewer rows (the holidays left out, the
        last 12 months) hashes and sorts no key again. None where a key's values are
        Python objects, whose index pandas infers again from the rows that remain."""
        if self.codes is None:
            return RowGroups.whole(len(positions), warn=warn)
        assert self.index is not None and len(positions)
        levels = self.index.levels if isinstance(self.index, pd.MultiIndex) else [self.index]
        if any(level.dtype == object for level in levels):
            return None
        codes = self.codes[positions]
        if self.sizes is not None:  # integer keys: the same offsets, counted over these rows
            sizes = bincount(codes, minlength=self.ncodes)
            present = sizes > 0
            slots = None if present.all() else np.flatnonzero(present)
            held = present if self.slots is None else present[self.slots]
            return RowGroups(len(codes), codes, self._index_of(held), sizes, slots, warn=warn)
        counts = bincount(codes[codes >= 0], minlength=self.ngroups)
        held = counts > 0
        renumbered = np.full(self.ngroups + 1, -1, dtype=np.int64)  # code -1 reads the last
        renumbered[:-1][held] = np.arange(int(np.count_nonzero(held)))
        return RowGroups(len(codes), renumbered[codes], self._index_of(held), warn=warn)

    def _index_of(self, held: np.ndarray) -> pd.Index:
        """The groups ``held`` (a mask over ``index``), as ``by_keys`` builds their index: a
        MultiIndex's levels from the values its groups hold, not all of this one's."""
        assert self.index is not None
        if not isinstance(self.index, pd.MultiIndex):
            return self.index[held]
        return pd.MultiIndex.from_arrays(
            [self.index.get_level_values(i)[held] for i in range(self.index.nlevels)],
            names=self.index.names,
        )

    @property
    def grouped(self) -> bool:
        return self.codes is not None

    @property
    def ngroups(self) -> int:
        return 1 if self.index is None else len(self.index)

    @property
    def ncodes(self) -> int:
        """How many distinct codes there can be (more than groups when codes are sparse)."""
        if self.slots is not None and self.sizes is not None:
            return len(self.sizes)
        return self.ngroups

    def _from_codes(self, values: np.ndarray) -> pd.Series:
        """Per-code values (length ncodes) as per-group values."""
        return self.per_group(values if self.slots is None else values[self.slots])

    @functools.cached_property
    def _kept(self) -> tuple[np.ndarray | None, np.ndarray]:
        """Rows that belong to a group (None: all of them), and their group numbers."""
        assert self.codes is not None
        if self.sizes is not None:  # integer keys are never missing: every row has a group
            return None, self.codes
        keep = self.codes >= 0
        if keep.all():
            return None, self.codes
        return keep, self.codes[keep]

    def reduce(self, values: pd.Series, how: str, **kwargs: Any) -> Any:
        """``values.<how>(**kwargs)`` over all rows, or per group."""
        if self.codes is None:
            if how == "median" and not values.notna().any():
                return np.nan  # numpy's nanmedian warns "Mean of empty slice" for the same
            return getattr(values, how)(**kwargs)
        keep, codes = self._kept
        if how in ("sum", "mean", "count") and values.dtype.kind in "iufb":
            return self._bincount(values.to_numpy(), how)
        subset = values if keep is None else values[keep]
        if is_condition(subset):
            # max(cond) per date stays a condition, unknown where a group had no known value
            # (the data's first date under daily(high)): its numpy array was object, which a
            # then stage's mean(hit) refused as text (p36b C1).
            subset = kleene(subset)
        result = getattr(subset.groupby(codes, sort=True), how)(**kwargs)
        result = result.reindex(range(self.ncodes))
        if isinstance(result.dtype, pd.BooleanDtype):
            return plain_if_known(self._from_codes(result.array))
        return self._from_codes(result.to_numpy())

    def _bincount(self, array: np.ndarray, how: str) -> pd.Series:
        """Sum, mean and count by np.bincount: far faster than a groupby for these."""
        keep, codes = self._kept
        if keep is not None:
            array = array[keep]
        if array.dtype.kind in "iub":
            # No missing values possible: skip the float copy and the NaN mask.
            counts = self.sizes if self.sizes is not None and keep is None else None
            if counts is None:
                counts = bincount(codes, minlength=self.ncodes)
            if how == "count":
                return self._from_codes(counts.astype(np.int64))
            sums = bincount(codes, array, minlength=self.ncodes)
            if how == "sum":
                return self._from_codes(sums.astype(np.int64))
            with np.errstate(invalid="ignore", divide="ignore"):
                return self._from_codes(np.where(counts > 0, sums / counts, np.nan))
        numbers = array.astype(np.float64)
        present = ~np.isnan(numbers)
        counts = bincount(codes, present, minlength=self.ncodes)
        if how == "count":
            return self._from_codes(counts.astype(np.int64))
        sums = bincount(codes, np.where(present, numbers, 0.0), minlength=self.ncodes)
        if how == "sum":
            # Whole numbers stay whole (exact below 2**53, far beyond any volume total).
            return self._from_codes(sums.astype(np.int64) if array.dtype.kind in "iub" else sums)
        with np.errstate(invalid="ignore", divide="ignore"):
            return self._from_codes(np.where(counts > 0, sums / counts, np.nan))

    def pick(self, candidate: np.ndarray, *, last: bool = False) -> Any:
        """Position of the first (or last) row where ``candidate`` is true, in all or per
        group; NaN where there is none. Rows are in time order, so first means earliest."""
        if self.codes is None:
            found = np.flatnonzero(candidate)
            if len(found) == 0:
                return np.nan
            return float(found[-1] if last else found[0])
        keep, codes = self._kept
        positions = np.arange(self.length) if keep is None else np.flatnonzero(keep)
        if not candidate.all():
            chosen = candidate if keep is None else candidate[keep]
            codes, positions = codes[chosen], positions[chosen]
        # ufunc.at: one pass, no hashing of the codes (a groupby would factorize them again).
        missing = -1 if last else self.length
        best = np.full(self.ncodes, missing, dtype=np.int64)
        (np.maximum if last else np.minimum).at(best, codes, positions)
        return self._from_codes(np.where(best == missing, np.nan, best.astype(np.float64)))

    def size(self) -> Any:
        """Rows in all, or per group."""
        if self.codes is None:
            return self.length
        if self.sizes is not None:  # counted when grouping (a copy: the table may change it)
            return self._from_codes(self.sizes.copy())
        _, codes = self._kept
        return self._from_codes(bincount(codes, minlength=self.ncodes))

    def count_where(self, mask: np.ndarray) -> pd.Series:
        """Per group, the rows where ``mask`` is true: the codes of those rows alone are
        counted, which is cheap when they are few (a statistic's empty rows: on 2M minute
        bars, a tenth of the time of a weighted count over every row)."""
        assert self.codes is not None
        codes = self.codes[np.flatnonzero(mask)]
        if self.sizes is None:  # integer keys are never missing; others may be (code -1)
            codes = codes[codes >= 0]
        return self._from_codes(bincount(codes, minlength=self.ncodes))

    def spread(self, per_group: Any) -> Any:
        """Each row's group value (NaN for rows in no group); the value itself if ungrouped."""
        if self.codes is None:
            return per_group
        values = np.asarray(per_group, dtype=np.float64)
        if self.slots is not None:
            full = np.full(self.ncodes, np.nan)
            full[self.slots] = values
            values = full
        values = np.append(values, np.nan)
        return values[self.codes]  # code -1 picks the appended NaN

    def groups_of(self, positions: np.ndarray) -> np.ndarray:
        """The group (its place in ``index``) of each row at ``positions``; -1 for a row in
        no group. Grouped only."""
        assert self.codes is not None
        codes = self.codes[positions]
        if self.slots is None:
            return codes
        groups = np.searchsorted(self.slots, codes)
        return np.where(codes >= 0, groups, -1)

    def per_group(self, values: np.ndarray) -> pd.Series:
        return pd.Series(values, index=self.index)


# Integer keys spanning at most this many values are grouped by offset, not by hashing.
_SMALL_KEY_SPAN = 100_000


# Below 2**63: a mixed-radix number of the keys folded since the last renumbering stays an
# int64 while the product of their sizes is under this.
_FOLDED_SPAN = 1 << 62


def _combination_codes(
    level_codes: Sequence[np.ndarray], sizes: Sequence[int]
) -> tuple[np.ndarray, list[np.ndarray]]:
    """One dense code per combination of the keys' codes (``level_codes``, each from 0 to
    its size - 1), sorted by the first key, then the second…, and per key the position of
    each code's value.

    The keys are folded into one mixed-radix number, renumbered densely (at most one code
    per row) whenever folding the next would pass int64: six daily keys such as timestamp,
    close, volume, open, high and low, of about 4,600 values each, multiply past 2**63,
    where one number for them all failed (np.ravel_multi_index: "invalid dims").
    """
    codes = np.zeros(len(level_codes[0]), dtype=np.int64)
    shape: list[int] = [1]  # the radices folded into codes since the last renumbering
    positions: list[np.ndarray] = []  # per key renumbered: its position for each code
    for level, size in zip(level_codes, sizes, strict=True):
        if int(np.prod(shape, dtype=object)) * size >= _FOLDED_SPAN:
            codes, positions = _renumbered(codes, shape, positions)
            shape = [len(positions[0])]
        codes = codes * size + level
        shape.append(size)
    return _renumbered(codes, shape, positions)


def _renumbered(
    codes: np.ndarray, shape: list[int], positions: list[np.ndarray]
) -> tuple[np.ndarray, list[np.ndarray]]:
    """``codes`` (mixed radix over ``shape``: the last renumbered code, then the keys folded
    since) renumbered 0, 1, … in order, and each key's position for each new code."""
    present, dense = np.unique(codes, return_inverse=True)
    digits = np.unravel_index(present, shape)
    return dense.astype(np.int64), [p[digits[0]] for p in positions] + list(digits[1:])


def _small_int_combination(
    frame: pd.DataFrame, keys: Sequence[str]
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray, np.ndarray | None] | None:
    """Codes, per-level keys, per-code sizes and slots for several integer keys whose spans
    multiply to a small number (year and month, weekday and hour…).

    One code per combination, in the order of the keys (by the first, then the second…), so
    there is nothing to hash or sort: the same as the one-key path, over the mixed radix.
    """
    columns = [frame[key] for key in keys]
    if len(frame) == 0 or any(c.dtype.kind not in "iu" for c in columns):
        return None
    lows, spans = [], []
    for column in columns:
        values = column.to_numpy()
        low, high = int(values.min()), int(values.max())
        lows.append(low)
        spans.append(high - low + 1)
    if int(np.prod(spans, dtype=np.float64)) > _SMALL_KEY_SPAN:
        return None
    codes = as_codes(columns[0].to_numpy(), lows[0])
    for column, low, span in zip(columns[1:], lows[1:], spans[1:], strict=True):
        codes *= span
        codes += as_codes(column.to_numpy(), low)
    total = int(np.prod(spans))
    sizes = bincount(codes, minlength=total)
    present = sizes > 0
    slots = None if present.all() else np.flatnonzero(present)
    combos = np.arange(total) if slots is None else slots
    levels = [
        positions + low
        for positions, low in zip(np.unravel_index(combos, spans), lows, strict=True)
    ]
    return codes, levels, sizes, slots


def factorized_key(key: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """``pd.factorize(key, sort=True)``: each row's code (-1 where missing) and the sorted
    distinct values. A category's or a yes/no key's codes are read from its own small
    integers rather than hashed and sorted: a weekday or an event day over 4,600 daily rows
    cost 100 µs that way, grouped once for the answer and again by each warning that weighs
    a statistic over fewer rows (the holidays left out, the last 12 months)."""
    dtype = key.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        raw, size = key.array.codes, len(dtype.categories)
    elif isinstance(dtype, pd.BooleanDtype):
        array = key.array
        raw, size = np.where(array._mask, -1, array._data.astype(np.int8)), 2
    elif dtype == np.bool_:
        raw, size = key.to_numpy().astype(np.int8), 2
    else:
        return pd.factorize(key, sort=True)
    # Code c + 1, so that a missing row (-1) counts at 0; the present codes renumbered 0, 1…
    shifted = raw.astype(np.intp) + 1
    present = np.bincount(shifted, minlength=size + 1)[1:] > 0
    renumbered = np.full(size + 1, -1, dtype=np.int64)
    renumbered[1:][present] = np.arange(int(np.count_nonzero(present)))
    used = np.flatnonzero(present)
    if isinstance(dtype, pd.CategoricalDtype):
        uniques = pd.Index(pd.Categorical.from_codes(used, dtype=dtype))
    else:
        uniques = pd.Index(pd.array(used.astype(bool), dtype=dtype))
    return renumbered[shifted], uniques


def _small_int_codes(
    key: pd.Series,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None] | None:
    """Codes, keys, per-code sizes and slots for an integer key of small span (hours, years…).

    Codes are ``key - min``: no hashing and no sort. When some values in the span never occur
    (the 17:00 hour of a CME day), ``slots`` lists the codes that do.
    """
    if key.dtype.kind not in "iu" or len(key) == 0:
        return None
    values = key.to_numpy()
    low, high = int(values.min()), int(values.max())
    if high - low > _SMALL_KEY_SPAN:
        return None
    codes = as_codes(values, low)
    sizes = bincount(codes, minlength=high - low + 1)
    present = sizes > 0
    slots = None if present.all() else np.flatnonzero(present)
    keys = np.arange(low, high + 1) if slots is None else slots + low
    return codes, keys, sizes, slots
