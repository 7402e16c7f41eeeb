"""What prev() and rolling windows read from the day before, on intraday bars of a whole day.

The mirror of next() reading the next morning (barb.lookahead_caveats): "a 5m bar with 3x the
volume of the previous 20" as volume > 3 * rolling_mean(prev(volume), 20) on NQ's RTH bars
read each morning's first bars against yesterday's quiet 15:25-16:55 bars, so 72% of the
1,051 "spikes" of 2024-2025 were 09:30-09:40. Said with the number of kept rows whose window
reaches the date before, and the where that keeps it within the day. A part of the day (the
first hour, a window) chains every day to the one before and is said so by
barb.session_caveats instead, once for every function reading other bars.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.script.library import lookup
from barb.script.reach import own_reach
from barb.session_caveats import part_of_the_day
from barb.sessions import MINUTES_PER_DAY

# Windows of a fixed number of bars. A recursive smoother (ema, rsi) never ends at a bar
# count, and its chaining across days is the one every intraday chart draws.
_WINDOW_CATEGORIES = frozenset({"lag", "window"})
_RECURSIVE = frozenset({"ema"})

# The farthest reach back of a column or call made of prev() and rolling windows, as written.
Window = tuple[int, str]


def lookback_caveat(plan: Plan, frame: pd.DataFrame, keep: np.ndarray) -> list[str]:
    """Intraday rows kept whose prev() or rolling window reads an earlier trading date, on a
    session that holds the whole day (RTH, ETH, CASH, a window close to RTH).

    ``frame`` is the first stage's rows, with the bars read before the period: a kept row's
    window is there whole, so the previous date it reaches is the data's, not the period's
    edge."""
    if not plan.timeframe.intraday or part_of_the_day(plan) is not None:
        return []
    if "trading_date" not in frame.columns:
        return []
    window = _farthest_window(plan.first)
    if window is None:
        return []
    back, text = window
    dates = frame["trading_date"].to_numpy()
    earlier = np.zeros(len(dates), dtype=bool)
    if len(dates) > back:
        earlier[back:] = dates[:-back] != dates[back:]
    crossing = int(np.count_nonzero(earlier & keep))
    if not crossing:
        return []
    kept = int(np.count_nonzero(keep))
    first = _first_bar(plan)
    return [
        f"{text} reads an earlier trading date for {crossing:,} of the {kept:,} rows kept (the "
        "day's first bars, read with the previous day's last ones); "
        f'"where": "… and prev(date(), {back}) == date()" keeps it within the day. To compare '
        "a bar with the same time on earlier days, rolling_mean(x, n, 'time') reads the last "
        f"n days at its time (today's included), or use daily bars of that window "
        f'("session": "{first}", "from": "daily").'
    ]


def _first_bar(plan: Plan) -> str:
    """The session's first bar as a window ("09:30-09:35" for 5m RTH bars of NQ)."""
    start = plan.dataset.instrument.session(plan.session).start_minute
    end = (start + (plan.timeframe.minutes or 0)) % MINUTES_PER_DAY
    return f"{start // 60:02d}:{start % 60:02d}-{end // 60:02d}:{end % 60:02d}"


def _farthest_window(stage: StagePlan) -> Window | None:
    """The window reaching farthest back among what keeps the rows and what the stage answers
    with (its where, group keys and select; with no select, its map columns)."""
    columns: dict[str, Window] = {}
    for name, expr in stage.map_exprs:  # a map entry reads the entries before it
        found = _window(expr, columns)
        if found is not None:
            columns[name] = found
    exprs = [e for _, e in stage.group_keys]
    exprs += [item.expr for item in stage.select] or [e for _, e in stage.map_exprs]
    if stage.where is not None:
        exprs.append(stage.where)
    found = [w for w in (_window(e, columns) for e in exprs) if w is not None]
    return max(found, key=lambda w: w[0], default=None)


def _window(expr: ast.Node, columns: dict[str, Window]) -> Window | None:
    """How far back ``expr`` reads through prev() and rolling windows (a window of a lag adds
    them: rolling_mean(prev(volume), 20) reads 20 bars back), and the outermost such call."""
    if isinstance(expr, ast.Column):
        return columns.get(expr.name)
    inner = [w for w in (_window(c, columns) for c in expr.children()) if w is not None]
    deepest = max(inner, key=lambda w: w[0], default=None)
    if not isinstance(expr, ast.Call):
        return deepest
    spec = lookup(expr.name)
    if spec is not None and spec.body is not None and not expr.args:
        body = _window(spec.body, {})  # a named pattern reads what its body reads
        return None if body is None else (body[0], expr.to_text())
    if spec is None or spec.category not in _WINDOW_CATEGORIES or spec.name in _RECURSIVE:
        return deepest
    if _by_time_of_day(expr):  # reads its own time on earlier dates, as it means to
        return deepest
    own = own_reach(expr).back or 0
    if not own:
        return deepest
    return own + (deepest[0] if deepest else 0), expr.to_text()


def _by_time_of_day(call: ast.Call) -> bool:
    """rolling_mean(volume, 20, 'time'): a window over the bar's time of day."""
    return any(isinstance(arg, ast.String) and arg.value.lower() == "time" for arg in call.args)
