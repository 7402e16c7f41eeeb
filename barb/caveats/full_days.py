"""What the full day's bars say beside a statistic of a part-day session's daily bars.

The default session (RTH) is a part of the instrument's trading day, and a beginner reads
"the high" or "the daily volume" as the whole day's. "When was the maximum?" as RTH daily
max(high) answered 25984 on 2026-01-06, while the full day (ETH) went to 26020.5 at 08:19
that day, before the cash open: 36.5 points above the level a stop or breakout would be
set at. "Average volume?" gave RTH's 273,049 contracts where the full day averages 413,493,
the number the exchange publishes. So a first stage's single-row answer that is an extreme
price (max(high), min(low), arg_max(x, high), arg_min(x, low), max/min of close) or a mean,
median or sum of volume, over daily bars of a session that stands for the day (RTH, CASH,
a window within an hour of RTH) but is not the full one, is said with the full day's
value over the same dates, when it went further or traded notably more.

Read from the full session's cached daily bars (``Dataset.session_daily``) at the kept
rows' dates, found by a binary search; the query is never evaluated again. A session that
is plainly a part of the day (the first hour, the overnight hours) is asked for as such:
nothing is said there.

The lines built on true range (atr, adx, keltner; ``READ_PREVIOUS_CLOSE``) read the
session's highs and lows: "ATR(14) on CL now?" answered 2.787 from RTH's 09:00-14:30 bars,
where the full day's bars (the daily chart a platform shows) give 3.253, 17% more; NQ's
389 against 427 (p48d M2). Those map columns are evaluated once more, over the full
session's daily bars (``full_day_indicator_caveat``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from barb.caveats.sessions import part_of_the_day
from barb.column_units import (
    DOLLARS,
    PERCENT,
    PERCENTILE,
    POINTS,
    PRICE,
    SHARE,
    TICKS,
    column_unit,
)
from barb.errors import BarbError
from barb.frames import masked_values
from barb.instruments import format_clock
from barb.lineage import nodes, through_map
from barb.period_rows import Scope
from barb.planning import Plan, SelectItem
from barb.script import ast
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate, evaluate_aggregate
from barb.script.indicator_functions import READ_PREVIOUS_CLOSE
from barb.short_days import date_positions
from barb.stage_output import query_columns
from barb.summary_text import listed_text, value_text

# The extremes a price statistic takes (max(high), arg_max(date(), high)), by function.
_EXTREME_OF = {"max": "max", "arg_max": "max", "min": "min", "arg_min": "min"}
# The bar prices whose extreme in each direction is a level the full day can pass.
_EXTREME_PRICES = {"max": ("high", "close"), "min": ("low", "close")}
# The bar prices whose extreme a longer bar's row lists, by the side it takes.
_SIDE_OF = {"high": "max", "low": "min"}
# Statistics of daily volume said beside the full day's.
_VOLUME_STATISTICS = {"mean": np.mean, "median": np.median, "sum": np.sum}
_VOLUME_VERBS = {"mean": "averages", "median": "has a median of", "sum": "totals"}
_VOLUME_NOUNS = {"mean": "mean", "median": "median", "sum": "total"}
# The least share of the full day's volume the session leaves out that is worth saying.
NOTABLE_VOLUME_LEFT_OUT = 0.05
# The least difference, as a share of the session's value, between a true-range line on the
# full day's bars and on the session's that is worth saying. ATR(14) itself moves by a
# median 1.6-1.8% a day (NQ, ES, CL in 2025), so 5% is some three days of its own drift;
# the full day's ATR ran 4-19% above RTH's (median 10-12%), ADX's -39% to +40%.
NOTABLE_INDICATOR_SHIFT = 0.05
# The units a true-range line's value is compared in as a share of itself ("10% more"): a
# size with a true zero. A rank (0-100), a share of rows (0-1) has none: "a rank of 89.62,
# 34% more" read as a size (p48f W1); those are said in their own terms, when they moved by
# at least this much of their own scale (5 percentile points; 5 points of a share).
_RELATIVE_UNITS = frozenset({PRICE, POINTS, DOLLARS, TICKS, PERCENT})
_NOTABLE_OWN_STEP = {PERCENTILE: 5.0, SHARE: 0.05}


def full_day_caveat(plan: Plan, kept: pd.DataFrame | None) -> list[str]:
    """The warnings for the first stage's extreme prices and volume statistics over daily
    bars of a part of the day, with the full day's over the same dates; none elsewhere."""
    stage = plan.first
    if plan.timeframe.name != "daily" or plan.then is not None:
        return []
    if stage.shape not in ("scalar", "dict"):
        return []
    if kept is None or not len(kept) or "trading_date" not in kept.columns:
        return []
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    extremes = [(item, found) for item in stage.select if (found := _extreme(item, mapped))]
    volumes = [(item, found) for item in stage.select if (found := _volume(item, mapped))]
    if not extremes and not volumes:
        return []
    full = _full_session(plan)  # the session's hours, after the query's shape
    if full is None:
        return []
    dates = kept["trading_date"].to_numpy()
    days = plan.dataset.session_daily(full)
    held = days.index.to_numpy()
    at = np.minimum(date_positions(held, dates), len(held) - 1)
    found_day = held[at] == dates
    if not found_day.any():
        return []
    dates, at, rows = dates[found_day], at[found_day], np.flatnonzero(found_day)
    named = _named(plan)
    warnings = []
    for side, column in dict.fromkeys((f[0], f[1]) for _, f in extremes):
        items = [item for item, found in extremes if found == (side, column)]
        text = _extreme_text(plan, full, named, items, side, column, kept, days, rows, at)
        if text:
            warnings.append(text)
    if volumes:
        part = kept["volume"].to_numpy()[rows].astype(float)
        whole = days["volume"].to_numpy()[at].astype(float)
        text = _volume_text(plan, full, named, volumes, part, whole)
        if text:
            warnings.append(text)
    return warnings


def calendar_extreme_caveat(plan: Plan, kept: pd.DataFrame | None) -> list[str]:
    """The full day's high or low over a weekly, monthly, quarterly or yearly bar of a part
    of the day, when it went further than the bar's: the listed high or low, or max(high),
    min(low) over such bars. "The year-to-date high" as RTH's yearly bar read 25984 with
    nothing said, where daily bars' max(high) said the full day reached 26020.5 on
    2026-01-06 at 08:19 (p47b #11). Each bar covers the trading dates from its timestamp
    (its first) to its trading_date (its last), read from the full session's daily bars."""
    stage = plan.first
    if not plan.timeframe.calendar or plan.then is not None:
        return []
    if kept is None or not len(kept) or not {"timestamp", "trading_date"} <= set(kept.columns):
        return []
    mapped = dict(stage.map_exprs) | dict(stage.hoisted)
    if stage.shape == "table":
        exprs = {item.name: item.expr for item in stage.select}
        wanted = []
        for name in query_columns(stage):
            value = through_map(exprs.get(name, ast.Column(name)), mapped)
            if isinstance(value, ast.Column) and value.name in _SIDE_OF:
                wanted.append((name, _SIDE_OF[value.name], value.name))
    else:
        wanted = [
            (item.name, *found)
            for item in stage.select
            if (found := _extreme(item, mapped)) and found[1] in _SIDE_OF
        ]
    full = _full_session(plan) if wanted else None
    if full is None:
        return []
    days = plan.dataset.session_daily(full)
    held = days.index.to_numpy()
    first = np.searchsorted(held, kept["timestamp"].to_numpy(), side="left")
    stop = np.searchsorted(held, kept["trading_date"].to_numpy(), side="right")
    named = _named(plan)
    warnings = []
    for side, column in dict.fromkeys((side, column) for _, side, column in wanted):
        names = [name for name, s, c in wanted if (s, c) == (side, column)]
        part = kept[column].to_numpy().astype(float)
        whole, when = _span_extremes(days[column].to_numpy(), first, stop, side)
        beyond = whole > part if side == "max" else whole < part
        beyond &= ~np.isnan(whole)
        if stage.shape != "table":  # one extreme over the bars
            pick = np.nanargmax if side == "max" else np.nanargmin
            mine, theirs = int(pick(part)), int(pick(np.where(np.isnan(whole), part, whole)))
            beyond[:] = False
            beyond[theirs] = (
                whole[theirs] > part[mine] if side == "max" else whole[theirs] < part[mine]
            )
        if not beyond.any():
            continue
        # The bar it went furthest on: the first one's 7.25 points hid April 2025's 134.75
        # of NQ's lows (p47g q25).
        rows = np.flatnonzero(beyond)
        row = int(rows[np.argmax(np.abs(whole[rows] - part[rows]))])
        day = held[when[row]]
        level = f"{value_text(whole[row])} on {_moment(plan, day, column, side)}"
        if stage.shape == "table" and len(kept) > 1:
            past = f"{value_text(abs(whole[row] - part[row]))} past its {value_text(part[row])}"
            level = (
                f"further on {int(beyond.sum())} of the {len(kept)} bars, the most to {level} "
                f"({past})"
            )
        else:
            level = f"to {level}"
        extreme = "highest high" if side == "max" else "lowest low"
        are = "is" if len(names) == 1 else "are"
        warnings.append(
            f"{listed_text(names)} {are} the {extreme} of {named} only, a part of the day: the "
            f'full day ({full}) went {level}, outside {plan.session}. The full day\'s: "session": '
            f'"{full}".'
        )
    return warnings


def _span_extremes(
    values: np.ndarray, first: np.ndarray, stop: np.ndarray, side: str
) -> tuple[np.ndarray, np.ndarray]:
    """The highest (``side`` "max") or lowest of ``values[first[i]:stop[i]]`` for each bar,
    with its position in ``values`` (the first, on a tie); NaN and -1 for an empty span."""
    pick = np.argmax if side == "max" else np.argmin
    extreme = np.full(len(first), np.nan)
    where = np.full(len(first), -1, dtype=np.int64)
    for i, (lo, hi) in enumerate(zip(first, stop, strict=True)):
        span = values[lo:hi].astype(float)
        if hi > lo and not np.isnan(span).all():
            at = int(pick(np.where(np.isnan(span), -np.inf if side == "max" else np.inf, span)))
            extreme[i], where[i] = span[at], lo + at
    return extreme, where


def _full_session(plan: Plan) -> str | None:
    """The instrument's full session when the query's daily bars are of a session that
    stands for the day but leaves some of it out (RTH, CASH, '09:30-16:15'), else None."""
    if plan.timeframe.name != "daily" and not plan.timeframe.calendar:
        return None
    instrument = plan.dataset.instrument
    full = instrument.full_session
    if plan.session == full or full not in instrument.sessions:
        return None
    if instrument.session(plan.session).length_minutes >= 24 * 60:
        return None
    if part_of_the_day(plan) is not None:  # the first hour, the overnight hours: asked as such
        return None
    return full


def _named(plan: Plan) -> str:
    """``RTH (09:30-17:00)``, or the window as written."""
    hours = plan.dataset.instrument.session(plan.session).label
    return plan.session if plan.session == hours else f"{plan.session} ({hours})"


def _extreme(item: SelectItem, mapped: dict[str, ast.Expr]) -> tuple[str, str] | None:
    """("max", "high") for max(high) or arg_max(date(), high); None for other items."""
    expr = item.expr
    if not isinstance(expr, ast.Call) or not expr.args:
        return None
    side = _EXTREME_OF.get(expr.name.lower())
    if side is None or len(expr.args) != (2 if _is_arg(item) else 1):
        return None
    value = through_map(expr.args[-1], mapped)
    if isinstance(value, ast.Column) and value.name in _EXTREME_PRICES[side]:
        return side, value.name
    return None


def _is_arg(item: SelectItem) -> bool:
    return isinstance(item.expr, ast.Call) and item.expr.name.lower().startswith("arg_")


def _volume(item: SelectItem, mapped: dict[str, ast.Expr]) -> str | None:
    """ "mean" for mean(volume) (or of a map column that is volume), else None."""
    expr = item.expr
    if not isinstance(expr, ast.Call) or len(expr.args) != 1:
        return None
    name = expr.name.lower()
    value = through_map(expr.args[0], mapped)
    if name in _VOLUME_STATISTICS and isinstance(value, ast.Column) and value.name == "volume":
        return name
    return None


def _extreme_text(
    plan: Plan,
    full: str,
    named: str,
    items: list[SelectItem],
    side: str,
    column: str,
    kept: pd.DataFrame,
    days: pd.DataFrame,
    rows: np.ndarray,
    at: np.ndarray,
) -> str | None:
    """The full day's extreme when it went beyond the session's: a max or min item's value
    is then not the day's level; an arg item's row is another only when the dates differ
    (its answer is the row's, whatever the row's price)."""
    pick = np.nanargmax if side == "max" else np.nanargmin
    part = kept[column].to_numpy()[rows].astype(float)
    whole = days[column].to_numpy()[at].astype(float)
    if np.isnan(part).all() or np.isnan(whole).all():
        return None
    mine, theirs = int(pick(part)), int(pick(whole))
    beyond = whole[theirs] > part[mine] if side == "max" else whole[theirs] < part[mine]
    if not beyond:
        return None
    dates = days.index.to_numpy()[at]
    if all(_is_arg(item) for item in items) and dates[mine] == dates[theirs]:
        return None
    day = str(np.datetime64(dates[theirs], "D"))
    extreme = {"high": "highest high", "low": "lowest low", "close": "highest close"}[column]
    if column == "close" and side == "min":
        extreme = "lowest close"
    when = day if column == "close" else _moment(plan, dates[theirs], column, side)
    return (
        f"{_names(items)} the {extreme} of {named} only, a part "
        f"of the day: the full day ({full}) went to {value_text(whole[theirs])} on {when}, "
        f'outside {plan.session}. The full day\'s: "session": "{full}".'
    )


def _moment(plan: Plan, date: np.datetime64, column: str, side: str) -> str:
    """The calendar date and wall clock of the day's extreme minute bar (its first, on a
    tie): '2025-08-20 at 01:31'. A bar from the evening open (18:00) on is the calendar day
    before its trading date, said beside it: '2025-09-23 at 23:18 (trading day 2025-09-24)',
    not the trading date with that clock, an evening a day too late (p47c A)."""
    minutes = plan.dataset.bars.frame
    held = minutes["trading_date"].to_numpy()
    lo = int(np.searchsorted(held, date, side="left"))
    hi = int(np.searchsorted(held, date, side="right"))
    values = minutes[column].to_numpy()[lo:hi]
    at = lo + int(np.argmax(values) if side == "max" else np.argmin(values))
    stamp = pd.Timestamp(minutes["timestamp"].to_numpy()[at])
    text = f"{stamp:%Y-%m-%d} at {format_clock(stamp.hour * 60 + stamp.minute)}"
    day = str(np.datetime64(date, "D"))
    return text if f"{stamp:%Y-%m-%d}" == day else f"{text} (trading day {day})"


def _volume_text(
    plan: Plan,
    full: str,
    named: str,
    volumes: list[tuple[SelectItem, str]],
    part: np.ndarray,
    whole: np.ndarray,
) -> str | None:
    """The full day's same statistics of volume over the same dates, when the session leaves
    out a notable share of it: RTH holds 66% of NQ's daily volume."""
    total = float(np.nansum(whole))
    if total <= 0:
        return None
    share = float(np.nansum(part)) / total
    if share > 1 - NOTABLE_VOLUME_LEFT_OUT:
        return None
    query = plan.query.to_json()
    unit = column_unit(volumes[0][0].name, plan.timeframe.name, query)
    said = []
    for statistic in dict.fromkeys(found for _, found in volumes):
        value = f"{round(float(_VOLUME_STATISTICS[statistic](whole))):,}"
        if said:
            said.append(f"{_VOLUME_NOUNS[statistic]} {value}")
        else:  # the first says the unit
            said.append(f"{_VOLUME_VERBS[statistic]} {value}" + (f" {unit}" if unit else ""))
    items = [item for item, _ in volumes]
    return (
        f"{_names(items)} the volume of {named} only, "
        f"{share:.0%} of the full day's: over the same {len(whole):,} days the full day "
        f"({full}) {', '.join(said)}. The full day's (what the exchange publishes as daily "
        f'volume): "session": "{full}".'
    )


def _names(items: list[SelectItem]) -> str:
    """ "max_high is", "max_high and date are"."""
    return f"{listed_text([item.name for item in items])} {'is' if len(items) == 1 else 'are'}"


def full_day_indicator_caveat(
    plan: Plan, ctx: EvalContext, kept: pd.DataFrame | None, scope: Scope | None = None
) -> list[str]:
    """The full day's value of a true-range line (atr, adx, keltner) shown over daily bars
    of a part of the day, when it differs notably: the listed rows' values (their median
    difference, with the latest row's two values), a select's aggregates of them, or each
    group's (the range of the differences, in one sentence). "ATR(14) on CL now?" as RTH's
    last row read 2.787 with nothing said; on ETH's bars it is 3.253 (p48d M2). Each map
    column behind them is evaluated again over the full session's daily bars, through all
    history, under the query's period (``scope``: its rows; a rank ranks among the
    period's full days, as the ETH query does: 64.48, not all history's 89.62, p48f W1),
    and read at the kept rows' dates. A size (points, price, percent) is compared as a
    share of itself ("10% more"), a rank or a share in its own terms ("64.48, against
    66.93"), anything else left out; RSI, moving averages and other lines of the close are
    left alone (on NQ and ES RTH ends at the full day's close)."""
    stage = plan.first
    if plan.timeframe.name != "daily" or plan.then is not None:
        return []
    if kept is None or not len(kept) or "trading_date" not in kept.columns:
        return []
    if not stage.calls & READ_PREVIOUS_CLOSE:
        return []
    full = _full_session(plan)
    if full is None:
        return []
    made = list(stage.map_exprs) + list(stage.hoisted)
    mapped = dict(made)
    ranged = [
        name
        for name, expr in made
        if name in kept.columns
        and any(
            isinstance(node, ast.Call) and node.name.lower() in READ_PREVIOUS_CLOSE
            for node in nodes(expr, mapped)
        )
    ]
    if stage.shape == "table":
        shown = [name for name in query_columns(stage) if name in ranged]
    else:
        shown = [item.name for item in stage.select if _reads_any(item.expr, ranged)]
    if not shown:
        return []
    whole = _on_full_days(plan, ctx, full, made, ranged, kept, scope)
    if whole is None:
        return []
    missing = [name for name in ranged if name not in whole.columns]
    named = _named(plan)
    query = plan.query.to_json()
    warnings = []
    if stage.shape == "table":
        latest = int(np.argmax(kept["trading_date"].to_numpy()))
        day = f"{pd.Timestamp(kept['trading_date'].to_numpy()[latest]):%Y-%m-%d}"
        for name in (name for name in shown if name not in missing):
            how = _compared_as(name, ast.Column(name), query, mapped)
            if how is None:
                continue
            part = pd.to_numeric(kept[name], errors="coerce").to_numpy(dtype=float)
            theirs = whole[name].to_numpy(dtype=float)
            median = _median_difference(how, part, theirs)
            if median is None:
                continue
            was, now = value_text(part[latest]), value_text(theirs[latest])
            if len(kept) == 1:
                said = f"it is {now} on {day}, " + (
                    _more(median) if how == _RELATIVE else f"against {was}"
                )
            else:
                said = (
                    f"it is {_differs(how, median)} over the {len(kept):,} rows listed (the "
                    f"median): {now} against {was} on {day}"
                )
            warnings.append(_indicator_text(name, named, full, said))
        return warnings
    quiet = {"warnings": [], "row_warnings": [], "period": None}
    before = dataclasses.replace(ctx, frame=kept.reset_index(drop=True), **quiet)
    swapped = kept.reset_index(drop=True).copy()
    for name in whole.columns:
        swapped[name] = whole[name].array
    after = dataclasses.replace(ctx, frame=swapped, **quiet)
    by = [name for name, _ in stage.group_keys] or None
    for item in stage.select:
        if item.name not in shown or _reads_any(item.expr, missing):
            continue
        how = _compared_as(item.name, item.expr, query, mapped)
        if how is None:
            continue
        try:
            was = evaluate_aggregate(item.expr, before, by)
            now = evaluate_aggregate(item.expr, after, by)
        except BarbError:
            continue
        said = (
            _single_text(how, was, now, item, len(kept))
            if by is None
            else _grouped_text(how, was, now, by)
        )
        if said is not None:
            warnings.append(_indicator_text(item.name, named, full, said))
    return warnings


# How a column is set beside the full day's: as a share of itself, or in its own unit.
_RELATIVE = "relative"
# The aggregates whose value is one of the line's own values, or a mean of them.
_OF_VALUES = frozenset({"mean", "median", "first", "last", "min", "max"})


def _compared_as(name: str, expr: ast.Expr, query: dict, mapped: dict[str, ast.Expr]) -> str | None:
    """``_RELATIVE`` for a size (atr14, atr14 / close * 100, mean of either) or the line
    itself (adx(14), an oscillator whose unit is its own), the unit for a rank or a share
    (said in its own terms), None for anything else (a z-score: left out)."""
    unit = column_unit(name, "daily", query)
    if unit in _RELATIVE_UNITS:
        return _RELATIVE
    if unit in _NOTABLE_OWN_STEP:
        return unit
    if isinstance(expr, ast.Call) and expr.name.lower() in _OF_VALUES and len(expr.args) == 1:
        expr = expr.args[0]
    line = through_map(expr, mapped)
    if isinstance(line, ast.Call) and line.name.lower() in READ_PREVIOUS_CLOSE:
        return _RELATIVE
    return None


def _differences(how: str, part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    """The full day's values against the session's: as shares of them, or as differences."""
    with np.errstate(divide="ignore", invalid="ignore"):
        found = whole / part - 1 if how == _RELATIVE else whole - part
    return found[np.isfinite(found)]


def _notable(how: str, difference: float) -> bool:
    step = NOTABLE_INDICATOR_SHIFT if how == _RELATIVE else _NOTABLE_OWN_STEP[how]
    return abs(difference) >= step


def _median_difference(how: str, part: np.ndarray, whole: np.ndarray) -> float | None:
    """The median difference of the full day's values from the session's, when notable."""
    found = _differences(how, part, whole)
    if not len(found) or not _notable(how, float(np.median(found))):
        return None
    return float(np.median(found))


def _differs(how: str, difference: float) -> str:
    """ "10% more", or "5.2 higher" for a rank."""
    if how == _RELATIVE:
        return _more(difference)
    return f"{value_text(abs(difference))} {'higher' if difference > 0 else 'lower'}"


def _single_text(how: str, was: object, now: object, item: SelectItem, n: int) -> str | None:
    """ "over the same 257 days it is 426.57, 10% more"; None when not notable."""
    try:
        was, now = float(was), float(now)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if not (np.isfinite(was) and np.isfinite(now)) or (how == _RELATIVE and was == 0):
        return None
    difference = now / was - 1 if how == _RELATIVE else now - was
    if not _notable(how, difference):
        return None
    one = item.expr.name.lower() in ("first", "last")  # type: ignore[union-attr]
    over = "" if one or n == 1 else f" over the same {n:,} days"
    against = _more(difference) if how == _RELATIVE else f"against {value_text(was)}"
    return f"{over} it is {value_text(now)}, {against}".lstrip()


def _grouped_text(how: str, was: object, now: object, by: list[str]) -> str | None:
    """Each group's value on the full day's bars, in one sentence: the range of the
    differences and the last group's two values ("over the same days it is 10% more in each
    year (2025: 2.125 against 1.935)"); None when their median difference is not notable
    (p48f M7)."""
    if not (isinstance(was, pd.Series) and isinstance(now, pd.Series)):
        return None
    was = pd.to_numeric(was, errors="coerce")
    now = pd.to_numeric(now, errors="coerce").reindex(was.index)
    with np.errstate(divide="ignore", invalid="ignore"):
        found = now / was - 1 if how == _RELATIVE else now - was
    found = found[np.isfinite(found.to_numpy(dtype=float))]
    if not len(found) or not _notable(how, float(found.median())):
        return None
    lo, hi = float(found.min()), float(found.max())
    keys = ", ".join(by)
    if _differs(how, lo) == _differs(how, hi):
        said = f"{_differs(how, lo)} in each {keys}"
    elif how == _RELATIVE and (lo > 0) == (hi > 0):  # "9% to 11% more by year"
        near, far = (lo, hi) if lo > 0 else (hi, lo)
        said = f"{abs(near):.0%} to {_more(far)} by {keys}"
    else:
        said = f"{_differs(how, lo)} to {_differs(how, hi)} by {keys}"
    last = found.index[-1]
    label = ", ".join(map(str, last)) if isinstance(last, tuple) else str(last)
    return (
        f"over the same days it is {said} ({label}: {value_text(now[last])} against "
        f"{value_text(was[last])})"
    )


def _reads_any(expr: ast.Expr, names: list[str]) -> bool:
    """Whether ``expr`` names one of the columns ``names``."""
    return any(isinstance(node, ast.Column) and node.name in names for node in ast.walk(expr))


def _on_full_days(
    plan: Plan,
    ctx: EvalContext,
    full: str,
    made: list[tuple[str, ast.Expr]],
    wanted: list[str],
    kept: pd.DataFrame,
    scope: Scope | None = None,
) -> pd.DataFrame | None:
    """The map columns ``wanted`` (and those they read, in the map's order) evaluated over
    the full session's daily bars of all history, with the query's period marking its own
    rows (``_period_rows``), at the ``kept`` rows' dates: those that can be (not one
    reading a joined instrument's columns); None when a date has no full-day bar."""
    needed = set(wanted)
    for name, expr in reversed(made):
        if name in needed:
            needed |= {n.name for n in ast.walk(expr) if isinstance(n, ast.Column)}
    try:
        again = ctx.on_daily_bars(full)
    except BarbError:
        return None
    days = again.frame.copy(deep=False)  # a frame of its own already: columns added to it
    period = _period_rows(plan, days["trading_date"].to_numpy(), scope)
    again = dataclasses.replace(again, frame=days, period=period, period_unit=ctx.period_unit)
    for name, expr in made:
        if name in needed:
            try:
                days[name] = evaluate(expr, again).array  # a condition stays one
            except BarbError:
                continue
    held = days["trading_date"].to_numpy()
    dates = kept["trading_date"].to_numpy()
    at = np.minimum(np.searchsorted(held, dates), len(held) - 1)
    if not (held[at] == dates).all():
        return None
    found = [name for name in wanted if name in days.columns]
    if not found:
        return days[found].iloc[at].reset_index(drop=True)
    # Column by column at the kept dates: a frame of the columns first, then of their rows,
    # then a fresh index, cost three copies of every column.
    return pd.DataFrame({name: masked_values(days[name], at) for name in found}, copy=False)


def _period_rows(plan: Plan, dates: np.ndarray, scope: Scope | None) -> np.ndarray | None:
    """Which of the full day's bars (their trading ``dates``) the query's period holds:
    from its first date to its last, or for the last N bars from the first to the last of
    the session's (``scope``: the query's rows, the period's marked); None for all history.
    A rank, a running total, ranks and runs among these, as the full day's own query does."""
    period = plan.period
    if period.everything:
        return None
    start = None if period.start is None else np.datetime64(period.start, "ns")
    end = None if period.end is None else np.datetime64(period.end, "ns")
    if (start is None or end is None) and scope is not None:
        mine = scope.frame["trading_date"].to_numpy()[scope.in_period]
        if len(mine):
            start = mine.min() if start is None else start
            end = mine.max() if end is None else end
    inside = np.ones(len(dates), dtype=bool)
    if start is not None:
        inside &= dates >= start
    if end is not None:
        inside &= dates <= end
    return inside


def _more(shift: float) -> str:
    """ "17% more", "8% less"."""
    return f"{abs(shift):.0%} {'more' if shift > 0 else 'less'}"


def _indicator_text(name: str, named: str, full: str, said: str) -> str:
    return (
        f"{name} is read from {named} bars only, a part of the day: on full-day ({full}) bars, "
        f'what a daily chart shows, {said}. The full day\'s: "session": "{full}".'
    )
