"""sar(), supertrend() and obv() over a session's own 1-minute columns, computed once per process.

Each stop is a path from the data's first bar: its state at a bar is every bar before it, so
no shorter warm-up gives the same value (a flip puts the stop at the last trend's extreme,
itself set by the flip before), and a query over one month of 1-minute bars ran the loop
over every bar since 2008, each time (1.6-2.5 s of CPU on NQ's ETH bars). The 1-minute
columns of a full session are read-only views of the mapped data (``barb.frames.Dataset``),
the same memory for every query from the same first bar: a path computed over them is kept,
keyed by that memory (its owner held, so the address is never another array's) and by the
call's arguments, over every bar to the data's last. A later query that reads the same
columns from the same first bar takes the first rows of the kept path, since a path's value
at a bar depends only on the bars up to it. Any other column (a copy, a time window's bars,
a map's own "high") is computed as before. One path is kept per function: a 1-minute path
over all of NQ's history is 51 MB. obv() is a running total from the data's first bar, the
same kind of path (0.5 s a query over a month of NQ's 1-minute ETH bars, each time); its
volume column is the data's int64, mapped the same way.

Yet the stage itself still ran over every bar since 2008 (70-250 ms of CPU a warm query over
a month of NQ's 1-minute bars: the stage's columns, the range, the new column copied into
6.4M rows). So the planner runs a stage that reads these paths on the rows the rest of the
query reads (``barb.script.reach``'s ``BAR_PATHS``, as a count since an event), and
``served_path`` gives its rows the values of one path over the session's whole-history bars
at that timeframe, from their first bar, at the rows' offset there: the same values, bar for
bar, as the stage over all history gives (the rows' timestamps are checked to be a run of
the whole-history bars; any other frame is computed over itself, as before). That path is
the mapped one above for 1-minute ETH bars, else computed once over the whole-history frame
(RTH minutes: every RTH minute since the first, as an RTH query over all history reads them)
and kept, a few per function while they fit in ``_SERVED_BYTES``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from barb.script.context import EvalContext


@dataclass(frozen=True)
class _Kept:
    args: tuple[Any, ...]
    owners: tuple[object, ...]  # held: the memory stays mapped and its address unique
    addresses: tuple[int, ...]
    values: np.ndarray


_kept: dict[str, _Kept] = {}
# The mapped columns' types, each 8 bytes a value (a view's offset from its array's first
# value counts them): prices, and volume.
_MAPPED_TYPES = (np.dtype(np.float64), np.dtype(np.int64))
_lock = threading.Lock()


def cached_path(
    name: str,
    columns: list[pd.Series],
    args: tuple[Any, ...],
    path: Callable[[list[pd.Series]], pd.Series],
) -> pd.Series:
    """``path(columns)`` (causal: a row's value reads the rows up to it alone), as the first
    rows of the one kept for the same memory and ``args``, kept now if there is none."""
    values = _path_values(name, columns, args, path)
    return pd.Series(values[: len(columns[0])].copy(), index=columns[0].index, name=name)


def _path_values(
    name: str,
    columns: list[pd.Series],
    args: tuple[Any, ...],
    path: Callable[[list[pd.Series]], pd.Series],
) -> np.ndarray:
    """``path(columns)``'s values from the first row, read-only: the kept path (which may
    reach past the columns' last row) when the columns are mapped."""
    memory = [_mapped(column) for column in columns]
    if any(m is None for m in memory):
        return path(columns).to_numpy(dtype=np.float64)
    owners = tuple(m[0] for m in memory)  # type: ignore[index]
    addresses = tuple(m[1] for m in memory)  # type: ignore[index]
    rows = len(columns[0])
    with _lock:
        kept = _kept.get(name)
    if not (
        kept is not None
        and kept.args == args
        and kept.addresses == addresses
        and all(a is b for a, b in zip(kept.owners, owners, strict=True))
        and len(kept.values) >= rows
    ):
        whole = _to_the_end(owners, addresses)
        if whole is None:
            return path(columns).to_numpy(dtype=np.float64)
        # Over every bar from the frame's first to the data's last: the next query (a
        # later month) reads the same path.
        values = path(whole).to_numpy(dtype=np.float64, copy=True)
        values.flags.writeable = False
        kept = _Kept(args, owners, addresses, values)
        with _lock:
            _kept[name] = kept
    return kept.values


@dataclass(frozen=True)
class _Whole:
    """One path over a session's whole-history bars at a timeframe, from their first bar."""

    dataset: object  # held: its id in the key is never another dataset's
    timestamps: np.ndarray
    values: np.ndarray


# Per function, the whole-history paths kept, most recently read last: a few while their
# values fit (one over NQ's 1-minute ETH bars is 51 MB, and the mapped one above besides;
# daily ones are kilobytes), never fewer than the last one read.
_SERVED_BYTES = 64 * 2**20
_served: dict[str, OrderedDict[tuple[Any, ...], _Whole]] = {}


def served_path(
    ctx: EvalContext,
    name: str,
    names: tuple[str, ...],
    args: tuple[Any, ...],
    path: Callable[[list[pd.Series]], pd.Series],
) -> pd.Series:
    """``path`` of the bar columns ``names`` over ``ctx``'s rows as over all history: when
    the rows are a run of the session's whole-history bars from the stage's first row, cut
    short of the data's first bar (``EvalContext.bars_before``), the kept whole path's
    values at the rows' offset, as the stage over all history read them from the first bar;
    else ``cached_path`` over the rows themselves (the data's first bar on, or rows that
    begin elsewhere or skip bars: as they read them over all history's rows)."""
    frame = ctx.frame
    columns = [frame[column] for column in names]
    before = ctx.bars_before
    if before is None or before.timeframe != ctx.timeframe or "timestamp" not in frame:
        return cached_path(name, columns, args, path)
    stamps = frame["timestamp"].to_numpy()
    rows = len(stamps)
    if not rows or stamps[0] != before.opens:
        # Rows begun later than the stage's (a then stage's listing, a caveat's last months)
        # read the path from their own first row, as they did over all history's rows.
        return cached_path(name, columns, args, path)
    whole = _whole(name, before.dataset, before.session, before.timeframe, names, args, path)
    at = int(np.searchsorted(whole.timestamps, stamps[0]))
    if (
        stamps.dtype != whole.timestamps.dtype
        or at + rows > len(whole.timestamps)
        or not np.array_equal(whole.timestamps[at : at + rows], stamps)
    ):
        return cached_path(name, columns, args, path)  # not the session's bars in a run
    return pd.Series(whole.values[at : at + rows].copy(), index=frame.index, name=name)


def _whole(
    name: str,
    dataset: Any,
    session: str,
    timeframe: str,
    names: tuple[str, ...],
    args: tuple[Any, ...],
    path: Callable[[list[pd.Series]], pd.Series],
) -> _Whole:
    key = (id(dataset), session, timeframe, names, args)
    with _lock:
        kept = _served.setdefault(name, OrderedDict())
        found = kept.get(key)
        if found is not None and found.dataset is dataset:
            kept.move_to_end(key)
            return found
    bars = dataset.frame(session, timeframe)
    values = _path_values(name, [bars[column] for column in names], args, path)[: len(bars)]
    if values.flags.writeable:
        values = values.copy()
        values.flags.writeable = False
    found = _Whole(dataset, bars["timestamp"].to_numpy(), values)
    with _lock:
        kept[key] = found
        kept.move_to_end(key)
        while len(kept) > 1 and sum(w.values.nbytes for w in kept.values()) > _SERVED_BYTES:
            kept.popitem(last=False)
    return found


def _to_the_end(owners: tuple[object, ...], addresses: tuple[int, ...]) -> list[pd.Series] | None:
    """Each column from its frame's first bar to its Arrow array's last, as a view."""
    columns = []
    for owner, address in zip(owners, addresses, strict=True):
        try:
            whole = owner.to_numpy(zero_copy_only=True)  # type: ignore[attr-defined]
        except Exception:
            return None
        start, rest = divmod(address - int(whole.__array_interface__["data"][0]), 8)
        if rest or not 0 <= start < len(whole) or whole.dtype not in _MAPPED_TYPES:
            return None
        columns.append(pd.Series(whole[start:]))
    return columns


def _mapped(column: pd.Series) -> tuple[object, int] | None:
    """The owner of ``column``'s memory and its first value's address, when the column is a
    read-only float64 (a price) or int64 (a volume) view of an Arrow array (the mapped
    data), which nothing writes to; else None."""
    array = column.to_numpy()
    if array.dtype not in _MAPPED_TYPES or array.flags.writeable or not array.flags.c_contiguous:
        return None
    base = array
    while isinstance(base.base, np.ndarray):
        base = base.base
    owner = base.base
    if owner is None or base.flags.writeable or not type(owner).__module__.startswith("pyarrow"):
        return None
    return owner, int(array.__array_interface__["data"][0])
