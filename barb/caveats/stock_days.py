"""A stock-index future's close-to-close answer on the stock market's hours (CASH, RTH) that
counts the futures' short US-holiday sessions as days, with the figure over the stock
market's days only.

"ES cash close-to-close returns in 2024, their std" read 259 daily rows: 7 of them holiday
sessions (MLK day, Presidents' Day, ... Thanksgiving: the futures traded to 13:00, the stock
market was shut), each splitting one stock-market day's move in two (to the holiday's close,
then from it). std 0.01065; over the 252 stock-market days, each measured from the last
stock-market close, 0.01081 (pandas over the raw bars). ``holiday_close_caveat`` says so
only when the rows after a holiday are a notable share of the rows kept (10 %); a whole
year's are 2.7 %, too few to change a sum (0.2285 both ways) but enough to move a std, a
count of days or a mean. So the stage is run again without the holiday sessions (prev()
then reads the last stock-market close by itself), and said when what the model reads
moves (``MOVED``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from barb.caveats.holiday_closes import _inside_day_session, _steps_back
from barb.caveats.sessions import reads_previous_close
from barb.events.rules import us_market_closed
from barb.planning import Plan
from barb.result import Summary, short_value
from barb.short_days import close_clock, day_edges
from barb.stage_output import SINGLE_ROW
from barb.summary_text import value_text

# A shown number that moves by this share of itself without the holiday sessions is said: a
# sum of 2024's returns moves 0.02 %, its std 1.5 %, its mean 2.8 %, a count of days 2.7 %.
MOVED = 0.01
# Functions by which the query already says what it does with the holiday sessions.
HOLIDAY_CALLS = frozenset({"holiday", "pre_holiday", "post_holiday"})


def stock_days_caveat(
    plan: Plan,
    kept_dates: np.ndarray | None,
    answer: Summary,
    stock_days: Callable[[], Summary | None],
) -> list[str]:
    """The figure over the stock market's days only, when a daily stage of a stock-index
    future on the day session's hours reads prev(close), counts US holiday sessions among
    its ``kept_dates`` and answers with one row of numbers (``answer``) that moves by
    ``MOVED`` or more without them (``stock_days``: the stage run again on the bars
    without the holiday sessions, None if it cannot be)."""
    stage = plan.first
    if plan.timeframe.name != "daily" or plan.then is not None or plan.events:
        return []
    if not plan.dataset.instrument.stock_index or stage.shape not in SINGLE_ROW:
        return []
    if stage.calls & HOLIDAY_CALLS or not reads_previous_close(stage) or _steps_back(stage):
        return []
    if not _inside_day_session(plan) or kept_dates is None or not len(kept_dates):
        return []
    days = np.unique(kept_dates.astype("datetime64[D]"))
    closed = days[us_market_closed(days)]
    if not len(closed):
        return []
    again = stock_days()
    if again is None or again.type != answer.type:
        return []
    moved = _moved(_numbers(answer), _numbers(again))
    if not moved:
        return []
    _, ends = day_edges(plan.dataset, closed[:1])
    are = "is a US holiday session" if len(closed) == 1 else "are US holiday sessions"
    example = f"{closed[0]}, closed {close_clock(plan.dataset, int(ends[0]))}"
    return [
        f"{len(closed):,} of the {len(days):,} rows kept {are} (the futures traded short "
        f"hours, the stock market was shut; {'' if len(closed) == 1 else 'e.g. '}{example}), "
        "and prev(close) on the day after reads the holiday's close. Over the stock "
        f"market's days only, each from the last stock-market close: {', '.join(moved)}. "
        '"where": "not holiday()" with prev(close) as if(prev(holiday()), '
        f"session_close('{plan.session}', 2), prev(close)) asks that."
    ]


def _numbers(summary: Summary) -> dict[str, object]:
    """What the model reads of one row of numbers, by name."""
    if summary.type == "scalar":
        return {(summary.columns or ["value"])[0]: summary.value}
    return dict(summary.values or {})


def _moved(was: dict[str, object], now: dict[str, object]) -> list[str]:
    """'std_ret is 0.01081 (not 0.01065)' for each number that moves by ``MOVED`` or more."""
    said = []
    for name, old in was.items():
        new = now.get(name)
        numeric = all(
            isinstance(v, int | float) and not isinstance(v, bool) and v == v for v in (old, new)
        )
        if not numeric:
            continue
        a, b = float(old), float(new)  # type: ignore[arg-type]
        if a == b or abs(b - a) < MOVED * max(abs(a), abs(b)):
            continue
        said.append(
            f"{name} is {value_text(short_value(new))} (not {value_text(short_value(old))})"
        )
    return said
