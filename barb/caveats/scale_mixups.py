"""A threshold written on another scale than the value it is compared with.

rank() and rolling_rank() are percentiles from 0 to 100; "days of 2024 whose range was in
the top 5%" written ``rank(range) > 0.95`` kept 257 of NQ's 259 RTH days and said nothing:
a right count for the wrong question. The mean of a condition is a share from 0 to 1; "years
where more than 55% of days closed up" written ``mean_up > 55`` in a then stage keeps no
year. Said when a where (either stage's) or a select's statistic compares, through map
names, a value whose scale its function fixes with a number off that scale: a percentile, or
an oscillator that runs from 0 to 100 (``OSCILLATORS``: rsi(14) > 0.7 holds on nearly every
bar), with a number strictly between 0 and 1 (a fraction of the scale); a share with a
number above 1 and at most 100 (a percent). With the rows the where kept, when the
comparison is the whole where (counted already: no extra pass over the bars), and the form
on the right scale. An oscillator's values are followed through names and stages
(``oscillator_of``): "days whose average hourly RSI was above 60" as a first stage's
``mean(rsi(close, 14)) as r`` by date() and a then stage's ``r > 0.6`` kept all 260 of NQ's
2024 days for the 46 above 60, and said nothing. Nothing is said of a plain column (a price,
a name the query gave a number): its scale is the data's. No function of Barb's returns a
percent (a percent is the query's own ``x / prev(close) * 100``, whose threshold may well be
0.005%), so none is said; percentile(x, 0.9) is said by the planner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from barb.column_units import PERCENTILE, SHARE
from barb.lineage import MAX_DEPTH, Lineage, nodes, through_map
from barb.planning import HIDDEN, StagePlan
from barb.script import ast

_ORDERED = frozenset({"<", "<=", ">", ">="})
_RANKS = frozenset({"rank", "rolling_rank"})
# The oscillators whose values run from 0 to 100 by their making (rsi(14) > 0.7 holds on
# nearly every bar).
OSCILLATORS = frozenset(
    {"rsi", "mfi", "adx", "plus_di", "minus_di", "stochastic_k", "stochastic_d"}
)
# What keeps its first argument's scale: a day's mean, median, first or last RSI, its
# previous bar's, its rolling mean ("mean(rsi) as r" in a first stage, then "r < 0.3"
# kept no month and was not told). A sum or a spread of RSI is on no 0-100 scale.
_KEEPS_SCALE = frozenset(
    {
        "mean", "median", "min", "max", "first", "last", "mode", "percentile", "arg_max",
        "arg_min", "prev", "next", "ema", "wma", "rolling_mean", "rolling_max", "rolling_min",
        "round",
    }
)  # fmt: skip
# The mirror of an ordering, for a number written on the left (0.95 < rank(range)).
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def scale_caveat(
    stage: StagePlan,
    unit: Callable[[ast.Expr], str | None],
    origin: Callable[[ast.Expr], str | None],
    kept: int | None = None,
    given: int | None = None,
    rank: Callable[[ast.Expr], str | None] | None = None,
) -> list[str]:
    """The warning for the first comparison in ``stage``'s where, or under its select's
    statistics (``count(rank(range) > 0.95)``), of a percentile, a 0-100 oscillator or a
    share with a number off its scale; ``unit`` gives an expression's unit as the stage reads it
    (``first_map_unit``/``then_map_unit``), ``origin`` the oscillator its values are of
    (``oscillator_of``). ``kept`` of ``given``: the rows the where kept of those it read,
    said when the comparison is the whole where; ``rank`` gives the rank function a
    then stage's column is (``rank_of``)."""
    if not stage.comparisons & _ORDERED:
        return []
    maps = dict(stage.map_exprs) | dict(stage.hoisted)
    read = [stage.where] if stage.where is not None else []
    read += [item.expr for item in stage.select if item.aggregate]
    for node in (node for expr in read for node in nodes(expr, maps)):
        if not isinstance(node, ast.Compare) or node.op not in _ORDERED:
            continue
        found = _off_scale(node, unit, origin, maps)
        if found is None:
            continue
        side, op, value, scale = found
        whole = stage.where is not None and through_map(
            _unhoisted(stage.where, maps), maps
        ) == through_map(_unhoisted(node, maps), maps)
        counted = kept is not None and given is not None and whole
        made = rank(_unhoisted(side, maps)) if rank is not None else None
        counts = (kept, given) if counted else None
        return [_text(node, side, op, value, scale, maps, counts, made)]
    return []


def oscillator_of(expr: ast.Expr, query: Mapping[str, object], *, then: bool) -> str | None:
    """The 0-100 oscillator whose values ``expr`` holds, as the first stage's map reads it
    or (``then``) a second stage's: ``rsi`` of ``rsi(close, 14)``, of a map column made by
    it, and of a then stage's ``r``, a first stage's ``mean(rsi) as r``; followed through
    names and what keeps its scale (``_KEEPS_SCALE``); None for any other value."""
    lineage = Lineage(query)
    if then and not lineage.two_stages:
        return None
    scope = 1 if then else len(lineage.scopes) - 1
    for _ in range(MAX_DEPTH):
        if isinstance(expr, ast.Column):
            found = lineage.definition(expr.name, scope)
            if found is None:
                return None
            expr, _, scope = found
            continue
        if not isinstance(expr, ast.Call) or not expr.args:
            return None
        name = expr.name.lower()
        if name in OSCILLATORS:
            return name
        if name not in _KEEPS_SCALE:
            return None
        expr = expr.args[0]
    return None


def rank_of(expr: ast.Expr, query: Mapping[str, object]) -> str | None:
    """The rank function whose values a then stage's ``expr`` is, through names only: a
    first stage's ``rank(range) as rk`` read as ``rk``, whose ``rk > 0.9`` meant its top
    10% as the same comparison in the first stage does; None for anything else (a mean
    of ranks has no top rows)."""
    lineage = Lineage(query)
    if not lineage.two_stages:
        return None
    scope = 1
    for _ in range(MAX_DEPTH):
        if not isinstance(expr, ast.Column):
            break
        found = lineage.definition(expr.name, scope)
        if found is None:
            return None
        expr, _, scope = found
    name = expr.name.lower() if isinstance(expr, ast.Call) else None
    return name if name in _RANKS else None


def _off_scale(
    node: ast.Compare,
    unit: Callable[[ast.Expr], str | None],
    origin: Callable[[ast.Expr], str | None],
    maps: Mapping[str, ast.Expr],
) -> tuple[ast.Expr, str, float, str] | None:
    """The side, the ordering read with the side on the left, the number and the side's
    scale (``PERCENTILE``, ``SHARE``, an oscillator's name) when the number is off that
    scale; else None."""
    for side, other, op in ((node.left, node.right, node.op), (node.right, node.left, None)):
        value = ast.literal_value(other)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        # A fraction can be off a percentile's or an oscillator's scale, a number from 1 to
        # 100 off a share's; any other number off none: the side's unit is not read for it.
        fraction, percent = 0 < value < 1, 1 < value <= 100
        if not (fraction or percent):
            continue
        scale = unit(_unhoisted(side, maps))
        if scale == PERCENTILE and fraction:
            return side, op or _MIRROR[node.op], float(value), scale
        if fraction:
            oscillator = origin(_unhoisted(side, maps))
            if oscillator is not None:
                return side, op or _MIRROR[node.op], float(value), oscillator
        if scale == SHARE and percent:
            return side, op or _MIRROR[node.op], float(value), scale
    return None


def _text(
    node: ast.Compare,
    side: ast.Expr,
    op: str,
    value: float,
    scale: str,
    maps: Mapping[str, ast.Expr],
    counted: tuple[int, int] | None,
    rank: str | None = None,
) -> str:
    """ "rank() is a percentile from 0 to 100: rank(range) > 0.95 keeps 257 of the 259 rows;
    the top 5% is rank(range) > 95." """
    written = _unhoisted(node, maps).to_text()
    shown = _unhoisted(side, maps)
    if scale == PERCENTILE:
        ranks = sorted(
            {n.name.lower() for n in nodes(shown, maps) if isinstance(n, ast.Call)} & _RANKS
        )
        what = f"{' and '.join(f'{name}()' for name in ranks) or shown.to_text()} is a "
        if rank is not None:  # a first stage's rank(range) as rk
            what = f"{shown.to_text()} holds {rank}(), a "
        what += "percentile from 0 to 100"
        right = value * 100
        share = 100 - right if op in (">", ">=") else right
        end = "top" if op in (">", ">=") else "bottom"
        made = through_map(shown, maps)
        ranked = rank is not None or (isinstance(made, ast.Call) and made.name.lower() in _RANKS)
        # The top 5% of the rows only of a rank itself: a mean of ranks has no such rows.
        meant = f"the {end} {_number(share)}%" if ranked else "on that scale it"
    elif scale in OSCILLATORS:
        made = through_map(shown, maps)
        # The call itself, or a map column made by it; else what holds its values (r,
        # a first stage's mean(rsi)).
        direct = isinstance(made, ast.Call) and made.name.lower() == scale
        holds = "" if direct else f"{shown.to_text()} holds {scale}() values, which "
        what = f"{holds}{scale}() runs from 0 to 100" if direct else f"{holds}run from 0 to 100"
        right = value * 100
        meant = "on that scale it"
    else:
        made = through_map(shown, maps)
        named = f" ({made.to_text()})" if made != shown else ""
        what = f"{shown.to_text()}{named} is a share from 0 to 1"
        right = value / 100
        word = {">": "more than", ">=": "at least", "<": "less than", "<=": "at most"}[op]
        meant = f"{word} {_number(value)}%"
    # Counted when the where is this comparison alone; else what it takes the number for.
    kept = (
        f" keeps {counted[0]:,} of the {counted[1]:,} rows"
        if counted
        else f" reads {_number(value)} on the wrong scale"
    )
    form = f"{shown.to_text()} {op} {_number(right)}"
    return f"{what}: {written}{kept}; {meant} is {form}."


def _number(value: float) -> str:
    """95.0 → "95", 0.55 → "0.55": the float's own digits, not its noise."""
    return f"{float(f'{value:.10g}'):g}"


def _unhoisted(expr: ast.Expr, maps: Mapping[str, ast.Expr]) -> ast.Expr:
    """``expr`` as the query wrote it: the planner's hidden columns replaced by what they
    hold."""
    if isinstance(expr, ast.Column) and expr.name.startswith(HIDDEN) and expr.name in maps:
        return _unhoisted(maps[expr.name], maps)
    return ast.with_children(expr, lambda child: _unhoisted(child, maps))
