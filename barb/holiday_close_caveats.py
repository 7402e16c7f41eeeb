"""What prev(close) reads on the day after a US holiday session: the holiday's own close.

On a US stock-market holiday the index futures still trade, mostly short hours (Thanksgiving
to 13:00), and that session is a daily row of RTH or CASH; the next day's prev(close) is its
close, not the last stock-market close. "How does NQ trade the day after Thanksgiving" as
close / prev(close) - 1 on RTH gave +0.222% over 18 days, measured from Thursday's 13:00
close; from Wednesday's close it is +0.452%. Said when such rows are a notable part of the
rows kept, or are among the few rows a table lists (each named), with the form that reads
the last stock-market close. Good Friday has no RTH bar, so the Monday after it already
reads Thursday's close: the form steps back only where the row before is a holiday session
(prev(holiday())), and twice where two are (Sandy, 2012-10-29 and 30)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.events.rules import us_market_closed
from barb.planning import Plan
from barb.result import WHOLE_MAX_ROWS
from barb.session_caveats import reads_previous_close
from barb.sessions import MINUTES_PER_DAY

# Named patterns that compare the open with prev(close) (patterns.yaml).
CLOSE_GAPS = frozenset({"gap_up", "gap_down", "gap_filled"})
# Rows after a holiday session are said when they are at least this share of the rows kept
# (or of one group's rows): "the day after Thanksgiving" (all of them), Fridays of November
# (a quarter), not every Tuesday (8% follow a holiday Monday) or all days (2.5%).
NOTABLE_SHARE = 0.1
# Whatever their share, such rows are named when the model reads the rows one by one: a
# ranking or a short list ("the 20 best days of 2024" held the day after Labor Day, 5%).
# Up to this many by date.
NAMED_ROWS = 5


def holiday_close_caveat(
    plan: Plan, kept: pd.DataFrame | None, frame: pd.DataFrame | None = None
) -> list[str]:
    """Daily rows kept (``kept``; the rows a limit lists when it picks them) whose previous
    date of the session is a US holiday session, in a stage that reads prev(close). A
    holiday session a join left out of the rows (``frame``: CL's 2023-01-02, when NQ had
    none) is not what prev(close) reads, and is not said."""
    stage = plan.first
    if plan.timeframe.name != "daily" or not _inside_day_session(plan):
        return []
    if "holiday" in stage.calls:  # the query already says what it does with them
        return []
    if not (stage.calls & CLOSE_GAPS or reads_previous_close(stage)):
        return []
    if kept is None or not len(kept) or "trading_date" not in kept.columns:
        return []
    days, holiday = _session_holidays(plan)
    rows = np.searchsorted(days, kept["trading_date"].to_numpy().astype("datetime64[D]"))
    after = holiday[rows + 1]
    if plan.instruments and frame is not None and after.any():
        held = np.isin(days[np.maximum(rows - 1, 0)], frame["trading_date"].to_numpy())
        after &= held
    seen = stage.shape == "table" and len(kept) <= WHOLE_MAX_ROWS
    if not after.any() or not (seen or _notable(plan, kept, after)):
        return []
    twice = bool(holiday[rows[after]].any())
    n, total = int(after.sum()), len(rows)
    follow = "follows" if n == 1 else "follow"
    named = [f"{days[row]} after {days[row - 1]}" for row in rows[after][:NAMED_ROWS]]
    if not seen:
        example = f"{'' if n == 1 else 'e.g. '}{named[0]}"
    else:  # rows the model reads one by one: each such row by its date
        example = ", ".join(named) + (f" and {n - NAMED_ROWS} more" if n > NAMED_ROWS else "")
    return [
        f"{n:,} of the {total:,} rows kept {follow} a US holiday session ({example}): "
        "prev(close) there is the holiday's own close (the futures traded, mostly short hours; "
        "the stock market was shut), not the last stock-market close. From that close: "
        f"{_last_stock_close(plan.session, twice)}."
    ]


def _session_holidays(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """The session's dates (the data's, not the query's rows: those hold only the history
    prev() needs), and which are US holiday sessions, two places ahead: ``holiday[r + 1]``
    is the date before row r's, ``holiday[r]`` the one before that (Sandy shut the stock
    market two days running). Kept per named session: every daily prev(close) asks."""

    def build() -> tuple[np.ndarray, np.ndarray]:
        daily = plan.dataset.session_daily(plan.session)
        days = daily.index.to_numpy().astype("datetime64[D]")
        return days, np.concatenate(([False, False], us_market_closed(days)))

    if plan.session not in plan.dataset.instrument.sessions:
        return build()
    found: tuple[np.ndarray, np.ndarray] = plan.dataset.derived(
        f"holiday_sessions:{plan.session}", build
    )
    return found


def _last_stock_close(session: str, twice: bool) -> str:
    """prev(close), stepping back over the holiday session before the row (and the one
    before it when two holidays follow each other)."""
    back = f"session_close('{session}', 2)"
    if twice:
        back = f"if(prev(holiday(), 2), session_close('{session}', 3), {back})"
    return f"if(prev(holiday()), {back}, prev(close))"


def _notable(plan: Plan, kept: pd.DataFrame, after: np.ndarray) -> bool:
    """Whether the rows after a holiday are a notable share of the rows kept, or of one
    group's rows ("group_by post_holiday()": all of its true group)."""
    if after.mean() >= NOTABLE_SHARE:
        return True
    keys = [name for name, _ in plan.first.group_keys if name in kept.columns]
    if not keys:
        return False
    shares = pd.Series(after, index=kept.index).groupby(
        [kept[key] for key in keys], observed=True, dropna=True
    )
    return bool((shares.mean() >= NOTABLE_SHARE).any())


def _inside_day_session(plan: Plan) -> bool:
    """Whether the query's session lies within the instrument's day session (RTH, CASH, the
    first hour, a window): a holiday is one of ETH's days, and an overnight session's close
    on a holiday (09:30) is no shorter than any other."""
    instrument = plan.dataset.instrument
    if plan.session == "ETH":
        return False
    window = instrument.session(plan.session)
    main = instrument.session(instrument.default_session)
    offset = (window.start_minute - main.start_minute) % MINUTES_PER_DAY
    return offset + window.length_minutes <= main.length_minutes
