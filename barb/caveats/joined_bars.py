"""Intraday bars of two joined instruments that a short day's close cuts at other minutes.

Bars shorter than a day are joined on their time, and on most days the two sides' bars are
the same minutes. But where one market closes inside a bar and the other does not (or at
another minute), the two bars side by side hold different spans: on the Friday after
Thanksgiving ES's hourly 13:00 bar is 13:00-13:15 and CL's 13:00-13:45; on Christmas Eve and
July 3 ES's is 15 minutes and CL's a whole hour. Its volume, its range and the return read
from its close are then of different lengths. Over all of 2020-2025 that is 13 of 35,424
hourly bars (ES and CL's hourly volume correlation 0.7358, 0.7361 without them); on the days
after Thanksgiving alone, one bar in each day's 20. Said where such bars are a notable share
of the rows kept (NOTABLE_SHARE), or the rows are listed: over years of bars they move
nothing a warning should drown others for.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.caveats.join_hours import LISTED, reads_joined, same_hours, special_elsewhere
from barb.frames import MINUTE_OF_DAY, Dataset
from barb.instruments import MINUTES_PER_DAY, format_clock
from barb.planning import Plan
from barb.short_days import day_edges, special_days, window_edges
from barb.summary_text import count_text, named_text
from barb.timeframes import finest_fit

# Said when the bars of different spans are at least this share of the rows kept.
NOTABLE_SHARE = 0.01
# Bars named before "and N more".
NAMED = 3


def joined_bar_caveat(plan: Plan, kept: pd.DataFrame | None) -> list[str]:
    """'On 1 of the 20 bars kept ES's 1h ETH bar and CL's hold different minutes, a close
    falling inside one of them: 2024-11-29 13:00 (ES 13:00-13:15, CL 13:00-13:45); …'."""
    step = plan.timeframe.minutes
    if step is None or step == 1 or not plan.instruments or kept is None or not len(kept):
        return []
    ours = plan.dataset
    if ours.instrument.session(plan.session).zone is not None:
        return []  # a window on another clock: its exchange hours move with daylight saving
    joined = [j for j in plan.instruments if same_hours(plan, j) and reads_joined(plan, j)]
    if not joined or "trading_date" not in kept.columns:
        return []
    dates = kept["trading_date"].to_numpy().astype("datetime64[D]")
    days, day_of_row = _days_of(dates)
    # Only the calendars' short days: a minute without trades is no close inside a bar.
    own_short = special_days(ours, days)
    shorts = own_short | special_elsewhere(joined, days)
    if not shorts.any():
        return []
    on_short = shorts[day_of_row]
    short_days, own_short = days[shorts], own_short[shorts]
    rows = kept.loc[on_short]
    dates = dates[on_short]
    minutes = _minutes_of_day(rows)
    own = _spans(ours, plan.session, dates, minutes, step)
    listed = plan.first.shape == "table"
    symbol = ours.instrument.symbol
    warnings = []
    for join in joined:
        theirs = _spans(join.dataset, join.session, dates, minutes, step)
        traded = (own[1] > own[0]) & (theirs[1] > theirs[0])
        apart = np.flatnonzero(traded & ((own[0] != theirs[0]) | (own[1] != theirs[1])))
        if not len(apart) or not (listed or len(apart) >= NOTABLE_SHARE * len(kept)):
            continue
        other = join.dataset.instrument.symbol
        named = [
            f"{dates[i]} {format_clock(int(minutes[i]))} ({symbol} {_span(ours, own, i)}, "
            f"{other} {_span(join.dataset, theirs, i)})"
            for i in apart[:NAMED]
        ]
        apart_named = named_text(named, len(apart))
        hint = _leave_out(symbol, dates[apart], minutes[apart], short_days, own_short)
        whole = _whole_timeframe(step, [own, theirs], apart, ours, plan.session)
        form = f' On "from": "{whole}" no bar is cut.' if whole else ""
        warnings.append(
            f"On {len(apart):,} of the {count_text(len(kept), 'bar')} kept {symbol}'s "
            f"{plan.timeframe.name} {plan.session} bar and {other}'s hold different minutes, "
            f"a short day's close falling inside one of them: {apart_named}; side "
            "by side there the two bars (their volumes, ranges, and the returns read from "
            f"their closes) are of different lengths. {hint}{form}"
        )
    return warnings


def _leave_out(
    symbol: str, dates: np.ndarray, minutes: np.ndarray, short_days: np.ndarray, own: np.ndarray
) -> str:
    """The where that leaves those bars (their ``dates`` and wall-clock ``minutes``) out, not
    their whole days: by date when few, else by holiday() and early_close(), which read the
    query's own calendar (``own``: which of ``short_days`` it has)."""
    days = np.unique(dates)
    clocks = ", ".join(f"'{format_clock(int(m))}'" for m in np.unique(minutes))
    if len(days) <= LISTED:
        listed = ", ".join(f"'{day}'" for day in days)
        where = f"not (date() in ({listed}) and time() in ({clocks}))"
        return f'"where": "{where}" leaves them out.'
    where = f"not ((holiday() or early_close()) and time() in ({clocks}))"
    missed = np.count_nonzero(~own[np.searchsorted(short_days, days)])
    if not missed:
        return f'"where": "{where}" leaves them out.'
    return (
        f'"where": "{where}" leaves out those of {len(days) - missed:,} of their '
        f"{len(days):,} days; the other {missed:,} are not short days on {symbol}'s own "
        "calendar."
    )


def _days_of(dates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``dates`` (sorted) and each row's place among them. Rows in time order
    (as kept, unless sorted) begin a day where the date changes: no sort of them all."""
    if (dates[1:] < dates[:-1]).any():
        days, day_of_row = np.unique(dates, return_inverse=True)
        return days, day_of_row
    begins = np.empty(len(dates), dtype=bool)
    begins[0] = True
    np.not_equal(dates[1:], dates[:-1], out=begins[1:])
    return dates[begins], np.cumsum(begins) - 1


def _minutes_of_day(rows: pd.DataFrame) -> np.ndarray:
    """The wall-clock minute each bar opens at."""
    if MINUTE_OF_DAY in rows.columns:
        return rows[MINUTE_OF_DAY].to_numpy().astype(np.int64)
    stamps = pd.to_datetime(rows["timestamp"]).to_numpy("datetime64[m]")
    return (stamps - stamps.astype("datetime64[D]")).astype(np.int64)


def _spans(
    dataset: Dataset, session: str, dates: np.ndarray, minutes: np.ndarray, step: int
) -> tuple[np.ndarray, np.ndarray]:
    """The minutes into the trading day each bar (``dates``, opening at wall-clock
    ``minutes``) really spans on ``dataset``: from its open, or the day's late open, to its
    end, or the day's (or the window's) close; an empty span where it had no bar then."""
    opened, closed = day_edges(dataset, dates)
    start, end = window_edges(dataset, session)
    begins = (minutes - dataset.instrument.trading_day_start_minute) % MINUTES_PER_DAY
    first = np.maximum(begins, np.maximum(opened, start))
    last = np.minimum(begins + step, np.minimum(closed, end))
    return first, np.maximum(last, first)


def _span(dataset: Dataset, spans: tuple[np.ndarray, np.ndarray], i: int) -> str:
    """'13:00-13:15'."""
    shift = dataset.instrument.trading_day_start_minute
    return "-".join(format_clock(int(edge[i] + shift) % MINUTES_PER_DAY) for edge in spans)


def _whole_timeframe(
    step: int,
    spans: list[tuple[np.ndarray, np.ndarray]],
    apart: np.ndarray,
    dataset: Dataset,
    session: str,
) -> str | None:
    """The longest intraday timeframe shorter than ``step`` whose bars both sides' spans
    begin and end on (a 13:15 close and a 13:45 one: 15m); None when only 1m does."""
    start, _ = window_edges(dataset, session)
    edges = np.concatenate([edge[apart] for span in spans for edge in span]) - start
    return finest_fit(step, edges.tolist())
