"""A rank, or a count of rows by a threshold, of a distance in points over years whose price
level differs a lot compares sizes at different prices.

"How unusual is today's range" as ``rank(range)`` over NQ's RTH days since 2008 put
2026-01-07's 314.5 points at the 87.12th percentile; in percent of the price (``rank(range /
open * 100)``) it ranks 32.31, a quieter day than most: 314.5 points is 1.2% of 25,700 and
23% of 2009's 1,372. "How many days fell more than today's 128.75 points" (``where chg <
-128.75``, ``count()``) counted 459 days, 454 of them from 2018 on; in percent of the close
before (today's fall is 0.50% of it) 1,492, spread over every year. So a rank of a distance
(``barb.column_units``: points, a contract's dollars, ticks), and a count or share of rows by
a comparison of one with a number (``count()`` after such a where, ``sum(range > 300)``,
``mean(range > 300)``) or with one value of all the rows (``"today": "last(chg)"`` in a
then stage's map), over rows whose price level changed ``LEVEL_RATIO`` times or more, is
said to compare sizes at different prices, with the percent form to use; where the answer
is one count or share, or a few rows' ranks, with that answer in percent beside it.

A number a distance is compared with is read in percent of the price that distance is
measured from on the last row compared (-128.75 points is -0.50% of 25,728.75, the close
before 2026-01-07): the level the person asks from ("today's" fall). One warning per result,
none beside a warning that its statistics blend price levels (``barb.caveats.price_levels``,
which the interpreter gives first). None where the unit changes nothing: a rank of a
percent, a comparison with 0 (a day up is up at any price), rows listed by such a where
(the last days that fell more than 128.75 points are the last ones either way), a count of
a rank's top 10% or the median rank (10% and 50 in either unit).

A rank within a stretch of rows no years' levels set apart (a period of a year, each year
of ``rank(x, 'year')``, the last n rows of ``rolling_rank(x, n)``) compares sizes at
different prices too when the close moved within it: the reference's own "ATR(14) now
against the last year" put 2026-01-07's 389.05 points at the 67.44th percentile of a year
in which NQ's close ran from 16,234 to 25,851 (1.6x); in percent of the price it ranks
1.94, the quietest 2% of the year. Said, with the close's run and the rank in percent, when
the rows the result gives one of (a few listed, or a first/last) have their ranks moved
``RANK_GAP`` points or more by it, over closes ``WINDOW_RATIO`` apart or more.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from barb.caveats.price_levels import (
    DISTANCES,
    LEVEL_RATIO,
    LEVEL_SAMPLE_ROWS,
    Levels,
    blended_levels,
    closes_may_blend,
    percent_of,
    unscaled,
)
from barb.column_units import POINTS, first_map_unit, then_map_unit
from barb.errors import BarbError
from barb.lineage import nodes, through_map
from barb.planning import HIDDEN, Plan, StagePlan
from barb.script import ast
from barb.script.builtins import RESTART_UNITS, restart_keys
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate, evaluate_select
from barb.script.library import is_aggregate_call
from barb.script.parser import parse_expression
from barb.stage_output import StageOutput

# Rows listed whose ranks in percent are given one by one; beyond them, the form to use.
MAX_LISTED = 5
# Rows a rank in percent is computed again over, at most: a rank of NQ's 6 million minute
# bars costs 2 seconds more, for a question the form answers as well.
MAX_RANKED = 1_000_000
_ORDERED = frozenset({"<", "<=", ">", ">="})
# The aggregates of one row's value: its rank in percent is another row's.
_ONE_ROW = ("first", "last")
# The aggregates that count the rows a condition is true on (or their share).
_COUNTING = frozenset({"count", "sum", "mean"})
# The column the percent form is evaluated into, among a stage's own hidden ones.
_PERCENT = f"{HIDDEN}pct"
# A rank within one stretch of rows says the close moved when its highest is this many times
# its lowest or more, far less than LEVEL_RATIO's years: a rank compares each size with the
# others one by one, and a 25% move shifts them by as much as NQ's daily range varies in a
# quiet quarter. Over 252-day windows of NQ's sample, a 1.2-1.3x move changed ATR(14)'s
# last rank by 20 points or more in 8% of them, 1.4-1.5x in 30%.
WINDOW_RATIO = 1.25
# …and when it moves a rank the result gives by this many percentile points or more (a fifth
# of the scale): 67.44 in points against 1.94 in percent is said, 67 against 61 is not.
RANK_GAP = 20.0
# The ranks of a stretch of rows: rank() over the period (or each per), rolling_rank()'s n.
_RANKS = frozenset({"rank", "rolling_rank"})


@dataclasses.dataclass(frozen=True)
class Bars:
    """The first stage's bars once it ran: ``frame`` with its map's columns, ``keep`` the
    rows its where read (the period's, less an event filter's) and ``period`` the period's
    own (rank()'s rows; None: every row)."""

    frame: pd.DataFrame
    keep: np.ndarray
    period: np.ndarray | None
    # The trading dates of the period's first and last rows: every row either stage
    # compares lies between them.
    dates: tuple[dt.date | None, dt.date | None] = (None, None)


@dataclasses.dataclass(frozen=True)
class _Found:
    """``rank(distance)`` (``within`` a per or a rolling window: ``rank(distance, 'year')``,
    ``rolling_rank(distance, 252)``), or ``distance op fixed`` (``fixed op distance`` when
    not ``left``), as the stage wrote it."""

    node: ast.Call | ast.Compare
    distance: ast.Expr
    fixed: ast.Expr | None = None
    left: bool = True
    within: bool = False

    @property
    def ranks(self) -> bool:
        return isinstance(self.node, ast.Call)

    def in_percent(self, percent: ast.Expr, threshold: ast.Expr | None = None) -> ast.Expr:
        """The node with ``percent`` for the distance (and ``threshold`` for the value
        compared with): ``rank(range / open * 100)``, ``chg / prev(close) * 100 < -128.75 /
        25728.75 * 100``."""
        if isinstance(self.node, ast.Call):
            return ast.Call(self.node.name, (percent, *self.node.args[1:]))
        assert threshold is not None
        sides = (percent, threshold) if self.left else (threshold, percent)
        return ast.Compare(self.node.op, *sides)


@dataclasses.dataclass(frozen=True)
class _Moved:
    """The close's lowest and highest over the rows a rank compares, with their dates, in
    time order (``first`` the earlier)."""

    first: tuple[float, str]
    then: tuple[float, str]

    @classmethod
    def over(cls, close: np.ndarray, dates: np.ndarray, rows: np.ndarray) -> _Moved | None:
        """Of ``close`` on the ``rows`` (a mask), when its highest is ``WINDOW_RATIO`` times
        its lowest or more; else None."""
        at = np.flatnonzero(rows & np.isfinite(close))
        if not len(at):
            return None
        low, high = at[np.argmin(close[at])], at[np.argmax(close[at])]
        if close[low] <= 0 or close[high] / close[low] < WINDOW_RATIO:
            return None
        ends = [(float(close[i]), str(np.datetime64(dates[i], "D"))) for i in sorted((low, high))]
        return cls(ends[0], ends[1])

    def changed(self) -> str:
        """ "ran from 16,234 on 2025-09-05 to 25,851 on 2026-01-05 (1.6x)"."""
        (start, on), (end, to) = self.first, self.then
        return (
            f"ran from {start:,.0f} on {on} to {end:,.0f} on {to} "
            f"({max(start, end) / min(start, end):.1f}x)"
        )


@dataclasses.dataclass(frozen=True)
class _Scale:
    """On the last row compared: the percent per point of the price distance (``factor``),
    the price it is measured from (``base``), the distance per point of it (``multiple``:
    20 for NQ's dollars of ``range * 20``, 1 for points) and the row's date."""

    factor: float
    base: float
    multiple: float
    date: str

    def points(self, value: int | float) -> int | float:
        """``value`` of the distance in points (8000 dollars of ``range * 20`` are 400)."""
        if self.multiple == 1:
            return value
        points = float(f"{value / self.multiple:.10g}")
        return int(points) if points.is_integer() else points

    def threshold(self, value: int | float) -> ast.Expr:
        """``value`` in percent of the base, as a form the person can run: ``-128.75 /
        25728.75 * 100``. Exact, not -0.5004: the row the number was read from (today's fall
        of 128.75) is not below it in percent either, as it is not in points."""
        base = int(self.base) if self.base.is_integer() else self.base
        fraction = ast.Binary("/", ast.Number(self.points(value)), ast.Number(base))
        return ast.Binary("*", fraction, ast.Number(100))


@dataclasses.dataclass(frozen=True)
class LevelCaveat:
    """The warning (none, or one sentence), and of a rank column listed on one row, that
    row's rank in percent of the price by column ({"atr_rank": 1.95}), for the chart's card
    to give beside the rank in points (66.93): the chart is what the person keeps."""

    warnings: list[str] = dataclasses.field(default_factory=list)
    percent_ranks: dict[str, float] = dataclasses.field(default_factory=dict)


def comparison_caveat(
    plan: Plan, ctx: EvalContext, bars: Bars, first: StageOutput, last: StageOutput
) -> LevelCaveat:
    """The warning for a rank of a distance, or a count or share of rows by a comparison of
    one with a number or with one value of all the rows, over rows whose price level changed
    ``LEVEL_RATIO`` times or more (``first``: the first stage's output, ``last``: the
    result's); else none. ``ctx`` is any context of the run: the numbers in percent are
    evaluated over ``bars`` in a copy of it."""
    # A rank is said from closes WINDOW_RATIO apart, a count from LEVEL_RATIO's.
    ratio = WINDOW_RATIO if plan.first.calls & _RANKS else LEVEL_RATIO
    if not closes_may_blend(plan, *bars.dates, ratio):  # no level changed enough
        return LevelCaveat()
    over = dataclasses.replace(
        ctx,
        frame=bars.frame,
        period=bars.period,
        warnings=[],
        row_warnings=[],
        rows_are_weeks=False,
        history_beyond=[],
    )
    stage: _Stage = (
        _FirstStage(plan, over, bars, first)
        if plan.then is None
        else _SecondStage(plan, over, first, last)
    )
    try:
        said = stage.caveat()
    except BarbError:  # a percent form the stage cannot evaluate: no warning, not no answer
        return LevelCaveat()
    return LevelCaveat(said, stage.percent_ranks if said else {})


class _Stage:
    """What both stages share: where the rank or comparison is, and the warning's text."""

    plan: Plan
    stage: StagePlan
    maps: dict[str, ast.Expr]
    # Of a rank column listed on one row, its rank in percent (``LevelCaveat``).
    percent_ranks: dict[str, float]

    def caveat(self) -> list[str]:
        raise NotImplementedError

    def _unit(self, expr: ast.Expr) -> str | None:
        raise NotImplementedError

    def _fixed(self, expr: ast.Expr) -> bool:
        return _is_threshold(expr)

    def _search(self) -> tuple[str, Any, _Found] | None:
        """The first rank of a distance, or comparison of one with a fixed value, in the
        stage's where, its select's statistics (``"select"``, with the item) or a rank among
        its columns listed (``"column"``, with its name); a comparison listed row by row is
        no count."""
        stage = self.stage
        if not stage.calls & _RANKS and not stage.comparisons & _ORDERED:
            return None  # neither a rank nor an ordering: no walk of the query
        places: list[tuple[str, Any, ast.Expr]] = []
        if stage.where is not None:
            places.append(("where", None, stage.where))
        for item in stage.select:
            expr = _unhoisted(item.expr, self.maps)
            places.append(("select", item, expr) if item.aggregate else ("column", item.name, expr))
        if stage.shape == "table" and not stage.select:
            places += [("column", name, ast.Column(name)) for name, _ in stage.map_exprs]
        for place, what, expr in places:
            for node in nodes(expr, self.maps):
                found = _found(node, self._unit, self._fixed, self.maps)
                if found is not None and (found.ranks or place != "column"):
                    return place, what, found
        return None

    def _text(
        self, found: _Found, years: Levels | _Moved, who: str, example: str, answer: str
    ) -> list[str]:
        unit = self._unit_word(found)
        if found.ranks:
            distance = found.distance.to_text()
            said = (
                f"{who} ranks {distance} in {unit} among rows whose price level "
                f"{years.changed()}, so it ranks sizes at different prices as one."
            )
        else:
            assert found.fixed is not None
            said = (
                f"{found.node.to_text()}{self._fixed_text(found.fixed)} is a comparison in "
                f"{unit} over rows whose price level {years.changed()}"
                f"{example or ', so one size is a different move in each year'}."
            )
        return [f"{said} {answer}"]

    def _fixed_text(self, fixed: ast.Expr) -> str:
        """ " (today: last(chg))" for a then.map name compared with; "" for a number."""
        if not isinstance(fixed, ast.Column):
            return ""
        return f" ({fixed.name}: {through_map(fixed, self.maps).to_text()})"

    def _unit_word(self, found: _Found) -> str:
        unit = self._unit(found.distance)
        return self.plan.dataset.instrument.price_unit if unit == POINTS else str(unit)

    def _units(self, found: _Found) -> tuple[str, str]:
        """The distance's unit and the price's, as the person reads them."""
        return self._unit_word(found), self.plan.dataset.instrument.price_unit


class _FirstStage(_Stage):
    """A first stage (no then): its rank of a distance anywhere, its count() after a where
    comparing one with a number, its sum/mean/count of such a comparison."""

    def __init__(self, plan: Plan, ctx: EvalContext, bars: Bars, output: StageOutput) -> None:
        self.plan, self.ctx, self.bars, self.output = plan, ctx, bars, output
        self.stage = plan.first
        self.percent_ranks = {}
        self.maps = dict(plan.first.map_exprs + plan.first.hoisted)
        self.query = plan.query.to_json()

    def _unit(self, expr: ast.Expr) -> str | None:
        return first_map_unit(expr, self.query)

    def caveat(self) -> list[str]:
        stage, output, bars = self.stage, self.output, self.bars
        hit = self._search()
        if hit is None or output.passed is None:
            return []
        place, what, found = hit
        counted = _count_item(stage)
        if place == "where" and not found.ranks and counted is None:
            return []  # rows listed, or a statistic of them: no count by the comparison
        one = stage.shape in ("scalar", "dict")
        if found.ranks and one and _counts_ranks(stage, place, what):
            return []
        if found.within:  # each row ranked among its own stretch: no years' levels
            return self._window(place, what, found)
        # The rows compared: a rank's are the period's, a where's the rows it read, a
        # select's the rows kept.
        if found.ranks:
            compared = bars.period if bars.period is not None else bars.keep
        else:
            compared = bars.keep if place == "where" else output.passed
        rows = _rows(bars.frame, compared)
        years = None if rows is None else blended_levels(rows)
        if years is None:
            return self._window(place, what, found) if found.ranks else []
        percent = parse_expression(percent_of(found.distance, self.maps, self.query))
        example, threshold = "", None
        if not found.ranks:
            scale = self._scale(found, percent, compared)
            if scale is None:
                return []
            value = _number(found.fixed)
            threshold = scale.threshold(value)
            example = _example(found, value, scale, years, self._units(found))
        replaced = found.in_percent(percent, threshold)
        # A rank of a few million minute bars is not sorted again for the numbers.
        cheap = not found.ranks or np.count_nonzero(compared) <= MAX_RANKED
        if place == "where":
            assert stage.where is not None
            where = _replace(stage.where, found.node, replaced, self.maps)
            form = f"where {where.to_text()}"
            # A rank's threshold keeps as many rows in either unit: only its count is said.
            counts = one and counted and not found.ranks
            answer = self._count(where, form, counted) if counts else _use(form)
        elif place == "select":
            item = _replace(_unhoisted(what.expr, self.maps), found.node, replaced, self.maps)
            single = one and cheap and _one_column(item)
            answer = self._statistic(item, what.name) if single else _use(item.to_text())
        else:
            answer = self._ranks(what, found, replaced) if cheap else _use(replaced.to_text())
        who = what if place == "column" else found.node.to_text()
        return self._text(found, years, who, example, answer)

    def _scale(self, found: _Found, percent: ast.Expr, compared: np.ndarray) -> _Scale | None:
        price = unscaled(found.distance, self.maps, 0)
        distance = _floats(evaluate(found.distance, self.ctx))
        points = distance if price == found.distance else _floats(evaluate(price, self.ctx))
        pct = _floats(evaluate(percent, self.ctx))
        stamps = self.bars.frame["timestamp" if self.ctx.intraday else "trading_date"]
        rows = (x[compared] for x in (distance, points, pct, stamps.to_numpy()))
        return _last_scale(*rows, self.ctx.intraday)

    def _count(self, where: ast.Expr, form: str, name: str) -> str:
        """ "In percent (where …) count is 1,492, not 459." """
        true = evaluate(where, self.ctx)
        if not pd.api.types.is_bool_dtype(true):
            return _use(form)
        counted = np.count_nonzero(self.bars.keep & true.fillna(False).to_numpy(dtype=bool))
        return _in_percent(form, name, _said(counted), _said(self._value(name)))

    def _statistic(self, item: ast.Call, name: str) -> str:
        """ "In percent (mean(range / open * 100 > 300 / 25760.25 * 100)) mean_range_gt_300
        is 0.7023, not 0.1441.": the aggregate's column evaluated over every bar (a prev()
        reads the bar before, a rank() the period's rows, as the stage's own did), the
        aggregate over the rows kept."""
        assert self.output.passed is not None
        values = evaluate(item.args[0], self.ctx)
        kept = pd.Series(values.array.take(np.flatnonzero(self.output.passed)))
        rows = dataclasses.replace(self.ctx, frame=pd.DataFrame({_PERCENT: kept}), period=None)
        call = ast.Call(item.name, (ast.Column(_PERCENT), *item.args[1:]))
        new = evaluate_select(call, rows).value
        return _in_percent(item.to_text(), name, _said(new), _said(self._value(name)))

    def _ranks(self, column: str, found: _Found, replaced: ast.Expr) -> str:
        """ "In percent (rank(range / open * 100)) 2026-01-07 ranks 32.31, not 87.12." for
        the rows listed, when they are few and the column is the rank itself."""
        listed = self._listed(column, found)
        if listed is None:
            return _use(replaced.to_text())
        at, labels, old = listed
        new = _floats(evaluate(replaced, self.ctx))[at]
        if len(labels) == 1:
            self.percent_ranks[column] = float(new[0])
        return _ranks_text(replaced, labels, new, old)

    def _listed(
        self, column: str, found: _Found
    ) -> tuple[np.ndarray, list[str], np.ndarray] | None:
        """The rows listed (their places among the bars), named, and their ranks, when they
        are few and ``column`` is the rank itself; else None."""
        output, table = self.output, self.output.table
        shown = next((s.expr for s in self.stage.select if s.name == column), ast.Column(column))
        few = table is not None and 0 < len(table) <= MAX_LISTED and column in table.columns
        if not few or through_map(shown, self.maps) != found.node or output.order is None:
            return None
        assert table is not None and output.passed is not None
        at = np.flatnonzero(output.passed)[output.order]
        old = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=np.float64)
        return at, [_label(v) for v in table.iloc[:, 0]], old

    def _window(self, place: str, what: Any, found: _Found) -> list[str]:
        """The warning for a rank of a distance among a stretch of rows over which the close
        moved (``_Moved``), when a rank the result gives, of a few rows listed or of one
        row's (``last(rk)``), moves ``RANK_GAP`` points or more in percent; else none. The
        shape is read first: most queries stop there."""
        given = self._given(place, what, found)
        if given is None:
            return []
        at, labels, old = given
        ranked = self._ranked(found, at)
        if ranked is None or self._ranking_rows(found) > MAX_RANKED:
            return []
        frame = self.bars.frame
        valued = np.isfinite(_floats(evaluate(found.distance, self.ctx)))
        close = frame["close"].to_numpy(dtype=np.float64)
        moved = _Moved.over(close, frame["trading_date"].to_numpy(), ranked & valued)
        if moved is None:
            return []
        percent = parse_expression(percent_of(found.distance, self.maps, self.query))
        replaced = found.in_percent(percent)
        new = _floats(evaluate(replaced, self.ctx))[at]
        if not (np.abs(new - old) >= RANK_GAP).any():
            return []
        if place == "column":
            if len(labels) == 1:
                self.percent_ranks[what] = float(new[0])
            answer = _ranks_text(replaced, labels, new, old)
            return self._text(found, moved, what, "", answer)
        item = _replace(_unhoisted(what.expr, self.maps), found.node, replaced, self.maps)
        answer = f"In percent ({item.to_text()}) {what.name} is {new[0]:.4g}, not {old[0]:.4g}."
        return self._text(found, moved, found.node.to_text(), "", answer)

    def _given(
        self, place: str, what: Any, found: _Found
    ) -> tuple[np.ndarray, list[str], np.ndarray] | None:
        """The rows whose rank the result gives (their places among the bars), named, and
        those ranks: a few rows listed with the rank as a column, or the row of a single
        answer's ``last(rk)`` / ``first(rk)``; else None."""
        if place == "column":
            return self._listed(what, found)
        output = self.output
        if place != "select" or self.stage.shape not in ("scalar", "dict"):
            return None
        expr = _unhoisted(what.expr, self.maps)
        if not isinstance(expr, ast.Call) or expr.name.lower() not in _ONE_ROW:
            return None
        if len(expr.args) != 1 or through_map(expr.args[0], self.maps) != found.node:
            return None
        assert output.passed is not None
        rows = np.flatnonzero(output.passed)
        old = self._value(what.name)
        if not len(rows) or not isinstance(old, int | float) or isinstance(old, bool):
            return None
        at = rows[-1:] if expr.name.lower() == "last" else rows[:1]
        return at, [], np.array([float(old)])

    def _ranking_rows(self, found: _Found) -> int:
        """The rows the rank in percent is computed over: the period's for rank(), every
        bar's for rolling_rank() (a rolling rank of 6 million minute bars takes 7 seconds)."""
        bars = self.bars
        assert isinstance(found.node, ast.Call)
        if found.node.name.lower() == "rolling_rank" or bars.period is None:
            return len(bars.frame)
        return int(np.count_nonzero(bars.period))

    def _ranked(self, found: _Found, at: np.ndarray) -> np.ndarray | None:
        """The rows the rank of the rows at ``at`` compares them with, as a mask over the
        bars: the period's (rank(x)), their whole per's (rank(x, 'year'), before and after
        the period too), the last n up to each (rolling_rank(x, n)); None for a rank it
        cannot read."""
        node, bars = found.node, self.bars
        assert isinstance(node, ast.Call)
        if node.name.lower() == "rolling_rank":
            n = ast.literal_value(node.args[1]) if len(node.args) > 1 else None
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                return None
            rows = np.zeros(len(bars.frame), dtype=bool)
            for end in at:
                rows[max(0, int(end) - n + 1) : int(end) + 1] = True
            return rows
        period = bars.period if bars.period is not None else bars.keep
        if len(node.args) == 1:
            return period
        per = ast.literal_value(node.args[1])
        if not isinstance(per, str) or per not in RESTART_UNITS:
            return None
        keys = restart_keys(self.ctx, per, "rank")
        return np.isin(keys, keys[at])

    def _value(self, name: str) -> Any:
        summary = self.output.summary
        return summary.value if summary.type == "scalar" else (summary.values or {}).get(name)


class _SecondStage(_Stage):
    """A then stage over a first stage's table of bars: its rank of a distance the first
    stage selected, its count() after a where comparing one with a number or with a
    then.map value of all the rows (``"today": "last(chg)"``), its sum/mean/count of such a
    comparison. The percent form is made in the first stage, where the price it is of is."""

    def __init__(self, plan: Plan, ctx: EvalContext, first: StageOutput, last: StageOutput) -> None:
        assert plan.then is not None
        self.plan, self.ctx, self.first, self.last = plan, ctx, first, last
        self.stage = plan.then
        self.percent_ranks = {}
        self.maps = dict(plan.then.map_exprs + plan.then.hoisted)
        self.first_maps = dict(plan.first.map_exprs + plan.first.hoisted)
        self.query = plan.query.to_json()

    def _unit(self, expr: ast.Expr) -> str | None:
        return then_map_unit(expr, self.query)

    def _fixed(self, expr: ast.Expr) -> bool:
        """A number, or a then.map name of an aggregate: one value for every row."""
        if _is_threshold(expr):
            return True
        return (
            isinstance(expr, ast.Column)
            and expr.name in self.maps
            and is_aggregate_call(through_map(expr, self.maps))
        )

    def caveat(self) -> list[str]:
        plan, first = self.plan, self.first
        if plan.first.shape != "table" or first.kept is None or first.passed is None:
            return []
        hit = self._search()
        if hit is None:
            return []
        place, what, found = hit
        counted = _count_item(self.stage)
        if found.within:  # a then stage's rows are no stretch of bars a per can cut
            return []
        if place == "where" and not found.ranks and counted is None:
            return []
        made = self._first_expr(found.distance)
        years = blended_levels(first.kept) if made is not None else None
        if made is None or years is None:
            return []
        name, distance = made
        percent = percent_of(distance, self.first_maps, self.query)
        pct = f"{name}_pct"
        steps = [f"select {percent} as {pct} in the first stage"]
        who = what if place == "column" else found.node.to_text()
        if found.ranks:
            if self.last.summary.type in ("scalar", "dict") and _counts_ranks(
                self.stage, place, what
            ):
                return []
            steps.append(f"rank({pct})")
            return self._text(found, years, who, "", _use(_steps(steps)))
        assert found.fixed is not None
        # The then stage's rows in time order: the first stage's rows kept, one for one.
        whole = plan.first.limit is None and len(first.kept) == np.count_nonzero(first.passed)
        values = self._values(distance, parse_expression(percent)) if whole else None
        example = ""
        if _is_number(found.fixed):
            scale = None if values is None else self._scale(values)
            if scale is None:
                return []
            value = _number(found.fixed)
            threshold: ast.Expr = scale.threshold(value)
            example = _example(found, value, scale, years, self._units(found))
            level: ast.Expr | None = threshold
        else:
            # A then.map value of all the rows (today = last(chg)): in percent, the same
            # aggregate of the percent form (last(chg_pct)), read off the rows.
            aggregate = self._aggregate(found)
            if aggregate is None:
                return []
            call = ast.Call(aggregate.name, (ast.Column(pct), *aggregate.args[1:]))
            steps.append(f'"{found.fixed.to_text()}": "{call.to_text()}" in then.map')
            threshold = found.fixed
            level = self._aggregated(aggregate, values) if values is not None else None
        compared = found.in_percent(ast.Column(pct), threshold)
        if place == "where":
            assert self.stage.where is not None
            steps.append(f"where {_replace(self.stage.where, found.node, compared, self.maps)}")
        else:
            item = _unhoisted(what.expr, self.maps)
            steps.append(_replace(item, found.node, compared, self.maps).to_text())
        advice = _steps(steps)
        new = self._counted(place, what, counted, found, values, level)
        answer = f"In percent ({advice}) {new}." if new else _use(advice)
        return self._text(found, years, who, example, answer)

    def _first_expr(self, distance: ast.Expr) -> tuple[str, ast.Expr] | None:
        """The first stage's column a then distance is and the expression that made it
        (``chg`` and ``close - prev(close)`` of ``"select": "close - prev(close) as chg"``);
        None when it is no first stage column."""
        column = through_map(distance, self.maps)
        if not isinstance(column, ast.Column) or column.name in self.maps:
            return None
        select = self.plan.first.select
        if not select:
            return column.name, column
        item = next((s for s in select if s.name == column.name and not s.aggregate), None)
        if item is None:
            return None
        return column.name, _unhoisted(item.expr, self.first_maps)

    def _aggregate(self, found: _Found) -> ast.Call | None:
        """The then.map aggregate a distance is compared with, when it is of that distance
        (``last(chg)`` for ``chg < today``); else None."""
        assert found.fixed is not None
        made = through_map(found.fixed, self.maps)
        if not isinstance(made, ast.Call) or not made.args:
            return None
        same = through_map(made.args[0], self.maps) == through_map(found.distance, self.maps)
        return made if same else None

    def _values(self, distance: ast.Expr, percent: ast.Expr) -> pd.DataFrame:
        """The distance, its price distance and its percent form on the then stage's rows,
        in time order."""
        at = np.flatnonzero(self.first.passed)
        price = unscaled(distance, self.first_maps, 0)
        return pd.DataFrame(
            {
                "distance": _floats(evaluate(distance, self.ctx))[at],
                "price": _floats(evaluate(price, self.ctx))[at],
                _PERCENT: _floats(evaluate(percent, self.ctx))[at],
            }
        )

    def _scale(self, values: pd.DataFrame) -> _Scale | None:
        kept, intraday = self.first.kept, self.ctx.intraday
        assert kept is not None
        stamps = kept["timestamp" if intraday else "trading_date"].to_numpy()
        columns = (values[c].to_numpy() for c in ("distance", "price", _PERCENT))
        return _last_scale(*columns, stamps, intraday)

    def _aggregated(self, aggregate: ast.Call, values: pd.DataFrame) -> ast.Expr | None:
        """The then.map aggregate of the percent form over the rows: last(chg_pct)."""
        rows = dataclasses.replace(self.ctx, frame=values, period=None)
        call = ast.Call(aggregate.name, (ast.Column(_PERCENT), *aggregate.args[1:]))
        value = evaluate_select(call, rows).value
        if not isinstance(value, int | float) or isinstance(value, bool) or pd.isna(value):
            return None
        return ast.Number(float(value))

    def _counted(
        self,
        place: str,
        what: Any,
        counted: str | None,
        found: _Found,
        values: pd.DataFrame | None,
        level: ast.Expr | None,
    ) -> str | None:
        """ "count is 1,492, not 459": the then stage's count in percent when its where is
        the comparison alone, or its sum/mean/count of the comparison alone (no where)."""
        stage, summary = self.stage, self.last.summary
        if values is None or level is None or summary.type not in ("scalar", "dict"):
            return None
        condition = found.in_percent(ast.Column(_PERCENT), level)
        rows = dataclasses.replace(self.ctx, frame=values, period=None)
        if place == "where" and counted and through_map(stage.where, self.maps) == found.node:
            name = counted
            new: Any = int(evaluate(condition, rows).fillna(False).to_numpy(dtype=bool).sum())
        elif place == "select" and stage.where is None and _counts_rows(what.expr):
            argument = through_map(_unhoisted(what.expr, self.maps).args[0], self.maps)
            if argument != found.node:
                return None
            name = what.name
            new = evaluate_select(ast.Call(what.expr.name, (condition,)), rows).value
        else:
            return None
        old = summary.value if summary.type == "scalar" else (summary.values or {}).get(name)
        return f"{name} is {_said(new)}, not {_said(old)}"


def _found(
    node: ast.Node,
    unit: Callable[[ast.Expr], str | None],
    fixed: Callable[[ast.Expr], bool],
    maps: Mapping[str, ast.Expr],
) -> _Found | None:
    """``node`` as a rank of a distance over all the rows (no per), or an ordering of each
    row's distance against a ``fixed`` value; else None. A statistic compared with a number
    (``max(range) > 300``) is one yes or no, no count of rows."""

    def distance(expr: ast.Expr) -> bool:
        rows = not any(is_aggregate_call(n) for n in nodes(expr, maps))
        return rows and unit(expr) in DISTANCES

    if isinstance(node, ast.Call) and node.name.lower() in _RANKS and node.args:
        whole = node.name.lower() == "rank" and len(node.args) == 1
        return _Found(node, node.args[0], within=not whole) if distance(node.args[0]) else None
    if not isinstance(node, ast.Compare) or node.op not in _ORDERED:
        return None
    for side, other, left in ((node.left, node.right, True), (node.right, node.left, False)):
        if fixed(other) and distance(side):
            return _Found(node, side, other, left)
    return None


def _count_item(stage: StagePlan) -> str | None:
    """The name of the stage's ``count()`` (rows counted), if it selects one."""
    return next((item.name for item in stage.select if _is_count(item.expr)), None)


def _is_count(expr: ast.Expr) -> bool:
    return isinstance(expr, ast.Call) and expr.name.lower() == "count" and not expr.args


def _counts_ranks(stage: StagePlan, place: str, what: Any) -> bool:
    """Whether a single-row answer is a statistic of the ranks themselves, the same in
    either unit: the top 10% of the rows by rank(range) are 10% of them (465 of 4,649 in
    points and in percent), the median rank of all the rows is 50. Only which rows they are
    differs: one row's rank (last(rk)), or the ranks of the rows a where keeps, are not."""
    if place == "where":
        return all(_is_count(item.expr) for item in stage.select)
    expr = what.expr if place == "select" else None
    outer = expr.name.lower() if isinstance(expr, ast.Call) else None
    return stage.where is None and outer not in (None, *_ONE_ROW)


def _one_column(expr: ast.Expr) -> bool:
    """Whether ``expr`` is an aggregate of one column (its other arguments numbers): one
    value over the rows kept, ``last(rank(range))``, ``sum(range > 300)``."""
    return (
        is_aggregate_call(expr)
        and isinstance(expr, ast.Call)
        and bool(expr.args)
        and all(ast.literal_value(arg) is not None for arg in expr.args[1:])
    )


def _counts_rows(expr: ast.Expr) -> bool:
    """Whether ``expr`` is a count, sum or mean of one condition: rows counted, or a share."""
    return isinstance(expr, ast.Call) and expr.name.lower() in _COUNTING and len(expr.args) == 1


def _number(expr: ast.Expr | None) -> int | float:
    value = ast.literal_value(expr) if expr is not None else None
    assert isinstance(value, int | float) and not isinstance(value, bool)
    return value


def _floats(values: pd.Series) -> np.ndarray:
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def _is_threshold(expr: ast.Expr) -> bool:
    """A number other than 0: a distance above 0 (a day up) is above it at any price."""
    return _is_number(expr) and ast.literal_value(expr) != 0


def _is_number(expr: ast.Expr) -> bool:
    value = ast.literal_value(expr)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _unhoisted(expr: ast.Expr, maps: Mapping[str, ast.Expr]) -> ast.Expr:
    """``expr`` as the query wrote it: the planner's hidden columns (``·0``) replaced by
    what they hold."""
    if isinstance(expr, ast.Column) and expr.name.startswith(HIDDEN) and expr.name in maps:
        return _unhoisted(maps[expr.name], maps)
    return ast.with_children(expr, lambda child: _unhoisted(child, maps))


def _replace(
    expr: ast.Expr, old: ast.Expr, new: ast.Expr, maps: Mapping[str, ast.Expr]
) -> ast.Expr:
    """``expr`` with ``old`` replaced by ``new``, through the map names that hold it (``big``
    of ``"big": "chg < -128.75"`` becomes the percent comparison itself)."""
    if expr == old:
        return new
    if isinstance(expr, ast.Column) and expr.name in maps:
        made = maps[expr.name]
        changed = _replace(made, old, new, maps)
        return expr if changed == made else changed
    return ast.with_children(expr, lambda child: _replace(child, old, new, maps))


def _rows(frame: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame | None:
    """The rows of ``frame`` ``mask`` marks, with the columns a price level is read from;
    None when their closes span less than ``LEVEL_RATIO`` (no level can have changed that
    much: "1m bars with range > 20 in 2024" stops here, before a frame of its 350,000 rows'
    sample is built)."""
    at = np.flatnonzero(mask)
    at = at[:: max(1, len(at) // LEVEL_SAMPLE_ROWS)]  # as the levels read them: a sample
    close = frame["close"].to_numpy(dtype=np.float64)[at]
    finite = close[np.isfinite(close)]
    if not len(finite) or finite.min() <= 0 or finite.max() / finite.min() < LEVEL_RATIO:
        return None
    columns = [c for c in ("trading_date", "timestamp") if c in frame.columns]
    return pd.DataFrame({"close": close, **{c: frame[c].to_numpy()[at] for c in columns}})


def _last_scale(
    distance: np.ndarray, price: np.ndarray, pct: np.ndarray, stamps: np.ndarray, intraday: bool
) -> _Scale | None:
    """The scale of the last row with the distance, its price distance (``range`` of
    ``range * 20``) and its percent form (a distance of 0 says none)."""
    both = np.isfinite(distance) & np.isfinite(price) & np.isfinite(pct)
    valid = np.flatnonzero(both & (distance != 0) & (price != 0))
    if not len(valid):
        return None
    at = valid[-1]
    factor = float(pct[at] / price[at])
    stamp = pd.Timestamp(stamps[at])
    date = f"{stamp:%Y-%m-%d %H:%M}" if intraday else f"{stamp:%Y-%m-%d}"
    # The price itself (25728.75), not its float's noise (25728.750000000004).
    base, multiple = (float(f"{x:.10g}") for x in (100.0 / factor, distance[at] / price[at]))
    return _Scale(factor, base, multiple, date)


def _example(
    found: _Found, value: int | float, scale: _Scale, years: Levels, units: tuple[str, str]
) -> str:
    """ ": -128.75 points is -0.50% of the price on 2026-01-07 (25,728.75) but -9.38% of
    2009's mean close (1,372)"; of dollars, "8000 dollars (400 points) is …"."""
    assert found.fixed is not None
    # The year whose level is furthest from the row's price: 2009's 1,372 for NQ's 25,729.
    far = int(np.argmax(np.abs(np.log(years.level / scale.base))))
    level = float(years.level[far])
    points, (unit, price_unit) = scale.points(value), units
    said = f"{found.fixed.to_text()} {unit}"
    if scale.multiple != 1:
        said += f" ({points:,} {price_unit})"
    return (
        f": {said} is {points * scale.factor:.2f}% of the price on {scale.date} "
        f"({scale.base:,.2f}) but {points / level * 100:.2f}% of {years.named(far)}'s mean "
        f"close ({level:,.0f})"
    )


def _ranks_text(replaced: ast.Expr, labels: list[str], ranks: np.ndarray, old: np.ndarray) -> str:
    """ "In percent (rank(range / open * 100)) 2026-01-07 ranks 32.31, not 87.12." """
    if len(labels) == 1:
        said = f"{labels[0]} ranks {ranks[0]:.2f}, not {old[0]:.2f}"
    else:
        said = "; ".join(
            f"{label} ranks {new:.2f} ({was:.2f} in points)"
            for label, new, was in zip(labels, ranks, old, strict=True)
        )
    return f"In percent ({replaced.to_text()}) {said}."


def _steps(steps: list[str]) -> str:
    """ "a, b and c" """
    return steps[0] if len(steps) == 1 else f"{', '.join(steps[:-1])} and {steps[-1]}"


def _use(form: str) -> str:
    return f"For sizes comparable across years use percent ({form})."


def _in_percent(form: str, name: str, new: str, old: str) -> str:
    """ "In percent (where …) count is 1,492, not 459.", or of the same value "… count is 0
    as well.": an empty where's "count is 0, not 0" read as a correction of nothing."""
    if new == old:
        return f"In percent ({form}) {name} is {new} as well."
    return f"In percent ({form}) {name} is {new}, not {old}."


def _said(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int | np.integer) or (isinstance(value, float) and value.is_integer()):
        return f"{int(value):,}"
    if isinstance(value, float | np.floating):
        return f"{float(value):.4g}"
    return str(value)


def _label(value: Any) -> str:
    if isinstance(value, pd.Timestamp | np.datetime64):
        stamp = pd.Timestamp(value)
        return f"{stamp:%Y-%m-%d}" if stamp == stamp.normalize() else f"{stamp:%Y-%m-%d %H:%M}"
    return str(value)
