"""What prev(close) reads on the day after a US holiday session: the holiday's own close.

On a US stock-market holiday the index futures still trade, mostly short hours (Thanksgiving
to 13:00), and that session is a daily row of RTH or CASH; the next day's prev(close) is its
close, not the last stock-market close. "How does NQ trade the day after Thanksgiving" as
close / prev(close) - 1 on RTH gave +0.222% over 18 days, measured from Thursday's 13:00
close; from Wednesday's close it is +0.452%. On RTH and CASH (the stock market's hours) it is
said when such rows are a notable part of the rows kept or of a group, are among the few
rows a table lists (each named), or the query asks about holidays at all: "where": "not
holiday()" drops the holiday's row but not what the next row's prev() reads (ES's
post-holiday days: median +0.080% from the holiday's close, 0.000% from the last stock
close). Over every day (2.5% of them) it would sit under every daily-return answer for a
day or two of a histogram's buckets, and is not said. Good Friday has no RTH
bar, so the Monday after it already reads Thursday's close: the form steps back only where
the row before is a holiday session (prev(holiday())), and twice where two are (Sandy,
2012-10-29 and 30).

On ETH a holiday's session is one of the Globex days, and the next one starts where it
stopped: said only when the query asks about holidays (holiday(), pre_holiday(),
post_holiday()) and the rows kept beside the row leave the holiday's session out. "The
Monday after Easter" read Good Friday's 09:15 close (a session only when payrolls came out
that day, 7 of 18 years): ES +0.251%, +0.447% from Thursday's close.

A gap across ETH's daily break read after an early close or a closure spans hours or a day,
not the 17:00-18:00 hour (long_break_caveat)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.caveats.calendar import PLACE_FUNCTIONS
from barb.caveats.sessions import open_against_previous, reads_previous_close
from barb.caveats.short_sessions import without_rows
from barb.data.store import PRICE_COLUMNS
from barb.events.rules import us_market_closed
from barb.lineage import nodes
from barb.planning import Plan, StagePlan
from barb.script import ast
from barb.script.context import EvalContext
from barb.sessions import MINUTES_PER_DAY
from barb.short_days import close_clock, date_positions, day_edges, short_days

# Named patterns that compare the open with prev(close) (patterns.yaml).
CLOSE_GAPS = frozenset({"gap_up", "gap_down", "gap_filled"})
# The functions by which a query asks about holidays, and so about the stock market's days:
# its day after a holiday is measured from the last stock-market close, and said whatever
# the share of such rows.
HOLIDAY_CALENDAR = frozenset({"holiday", "pre_holiday", "post_holiday"})
# Otherwise rows after a holiday session are said when they are at least this share of the
# rows kept (or of one group's rows): "the day after Thanksgiving" (all of them), Fridays of
# November (a quarter), not every Tuesday (8% follow a holiday Monday) or all days (2.5%,
# which would put the warning under every daily-return answer).
NOTABLE_SHARE = 0.1
# Rows named by date, when the model reads the rows one by one (a table
# shown whole, ``Summary.whole``); otherwise one example.
NAMED_ROWS = 5
# The form that leaves out the ETH rows after an early close or a closure: prev(early_close())
# holds after a holiday's 13:00 session and an early close's 13:15, post_holiday() after a
# weekday the futures did not trade (Christmas Day, New Year's Day). It also drops the 4 days
# after the unplanned stock-market closures (Sandy, national mourning), whose Globex broke
# for the usual hour: 3,579 of ES's 3,583 one-hour breaks are left, none longer.
FULL_BREAK_ONLY = '"where": "not prev(early_close()) and not post_holiday()"'


def holiday_close_caveat(
    plan: Plan,
    kept: pd.DataFrame | None,
    frame: pd.DataFrame | None = None,
    *,
    whole: bool = False,
) -> list[str]:
    """Daily rows kept (``kept``; the rows a limit lists when it picks them) whose previous
    date of the session is a US holiday session, in a stage that reads prev(close) and not
    the form that steps back over it. A holiday session a join left out of the rows
    (``frame``: CL's 2023-01-02, when NQ had none) is not what prev(close) reads, and is
    not said; nor, off the stock-index futures, a holiday whose session traded whole (CL's
    RTH to 14:30 on MLK day). ``whole``: the model reads the rows one by one
    (``Summary.whole``)."""
    stage = plan.first
    eth = plan.session == "ETH"
    if plan.timeframe.name != "daily" or (eth and not stage.calls & HOLIDAY_CALENDAR):
        return []
    if not (stage.calls & CLOSE_GAPS or reads_previous_close(stage)):
        return []
    if steps_back(stage):  # it reads the last stock-market close already
        return []
    if _marks_to_market(stage):  # the holiday's close is a price the position was held at
        return []
    if not (eth or inside_day_session(plan)):
        return []
    if kept is None or not len(kept) or "trading_date" not in kept.columns:
        return []
    days, holiday = _session_holidays(plan)
    rows = date_positions(days, kept["trading_date"].to_numpy().astype("datetime64[D]"))
    after = holiday[rows + 1]
    if plan.instruments and frame is not None and after.any():
        held = np.isin(days[np.maximum(rows - 1, 0)], frame["trading_date"].to_numpy())
        after &= held
    if eth and after.any():
        after &= ~_beside(plan, kept, days[np.maximum(rows - 1, 0)])
    if not plan.dataset.instrument.stock_index and after.any():
        # Crude's yardstick is its own session, not the stock market: a holiday whose
        # session traded whole (CL's RTH on MLK day, to 14:30; 2025-01-09, the national day
        # of mourning, a full day to 17:00) closed where any other day does (p48f M2).
        after &= short_days(plan.dataset, plan.session, days[np.maximum(rows - 1, 0)])
    seen = stage.shape == "table" and whole
    asked = bool(stage.calls & HOLIDAY_CALENDAR) or counts_stock_days(stage)
    if not after.any() or not (seen or asked or _notable(plan, kept, after)):
        return []
    twice = bool(holiday[rows[after]].any())
    n, total = int(after.sum()), len(rows)
    follow = "follows" if n == 1 else "follow"
    shown = rows[after][: NAMED_ROWS if seen else 1]
    _, closed = day_edges(plan.dataset, days[shown - 1])
    named = [
        f"{days[row]} after {days[row - 1]}, closed {close_clock(plan.dataset, int(end))}"
        for row, end in zip(shown, closed, strict=True)
    ]
    if not seen:
        example = f"{'' if n == 1 else 'e.g. '}{named[0]}"
    else:  # rows the model reads one by one: each such row by its date
        example = "; ".join(named) + (f"; and {n - NAMED_ROWS} more" if n > NAMED_ROWS else "")
    form = last_stock_close(plan.session, twice)
    instrument = plan.dataset.instrument
    # The stock market is an index future's yardstick; crude's is its own exchange (p47b #8).
    if instrument.stock_index:
        why = "the futures traded, mostly short hours; the stock market was shut"
        usual, days_only = "the last stock-market close", "Stock-market days only"
    else:
        why = f"{instrument.exchange} trades short hours on US holidays"
        usual, days_only = "the last full session's close", "Full sessions only"
    if bool(holiday[rows + 2].any()):  # the holiday sessions are rows too
        fix = f'{days_only}: "where": "not holiday()", and for prev(close) {form}.'
    else:
        fix = f"From that close: {form}."
    return [
        f"{n:,} of the {total:,} rows kept {follow} a US holiday session ({example}): "
        f"prev(close) there is the holiday's own close ({why}), not {usual}. {fix}"
    ]


def long_break_caveat(plan: Plan, ctx: EvalContext, kept: pd.DataFrame | None) -> list[str]:
    """ETH daily rows kept whose open is read against prev(close) (a gap across the daily
    break) when the previous session closed early or a weekday without a session lies
    between: the gap spans hours or a day, not the 17:00-18:00 hour. "The gap across the
    break, not weekends" on ES in 2024 read 207 days, mean abs 1.849, max 35.75; 9 of them
    (2024-12-26: from 2024-12-24's 13:15 close, 29 hours) gave that max, and over the 198
    one-hour breaks it is 1.194, max 6.5. Not said when rows after a weekend are kept: the
    query then asks about every gap, of which a holiday's is one more of the longer ones. The
    breaks are read from the bars (first bar of the date against the last of the one before)."""
    stage = plan.first
    if plan.timeframe.name != "daily" or plan.session != "ETH":
        return []
    if stage.calls & (HOLIDAY_CALENDAR | {"early_close"}):  # it asks about them already
        return []
    if not (stage.calls & CLOSE_GAPS or open_against_previous(stage, "close")):
        return []
    if kept is None or not len(kept) or "trading_date" not in kept.columns:
        return []
    dataset = plan.dataset
    days, _ = _session_holidays(plan)
    dates = kept["trading_date"].to_numpy().astype("datetime64[D]")
    rows = date_positions(days, dates)
    known = rows > 0  # the data's first date has no session before it
    before = days[np.maximum(rows - 1, 0)]
    span = (dates - before).astype(np.int64)
    weekend = known & (np.busday_count(before + 1, dates) < span - 1)
    if weekend.any():
        return []
    opened, _ = day_edges(dataset, dates)
    _, closed = day_edges(dataset, before)
    gap = span * MINUTES_PER_DAY + opened - closed
    usual = MINUTES_PER_DAY - dataset.instrument.session("ETH").length_minutes
    long = known & (gap > usual)
    if not long.any():
        return []
    n, total = int(long.sum()), len(kept)
    worst = int(np.argmax(np.where(long, gap, -1)))
    usual_break = f"{close_clock(dataset, MINUTES_PER_DAY - usual)}-{close_clock(dataset, 0)}"
    example = (
        f"{dates[worst]} from {before[worst]}'s {close_clock(dataset, int(closed[worst]))} "
        f"close, {_hours(int(gap[worst]))} hours"
    )
    follow = "follows" if n == 1 else "follow"
    text = (
        f"{n:,} of the {total:,} rows kept {follow} an early close or a closure, not the "
        f"{usual_break} break "
        f"({'' if n == 1 else 'e.g. '}{example}): their gap from prev(close) spans hours or "
        "a day."
    )
    aggregates = [item for item in stage.select if item.aggregate]
    without = without_rows(stage, ctx, kept, long, aggregates)
    if without:
        text += f" Without them {without}."
    return [f"{text} {FULL_BREAK_ONLY} leaves them out."]


def _hours(minutes: int) -> str:
    """A break's length in hours: '29', '4.8'."""
    hours = minutes / 60
    return f"{hours:.0f}" if hours >= 10 else f"{hours:.1f}"


def steps_back(stage: StagePlan) -> bool:
    """Whether the stage reads prev(holiday()): the form that steps back over a holiday
    session to the last stock-market close (turn_of_the_month's "before"). A query that
    only names holiday() ("where": "not holiday()") still reads the holiday's close."""
    if not {"prev", "holiday"} <= stage.calls:
        return False
    mapped = dict(stage.map_exprs)
    return any(
        isinstance(node, ast.Call)
        and node.name.lower() == "prev"
        and bool(node.args)
        and isinstance(node.args[0], ast.Call)
        and node.args[0].name.lower() == "holiday"
        for expr in stage.expressions
        for node in nodes(expr, mapped)
    )


def _marks_to_market(stage: StagePlan) -> bool:
    """Whether every prev(close) the stage reads is a position's mark from the bar before,
    prev(pos) * (close - prev(close)) (hold_until_exit): a futures position held through a
    holiday session is marked at its close, a real price, and the marks chain to the
    account's P&L. NQ's RSI(2) trades over all history: "where": "not holiday()", which the
    note offered, dropped 30 sessions' moves (total -7,830.5 -> -7,788.5, the drawdown
    -11,514.25 -> -12,157.25) with nothing said (p48j q16). A gap against prev(close) is
    still said."""
    inside = outside = 0

    def visit(node: ast.Node, held: bool) -> None:
        nonlocal inside, outside
        if _is_previous_close(node):
            inside, outside = inside + held, outside + (not held)
            return
        if isinstance(node, ast.Binary) and node.op == "*":
            for side, other in ((node.left, node.right), (node.right, node.left)):
                visit(side, held or _is_position(other))
            return
        for child in node.children():
            visit(child, held)

    for expr in stage.expressions:
        visit(expr, False)
    return inside > 0 and outside == 0


def _is_previous_close(node: ast.Node) -> bool:
    return (
        isinstance(node, ast.Call)
        and node.name.lower() == "prev"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Column)
        and node.args[0].name == "close"
    )


def _is_position(node: ast.Node) -> bool:
    """prev() of a column that is no price (the position held into the bar), signed or not:
    prev(pos), -prev(pos)."""
    while isinstance(node, ast.Unary):
        node = node.operand
    return (
        isinstance(node, ast.Call)
        and node.name.lower() == "prev"
        and bool(node.args)
        and isinstance(node.args[0], ast.Column)
        and node.args[0].name not in PRICE_COLUMNS
    )


def counts_stock_days(stage: StagePlan) -> bool:
    """Whether the stage numbers days among the stock market's (trading_day('month',
    'stocks')): it asks about the stock market's days, so its day after a holiday is measured
    from the last stock-market close, whatever the share of such rows. "The first trading
    day of the month" kept 216 rows, 10 of them after Labor Day's or Memorial Day's session
    (4.6%, under ``NOTABLE_SHARE``), 3 of which flip sign from the last stock close (p48c
    Q7)."""
    if not stage.calls & PLACE_FUNCTIONS:
        return False
    mapped = dict(stage.map_exprs)
    return any(
        isinstance(node, ast.Call)
        and node.name.lower() in PLACE_FUNCTIONS
        and any(ast.literal_value(arg) == "stocks" for arg in node.args)
        for expr in stage.expressions
        for node in nodes(expr, mapped)
    )


def _beside(plan: Plan, kept: pd.DataFrame, before: np.ndarray) -> np.ndarray:
    """Whether each row's previous date (``before``) is among the rows kept with it: of its
    group ("group_by post_holiday()": the holidays are in the other group), else of all."""
    keys = [kept[name] for name, _ in plan.first.group_keys if name in kept.columns]
    dates = kept["trading_date"].to_numpy().astype("datetime64[D]")
    held = pd.MultiIndex.from_arrays([dates, *keys])
    return pd.MultiIndex.from_arrays([before, *keys]).isin(held)


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


def last_stock_close(session: str, twice: bool) -> str:
    """prev(close), stepping back over the holiday session before the row (and the one
    before it when two holidays follow each other)."""
    back = f"session_close('{session}', 2)"
    if twice:
        back = f"if(prev(holiday(), 2), session_close('{session}', 3), {back})"
    return f"if(prev(holiday()), {back}, prev(close))"


def _notable(plan: Plan, kept: pd.DataFrame, after: np.ndarray) -> bool:
    """Whether the rows after a holiday are a notable share of the rows kept, or of one
    group's rows (a histogram's tail bucket of big moves)."""
    if after.mean() >= NOTABLE_SHARE:
        return True
    keys = [name for name, _ in plan.first.group_keys if name in kept.columns]
    if not keys:
        return False
    shares = pd.Series(after, index=kept.index).groupby(
        [kept[key] for key in keys], observed=True, dropna=True
    )
    return bool((shares.mean() >= NOTABLE_SHARE).any())


def inside_day_session(plan: Plan) -> bool:
    """Whether the query's session lies within the instrument's day session (RTH, CASH, the
    first hour, a window): an overnight session's close on a holiday (09:30) is no shorter
    than any other."""
    instrument = plan.dataset.instrument
    window = instrument.session(plan.session)
    main = instrument.session(instrument.default_session)
    if window.zone is not None:  # a window on another clock is other exchange hours on other dates
        return False
    offset = (window.start_minute - main.start_minute) % MINUTES_PER_DAY
    return offset + window.length_minutes <= main.length_minutes
