"""The built-in functions of Barb Script (seed 000 §3.2), registered once each.

Row-wise functions receive ``(ctx, *args)`` with Series aligned to ``ctx.frame``; aggregates
receive ``(rows, *args)`` and reduce through ``rows`` (``RowGroups``), which makes each one
work both ungrouped and grouped. Null handling of the operators is in evaluator.py; here
every function states its own edge cases in its summary.

Decisions worth knowing:
- Windows need n values: rolling_*(x, n) is NaN until n rows are available.
- Date functions (date, day, dayofweek, dayname, month, quarter, year, weekofyear,
  dayofyear) use the trading date, so an ETH bar at 19:00 on Sunday counts as Monday; a
  weekly or longer bar is dated by its first trading date, as it is labelled. hour() and
  minute() use the bar's own wall-clock time.
- date() is a datetime at midnight: it groups and sorts by date and compares with text
  dates: date() == '2024-03-15'.
- dayname() is 'Mon'..'Sun' as an ordered category, so groups come out Monday first.
- rank(x) is a percentile rank, 0–100: the percentage of the period's rows whose value is
  ≤ this one. It and the running functions (cumsum, cummax, cummin) start at the period:
  "cumulative return in 2024" and "the top 10% of 2025's ranges" are about that period,
  whereas a streak or bars_since running into it began whenever it began. group_by does not
  restart them; their unit does (cummax(close, 'year'): each year from its first bar), keyed
  by the trading date (a weekly or longer bar by its label date).
- count() counts rows; count(cond) counts rows where cond is true; count(x) counts rows
  where x is not missing.
- first(x) and last(x) take x on each group's earliest (latest) row, missing if x is
  missing there: columns picked side by side (first(date()), first(ret)) are one row's.
- arg_max(arg, val) and arg_min(arg, val): ties go to the earliest row. Each group gives one
  answer, so counting those answers counts every day once even when two hours touch the
  same high. A warning names the rows tied with the one shown: all of them for a single
  (ungrouped) answer; for groups, how many groups hold a tie, each named when 20 or fewer
  (else the first few).
- mode(x): the most frequent value, ties to the one seen first (the earliest row), said
  as arg_max's are; a value of x's own kind (a time label, a date), missing values skipped.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pandas as pd

from barb.bar_labels import label_column, unit_label
from barb.errors import ArgumentError, BarbError, TypeMismatch, UnknownColumn
from barb.frames import period_start
from barb.result import CutRun
from barb.script import ast, group_ranks
from barb.script.bars_before import BAR_COLUMNS, Extreme
from barb.script.clock_order import clocks
from barb.script.conditions import as_known, as_numbers, condition, is_condition
from barb.script.context import EvalContext, RowGroups
from barb.script.day_fields import day_field
from barb.script.event_history import settled
from barb.script.functions import (
    KIND_NAMES,
    Accepts,
    ConditionUnit,
    Param,
    UnitRule,
    register,
    value_kind,
)
from barb.script.group_ranks import Method
from barb.script.then_date_parts import is_date_part, then_date_part_hint
from barb.script.warmup import (
    RESTART_UNITS,
    Reach,
    ema_bars,
    everything,
    period_rows_or_unit,
    period_rows_or_whole_unit,
    period_rows_seen_from_history,
    window,
)
from barb.sessions import MINUTES_PER_DAY
from barb.time_zones import aliases_text, zone_minutes, zone_name
from barb.timeframes import timeframe

DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")

_X = Param("x")
_COL = Param("col")
_ANY = Param("col", accepts="any")
_COND = Param("cond", accepts="condition")
_N = Param("n", "int", min=1)
_SESSION = Param("session", "string")


# --- scalar -------------------------------------------------------------------------------


@register("abs", category="scalar", params=(_X,), summary="Absolute value.", unit="same")
def _abs(ctx: EvalContext, x: pd.Series) -> pd.Series:
    return x.abs()


@register(
    "log",
    unit="number",
    category="scalar",
    params=(_X,),
    summary="Natural logarithm; NaN for values ≤ 0.",
    example="log(close / prev(close))",
)
def _log(ctx: EvalContext, x: pd.Series) -> pd.Series:
    return np.log(x.where(x > 0))


@register(
    "exp",
    unit="number",
    category="scalar",
    params=(_X,),
    summary="e to the power x: exp(cumsum(log(1 + r))) compounds returns r.",
    example="exp(cumsum(log(close / prev(close))))",
)
def _exp(ctx: EvalContext, x: pd.Series) -> pd.Series:
    # Past e**709 a float overflows to inf, which the evaluator empties and says.
    with np.errstate(over="ignore"):
        return np.exp(x)


@register(
    "coalesce",
    unit="same",
    category="scalar",
    params=(_X, Param("y", accepts="any")),
    summary="x, or y where x is empty: coalesce(exit_pts, close - open).",
    example="coalesce(next(close), close)",
)
def _coalesce(ctx: EvalContext, x: pd.Series, y: pd.Series) -> pd.Series:
    if value_kind(x) != value_kind(y) and {value_kind(x), value_kind(y)} != {"number"}:
        raise TypeMismatch(
            f"coalesce() needs x and y of the same kind, got {KIND_NAMES[value_kind(x)]} and "
            f"{KIND_NAMES[value_kind(y)]}.",
            step=ctx.step,
            hint="e.g. coalesce(next(close), close)",
        )
    return x.where(x.notna(), y)


@register(
    "sqrt",
    category="scalar",
    params=(_X,),
    summary="Square root; NaN for negatives.",
    unit="number",
)
def _sqrt(ctx: EvalContext, x: pd.Series) -> pd.Series:
    return np.sqrt(x.where(x >= 0))


@register("sign", category="scalar", params=(_X,), summary="Sign of x: -1, 0 or 1.", unit="scalar")
def _sign(ctx: EvalContext, x: pd.Series) -> pd.Series:
    return np.sign(x)


@register(
    "round",
    unit="same",
    category="scalar",
    params=(_X, Param("n", "int", default=0, min=-10, max=10)),
    summary="Round to n decimals, halves away from zero (2.5 → 3, 97.65 → 97.7); n < 0 rounds "
    "to tens, hundreds….",
    example="round(mean(range), 1)",
)
def _round(ctx: EvalContext, x: pd.Series, n: int) -> pd.Series:
    if x.dtype.kind in "iu" and n >= 0:
        return x
    scaled = x.to_numpy(dtype=np.float64) * 10.0**n
    # Rounding the scaled value to 9 places first undoes binary noise, so that 1.005 * 100
    # (= 100.49999999999999) rounds like the 100.5 the person wrote.
    with np.errstate(invalid="ignore"):
        scaled = np.round(scaled, 9)
        rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
    return pd.Series(rounded / 10.0**n, index=x.index)


def _to_step(
    name: str, toward: Any, summary: str, example: str, accepts: Accepts = "number"
) -> None:
    @register(
        name,
        unit="same",
        category="scalar",
        params=(Param("x", accepts=accepts), Param("step", "number", default=1, min=1e-9)),
        summary=summary,
        example=example,
    )
    def impl(ctx: EvalContext, x: pd.Series, step: float) -> pd.Series:
        if value_kind(x) == "string":  # times of day: the argument check lets no other text in
            return _clock_step(ctx, name, x, step, toward)
        # To 9 places first, as round(): 0.3 / 0.1 is 2.9999999999999996, which is 3 steps.
        with np.errstate(invalid="ignore"):
            steps = np.round(x.to_numpy(dtype=np.float64) / step, 9)
            return pd.Series(toward(steps) * step, index=x.index)


def _clock_step(ctx: EvalContext, name: str, x: pd.Series, step: float, toward: Any) -> pd.Series:
    """Times of day ('10:47') to their slot of ``step`` minutes counted from midnight, as
    time() writes them (floor(time(), 30): '10:30'), so that they group and sort as time()'s:
    a half-hour label had been out of reach, time() being text (p38b Q24)."""
    if step != int(step):
        raise ArgumentError(
            f"{name}() of a time of day takes a step in whole minutes, got {step:g}.",
            step=ctx.step,
            hint=f"{name}(time(), 30): each bar's half hour, '10:30' for 10:47",
        )
    found = clocks(x)
    assert found is not None  # what the argument check let through
    minutes = (toward(found.values / step) * step).astype(np.int64) % MINUTES_PER_DAY
    codes = np.where(found.codes >= 0, minutes[found.codes], -1)
    slots = pd.Categorical.from_codes(codes, categories=list(CLOCK_TIMES), ordered=True)
    return pd.Series(slots, index=x.index)


_to_step(
    "floor",
    np.floor,
    "Multiple of step at or below x, negatives too (histogram bins); floor(time(), 30): "
    "the bar's half hour, 'HH:MM'.",
    "floor(ret_pct, 0.5)",
    accepts="number_or_clock",
)
_to_step("ceil", np.ceil, "Multiple of step at or above x.", "ceil(range, 10)")


@register(
    "if",
    unit="branches",
    category="scalar",
    params=(
        Param("cond", accepts="condition", keeps_unknown=True),
        Param("then", accepts="any"),
        Param("else", accepts="any"),
    ),
    summary="cond true: then; false: else; unknown: empty.",
    example="if(close > open, 'up', 'down')",
)
def _if(ctx: EvalContext, cond: pd.Series, then: pd.Series, other: pd.Series) -> pd.Series:
    kinds = {value_kind(then), value_kind(other)}
    if len(kinds) > 1 and not kinds <= {"number", "bool"}:
        a, b = (KIND_NAMES[value_kind(v)] for v in (then, other))
        raise TypeMismatch(
            f"if() needs then and else of the same kind, got {a} and {b}.",
            step=ctx.step,
            hint="e.g. if(close > open, 1, 0) or if(close > open, 'up', 'down')",
        )
    # An unknown condition picks neither branch: "was the next day up or down" has no
    # answer on the data's last day, and calling it "down" would count it as one.
    unknown = cond.isna().to_numpy() if isinstance(cond.dtype, pd.BooleanDtype) else None
    true = as_known(cond).to_numpy(dtype=bool)
    if any(isinstance(v.dtype, pd.BooleanDtype) for v in (then, other)):
        if kinds == {"bool"}:  # true, false or unknown either way
            out = then.astype("boolean").where(true, other.astype("boolean"))
            return out if unknown is None else out.mask(unknown)
        then, other = (as_numbers(v) for v in (then, other))
    values = [_uncategorized(v).to_numpy() for v in (then, other)]
    if len(kinds) > 1:  # a number and a condition: the condition counts as 1/0
        values = [v.astype(np.float64) for v in values]
    out = pd.Series(np.where(true, *values), index=cond.index)
    if unknown is None or not unknown.any():
        return out
    if out.dtype == np.bool_:  # true/false branches: unknown stays a condition's unknown
        return out.astype("boolean").mask(unknown)
    return out.mask(unknown)  # numbers become floats with NaN, text None, dates NaT


def _uncategorized(series: pd.Series) -> pd.Series:
    if isinstance(series.dtype, pd.CategoricalDtype):
        return series.astype(object)
    return series


# --- lag ----------------------------------------------------------------------------------


def _shift(series: pd.Series, periods: int) -> pd.Series:
    if series.dtype == np.bool_:  # a condition with nothing before the start is unknown
        series = series.astype("boolean")
    return series.shift(periods)


@register(
    "prev",
    unit="same",
    category="lag",
    params=(_ANY, Param("n", "int", default=1, min=1)),
    summary="The value n rows earlier (missing for the first n rows).",
    reach=lambda a: Reach(a["n"]),
    example="close - prev(close)",
)
def _prev(ctx: EvalContext, col: pd.Series, n: int) -> pd.Series:
    return _shift(col, n)


@register(
    "next",
    unit="same",
    category="lag",
    params=(_ANY, Param("n", "int", default=1, min=1)),
    summary="The value n rows later (NaN for the last n rows); looks ahead.",
    reach=lambda a: Reach(0, a["n"]),
    example="next(close) - close",
)
def _next(ctx: EvalContext, col: pd.Series, n: int) -> pd.Series:
    return _shift(col, -n)


@register(
    "ffill",
    unit="same",
    category="lag",
    params=(_ANY,),
    summary="col, an empty row taking the last value before it: ffill(if(c, close, 0 / 0)) is "
    "the close when c last held.",
    example="ffill(if(fomc, close, 0 / 0))",
    # The last value may be any number of rows back: a period reads back to it.
    reach=everything,
    forgets=True,
)
def _ffill(ctx: EvalContext, col: pd.Series) -> pd.Series:
    if col.dtype == np.bool_:  # a condition is never empty: nothing to fill
        return col
    settled(ctx, col.notna().to_numpy())
    return col.ffill()


# --- window -------------------------------------------------------------------------------


# rolling_mean(volume, 20, 'time'): the n rows at the bar's own time of day, one a trading
# date (the last 20 days at 10:00), so a bar's volume is read against its own slot: the
# plain window at the open holds yesterday's quiet last bars. Its warm-up is n days of bars
# at most one a minute.
_BY = Param("by", "string", default=None, choices=("time",))


def _by_time_reach(args: dict[str, Any]) -> Reach:
    if args.get("by") is None:
        return Reach(args["n"] - 1)
    return Reach(args["n"] * MINUTES_PER_DAY)


def _rolling(
    name: str,
    how: str,
    summary: str,
    unit: UnitRule = "same",
    of_condition: ConditionUnit | None = None,
) -> None:
    @register(
        name,
        category="window",
        params=(_COL, _N, _BY),
        summary=summary,
        example=f"{name}(range, 20)",
        reach=_by_time_reach,
        unit=unit,
        of_condition=of_condition,
    )
    def impl(ctx: EvalContext, col: pd.Series, n: int, by: str | None) -> pd.Series:
        def reduce(values: pd.Series) -> pd.Series:
            rows = values.rolling(n, min_periods=n)
            return rows.std(ddof=1) if how == "std" else getattr(rows, how)()

        if by is None:
            return reduce(col)
        stamps = _column(ctx, "timestamp", name)
        slot = (stamps.dt.hour * 60 + stamps.dt.minute).to_numpy()
        return col.astype(np.float64).groupby(slot, sort=False).transform(reduce)


_rolling(
    "rolling_mean",
    "mean",
    # The window holds today's bar: relative volume against it read 1.008 at NQ's 09:45 of
    # 2026-01-07 where the 20 days before give 0.974 (p35a C).
    "Mean of the n rows; by='time': the last n days at this time, today's too; relative "
    "volume: volume * 20 / (rolling_sum(volume, 21, 'time') - volume).",
    of_condition="share",
)
_rolling("rolling_sum", "sum", "Sum of the n rows.", of_condition="count")
_rolling("rolling_max", "max", "Highest of the n rows.")
_rolling("rolling_min", "min", "Lowest of the n rows.")
_rolling(
    "rolling_std",
    "std",
    "Sample standard deviation.",
    unit="spread",
)


@register(
    "rolling_correlation",
    unit="scalar",
    category="window",
    params=(Param("col1"), Param("col2"), _N),
    summary="Correlation of col1 and col2 (all n rows with both).",
    example="rolling_correlation(nq_ret, es_ret, 60)",
    reach=window("n"),
)
def _rolling_correlation(ctx: EvalContext, a: pd.Series, b: pd.Series, n: int) -> pd.Series:
    x, y = a.astype(np.float64), b.astype(np.float64)
    return x.rolling(n, min_periods=n).corr(y)


@register(
    "rolling_count",
    unit="count",
    category="window",
    params=(_COND, _N),
    summary="How many of the n rows meet cond.",
    reach=window("n"),
    example="rolling_count(close > open, 5)",
)
def _rolling_count(ctx: EvalContext, cond: pd.Series, n: int) -> pd.Series:
    return cond.astype(np.int64).rolling(n, min_periods=n).sum()


@register(
    "rolling_rank",
    unit="percentile",
    category="window",
    params=(_COL, _N),
    summary="Percentile rank 0–100 among the n rows, as rank().",
    reach=window("n"),
    example="rolling_rank(range, 252) <= 10",
)
def _rolling_rank(ctx: EvalContext, col: pd.Series, n: int) -> pd.Series:
    # rank() over a trailing window, so a squeeze is read against the year before it, not
    # against later rows: "max" counts the ties at or below this value, as rank() does.
    values = col.astype(np.float64)
    return values.rolling(n, min_periods=n).rank(method="max", pct=True) * 100


@register(
    "ema",
    unit="same",
    category="window",
    params=(_COL, _N),
    summary="EMA, alpha = 2/(n+1), seeded with the first n's mean (as TA-Lib).",
    example="ema(close, 20)",
    reach=lambda a: Reach(ema_bars(a["n"])),
)
def _ema(ctx: EvalContext, col: pd.Series, n: int) -> pd.Series:
    values = col.to_numpy(dtype=np.float64)
    seed = col.astype(np.float64).rolling(n, min_periods=n).mean().to_numpy()
    ready = ~np.isnan(seed)
    if not ready.any():
        return pd.Series(np.nan, index=col.index)
    # Before the seed: NaN; at it: the SMA; after it: the data. ewm (adjust=False) starts at
    # the first non-NaN value, so it continues from the SMA; a later missing value carries
    # the previous average forward.
    start = int(np.argmax(ready))
    staged = values.copy()
    staged[:start] = np.nan
    staged[start] = seed[start]
    smoothed = pd.Series(staged, index=col.index).ewm(alpha=2 / (n + 1), adjust=False)
    return smoothed.mean()


# --- cumulative ---------------------------------------------------------------------------

RESTART = Param("per", "string", default=None, choices=tuple(RESTART_UNITS))


def _in_period(ctx: EvalContext, col: pd.Series) -> pd.Series:
    """``col`` on the period's rows, missing on the history before it (and after it)."""
    return col if ctx.period is None else col.where(ctx.period)


def _running(ctx: EvalContext, col: pd.Series, per: str | None, function: str) -> Any:
    """``col`` in the period, as one run (``per`` None) or grouped by the trading date's
    calendar ``per`` (a run per day, week…), ready for cummax(), cumsum()…. A run per unit
    reads the whole unit, its bars before the period too (``period_rows_or_unit``): the
    period 2024-03 starts on Friday 03-01, and cummax(high, 'week') there is the week of
    02-26's high so far, not Friday's alone."""
    if per is None:
        return _in_period(ctx, col)
    return col.groupby(restart_keys(ctx, per, function), sort=False)


def restart_keys(ctx: EvalContext, per: str, function: str) -> np.ndarray:
    """Each row's calendar ``per`` (its trading date, or its week's, month's… start): the
    rows ``function`` (rank, cumsum …) restarts at, read by a caveat too. A second stage's
    rows are dated by the first stage's date() key when it has one (``row_dates``)."""
    if ctx.step.startswith("then") and ctx.row_dates in ctx.frame.columns:
        dates = ctx.frame[ctx.row_dates].to_numpy(dtype="datetime64[ns]")
        _refuse_a_restart_on_every_row(ctx, per, function, dates)
    else:
        try:
            dates = _dates(ctx, function).to_numpy(dtype="datetime64[ns]")
        except UnknownColumn as error:
            if not ctx.step.startswith("then"):
                raise
            message = (
                f"{function}() restarts each {per} by the bars' dates, and a then stage's "
                "rows have none."
            )
            hint = _restart_hint(function, per)
            raise UnknownColumn(message, step=ctx.step, hint=hint) from error
    unit = RESTART_UNITS[per]
    return dates if unit == "daily" else np.where(np.isnat(dates), dates, period_start(dates, unit))


def _refuse_a_restart_on_every_row(
    ctx: EvalContext, per: str, function: str, dates: np.ndarray
) -> None:
    """A second stage's rows one a trading date (the first stage grouped by date()) restart
    each day on every row: streak(pnl < 0, 'day') over an ORB backtest's trades is never
    more than 1, where streak(pnl < 0) gives the losing trades in a row (p38b Q15)."""
    if per != "day" or len(dates) < 2 or (dates[1:] == dates[:-1]).any():
        return
    example = (
        ": streak(pnl < 0) is the losing trades (days) in a row" if function == "streak" else ""
    )
    raise ArgumentError(
        f"{function}(x, 'day') restarts each trading date, and each row here is one (the "
        "first stage's groups by date()): it would start again on every row.",
        step=ctx.step,
        hint=f"{function}(x) without 'day' runs across the dates, over the rows in their "
        f"order{example}; 'week', 'month', 'quarter' and 'year' restart by the rows' dates.",
    )


def _restart_hint(function: str, per: str) -> str:
    """Where a running function restarting each ``per`` runs: in the first stage, whose
    rows are bars with dates. "The share of each year's return made on its 10 best days"
    ranked per year in then.map and was told to put rank() in "group_by": ["rank()",
    "date()"]; "the 3 biggest down days of each year" wrote rank(ret, 'year') <= 2 there,
    a percentile read as a count, and the hint's count of the year's rows from two ranks
    and a cumsum worked but read as a puzzle (p39b Q2): place() counts them."""
    how = f"{function}(x, '{per}')"
    hint = (
        "a second stage's rows are the first stage's table, with no dates to restart by: "
        f'run it in the first stage\'s map ("{function}_{per}": "{how}", over the period\'s '
        "bars, before its where) and select it for the second stage"
    )
    if function not in ("rank", "place"):
        return hint
    return (
        f'{hint}. The N highest x of each {per}, in the first stage: "where": '
        f"\"place(x, '{per}') <= N\" (the N lowest: place(-x, '{per}') <= N); "
        "rank() is a percentile, 0-100, not a count"
    )


@register(
    "cummax",
    unit="same",
    category="cumulative",
    params=(_COL, RESTART),
    summary="Highest so far, from the period's first bar (or each per's).",
    example="cummax(close, 'year')",
    reach=period_rows_seen_from_history,
)
def _cummax(ctx: EvalContext, col: pd.Series, per: str | None) -> pd.Series:
    if per is None and ctx.running_from_history:
        return _in_period(ctx, _from_history(ctx, col, col.cummax(), highest=True))
    running = _running(ctx, col, per, "cummax").cummax()
    if per is None:
        _warn_history_beyond(ctx, col, running, "cummax")
    return running


@register(
    "cummin",
    unit="same",
    category="cumulative",
    params=(_COL, RESTART),
    summary="As cummax, the lowest.",
    example="cummin(low, 'day')",
    reach=period_rows_seen_from_history,
)
def _cummin(ctx: EvalContext, col: pd.Series, per: str | None) -> pd.Series:
    if per is None and ctx.running_from_history:
        return _in_period(ctx, _from_history(ctx, col, col.cummin(), highest=False))
    running = _running(ctx, col, per, "cummin").cummin()
    if per is None:
        _warn_history_beyond(ctx, col, running, "cummin")
    return running


def _extreme_before(ctx: EvalContext, col: pd.Series, highest: bool) -> Extreme | None:
    """The highest (lowest) of ``col`` over the data's bars before the first stage's rows,
    when those begin after its first bar because ``col`` is a bar's own column
    (``barb.script.reach.extreme_of_bars``); None when nothing lies before them."""
    cut, before = ctx.history_cut, ctx.bars_before
    if cut is None or before is None or ctx.period is not cut.period:
        return None  # all history is in the frame, or another frame (a caveat's)
    if col.name not in BAR_COLUMNS:
        raise AssertionError(f"rows cut short of a running extreme of {col.name!r}")
    return before.extreme(str(col.name), highest)


def _from_history(ctx: EvalContext, col: pd.Series, running: pd.Series, highest: bool) -> Any:
    """``running`` (col's cummax or cummin over the frame) as over all history: raised
    (lowered) to the extreme before the frame's first row, NaN rows left NaN as pandas'."""
    prior = _extreme_before(ctx, col, highest)
    if prior is None:
        return running
    value: float | int = prior.value
    if running.dtype.kind in "iu":
        value = int(value)  # a volume: integers stay integers
    return running.clip(lower=value) if highest else running.clip(upper=value)


def _warn_history_beyond(
    ctx: EvalContext, col: pd.Series, running: pd.Series, function: str
) -> None:
    """A running high (low) starts at the period's first bar, by definition; when the bars
    before the period went higher (lower), it is the period-to-date's, not all history's:
    "new all-time highs in 2025" as high > prev(cummax(high)) over the period 2025 counted
    22 new highs of 2025, where history holds 11. Said, with the way to all history, once the
    stage has found that the answer changes when read from history
    (``barb.caveats.running_history``).
    ``col`` holds the history (``period_rows_seen_from_history``)."""
    period = ctx.period
    if period is None:
        return
    inside = np.asarray(period, dtype=bool)
    if not inside.any():
        return
    first = int(np.argmax(inside))
    before = pd.to_numeric(col.iloc[:first], errors="coerce")
    start = pd.to_numeric(running[inside], errors="coerce").dropna()
    highest = function == "cummax"
    # The bars before the frame's first row, when it is not the data's: the earlier bar
    # wins a tie, as np.nanargmax over all history finds the first.
    prior = _extreme_before(ctx, col, highest)
    if (not before.notna().any() and prior is None) or not len(start):
        return
    dates = _dates(ctx, function)
    when = _column(ctx, "timestamp", function) if ctx.intraday else dates
    if before.notna().any():
        at = int(np.nanargmax(before) if highest else np.nanargmin(before))
        beyond, went = float(before.iloc[at]), when.iloc[at]
    if prior is not None and (
        not before.notna().any() or (prior.value >= beyond if highest else prior.value <= beyond)
    ):
        beyond = prior.value
        went = prior.timestamp if ctx.intraday else prior.trading_date
    opening = float(start.iloc[0])
    if (beyond <= opening) if highest else (beyond >= opening):
        return
    starts = when.iloc[first]
    extreme = "highest" if highest else "lowest"
    # One sentence for every running high of the period (cummax(close), cummax(high)): the
    # first one's numbers show it.
    opening = f"{function}() starts at the period's first bar ({_moment(starts, ctx.intraday)})"
    if any(said.startswith(opening) for said in ctx.history_beyond):
        return
    ctx.history_beyond.append(
        f"{opening}, and the bars before it went {'higher' if highest else 'lower'}: "
        f"{beyond:.10g} on {_moment(went, ctx.intraday)}. It is the {extreme} since the "
        "period began, not of all history; for all-time highs or lows leave the period out "
        f"and pick the rows with where (year() == {pd.Timestamp(dates.iloc[first]).year}) or "
        "sort and limit."
    )


@register(
    "cumprod",
    unit="number",
    category="cumulative",
    params=(_COL, RESTART),
    summary="Running product from the period's first bar (or each per's): cumprod(1 + r).",
    example="cumprod(close / prev(close), 'year')",
    reach=period_rows_or_unit,
)
def _cumprod(ctx: EvalContext, col: pd.Series, per: str | None) -> pd.Series:
    # A product of prices (cumprod(open)) passes float's range within a few hundred bars:
    # past it the value is inf, not a floating-point error, which the evaluator empties and
    # says.
    with np.errstate(over="ignore", invalid="ignore"):
        return _running(ctx, col, per, "cumprod").cumprod()


@register(
    "cumsum",
    unit="same",
    of_condition="count",
    category="cumulative",
    params=(_COL, RESTART),
    summary="Running total from the period's first bar (or each per's); missing skipped.",
    example="cumsum(close - prev(close), 'month')",
    reach=period_rows_or_unit,
)
def _cumsum(ctx: EvalContext, col: pd.Series, per: str | None) -> pd.Series:
    return _running(ctx, col, per, "cumsum").cumsum()


# --- pattern ------------------------------------------------------------------------------


@register(
    "streak",
    unit="count",
    category="pattern",
    params=(Param("cond", accepts="condition", keeps_unknown=True, named=True), RESTART),
    summary="Consecutive rows meeting cond up to this one (0 if false; unknown skipped, "
    "empty); per restarts it.",
    example="streak(close < open, 'day') >= 3",
    reach=everything,
    forgets=True,
)
def _streak(ctx: EvalContext, cond: pd.Series, per: str | None) -> pd.Series:
    """Rows where cond is unknown are no observation, as an empty value is to cumsum(): the
    run neither grows nor ends there, and their own count is empty. The losing trades in a
    row of a backtest whose pnl is empty on the days without a trade (if(traded == 1, …,
    0 / 0)) run across those days; read as false, each one ended the run, and read as a
    loss (close - entry on a day without a break) one ORB's 6 losses in a row read 9 (p39a
    M1)."""
    unknown = cond.isna().to_numpy() if isinstance(cond.dtype, pd.BooleanDtype) else None
    true = as_known(cond).to_numpy(dtype=bool)
    positions = np.arange(len(true))
    ends = ~true if unknown is None else ~true & ~unknown
    stops = np.where(ends, positions, -1)  # a false row ends a run
    if per is not None:  # so does the row before each day's (week's…) first
        keys = restart_keys(ctx, per, "streak")
        first = np.concatenate(([True], keys[1:] != keys[:-1]))
        stops = np.maximum(stops, np.where(first, positions - 1, -1))
    # A run's count needs no row before the last stop: the rows read back to one.
    settled(ctx, stops >= 0)
    counted = np.cumsum(true)  # true rows up to each one
    last_stop = np.maximum.accumulate(stops)
    before = np.where(last_stop >= 0, counted[np.maximum(last_stop, 0)], 0)
    runs = counted - before
    # Each true row's run's first row, its first true one after the stop; past the row on
    # the others (in no run, or unknown).
    starts = positions + 1
    starts[true] = np.flatnonzero(true)[before[true]]
    _warn_run_before_period(ctx, runs, starts, counted, str(cond.name or "cond"))
    # A second stage's rows are the first stage's table, in its order: a run of them (the
    # losing trades in a row) goes across days as meant, and they carry no bar times.
    if per is None and ctx.intraday and not ctx.step.startswith("then"):
        _warn_run_across_days(ctx, starts)
    if unknown is None or not unknown.any():
        return pd.Series(runs, index=cond.index)
    return pd.Series(np.where(unknown, np.nan, runs), index=cond.index)


def _warn_run_across_days(ctx: EvalContext, starts: np.ndarray) -> None:
    """On intraday bars a run goes on through the night: "3 red hours in a row" counted
    yesterday's last hours with today's first. Said, with the way to restart each day; not
    where each date has one bar (a session of one bar), whose runs are runs of days.
    ``starts``: each row's run's first row (past the row itself when it is in none)."""
    days = _dates(ctx, "streak").to_numpy(dtype="datetime64[ns]")
    positions = np.arange(len(starts))
    first = np.concatenate(([True], days[1:] != days[:-1]))
    if first.all():
        return
    day_start = np.maximum.accumulate(np.where(first, positions, 0))
    across = starts < day_start
    if ctx.period is not None:
        across &= np.asarray(ctx.period, dtype=bool)
    if across.any():
        ctx.warn(
            f"streak() runs on across sessions: {int(across.sum()):,} of the rows count bars "
            "of an earlier trading date; streak(cond, 'day') restarts the count each day."
        )


def _warn_run_before_period(
    ctx: EvalContext, runs: np.ndarray, starts: np.ndarray, counted: np.ndarray, cond: str
) -> None:
    """A streak read in the period counts the run's rows before it too (by design: the run
    began whenever it began), so "the longest down run in 2021" can be 7 days of which 3
    were in 2020: say which run that is, when a row the stage keeps ends in it ("3 down days
    in a row in 2025" with where run == 3 kept no row of the 7-day run that opened 2025).
    ``starts``: each row's run's first row; ``counted``: the true rows up to each row;
    ``cond``: the condition as the query wrote it.

    An answer that reads the streak only against a number (``ctx.streak_reads``: "where":
    "streak(close < prev(close)) >= 3") is told of the kept rows that comparison holds on
    with the rows before the period and not counted from its start (or the other way), in
    one sentence: the period's longest run, and "a count of the rows at one length (== 3)"
    under a where of >= 3, had answered a question not asked (p48d C4). Nothing when no kept
    row changes side: a count of 3+ down days is the same from the period's start."""
    period = ctx.period
    if period is None or not period.any():
        return
    first = int(np.argmax(period))
    # Rows are in time order: only one run can begin before the period's start and go on
    # into it, the one the period opens in.
    crossing = period & (starts < first)
    if not crossing.any():
        return
    if crossing[period].all():
        # Every row of the period is in that run ("how many days in a row now", with
        # last_1_bars): counted from the period's start it is the period's own length, no
        # other reading of the run ("the longest run is 1" beside the current 2, p48f M4).
        return
    when = _dates(ctx, "streak") if not ctx.intraday else _column(ctx, "timestamp", "streak")
    # Monthly and longer bars by their label (2026-01): a month's first trading date read
    # as the day the run ended, though it runs to the month's close.
    labels = label_column(ctx.frame, ctx.timeframe) if timeframe(ctx.timeframe).calendar else None
    counted_before = int(counted[first - 1]) if first else 0

    def named(row: int) -> str:
        return str(labels[1][row]) if labels is not None else _moment(when.iloc[row], ctx.intraday)

    # The runs counted from the period's first row: the crossing run's rows in it alone.
    alone = np.where(crossing, counted - counted_before, runs)
    inside = alone[period]
    longest = int(inside.max())
    longest_end = int(np.flatnonzero(period)[int(np.argmax(inside))])
    unit = _period_unit(ctx, period)
    form = (
        f"streak({cond}, '{unit}')"
        if unit is not None
        else "streak() in a then stage over the rows the first stage lists"
    )
    reads = ctx.streak_reads(cond) if ctx.streak_reads is not None else None
    opening = int(np.flatnonzero(crossing)[0])
    # The run's true rows before the period (an unknown row between is none of them).
    before = counted_before - int(counted[opening] - runs[opening])
    run = f"the run from {named(int(starts[opening]))}, {before} of its rows before the period"

    def compared(kept: np.ndarray) -> str | None:
        assert reads is not None
        rows = np.flatnonzero(crossing & kept)
        for comparison in reads:
            holds, counted_alone = _holds(comparison, runs[rows]), _holds(comparison, alone[rows])
            moved = rows[holds != counted_alone]
            if not len(moved):
                continue
            lost = bool(holds[holds != counted_alone][0])
            moved = moved[_holds(comparison, runs[moved]) == lost]
            dates = [named(int(row)) for row in moved[:3]]
            more = f" and {len(moved) - 3} more" if len(moved) > 3 else ""
            return (
                f"{comparison.to_text()} {'holds' if lost else 'does not hold'} on "
                f"{', '.join(dates)}{more} as streak() reads {_span(runs[moved])} there, "
                f"counting {run}; {form} counts from the period's start and reads "
                f"{_span(alone[moved])}, where it {'does not hold' if lost else 'holds'}."
            )
        return None

    def longest_run(kept: np.ndarray) -> str | None:
        rows = np.flatnonzero(crossing & kept)
        if not len(rows):
            return None
        end = int(rows[np.argmax(runs[rows])])
        length = int(runs[end])
        ends, begins, own_end = named(end), named(int(starts[end])), named(longest_end)
        message = (
            f"streak() counts the run ending {ends} ({length}) from {begins}, {before} of its "
            f"rows before the period; within the period alone the longest run is {longest}, "
            f"ending {own_end}, as {form} counts it."
        )
        ctx.cut_runs[message] = CutRun(
            length=length, ended=ends, began=begins, inside=longest, inside_end=own_end
        )
        return message

    ctx.warn_rows(longest_run if reads is None else compared)


def _holds(comparison: ast.Compare, values: np.ndarray) -> np.ndarray:
    """Whether ``comparison`` of a streak with a number (run >= 3, 3 <= run) holds where the
    streak reads ``values``."""
    number = ast.literal_value(comparison.right)
    left = isinstance(number, int | float) and not isinstance(number, bool)
    if not left:
        number = ast.literal_value(comparison.left)
    compare = _COMPARE[comparison.op]
    return np.asarray(compare(values, number) if left else compare(number, values), dtype=bool)


_COMPARE = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def _span(values: np.ndarray) -> str:
    """ "4-6": the lowest and highest of ``values``; "6" when they are one."""
    low, high = int(values.min()), int(values.max())
    return str(low) if low == high else f"{low}-{high}"


# The calendar units a period can be, finest first, as streak()'s per names them.
_PERIOD_UNITS = ("day", "week", "month", "quarter", "year")


def _period_unit(ctx: EvalContext, period: np.ndarray) -> str | None:
    """The calendar unit whose restart is the period's start, for a period that is one
    such unit ("2025", "2024-03", "last_week"): its rows share one and the row before is in
    another, so streak(cond, 'year') under "2025" counts 2025's rows alone. None for a
    period of several units or part of one (2024-02-15 to 2024-03-28). The unit the period
    names first: "2026" on data ending 2026-01-07 is a month's rows too, and had been
    offered streak(cond, 'month') (p46t minor)."""
    dates = _dates(ctx, "streak").to_numpy(dtype="datetime64[ns]")
    first = int(np.argmax(period))
    units = _PERIOD_UNITS if ctx.intraday else _PERIOD_UNITS[1:]
    if ctx.period_unit in units:
        units = (ctx.period_unit, *units)
    for per in units:
        unit = RESTART_UNITS[per]
        keys = dates if unit == "daily" else period_start(dates, unit)
        own = keys[period]
        if (own == own[0]).all() and (first == 0 or keys[first - 1] != own[0]):
            return per
    return None


def _moment(value: Any, intraday: bool) -> str:
    stamp = pd.Timestamp(value)
    return f"{stamp:%Y-%m-%d %H:%M}" if intraday else f"{stamp:%Y-%m-%d}"


@register(
    "bars_since",
    unit="count",
    category="pattern",
    params=(_COND,),
    summary="Rows since cond was last true (0 on a true row; NaN before the first true).",
    example="bars_since(volume > 2 * rolling_mean(volume, 20))",
    reach=everything,
    forgets=True,
)
def _bars_since(ctx: EvalContext, cond: pd.Series) -> pd.Series:
    true = cond.to_numpy(dtype=bool)
    settled(ctx, true)
    positions = np.arange(len(true))
    last_true = np.maximum.accumulate(np.where(true, positions, -1))
    since = (positions - last_true).astype(np.float64)
    since[last_true < 0] = np.nan
    return pd.Series(since, index=cond.index)


@register(
    "rank",
    unit="percentile",
    category="pattern",
    params=(_COL, RESTART),
    summary="Percentile rank 0–100: the % of the period's rows ≤ this one (100 = the "
    "highest); per: within each.",
    example="rank(range) >= 90",
    reach=period_rows_or_whole_unit,
)
def _rank(ctx: EvalContext, col: pd.Series, per: str | None) -> pd.Series:
    keys = None if per is None else restart_keys(ctx, per, "rank")
    return _ranked(ctx, col, keys, method="max", ascending=True, pct=True) * 100


def _ranked(
    ctx: EvalContext,
    col: pd.Series,
    keys: np.ndarray | None,
    *,
    method: Method,
    ascending: bool,
    pct: bool = False,
) -> pd.Series:
    """``col`` ranked for rank() and place(): among the period's rows, or within each unit
    of ``keys`` (``restart_keys``: the trading date's day, week…) over the whole unit, its
    bars before and after the period too (``period_rows_or_whole_unit``), as a running
    total per unit reads its unit: from 2024-03-15, rank(range, 'month') ranked each day
    among March's 10 days in the period alone; it is its place among all of March's."""
    if keys is None:
        return _in_period(ctx, col).rank(method=method, ascending=ascending, pct=pct)
    return group_ranks.ranks(col, keys, method=method, ascending=ascending, pct=pct)


@register(
    "place",
    unit="scalar",
    category="pattern",
    params=(Param("col", named=True), RESTART),
    summary="As rank(), counting 1, 2, 3… from the highest (ties by time): place(-ret, "
    "'year') <= 3 keeps each year's 3 biggest drops.",
    example="place(range, 'month') <= 5",
    reach=period_rows_or_whole_unit,  # as rank()
)
def _place(ctx: EvalContext, col: pd.Series, per: str | None) -> pd.Series:
    """rank() as a count: "the 3 biggest down days of each year" as rank(ret, 'year') <= 3
    kept 7 days a year (the lowest 3%), and the form that counted them was a formula of two
    ranks and a cumsum (p39b Q2). Equal values take their places in time order, so a pick
    of the first N keeps N rows."""
    numbers = pd.to_numeric(col, errors="coerce")
    values = _in_period(ctx, numbers) if per is None else numbers
    keys = None if per is None else restart_keys(ctx, per, "place")
    places = _ranked(ctx, numbers, keys, method="first", ascending=False)
    _warn_short_picks(ctx, str(col.name), per, values, places, keys)
    return places


def _warn_short_picks(
    ctx: EvalContext,
    text: str,
    per: str | None,
    values: pd.Series,
    places: pd.Series,
    keys: np.ndarray | None,
) -> None:
    """A where keeping place(x, per) <= N keeps N rows of each unit, whatever they hold: the
    data's last year with 4 days gave "its 3 biggest drops" as 2 drops and a +0.71% day.
    Said, when the rows kept are each unit's first N places: a unit with fewer than N rows
    with an x, and one whose picks include an x of 0 or less, having fewer than N above 0
    while others' picks are above it."""
    place = places.to_numpy(dtype="float64", na_value=np.nan)
    x = values.to_numpy(dtype="float64", na_value=np.nan)
    units = np.zeros(len(place), dtype="datetime64[ns]") if keys is None else keys
    dated = _row_times(ctx)
    times = None if dated is None else dated.to_numpy()

    def said(kept: np.ndarray) -> str | None:
        # Over the picked rows alone, and each unit's counts only for the few units that
        # could be short: frames and group-bys over every row took 7.9 of 13 s of each
        # day's last 30 minutes over NQ's 6.4 million 1m bars, near the time limit.
        valid = ~np.isnan(place)
        picked = kept & valid
        count = int(picked.sum())
        if not count or count == int(valid.sum()):
            return None  # no place kept, or every one: no pick
        rows = np.flatnonzero(picked)
        codes, picked_units = pd.factorize(units[rows])
        kept_n = np.bincount(codes)
        # Each unit's kept places are 1…k: a pick of the highest, not some other where.
        top = pd.Series(place[rows]).groupby(codes).max().to_numpy()
        if not (top == kept_n).all():
            return None
        n = int(kept_n.max())
        fewer = np.flatnonzero(kept_n < n)
        held = _unit_counts(units, valid, picked_units[fewer])
        short = [(picked_units[i], int(h)) for i, h in zip(fewer, held, strict=True) if h < n]
        low_rows = rows[x[rows] <= 0]
        if len(low_rows):
            low_units = pd.unique(units[low_rows])
            above = _unit_counts(units, valid & (x > 0), low_units)
            at = pd.Index(low_units).get_indexer(units[low_rows])
            own = pd.Index(picked_units).get_indexer(units[low_rows])
            low_rows = low_rows[above[at] < kept_n[own]]
        if not short and (not len(low_rows) or not (x[rows] > 0).any()):
            return None
        call = f"place({text})" if per is None else f"place({text}, '{per}')"
        each = "" if per is None else f" per {per}"
        parts = []
        if short:
            named = _unit_names(per, [u for u, _ in short], [h for _, h in short])
            parts.append(f"{named} {'holds' if len(short) == 1 else 'hold'} fewer, all kept")
        if len(low_rows):
            first = int(low_rows[0])
            when = "" if times is None else f" on {_moment(times[first], ctx.intraday)}"
            more = f" and {len(low_rows) - 1} more of 0 or less" if len(low_rows) > 1 else ""
            lows = list(dict.fromkeys(units[low_rows]))
            named = _unit_names(per, lows)
            parts.append(
                f"{named} {'has' if len(lows) == 1 else 'have'} fewer than {n} rows with "
                f"{text} above 0, so the picks include {text} = {x[first]:.4g}{when}{more}"
            )
        return f"{call} <= {n} keeps {n} rows{each}, but " + "; ".join(parts) + "."

    ctx.warn_rows(said)


def _unit_counts(units: np.ndarray, rows: np.ndarray, among: np.ndarray) -> np.ndarray:
    """How many of ``rows`` (a mask) each unit of ``among`` holds, in ``among``'s order: a
    pass over the rows only when there are units to count."""
    counts = np.zeros(len(among), dtype=np.int64)
    if not len(among):
        return counts
    among = np.asarray(among, dtype=units.dtype)
    order = np.argsort(among)
    inside = units[rows & np.isin(units, among)]
    counts[order] = np.bincount(np.searchsorted(among[order], inside), minlength=len(among))
    return counts


def _unit_names(per: str | None, units: list[Any], rows: list[int] | None = None) -> str:
    """ "2026", "2025 and 2026", "2019, 2020 and 3 more": the units named by their labels,
    each with its count of ``rows`` when given ("2026 (2 rows)")."""
    if per is None:
        return "the period" + (f" ({rows[0]:,} rows)" if rows else "")
    names = [
        str(pd.Timestamp(u).date()) if per == "day" else unit_label(np.datetime64(u), per)
        for u in units[:3]
    ]
    if rows:
        names = [
            f"{name} ({count:,} {'row' if count == 1 else 'rows'})"
            for name, count in zip(names, rows, strict=False)
        ]
    more = len(units) - len(names)
    if more:
        names.append(f"{more} more")
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _row_times(ctx: EvalContext) -> pd.Series | None:
    """Each row's date (its bar's minute, intraday), or None where the rows have none (a
    second stage's)."""
    try:
        if ctx.intraday:
            return _column(ctx, "timestamp", "place")
        return _dates(ctx, "place")
    except UnknownColumn:
        return None


# --- aggregate ----------------------------------------------------------------------------


def _aggregate(
    name: str,
    how: str,
    summary: str,
    accepts: Accepts = "number",
    of_condition: ConditionUnit | None = None,
    sample: int = 1,
    example: str | None = None,
) -> None:
    @register(
        name,
        category="aggregate",
        params=(Param("col", accepts=accepts),),
        summary=summary,
        example=example,
        unit="same",
        of_condition=of_condition,
        sample=sample,
    )
    def impl(rows: RowGroups, col: pd.Series) -> Any:
        return rows.reduce(col, how)


_aggregate(
    "mean",
    "mean",
    # The else of a mean over some rows is empty, not 0: mean(if(st == 3, next_ret, 0)) by
    # year averaged each year's ~245 other days' 0s in, -0.057 for -1.059 (p39b Q11t).
    "Average (empty skipped: mean(if(c, x, 0 / 0)) averages x where c); mean(cond) is the "
    "share true.",
    of_condition="share",
)
_aggregate("sum", "sum", "Total (empty skipped; 0 if none).", of_condition="count")
# Times of day ('HH:MM') in the session's order, as a trader reads "the latest time the
# day's high was made": ETH's trading day runs from its 18:00 open, so 18:05 is its earliest
# and 16:59 its latest (as text, 00:00 and 23:59). They were refused.
_CLOCK_ORDER = "times of day from the session's open: ETH's 18:05 is before 09:30"
_aggregate(
    "max",
    "max",
    "Highest (numbers, dates, times of day in the session's order).",
    accepts="orderable",
    example=f"max(high_time): the latest, {_CLOCK_ORDER}",
)
_aggregate(
    "min",
    "min",
    "Lowest (as max).",
    accepts="orderable",
    example=f"min(low_time): the earliest, {_CLOCK_ORDER}",
)
_aggregate("median", "median", "Median (empty skipped).")


@register(
    "std",
    unit="spread",
    category="aggregate",
    params=(_COL,),
    summary="Sample standard deviation.",
    sample=1,
)
def _std(rows: RowGroups, col: pd.Series) -> Any:
    return rows.reduce(col, "std", ddof=1)


@register(
    "count",
    unit="count",
    category="aggregate",
    params=(Param("x", accepts="any", default=None),),
    summary="count() counts rows; count(cond) rows where cond is true (a true/false column "
    "too); count(col) rows where col has a value.",
    example="count(close > open)",
    counts_true=True,
)
def _count(rows: RowGroups, x: pd.Series | None) -> Any:
    if x is None:
        return rows.size()
    if pd.api.types.is_bool_dtype(x.dtype):  # rows where it is true (not unknown)
        return rows.reduce(as_known(x).astype(np.int64), "sum")
    return rows.reduce(x, "count")


@register(
    "percentile",
    unit="same",
    category="aggregate",
    params=(_COL, Param("p", "number", min=0, max=100)),
    summary="The p-th percentile, p from 0 to 100, interpolated linearly (50 = median).",
    example="percentile(range, 90)",
    sample=1,
)
def _percentile(rows: RowGroups, col: pd.Series, p: float) -> Any:
    return rows.reduce(col.astype(np.float64), "quantile", q=p / 100)


@register(
    "correlation",
    unit="scalar",
    category="aggregate",
    params=(Param("col1"), Param("col2")),
    summary="Pearson correlation (-1 to 1) over rows with both.",
    example="correlation(range, volume)",
    sample=2,
)
def _correlation(rows: RowGroups, a: pd.Series, b: pd.Series) -> Any:
    cross, a_square, b_square = _co_moments(rows, a, b)
    scale = np.sqrt(a_square * b_square)
    with np.errstate(all="ignore"):
        result = np.where(scale > 0, cross / scale, np.nan)
    return rows.per_group(result) if rows.grouped else float(result)


@register(
    "beta",
    unit="scalar",
    category="aggregate",
    params=(Param("col"), Param("market")),
    summary="Slope of col on market, cov / var(market): NQ's beta to ES = beta(nq_ret, es_ret).",
    example="beta(close / prev(close) - 1, es_close / prev(es_close) - 1)",
    sample=2,
)
def _beta(rows: RowGroups, col: pd.Series, market: pd.Series) -> Any:
    cross, _, market_square = _co_moments(rows, col, market)
    with np.errstate(all="ignore"):
        result = np.where(market_square > 0, cross / market_square, np.nan)
    return rows.per_group(result) if rows.grouped else float(result)


def _co_moments(rows: RowGroups, a: pd.Series, b: pd.Series) -> tuple[Any, Any, Any]:
    """Per group, over rows where both are present: the sums of (a - mean) (b - mean),
    (a - mean)² and (b - mean)²."""
    x, y = a.to_numpy(dtype=np.float64), b.to_numpy(dtype=np.float64)
    both = ~np.isnan(x) & ~np.isnan(y)
    x, y = np.where(both, x, np.nan), np.where(both, y, np.nan)
    # Centered first (per group): sums of products of raw prices would lose precision.
    dx = x - rows.spread(rows.reduce(pd.Series(x), "mean"))
    dy = y - rows.spread(rows.reduce(pd.Series(y), "mean"))
    return tuple(rows.reduce(pd.Series(v), "sum") for v in (dx * dy, dx * dx, dy * dy))


# Value-picking aggregates: each chooses one row per group and returns a column's value there.
# Rows are in time order in every frame, so "first" and "earliest" mean position.


def _as_numbers(values: pd.Series) -> np.ndarray:
    """Numbers (or dates as nanoseconds) as float64, missing values NaN, for ordering."""
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        stamps = values.to_numpy(dtype="datetime64[ns]")
        numbers = stamps.view(np.int64).astype(np.float64)
        numbers[np.isnat(stamps)] = np.nan
        return numbers
    return values.to_numpy(dtype=np.float64, na_value=np.nan)


def _value_at(rows: RowGroups, values: pd.Series, chosen: Any) -> Any:
    """``values`` at the chosen positions (missing where nothing was chosen)."""
    if not rows.grouped:
        if np.isnan(chosen):
            return pd.NaT if pd.api.types.is_datetime64_any_dtype(values.dtype) else np.nan
        return values.iloc[int(chosen)]
    positions = np.asarray(chosen, dtype=np.float64)
    found = ~np.isnan(positions)
    taken = values.iloc[np.where(found, positions, 0).astype(np.int64)]
    # .array keeps a category's order: arg_min(dayname(), low) per week, grouped again in a
    # second stage, still sorts Monday first.
    picked = pd.Series(taken.array, index=chosen.index)
    return picked if found.all() else picked.where(found)


def _edge(name: str, summary: str, example: str) -> None:
    last = name == "last"

    @register(
        name,
        category="aggregate",
        params=(Param("col", accepts="any"),),
        summary=summary,
        example=example,
        unit="same",
    )
    def impl(rows: RowGroups, col: pd.Series) -> Any:
        # The group's own first (last) row, even where col is missing there: first(date())
        # and first(ret) side by side must come from the same row.
        return _value_at(rows, col, rows.pick(np.ones(len(col), dtype=bool), last=last))


_edge("first", "The value on the earliest row (n/a if it has none).", "first(open)")
_edge("last", "As first(), on the latest row.", "last(close)")


def _arg_extreme(name: str, how: str, word: str) -> None:
    @register(
        name,
        category="aggregate",
        params=(Param("arg", accepts="any", named=True), Param("val", accepts="number_or_date")),
        # arg_min's line reads as arg_max's: the reference has no room for the same twice.
        summary=f"arg on the row where val is {word} (missing val skipped; ties: see TIES)."
        if how == "max"
        else "As arg_max, where val is smallest.",
        example=f"{name}(hour(), {'high' if how == 'max' else 'low'})",
        unit="same",
        sample=1,
        sample_from=1,  # the rows whose val is missing: no arg is picked from them
    )
    def impl(rows: RowGroups, arg: pd.Series, val: pd.Series) -> Any:
        numbers = _as_numbers(val)
        extreme = rows.reduce(pd.Series(numbers), how)
        with np.errstate(invalid="ignore"):
            hit = numbers == rows.spread(extreme)
        chosen = rows.pick(hit)
        if rows.warn is not None and rows.grouped:
            _warn_group_ties(rows, arg, val, hit, chosen, name, word)
        elif rows.warn is not None:
            _warn_ties(rows, arg, val, np.flatnonzero(hit), name, word)
        return _value_at(rows, arg, chosen)


# Tied rows an arg_max names beside the one it shows.
_LISTED_TIES = 5


def _warn_ties(
    rows: RowGroups,
    arg: pd.Series,
    val: pd.Series,
    tied: np.ndarray,
    function: str,
    word: str,
) -> None:
    """One answer from several equal extremes ("when was the longest run": two runs of 11)
    is the earliest of them: say the others; when every row ties, that the answer is only
    the first row."""
    assert rows.warn is not None
    if len(tied) < 2:
        return
    name = val.name if isinstance(val.name, str) else "value"
    level = _text(val.iloc[tied[0]])
    shown = _arg_text(rows, arg, tied[0])
    if len(tied) == rows.length:
        rows.warn(
            f"All {len(tied):,} rows tie for the {word} {name}, at {level}: {function} gives "
            f"the first row ({shown}), which marks no {_EXTREMES[function]}. "
            + _without_stand_in(arg, "rows")
        )
        return
    listed = _listed([_arg_text(rows, arg, i) for i in tied[1:]])
    rows.warn(
        f"{len(tied)} rows share the {word} {name} ({level}): {shown} is "
        f"shown (the earliest); also {listed}."
    )


# What an arg_* call's value marks when it has one row to name.
_EXTREMES = {"arg_min": "minimum", "arg_max": "maximum"}


def _without_stand_in(arg: pd.Series, what: str) -> str:
    """The form that answers only where some row qualifies: a condition written as a value
    (``if(high > pdh, t, 9999)``) ties every row of a day that never met it."""
    value = arg.name if isinstance(arg.name, str) else "the value"
    return (
        f"To leave such {what} out, keep only the rows that count with a where, then select "
        f"first({value})."
    )


# Groups whose tie a grouped arg_max names, beside the count of them all, and the tied
# values it lists of each.
_NAMED_GROUPS = 3
_LISTED_GROUP_TIES = 2
# Up to this many tied groups are all named, each with its tied values: "the month with the
# most inside days each year" tied in 9 of 19 years and named 3, "and 6 more", so the model
# could not say which months (p40e Q09). More are counted past the first few.
_ALL_NAMED_GROUPS = 20


def _warn_group_ties(
    rows: RowGroups,
    arg: pd.Series,
    val: pd.Series,
    hit: np.ndarray,
    chosen: pd.Series,
    function: str,
    word: str,
) -> None:
    """Each group's answer is the earliest of its equal extremes: "which day made the week's
    high", by week(), read Wed of the week 2024-08-26 whose Fri made the same 19489, and the
    hour of each day's high, counted by a second stage, gave 122 of 4,649 days to the
    earlier of two hours, with nothing said. Say how many groups tie (rows at the extreme
    whose arg differs from the one shown: two minutes of one hour are no tie of hours), the
    first few named with their other values."""
    at = np.flatnonzero(hit)
    picked = chosen.to_numpy(dtype=np.float64)
    answered = int(np.count_nonzero(~np.isnan(picked)))
    if len(at) <= answered:  # one row at the extreme in each group
        return
    groups = rows.groups_of(at)
    own = arg.iloc[at].reset_index(drop=True)
    shown = arg.iloc[picked[groups].astype(np.int64)].reset_index(drop=True)
    same = (own == shown).fillna(False).to_numpy(dtype=bool)  # nullable types: NA is unknown
    differs = ~(same | (own.isna() & shown.isna()).to_numpy())
    tied = np.unique(groups[differs])
    if not len(tied):
        return
    assert rows.index is not None
    keys = [str(name) for name in rows.index.names]
    name = val.name if isinstance(val.name, str) else "value"
    # Groups whose every row is at the extreme: a stand-in for "never" (9999 on each bar of
    # a day that never broke the level), where the answer is the group's first row.
    sizes = np.asarray(rows.size(), dtype=np.int64)
    whole = tied[np.bincount(groups[groups >= 0], minlength=rows.ngroups)[tied] == sizes[tied]]
    if len(whole):
        levels = _listed(list(dict.fromkeys(_text(val.iloc[int(picked[g])]) for g in whole)), 2)
        firsts = _listed(
            list(dict.fromkeys(_arg_text(rows, arg, int(picked[g])) for g in whole)), 2
        )
        listed = ", ".join(_group_name(rows, int(g), listed=True) for g in whole[:_NAMED_GROUPS])
        if len(whole) > _NAMED_GROUPS:
            listed += f" and {len(whole) - _NAMED_GROUPS:,} more"
        rows.warn(
            f"In {len(whole):,} of {answered:,} {' and '.join(keys)} groups ({listed}) every "
            f"row ties for the {word} {name}, at {levels}: {function} gives each its first row "
            f"({firsts}), which marks no {_EXTREMES[function]}. " + _without_stand_in(arg, "groups")
        )
        tied = np.setdiff1d(tied, whole)
        if not len(tied):
            return

    def tie(group: int, limit: int = _LISTED_TIES) -> tuple[str, str]:
        """The value shown and the others tied with it: ``("Wed", "Fri")``."""
        first = _arg_text(rows, arg, int(picked[group]))
        texts = dict.fromkeys(_arg_text(rows, arg, i) for i in at[(groups == group) & differs])
        return first, _listed([t for t in texts if t != first], limit)

    if answered == 1:
        group = int(tied[0])
        first, also = tie(group)
        level = _text(val.iloc[at[0]])
        rows.warn(
            f"In {_group_name(rows, group)}, {len(at)} rows share the {word} {name} ({level}): "
            f"{first} is shown (the earliest); also {also}."
        )
        return
    every = len(tied) <= _ALL_NAMED_GROUPS
    shown_groups = tied if every else tied[:_NAMED_GROUPS]
    named = []
    for group in shown_groups:
        first, also = tie(int(group), _LISTED_TIES if every else _LISTED_GROUP_TIES)
        named.append(f"{_group_name(rows, int(group), listed=True)}: {first}, also {also}")
    more = "" if every else f"; and {len(tied) - _NAMED_GROUPS:,} more"
    rows.warn(
        f"In {len(tied):,} of {answered:,} {' and '.join(keys)} groups "
        f"({len(tied) / answered:.1%}), two or more rows tie for the {word} {name}: "
        f"{function} gives each the earliest of them only ({'; '.join(named)}{more})."
    )


def _group_name(rows: RowGroups, group: int, listed: bool = False) -> str:
    """A group by its keys, ``week 2024-08-26``; in a list under one key, ``2024-08-26``."""
    assert rows.index is not None
    keys = [str(name) for name in rows.index.names]
    key = rows.index[group]
    values = key if isinstance(key, tuple) else (key,)
    if listed and len(keys) == 1:
        return _text(values[0])
    return ", ".join(f"{k} {_text(v)}" for k, v in zip(keys, values, strict=True))


def _listed(texts: list[str], limit: int = _LISTED_TIES) -> str:
    """The first ``limit`` of ``texts``, and how many more: ``a, b, c, d, e and 3 more``."""
    listed = ", ".join(texts[:limit])
    if len(texts) > limit:
        listed += f" and {len(texts) - limit} more"
    return listed


def _arg_text(rows: RowGroups, values: pd.Series, at: Any) -> str:
    """``values``' row ``at`` as a warning names it; a clock's number as its time of day
    (``RowGroups.arg_clock``): "2024-01-08: 18:00, also 18:01" for the minutes -360 and -359 of a
    clock counted from ETH's 18:00 open, which read as no time."""
    value = values.iloc[at]
    scale = rows.arg_clock
    number = isinstance(value, int | float | np.integer | np.floating)
    if scale and number and not isinstance(value, bool) and np.isfinite(value):
        minute = round(float(value) * scale) % MINUTES_PER_DAY
        return f"{minute // 60:02d}:{minute % 60:02d}"
    return _text(value)


def _text(value: Any) -> str:
    """A value as a warning names it: dates without a midnight, whole numbers without .0."""
    if isinstance(value, pd.Timestamp | np.datetime64):
        stamp = pd.Timestamp(value)
        return f"{stamp:%Y-%m-%d}" if stamp == stamp.normalize() else f"{stamp:%Y-%m-%d %H:%M}"
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):.6g}" if abs(value) < 1e5 else f"{float(value):.2f}"
    return str(value)


_arg_extreme("arg_max", "max", "largest")
_arg_extreme("arg_min", "min", "smallest")


@register(
    "mode",
    category="aggregate",
    params=(_ANY,),
    summary="Most frequent value (numbers, text, dates; missing skipped; ties: see TIES).",
    example='mode(dayname()); the usual hour of the high per year: "group_by": ["year()", '
    '"date()"], "select": "arg_max(time(), high) as high_time", "then": {"group_by": "year", '
    '"select": "mode(high_time)"}',
    unit="same",
    sample=1,
)
def _mode(rows: RowGroups, col: pd.Series) -> Any:
    """The value seen most often, per group; of equally frequent values the one seen first
    (rows are in time order, a second stage's too), so the answer is one of the rows' own
    values, of the column's kind: the mode of 'HH:MM' labels is a label, of dates a date.
    ``mode(['10:30', '09:30', '09:30', '10:30'])`` is '10:30'."""
    values = pd.factorize(col)[0]  # a code per distinct value, -1 where missing
    if rows.grouped:
        groups = rows.groups_of(np.arange(rows.length))
    else:
        groups = np.zeros(rows.length, dtype=np.int64)
    present = np.flatnonzero((values >= 0) & (groups >= 0))
    # One code per (group, value) pair: how often each occurs, and the row it first does.
    stride = int(values.max(initial=0)) + 1
    pairs, keys = pd.factorize(groups[present] * stride + values[present])
    counts = np.bincount(pairs, minlength=len(keys))
    first = np.full(len(keys), rows.length, dtype=np.int64)
    np.minimum.at(first, pairs, present)
    owner = keys // stride  # the group of each pair
    # Per group: the largest count, then the earliest row.
    order = np.lexsort((first, -counts, owner))
    best = order[np.diff(owner[order], prepend=-1) != 0]
    if rows.warn is not None and len(best):
        _warn_mode_ties(rows, col, owner, counts, best, first)
        if not rows.grouped:
            _warn_rare_mode(
                rows, col, int(counts[best[0]]), len(present), len(keys), first[best[0]]
            )
    if not rows.grouped:
        return _value_at(rows, col, float(first[best[0]]) if len(best) else np.nan)
    chosen = np.full(rows.ngroups, np.nan)
    chosen[owner[best]] = first[best]
    return _value_at(rows, col, rows.per_group(chosen))


# A mode held by fewer than this share of the rows, among more than this many different
# values, says little of where the values lie.
_RARE_MODE_SHARE = 0.1
_RARE_MODE_VALUES = 20


def _warn_rare_mode(
    rows: RowGroups, col: pd.Series, count: int, present: int, distinct: int, at: int
) -> None:
    """ "At what time is the day's high most often" as mode() of each day's time of the
    high gave NQ's ETH 18:00, held by 79 of 4,656 days (1.7%) among 1,000 different
    minutes, read as "usually at 18:00". Say how few rows hold it, among how many values."""
    assert rows.warn is not None
    if distinct <= _RARE_MODE_VALUES or count >= _RARE_MODE_SHARE * present:
        return
    name = col.name if isinstance(col.name, str) else "the values"
    rows.warn(
        f"The most frequent of {name}, {_arg_text(rows, col, at)}, is on only {count:,} of "
        f"{present:,} rows ({count / present:.1%}), among {distinct:,} different values: it "
        "is no usual value. Counting rows by a coarser key (an hour, a bucket) says where "
        "most fall."
    )


def _warn_mode_ties(
    rows: RowGroups,
    col: pd.Series,
    owner: np.ndarray,
    counts: np.ndarray,
    best: np.ndarray,
    first: np.ndarray,
) -> None:
    """Of equally frequent values a mode gives the one seen first, and the answer alone does
    not show that another was as frequent: say the others (``owner``, ``counts`` and
    ``first``: each distinct value's group, count and first row; ``best``: the values
    shown). Values all different (a mode of each day's times) make every value a tie, the
    first row's shown: said too."""
    top = np.zeros(rows.ngroups, dtype=np.int64)
    top[owner[best]] = counts[best]
    tied = counts == top[owner]
    tied[best] = False
    if not tied.any():
        return
    shown = dict(zip(owner[best].tolist(), first[best].tolist(), strict=True))
    values = f"values of {col.name}" if isinstance(col.name, str) else "values"

    def also(group: int, limit: int) -> str:
        """The values tied with the one shown, in the order they first occur."""
        at = np.flatnonzero(tied & (owner == group))
        at = at[np.argsort(first[at])]
        return _listed([_arg_text(rows, col, first[i]) for i in at], limit)

    if not rows.grouped:
        rows.warn(
            f"{int(tied.sum()) + 1} {values} are equally frequent ({top[0]:,} "
            f"{'row' if top[0] == 1 else 'rows'} each): "
            f"{_arg_text(rows, col, shown[0])} is shown (the earliest); also "
            f"{also(0, _LISTED_TIES)}."
        )
        return
    assert rows.index is not None
    keys = " and ".join(str(name) for name in rows.index.names)
    groups = np.unique(owner[tied])
    named = [
        f"{_group_name(rows, int(g), listed=True)}: {_arg_text(rows, col, shown[int(g)])}, also "
        f"{also(int(g), _LISTED_GROUP_TIES)} ({top[g]:,} each)"
        for g in groups[:_NAMED_GROUPS]
    ]
    more = f"; and {len(groups) - _NAMED_GROUPS:,} more" if len(groups) > _NAMED_GROUPS else ""
    rows.warn(
        f"In {len(groups):,} of {len(best):,} {keys} groups ({len(groups) / len(best):.1%}), "
        f"two or more {values} are equally frequent: mode gives each the earliest of them only "
        f"({'; '.join(named)}{more})."
    )


# --- time ---------------------------------------------------------------------------------


# Calendar keys coarser than a week: weeks grouped by them are read from weekly bars.
_COARSER = frozenset({"year", "quarter", "month"})


def _column(ctx: EvalContext, name: str, function: str) -> pd.Series:
    if name not in ctx.frame.columns:
        hint = None
        if ctx.step.startswith("then") and ctx.rows_are_weeks and function in _COARSER:
            # ["year()", "week()"] in the first stage would cut the weeks across New Year.
            hint = (
                f"a second stage's rows are the first stage's groups, here weeks: for weeks "
                f'by {function}, use weekly bars, "from": "weekly" with "group_by": '
                f'"{function}()" (each week counts in the {function} of its first trading '
                f'date), not ["{function}()", "week()"], which splits the weeks that cross a '
                f"{function}'s end"
            )
        elif ctx.step.startswith("then") and is_date_part(function):
            # The rows are the first stage's table, not bars: a key or a column made there.
            hint = then_date_part_hint(function, ctx.rows_are_groups)
        elif ctx.step.startswith("then"):  # session_high('RTH'), rolling_mean(x, n, 'time')
            hint = (
                f"a second stage's rows are the first stage's table, not bars: compute "
                f"{function}() in the first stage's map, over its bars, and select it for the "
                f'second stage ("first(x) as x" when grouped by date())'
            )
        raise UnknownColumn(
            f"{function}() needs the '{name}' column, which this data does not have.",
            step=ctx.step,
            hint=hint,
        )
    return ctx.frame[name]


def _dates(ctx: EvalContext, function: str) -> pd.Series:
    """Each row's trading date (a Sunday-evening bar belongs to Monday); for a weekly or
    longer bar its first trading date, the date it is labelled by (the week of 2024-12-30 is
    in 2024)."""
    if timeframe(ctx.timeframe).calendar:  # stamped at midnight of that date
        return _column(ctx, "timestamp", function)
    if "trading_date" in ctx.frame.columns:
        return ctx.frame["trading_date"]
    return _column(ctx, "timestamp", function).dt.normalize()


def _date_part(name: str, part: str, summary: str, values: tuple[int, int] | None = None) -> None:
    @register(name, category="time", summary=summary, values=values)
    def impl(ctx: EvalContext) -> pd.Series:
        dates = _dates(ctx, name)
        fast = day_field(dates, part)
        return fast if fast is not None else getattr(dates.dt, part)


# The clock a bar's time is read on: the exchange's (none given), or a zone's ('UTC',
# 'Europe/Moscow', 'MSK'), converted bar by bar with the tz database.
_ZONE = Param("zone", "string", default=None)


def _clock_part(name: str, part: str, summary: str, values: tuple[int, int]) -> None:
    @register(name, category="time", params=(_ZONE,), summary=summary, values=values)
    def impl(ctx: EvalContext, zone: str | None) -> pd.Series:
        if zone is None:  # a zone's name is checked first, in _zone_minutes
            _needs_time_of_day(ctx, name, None)
        if "minute_of_day" in ctx.frame.columns or zone is not None:
            minutes = _minutes_of_day(ctx, name, zone)
            values = minutes // 60 if part == "hour" else minutes % 60
            if zone is not None and np.any(minutes < 0):  # no time: no hour on any clock
                values = np.where(minutes < 0, np.nan, values)
            return pd.Series(values, index=ctx.frame.index)
        return getattr(_column(ctx, "timestamp", name).dt, part)


def _needs_time_of_day(ctx: EvalContext, function: str, zone: str | None) -> None:
    """hour(), minute() and time() read a bar's clock, which daily and longer bars do not
    have: each is stamped at midnight, so "which hour makes the high" on daily bars gave
    00:00 for every year and time() >= '15:00' matched no bar, with no cause (p34c)."""
    if ctx.intraday:
        return
    call = f"{function}('{zone}')" if zone is not None else f"{function}()"
    example = "hour" if function == "hour" else "time"
    if zone is not None:
        raise ArgumentError(
            f"{call} reads a bar's open on another clock, and {ctx.timeframe} bars have no "
            "time of day.",
            step=ctx.step,
            hint="Use intraday bars, or a window on that clock as the session: "
            '"session": "10:00-11:00 Europe/Moscow".',
        )
    raise ArgumentError(
        f"{call} reads a bar's time of day, and {ctx.timeframe} bars have none (each is "
        "stamped at midnight, so it would read 00:00 on every bar).",
        step=ctx.step,
        hint=f'Use intraday bars: "from": "1h" or "1m" (e.g. arg_max({example}(), high) with '
        '"group_by": "date()" is the time of each day\'s high).',
    )


def _minutes_of_day(ctx: EvalContext, function: str, zone: str | None = None) -> np.ndarray:
    """Each bar's open as minutes after midnight (-1 where its time is missing), on the
    exchange's clock or on ``zone``'s."""
    if zone is not None:
        return _zone_minutes(ctx, function, zone)
    if "minute_of_day" in ctx.frame.columns:
        # Intraday frames carry the minute of the day: far cheaper than .dt on 6M stamps.
        return ctx.frame["minute_of_day"].to_numpy()
    stamps = _column(ctx, "timestamp", function)
    return (stamps.dt.hour * 60 + stamps.dt.minute).fillna(-1).to_numpy(dtype=np.int64)


def _zone_minutes(ctx: EvalContext, function: str, zone: str) -> np.ndarray:
    """hour('UTC'), time('Europe/Moscow'): each bar's open on that zone's clock, which is
    7, 8 or 9 hours ahead of New York's as the two zones' daylight saving and Moscow's
    history go (-1 where a bar's time is missing)."""
    name = zone_name(zone)
    if name is None:
        raise ArgumentError(
            f"{function}('{zone}'): there is no time zone '{zone}'.",
            step=ctx.step,
            hint=f"Write an IANA zone, {function}('Europe/Moscow'), or one of {aliases_text()}.",
        )
    _needs_time_of_day(ctx, function, zone)
    if ctx.timezone is None:
        raise UnknownColumn(
            f"{function}('{zone}') needs the instrument's clock, which these rows lack (a "
            "second stage's rows are the first stage's results).",
            step=ctx.step,
            hint=f"Compute {function}('{zone}') in the first stage's map and carry it as a column.",
        )
    minutes = _minutes_of_day(ctx, function).astype(np.int64)
    stamps = _column(ctx, "timestamp", function).to_numpy(dtype="datetime64[ns]")
    shifted = zone_minutes(stamps, minutes, ctx.timezone, name).astype(np.int64)
    return np.where(minutes < 0, -1, shifted)


_date_part(
    "dayofweek", "dayofweek", "Weekday of the trading date: 0 = Monday … 6 = Sunday.", (0, 6)
)
_date_part("day", "day", "Day of the month (1–31) of the trading date.", (1, 31))
_date_part("month", "month", "Month (1–12) of the trading date.", (1, 12))
_date_part("quarter", "quarter", "Quarter (1–4) of the trading date.", (1, 4))
_date_part("year", "year", "Year of the trading date.")
_date_part("dayofyear", "dayofyear", "Day of the year (1–366).", (1, 366))


@register(
    "weekofyear",
    category="time",
    summary="ISO week number (1–53), for week N across years; 2025-12-29 is 2026's week 1: "
    "group a year by week().",
    values=(1, 53),
)
def _weekofyear(ctx: EvalContext) -> pd.Series:
    # Per distinct date: isocalendar() over a minute frame's millions of rows costs ~1 s.
    codes, unique = pd.factorize(_dates(ctx, "weekofyear"))
    weeks = np.append(unique.isocalendar().week.to_numpy(dtype=float), np.nan)
    return pd.Series(weeks[codes], index=ctx.frame.index)  # code -1 (no date) → NaN


_clock_part(
    "hour",
    "hour",
    "Hour (0–23) of the bar's open (exchange time; hour('UTC'): UTC's); hourly bars may "
    "open on :30: use time().",
    (0, 23),
)
_clock_part("minute", "minute", "Minute (0–59) of the bar's open.", (0, 59))

# Every minute of the day as the clock reads it, in order: time()'s categories.
CLOCK_TIMES = tuple(f"{m // 60:02d}:{m % 60:02d}" for m in range(24 * 60))


@register(
    "time",
    category="time",
    params=(_ZONE,),
    # No times of day here: they differ by instrument, and TIES lists the asking one's.
    summary="The bar's open as 'HH:MM' (exchange time; hourly bars: TIES); compares with "
    "such text.",
    example="arg_max(time(), high)  with group_by date()",
)
def _time(ctx: EvalContext, zone: str | None) -> pd.Series:
    if zone is None:
        _needs_time_of_day(ctx, "time", None)
    minutes = _minutes_of_day(ctx, "time", zone).astype(np.int64)
    clock = pd.Categorical.from_codes(minutes, categories=list(CLOCK_TIMES), ordered=True)
    return pd.Series(clock, index=ctx.frame.index)


@register(
    "week",
    category="time",
    summary="The week, named by its first trading date as weekly bars are: group_by week() "
    "compares each week's days.",
    example="arg_max(dayname(), high)  with group_by week()",
)
def _week(ctx: EvalContext) -> pd.Series:
    dates = _dates(ctx, "week").to_numpy(dtype="datetime64[ns]")
    first = _week_labels(ctx, dates)
    return pd.Series(np.where(np.isnat(dates), dates, first), index=ctx.frame.index)


def _week_labels(ctx: EvalContext, dates: np.ndarray) -> np.ndarray:
    """Each date's week by the first date the query's session traded in it, as the weekly
    bars label it: the week of New Year's Day 2024 (a Monday, no session) is 2024-01-02,
    where its Monday would name a day with no bar, and a week() group would not match the
    1w bar of the same days. Its Monday where the session's dates are not known (the rows
    are not a session's bars) or the week has none of them (a weekly bar's own date)."""
    return _first_traded(ctx, period_start(dates, "weekly"), dates)


def week_of_date(ctx: EvalContext, day: np.datetime64, unit: str = "weekly") -> np.datetime64:
    """The label week() gives the week ``day`` falls in: its first date the query's session
    traded (2024-01-02 for any day of the week of closed Monday 2024-01-01), its Monday
    where the session's dates are not known or the week has none. What a trader means by
    ``week() == '2024-01-01'`` or ``'2024-01-10'``: the week of that day. ``unit``
    "monthly" (quarterly, yearly): the label date() gives such a bar, its month's first
    trading date (``date() == '2024-01-01'`` on monthly bars: January 2024)."""
    start = period_start(np.array([day], dtype="datetime64[ns]"), unit)
    if unit == "weekly":
        until = start + np.timedelta64(6, "D")
    else:  # the day before the next month, quarter or year starts
        months = {"monthly": 1, "quarterly": 3, "yearly": 12}[unit]
        following = start.astype("datetime64[M]") + np.timedelta64(months, "M")
        until = following.astype("datetime64[ns]") - np.timedelta64(1, "D")
    return _first_traded(ctx, start, until)[0]


def _first_traded(ctx: EvalContext, monday: np.ndarray, until: np.ndarray) -> np.ndarray:
    """Each week's first date the query's session traded, from its ``monday`` up to
    ``until``; its Monday where there is none or the session's dates are not known."""
    traded = _session_dates(ctx)
    if traded is None or not len(traded):
        return monday
    first = traded[np.searchsorted(traded, monday).clip(max=len(traded) - 1)]
    return np.where((first >= monday) & (first <= until), first, monday)


def _session_dates(ctx: EvalContext) -> np.ndarray | None:
    """The trading dates of the query's session (datetime64[ns], ascending), or None."""
    if ctx.session is None:
        return None
    try:
        return ctx.session_bars(ctx.session).index.to_numpy().astype("datetime64[ns]")
    except BarbError:
        return None


@register(
    "dayname",
    category="time",
    summary="Weekday of the trading date: 'Mon' … 'Sun' (groups sort Monday first).",
    example="dayname() in ('Mon', 'Fri')",
)
def _dayname(ctx: EvalContext) -> pd.Series:
    dates = _dates(ctx, "dayname")
    fast = day_field(dates, "dayofweek")  # no missing date: no fill
    if fast is not None:
        codes = fast.to_numpy(dtype=np.int64)
    else:
        codes = dates.dt.dayofweek.fillna(-1).to_numpy(dtype=np.int64)
    names = pd.Categorical.from_codes(codes, dtype=_DAY_NAMES)
    return pd.Series(names, index=ctx.frame.index)


# Made once: building the dtype checks its categories each time (a third of dayname()).
_DAY_NAMES = pd.CategoricalDtype(list(DAY_NAMES), ordered=True)


@register(
    "date",
    category="time",
    summary="The trading date (a date; compares with text: date() >= '2024-03-01').",
    example="date() == '2024-03-15'",
)
def _date(ctx: EvalContext) -> pd.Series:
    return _dates(ctx, "date")


# --- session ------------------------------------------------------------------------------


# session_high('RTH', 1): the session's bar lag trading dates before the row's, counted back
# from the row's date whether or not the session has bars on it (Good Friday's overnight rows
# have no RTH, yet lag 1 is Thursday's). The dates counted are those the instrument's day
# session traded (``EvalContext.day_session``) and the session's own: a date without the day
# session (Good Friday) is stepped over, a date the day session closed early on is not, so
# the settlement window's lag 1 after an early close is missing rather than two sessions old.
# The session's bars are the whole data set's, not the period's rows, so a lag reads before
# the period's start without any warm-up.
_LAG = Param("lag", "int", default=0, min=0, max=10_000)


def _session_part(field: str) -> None:
    @register(
        f"session_{field}",
        category="session",
        params=(_SESSION, _LAG),
        # NaN where the date has none: the category's title in the reference says so.
        summary=f"That session's {field} on the row's date.",
        example=f"session_{field}('RTH')",
        unit="contracts" if field == "volume" else "price",
    )
    def impl(ctx: EvalContext, session: str, lag: int) -> pd.Series:
        bars = ctx.session_bars(session)
        return _by_trading_date(ctx, bars[field], lag, f"session_{field}")


for _field in ("open", "high", "low", "close", "volume"):
    _session_part(_field)


def _by_trading_date(
    ctx: EvalContext, by_date: pd.Series, lag: int, function: str, unit: str = "daily"
) -> pd.Series:
    """Each row's value of ``by_date`` (a session's values indexed by its trading dates),
    ``lag`` trading dates before the row's, counted as ``_LAG`` says. For a weekly or monthly
    ``unit``, ``by_date`` is indexed by the weeks' and months' starts (``period_start``), and
    the lag counts the weeks (months) the session or the day session has bars in: a week with
    no bars is stepped over, as a closed date is."""
    dates = _column(ctx, "trading_date", function)
    # Look each distinct date up once: intraday frames repeat a date hundreds of times.
    codes, unique = pd.factorize(dates)
    if unit != "daily":
        unique = pd.DatetimeIndex(period_start(unique.to_numpy(), unit))
    if lag == 0:
        per_date = by_date.reindex(unique).to_numpy(dtype=np.float64)
    else:
        counted = by_date.index
        if ctx.day_session is not None:
            traded = ctx.session_bars(ctx.day_session).index
            if unit != "daily":
                traded = pd.DatetimeIndex(period_start(traded.to_numpy(), unit)).unique()
            counted = counted.union(traded)
        # The dates counted before the row's (sorted), then lag back.
        before = counted.searchsorted(unique, side="left") - lag
        found = before >= 0
        lagged = counted[np.maximum(before, 0)]
        values = by_date.reindex(lagged).to_numpy(dtype=np.float64)
        per_date = np.where(found, values, np.nan)
    values = np.append(per_date, np.nan)[codes]  # code -1 (no date) picks NaN
    return pd.Series(values, index=ctx.frame.index)


# daily(), weekly() and monthly(): expr over the session's bars of that timeframe, all history
# (the evaluator reads them: ``_RowEvaluator.on_daily_bars``), each row given its own date's
# day, week or month ``lag`` of them back. One family: the reference lists it on daily()'s
# line, each keeps its own summary for get_concept.
_BARS_OF: dict[str, tuple[str, str]] = {
    # atr(14) on intraday bars is the bar's own: the indicators reference says so.
    "daily": (
        "expr on the session's bars of that unit, lag back: daily(atr(14)) on 1m bars = daily "
        "ATR; weekly(high) = last week's high; lag 0: own, known at its close.",
        "daily(atr(14))",
    ),
    "weekly": (
        'expr on the session\'s weekly bars (those of "from": "weekly"), lag weeks before '
        "the row's: weekly(high) on daily or intraday bars is last week's high (a week with no "
        "bars is stepped over); lag 0: the row's own week, known only at its close.",
        "weekly(high)",
    ),
    "monthly": (
        "expr on the session's monthly bars, lag months before the row's: monthly(close) on "
        "daily or intraday bars is last month's close; lag 0: the row's own month, known only "
        "at its close.",
        "monthly(close)",
    ),
}


def _bars_of(unit: str) -> None:
    summary, example = _BARS_OF[unit]

    @register(
        unit,
        category="session",
        params=(
            Param("expr", "daily"),
            Param("lag", "int", default=1, min=0, max=10_000),
            # Another session's bars, as session_high()'s (the evaluator reads them).
            Param("session", "string", default=None),
        ),
        summary=summary,
        example=example,
        unit="same",
        listed_under=None if unit == "daily" else "daily",
    )
    def impl(ctx: EvalContext, by_date: pd.Series, lag: int, session: str | None) -> pd.Series:
        # A condition (daily(close > open)) stays one, unknown where the date has no value.
        numbers = as_numbers(by_date).astype(np.float64)
        values = _by_trading_date(ctx, numbers, lag, unit, unit)
        if not is_condition(by_date):
            return values
        array = values.to_numpy()
        return condition(array == 1, np.isnan(array), values.index)


for _unit in _BARS_OF:
    _bars_of(_unit)
