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

Groups are rows a key picks: "Below its SMA50, how often is NQ higher 40 days later?" as
mean(next(close, 40) > close) by above had no word of the 1,710 of 1,739 days below the
average that start within 40 days of the one before, while the where form of the same
question had it (p40a #17). So a grouped statistic of a value that looks ahead
(``group_windows``, by the stage) gets one sentence for all its groups, each group's rows
counted apart: 78 below and 95 above, taken so that no two windows share a day.

The noise tests (``setup_noise``, ``group_noise``) take each row for an independent
outcome; over overlapping windows that overstates the evidence (p < 0.001 on 1,739 days
below the SMA50, where samples of every 40th day gave p from 0.008 to 1.0 by their start).
When this warning is said they judge the rows as their count one at a time
(``independent_count``): for windows of evenly spaced rows, the n at which independent
rows would give the mean the variance the overlapping ones give (rows a day apart over
40-day sums of independent daily moves: 40 times the variance, n / 40 rows).

Cost: a walk of the query's expressions; the picks' positions and their differences; the
one-at-a-time count (``_taken``): a pass over the picks, runs of evenly spaced rows counted
whole and the others a bisection per take; the condition of an if() evaluated again over
the stage's rows. Only for a statistic of a value that looks ahead over rows a condition or a
group key picks; by group, a stable sort of the rows' group codes.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from barb.column_units import COUNTED_ROWS
from barb.lineage import MAX_DEPTH, nodes, through_map
from barb.planning import StagePlan
from barb.script import ast
from barb.script.evaluator import SelectValue
from barb.script.hoisting import unhoisted
from barb.script.reach import own_reach
from barb.summary_text import group_name, listed_text

# Said when at least this share of the rows picked start within the window of the one before.
OVERLAP_SHARE = 0.25
# Groups' counts one at a time named each up to this many groups; beyond, their range.
_NAMED_GROUPS = 4
# Fewer rows picked than this are too few to say how many overlap.
FEW_PICKS = 8
# The statistics over many rows a reader takes for as many independent outcomes.
STATISTICS = frozenset({"mean", "median", "percentile", "std", "sum", "skew", "kurt"})
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
    told: Mapping[str, str] | None = None,
) -> list[str]:
    """The first stage's statistics over rows a condition picks (``keep``: the rows kept,
    a mask over every row it evaluated on; ``picked``: a where or an event filter chose
    them), whose look-ahead windows overlap: one sentence per set of rows and window.
    ``condition`` evaluates an if()'s condition over every row. ``told``: the sentences
    already said of statistics by name (their noise, ``setup_noise``); one that counts the
    same rows one at a time (``counted_text``) is not said of again, unless they are trades:
    "RSI < 30, NQ 5 days later" had its 176 overlapping rows, counted as 54, in each of its
    two noise sentences and a third time here (p44a Q07)."""
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
            elif not picked or stage.shape == "grouped":
                # Every row, no condition: the all-rows baseline; of groups, each group's
                # rows are said apart (``grouped_overlap_caveat``).
                continue
            window = _window(value, mapped)
            if window < 2:
                continue
            known = _with_value(rows, value, condition)
            if which == "kept" and np.count_nonzero(known) < np.count_nonzero(rows):
                which = "kept with a value"
            rows = known
            key = (which, window)
            if key not in found:
                found[key] = (rows, [], value, which)
            if item.name not in found[key][1]:
                found[key][1].append(item.name)
    said = []
    trades = _trades(stage)
    for (_, window), (rows, names, value, which) in found.items():
        picks = np.flatnonzero(rows)
        counted = counted_text(len(picks), window, independent_count(picks, window), timeframe)
        if not trades:  # trades are said as taken one at a time, not as the noise line does
            names = [name for name in names if counted not in (told or {}).get(name, "")]
        if not names:
            continue
        text = _sentence(rows, window, names, value, which, mapped, timeframe, trades)
        if text:
            said.append(text)
    return said


def _with_value(
    rows: np.ndarray, value: ast.Expr, evaluate: Callable[[ast.Expr], pd.Series]
) -> np.ndarray:
    """The rows of ``rows`` whose ``value`` is not empty: the statistic's outcomes. ES's
    last 4 Mondays have no 20-day window yet (the data ends): 930 Mondays are 926 outcomes,
    225 of them taken one at a time, as the noise test counts them, not 226."""
    values = evaluate(value)
    if not isinstance(values, pd.Series) or len(values) != len(rows):
        return rows
    return rows & values.notna().to_numpy()


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
    rows_text = f"{unit} {which}" if which.startswith("kept") else f"{unit} where {which}"
    after = f"the {window} {unit} after each row"
    read = _ahead_text(value, mapped, after)
    taken = f" ({_taken_how(trades, unit)}: {independent_count(picks, window):,})"
    return (
        f"{listed_text(list(names))} read{'s' if len(names) == 1 else ''} {read} on the "
        f"{len(picks):,} {rows_text}: {near:,} of them start within {window} {unit} of the "
        f"one before, so their windows overlap and they are not {len(picks):,} independent "
        f"{'trades' if trades else 'outcomes'}{taken}."
    )


def _taken_how(trades: bool, unit: str) -> str:
    return (
        "taken one at a time, none entered while one is held"
        if trades
        else f"taken so that no two windows share a {unit[:-1]}"
    )


def counted_text(rows: int, window: int, taken: int, timeframe: str) -> str:
    """ "1,739 rows whose 40-day windows overlap, counted as the 78 taken so that no two
    share a day": rows read ahead, as the noise tests count them (``independent_count``)."""
    unit = COUNTED_ROWS.get(timeframe, "bars")[:-1]
    return (
        f"{rows:,} rows whose {window}-{unit} windows overlap, counted as the {taken:,} taken "
        f"so that no two share a {unit}"
    )


def scaled_counts(events: ArrayLike, taken: ArrayLike, rows: ArrayLike) -> np.ndarray:
    """``events`` (hits, values above a median) of ``rows`` rows in the share they hold of
    them, over the ``taken`` those rows count as one at a time (``independent_count``): whole
    rows (as floats), as Fisher's and the binomial tests count them, rounded half to even;
    0 of no rows. NQ's 1,182 up days of 1,739 below the SMA50, counted as 78: 53.

    One function for setup_noise, no_edge and group_noise (elementwise over groups). The
    product is taken before the division, exact in integers: no_edge's hits * (taken /
    rows) put 11 of 22 rows counted as 15 at 7.499999999999999, 7 where the others said 8."""
    events, taken, rows = (np.asarray(a) for a in (events, taken, rows))
    with np.errstate(all="ignore"):
        scaled = np.where(rows > 0, events * taken / np.where(rows > 0, rows, 1), 0.0)
    return np.rint(scaled)


def forward_window(value: ast.Expr, stage: StagePlan) -> int:
    """How many bars after its row's own make ``value``, a select call's argument (through
    the stage's map and hoisted parts): 40 for next(close, 40) > close, 0 for close."""
    if "next" not in stage.calls:
        return 0
    return _window(unhoisted(value, stage.hoisted), dict(stage.map_exprs))


def overlapping(picks: np.ndarray, window: int) -> bool:
    """Whether enough of the rows at ``picks`` (positions, ascending) start within
    ``window`` bars of the one before for the rows to be said not independent."""
    if window < 2 or len(picks) < FEW_PICKS:
        return False
    return int(np.count_nonzero(np.diff(picks) < window)) >= OVERLAP_SHARE * len(picks)


def independent_count(picks: np.ndarray, window: int) -> int:
    """How many independent outcomes the rows at ``picks`` (positions, ascending) whose
    values read ``window`` bars ahead are worth: as many as are taken so that no two
    windows share a bar (78 of NQ's 1,739 days below the SMA50, 40-day windows), exactly,
    for any number of rows (``_taken``)."""
    return int(_taken(picks, window)[1].sum())


def _taken(
    picks: np.ndarray, window: int, apart: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The rows at ``picks`` (distinct positions, ascending; with ``apart``, ascending within
    each group, ``apart`` True between two rows of different groups) taken one at a time, by
    run: where each run begins (an index into ``picks``) and how many of its rows are taken.

    A run ends at a gap of ``window`` bars or more (or another group): the one held has
    ended, so the next run's first row is taken and each run counts on its own. Of a run of
    rows evenly d bars apart, rows 0, k, 2k, ... are taken, k = ceil(window / d): an hour's
    60 minute bars a day with 30-bar windows, 2 a day (ETH by hour, 212,757 in all, where
    the bars their windows cover over the window had said 315,595, p43d #1). The other runs
    (a minute missing, a where's scattered rows) are walked a step per take (``_walked``)."""
    count = len(picks)
    gaps = np.diff(picks)
    cut = gaps >= window if apart is None else (gaps >= window) | apart
    starts = np.flatnonzero(np.r_[True, cut]) if count else np.zeros(0, dtype=np.int64)
    lengths = np.diff(np.r_[starts, count])
    several = lengths > 1
    step = np.ones(len(starts), dtype=np.int64)
    step[several] = gaps[starts[several]]
    every = np.maximum(-(-window // step), 1)  # k = ceil(window / d)
    taken = -(-lengths // every)
    # Uneven runs: those holding a row whose gaps before and after it differ.
    differ = np.flatnonzero((gaps[1:] != gaps[:-1]) & ~cut[1:] & ~cut[:-1]) + 1
    uneven = np.zeros(len(starts), dtype=bool)
    uneven[np.searchsorted(starts, differ, side="right") - 1] = True
    if uneven.any():
        taken[uneven] = _walked(picks, window, starts[uneven], lengths[uneven])
    return starts, taken.astype(np.int64)


def _walked(picks: np.ndarray, window: int, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """How many rows of each run (its first row and length) are taken one at a time: a step
    per take, its next found by bisection among the ``window`` rows after it (distinct
    positions: the next take is at most ``window`` rows on). Over a memoryview, whose items
    are Python ints, a step costs well under a microsecond, where numpy's search per take
    had cost a second for 212,757 takes (p43d #6); a search for every row beforehand costs
    more than the walk once the takes are fewer than a tenth of the rows."""
    at_bar = memoryview(np.ascontiguousarray(picks, dtype=np.int64))
    counts = []
    for start, length in zip(starts.tolist(), lengths.tolist(), strict=True):
        at, end, taken = start, start + length, 0
        while at < end:
            taken += 1
            at = bisect_left(at_bar, at_bar[at] + window, at + 1, min(at + window, end))
        counts.append(taken)
    return np.array(counts, dtype=np.int64)


@dataclass(frozen=True)
class GroupWindows:
    """A grouped statistic's rows with a value whose values read ``window`` bars ahead, per
    group in the result's order: how many, how many start within the window of the one
    before in their group, and how many they are worth (``independent_count``)."""

    window: int
    rows: np.ndarray
    near: np.ndarray
    taken: np.ndarray

    @property
    def overlapping(self) -> bool:
        """Whether the warning is said: as ``overlapping`` of the groups' rows together."""
        rows = int(self.rows.sum())
        return rows >= FEW_PICKS and int(self.near.sum()) >= OVERLAP_SHARE * rows


def group_windows(
    stage: StagePlan, answers: Mapping[str, SelectValue], keep: np.ndarray
) -> dict[str, GroupWindows]:
    """The first stage's grouped select items that are a statistic of a value reading two
    bars ahead or more (mean(fwd) with fwd = next(close, 40) > close; not an if() of a
    condition, said of the rows it picks by ``overlap_caveat``), by name, with their rows
    by group; ``keep``: the rows kept, a mask over every row the stage evaluated on."""
    found: dict[str, GroupWindows] = {}
    positions: np.ndarray | None = None
    # Items reading the same rows with the same window (mean(fwd) and mean(fwd > 0)) are
    # counted once: by the window, and the rows with a value.
    counted: list[tuple[int, np.ndarray, GroupWindows]] = []
    mapped = dict(stage.map_exprs)
    for item in stage.select:
        call = item.expr
        if not (isinstance(call, ast.Call) and call.name.lower() in STATISTICS and call.args):
            continue
        arg = unhoisted(call.args[0], stage.hoisted)
        target = through_map(arg, mapped)
        if isinstance(target, ast.Call) and target.name.lower() == "if":
            continue
        window = forward_window(call.args[0], stage)
        answer = answers[item.name]
        rows, samples = answer.rows, answer.samples.get(call)
        if window < 2 or not rows.grouped or rows.codes is None or not samples:
            continue
        values = samples[0]
        if not isinstance(values, pd.Series) or len(values) != len(rows.codes):
            continue
        if positions is None:
            positions = np.flatnonzero(keep)
        valued = (rows.codes >= 0) & values.notna().to_numpy()
        same = (c for w, v, c in counted if w == window and np.array_equal(v, valued))
        windows = next(same, None)
        if windows is None:
            parts = _by_group(positions[valued], rows.codes[valued], rows.ncodes, window)
            if rows.slots is not None:
                parts = tuple(part[rows.slots] for part in parts)
            windows = GroupWindows(window, *parts)
            counted.append((window, valued, windows))
        found[item.name] = windows
    return found


def _by_group(
    positions: np.ndarray, codes: np.ndarray, ncodes: int, window: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per code: the rows, those within ``window`` of the one before of their code, and
    ``independent_count`` of them. Rows of each code in time order by a stable sort, of
    small codes a radix sort (2 million minute bars by hour: 30 ms, not 150)."""
    small = codes.astype(np.int16) if ncodes <= np.iinfo(np.int16).max else codes
    order = np.argsort(small, kind="stable")
    positions, codes = positions[order], codes[order]
    rows = np.bincount(codes, minlength=ncodes)
    same = codes[1:] == codes[:-1]
    gaps = np.diff(positions)
    near = np.bincount(codes[1:][same & (gaps < window)], minlength=ncodes)
    starts, runs = _taken(positions, window, apart=~same)
    taken = np.bincount(codes[starts], runs, minlength=ncodes).astype(np.int64)
    return rows, near, taken


def grouped_overlap_caveat(
    stage: StagePlan,
    windows: Mapping[str, GroupWindows],
    index: pd.Index,
    timeframe: str,
) -> list[str]:
    """One sentence per window read of ``windows`` whose rows overlap within their groups
    (``index``: the groups' keys): "up_share reads fwd (next(close, 40): the 40 days after
    each row) in each above group: 4,519 of the 4,560 days start within 40 days of the one
    before in their group, so their windows overlap and they are not 4,560 independent
    outcomes (taken so that no two windows share a day: above false: 78, above true: 95)." """
    said: dict[tuple[int, bytes], tuple[list[str], GroupWindows, ast.Expr]] = {}
    mapped = dict(stage.map_exprs)
    for item in stage.select:
        found = windows.get(item.name)
        if found is None or not found.overlapping:
            continue
        assert isinstance(item.expr, ast.Call)
        key = (found.window, found.rows.tobytes() + found.taken.tobytes())
        value = unhoisted(item.expr.args[0], stage.hoisted)
        said.setdefault(key, ([], found, value))[0].append(item.name)
    unit = COUNTED_ROWS.get(timeframe, "bars")
    keys = " × ".join(name or "group" for name in index.names)
    trades = _trades(stage)
    texts = []
    for names, found, value in said.values():
        rows, near = int(found.rows.sum()), int(found.near.sum())
        read = _ahead_text(value, mapped, f"the {found.window} {unit} after each row")
        valued = np.flatnonzero(found.rows > 0)
        if len(valued) <= _NAMED_GROUPS:
            counts = ", ".join(
                f"{group_name(index, int(at), text_alone=True)}: {int(found.taken[at]):,}"
                for at in valued
            )
        else:
            taken = found.taken[valued]
            counts = (
                f"{int(taken.sum()):,} in all, {int(taken.min()):,} to {int(taken.max()):,} a group"
            )
        texts.append(
            f"{listed_text(names)} read{'s' if len(names) == 1 else ''} {read} in each {keys} "
            f"group: {near:,} of the {rows:,} {unit} start within {found.window} {unit} of "
            "the one before in their group, so their windows overlap and they are not "
            f"{rows:,} independent {'trades' if trades else 'outcomes'} "
            f"({_taken_how(trades, unit)}: {counts})."
        )
    return texts


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
