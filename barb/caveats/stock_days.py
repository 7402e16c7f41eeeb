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
import pandas as pd

from barb.caveats.calendar import HOLIDAY_SHIFT
from barb.caveats.holiday_closes import inside_day_session, steps_back
from barb.caveats.kept_days import unique_days
from barb.caveats.sessions import previous_close_read, reads_previous_close
from barb.events.rules import us_market_closed
from barb.lineage import nodes
from barb.planning import Plan, SelectItem, StagePlan
from barb.result import Summary, short_value
from barb.script import ast
from barb.short_days import close_clock, day_edges
from barb.stage_output import SINGLE_ROW, StageOutput
from barb.summary_text import group_name, named_text, value_text

# A shown number that moves by this share of itself without the holiday sessions is said: a
# sum of 2024's returns moves 0.02 %, its std 1.5 %, its mean 2.8 %, a count of days 2.7 %.
MOVED = 0.01
# The statistics whose size is the same statistic of its values' sizes (``_sizes``).
SIZED = frozenset({"mean", "avg", "median", "sum"})
# Groups whose moved numbers are named, one by one; more are counted.
NAMED_GROUPS = 3
# ... and a mean, median or sum of signed values (returns) this share of their sizes'
# statistic: ``barb.caveats.calendar.HOLIDAY_SHIFT``, what a weekday question is told at.
SIZED_MOVED = HOLIDAY_SHIFT
# Functions by which the query already says what it does with the holiday sessions.
HOLIDAY_CALLS = frozenset({"holiday", "pre_holiday", "post_holiday"})


def stock_days_caveat(
    plan: Plan,
    kept_dates: np.ndarray | None,
    answer: Summary,
    table: pd.DataFrame | None,
    stock_days: Callable[[], StageOutput | None],
    kept: pd.DataFrame | None = None,
) -> list[str]:
    """The figure over the stock market's days only, when a daily stage of a stock-index
    future on the day session's hours reads prev(close), counts US holiday sessions among
    its ``kept_dates`` and answers with one row of numbers (``answer``) or groups of them
    (``table``, by year: ES's 2024 std 0.01065, 0.01081 without them) that move by
    ``MOVED`` or more without them (``stock_days``: the stage run again on the bars
    without the holiday sessions, None if it cannot be)."""
    stage, last = plan.first, plan.then or plan.first
    if plan.timeframe.name != "daily":
        return []
    grouped = last.shape == "grouped"
    if not plan.dataset.instrument.stock_index or not (grouped or last.shape in SINGLE_ROW):
        return []
    if (stage.calls | last.calls) & HOLIDAY_CALLS:
        return []
    closes = _closes(plan)
    if not _reads_a_close(stage, closes) or steps_back(stage):
        return []
    if not inside_day_session(plan) or kept_dates is None or not len(kept_dates):
        return []
    days = unique_days(kept_dates)
    closed = days[us_market_closed(days)]
    if not len(closed):
        return []
    names = _close_to_close(stage, closes)
    if plan.then is not None:
        names = _then_reads(plan.then, names)
    if not names:  # nothing shown reads prev(close) or counts days: no stage run again
        return []
    again = stock_days()
    if again is None or again.summary.type != answer.type:
        return []
    keys = [name for name, _ in last.group_keys]
    sizes = _sizes(last.select, kept, keys)
    if grouped:
        moved = _moved_groups(table, again.table, keys, names, sizes)
    else:
        flat = {name: float(size.iloc[0]) for name, size in sizes.items() if len(size) == 1}
        numbers = {k: v for k, v in _numbers(answer).items() if k in names}
        moved = _moved(numbers, _numbers(again.summary), flat)
    if not moved:
        return []
    _, ends = day_edges(plan.dataset, closed[:1])
    are = "is a US holiday session" if len(closed) == 1 else "are US holiday sessions"
    example = f"{closed[0]}, closed {close_clock(plan.dataset, int(ends[0]))}"
    read = [c for c in sorted(closes) if _reads_a_close(stage, frozenset({c}))]
    names, verb = " and ".join(f"prev({c})" for c in read), "reads" if len(read) == 1 else "read"
    # session_close() reads the bars' own instrument: no such form for a joined one's close.
    ask = (
        ' "where": "not holiday()" with prev(close) as if(prev(holiday()), '
        f"session_close('{plan.session}', 2), prev(close)) asks that."
        if read == ["close"]
        else ""
    )
    return [
        f"{len(closed):,} of the {len(days):,} rows kept {are} (the futures traded short "
        f"hours, the stock market was shut; {'' if len(closed) == 1 else 'e.g. '}{example}), "
        f"and {names} on the day after {verb} the holiday's close. Over the stock "
        f"market's days only, each from the last stock-market close: {', '.join(moved)}.{ask}"
    ]


def _closes(plan: Plan) -> frozenset[str]:
    """The closes whose prev() reads a holiday session's close: the bars' own, and each
    joined stock-index future's read in the query's session (``es_close``): "std of NQ's
    and ES's cash returns in 2024" gave ES's 0.01065 with no word, 0.01081 over the stock
    market's days, as ES asked alone says."""
    joined = {
        f"{other.dataset.instrument.symbol.lower()}_close"
        for other in plan.instruments
        if other.dataset.instrument.stock_index and other.join.session is None
    }
    return frozenset({"close", *joined})


def _reads_a_close(stage: StagePlan, closes: frozenset[str]) -> bool:
    """Whether the stage reads prev() of one of ``closes``, through its map's names."""
    if closes == {"close"}:
        return reads_previous_close(stage)
    if "prev" not in stage.calls:
        return False
    mapped = dict(stage.map_exprs)
    return any(_previous(list(nodes(expr, mapped)), closes) for expr in stage.expressions)


def _previous(read: list[ast.Node], closes: frozenset[str]) -> bool:
    """Whether the nodes an expression reads (``lineage.nodes``) hold prev() of a close."""
    if closes == {"close"}:
        return previous_close_read(read)
    return any(
        isinstance(node, ast.Call)
        and node.name.lower() == "prev"
        and bool(node.args)
        and isinstance(node.args[0], ast.Column)
        and node.args[0].name in closes
        for node in read
    )


def _close_to_close(stage: StagePlan, closes: frozenset[str]) -> list[str]:
    """The select items that read prev() of one of ``closes`` (through the map), and its
    counts of days (of a stage that reads it: the holiday sessions are days there): what
    the holiday sessions change. A range beside them (mean(range) with a return in the map)
    is a short session's, said by other warnings."""
    mapped = dict(stage.map_exprs)
    return [
        item.name
        for item in stage.select
        if _previous(list(nodes(item.expr, mapped)), closes)
        or (isinstance(item.expr, ast.Call) and item.expr.name.lower() == "count")
    ]


def _then_reads(then: StagePlan, read: list[str]) -> list[str]:
    """The then stage's select items that read a first-stage column ``read`` names (one that
    reads prev(close), or counts days), through the then stage's map, and its own counts: a
    monthly sum of returns read by std(r), days per month read by mean(n) ("21.58 days" a
    month, 21.0 over the stock market's, with the holiday sessions counted as days)."""
    mapped = dict(then.map_exprs)
    return [
        item.name
        for item in then.select
        if any(
            isinstance(node, ast.Column) and node.name in read for node in nodes(item.expr, mapped)
        )
        or (isinstance(item.expr, ast.Call) and item.expr.name.lower() == "count")
    ]


def _sizes(
    items: tuple[SelectItem, ...], kept: pd.DataFrame | None, keys: list[str]
) -> dict[str, pd.Series]:
    """For each mean, median or sum of a column of the rows kept (``mean(ret)``), the same
    statistic of its values' sizes, per group (one value when ungrouped): a signed mean near
    0 moves by "30 % of itself" (NQ's 2025 Monday returns, 0.175 % -> 0.211 %) when the
    holiday sessions move it by 4 % of a day's move, which is noise (the yardstick
    ``barb.caveats.calendar.holiday_shift`` weighs weekday returns with)."""
    if kept is None:
        return {}
    found = {}
    for item in items:
        expr = item.expr
        if not (isinstance(expr, ast.Call) and expr.name.lower() in SIZED and len(expr.args) == 1):
            continue
        column = expr.args[0]
        if not (isinstance(column, ast.Column) and column.name in kept.columns):
            continue
        values = pd.to_numeric(kept[column.name], errors="coerce")
        if not ((values < 0).any() and (values > 0).any()):
            continue  # one sign (days counted, sizes): its size is itself
        values = values.abs()
        how = "mean" if expr.name.lower() == "avg" else expr.name.lower()
        if keys and set(keys) <= set(kept.columns):
            found[item.name] = values.groupby([kept[k] for k in keys], observed=True).agg(how)
        elif not keys:
            found[item.name] = pd.Series([values.agg(how)])
    return found


def _moved_groups(
    was: pd.DataFrame | None,
    now: pd.DataFrame | None,
    keys: list[str],
    names: list[str],
    sizes: dict[str, pd.Series],
) -> list[str]:
    """'std_ret is 0.01081 (not 0.01065) in year 2024' for each group whose number moves
    by ``MOVED`` or more, the first ``NAMED_GROUPS`` named and the others counted."""
    if was is None or now is None or not keys or not set(keys) <= set(was.columns):
        return []
    if not set(keys) <= set(now.columns):
        return []
    before, after = was.set_index(keys), now.set_index(keys)
    said = []
    for at in range(len(before)):
        if before.index[at] not in after.index:
            continue
        key = before.index[at]
        moved = _moved(
            {n: before[n].iloc[at] for n in names if n in before.columns},
            {n: after.loc[key, n] for n in names if n in after.columns},
            {n: float(size.get(key, 0.0)) for n, size in sizes.items()},
        )
        group = group_name(before.index, at)
        said += [f"{text} in {group}" for text in moved]
    if len(said) <= NAMED_GROUPS:
        return said
    return [named_text(said[:NAMED_GROUPS], len(said))]


def _numbers(summary: Summary) -> dict[str, object]:
    """What the model reads of one row of numbers, by name."""
    if summary.type == "scalar":
        return {(summary.columns or ["value"])[0]: summary.value}
    return dict(summary.values or {})


def _moved(
    was: dict[str, object], now: dict[str, object], sizes: dict[str, float] | None = None
) -> list[str]:
    """'std_ret is 0.01081 (not 0.01065)' for each number that moves by ``MOVED`` or more of
    its size: itself, or the same statistic of its values' sizes (``sizes``) where larger."""
    said = []
    for name, old in was.items():
        new = now.get(name)
        old, new = (v.item() if isinstance(v, np.generic) else v for v in (old, new))
        numeric = all(
            isinstance(v, int | float) and not isinstance(v, bool) and v == v for v in (old, new)
        )
        if not numeric:
            continue
        a, b = float(old), float(new)  # type: ignore[arg-type]
        # A mean (median, sum) is weighed against its values' sizes, as weekday returns are.
        sized = (sizes or {}).get(name)
        share = MOVED if sized is None else SIZED_MOVED
        if a == b or abs(b - a) < share * max(abs(a), abs(b), sized or 0.0):
            continue
        said.append(
            f"{name} is {value_text(short_value(new))} (not {value_text(short_value(old))})"
        )
    return said
