"""A count of the first stage's rows by what each one picked lists the outcomes none picked.

"Which hour of CL's ETH makes the day's low" (``arg_min(time(), low)`` by date, then
``count()`` by that hour) listed the 20 hours some day's low fell in over 3 months. 13:00,
20:00 and 21:00 made it on none of the 64 days, so they were no group at all: the noise
warning named '00:00' (1 of 64) the fewest, the chart drew ▼ at 1 day, and a sort ascending
would have answered "which hour least often" with 00:00 (p48d M1). A trader asking where the
low never forms wants those hours, at 0.

An arg_max or arg_min can pick any value its first argument takes on the rows it picks from:
those values over the first stage's rows kept are the outcomes. The second stage lists each
one no row picked with a count of 0, when it counts rows alone (``count()``: a mean over no
row is no number) by that one column, its where (if any) not on that column (``low_hour >=
'09:00'`` leaves the night out on purpose), and the outcomes are few (``MAX_OUTCOMES``: hours,
weekdays, months; not the 1,380 minutes of a day, whose empty ones would bury the table).

``possible_outcomes(first, then, kept, picked, values)`` gives ``{"low_hour": ['00:00',
'01:00', …]}``; ``with_outcomes(table, key, outcomes, counts)`` adds the rows for those not
in the table.

Cost: a calendar or clock call (time(), dayname()) is read off the first row of each trading
date and of each minute of the day, 6,035 of NQ's 6.4 million minute bars, in 40-70 ms (over
all of them dayname() took 0.6 s); nothing is evaluated when the first stage's column
already holds more values than ``MAX_OUTCOMES`` (the minute of each day's low).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from barb.caveats.groups import MAX_KEY_VALUES
from barb.frames import MINUTE_OF_DAY
from barb.lineage import nodes, through_map
from barb.planning import StagePlan
from barb.script import ast
from barb.script.library import lookup

# At most this many outcomes are listed (a month's days, 31); beyond, the key is a date or
# a minute, whose empty values are no answer.
MAX_OUTCOMES = MAX_KEY_VALUES
# The aggregates whose picked value is a row's own: what the row could have given.
_PICKS = frozenset({"arg_max", "arg_min"})


def possible_outcomes(
    first: StagePlan,
    then: StagePlan,
    kept: pd.DataFrame,
    picked: pd.Series | None,
    values: Callable[[ast.Expr, pd.DataFrame], Any],
) -> dict[str, list[Any]]:
    """The second stage's one group key, when it is a first-stage column an arg_max or
    arg_min picked and the stage counts rows alone, with every value the picked expression
    takes over the first stage's rows ``kept`` (``values``: an expression evaluated over a
    frame), in key order; else {}. ``picked``: that column as the first stage gave it, whose
    own values are already too many for a minute's key (no evaluation, then)."""
    if first.shape != "grouped" or len(then.group_keys) != 1 or not then.select:
        return {}
    if not all(_counts_rows(item.expr) for item in then.select):
        return {}
    name, key = then.group_keys[0]
    if not isinstance(key, ast.Column) or key.name != name or name in dict(then.map_exprs):
        return {}
    if then.where is not None and _reads(then.where, name, dict(then.map_exprs)):
        return {}  # "low_hour >= '09:00'" leaves the night hours out on purpose
    if picked is not None and picked.nunique() > MAX_OUTCOMES:
        return {}
    item = next((s for s in first.select if s.name == name), None)
    if item is None:
        return {}
    call = through_map(item.expr, dict(first.map_exprs))
    if not (isinstance(call, ast.Call) and call.name.lower() in _PICKS and call.args):
        return {}
    expr = call.args[0]
    found = values(expr, _calendar_rows(kept) if _of_the_calendar(expr) else kept)
    if not isinstance(found, pd.Series):
        return {}
    uniques = pd.Series(pd.unique(found.dropna()))
    if uniques.empty or len(uniques) > MAX_OUTCOMES:
        return {}
    if isinstance(found.dtype, pd.CategoricalDtype):  # Mon before Tue, as grouping sorts
        order = found.cat.categories.get_indexer(uniques)
        return {name: uniques.iloc[np.argsort(order)].tolist()}
    return {name: uniques.sort_values().tolist()}


def _of_the_calendar(expr: ast.Expr) -> bool:
    """A calendar or clock call of no argument (time(), dayname(), month()): its value is
    its row's date's or its time of day's alone."""
    if not isinstance(expr, ast.Call) or expr.args:
        return False
    spec = lookup(expr.name)
    return spec is not None and spec.category == "time"


def _calendar_rows(kept: pd.DataFrame) -> pd.DataFrame:
    """The first row of each trading date and of each minute of the day, in time order:
    every value a call ``_of_the_calendar`` takes over ``kept``, read off a few thousand
    rows where dayname() over NQ's 6.4 million minute bars took 0.6 s."""
    if "trading_date" not in kept.columns or len(kept) < 2:
        return kept
    dates = kept["trading_date"].to_numpy()
    firsts = np.flatnonzero(np.r_[True, dates[1:] != dates[:-1]])
    if MINUTE_OF_DAY in kept.columns:
        minutes = kept[MINUTE_OF_DAY].to_numpy()
        first_at = np.full(int(minutes.max()) + 1, -1, dtype=np.int64)
        first_at[minutes[::-1]] = np.arange(len(minutes))[::-1]  # the last write, the first
        firsts = np.union1d(firsts, first_at[first_at >= 0])
    return kept.iloc[firsts]


def with_outcomes(
    table: pd.DataFrame, key: str, outcomes: Sequence[Any], counts: Sequence[str]
) -> tuple[pd.DataFrame, np.ndarray]:
    """``table`` (grouped by ``key``, in key order) with a row of 0 in each ``counts``
    column for every outcome it does not hold, all in key order; and each row's group in
    the table given (-1: an added row)."""
    held = set(table[key].tolist())
    missing = [value for value in outcomes if value not in held]
    groups = np.arange(len(table))
    if not missing:
        return table, groups
    column = table[key]
    if isinstance(column.dtype, pd.CategoricalDtype):
        added_keys: Any = pd.Categorical(missing, categories=column.cat.categories)
    else:
        added_keys = pd.Series(missing, dtype=column.dtype)
    added = pd.DataFrame({key: added_keys})
    for name in counts:
        added[name] = np.zeros(len(missing), dtype=table[name].dtype)
    full = pd.concat([table, added], ignore_index=True)
    place = {value: at for at, value in enumerate(outcomes)}
    # Held keys that are no outcome (none should be) keep their place after the outcomes.
    ranks = [place.get(value, len(place) + at) for at, value in enumerate(full[key].tolist())]
    order = np.argsort(ranks, kind="stable")
    groups = np.concatenate([groups, np.full(len(missing), -1)])[order]
    return full.iloc[order].reset_index(drop=True), groups


def listed_index(table: pd.DataFrame, key: str) -> pd.Index:
    """The groups ``table`` lists, as the stage's answers index them: the counted ones and
    those ``with_outcomes`` added."""
    return pd.Index(table[key].tolist(), name=key)


def _reads(expr: ast.Expr, column: str, mapped: Mapping[str, ast.Expr]) -> bool:
    """Whether ``expr`` reads ``column``, through the map's columns it names."""
    return any(isinstance(n, ast.Column) and n.name == column for n in nodes(expr, mapped))


def _counts_rows(expr: ast.Expr) -> bool:
    return isinstance(expr, ast.Call) and expr.name.lower() == "count" and not expr.args


def outcomes_of(outcomes: Mapping[str, Sequence[Any]] | None, by: Sequence[str]) -> list[Any]:
    """The outcomes of the one key ``by`` names; [] when there are none."""
    if not outcomes or len(by) != 1:
        return []
    return list(outcomes.get(by[0], []))
