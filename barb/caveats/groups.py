"""What a grouped result does not show: groups that ``where`` emptied, and rows in no group.

``where`` drops rows before grouping, so a year in which nothing matched is not a group with
a count of 0: it is not a group at all. "Days with ADX above 40, per year", then "the mean per
year", divides by the years that had some (14 of 18) and reads 25.9 instead of 20.1. And a key
with no value (``prev()`` of the data's first bar) puts its row in no group. Both are said.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from barb.lineage import inputs
from barb.script.ast import Column, Expr
from barb.summary_text import named_text

# Keys with more values than this (dates, minutes) are filters' natural output: "FOMC days
# by date" lists the FOMC days, not the 4,500 dates without one.
MAX_KEY_VALUES = 31
SHOWN_VALUES = 8
SHOWN_DAYS = 3
# Rows spaced evenly through a long frame that tell a key of many values (``_many_values``).
SPACED_ROWS = 4096


def empty_groups(
    frame: pd.DataFrame,
    keys: list[tuple[str, Expr]],
    period_rows: np.ndarray,
    table: pd.DataFrame,
    where: Expr | None,
    mapped: Mapping[str, Expr],
    events: Sequence[str] = (),
    calendar: Callable[[], np.ndarray | None] | None = None,
) -> list[str]:
    """Groups the period has but ``where`` emptied, for each key the condition reads nothing
    of: ``where year() >= 2020`` by year(), or a where on the time of day by a slot of the
    day, drops those groups on purpose. So does a where on a joined event (``events``, their
    columns ``fomc``, ``fomc_minutes``): the hour after each FOMC statement by date() has
    no row on the other days of the month, which are not missing data (p33e Q13).

    Nor is the group holding the data's last bar said where the where's calendar part
    (``calendar``: the rows it keeps over ``frame``, None when it has none) keeps none of
    its rows: December of 2026, the data ending 2026-01-07, has not come, and "No row
    passed where in 1 year() group of the period (2026)" under December's up days of every
    year read as 2026's 0 (p48d C6)."""
    if where is None:
        return []
    condition = inputs(where, mapped)
    if any(name == event or name.startswith(f"{event}_") for name in condition for event in events):
        return []
    warnings = []
    for name, expr in keys:
        if name not in table.columns or condition & inputs(expr, mapped):
            continue
        column = frame[name]
        if _many_values(column.to_numpy(), period_rows):
            continue
        values = pd.Index(pd.unique(column.to_numpy()[period_rows])).dropna()
        if values.empty or len(values) > MAX_KEY_VALUES:
            continue
        # values.difference(…, sort=False): the period's in their order, less the table's
        # (a tenth of its cost on a few keys: no hashing of both into new indexes).
        missing = values[~values.isin(table[name].to_numpy())]
        if len(missing) and period_rows[-1] and missing.isin([column.iloc[-1]]).any():
            kept = calendar() if calendar is not None else None
            last = (column == column.iloc[-1]).to_numpy(dtype=bool) & period_rows
            if kept is not None and not (kept & last).any():  # not come yet
                missing = missing[~missing.isin([column.iloc[-1]])]
        if len(missing) and len(missing) < len(values):
            if isinstance(column.dtype, pd.CategoricalDtype):  # Mon before Tue
                order = column.cat.categories.get_indexer(missing)
                missing = missing[np.argsort(order)]
            else:
                missing = missing.sort_values()
            warnings.append(_missing_text(name, expr, missing.tolist()))
    return warnings


def _many_values(values: np.ndarray, period_rows: np.ndarray) -> bool:
    """Whether the period's rows hold more than ``MAX_KEY_VALUES`` values, told from evenly
    spaced rows of a long frame: more among some of them means more among all. A date()
    key over 6.4 million 1-minute bars shows 4,000 dates in 4,096 of them, where finding
    its values over every bar cost 20 ms; False when the rows spaced so do not settle it."""
    step = len(values) // SPACED_ROWS
    if step < 2:
        return False  # as few rows as that: read them all
    spaced = np.flatnonzero(period_rows[::step]) * step
    found = pd.Index(pd.unique(values[spaced])).dropna()
    return len(found) > MAX_KEY_VALUES


def keyless_rows(
    frame: pd.DataFrame,
    keys: list[tuple[str, Expr]],
    intraday: bool = False,
    data_dates: Callable[[], np.ndarray] | None = None,
    daily: bool = False,
) -> list[str]:
    """Rows kept whose key has no value: they are in no group. Of several keys, one
    sentence counting each row once: "2 rows with no value for yesterday" and "1 row with
    no value for today", said apart of a Markov table by yesterday and today, read as 3
    rows left out where the data's first day lacked both (p40a #9). Intraday bars that are
    whole days are said as those days ("the 450 bars of 2008-01-02 (the data's first day)"):
    "450 rows … left out", of a table of days, read as 450 days (p43b Q22). Daily bars are
    named by their dates ("The day 2008-01-02 (the data's first day)"), which "1 row with no
    value for up" left to guess (p43f C3). ``data_dates``: every trading date of the data,
    read only to name its first."""
    missing: dict[str, np.ndarray] = {}
    for name, _ in keys:
        # Integers and booleans in numpy's own types cannot be missing: no scan of 6M rows.
        dtype = frame[name].dtype if name in frame.columns else None
        if dtype is None or (isinstance(dtype, np.dtype) and dtype.kind in "iub"):
            continue
        # On the array: a Series' isna() and sum() cost more than the count (0.1 ms of a
        # weekday's 4,600 days, which have no missing key).
        empty = np.asarray(pd.isna(frame[name].array))
        if empty.any():
            missing[name] = empty
    if not missing:
        return []
    left = np.logical_or.reduce(list(missing.values()))
    if intraday:
        days = _whole_days(frame, left, data_dates)
    else:
        days = _daily_rows(frame, left, data_dates) if daily else None
    # One day of daily bars is one row: "has … and is left out: it is".
    one = daily and int(np.count_nonzero(left)) == 1
    have, are, they = ("has", "is", "it") if one else ("have", "are", "they")
    if len(missing) == 1:
        [name] = missing
        if days is not None:
            return [
                f"{days} {have} no value for {name} (n/a) and {are} left out: {they} {are} in "
                "no group."
            ]
        return [f"{_rows(left)} with no value for {name} (n/a) left out: they are in no group."]
    each = ", ".join(f"{name} on {int(np.count_nonzero(e)):,}" for name, e in missing.items())
    if days is not None:
        return [
            f"{days} {have} no value (n/a) for a key and {are} left out: {they} {are} in no "
            f"group (none for {each} of them)."
        ]
    return [
        f"{_rows(left)} with no value (n/a) for a key left out: they are in no group (none "
        f"for {each} of them)."
    ]


def _whole_days(
    frame: pd.DataFrame, empty: np.ndarray, data_dates: Callable[[], np.ndarray] | None
) -> str | None:
    """``empty`` bars as the days they are, when they are every kept bar of their dates:
    "The 450 bars of 2008-01-02 (the data's first day)"; None otherwise."""
    if "trading_date" not in frame.columns:
        return None
    dates = frame["trading_date"].to_numpy()
    days = np.unique(dates[empty])
    if not (np.isin(dates, days) == empty).all():
        return None
    named = _named_days(days, data_dates)
    count = int(np.count_nonzero(empty))
    bars = "bar" if count == 1 else "bars"
    if len(days) == 1:
        return f"The {count:,} {bars} of {named}"
    return f"The {count:,} {bars} of {len(days):,} days, {named},"


def _daily_rows(
    frame: pd.DataFrame, empty: np.ndarray, data_dates: Callable[[], np.ndarray] | None
) -> str | None:
    """``empty`` daily bars by their dates: "The day 2008-01-02 (the data's first day)",
    "14 days, 2008-01-02 (the data's first day), 2008-01-03, 2008-01-04 and 11 more,"."""
    if "trading_date" not in frame.columns:
        return None
    days = frame["trading_date"].to_numpy()[empty]
    named = _named_days(days, data_dates)
    return f"The day {named}" if len(days) == 1 else f"{len(days):,} days, {named},"


def _named_days(days: np.ndarray, data_dates: Callable[[], np.ndarray] | None) -> str:
    """The first few of ``days`` (in order), the data's first day said as such:
    "2008-01-02 (the data's first day), 2008-01-03, 2008-01-04 and 11 more"."""
    known = data_dates() if data_dates is not None else None
    first = known[0] if known is not None and len(known) else None
    named = [
        f"{pd.Timestamp(day):%Y-%m-%d}" + (" (the data's first day)" if day == first else "")
        for day in days[:SHOWN_DAYS]
    ]
    return named_text(named, len(days))


def _rows(empty: np.ndarray) -> str:
    count = int(np.count_nonzero(empty))
    return f"{count:,} {'row' if count == 1 else 'rows'}"


def _missing_text(name: str, expr: Expr, missing: list[object]) -> str:
    shown = named_text([_value_text(v) for v in missing[:SHOWN_VALUES]], len(missing))
    key = name if isinstance(expr, Column) else expr.to_text()
    groups = "group" if len(missing) == 1 else "groups"
    return (
        f"No row passed where in {len(missing)} {key} {groups} of the period ({shown}): "
        "they are not listed, and a second stage over the groups does not count them. "
        "count(cond) without where lists every group, with 0."
    )


def _value_text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, pd.Timestamp):
        return str(value.date())
    return str(value)
