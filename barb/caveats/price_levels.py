"""A size in points averaged over years whose price level differs a lot blends those levels.

"How far does NQ move in a day" over all history: the mean daily range is 171.66 points,
while the last year's is 391.65; NQ closed near 1,200 in 2008 and 25,600 in 2025, and in
percent of the price the two are alike (2.26% and 2.09%). The number is right and answers
nothing a person trading today can use. So a statistic in points (``barb.column_units``:
a range, a body, close - open, atr, high - low …), or one of those in a contract's dollars
or in ticks (``range * 50 as range_usd``: a dollar range grows with the price as well), over
rows whose yearly mean close differs by ``LEVEL_RATIO`` or more is said to blend them, in
the unit the person reads (CL's points are dollars), with the same statistic over the
rows' last 12 months beside it and the percent form to use instead, of the price distance
itself (``range / open * 100`` for ``range_usd``: the dollars' would be 50 times too big).

A ranking by such a distance (a sort and a limit: "the largest overnight gaps", "the
biggest days ever") lists the high-price years' rows: the sample NQ's 5 largest RTH gaps
in points are all from 2020 on, 4 of them from 2021 on (years holding 28% of the days). It
is said so, with how many of the rows listed come from the years of the highest levels
(the lowest, for the smallest distances) and how many of the rows those years hold, and the
percent to sort by; read from the rows the stage kept and listed, never evaluated again.

A running total in points listed over such rows (an equity curve, ``"equity":
"cumsum(pnl)"``) blends them the same way: the 850 Mondays of NQ's open-to-close since 2008
end at 1,153.75 points, a 2008 loss of 362 points looks small beside 2022's 2,708, while in
percent 2008 was the worse year. It is said so, with what the rows' last 12 months added.
Its rows are the first stage's bars one for one, in time order: the first stage's own
table, or a ``then`` map over it (its rows listed by date, not groups).

Only statistics over rows (a single row's values or groups'), rankings and running totals,
never a row's own value in a list of bars, a percent, a count or a price. One warning per
result. A ``then`` stage's statistics are not looked at: its rows are the first stage's
table, not bars.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from barb.column_units import COUNTED_ROWS as ROW_NOUNS
from barb.column_units import (
    DOLLARS,
    POINTS,
    PRICE,
    TICKS,
    column_unit,
    column_units,
    first_map_unit,
)
from barb.frames import Dataset, equality_values
from barb.lineage import MAX_DEPTH, nodes, through_map
from barb.notes import LEVELS_BY_YEAR, PART_YEAR, Note
from barb.planning import HIDDEN, Plan, SelectItem, StagePlan
from barb.script import ast
from barb.script.columns_read import columns_read
from barb.script.context import EvalContext, RowGroups
from barb.script.evaluator import SelectValue, evaluate_select
from barb.script.library import lookup
from barb.script.parser import parse_expression
from barb.stage_output import SINGLE_ROW, StageOutput
from barb.summary_text import group_name, listed_text

# The yearly mean closes' highest over their lowest from which a statistic in points is said
# to blend price levels: at 2x a 100-point range is 2% of the price in one year and 1% in
# another. NQ over 2008-2026 is about 20x, ES about 6x, CL's 2008 over 2020 about 2.5x.
LEVEL_RATIO = 2.0
# The rows read for the yearly mean closes, at most (every k-th row beyond).
LEVEL_SAMPLE_ROWS = 50_000
# A year the rows cover from its first week (the first trading day is Jan 2-4, a week's bar
# begins the December before) to its last (the last is Dec 28-31) is whole; its mean close
# is the year's level. Only the rows' first and last years (the data's or the period's
# ends) can be partial.
WHOLE_FROM, WHOLE_TO = (1, 7), (12, 24)
# The recent rows the statistic is given over, beside the whole.
RECENT_DAYS = 365
# Fewer recent rows than this give no recent value, their count said instead: NQ's Fridays
# after Thanksgiving, 18 over all years, had "over the rows' last 12 months mean_range is
# 309.12", the mean of 2 days (403.25 and 215.00) a model gave as today's typical (p44a Q17).
RECENT_ROWS = 5
# Fewer than this have their count said beside the value (12 NFP days), a year of days not.
COUNTED_ROWS = 30
# Groups of the recent rows read for their spread: those with at least this share of the
# largest one's rows (the rest are the edge of a group mostly before them).
FAIR_SHARE = 0.5
# Groups of another kind (true/false, a few named ones) are each named with their value.
NAMED_GROUPS = 4
# The calls whose groups are stretches of time, of which 12 months hold whole ones and parts.
_STRETCHES = frozenset(
    {"year", "quarter", "month", "week", "weekofyear", "date", "day", "dayofyear"}
)
# Statistics of one row, not of many: they blend nothing.
_ONE_ROW = frozenset({"first", "last"})
# The units of a distance between prices, which grows with the price: points (the
# instrument's own word for them), a contract's dollars, ticks.
DISTANCES = (POINTS, DOLLARS, TICKS)
# The bar's own prices: a distance between two of them (a range, a body) is given in percent
# of the open; one from another price (a peak, the previous close) in percent of that.
_BAR_PRICES = frozenset({"open", "high", "low", "close"})
_DEFAULT_PERCENT = "range / open * 100"
# The query's own instrument's prices, and what is made of them: a statistic reading any is
# of its price level.
_OWN_PRICES = _BAR_PRICES | {"range"}


def price_level_caveat(plan: Plan, ctx: EvalContext, output: StageOutput) -> list[str]:
    """The warning for the first stage's statistics in points over the rows it kept (which
    ``ctx`` evaluates over), or for its ranking by a distance, when the rows' price level
    changed ``LEVEL_RATIO`` times or more; else none."""
    stage, rows = plan.first, output.kept
    if plan.then is not None or rows is None:
        return []
    if stage.shape == "table":
        return _ranking_caveat(plan, output)
    if len(rows) < 2:
        return []
    if "close" not in rows.columns or "trading_date" not in rows.columns:
        return []
    if not plan.instruments:  # the rows' own closes, bound by their dates' minute closes
        # In time order (as ``_recent_start`` reads them): their ends are their first and
        # last dates, where a min and max had read 6.4 million 1-minute bars' dates.
        dates = rows["trading_date"].to_numpy()
        if not closes_may_blend(plan, dates[0], dates[-1]):
            return []  # 2024's rows: before the statistics' units are read from the query
    query = plan.query.to_json()
    units = _distance_units(stage.select, plan.timeframe.name, query, plan.point_values)
    items = [s for s in stage.select if units[s.name] is not None]
    if not items:
        return []
    maps = dict(stage.map_exprs + stage.hoisted)
    rows, price_unit = _priced_rows(plan, rows, [s.expr for s in items], maps)
    years = blended_levels(rows)
    if years is None:
        return []
    said_units = _units_text([s.name for s in items], units, price_unit)
    percent = _percent_form(items[0], maps, query)
    if _by_year(stage):
        # Each group is one year: no group blends levels, the table sets them side by side
        # (2009's range beside 2025's), and the last 12 months are its last group.
        unit = {units[s.name] or POINTS for s in items}
        if len(items) == 1 and unit <= {POINTS}:
            return [years.by_year(items[0].name, price_unit, percent)]
        return [
            f"{said_units} over years whose price level {years.changed()}: each year's value "
            f"grows with its price, so the years compare price levels as much as sizes. For a "
            f"size comparable across years use percent ({percent})."
        ]
    text = _blend_text(said_units, "rows", years, len(items))
    # The rows are in time order (a first stage's, by trading date): the last 12 months are
    # their tail, found by a binary search rather than a comparison over millions of bars.
    dates = rows["trading_date"].to_numpy()
    last = dates[-1]
    start = _recent_start(dates)
    if 0 < start < len(rows):
        recent = rows.iloc[start:].copy(deep=False)  # a slice of every column, no copy
        recent.index = pd.RangeIndex(len(recent))
        keys = [name for name, _ in stage.group_keys]
        timed = any(_reads_time(expr, maps) for _, expr in stage.group_keys)
        # A group of consecutive rows (a trade) begun before the 12 months and running on
        # into them is cut by them; one that ended before is not: NQ's half days grouped by
        # kind hold one row a year each, and the 2024 Dec 24 row before the 12 months had
        # left 2025's Dec 24 group out ("runs 18.75–56.50", its -19.25 unsaid).
        edge = None
        if len(keys) == 1:
            before, after = rows[keys[0]].iloc[start - 1], rows[keys[0]].iloc[start]
            edge = before if before == after else None
        first = pd.Timestamp(dates[start]).date()
        span, count = f"{first} — {pd.Timestamp(last).date()}", len(recent)
        if count < RECENT_ROWS and not keys:  # groups' few rows are each named with theirs
            text += f": the rows' last 12 months ({span}) hold only {count} of them, too few to say"
        else:
            # The stage's values over these very rows, whose groups the tail's are read from.
            shown = {
                name: answer
                for name, answer in (output.aggregates or {}).items()
                if answer.rows.length == len(rows)
            }
            said = _recent_values(items, ctx, recent, keys, named=not timed, edge=edge, shown=shown)
            span += f", {count} rows" if count < COUNTED_ROWS else ""
            text += f": over the rows' last 12 months ({span}) {said}"
    return [
        f"{text}. For a size comparable across years use percent ({percent}), or a recent "
        f"period.{_apart_in_percent(stage, items, output, query)}"
    ]


def then_level_caveat(
    plan: Plan, ctx: EvalContext, first: StageOutput, then: StageOutput
) -> list[str]:
    """``price_level_caveat``'s note for a then stage's single-row statistics in points
    (mean(pnl)) over the first stage's table of daily rows, one per bar it kept, in time
    order (backtest_basics' trades): NQ's gap-down longs over 2008-2026 read expectancy
    2.87 points with no word, pooled over a 13x rise of the price (2025's trades alone
    moved 5 times 2008-12's, p48j q01). Said with the statistic over the rows' last 12
    months and the percent form to select in the first stage. A statistic of a then map's
    running column (a drawdown from cumsum) is not weighed: its recent rows carry the
    earlier years' sums."""
    stage, kept, table = plan.then, first.kept, first.table
    if stage is None or stage.shape not in SINGLE_ROW or stage.group_keys:
        return []
    if plan.first.shape != "table" or plan.first.sort or plan.first.limit is not None:
        return []
    if kept is None or table is None or then.kept is None or len(kept) != len(table):
        return []
    if "close" not in kept.columns or "trading_date" not in kept.columns:
        return []
    rows = kept if then.passed is None else kept[then.passed]
    if len(rows) < 2 or len(rows) != len(then.kept):
        return []
    query = plan.query.to_json()
    made = {name for name, _ in stage.map_exprs}
    units = _distance_units(stage.select, plan.timeframe.name, query, plan.point_values)
    items = [
        item
        for item in stage.select
        if units[item.name] is not None
        and not made & set(ast.referenced_columns(item.expr))
        and isinstance(item.expr, ast.Call)
        and len(item.expr.args) == 1
    ]
    if not items:
        return []
    summed = items[0].expr.args[0]  # type: ignore[union-attr]
    # The first stage's columns as it made them: a joined instrument's range (es_high -
    # es_low) is weighed over that instrument's levels, in its points.
    made_first = {
        s.name: s.expr
        for s in plan.first.select
        if not s.aggregate and s.expr != ast.Column(s.name)
    }
    maps = {**made_first, **dict(plan.first.map_exprs), **dict(stage.map_exprs)}
    rows, price_unit = _priced_rows(plan, rows, [summed], maps)
    years = blended_levels(rows)
    if years is None:
        return []
    said_units = _units_text([s.name for s in items], units, price_unit)
    # The rows by what they are (days, bars): "trades" was said of any listing, CL's days
    # with ES's range among them.
    noun = ROW_NOUNS.get(plan.timeframe.name, "bars")
    text = _blend_text(said_units, noun, years, len(items))
    dates = rows["trading_date"].to_numpy()
    start = _recent_start(dates)
    if 0 < start < len(rows) and len(rows) - start >= RECENT_ROWS:
        recent = then.kept.iloc[start:].reset_index(drop=True)
        first_day, last_day = pd.Timestamp(dates[start]).date(), pd.Timestamp(dates[-1]).date()
        said = _recent_values(items, ctx, recent, [])
        text += f": over the rows' last 12 months ({first_day} — {last_day}) {said}"
    # A first stage's select item is no name its own select can read: its expression is.
    written = made_first.get(summed.name) if isinstance(summed, ast.Column) else None
    percent = percent_of(written or summed, maps, query)
    pct = f"{summed.name}_pct" if isinstance(summed, ast.Column) else "pct"
    return [
        f"{text}. For a size comparable across years select {percent} as {pct} in the first "
        f"stage and use it, or a recent period."
    ]


def _blend_text(said_units: str, rows: str, years: Levels, items: int) -> str:
    """The note's opening: what in points blends which price levels."""
    return (
        f"{said_units} over {rows} whose price level {years.changed()}, so "
        f"{'it blends' if items == 1 else 'they blend'} price levels"
    )


def _recent_start(dates: np.ndarray) -> int:
    """Where the last ``RECENT_DAYS`` of the time-ordered ``dates`` start: found by a binary
    search rather than a comparison over millions of bars."""
    return int(np.searchsorted(dates, dates[-1] - np.timedelta64(RECENT_DAYS, "D"), side="right"))


def running_total_caveat(plan: Plan, first: StageOutput, last: StageOutput) -> list[str]:
    """The warning for a running total of a distance the result lists (``"equity":
    "cumsum(pnl)"``, no restart) when its rows are the first stage's bars (``first.kept``)
    one for one in time order and their price level changed ``LEVEL_RATIO`` times or more;
    else none. The rows are those of a first stage without a where (its map's running total
    runs over every bar, a where's rows are others), sort or limit, or of a then stage that
    neither picks nor orders the first stage's table of such rows."""
    stage, rows, table = plan.then or plan.first, first.kept, last.table
    if stage.shape != "table" or stage.where is not None or stage.sort or stage.limit:
        return []
    if plan.then is not None and (
        plan.first.shape != "table" or plan.first.sort or plan.first.limit is not None
    ):
        return []
    if rows is None or table is None or len(rows) != len(table) or len(rows) < 2:
        return []
    if "close" not in rows.columns or "trading_date" not in rows.columns:
        return []
    query = plan.query.to_json()
    running = [
        (name, expr.args[0])
        for name, expr in stage.map_exprs
        if isinstance(expr, ast.Call) and expr.name == "cumsum" and len(expr.args) == 1
        if name in table.columns
        and column_unit(name, plan.timeframe.name, query, plan.point_values) in DISTANCES
    ]
    if not running:
        return []
    name, summed = running[0]
    maps = {**dict(plan.first.map_exprs), **dict(stage.map_exprs)}
    rows, price_unit = _priced_rows(plan, rows, [summed], maps)
    years = blended_levels(rows)
    if years is None:
        return []
    unit = column_unit(name, plan.timeframe.name, query, plan.point_values)
    said_unit = price_unit if unit == POINTS else unit
    text = (
        f"{name} is a running total in {said_unit} over rows whose price level "
        f"{years.changed()}, so its rises and falls in different years compare price levels "
        "as much as results"
    )
    dates = rows["trading_date"].to_numpy()
    start = int(np.searchsorted(dates, dates[-1] - np.timedelta64(RECENT_DAYS, "D"), "right"))
    if 0 < start < len(rows):
        # A running total skips missing values: the last one before the window is where it
        # stood (0 before the first value).
        total = pd.to_numeric(table[name], errors="coerce").ffill().fillna(0.0).to_numpy()
        added = total[-1] - total[start - 1]
        first_day, last_day = pd.Timestamp(dates[start]).date(), pd.Timestamp(dates[-1]).date()
        text += f": the rows' last 12 months ({first_day} — {last_day}) add {added:+,.2f} to it"
    percent = percent_of(summed, maps, query)
    if plan.then is None:
        advice = f"use percent (cumsum({percent}))"
    else:
        # The then stage's rows hold the first stage's select alone: the price a percent is
        # of (the open) is read there.
        pct = f"{summed.name}_pct" if isinstance(summed, ast.Column) else "pct"
        advice = f"select {percent} as {pct} in the first stage and use cumsum({pct})"
    return [f"{text}. For a curve comparable across years {advice}."]


def _apart_in_percent(
    stage: StagePlan, items: Sequence[SelectItem], output: StageOutput, query: dict
) -> str:
    """' In percent the groups differ by more than their noise: mean_rng_pct highest fomc
    day 2.775 ± 0.3, lowest other 2.239 ± 0.04, though mean_range's are within it.' when a
    blended mean's groups were said to be within noise (``barb.caveats.group_noise``) and the mean
    of its percent form beside it is not: NQ's ETH range on FOMC days against the others,
    2008-2026, is 1.8 standard errors apart in points and 3.5 in percent. Only the percent
    form this warning names (``range / open * 100`` of ``range``), through the map: a
    percent of another thing says nothing of this one."""
    maps = dict(stage.map_exprs + stage.hoisted)
    means = {s.name: s.expr for s in stage.select}
    said = []
    for item in items:
        if item.name not in output.even_columns:
            continue
        form = parse_expression(_percent_form(item, maps, query))
        for name, ends in output.apart_columns.items():
            expr = means.get(name)
            if isinstance(expr, ast.Call) and through_map(expr.args[0], maps) == form:
                said.append((item.name, f"{name} {ends}"))
                break
    if not said:
        return ""
    blended = listed_text([name for name, _ in said])
    whose = f"{blended}'s" if len(said) == 1 else f"those of {blended}"
    return (
        " In percent the groups differ by more than their noise: "
        f"{'; '.join(ends for _, ends in said)}, though {whose} are within it."
    )


def _by_year(stage: StagePlan) -> bool:
    """Whether a group key is year() (through the map): each group lies in one year."""
    mapped = dict(stage.map_exprs)
    for _, key in stage.group_keys:
        expr = through_map(key, mapped)
        if isinstance(expr, ast.Call) and expr.name.lower() == "year" and not expr.args:
            return True
    return False


def _ranking_caveat(plan: Plan, output: StageOutput) -> list[str]:
    """The warning for a table whose limit listed the first of the rows kept by a distance,
    when the rows' price level changed ``LEVEL_RATIO`` times or more and the rows listed
    come from the years of the highest levels (for the largest distances) or the lowest (for
    the smallest) more often than the rows do; else none."""
    stage, rows, listed, table = plan.first, output.listed_from, output.kept, output.table
    if rows is None or listed is None or table is None or not stage.sort or len(rows) < 2:
        return []
    column = stage.sort[0].column
    if "close" not in rows.columns or "trading_date" not in rows.columns:
        return []
    if column not in table.columns or not len(listed):
        return []
    query = plan.query.to_json()
    unit = column_unit(column, plan.timeframe.name, query, plan.point_values)
    if unit not in DISTANCES:
        return []
    ranked = pd.to_numeric(table[column], errors="coerce").dropna()
    if not len(ranked):
        return []
    # The largest distances (a sort down from a positive one, up from a negative loss) come
    # from the high prices; the smallest (a sort up from a range of 8 points) from the low.
    top, descending = float(ranked.iloc[0]), stage.sort[0].descending
    largest = top > 0 if descending else top < 0
    made = next((s.expr for s in stage.select if s.name == column and not s.aggregate), None)
    rows, price_unit = _priced_rows(
        plan, rows, [made or ast.Column(column)], dict(stage.map_exprs + stage.hoisted)
    )
    years = blended_levels(rows)
    if years is None:
        return []
    dates = rows["trading_date"].to_numpy()
    favoured = years.favoured(dates, listed["trading_date"].to_numpy(), high=largest)
    if favoured is None:
        return []
    percent = percent_of(made or ast.Column(column), dict(stage.map_exprs), query)
    said_units = _units_text([column], {column: unit}, price_unit)
    return [
        f"{said_units} over rows whose price level {years.changed()}, so a ranking by it "
        f"favours the {favoured.text()}. To rank sizes comparable across years, sort by a "
        f"percent map column ({percent})."
    ]


def _priced_rows(
    plan: Plan, rows: pd.DataFrame, exprs: Sequence[ast.Expr], maps: dict[str, ast.Expr]
) -> tuple[pd.DataFrame, str]:
    """The rows with the close whose level the distances in ``exprs`` grow with, and the
    word for that instrument's points: a joined instrument's (``es_close``, "points") when
    they read its prices alone. CL's EIA days with ES joined, mean(es_high - es_low), was
    said to be "in dollars" over CL's levels ("mean close 37 in 2016, 115 in 2022"), when
    ES's range grows with ES's price."""
    own = plan.dataset.instrument.price_unit
    read: set[str] = set()
    for expr in exprs:
        for node in nodes(expr, maps):
            if isinstance(node, ast.Column | ast.Call):
                read |= columns_read(node)
    if read & _OWN_PRICES:
        return rows, own
    found = [j for j in plan.instruments if any(n.startswith(j.join.prefix) for n in read)]
    if len(found) != 1 or f"{found[0].join.prefix}close" not in rows.columns:
        return rows, own
    theirs = found[0]
    priced = rows.assign(close=rows[f"{theirs.join.prefix}close"])
    return priced, theirs.dataset.instrument.price_unit


def blended_levels(rows: pd.DataFrame) -> Levels | None:
    """The yearly levels of ``rows`` when their highest is ``LEVEL_RATIO`` times their
    lowest or more; else None."""
    sample = _Sample.of(rows)
    if not sample.may_blend():
        return None
    years = sample.yearly_levels()
    if years is None or years.level.min() <= 0 or years.ratio < LEVEL_RATIO:
        return None
    return years


def closes_may_blend(
    plan: Plan,
    first: dt.date | np.datetime64 | None,
    last: dt.date | np.datetime64 | None,
    ratio: float = LEVEL_RATIO,
) -> bool:
    """Whether the first stage's closes on the trading dates ``first`` to ``last`` could
    differ ``ratio`` times; False only where they cannot. Every bar's close is the
    close of a minute bar of its trading date, so those dates' lowest and highest minute
    closes (``_close_span``, read once per dataset) bound them: "1m bars with range > 20 in
    2024" stops here, before it walks the query or reads its 350,000 rows' closes. (No map
    writes a column named close: Stage refuses the names the engine keeps.)"""
    if first is None or last is None:
        return True
    dates, low, high = plan.dataset.derived("close_span", lambda: _close_span(plan.dataset))
    lo = int(np.searchsorted(dates, np.datetime64(first, "D"), side="left"))
    hi = int(np.searchsorted(dates, np.datetime64(last, "D"), side="right"))
    if lo >= hi:
        return True
    lowest, highest = np.fmin.reduce(low[lo:hi]), np.fmax.reduce(high[lo:hi])
    return not (lowest > 0 and highest / lowest < ratio)


def _close_span(dataset: Dataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each trading date of the minute bars (datetime64[D]) with its lowest and highest
    close (NaN where it has none)."""
    minutes = dataset.bars.frame
    dates = minutes["trading_date"].to_numpy()
    close = minutes["close"].to_numpy(dtype=np.float64)
    if not len(dates):
        return dates.astype("datetime64[D]"), close, close
    starts = np.flatnonzero(np.concatenate(([True], dates[1:] != dates[:-1])))
    return (
        dates[starts].astype("datetime64[D]"),
        np.fmin.reduceat(close, starts),
        np.fmax.reduceat(close, starts),
    )


def _distance_units(
    items: Sequence[SelectItem], timeframe: str, query: dict, point_values: frozenset[float]
) -> dict[str, str | None]:
    """The unit of each item, by name, when it is a statistic over many rows of a distance
    between prices (``DISTANCES``); else None."""
    statistics = [item.name for item in items if _over_rows(item)]
    units = column_units(statistics, timeframe, query, point_values) if statistics else {}
    return {item.name: _distance(units.get(item.name)) for item in items}


def _over_rows(item: SelectItem) -> bool:
    """Whether ``item`` is a statistic over many rows (not first() or last() alone)."""
    if not item.aggregate:
        return False
    calls = [n for n in ast.walk(item.expr) if isinstance(n, ast.Call) and _aggregate(n)]
    return bool(calls) and not all(c.name.lower() in _ONE_ROW for c in calls)


def _distance(unit: str | None) -> str | None:
    return unit if unit in DISTANCES else None


def _units_text(names: Sequence[str], units: dict[str, str | None], points: str) -> str:
    """ "mean_range is in dollars", "mean_range and max_body are in points", "mean_range is
    in points and avg_usd in dollars": each column's unit as the person reads it, points in
    the instrument's own word (``points``: CL's "dollars")."""
    by_unit: dict[str, list[str]] = {}
    for name in names:
        unit = units[name] or POINTS
        by_unit.setdefault(points if unit == POINTS else unit, []).append(name)
    said = [
        f"{listed_text(names)}{'' if at else (' is' if len(names) == 1 else ' are')} in {unit}"
        for at, (unit, names) in enumerate(by_unit.items())
    ]
    return listed_text(said)


def _aggregate(call: ast.Call) -> bool:
    spec = lookup(call.name)
    return spec is not None and spec.is_aggregate


@dataclasses.dataclass(frozen=True)
class Levels:
    """Each year's mean close (``level``, one per year of ``years``: the whole years', or
    every year's when fewer than two are whole), the rows' first and last dates in the years
    they cover only in part, and ``every`` year's level, whole or not."""

    years: np.ndarray
    level: np.ndarray
    partial: dict[int, tuple[dt.date, dt.date]]
    every: dict[int, float]

    @property
    def ratio(self) -> float:
        return float(self.level.max() / self.level.min())

    def changed(self) -> str:
        """ "changed 13.7x (mean close 1,372 in 2009, 18,793 in 2025)"."""
        low, high = int(np.argmin(self.level)), int(np.argmax(self.level))
        return (
            f"changed {self.ratio:.1f}x (mean close {self.level[low]:,.0f} in "
            f"{self.named(low)}, {self.level[high]:,.0f} in {self.named(high)})"
        )

    def by_year(self, name: str, unit: str, percent: str) -> Note:
        """The note of one size ``name`` in ``unit`` by year: "mean_range is in points over
        years whose price level changed 13.7x (…): each year's value grows with its price, …"
        (the English of ``changed``, said in any language)."""
        low, high = int(np.argmin(self.level)), int(np.argmax(self.level))
        return Note.of(
            LEVELS_BY_YEAR,
            name=name,
            unit=unit,
            ratio=f"{self.ratio:.1f}",
            low=int(f"{self.level[low]:.0f}"),
            low_year=self._year(low),
            high=int(f"{self.level[high]:.0f}"),
            high_year=self._year(high),
            percent=percent,
        )

    def _year(self, at: int) -> str | Note:
        year = int(self.years[at])
        if year not in self.partial:
            return str(year)
        first, last = self.partial[year]
        return Note.of(PART_YEAR, year=str(year), first=str(first), last=str(last))

    def favoured(self, dates: np.ndarray, listed: np.ndarray, high: bool) -> _Favoured | None:
        """The years of a level at least half the highest (``high``; else at most twice the
        lowest) when the rows ``listed`` (their trading dates) come from them more often
        than the rows do (``dates``, ascending); else None."""
        years = np.array(sorted(self.every))
        level = np.array([self.every[int(y)] for y in years])
        # Rows per year: each year's run of the dates in order, found by a binary search.
        starts = np.searchsorted(dates, _year_starts(years).astype(dates.dtype))
        ends = np.searchsorted(dates, _year_starts(years + 1).astype(dates.dtype))
        rows = (ends - starts).astype(np.float64)
        picked = listed.astype("datetime64[Y]").astype(np.int64) + 1970
        among = level >= self.level.max() / 2 if high else level <= self.level.min() * 2
        share = float(rows[among].sum() / rows.sum())
        count = int(np.isin(picked, years[among]).sum())
        if count <= share * len(picked):
            return None
        return _Favoured(years[among].tolist(), high, count, len(picked), share)

    def named(self, at: int) -> str:
        """ "2025", or "2026 (2026-01-02 — 2026-01-07 only)"."""
        return str(self._year(at))


@dataclasses.dataclass(frozen=True)
class _Sample:
    """The rows' closes as every ``step``-th row of a long frame reads them (a mean per year
    of 50,000 rows of 6 million minute bars is the same to far better than the ratio's 2x);
    the yearly levels read the dates alike. Plain arrays: on a few thousand daily rows the
    checks cost what pandas spends per call, not what the arithmetic does."""

    rows: pd.DataFrame
    step: int
    close: np.ndarray

    @classmethod
    def of(cls, rows: pd.DataFrame) -> _Sample:
        step = max(1, len(rows) // LEVEL_SAMPLE_ROWS)
        return cls(rows, step, rows["close"].to_numpy(dtype=np.float64)[::step])

    def may_blend(self) -> bool:
        """Whether the yearly mean closes could differ ``LEVEL_RATIO`` times: each lies
        between the lowest and the highest close, so a narrower span rules it out at the
        cost of one min and max (most questions over a few months or years stop here)."""
        if not len(self.close) or np.isnan(self.close).all():
            return False
        low, high = np.nanmin(self.close), np.nanmax(self.close)
        return bool(low > 0 and high / low >= LEVEL_RATIO)

    def yearly_levels(self) -> Levels | None:
        """The mean close of each calendar year of the rows: the whole years' when there are
        two or more (the data's 4 days of 2026 are no year's level), else every year's, the
        partial ones marked. The rows are in date order: each year is a run of them, found
        by a binary search (a conversion of every date to its year costs more than the
        rest)."""
        close, step = self.close, self.step
        dates = self.rows["trading_date"].to_numpy()[::step]
        # A bar of a week or longer is dated by its last trading date and begins at its
        # timestamp: the year's first bar may begin the December before.
        opened = self.rows["timestamp"].to_numpy()[::step] if "timestamp" in self.rows else dates
        first, last = dates[[0, -1]].astype("datetime64[Y]").astype(np.int64) + 1970
        years = np.arange(first, last + 1)
        starts = np.searchsorted(dates, _year_starts(years).astype(dates.dtype))
        held = np.diff(np.append(starts, len(dates))) > 0
        years, starts = years[held], starts[held]
        has = ~np.isnan(close)
        totals = np.add.reduceat(np.where(has, close, 0.0), starts)
        counts = np.add.reduceat(has.astype(np.int64), starts)
        if not counts.any():
            return None
        ends = np.append(starts[1:], len(dates)) - 1
        begins = np.minimum(opened[starts].astype(dates.dtype), dates[starts])
        whole = (begins <= _day_of(years, *WHOLE_FROM)) & (dates[ends] >= _day_of(years, *WHOLE_TO))
        whole[1:-1] = True  # a where thins every year alike: only the rows' ends can be cut
        valued = counts > 0
        level = totals / np.maximum(counts, 1)
        every = {int(y): float(v) for y, v in zip(years[valued], level[valued], strict=True)}
        if (whole & valued).sum() >= 2:
            kept = whole & valued
            return Levels(years[kept], level[kept], {}, every)
        partial = {
            int(year): (pd.Timestamp(dates[start]).date(), pd.Timestamp(dates[end]).date())
            for year, start, end, full in zip(years, starts, ends, whole, strict=True)
            if not full
        }
        return Levels(years[valued], level[valued], partial, every)


@dataclasses.dataclass(frozen=True)
class _Favoured:
    """The ``years`` of the highest levels (``high``) or of the lowest, ``count`` of the
    ``listed`` rows from them, and the ``share`` of all the rows they hold."""

    years: list[int]
    high: bool
    count: int
    listed: int
    share: float

    def text(self) -> str:
        """ "high-price years: 4 of the 5 rows listed are from 2021 — 2026, the years whose
        mean close was at least half the highest, which hold 27% of the rows"."""
        if self.listed == 1:
            rows = "the row listed is"
        elif self.count == self.listed:
            rows = f"all {self.listed} rows listed are"
        else:
            rows = f"{self.count} of the {self.listed} rows listed are"
        level = "at least half the highest" if self.high else "at most twice the lowest"
        held = f"{self.share:.0%}" if self.share >= 0.005 else "under 1%"
        return (
            f"{'high' if self.high else 'low'}-price years: {rows} from "
            f"{_year_runs(self.years)}, the years whose mean close was {level}, which hold "
            f"{held} of the rows"
        )


def _year_runs(years: Sequence[int]) -> str:
    """ "2021 — 2026", "2008, 2010 — 2014, 2022": consecutive years as one run."""
    runs: list[list[int]] = []
    for year in years:
        if runs and year == runs[-1][-1] + 1:
            runs[-1].append(year)
        else:
            runs.append([year])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]} — {r[-1]}" for r in runs)


def _year_starts(years: np.ndarray) -> np.ndarray:
    """January 1st of each year, as datetime64[D]."""
    return (years - 1970).astype("datetime64[Y]").astype("datetime64[D]")


def _day_of(years: np.ndarray, month: int, day: int) -> np.ndarray:
    """The day ``day`` of month ``month`` of each year, as datetime64[ns]."""
    months = ((years - 1970) * 12 + month - 1).astype("datetime64[M]")
    return (months.astype("datetime64[D]") + (day - 1)).astype("datetime64[ns]")


def _recent_values(
    items: Sequence[SelectItem],
    ctx: EvalContext,
    frame: pd.DataFrame,
    by: list[str],
    *,
    named: bool = False,
    edge: object = None,
    shown: Mapping[str, SelectValue] | None = None,
) -> str:
    """ "mean_range is 391.65 and median_range is 370.25", each statistic evaluated again
    over the recent rows ``frame`` alone (in a context of their own: no warning of theirs
    reaches the result); groups give their lowest and highest ("runs 371.20–412.50 across
    the groups"), or with ``named`` (keys of no clock or calendar) a few each by name.
    ``edge``: the one key's value on the row before ``frame``'s, the group the 12 months
    may cut. ``shown``: the stage's own values by name, over the rows whose tail ``frame``
    is (``StageOutput.aggregates``): their groups are read for the tail's, not found
    again."""
    sub = dataclasses.replace(ctx, frame=frame, period=None, warnings=[], row_warnings=[])
    said = []
    for item in items:
        value = None if by else _plain_statistic(item.expr, frame)
        if value is None:
            answer = evaluate_select(
                item.expr, sub, by or None, groups=_tail_groups(shown, item, sub)
            )
            value = answer.value
        if isinstance(value, pd.Series):
            # Plain arrays: a few groups' values, where pandas' indexing and dropna cost
            # more than the statistic (0.4 ms of "RTH range by weekday").
            numbers = pd.to_numeric(value, errors="coerce").to_numpy(
                dtype=np.float64, na_value=np.nan
            )
            sizes = answer.rows.size()
            if named and 1 < len(numbers) <= NAMED_GROUPS:
                # A few groups not of the calendar (eia true/false): each by name. The fair
                # share below is for years and months the last 12 months cut; here it had
                # left EIA days (a fifth of the rows) out, and "mean_range is 0.39" read as
                # theirs where it was the other days'.
                named = [
                    f"{_number(number)} in {group_name(value.index, at)}"
                    for at, number in enumerate(numbers)
                    if not np.isnan(number)
                ]
                if named:
                    said.append(f"{item.name} is {listed_text(named)}")
                continue
            numbers = numbers[_whole_groups(frame, by, value.index, sizes, edge)]
            numbers = numbers[~np.isnan(numbers)]
            if not len(numbers):
                continue
            low, high = _number(numbers.min()), _number(numbers.max())
            if low == high:  # one group in the last 12 months (groups by year): its value
                said.append(f"{item.name} is {low}")
            else:
                said.append(f"{item.name} runs {low}–{high} across the groups")
        elif value is not None and not pd.isna(value):
            said.append(f"{item.name} is {_number(value)}")
    return listed_text(said) if said else "there are too few rows to say"


# The statistics of one column a tail's value is read with pandas as the engine reads it
# (``RowGroups.reduce`` over all the rows: ``Series.mean()``), by the engine's name.
_PLAIN_STATISTICS = {"mean": "mean", "median": "median", "sum": "sum", "min": "min", "max": "max"}


def _plain_statistic(expr: ast.Expr, frame: pd.DataFrame) -> float | None:
    """``mean(range)`` (a statistic of ``_PLAIN_STATISTICS`` of one float column) over all of
    ``frame``'s rows, as ``evaluate_select`` gives it, without its walk of the query and
    checks of the arguments (a fifth of the price-level note on "overnight range stats");
    None for any other expression."""
    if not (isinstance(expr, ast.Call) and len(expr.args) == 1):
        return None
    how, column = _PLAIN_STATISTICS.get(expr.name.lower()), expr.args[0]
    if how is None or not isinstance(column, ast.Column) or column.name not in frame.columns:
        return None
    values = frame[column.name]
    if values.dtype != np.float64:
        return None
    if how == "median" and not values.notna().any():
        return float("nan")  # as RowGroups.reduce: numpy's nanmedian warns for the same
    return float(getattr(values, how)())


def _tail_groups(
    shown: Mapping[str, SelectValue] | None, item: SelectItem, tail: EvalContext
) -> RowGroups | None:
    """The groups of the last rows ``tail`` evaluates over, from those of the stage's
    answer ``item`` over all its rows; None when it has none."""
    answer = (shown or {}).get(item.name)
    if answer is None or not answer.rows.grouped or not len(tail.frame):
        return None
    start = answer.rows.length - len(tail.frame)
    if start < 0:
        return None
    return answer.rows.taken(np.arange(start, answer.rows.length), tail.warn)


def _reads_time(key: ast.Expr, maps: dict[str, ast.Expr]) -> bool:
    """Whether a group key cuts time into stretches (year(), month(), a map column of
    week()): the last 12 months may hold a sliver of one of its groups. Weekdays, hours and
    holiday() are not cut so."""
    return any(
        isinstance(node, ast.Call) and node.name.lower() in _STRETCHES for node in nodes(key, maps)
    )


def _whole_groups(
    frame: pd.DataFrame, by: list[str], index: pd.Index, sizes: pd.Series, edge: object
) -> np.ndarray:
    """Which groups of the recent rows ``frame`` to give the range of: each run of
    consecutive rows one group (a trade by its number) but the run the 12 months cut
    (``edge``'s); else those with a fair part of the rows (``_fair_groups``). Trades last 1
    to 12 days: the fair share had left NQ's RSI(2) trades of 1-4 days out, and the last
    12 months' "pnl runs -1,062.50–-269.50" read as every trade lost, where 7 of 13 won."""
    if len(by) == 1 and len(index):
        keys = equality_values(frame[by[0]])
        changes = int(np.count_nonzero(keys[1:] != keys[:-1])) + 1 if len(keys) else 0
        if changes == len(index):  # every group one run of rows
            return (
                ~np.asarray(index == edge, dtype=bool)
                if edge is not None
                else np.ones(len(index), dtype=bool)
            )
    return _fair_groups(sizes)


def _fair_groups(sizes: pd.Series) -> np.ndarray:
    """Which groups hold a fair part of the recent rows (``sizes``, rows per group): at
    least half as many as the largest. Weekdays hold about 52 days each of the last 12
    months; of yearly groups the year before holds a week or two, whose value is no year's
    ("runs 157.25–206.54 across the groups", 157.25 one week's range)."""
    counts = (
        sizes.to_numpy(dtype=np.float64)
        if isinstance(sizes, pd.Series)
        else np.asarray(sizes, dtype=np.float64)
    )
    return counts >= FAIR_SHARE * counts.max() if len(counts) else counts.astype(bool)


def _number(value: float) -> str:
    return f"{float(value):,.2f}"


def _percent_form(item: SelectItem, maps: dict[str, ast.Expr], query: dict) -> str:
    """The percent form of the distance ``item`` aggregates (``percent_of``). A difference
    of aggregates is in percent of its rows' first open: ``(max(high) -
    min(low)) / first(open) * 100`` for ``max(high) - min(low)``, an hour's range, whose
    first aggregate alone gave "high / open * 100", a price level, not a size (p40e Q31)."""
    expr = item.expr
    if (
        isinstance(expr, ast.Binary)
        and expr.op == "-"
        and all(_has_aggregate(side) for side in (expr.left, expr.right))
    ):
        text = f"{_operand(expr)} / first(open) * 100"
        return _DEFAULT_PERCENT if HIDDEN in text else text
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and _aggregate(node) and node.args:
            return percent_of(node.args[0], maps, query)
    return _DEFAULT_PERCENT


def _has_aggregate(expr: ast.Expr) -> bool:
    return any(isinstance(n, ast.Call) and _aggregate(n) for n in ast.walk(expr))


def percent_of(distance: ast.Expr, maps: dict[str, ast.Expr], query: dict) -> str:
    """``distance`` in percent of the price it is measured from: ``range / open * 100``
    for ``range``, ``(high - low) / open * 100`` for ``high - low`` (the bar's own prices, of
    the open); ``(close / peak - 1) * 100`` for a drawdown ``close - peak`` of ``peak =
    cummax(close)``, ``abs_gap / prev(close) * 100`` for ``abs(open - prev(close))``, ``pnl
    / close * 100`` for a trade's ``pnl = next(close) - close`` (of the entry, the earlier
    price), ``atr14 / close * 100`` for an indicator's ``atr14``. A name the map made of the
    difference itself is kept (``pnl``, ``dd / peak *
    100``). Of the price distance for a scaled one (``range`` for ``range * 1000`` or
    ``range_usd`` of the map's ``range * 1000``: a percent of the dollars would be 1000 times
    too big); the range's for an argument the planner renamed and kept no expression of."""
    if isinstance(distance, ast.Column) and distance.name.startswith(HIDDEN):
        distance = maps.get(distance.name, distance)  # the argument as the query wrote it
    distance = unscaled(distance, maps, 0)
    found = _difference(distance, maps)
    base = _measured_from(found[0], maps, query) if found is not None else None
    if found is not None and base is not None:
        difference, direct = found
        named = isinstance(distance, ast.Column) and distance.name in maps
        if direct and not named and base is difference.right:
            # close - peak: (close / peak - 1) * 100
            text = f"({_operand(difference.left)} / {_operand(base)} - 1) * 100"
        else:
            text = f"{_operand(distance)} / {_operand(base)} * 100"
    else:
        text = f"{_operand(distance)} / {_base_of(distance, maps)} * 100"
    return _DEFAULT_PERCENT if HIDDEN in text else text


def _base_of(distance: ast.Expr, maps: dict[str, ast.Expr]) -> str:
    """The price a distance that is no difference of prices is in percent of: an indicator's
    (``atr14`` of ``atr(14)``, read at the bar's close) of the close, as atr() says and
    TA-Lib's NATR does; anything else (``range``) of the open."""
    made = through_map(distance, maps)
    spec = lookup(made.name) if isinstance(made, ast.Call) else None
    return "close" if spec is not None and spec.category == "indicator" else "open"


def _difference(expr: ast.Expr, maps: dict[str, ast.Expr]) -> tuple[ast.Binary, bool] | None:
    """The difference ``expr`` is, or is made of, followed through the map's names, abs(),
    a sign and a scaling: ``open - prev(close)`` for ``abs_gap`` of ``abs(gap)`` and ``gap
    = open - prev(close)``; with whether ``expr`` is that difference itself (only names on
    the way). None when it is no difference (``range``, ``atr(14)``)."""
    direct = True
    for _ in range(MAX_DEPTH):
        if isinstance(expr, ast.Column) and expr.name in maps:
            expr = maps[expr.name]
            continue
        if isinstance(expr, ast.Binary) and expr.op == "-":
            return expr, direct
        direct = False
        if isinstance(expr, ast.Unary):
            expr = expr.operand
        elif isinstance(expr, ast.Call) and expr.name.lower() == "abs" and len(expr.args) == 1:
            expr = expr.args[0]
        elif isinstance(expr, ast.Binary) and expr.op in ("*", "/") and _is_number(expr.right):
            expr = expr.left
        elif isinstance(expr, ast.Binary) and expr.op == "*" and _is_number(expr.left):
            expr = expr.right
        else:
            return None
    return None


def _measured_from(
    difference: ast.Binary, maps: dict[str, ast.Expr], query: dict
) -> ast.Expr | None:
    """The side of ``difference`` that is the price it is measured from: of two bars'
    prices the earlier one (a trade's entry: ``close`` of ``next(close) - close`` and of a
    short's ``close - next(close)``, ``prev(close)`` of ``close - prev(close)``, ``next(open)``
    of ``next(open) - next(close)``); else the side that is a price other than the bar's own
    (a peak, a moving average), the right one first; None when neither is (``close -
    open``, ``high - low``: the open's)."""
    joined = _joined_prefixes(query)
    right = _bar_price(difference.right, maps, joined)
    left = _bar_price(difference.left, maps, joined)
    if right is not None and left is not None and right[2] == left[2]:
        # Divided by the later price (the exit), a loss of 3.54 points on 517 trades read
        # -0.0806% where the return on the entry is -0.0459%.
        if right[0] != left[0]:
            return difference.right if right[0] < left[0] else difference.left
        # The same bar's prices (a range, a body): of its open, which comes first.
        if "open" in (right[1], left[1]):
            return difference.right if right[1] == "open" else difference.left
        # A joined instrument's range (es_high - es_low) of its own open, as the
        # reference says of the bar's: (es_high / es_low - 1) * 100 read the low.
        return _shifted(ast.Column(f"{right[2]}open"), right[0])
    for side in (difference.right, difference.left):
        if isinstance(side, ast.Column) and side.name in _BAR_PRICES:
            continue
        if first_map_unit(side, query) == PRICE:
            return side
    return None


def _joined_prefixes(query: dict) -> tuple[str, ...]:
    """The column prefixes of the query's joined instruments: ``("es_",)`` for
    ``"join": {"instrument": "ES"}``."""
    joins = query.get("join")
    found = []
    for join in joins if isinstance(joins, list) else [joins]:
        if isinstance(join, dict) and isinstance(join.get("instrument"), str):
            found.append(f"{join['instrument'].strip().lower()}_")
    return tuple(found)


def _bar_price(
    expr: ast.Expr, maps: dict[str, ast.Expr], joined: tuple[str, ...] = ()
) -> tuple[int, str, str] | None:
    """The bar's price ``expr`` reads, how many bars after the row's own and the prefix of
    the instrument it is of: ``(2, "close", "")`` for ``next(close, 2)``, ``(-1, "open",
    "")`` for ``prev(open)``, ``(0, "close", "")`` for ``exit`` of ``"exit": "close"``
    (through the map's names), ``(0, "high", "es_")`` for a joined ``es_high``
    (``joined``: the joins' prefixes); None when it is no bar's price (``cummax(close)``,
    ``atr(14)``, ``close * 2``)."""
    shift = 0
    for _ in range(MAX_DEPTH):
        if isinstance(expr, ast.Column) and expr.name in maps:
            expr = maps[expr.name]
        elif isinstance(expr, ast.Column):
            if expr.name in _BAR_PRICES:
                return shift, expr.name, ""
            for prefix in joined:
                price = expr.name.removeprefix(prefix)
                if expr.name.startswith(prefix) and price in _BAR_PRICES:
                    return shift, price, prefix
            return None
        elif isinstance(expr, ast.Call) and expr.name in ("next", "prev") and expr.args:
            n = ast.literal_value(expr.args[1]) if len(expr.args) > 1 else 1
            if not isinstance(n, int) or isinstance(n, bool):
                return None
            shift += n if expr.name == "next" else -n
            expr = expr.args[0]
        else:
            return None
    return None


def _shifted(price: ast.Column, bars: int) -> ast.Expr:
    """``price`` ``bars`` bars after the row's own: ``next(open, 2)``, ``prev(open)``."""
    if not bars:
        return price
    count = (ast.Number(abs(bars)),) if abs(bars) > 1 else ()
    return ast.Call("next" if bars > 0 else "prev", (price, *count))


def _operand(expr: ast.Expr) -> str:
    """``expr``'s text, in parentheses unless it is a name, a call or a number."""
    text = expr.to_text()
    return text if isinstance(expr, ast.Column | ast.Call | ast.Number) else f"({text})"


def unscaled(expr: ast.Expr, maps: dict[str, ast.Expr], depth: int) -> ast.Expr:
    """``expr`` without its scaling by numbers (``range * 1000`` → ``range``, ``range /
    0.01`` → ``range``), followed through the stage's map names a scaling made; ``expr``
    itself when nothing scaled it."""
    if depth > MAX_DEPTH:
        return expr
    if isinstance(expr, ast.Binary) and expr.op in ("*", "/"):
        if _is_number(expr.right):
            return unscaled(expr.left, maps, depth + 1)
        if expr.op == "*" and _is_number(expr.left):
            return unscaled(expr.right, maps, depth + 1)
    if isinstance(expr, ast.Column) and expr.name in maps:
        made = maps[expr.name]
        inner = unscaled(made, maps, depth + 1)
        if inner is not made:
            return inner
    return expr


def _is_number(expr: ast.Expr) -> bool:
    value = ast.literal_value(expr)
    return isinstance(value, int | float) and not isinstance(value, bool)
