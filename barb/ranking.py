"""A stage's sort, applied and said: one order for the table a stage returns and for the
warnings that rank its groups again (the part group or the short bar that a ranking puts
first), so that what a warning calls "first" is the table's first."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from barb.script.query import SortKey


def in_sort_order(table: pd.DataFrame, sort: Sequence[SortKey]) -> pd.DataFrame:
    """``table`` ordered by ``sort``: stable, so equal keys keep their order, empty values
    last whichever the direction."""
    return table.sort_values(
        [k.column for k in sort],
        ascending=[not k.descending for k in sort],
        kind="stable",
        na_position="last",
    )


def order_text(sort: Sequence[SortKey]) -> str:
    """``corr ascending, days descending``."""
    return ", ".join(f"{k.column} {'descending' if k.descending else 'ascending'}" for k in sort)
