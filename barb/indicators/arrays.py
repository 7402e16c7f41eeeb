"""Small conversions shared by the indicators: Series in, float arrays inside, Series out."""

from __future__ import annotations

import numpy as np
import pandas as pd


def check_period(name: str, value: int, minimum: int = 1) -> None:
    """Reject a period that no caller should pass (Barb Script validates its own first)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def as_float_array(x: pd.Series) -> np.ndarray:
    return x.to_numpy(dtype=np.float64, na_value=np.nan)


def to_series(values: np.ndarray, like: pd.Series, name: str) -> pd.Series:
    """Wrap a result on the input's index, named after its Barb Script function."""
    return pd.Series(values, index=like.index, name=name)


def previous(values: np.ndarray) -> np.ndarray:
    """The value one row earlier; NaN on the first row."""
    out = np.empty_like(values)
    out[:1] = np.nan
    out[1:] = values[:-1]
    return out


def first_valid(values: np.ndarray) -> int | None:
    """Position of the first non-NaN value, or None when there is none."""
    valid = np.flatnonzero(~np.isnan(values))
    return int(valid[0]) if len(valid) else None
