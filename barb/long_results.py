"""The rows kept of a result too long to keep whole: the first ``max_table_rows`` for the
table, its CSV and the model's preview, and for the chart, rows over the whole period.

Cut to its first 50,000 rows, an hourly ETH listing over all data (106,436 bars) was drawn
as 2008 to 2016 under the headline "range last: 28 points (2016-06-20 09:00)", and the
histogram behind mean(range) of 5-minute bars (410,595) was 2008's and 2009's ranges, with
the mean of all eighteen years far to their right. The chart now draws:

- of a table of bars, as many rows spread evenly over all of it, the first and the last
  among them, and every numeric column's highest and lowest row: a line over 18 years looks
  the same through half its points, and the headline's highest and lowest are the table's
  own;
- of groups, every one: the chart thins them itself and counts the ties its headline names
  over all of them (``barb.charts.many_groups``);
- behind a number, every row: its charts count them (per year, in a histogram's bins), and a
  sample would count an eighth of them. They are built once, for the CSV's first rows and the
  chart alike.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.result import RowsBuilder


def spread_rows(table: pd.DataFrame, count: int) -> pd.DataFrame:
    """About ``count`` of ``table``'s rows, in its order: evenly spaced from the first to the
    last, with the highest and lowest row of each numeric column among them."""
    if len(table) <= count:
        return table
    extremes = []
    for name in table.columns:
        column = table[name]
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            values = pd.to_numeric(column, errors="coerce").to_numpy(dtype="float64")
            if np.isfinite(values).any():
                extremes += [int(np.nanargmin(values)), int(np.nanargmax(values))]
    even = np.linspace(0, len(table) - 1, max(2, count - len(extremes))).round().astype(np.int64)
    keep = np.union1d(even, np.asarray(extremes, dtype=np.int64))
    return table.iloc[keep].reset_index(drop=True)


class BuiltOnce:
    """The rows behind a number, built when first read and shared by their readers: the
    first ``limit`` of them (the CSV) and all of them (the chart)."""

    def __init__(self, build: RowsBuilder, limit: int) -> None:
        self._build: RowsBuilder | None = build
        self._rows: pd.DataFrame | None = None
        self.limit = limit

    def _built(self) -> pd.DataFrame | None:
        if self._build is not None:
            self._rows, self._build = self._build(), None
        return self._rows

    def first(self) -> pd.DataFrame | None:
        rows = self._built()
        return None if rows is None else rows.iloc[: self.limit]

    def every(self) -> pd.DataFrame | None:
        return self._built()
