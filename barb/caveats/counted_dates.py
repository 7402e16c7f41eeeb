"""count(date()) on intraday bars counts bars, not dates.

count(col) counts the rows where col has a value (the reference says so), and every
intraday bar has a date: "how many trading days in the week of 2024-03-11" written as
``count(date())`` on NQ's 5m RTH bars read 450, the week's 5 days of 90 bars, with nothing
said (p45d #4), and a model reports 450 days. Said with the dates the rows hold and the form
that counts them: a first stage by date() and a count of its rows in a then stage (not
count(date() != prev(date())), which misses the data's first day: it has no bar before).
"""

from __future__ import annotations

import pandas as pd

from barb.caveats.lookback import is_date
from barb.lineage import through_map
from barb.planning import Plan
from barb.script import ast


def counted_dates_caveat(plan: Plan, kept: pd.DataFrame | None) -> list[str]:
    """The warning for a first stage's count(date()) (or of a map name for it) over
    intraday bars ``kept``; else none."""
    stage = plan.first
    if not plan.timeframe.intraday or kept is None or "trading_date" not in kept.columns:
        return []
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    names = [
        item.name
        for item in stage.select
        if isinstance(item.expr, ast.Call)
        and item.expr.name.lower() == "count"
        and len(item.expr.args) == 1
        and is_date(through_map(item.expr.args[0], mapped))
    ]
    if not names:
        return []
    dates = kept["trading_date"].nunique()
    bars = f"{len(kept):,} {plan.timeframe.name} bars"
    return [
        f"{names[0]} counts the {bars} kept, each of which has a date, not the "
        f"{dates:,} trading {'date' if dates == 1 else 'dates'} they fall on: "
        '"group_by": "date()" in the first stage and "then": {"select": "count() as days"} '
        "counts the dates."
    ]
