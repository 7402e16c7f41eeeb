"""A gap without a size is every day.

gap_up(), gap_down() and gap_filled() compare the open with the close before, and a session
almost never opens exactly there: on NQ's RTH days of the last 12 months "gap_up() or
gap_down()" held on 258 of 258, 25 of them under 0.1% of the price, which fill almost at
once. "How often do gaps fill" as count(gap_filled()) / count(gap_up() or gap_down()) read
58.5%; over gaps above 0.2% it is 51.0%. The concept text says so; the result did not. Said
on daily bars when the stage reads those patterns and nothing in it gives the gap a size (a
comparison of an expression of the open with a number other than 0, or full_gap_up()/
full_gap_down(), which gap beyond the bar before).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.lineage import nodes
from barb.planning import Plan, StagePlan
from barb.script import ast

# The patterns that compare the open with the close before and nothing more.
SIZELESS = frozenset({"gap_up", "gap_down", "gap_filled"})
# Patterns whose gap has a size: beyond the bar before's range.
SIZED = frozenset({"full_gap_up", "full_gap_down"})
# A gap under this share of the price is said as the small ones (0.1%).
SMALL = 0.001
# The share of the rows opening away from the close before from which "every day" is said.
EVERY_DAY = 0.95


def sizeless_gap_caveat(plan: Plan, frame: pd.DataFrame, given: np.ndarray) -> list[str]:
    """The warning for a stage that counts gaps without a size, over the rows ``given`` to
    its where (the period's rows of ``frame``, which holds the bars before them too)."""
    stage = plan.first
    if plan.timeframe.name != "daily" or not stage.calls & SIZELESS or stage.calls & SIZED:
        return []
    if _sized(stage) or not given.any() or not {"open", "close"} <= set(frame.columns):
        return []
    opens = frame["open"].to_numpy(dtype=np.float64)
    before = np.roll(frame["close"].to_numpy(dtype=np.float64), 1)
    before[0] = np.nan
    rows = given & ~np.isnan(before) & ~np.isnan(opens)
    total = int(rows.sum())
    if not total:
        return []
    away = rows & (opens != before)
    if away.sum() < EVERY_DAY * total:
        return []
    # Of the gaps: a day opening at the close before is none (NQ's 532 had held its 16).
    small = int((away & (np.abs(opens / before - 1) < SMALL)).sum())
    return [
        f"gap_up(), gap_down() and gap_filled() have no size: {int(away.sum()):,} of the "
        f"{total:,} days open away from the close before, {small:,} of them by under 0.1% "
        "(they fill almost at once), so a count of gaps is a count of days. A trader's gap has "
        "a size: abs(open / prev(close) - 1) * 100 > 0.2 in the where, or full_gap_up() / "
        "full_gap_down() (beyond the bar before's range)."
    ]


def _sized(stage: StagePlan) -> bool:
    """Whether the stage compares something read from the open with a number other than 0
    (abs(gap_pct) > 0.2, open > prev(close) * 1.005): the gap has a size."""
    mapped = dict(stage.map_exprs)
    for expr in stage.expressions:
        for node in nodes(expr, mapped):
            if isinstance(node, ast.Compare) and _reads_open_against_number(node, mapped):
                return True
    return False


def _reads_open_against_number(compare: ast.Compare, mapped: dict[str, ast.Expr]) -> bool:
    for side, other in ((compare.left, compare.right), (compare.right, compare.left)):
        value = ast.literal_value(other)
        if isinstance(value, bool) or not isinstance(value, int | float) or value == 0:
            continue
        if any(isinstance(n, ast.Column) and n.name == "open" for n in nodes(side, mapped)):
            return True
    return False
