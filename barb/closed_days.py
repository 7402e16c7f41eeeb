"""A period of days on which the query's session did not trade: the exchange's holiday, a
weekend, or a short holiday session that closed before the session's hours.

"What did NQ do on 2025-12-25" read "No bars matched: the result is empty", which a person
can take for missing data, while a date after the data got a precise error. A period inside
the data that holds none of the session's trading dates is said the same way: why, from the
exchange's calendar, and the nearest dates that traded. A calendar day whose evening
reopened (a Sunday, Christmas Day from 18:00) says so, with the form that reads those bars:
they belong to the next trading date, and "not a trading date" alone read as "shut all day".
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from barb.errors import DataError, InvalidPeriod
from barb.events.rules import RULE_COVERAGE, closure_name, trading_days
from barb.frames import DayIndex
from barb.planning import Plan

# Days of a span named one by one at most: a span without a trading date is a long weekend,
# or a gap in imported data, which is said as one.
_NAMED_DAYS = 7


def no_trading_error(plan: Plan) -> InvalidPeriod | None:
    """The error for a period of dates (both ends given) in which the session has no trading
    date, e.g. '2025-12-25 is not a trading date of NQ (CME closed: Christmas); the nearest
    are 2025-12-24 and 2025-12-26.' None when it has one: the result is empty for another
    reason."""
    period = plan.period
    if period.bars is not None or period.start is None or period.end is None:
        return None
    dataset = plan.dataset
    days = dataset.day_index(plan.session, "1m").dates
    before = int(np.searchsorted(days, np.datetime64(period.start, "ns"), side="left"))
    after = int(np.searchsorted(days, np.datetime64(period.end, "ns"), side="right"))
    if after > before:
        return None
    why = _why(plan, period.start, period.end)
    nearest = [_date(days[before - 1])] if before > 0 else []
    nearest += [_date(days[after])] if after < len(days) else []
    if not nearest:
        return InvalidPeriod(f"{why}.", step="period")
    return InvalidPeriod(
        f"{why}; the nearest {'are' if len(nearest) > 1 else 'is'} {' and '.join(nearest)}.",
        step="period",
        hint='Use "period": ' + " or ".join(f'"{day}"' for day in nearest) + ".",
    )


def _why(plan: Plan, start: dt.date, end: dt.date) -> str:
    """Why the session has no bars from ``start`` to ``end``: the exchange did not trade, or
    it traded but closed before the session's hours (Good Friday 2025, when CME's equity
    futures closed at 09:15, before RTH)."""
    dataset = plan.dataset
    instrument = dataset.instrument
    symbol = instrument.symbol
    span = [start + dt.timedelta(days=n) for n in range((end - start).days + 1)]
    full = dataset.day_index(instrument.full_session, "1m")
    lo = int(np.searchsorted(full.dates, np.datetime64(start, "ns"), side="left"))
    hi = int(np.searchsorted(full.dates, np.datetime64(end, "ns"), side="right"))
    if hi <= lo:
        evening = _evening(plan, full, hi, start, end)
        if len(span) == 1:
            return f"{start} is not a trading date of {symbol} ({_reasons(plan, span)}){evening}"
        why = f"{symbol} has no trading date from {start} to {end}"
        return why + (f" ({_reasons(plan, span)})" if len(span) <= _NAMED_DAYS else "") + evening
    spec = instrument.sessions.get(plan.session)
    session = f"{plan.session} session ({spec.hours})" if spec else f"window {plan.session}"
    last_bar = dataset.bars.frame["timestamp"].to_numpy()[int(full.starts[lo + 1]) - 1]
    ended = (last_bar + np.timedelta64(1, "m")).astype("datetime64[m]").item().strftime("%H:%M")
    if len(span) > 1:
        ended += f" on {_date(full.dates[lo])}"
    name = closure_name(instrument.calendar, full.dates[lo].astype("datetime64[D]"))
    ended += f" ({name})" if name else ""
    if len(span) == 1:
        return (
            f"{start} is a trading date of {symbol}, but its {session} had no bars: "
            f"trading ended at {ended}"
        )
    return f"{symbol}'s {session} has no bars from {start} to {end}: trading ended at {ended}"


def _evening(plan: Plan, full: DayIndex, after: int, start: dt.date, end: dt.date) -> str:
    """The reopen on the evening of the span's last calendar day, whose bars belong to the
    next trading date (``full.dates[after]``): ', but NQ reopened at 18:00 that evening:
    those bars count for 2025-03-10 (that evening alone: "session": "18:00-00:00", "period":
    "2025-03-10")'. Said so that a Sunday or Christmas is not read as shut all day: NQ traded
    360 bars on Sunday 2025-03-09 from 18:00 (range 68). "" when the span had no such bars."""
    if after >= len(full.dates):
        return ""
    first = _bar_time(plan, int(full.starts[after]))
    if not start <= first.date() <= end:
        return ""
    opens = first.strftime("%H:%M")
    day = _date(full.dates[after])
    on = "that evening" if start == end else f"on {first.date()}"
    return (
        f", but {plan.dataset.instrument.symbol} reopened at {opens} {on}: those bars count "
        f'for the trading date {day} (that evening alone: "session": "{opens}-00:00", '
        f'"period": "{day}")'
    )


def _bar_time(plan: Plan, row: int) -> dt.datetime:
    """The timestamp (exchange time) of the minute bar at ``row``."""
    return pd.Timestamp(plan.dataset.bars.frame["timestamp"].to_numpy()[row]).to_pydatetime()


def _reasons(plan: Plan, span: list[dt.date]) -> str:
    """Why the exchange did not trade on the days of ``span``, in order and each said once:
    "a Saturday", "a weekend", "CME closed: Christmas"."""
    instrument = plan.dataset.instrument
    open_days = _open_days(instrument.calendar)
    reasons: list[str] = []
    weekend = [day for day in span if day.weekday() >= 5]
    for day in span:
        if day.weekday() >= 5:
            reason = weekend[0].strftime("a %A") if len(weekend) == 1 else "a weekend"
        elif open_days is None or not RULE_COVERAGE[0] <= day <= RULE_COVERAGE[1]:
            reason = "no trading"
        elif np.datetime64(day, "D") in open_days:
            # The exchange traded: the data has a gap there.
            reason = f"the data has no bars there, though {instrument.exchange} traded"
        else:
            name = closure_name(instrument.calendar, np.datetime64(day, "D"))
            reason = f"{instrument.exchange} closed" + (f": {name}" if name else "")
        if reason not in reasons:
            reasons.append(reason)
    return "; ".join(reasons)


def _open_days(calendar: str) -> np.ndarray | None:
    try:
        return trading_days(calendar)
    except DataError:  # an instrument without a known calendar
        return None


def _date(day: np.datetime64) -> str:
    return str(np.datetime64(day, "D"))
