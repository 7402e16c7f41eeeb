"""skew(col) and kurt(col): the shape of a sample, from its central moments.

Both are pandas' estimators (``Series.skew()``, ``Series.kurt()``), the bias-corrected sample
ones that Excel's SKEW and KURT and DuckDB's skewness and kurtosis also give: the adjusted
Fisher-Pearson skewness G1, and the excess kurtosis G2 (0 for a normal distribution, not 3).
Missing values are skipped; skew needs 3 values and kurt 4, fewer give n/a; a sample whose
values are all equal gives 0, as in pandas.

They are written from sums per group (np.bincount through ``RowGroups``) rather than with
pandas' groupby, which has skew but no kurt, so that both work grouped and ungrouped alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from barb.script.context import RowGroups
from barb.script.functions import Param, register

_COL = Param("col")


def _moments(rows: RowGroups, col: pd.Series) -> tuple[Any, Any, Any, Any, Any]:
    """Per group (or for all rows): how many values, the sums of the 2nd, 3rd and 4th powers
    of their deviations from the mean, and whether they are all equal."""
    x = col.to_numpy(dtype=np.float64, na_value=np.nan)
    present = ~np.isnan(x)
    count = np.asarray(rows.reduce(pd.Series(present), "sum"), dtype=np.float64)
    # Centered first (per group): sums of powers of raw prices would lose every digit.
    d = x - rows.spread(rows.reduce(pd.Series(x), "mean"))
    d2 = d * d
    m2, m3, m4 = (
        np.asarray(rows.reduce(pd.Series(v), "sum"), dtype=np.float64)
        for v in (d2, d2 * d, d2 * d2)
    )
    # Equal values, told from the values, not from m2 == 0: a mean off in its last digit
    # leaves m2 at 1e-34 and a skew of rounding noise. (pandas zeroes moments under 1e-14
    # whatever the values' scale: its skew of values near 1e-6 is 0.)
    series = pd.Series(x)
    flat = np.asarray(rows.reduce(series, "max") == rows.reduce(series, "min"))
    return count, m2, m3, m4, flat


def _answer(rows: RowGroups, values: np.ndarray) -> Any:
    return rows.per_group(values) if rows.grouped else float(values)


@register(
    "skew",
    unit="scalar",
    category="aggregate",
    params=(_COL,),
    summary="Sample skewness.",
    example="skew(close / prev(close) - 1)",
    sample=1,
)
def _skew(rows: RowGroups, col: pd.Series) -> Any:
    n, m2, m3, _, flat = _moments(rows, col)
    with np.errstate(all="ignore"):
        g1 = n * np.sqrt(n - 1) / (n - 2) * m3 / m2**1.5
    return _answer(rows, np.where(n < 3, np.nan, np.where(flat, 0.0, g1)))


@register(
    "kurt",
    unit="scalar",
    category="aggregate",
    params=(_COL,),
    summary="Sample excess kurtosis (normal = 0).",
    example="kurt(close / prev(close) - 1)",
    sample=1,
)
def _kurt(rows: RowGroups, col: pd.Series) -> Any:
    n, m2, _, m4, flat = _moments(rows, col)
    with np.errstate(all="ignore"):
        scale = (n - 2) * (n - 3)
        g2 = n * (n + 1) * (n - 1) * m4 / (scale * m2**2) - 3 * (n - 1) ** 2 / scale
    return _answer(rows, np.where(n < 4, np.nan, np.where(flat, 0.0, g2)))
