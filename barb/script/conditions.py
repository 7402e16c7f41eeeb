"""True, false and unknown: conditions follow SQL's three-valued logic.

A comparison with a missing value is unknown, not false. ``where`` keeps only the rows that
are true; mean(cond), the share true, skips the unknown rows (days before a 200-day SMA
exists are neither above nor below it); count(cond) counts the true ones. A condition is a
plain numpy bool Series when every value is known, a nullable "boolean" Series otherwise, so
the common case stays on numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pandas.core.ops.mask_ops import kleene_and, kleene_or


def condition(out: Any, unknown: Any, index: pd.Index | None) -> Any:
    """The result of a comparison, ``unknown`` where either side was missing."""
    if index is None:  # two scalars: only an aggregate's missing value can be unknown here
        return bool(out) and not bool(unknown)
    if np.any(unknown):
        mask = np.broadcast_to(unknown, np.shape(out)).copy()
        return pd.Series(pd.arrays.BooleanArray(np.asarray(out, dtype=bool), mask), index=index)
    return pd.Series(out, index=index)


def has_unknowns(value: Any) -> bool:
    return isinstance(value, pd.Series) and isinstance(value.dtype, pd.BooleanDtype)


def is_condition(value: Any) -> bool:
    """Whether a Series holds true/false, with or without unknowns."""
    return isinstance(value, pd.Series) and (value.dtype == bool or has_unknowns(value))


def kleene(value: Any) -> Any:
    """A condition as pandas' nullable booleans, whose & | ~ are three-valued."""
    if isinstance(value, pd.Series):
        return value if has_unknowns(value) else value.astype("boolean")
    return value


def plain_if_known(series: pd.Series) -> pd.Series:
    if isinstance(series.dtype, pd.BooleanDtype):
        values, unknown = _parts(series)
        if not unknown.any():  # as astype(bool): a copy of the values, same index and name
            return pd.Series(values.copy(), index=series.index, name=series.name, copy=False)
    return series


def known_true(series: pd.Series) -> np.ndarray:
    """A condition's rows that are true, unknown as false: ``fillna(False)`` without the
    Series pandas builds for it, on every where."""
    if isinstance(series.dtype, pd.BooleanDtype):
        values, unknown = _parts(series)
        return values & ~unknown
    return series.to_numpy(dtype=bool)


def kleene_logical(op: str, left: pd.Series, right: pd.Series) -> pd.Series:
    """``left and right`` (``or``) of two conditions on one index, three-valued as pandas'
    nullable booleans' & and | are (its own Kleene functions), without the Series
    arithmetic around them; plain when no value is unknown, as ``plain_if_known`` makes it."""
    a, a_unknown = _parts(left)
    b, b_unknown = _parts(right)
    combine = kleene_and if op == "and" else kleene_or
    values, unknown = combine(a, b, a_unknown, b_unknown)
    name = left.name if left.name == right.name else None  # as pandas names an operation
    if unknown.any():
        return pd.Series(pd.arrays.BooleanArray(values, unknown), index=left.index, name=name)
    return pd.Series(values, index=left.index, name=name, copy=False)


def _parts(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A condition's values and its unknown rows, as numpy arrays (read, not copied)."""
    array = series.array
    if isinstance(array, pd.arrays.BooleanArray):
        return array._data, array._mask  # no public view of them without a copy
    values = series.to_numpy(dtype=bool)
    return values, np.zeros(len(values), dtype=bool)


def as_known(series: pd.Series) -> pd.Series:
    """A condition for what only takes true or false (if, streak, rolling_count): unknown
    counts as false there, as in SQL's CASE WHEN."""
    if isinstance(series.dtype, pd.BooleanDtype):
        return series.fillna(False).astype(bool)
    return series


def as_numbers(series: pd.Series) -> pd.Series:
    """A condition as 1/0 for arithmetic and averages; unknown stays missing (NaN)."""
    if isinstance(series.dtype, pd.BooleanDtype):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        return pd.Series(values, index=series.index)
    return series
