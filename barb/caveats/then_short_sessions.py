"""Short sessions among the daily rows a then stage aggregates.

A backtest lists its trades as daily rows and computes over them in a then stage
(backtest_basics). A plain table of those rows names its holiday and early-close sessions,
whose close - open is a part day's (``short_sessions_caveat``); aggregated by the then stage
they were said nowhere. ES's cash-open-to-close longs after a gap down of 0.5% or more,
2023-2025, read total $15,900 and expectancy $134.75 over 118 trades, 3 of them US stock
holidays (2023-01-16, 2023-02-20, 2024-05-27: the futures closed 13:00, the stock market
shut); without them the total is $11,400 (p48j q22). Said when the answer without them is
another (``barb.caveats.moved_values``, the then stage run again without them), with its
values then and the first stage's where that leaves them out. Intraday bars grouped into
days are ``barb.caveats.short_day_groups``' case.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from barb.caveats.moved_values import moved_values
from barb.caveats.short_sessions import SHORT_MARKS, listed_sizes, short_session_names
from barb.planning import Plan
from barb.script.context import EvalContext
from barb.short_days import short_days
from barb.stage_output import StageOutput
from barb.summary_text import listed_text

LEAVE_OUT = "not holiday() and not early_close()"
# What a warning said before says when it offers to leave the holidays out already.
SAID_BEFORE = '"where": "not holiday()'


def then_short_sessions_caveat(
    plan: Plan,
    first: StageOutput,
    then: StageOutput,
    ctx: EvalContext,
    then_without: Callable[[np.ndarray], StageOutput],
    said: Sequence[str] = (),
) -> list[str]:
    """The short sessions among the first stage's daily rows (``first.table``) that the then
    stage kept and aggregated (``then``), when a column of them it reads is a part day's
    (close - open, range, volume) and its answer moves without them: '3 of the then stage's
    118 rows are short sessions: 2023-01-16 (holiday, closed 13:00), …; their pnl is a part
    day's; without them expectancy is 99.13 and total is 11400. The first stage's "where":
    "… and not holiday() and not early_close()" leaves them out.' Nothing when the query
    reads holiday() or early_close() (it chose about them), a warning ``said`` offers not
    holiday() already (CL's Monday holidays, said as its own days), or the then stage lists
    rows (they are named there)."""
    stage = plan.then
    if plan.timeframe.name != "daily" or stage is None or stage.shape == "table":
        return []
    if set(SHORT_MARKS) & (plan.first.calls | stage.calls):
        return []
    if any(SAID_BEFORE in text for text in said):
        return []
    table = first.table
    if table is None or "date" not in table.columns or not len(table):
        return []
    sizes = [name for name in listed_sizes(plan.first, changes=False) if name in stage.names_read]
    if not sizes:
        return []
    days = np.asarray(table["date"].to_numpy(), dtype="datetime64[D]")
    short = short_days(plan.dataset, plan.session, days)
    kept = then.passed if then.passed is not None else np.ones(len(days), dtype=bool)
    used = short & kept
    if not used.any():
        return []
    moved = moved_values(stage, ctx, then, then_without(short))
    if not moved:
        return []
    n = int(used.sum())
    are = "is a short session" if n == 1 else "are short sessions"
    their = f"{listed_text(sizes)} {'is' if len(sizes) == 1 else 'are'}"
    form = f"… and {LEAVE_OUT}" if plan.first.where is not None else LEAVE_OUT
    return [
        f"{n:,} of the then stage's {int(kept.sum()):,} rows {are}: "
        f"{short_session_names(plan.dataset, days[used])}; {'its' if n == 1 else 'their'} {their} "
        "a part day's; "
        f'without them {listed_text(moved)}. The first stage\'s "where": "{form}" leaves '
        "them out."
    ]
