"""Rows a condition picks whose forward windows overlap: fewer independent outcomes than rows.

"Buy the close at a 20-day closing low, hold 5 days: win rate and average by year" over
NQ's daily bars picked 477 days (mean(if(low20, fwd5 > 0, 0 / 0)) with fwd5 = (next(close,
5) / close - 1) * 100), and 355 of them came within 5 days of the one before: their 5-day
holds overlap, so a selloff's run of lows counted one move up to 5 times. Taken one at a
time (no entry while one is held) they are 186 trades, 2008's 18 and not 53, and nothing
said so (p39b Q16). Said when a statistic (a mean or share, median, percentile, std, sum)
over the rows a condition picks (the where's, an event filter's, or the c of if(c, x, 0 / 0)
and of a filled if(c, x, 0)) reads a value that looks n bars ahead (next(x, n), through map
names), and at least ``OVERLAP_SHARE`` of those rows start within n bars of the one before.

The rows are trades only when the query's names say so (win_rate, pnl: ``TRADE_WORDS``).
"After 3 down days, how often is the next 5 days' return positive" as mean(fwd5 > 0) over
NQ's 517 such days had been told they "are not 517 independent trades (taken one at a time,
none entered while one is held: 258)", of a question with no trade in it: its days are
outcomes, 258 of them taken so that no two windows share a day.

The window is the bars whose moves make the value, after the row's own: next(close, 5) /
close - 1 is the next 5 bars' (a window of 5), next(ret, 5) the 5th bar's alone (a window of
1: rows a bar apart never share it), and what the value reads before its row (prev(), a
rolling window) is known when the row is picked and makes no overlap.

``OVERLAP_SHARE``: with a share f of the rows overlapping the row before, the rows taken one
at a time number between (1 - f) and all of them; at a quarter, the count read as
independent trades may be a third too many, and a standard error taken over them ~15% too
small. Below it the rows are nearly trades of their own and a sentence would be noise.

Cost: a walk of the query's expressions; the picks' positions and their differences; the
one-at-a-time count, a search per trade taken (up to ``MAX_COUNTED`` rows); the condition
of an if() evaluated again over the stage's rows. Only for a statistic of a value that
looks ahead over rows a condition picks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from barb.column_units import COUNTED_ROWS
from barb.lineage import MAX_DEPTH, nodes, through_map
from barb.planning import StagePlan
from barb.script import ast
from barb.script.hoisting import unhoisted
from barb.script.reach import own_reach
from barb.summary_text import listed_text

# Said when at least this share of the rows picked start within the window of the one before.
OVERLAP_SHARE = 0.25
# Fewer rows picked than this are too few to say how many overlap.
FEW_PICKS = 8
# The statistics over many rows a reader takes for as many independent outcomes.
STATISTICS = frozenset({"mean", "median", "percentile", "std", "sum", "skew", "kurt"})
# Picks counted one at a time up to this many (a search per trade taken): beyond, the
# sentence leaves the count out rather than loop over a million minute bars.
MAX_COUNTED = 200_000
# Words of the query's names that make its rows trades ("win_rate", "avg_pnl", "entry"):
# the count taken one at a time is then of trades, else of outcomes.
TRADE_WORDS = frozenset(
    {
        *("trade", "trades", "pnl", "win", "wins", "winrate", "winner", "winners", "loss"),
        *("losses", "loser", "losers", "profit", "entry", "entries", "exit", "hold", "held"),
        *("buy", "sell", "long", "short", "backtest", "expectancy", "equity", "position"),
    }
)
# A read back as far as the data goes (a running total): earlier than any row picked.
_ALL_BACK = -(10**9)

# The bars a value reads around its row: (first, last) as offsets from it (next(close, 5)
# / close: (0, 5)).
Span = tuple[int, int]


def overlap_caveat(
    stage: StagePlan,
    keep: np.ndarray,
    condition: Callable[[ast.Expr], pd.Series],
    *,
    picked: bool,
    timeframe: str,
) -> list[str]:
    """The first stage's statistics over rows a condition picks (``keep``: the rows kept,
    a mask over every row it evaluated on; ``picked``: a where or an event filter chose
    them), whose look-ahead windows overlap: one sentence per set of rows and window.
    ``condition`` evaluates an if()'s condition over every row."""
    if "next" not in stage.calls:
        return []
    mapped = dict(stage.map_exprs)
    found: dict[tuple[str, int], tuple[np.ndarray, list[str], ast.Expr, str]] = {}
    for item in stage.select:
        for call in ast.walk(item.expr):
            if not (isinstance(call, ast.Call) and call.name.lower() in STATISTICS and call.args):
                continue
            arg = unhoisted(call.args[0], stage.hoisted)
            value, rows, which = arg, keep, "kept"
            target = through_map(arg, mapped)
            if isinstance(target, ast.Call) and target.name.lower() == "if":
                picks = _picked_by_if(target, keep, condition)
                if picks is not None:
                    value, rows, which = picks
            elif not picked:
                continue  # every row, no condition: the all-rows baseline
            window = _window(value, mapped)
            if window < 2:
                continue
            key = (which, window)
            if key not in found:
                found[key] = (rows, [], value, which)
            if item.name not in found[key][1]:
                found[key][1].append(item.name)
    said = []
    trades = _trades(stage)
    for (_, window), (rows, names, value, which) in found.items():
        text = _sentence(rows, window, names, value, which, mapped, timeframe, trades)
        if text:
            said.append(text)
    return said


def _picked_by_if(
    call: ast.Call, keep: np.ndarray, condition: Callable[[ast.Expr], pd.Series]
) -> tuple[ast.Expr, np.ndarray, str] | None:
    """if(c, x, e) with e a number or empty (0 / 0), or if(c, e, x): x, the rows kept where
    x stands, and the condition that puts it there as the sentence names it."""
    if len(call.args) != 3:
        return None
    cond, then, other = call.args
    for value, fill, where in ((then, other, True), (other, then, False)):
        if not _number_or_empty(fill) or _number_or_empty(value):
            continue
        values = condition(cond)
        if not pd.api.types.is_bool_dtype(values.dtype):
            return None
        holds = values.fillna(not where).to_numpy(dtype=bool) == where
        text = cond.to_text()
        return value, keep & holds, f"{text} is true" if where else f"{text} is false"
    return None


def _number_or_empty(node: ast.Expr) -> bool:
    """A number written in the query (0, -1) or 0 / 0, the empty value."""
    if isinstance(node, ast.Binary) and node.op == "/":
        return _number_or_empty(node.left) and _number_or_empty(node.right)
    value = ast.literal_value(node)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _window(value: ast.Expr, mapped: Mapping[str, ast.Expr]) -> int:
    """How many bars after its row's own make ``value``: 5 for next(close, 5) / close - 1,
    1 for next(ret, 5) (the 5th bar's move alone), 0 for a value that looks no bar ahead."""
    span = _span(value, mapped, 0)
    if span is None:
        return 0
    first, last = span
    return max(last - max(first, 0), 0)


def _span(node: ast.Node, mapped: Mapping[str, ast.Expr], depth: int) -> Span | None:
    """The first and last bar ``node`` reads, as offsets from its row; None for a number."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(node, ast.Column):
        if node.name in mapped:
            return _span(mapped[node.name], mapped, depth + 1)
        return 0, 0
    inner = [s for s in (_span(c, mapped, depth) for c in node.children()) if s is not None]
    if isinstance(node, ast.Call) and node.name.lower() in ("next", "prev"):
        n = _ahead(node)
        shift = n if node.name.lower() == "next" else -n
        first, last = inner[0] if inner else (0, 0)
        return first + shift, last + shift
    span = (min(s[0] for s in inner), max(s[1] for s in inner)) if inner else None
    if isinstance(node, ast.Call):
        own = own_reach(node)
        first, last = span or (0, 0)
        back = _ALL_BACK if own.back is None else first - own.back
        return back, last + own.ahead
    return span


def _sentence(
    rows: np.ndarray,
    window: int,
    names: Sequence[str],
    value: ast.Expr,
    which: str,
    mapped: Mapping[str, ast.Expr],
    timeframe: str,
    trades: bool,
) -> str | None:
    """'win_rate and avg_fwd5 read fwd5 (…: the 5 days after each row) on the 477 days where
    low20 is true: 355 of them start within 5 days of the one before, so their windows
    overlap and they are not 477 independent trades (…: 186).' Of rows that are no trades
    (``trades`` False), 'independent outcomes (taken so that no two windows share a day:
    258)'."""
    picks = np.flatnonzero(rows)
    if len(picks) < FEW_PICKS:
        return None
    near = int(np.count_nonzero(np.diff(picks) < window))
    if near < OVERLAP_SHARE * len(picks):
        return None
    unit = COUNTED_ROWS.get(timeframe, "bars")
    rows_text = f"{unit} kept" if which == "kept" else f"{unit} where {which}"
    after = f"the {window} {unit} after each row"
    read = _ahead_text(value, mapped, after)
    taken = ""
    if len(picks) <= MAX_COUNTED:
        count = _one_at_a_time(picks, window)
        how = (
            "taken one at a time, none entered while one is held"
            if trades
            else f"taken so that no two windows share a {unit[:-1]}"
        )
        taken = f" ({how}: {count:,})"
    return (
        f"{listed_text(list(names))} read{'s' if len(names) == 1 else ''} {read} on the "
        f"{len(picks):,} {rows_text}: {near:,} of them start within {window} {unit} of the "
        f"one before, so their windows overlap and they are not {len(picks):,} independent "
        f"{'trades' if trades else 'outcomes'}{taken}."
    )


def _trades(stage: StagePlan) -> bool:
    """Whether the stage's names make its rows trades: a word of ``TRADE_WORDS`` in a map
    or select name (win_rate, avg_pnl), not in p_up or fwd5."""
    names = [name for name, _ in stage.map_exprs] + [item.name for item in stage.select]
    words = {word for name in names for word in re.split(r"[^a-z]+", name.lower())}
    return bool(words & TRADE_WORDS)


def _ahead_text(value: ast.Expr, mapped: Mapping[str, ast.Expr], after: str) -> str:
    """'fwd5 (next(close, 5): the 5 days after each row)': the next() reaching farthest in
    ``value``, after the map column that holds it, if any."""
    calls = [
        node
        for node in nodes(value, mapped)
        if isinstance(node, ast.Call) and node.name.lower() == "next" and node.args
    ]
    if not calls:
        return f"{value.to_text()} ({after})"
    call = max(calls, key=_ahead)
    holder = next(
        (name for name, expr in mapped.items() if any(n == call for n in ast.walk(expr))), None
    )
    return f"{holder} ({call.to_text()}: {after})" if holder else f"{call.to_text()} ({after})"


def _ahead(call: ast.Call) -> int:
    """A next() call's n."""
    if len(call.args) < 2:
        return 1
    literal = ast.literal_value(call.args[1])
    return int(literal) if isinstance(literal, int | float) else 1


def _one_at_a_time(picks: np.ndarray, window: int) -> int:
    """How many of the rows at ``picks`` (positions, ascending) are taken when none is
    entered before the one held has run its ``window``: one search per trade taken."""
    taken, at = 0, 0
    while at < len(picks):
        taken += 1
        at = int(np.searchsorted(picks, picks[at] + window, side="left"))
    return taken
