"""Weekly and longer bars of two joined instruments that end on different days.

A weekly join matches the two markets' bars by the week they stand for, so a week one of
them trades a day longer is joined as it is. NQ's Globex traded a morning session on seven
Good Fridays (2010, 2012, 2015, 2021, 2023-2025; mostly jobs-report days) that CL did not:
those weeks' NQ close is Friday's 09:14 bar, CL's Thursday's, and the weekly returns side
by side span different days, with nothing said (daily bars say the day left out). Said
with the days each side's bar ends on and the name the calendar gives the day one lacks.
So are the periods that begin on different days: CL traded the observed New Year's Mondays
of 2012, 2017 and 2023 that NQ did not, and those weeks' CL open, range and volume hold a
day NQ's lack.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.errors import DataError
from barb.events.rules import closure_name
from barb.frames import period_start
from barb.period_rows import Scope
from barb.planning import Plan
from barb.summary_text import named_text

# Weeks (or months…) named in the sentence before "and N more".
NAMED = 3


def join_end_caveat(plan: Plan, scope: Scope) -> list[str]:
    """'In 7 of the 834 weeks NQ's bar and CL's end on different days: 2010-04-02 against
    2010-04-01 (Good Friday, CL closed), 2012-04-06 against 2012-04-05 and 5 more; their
    closes (and what prev() reads of them) are that far apart there.'"""
    tf = plan.timeframe
    if not tf.calendar or not plan.instruments or "trading_date" not in scope.frame.columns:
        return []
    ours = scope.frame["trading_date"].to_numpy()[scope.in_period].astype("datetime64[D]")
    if not len(ours):
        return []
    keys = period_start(ours, tf.name)
    symbol = plan.dataset.instrument.symbol
    warnings = []
    for joined in plan.instruments:
        bars = joined.dataset.frame(joined.session, tf.name)
        theirs = bars["trading_date"].to_numpy().astype("datetime64[D]")
        their_keys = period_start(theirs, tf.name)
        at = np.searchsorted(their_keys, keys)
        found = at < len(their_keys)
        found[found] = their_keys[at[found]] == keys[found]
        ends = np.where(found, theirs[np.minimum(at, len(theirs) - 1)], ours)
        apart = np.flatnonzero(found & (ends != ours))
        if not len(apart):
            continue
        other = joined.dataset.instrument
        pairs = [
            _pair(ours[i], ends[i], symbol, other.symbol, other.calendar, plan)
            for i in apart[:NAMED]
        ]
        unit = tf.label
        warnings.append(
            f"In {len(apart):,} of the {len(ours):,} {unit}s {symbol}'s bar and "
            f"{other.symbol}'s end on different days ({symbol}'s first): "
            f"{named_text(pairs, len(apart))}; their closes (and what prev() reads of them) are "
            "that far apart there."
        )
    warnings += _start_caveat(plan, keys)
    return warnings


def _start_caveat(plan: Plan, keys: np.ndarray) -> list[str]:
    """'In 3 of the 834 weeks NQ's bar and CL's begin on different days (NQ's first):
    2012-01-03 against 2012-01-02 (New Year's Day, NQ closed) …': CL traded the observed New
    Year's Mondays of 2012, 2017 and 2023 that NQ did not, so those weeks' CL bar opens a
    day earlier; its open, range and volume hold a day NQ's lack. The first trading date of
    each period (``keys``, the query's own periods kept) read from each side's daily bars."""
    tf, symbol = plan.timeframe, plan.dataset.instrument.symbol
    ours = _first_days(plan.dataset.frame(plan.session, "daily"), tf.name, keys)
    warnings = []
    for joined in plan.instruments:
        theirs = _first_days(joined.dataset.frame(joined.session, "daily"), tf.name, keys)
        apart = np.flatnonzero(~np.isnat(ours) & ~np.isnat(theirs) & (ours != theirs))
        if not len(apart):
            continue
        other = joined.dataset.instrument
        # The earlier start is the day the other side lacks: _pair names the later day's.
        pairs = [_start_pair(ours[i], theirs[i], symbol, other, plan) for i in apart[:NAMED]]
        warnings.append(
            f"In {len(apart):,} of the {len(keys):,} {tf.label}s {symbol}'s bar and "
            f"{other.symbol}'s begin on different days ({symbol}'s first): "
            f"{named_text(pairs, len(apart))}; their opens (and the ranges and volumes over the "
            "day one lacks) are that far apart there."
        )
    return warnings


def _first_days(daily: pd.DataFrame, timeframe: str, keys: np.ndarray) -> np.ndarray:
    """The first trading date of each period in ``keys`` (NaT where none traded)."""
    dates = daily["trading_date"].to_numpy().astype("datetime64[D]")
    labels = period_start(dates, timeframe)
    starts, first = np.unique(labels, return_index=True)
    at = np.minimum(np.searchsorted(starts, keys), len(starts) - 1)
    found = starts[at] == keys
    return np.where(found, dates[first[at]], np.datetime64("NaT", "D"))


def _start_pair(ours: np.datetime64, theirs: np.datetime64, symbol: str, other, plan: Plan) -> str:
    """'2012-01-03 against 2012-01-02 (New Year's Day, NQ closed)': the earlier start named
    by the calendar of the instrument that did not trade it."""
    earlier, shut, calendar = (
        (theirs, symbol, plan.dataset.instrument.calendar)
        if theirs < ours
        else (ours, other.symbol, other.calendar)
    )
    try:
        name = closure_name(calendar, earlier)
    except DataError:  # an instrument without a known calendar
        name = None
    why = f" ({name}, {shut} closed)" if name else ""
    return f"{ours} against {theirs}{why}"


def _pair(
    ours: np.datetime64, theirs: np.datetime64, symbol: str, other: str, calendar: str, plan: Plan
) -> str:
    """'2010-04-02 against 2010-04-01 (Good Friday, CL closed)': the later end named by the
    calendar of the instrument that did not trade it."""
    later, shut, shut_calendar = (
        (ours, other, calendar)
        if ours > theirs
        else (theirs, symbol, plan.dataset.instrument.calendar)
    )
    try:
        name = closure_name(shut_calendar, later)
    except DataError:  # an instrument without a known calendar
        name = None
    why = f" ({name}, {shut} closed)" if name else ""
    return f"{ours} against {theirs}{why}"
