"""A then stage's map that reads earlier rows starts at the first stage's first row.

The first stage's map reads the bars before the period (``barb.period_rows``): "RSI in 2025"
is RSI over all history, read in 2025, as the reference promises. A then stage's rows are the
first stage's table and nothing before it, so ``rsi(close, 14)`` in then.map over the 258
days of 2025 started from scratch on 2025-01-02: its first 14 rows were empty and it stayed
up to 2.6 points off into February, and "RSI crossing back above 30" gave a fifth, false
cross on 2025-02-13 (30.25, where RSI over all history is 29.27), with no word (p34f #24).

Said when a then.map column reads earlier rows (its reach, ``barb.script.reach``) and the
first stage's rows are consecutive bars (or days, weeks, months, years: group_by date(),
week(), [year(), month()], year()) that begin after the data does, with how many of its
first rows are empty, whether it differs after them (a recursive smoother never forgets its
start; a finite window does), and where to compute it. Not said of what starts
at the rows it is given in either stage: a running total, high or rank starts at the
period's first bar there too, so the backtest's drawdown from cummax(equity) in then was
told it "differs from all history" while the first stage's map gave the same -6029.5
(p35c M1); a count since an event (streak(pnl < 0): the losing trades in a row) counts the
runs among the rows, as a backtest's trades are.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from barb.lineage import through_map
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.script.reach import map_reach

# A first stage grouped by this key makes one row per trading date, in time order.
_DAY_KEY = "date"
# A smoother's reach runs until its seed weighs 1e-12 (``barb.script.warmup``); it weighs
# 1e-6, the engine's promise against TA-Lib, half as many bars after its first value.
_VISIBLE_SHARE = 0.5


def then_history_caveat(
    plan: Plan,
    rows: pd.DataFrame,
    kept: pd.DataFrame | None,
    passed: np.ndarray | None,
    dates: Callable[[], np.ndarray] | None,
    used: np.ndarray | None = None,
) -> list[str]:
    """The warning for the first then.map column that reads earlier rows, when the first
    stage's rows (``kept``: its bars kept; ``passed``: which of the bars it read they are)
    begin after the data's first trading date (``dates()[0]``). ``rows``: the then stage's
    rows with its map's columns; ``used``: those its where kept (None: all). Not said when
    they begin after the warm-up: a period widened and cut again in then.where."""
    then, first = plan.then, plan.first
    if then is None or not then.map_exprs or kept is None or not len(kept) or dates is None:
        return []
    advice = _advice(first, passed, kept)
    if advice is None:
        return []
    begins = pd.Timestamp(kept["trading_date"].iloc[0])
    if begins <= pd.Timestamp(np.asarray(dates())[0]):
        return []
    for name, reach in map_reach(then.map_exprs, values=True).items():
        if reach.back == 0 or name not in rows.columns:
            continue
        expr = dict(then.map_exprs)[name]
        empty = pd.isna(rows[name]).to_numpy()
        known = np.flatnonzero(~empty)
        lead = int(known[0]) if len(known) else len(empty)
        said = {0: "", 1: "its first row is empty"}.get(lead, f"its first {lead:,} rows are empty")
        if reach.back is None or reach.back > lead:  # a smoother remembers its start
            after = "the values after them" if lead else "its values"
            said += f"{' and ' if lead else ''}{after} differ from those over all history"
        if not said or _after_warm_up(used, lead, reach.back):
            continue
        return [
            f"{expr.to_text()} in then.map ({name}) runs over the first stage's "
            f"{len(rows):,} rows only, from {begins:%Y-%m-%d}, not over the bars before "
            f"them: {said}; {advice}."
        ]
    return []


def _after_warm_up(used: np.ndarray | None, lead: int, back: int | None) -> bool:
    """Whether the rows ``used`` begin after the first ``lead`` empty ones and the visible
    part of the warm-up after them (``back`` bars to forget the start; None: never)."""
    at = np.flatnonzero(used) if used is not None else np.arange(1)
    if back is None or not len(at):
        return not len(at)
    return bool(at[0] >= max(lead, lead + _VISIBLE_SHARE * (back - lead)))


def _advice(first: StagePlan, passed: np.ndarray | None, kept: pd.DataFrame) -> str | None:
    """Where the column reads all history, when the first stage's rows are consecutive bars
    in time order (a period, or a where that cuts only its start) or one row per day; None
    otherwise: prev() over the days a where picked (the days between signals) reads them on
    purpose."""
    if first.sort or first.limit is not None:
        return None
    if first.shape == "table":
        at = np.flatnonzero(passed) if passed is not None else np.arange(0)
        if not len(at) or at[-1] - at[0] + 1 != len(at):
            return None
        return "compute it in the first stage's map, where it reads all history"
    unit = _unit_rows(first, kept)
    if unit is None:
        return None
    advice = (
        f"run the first stage over the {unit} before them too and keep the ones asked for "
        "with then's where"
    )
    bars = _BARS.get(unit)
    return advice if bars is None else f'{advice}, or use {bars} bars ("from": "{bars}")'


# A first stage grouped by one of these keys makes one row per such unit, in time order:
# the rows a then stage reads as consecutive bars. week(): "weekly RSI" as each week's last
# close, RSI'd in then.map, started from scratch at the period's first week (p f49e).
_UNIT_KEYS = {("date",): "days", ("week",): "weeks", ("year",): "years"}
_UNIT_KEYS |= {("year", "month"): "months", ("year", "quarter"): "quarters"}
# Keys that name a unit only within one calendar year: month() over 2024 is its 12 months in
# order ("average monthly return in 2024" lost January's to prev() with no word), over two
# years each month's number holds two months.
_IN_A_YEAR = {("month",): "months", ("quarter",): "quarters"}
# The bars whose map reads all history for the same rows: a week's last close is the weekly
# bar's close.
_BARS = {"weeks": "weekly", "months": "monthly", "quarters": "quarterly", "years": "yearly"}


def _unit_rows(first: StagePlan, kept: pd.DataFrame) -> str | None:
    """What the first stage's rows are when its group keys are date(), week(), year(),
    year() and month() (or quarter()), or month() (quarter()) over one calendar year's bars
    ``kept`` (directly or through its map's names): "days", "weeks"…; None otherwise."""
    if first.shape != "grouped":
        return None
    mapped = dict(first.map_exprs)
    names = []
    for _, key in first.group_keys:
        key = through_map(key, mapped)
        if not (isinstance(key, ast.Call) and not key.args):
            return None
        names.append(key.name.lower())
    unit = _UNIT_KEYS.get(tuple(names))
    if unit is not None or tuple(names) not in _IN_A_YEAR:
        return unit
    years = pd.DatetimeIndex(kept["trading_date"]).year
    return _IN_A_YEAR[tuple(names)] if years.min() == years.max() else None


def day_key(first: StagePlan) -> str | None:
    """The name of the first stage's one group key when it is date() (directly or through
    its map's names): its groups are trading dates, one row each in time order, the column
    a then stage reads them by. None for any other grouping."""
    if first.shape != "grouped" or len(first.group_keys) != 1:
        return None
    name, key = first.group_keys[0]
    key = through_map(key, dict(first.map_exprs))
    if not (isinstance(key, ast.Call) and key.name.lower() == _DAY_KEY and not key.args):
        return None
    return name
