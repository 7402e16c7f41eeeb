"""Warnings the planner reads from the query alone, before any bars: running functions that
run across the groups, and a distance in points turned into dollars with another
instrument's point value.

group_by does not restart a running function: cummax(close) by year() is each year's close
against the highest since the period began, not since the year began; the unit argument
(cummax(close, 'year')) restarts it, and that form is named. Not where the rows are one
group: "trading days in 2024" as max(n) with n = cumsum(1) by year() over 2024 was told to
restart each year, for the same 259 (p45d #11). In then.map it runs over the first stage's
rows, and is said so: grouped there by month() it had read 2024's running count, unsaid.

A model answering in dollars for CL from an NQ chat wrote ``mean(pnl) * 20 as exp_usd``:
NQ's 20 USD a point, where a CL contract's 1.0 move is 1,000 USD. The number came out
-0.50 for -25.12, with nothing said (p32e Q8/16). A product of a distance in points and a
number that is another instrument's point value, not this one's, named as dollars, is
said, with this instrument's point value.

Read from the plan alone (no bars): a query joining another instrument may mean its points
(``es_range * 50``), so a join's own point values are never questioned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from barb.column_units import POINTS, first_map_unit
from barb.instruments import Instrument, available_instruments, load_instrument
from barb.lineage import inputs, through_map
from barb.script import ast
from barb.script.ast import Expr
from barb.script.builtins import RESTART
from barb.script.library import lookup
from barb.settings import EngineSettings

# The calendar keys a running function can restart at (the unit it takes), finest first: a
# query grouped by year() and month() restarts it each month.
TIME_KEYS = {"date": "day", "week": "week", "month": "month", "quarter": "quarter", "year": "year"}

# Names that say a column is a contract's dollars.
_DOLLAR_NAMES = ("usd", "dollar")


def other_point_value_caveat(
    named: Iterable[tuple[str, ast.Expr]],
    instrument: Instrument,
    joined: set[str],
    query: dict,
    settings: EngineSettings,
) -> list[str]:
    """One warning for the first of the first stage's ``named`` expressions (its map's and
    select's) named as dollars whose points are multiplied by another instrument's point
    value; else none."""
    scaled_dollars = [
        (name, product)
        for name, expr in named
        if any(word in name.lower() for word in _DOLLAR_NAMES)
        for product in _products(expr)
    ]
    if not scaled_dollars:  # most queries: no instrument file is read
        return []
    others: dict[float, list[str]] = {}
    for symbol in available_instruments(settings):
        if symbol == instrument.symbol or symbol in joined:
            continue
        value = load_instrument(symbol, settings).point_value
        if value != instrument.point_value:
            others.setdefault(value, []).append(symbol)
    for name, (factor, scaled) in scaled_dollars:
        symbols = others.get(factor)
        if symbols and first_map_unit(scaled, query) == POINTS:
            theirs = " and ".join(f"{s}'s" for s in symbols)
            ratio = instrument.point_value / factor
            off = f"{ratio:,g} times too small" if ratio > 1 else f"{1 / ratio:,g} times too large"
            return [
                f"{name} multiplies {instrument.symbol}'s points by {factor:g}, {theirs} "
                f"dollars per point: one {instrument.symbol} contract's 1.0 move is "
                f"{instrument.point_value:,g} USD, so {name} is {off} for one "
                f"{instrument.symbol} contract."
            ]
    return []


def _products(expr: ast.Expr) -> Iterator[tuple[float, ast.Expr]]:
    """Each ``x * k`` or ``k * x`` in ``expr`` with ``k`` a positive number, as (k, x)."""
    for node in ast.walk(expr):
        if not isinstance(node, ast.Binary) or node.op != "*":
            continue
        for number, other in ((node.right, node.left), (node.left, node.right)):
            value = ast.literal_value(number)
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                yield float(value), other


def running_across_groups(
    keys: Sequence[tuple[str, Expr]],
    read: Sequence[Expr],
    mapped: Mapping[str, Expr],
    *,
    over: str = "the whole period",
    one_group: Callable[[str], bool] = lambda unit: False,
    restart: Callable[[ast.Call, str], str] | None = None,
) -> list[str]:
    """Running functions without a restart unit (cummax(close)) that the expressions ``read``
    use, through the map columns they name, under a group key that is a calendar unit; they
    run over ``over``. None when ``one_group(unit)``: the rows are the one group, and the
    run is its own (max(n) with n = cumsum(1) by year() over 2024 is 2024's 259 days, the
    same with cumsum(1, 'year'), p45d #11). ``restart`` says where the call restarting
    each unit runs, when not in place ("cumsum(1, 'month') restarts it"): a then stage
    whose rows have no dates runs it in the first stage (``restarted_in_first``)."""
    units = []
    for _, key in keys:
        expr = through_map(key, mapped)
        if isinstance(expr, ast.Call) and not expr.args and expr.name.lower() in TIME_KEYS:
            units.append((expr.to_text(), TIME_KEYS[expr.name.lower()]))
    if not units:
        return []
    key, unit = min(units, key=lambda pair: list(TIME_KEYS.values()).index(pair[1]))
    read = [_without_records(_without_spans(expr, mapped), mapped) for expr in read]
    mapped = {name: _without_records(expr, mapped) for name, expr in mapped.items()}
    names = set().union(*(inputs(expr, mapped) for expr in read))
    exprs = [*read, *(mapped[name] for name in sorted(names) if name in mapped)]
    warnings = []
    for expr in exprs:
        for node in ast.walk(expr):
            if not isinstance(node, ast.Call) or len(node.args) != 1:
                continue
            spec = lookup(node.name)
            if spec is None or RESTART not in spec.params:
                continue
            call = node.to_text()
            every = "every day" if unit == "day" else f"every {unit}"
            text = f"{call} runs over {over}, not within each {key} group: "
            how = (
                f"{_restarted(node, unit)} restarts it" if restart is None else restart(node, unit)
            )
            text += f"{how} {every}."
            if text not in warnings:
                warnings.append(text)
    return [] if warnings and one_group(unit) else warnings


def _restarted(call: ast.Call, unit: str) -> str:
    """``call`` restarting each ``unit``: cumsum(1) → cumsum(1, 'month')."""
    return f"{call.name}({call.args[0].to_text()}, '{unit}')"


def restarted_in_first(call: ast.Call, unit: str, *, where: bool) -> str:
    """Where a then stage's running call restarts each ``unit`` when its rows (the first
    stage's selected columns) have no dates to restart by: in the first stage's map,
    selected. cumsum(1, 'month') in then.map failed there with UnknownColumn, so the form
    the warning named could not be run (p46w #10). In the first stage it runs over the
    period's bars before a ``where``, as the UnknownColumn hint says too."""
    name = f"{call.name}_{unit}"
    before = "over the period's bars before its where, " if where else ""
    return (
        f'"{name}": "{_restarted(call, unit)}" in the first stage\'s map ({before}selected '
        "for the then stage, whose rows have no dates to restart by) restarts it"
    )


# The running extremes a bar's own value is compared with in a record test.
_EXTREMES = frozenset({"cummax", "cummin"})


def _without_records(expr: Expr, mapped: Mapping[str, Expr]) -> Expr:
    """``expr`` with each record test taken out (as false): a bar's value compared with its
    own running high or low, ``close > prev(cummax(close))``, ``high >= cummax(high)``,
    ``low < prev(lo)`` with lo = cummin(low). Over all history is what it means, a new
    all-time high: "new ATHs per year" by year() counted 2023's 0 right, and the warning to
    restart it each year read as the fix, which counts 51 highs of the year (p46f Q5). A
    running high read otherwise (a drawdown, close / cummax(close) - 1) is still said."""
    if isinstance(expr, ast.Compare) and _is_record_test(expr, mapped):
        return ast.Bool(False)
    return ast.with_children(expr, lambda child: _without_records(child, mapped))


def _is_record_test(compare: ast.Compare, mapped: Mapping[str, Expr]) -> bool:
    """Whether one side of ``compare`` is cummax(x) or cummin(x), or the bar before's
    (prev(...)), and the other is x itself or that running extreme (cummax(close) >
    prev(cummax(close)): the high rose)."""
    sides = [_unlagged(compare.left, mapped), _unlagged(compare.right, mapped)]
    for running, other in (sides, sides[::-1]):
        spec = lookup(running.name) if isinstance(running, ast.Call) else None
        if spec is None or spec.name not in _EXTREMES or len(running.args) != 1:
            continue
        if other in (through_map(running.args[0], mapped), running):
            return True
    return False


def _unlagged(expr: Expr, mapped: Mapping[str, Expr]) -> Expr:
    """``expr`` through the map, and out of a one-bar prev(): prev(hi) with hi =
    cummax(close) is cummax(close)."""
    expr = through_map(expr, mapped)
    if isinstance(expr, ast.Call) and len(expr.args) in (1, 2):
        spec = lookup(expr.name)
        one_bar = len(expr.args) == 1 or ast.literal_value(expr.args[1]) == 1
        if spec is not None and spec.name == "prev" and one_bar:
            return through_map(expr.args[0], mapped)
    return expr


# Aggregates that give one row's value: the difference of two of them is a distance between
# two rows of the group.
_ROW_PICKS = frozenset({"arg_max", "arg_min", "first", "last", "max", "min"})


def _without_spans(expr: Expr, mapped: Mapping[str, Expr]) -> Expr:
    """``expr`` with each distance between two rows numbered by a row counter taken out
    (as 0): arg_max(n, high) - arg_min(n, low) with n = cumsum(1). Where the count starts
    does not change the distance, so the counter need not restart each year ("trading days
    between the year's high and low" read 173 either way, p43f C2); max(n) by year() alone
    is a running count, and is still said."""
    if isinstance(expr, ast.Binary) and expr.op == "-":
        left, right = _counted(expr.left, mapped), _counted(expr.right, mapped)
        if left is not None and left == right:
            return ast.Number(0)
    return ast.with_children(expr, lambda child: _without_spans(child, mapped))


def _counted(expr: Expr, mapped: Mapping[str, Expr]) -> str | None:
    """The row counter (cumsum(1), as text) whose value on one row ``expr`` picks:
    arg_max(n, high) with n = cumsum(1); None for anything else."""
    if not (isinstance(expr, ast.Call) and expr.name.lower() in _ROW_PICKS and expr.args):
        return None
    counter = through_map(expr.args[0], mapped)
    if not (isinstance(counter, ast.Call) and counter.name.lower() == "cumsum"):
        return None
    if len(counter.args) != 1 or not isinstance(counter.args[0], ast.Number):
        return None
    read_too = any(counter in ast.walk(arg) for arg in expr.args[1:])
    return None if read_too else counter.to_text()
