"""What prev() and rolling windows read from the day before, on intraday bars of a whole day.

The mirror of next() reading the next morning (barb.caveats.lookahead): "a 5m bar with 3x the
volume of the previous 20" as volume > 3 * rolling_mean(prev(volume), 20) on NQ's RTH bars
read each morning's first bars against yesterday's quiet 15:25-16:55 bars, so 72% of the
1,051 "spikes" of 2024-2025 were 09:30-09:40. Said with the number of kept rows whose window
reaches the date before, and the where that keeps it within the day. The same guard anded
with the prev() it covers in a map or select expression ("back": "prev(far) and low <= vw and
prev(date()) == date()", p30a V1b) keeps it within the day too, and is not said again. A part
of the day (the first hour, a window) chains every day to the one before and is said so by
barb.caveats.sessions instead, once for every function reading other bars. prev() of a line
that runs on across the night (rsi14 < 30 and prev(rsi14) >= 30) is not said: it steps along
the chart, and the where within the day dropped real crosses (NQ 15m RSI entries of 2025-12:
1 to 0; CL 1h MACD crosses up, 6 to 4).

Rows grouped by date() make one answer a day, and a day's first bar can set it: "after a 1%
move from the RTH open, how often does it come back" as max(back) by date() with back =
prev(away) == 1 and low <= o and high >= o, where o is the open the 09:30 bar always touches,
read yesterday's flag there, and 0.7941 of 2,764 days "came back" for 0.2672 (p39b Q29).
Said as "4,648 of the 2,052,975 rows kept", 0.2% of them, it read as nothing; so on day
groups the days whose answer the first bars change are counted too, among the days a then
stage keeps or those listed: each aggregate reading the window is taken again with those bars
in no group, only when the warning speaks (0.3 s over NQ's 2 million RTH minutes). No day
changed: not said. The advice for the same time on earlier days, added for the volume spike above (a
bar against the average of the bars before it), is given where a rolling window reads the
day before, not for a prev() alone, which means the bar before (prev(away): no time of day
to compare).

A window over the time of day with prev() inside, rolling_mean(prev(volume), 20, 'time') for
"the same time on the 20 days before", is said on any intraday bars: it averages each bar's
previous bar (the 09:55 volumes at 10:00; at 09:30 yesterday's last), so a where dropping the
09:30 bars does not mend it. The form that leaves today out is (rolling_sum(volume, 21,
'time') - volume) / 20. So is prev() of such a window, prev(rolling_mean(volume, 20,
'time')): the previous bar's window, not the same time's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np
import pandas as pd

from barb.caveats.sessions import part_of_the_day
from barb.caveats.then_history import day_key
from barb.frames import MINUTE_OF_DAY
from barb.lineage import conjuncts, nodes
from barb.planning import Plan, SelectItem, StagePlan
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate_select
from barb.script.library import lookup
from barb.script.reach import own_reach
from barb.sessions import MINUTES_PER_DAY
from barb.stage_output import StageOutput
from barb.summary_text import listed_text

# Windows of a fixed number of bars. A recursive smoother (ema, rsi) never ends at a bar
# count, and its chaining across days is the one every intraday chart draws.
_WINDOW_CATEGORIES = frozenset({"lag", "window"})
_RECURSIVE = frozenset({"ema"})
# Lines that run on across the day's edge as the chart draws them (indicators, rolling
# windows): prev() of one is its value a bar before, and a cross from yesterday's last bar to
# today's first is a cross on that chart. Not true range (each bar's own, the night's gap
# in the first) nor vwap (it restarts each day).
_CHAINED_CATEGORIES = frozenset({"indicator", "window"})
_DAY_BOUND = frozenset({"true_range", "vwap"})

# The windows whose advice names rolling_mean(x, n, 'time'): those that take a time of day.
_BY_TIME = frozenset({"rolling_mean", "rolling_sum", "rolling_max", "rolling_min", "rolling_std"})


class Window(NamedTuple):
    """The farthest reach back of a column or call made of prev() and rolling windows: how
    many bars, the outermost such call as written, and whether a window over the last n bars
    is in it (rolling_mean(prev(volume), 20): "the previous 20 bars", which the same time on
    earlier days may be meant by; prev(away) means the bar before)."""

    back: int
    text: str
    rolling: bool = False


def lookback_caveat(
    plan: Plan,
    ctx: EvalContext,
    frame: pd.DataFrame,
    first: StageOutput,
    then: StageOutput | None = None,
) -> list[str]:
    """Intraday rows kept (``first.passed``) whose prev() or rolling window reads an earlier
    trading date, on a session that holds the whole day (RTH, ETH, CASH, a window close to
    RTH); on groups by date(), with the days whose answer those rows change, among the rows
    a second stage (``then``) keeps.

    ``frame`` is the first stage's rows, with the bars read before the period: a kept row's
    window is there whole, so the previous date it reaches is the data's, not the period's
    edge. ``ctx`` evaluates an aggregate again over the rows kept."""
    keep = first.passed
    if not plan.timeframe.intraday or keep is None:
        return []
    said = _time_of_day_lags(plan)
    if part_of_the_day(plan) is not None or "trading_date" not in frame.columns:
        return said
    window = _farthest_window(plan.first)
    if window is None:
        return said
    back, text = window.back, window.text
    dates = frame["trading_date"].to_numpy()
    earlier = np.zeros(len(dates), dtype=bool)
    if len(dates) > back:
        earlier[back:] = dates[:-back] != dates[back:]
    crossing = int(np.count_nonzero(earlier & keep))
    if not crossing:
        return said
    days = _changed_days(plan, ctx, first, then, earlier[keep])
    if days == "":
        return said  # day groups that none of those rows changes
    kept = int(np.count_nonzero(keep))
    sentence = (
        f"{text} reads an earlier trading date for {crossing:,} of the {kept:,} rows kept (the "
        f"day's first bars, read with the previous day's last ones){days or ''}; "
        f'"where": "… and prev(date(), {back}) == date()" keeps it within the day.'
    )
    if window.rolling:
        sentence += (
            " To compare a bar with the same time on earlier days, rolling_mean(x, n, 'time') "
            "reads the last n days at its time (today's included; the n days before today: "
            "(rolling_sum(x, n + 1, 'time') - x) / n), or use daily bars of that window "
            f'("session": "{_first_bar(plan)}", "from": "daily").'
        )
    return [*said, sentence]


def _changed_days(
    plan: Plan,
    ctx: EvalContext,
    first: StageOutput,
    then: StageOutput | None,
    crossing: np.ndarray,
) -> str | None:
    """On groups by date(): ", which change came_back on 1,464 of the 2,764 days the then
    stage keeps", the days whose value of an item reading a window differs when the
    ``crossing`` rows (a mask over the rows kept) are left out; "" when none does. None
    when the rows are not grouped by day, or no item the answer reads reads a window."""
    stage = plan.first
    key = day_key(stage)
    if key is None or first.kept is None or first.table is None:
        return None
    items = _window_items(stage, plan.then)
    if not items:
        return None
    rows = first.table
    if then is not None and then.passed is not None:
        rows = rows[then.passed]
    if not len(rows):
        return None
    kept = first.kept
    # The rows left out are put in no group (an empty key), and the other columns are read as
    # they are: a copy of one column, not a gather of every column the items read over
    # millions of minute bars.
    read = {n.name for item in items for n in ast.walk(item.expr) if isinstance(n, ast.Column)}
    read |= {"timestamp", "trading_date", MINUTE_OF_DAY}
    columns = {c: kept[c] for c in kept.columns if c in read and c != key}
    columns[key] = pd.Series(_left_out(kept[key].to_numpy(), crossing), index=kept.index)
    aside = replace(
        ctx,
        frame=pd.DataFrame(columns, copy=False),
        period=None,
        step="select",
        warnings=[],
        row_warnings=[],
        history_beyond=[],
        rows_are_weeks=False,
        row_dates=None,
    )
    days = pd.Index(rows[key])
    changed = np.zeros(len(rows), dtype=bool)
    for item in items:
        without = evaluate_select(item.expr, aside, [key]).value
        again = pd.Series(np.asarray(without), index=pd.Index(without.index)).reindex(days)
        changed |= ~_same(rows[item.name].to_numpy(), again.to_numpy())
    n = int(np.count_nonzero(changed))
    if not n:
        return ""
    names = [item.name for item in items if item.name in rows.columns]
    which = "the then stage keeps" if then is not None else ("listed" if stage.limit else "grouped")
    return f", which change {listed_text(names)} on {n:,} of the {len(rows):,} days {which}"


def _left_out(keys: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The group keys with the rows ``out`` emptied (NaT for dates), which no group holds."""
    if keys.dtype.kind == "M":
        emptied = keys.copy()
        emptied[out] = np.datetime64("NaT")
        return emptied
    emptied = keys.astype(object)
    emptied[out] = None
    return emptied


def _window_items(stage: StagePlan, then: StagePlan | None) -> list[SelectItem]:
    """The first stage's select items that read a window reaching the day before, and of
    those, the ones a then stage reads."""
    columns, mapped = _map_windows(stage)
    items = [item for item in stage.select if _window(item.expr, columns, mapped) is not None]
    if then is None:
        return items
    return [item for item in items if item.name in then.names_read]


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where two columns of values hold the same value (both empty counts as the same)."""
    left, right = pd.Series(a), pd.Series(b)
    if pd.api.types.is_numeric_dtype(left) and pd.api.types.is_numeric_dtype(right):
        x = left.to_numpy(dtype=np.float64, na_value=np.nan)
        y = right.to_numpy(dtype=np.float64, na_value=np.nan)
        both = np.isnan(x) & np.isnan(y)
        with np.errstate(invalid="ignore"):
            return both | np.isclose(x, y, rtol=1e-12, atol=0.0)
    empty = left.isna().to_numpy() & right.isna().to_numpy()
    return empty | (left == right).fillna(False).to_numpy(dtype=bool)


def _first_bar(plan: Plan) -> str:
    """The session's first bar as a window ("09:30-09:35" for 5m RTH bars of NQ)."""
    start = plan.dataset.instrument.session(plan.session).start_minute
    return f"{_clock(start)}-{_clock(start + (plan.timeframe.minutes or 0))}"


def _farthest_window(stage: StagePlan) -> Window | None:
    """The window reaching farthest back among what keeps the rows and what the stage answers
    with (its where, group keys and select; with no select, its map columns)."""
    columns, mapped = _map_windows(stage)
    found = [w for w in (_window(e, columns, mapped) for e in _answer_exprs(stage)) if w]
    return max(found, key=lambda w: w.back, default=None)


def _map_windows(stage: StagePlan) -> tuple[dict[str, Window], dict[str, ast.Expr]]:
    """The window each map column reads back, by name, and the map itself. A map entry
    reads the entries before it; a lag inside an aggregate (mean(prev(x) and prev(date())
    == date())) is hoisted to a column of its own, read by the select."""
    columns: dict[str, Window] = {}
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    for name, expr in (*stage.map_exprs, *stage.hoisted):
        found = _window(expr, columns, mapped)
        if found is not None:
            columns[name] = found
    return columns, mapped


def _answer_exprs(stage: StagePlan) -> list[ast.Expr]:
    """What keeps the rows and what the stage answers with: its where, group keys and select
    (with no select, its map columns)."""
    exprs = [e for _, e in stage.group_keys]
    exprs += [item.expr for item in stage.select] or [e for _, e in stage.map_exprs]
    if stage.where is not None:
        exprs.append(stage.where)
    return exprs


def _window(
    expr: ast.Node, columns: dict[str, Window], mapped: dict[str, ast.Expr]
) -> Window | None:
    """How far back ``expr`` reads through prev() and rolling windows (a window of a lag adds
    them: rolling_mean(prev(volume), 20) reads 20 bars back), and the outermost such call."""
    if isinstance(expr, ast.Column):
        return columns.get(expr.name)
    if isinstance(expr, ast.Call) and _time_window_lagged(expr, mapped) is not None:
        return None  # said by _time_of_day_lags: a where cannot mend it
    if _same_day_guard(expr, mapped) is not None:
        return None  # prev(date()) == date(): reads the date before to stay within the day
    if marks_new_day(expr, mapped):
        return None  # date() != prev(date()): reads the date before to find the day's start
    if isinstance(expr, ast.Logical) and expr.op == "and":
        return _guarded(conjuncts(expr), columns, mapped)
    if isinstance(expr, ast.Call) and expr.name.lower() == "if" and len(expr.args) == 3:
        condition, then, otherwise = expr.args
        reads = [_guarded([*conjuncts(condition), then], columns, mapped)]
        reads.append(_window(otherwise, columns, mapped))
        return max((w for w in reads if w), key=lambda w: w.back, default=None)
    inner = [w for w in (_window(c, columns, mapped) for c in expr.children()) if w is not None]
    deepest = max(inner, key=lambda w: w.back, default=None)
    if not isinstance(expr, ast.Call):
        return deepest
    spec = lookup(expr.name)
    if spec is not None and spec.body is not None and not expr.args:
        body = _window(spec.body, {}, {})  # a named pattern reads what its body reads
        return None if body is None else body._replace(text=expr.to_text())
    if spec is None or spec.category not in _WINDOW_CATEGORIES or spec.name in _RECURSIVE:
        return deepest
    if _is_prev(expr) and _chained(expr.args[0], mapped):
        return deepest  # the line's own step over the night, as its chart draws it
    if _by_time_of_day(expr):  # reads its own time on earlier dates, as it means to
        # prev() inside is said by _time_of_day_lags: a where cannot mend it.
        return None if _reads_prev(expr, mapped) else deepest
    own = own_reach(expr).back or 0
    if not own:
        return deepest
    rolling = spec.name in _BY_TIME or (deepest is not None and deepest.rolling)
    return Window(own + (deepest.back if deepest else 0), expr.to_text(), rolling)


def _guarded(
    terms: list[ast.Expr], columns: dict[str, Window], mapped: dict[str, ast.Expr]
) -> Window | None:
    """The farthest window among terms taken together (the operands of an and, or an if's
    condition with its value), where a term prev(date(), k) == date() keeps any window of up
    to k bars within the day: "back": "prev(far) and low <= vw and prev(date()) == date()" is
    false on each day's first bar, where prev(far) read the day before's last."""
    within = max((k for t in terms if (k := _same_day_guard(t, mapped)) is not None), default=0)
    found = [w for w in (_window(t, columns, mapped) for t in terms) if w is not None]
    deepest = max(found, key=lambda w: w.back, default=None)
    return None if deepest is None or deepest.back <= within else deepest


def _same_day_guard(expr: ast.Expr, mapped: dict[str, ast.Expr]) -> int | None:
    """k when ``expr`` is prev(date(), k) == date() (either way round, or a map name for
    it): true only where the bar k back is on the same trading date."""
    return _date_lag(expr, mapped, "==")


def marks_new_day(expr: ast.Expr, mapped: dict[str, ast.Expr]) -> bool:
    """Whether ``expr`` is date() != prev(date()) or day() != coalesce(prev(day()), 0)
    (either way round, or a map name for it): true on each trading date's first bar, which
    it finds by reading the bar before. The second is true on the data's first bar too,
    which has no bar before, so count(day() != coalesce(prev(day()), 0)) counts a week's
    trading days on intraday bars (``barb.caveats.short_weeks``)."""
    return _date_lag(expr, mapped, "!=") == 1 or _day_change(expr, mapped)


# A day of the month is 1 to 31: a number outside stands for "no bar before".
_DAYS_OF_MONTH = range(1, 32)


def _day_change(expr: ast.Expr, mapped: dict[str, ast.Expr]) -> bool:
    """Whether ``expr`` is day() != coalesce(prev(day()), k), k no day of the month: the
    day changes from the bar before, or there is none (two bars in a row never fall on the
    same day of different months)."""
    expr = _unmapped(expr, mapped)
    if not isinstance(expr, ast.Compare) or expr.op != "!=":
        return False
    for lagged, own in ((expr.left, expr.right), (expr.right, expr.left)):
        if not (_is_day(own) and isinstance(lagged, ast.Call)):
            continue
        if lagged.name.lower() != "coalesce" or len(lagged.args) != 2:
            continue
        prev, missing = lagged.args
        if not (isinstance(prev, ast.Call) and _is_prev(prev) and _is_day(prev.args[0])):
            continue
        back = _literal(prev.args[1]) if len(prev.args) > 1 else 1
        stands_in = isinstance(missing, ast.Number) and missing.value not in _DAYS_OF_MONTH
        if back == 1 and stands_in:
            return True
    return False


def _is_day(node: ast.Expr) -> bool:
    """day(): the day of the month of the row's trading date."""
    return isinstance(node, ast.Call) and node.name.lower() == "day" and not node.args


def _unmapped(expr: ast.Expr, mapped: dict[str, ast.Expr]) -> ast.Expr:
    """``expr`` with a map name followed to what it names (a cycle cannot run forever)."""
    for _ in range(len(mapped) + 1):
        if not isinstance(expr, ast.Column) or expr.name not in mapped:
            break
        expr = mapped[expr.name]
    return expr


def _date_lag(expr: ast.Expr, mapped: dict[str, ast.Expr], op: str) -> int | None:
    """k when ``expr`` compares prev(date(), k) with date() by ``op``."""
    expr = _unmapped(expr, mapped)
    if not isinstance(expr, ast.Compare) or expr.op != op:
        return None
    for lagged, own in ((expr.left, expr.right), (expr.right, expr.left)):
        if not (isinstance(lagged, ast.Call) and _is_prev(lagged) and is_date(own)):
            continue
        if is_date(lagged.args[0]):
            back = _literal(lagged.args[1]) if len(lagged.args) > 1 else 1
            return back if back is not None and back > 0 else None
    return None


def is_date(node: ast.Expr) -> bool:
    """date() or the trading_date column: the row's trading date."""
    if isinstance(node, ast.Column):
        return node.name == "trading_date"
    return isinstance(node, ast.Call) and node.name.lower() == "date" and not node.args


def _chained(expr: ast.Node, mapped: dict[str, ast.Expr], depth: int = 0) -> bool:
    """Whether ``expr`` reads the bars only through lines chained across days:
    rsi(close, 14) < 30 and macd_hist() do (prev() of them steps along the chart, yesterday's
    last bar to today's first: "RSI 15m entries below 30" on NQ in 2025-12 had its one entry
    at 09:30 from 51.44 to 26.18, which a where within the day would drop); close and
    close > rolling_mean(close, 20) do not (prev(close) on a day's first bar is the close
    before the night's gap)."""
    if isinstance(expr, ast.Column):
        known = expr.name in mapped and depth <= len(mapped)  # a cycle cannot run forever
        return known and _chained(mapped[expr.name], mapped, depth + 1)
    if isinstance(expr, ast.Call):
        spec = lookup(expr.name)
        if spec is None:
            return False
        if spec.category in _CHAINED_CATEGORIES:
            return spec.name not in _DAY_BOUND
        if spec.category != "scalar":  # date(), hour(), prev(), a pattern: the bar's own
            return False
    return all(_chained(child, mapped, depth) for child in expr.children())


def _by_time_of_day(call: ast.Call) -> bool:
    """rolling_mean(volume, 20, 'time'): a window over the bar's time of day."""
    return any(isinstance(arg, ast.String) and arg.value.lower() == "time" for arg in call.args)


def _time_of_day_lags(plan: Plan) -> list[str]:
    """Windows over the time of day of a prev(): each averages (sums…) the bar before each
    bar, today's included, not the same time on the days before."""
    stage = plan.first
    mapped = dict(stage.map_exprs)
    said: list[str] = []
    for expr in _answer_exprs(stage):
        for node in nodes(expr, mapped):
            if not isinstance(node, ast.Call):
                continue
            text = None
            if _by_time_of_day(node) and _reads_prev(node, mapped):
                text = _time_of_day_lag_text(plan, node, mapped)
            window = _time_window_lagged(node, mapped)
            if window is not None:
                text = _lagged_time_window_text(plan, node, window)
            if text is not None and text not in said:
                said.append(text)
    return said


def _time_window_lagged(call: ast.Call, mapped: dict[str, ast.Expr]) -> ast.Call | None:
    """The window over the time of day a prev() reads (prev(rolling_mean(volume, 20,
    'time')), through map names), else None."""
    if not _is_prev(call):
        return None
    for node in nodes(call.args[0], mapped):
        if isinstance(node, ast.Call) and _by_time_of_day(node):
            return node
    return None


def _lagged_time_window_text(plan: Plan, call: ast.Call, window: ast.Call) -> str:
    """prev() of a window over the time of day is the previous bar's window: "today's 16:30
    volume against the 20 days before" read the 15:30 window (relative volume 0.054 for
    0.839), and the session's first bar the day before's last."""
    start = plan.dataset.instrument.session(plan.session).start_minute
    second, first = _clock(start + (plan.timeframe.minutes or 0)), _clock(start)
    text = (
        f"{call.to_text()} is the previous bar's {window.to_text()} (at {second} the {first} "
        f"bar's, at {first} the day before's last), not this time's on the days before."
    )
    n = _literal(window.args[1]) if len(window.args) > 1 else None
    x = window.args[0].to_text()
    if n is not None and window.name.lower() in ("rolling_mean", "rolling_sum"):
        total = f"rolling_sum({x}, {n + 1}, 'time') - {x}"
        form = f"({total}) / {n}" if window.name.lower() == "rolling_mean" else total
        what = "mean" if window.name.lower() == "rolling_mean" else "sum"
        return f"{text} The {what} of {x} at this time on the {n} days before today: {form}."
    return text


def _reads_prev(call: ast.Call, mapped: dict[str, ast.Expr]) -> bool:
    """Whether a window's argument reads prev() (through map names)."""
    return bool(call.args) and any(_is_prev(node) for node in nodes(call.args[0], mapped))


def _is_prev(node: ast.Node) -> bool:
    return isinstance(node, ast.Call) and node.name.lower() == "prev" and bool(node.args)


def _time_of_day_lag_text(plan: Plan, call: ast.Call, mapped: dict[str, ast.Expr]) -> str:
    start = plan.dataset.instrument.session(plan.session).start_minute
    second, first = _clock(start + (plan.timeframe.minutes or 0)), _clock(start)
    n = _literal(call.args[1]) if len(call.args) > 1 else None
    text = (
        f"{call.to_text()} is over the last {n} days at this time of day, today's included, "
        f"of {call.args[0].to_text()}: the bar before (at {second} the {first} bar, at {first} "
        "the day before's last), not this time on the days before."
    )
    x = _lagged(call.args[0], mapped)
    how = call.name.lower()
    if x is not None and n is not None and how in ("rolling_mean", "rolling_sum"):
        total = f"rolling_sum({x}, {n + 1}, 'time') - {x}"
        form = f"({total}) / {n}" if how == "rolling_mean" else total
        what = "mean" if how == "rolling_mean" else "sum"
        return f"{text} The {what} of {x} at this time on the {n} days before today: {form}."
    return (
        f"{text} For the days before today at one time of day, use daily bars of that bar's "
        f'window ("session": "{_first_bar(plan)}", "from": "daily"), where prev() is the day '
        "before."
    )


def _lagged(arg: ast.Expr, mapped: dict[str, ast.Expr]) -> str | None:
    """x when the window's argument is prev(x) itself (or a map name for it), one bar back."""
    for _ in range(len(mapped) + 1):  # map names, followed (a cycle cannot run forever)
        if not isinstance(arg, ast.Column) or arg.name not in mapped:
            break
        arg = mapped[arg.name]
    if not isinstance(arg, ast.Call) or not _is_prev(arg):
        return None
    back = _literal(arg.args[1]) if len(arg.args) > 1 else 1
    return arg.args[0].to_text() if back == 1 else None


def _literal(node: ast.Expr) -> int | None:
    if isinstance(node, ast.Number) and float(node.value).is_integer():
        return int(node.value)
    return None


def _clock(minute: int) -> str:
    minute %= MINUTES_PER_DAY
    return f"{minute // 60:02d}:{minute % 60:02d}"
