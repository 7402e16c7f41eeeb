"""A limit that cuts through a tie: "which hour most often makes the high", sorted by days
and cut to 1, named 09:30 with 6 days where 15:30 had 6 too. The row kept is only the first
in the order the rows were in; the answer has to say that others tie with it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from barb.summary_text import value_text

# Rows named in the warning; more are counted.
NAMED_ROWS = 3


def tie_at_limit(
    ordered: pd.DataFrame, limit: int | None, name: Callable[[int], str] | None = None
) -> list[str]:
    """``ordered``: the sort keys of every row, in sort order, before the cut; ``name``
    names the row at a position in that order (by its group keys, its bar label)."""
    if limit is None or limit <= 0 or len(ordered) <= limit or ordered.empty:
        return []
    edge = ordered.iloc[limit - 1]
    if edge.isna().any():
        return []
    same = (ordered == edge).all(axis=1).to_numpy()
    if not same[limit]:
        return []
    tied = np.flatnonzero(same)
    kept, left = tied[tied < limit], tied[tied >= limit]
    value = ", ".join(f"{name} = {value_text(edge[name])}" for name in ordered.columns)
    rows = "row" if len(tied) == 1 else "rows"
    text = f"limit {limit} cuts through a tie: {len(tied)} {rows} have {value}"
    if name is not None:
        text += f" ({_names(name, tied)})"
    return [
        f"{text}, and {len(kept)} of them {'is' if len(kept) == 1 else 'are'} kept, the first "
        f"in the rows' order; say it is a tie, or raise the limit to {limit + len(left)}."
    ]


def _names(name: Callable[[int], str], positions: np.ndarray) -> str:
    named = [name(int(i)) for i in positions[:NAMED_ROWS]]
    more = len(positions) - len(named)
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")
