"""Which expression made a column: a query's names followed back through its stages.

A result's column is a select item of the last stage (under its alias, or the name the engine
gives it), a column of the stage before, a map entry, or one of the bars' own columns. What a
column holds (a unit, a minute of the day, a month, a week() key) is read from the expression
that made it, never from its name: ``nq_vol`` is a volatility, ``wk`` may be ``week()``.
Charts (units, clock axes) and the engine's caveats (group keys, what a where reads) all ask
here, so that they follow a name the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from barb.errors import BarbError
from barb.proof_names import as_list
from barb.script import ast
from barb.script.parser import parse_expression, parse_select_item

MAX_DEPTH = 20  # names followed before giving up (and the guard against a cycle)


@dataclass(frozen=True)
class Scope:
    """The names one part of a query defines, each with the expression that made it."""

    names: Mapping[str, ast.Expr]
    # A map entry reads earlier map entries (its own scope); a select item reads its stage's
    # columns (the next scope out).
    refers_to_self: bool


class Lineage:
    """The names a query defines, its last stage first: each stage's select, then its map."""

    def __init__(self, query: Mapping[str, Any]) -> None:
        then = query.get("then")
        stages = [then, query] if isinstance(then, dict) and then else [query]
        # Each stage's select reads its own map, which reads itself and then the stage before
        # (a second stage's map reads the first stage's select).
        self.scopes: tuple[Scope, ...] = tuple(
            scope
            for stage in stages
            for scope in (Scope(_select_names(stage), False), Scope(_map_names(stage), True))
        )
        # The first scope is a second stage's select: a count() there counts groups, not bars.
        self.two_stages = len(stages) == 2

    def definition(self, name: str, scope: int = 0) -> tuple[ast.Expr, int, int] | None:
        """The expression that made ``name`` as seen from ``scope`` (0: the result), the scope
        it was found in and the scope its own names are read in; None for a column no
        expression made (the bars' own, a joined instrument's, an event's)."""
        for at in range(scope, len(self.scopes)):
            expr = self.scopes[at].names.get(name)
            # A select item that only names a column ("select": "tod") passes it through.
            if expr is not None and not (isinstance(expr, ast.Column) and expr.name == name):
                return expr, at, at if self.scopes[at].refers_to_self else at + 1
        return None

    def values_of(self, name: str, carries: frozenset[str]) -> ast.Expr | None:
        """The expression whose values ``name`` holds, followed through names and through the
        calls in ``carries``, which return one of their first argument's values
        (``arg_max(tod, high) as high_tod`` holds values of ``tod``); None when ``name`` is
        no expression's or ends in another call."""
        source = self.source_of(name, carries)
        return None if isinstance(source, ast.Column) else source

    def source_of(self, name: str, carries: frozenset[str]) -> ast.Expr | None:
        """``values_of``, or the column no expression made that ``name`` ends at: a bar's
        own, or a first stage's group key (``arg_max(year, n)`` over ``group_by: year()``
        holds values of the key ``year``); None past ``MAX_DEPTH`` names."""
        found, expr = self.definition(name), ast.Column(name)
        for _ in range(MAX_DEPTH):
            if found is None:
                return expr
            expr, _, inner = found
            while isinstance(expr, ast.Call) and expr.name.lower() in carries and expr.args:
                expr = expr.args[0]
            if not isinstance(expr, ast.Column):
                return expr
            found = self.definition(expr.name, inner)
        return None


def _group_keys(stage: Mapping[str, Any]) -> Iterator[tuple[str, ast.Expr]]:
    """Each readable ``group_by`` key of a stage: the column it makes, as the engine names
    it (``year()`` → ``year``, ``sy`` → ``sy``), and its expression."""
    for text in as_list(stage.get("group_by")):
        try:
            expr = parse_expression(str(text))
        except BarbError:
            continue
        yield (expr.name if isinstance(expr, ast.Column) else ast.default_name(expr)), expr


def group_key_names(stage: Mapping[str, Any]) -> list[str]:
    """The columns a stage's ``group_by`` makes, as the engine names them, once each."""
    return list(dict.fromkeys(name for name, _ in _group_keys(stage)))


def key_expressions(query: Mapping[str, Any]) -> dict[str, ast.Expr]:
    """Either stage's group keys by the name the engine gave them, with their expression:
    ``{"time_london": time('London')}``."""
    then = query.get("then")
    stages = [query, then] if isinstance(then, dict) and then else [query]
    return {name: expr for stage in stages for name, expr in _group_keys(stage)}


def written_key_texts(query: Mapping[str, Any]) -> dict[str, str]:
    """The group keys of either stage that are expressions, by the name the engine gave them,
    with the text the query wrote (``fh_0`` → ``fh > 0``): the name drops the operator, and
    "fh_0: yes" read as "fh = 0". A column (``sy``) or a call without arguments (``year()``)
    is named well already and is left out."""
    then = query.get("then")
    stages = [query, then] if isinstance(then, dict) and then else [query]
    texts: dict[str, str] = {}
    for stage in stages:
        for text in as_list(stage.get("group_by")):
            try:
                expr = parse_expression(str(text))
            except BarbError:
                continue
            if isinstance(expr, ast.Column) or (isinstance(expr, ast.Call) and not expr.args):
                continue
            texts[ast.default_name(expr)] = " ".join(str(text).split())
    return texts


def called_key_names(query: Mapping[str, Any]) -> set[str]:
    """The group keys of either stage that the engine named after a call (``year()`` →
    ``year``); a key the query named itself (``"weekday": "dayname()"``) is not one."""
    then = query.get("then")
    stages = [query, then] if isinstance(then, dict) and then else [query]
    names: set[str] = set()
    for stage in stages:
        for text in as_list(stage.get("group_by")):
            try:
                expr = parse_expression(str(text))
            except BarbError:
                continue
            if isinstance(expr, ast.Call) and not expr.args:
                names.add(ast.default_name(expr))
    return names


def where_reads_key(stage: Mapping[str, Any], key: str) -> bool:
    """Whether a stage's ``where`` reads what its group key ``key`` does: ``where hour() >=
    9`` by ``hour()`` empties the night hours on purpose, and those are no "never" to draw
    or rank. True when the key or the where cannot be read (nothing is assumed empty by
    chance), False without a where."""
    if not stage.get("where"):
        return False
    mapped = _map_names(stage)
    try:
        where = parse_expression(str(stage["where"]))
    except BarbError:
        return True
    for name, expr in _group_keys(stage):
        if name == key:
            return bool(inputs(where, mapped) & inputs(expr, mapped))
    return True


def through_map(expr: ast.Expr, mapped: Mapping[str, ast.Expr]) -> ast.Expr:
    """A map column's expression in place of its name (``"wk": "week()"`` → ``week()``), as
    often as a map entry only names another."""
    for _ in range(MAX_DEPTH):
        if not (isinstance(expr, ast.Column) and expr.name in mapped):
            break
        inner = mapped[expr.name]
        if inner == expr:
            break
        expr = inner
    return expr


# Aggregates whose value is one of their first argument's values: first(wk) is a week's
# label as wk is (a mean of labels is none).
PICKS_VALUE = frozenset({"arg_max", "arg_min", "first", "last", "min", "max", "mode"})


def week_names(
    named: Iterable[tuple[str, ast.Expr]],
    mapped: Mapping[str, ast.Expr],
    weeks: Iterable[str] = (),
    *,
    weekly_bars: bool = False,
) -> frozenset[str]:
    """The names of ``named`` whose values are week() labels: made by week() (by date() on
    weekly bars, which is the same label) or by a column of ``weeks``, through the map's
    names (``"wk": "week()"``) and the aggregates that pick one of their argument's values.
    A date compared with such a column means its week, as with week() itself."""
    weeks = frozenset(weeks)
    labels = {"week", "date"} if weekly_bars else {"week"}
    found = set()
    for name, expr in named:
        for _ in range(MAX_DEPTH):
            expr = through_map(expr, mapped)
            if not (isinstance(expr, ast.Call) and expr.name.lower() in PICKS_VALUE and expr.args):
                break
            expr = expr.args[0]
        called = isinstance(expr, ast.Call) and not expr.args and expr.name.lower() in labels
        if called or (isinstance(expr, ast.Column) and expr.name in weeks):
            found.add(name)
    return frozenset(found)


def nodes(expr: ast.Node, mapped: Mapping[str, ast.Expr]) -> Iterator[ast.Node]:
    """Every node of ``expr``, and of the map entries it names, through their names in turn
    (each entry once: a chain of map columns is walked once, and a cycle ends)."""
    seen: set[str] = set()
    pending = [expr]
    while pending:
        for node in ast.walk(pending.pop()):
            yield node
            if isinstance(node, ast.Column) and node.name in mapped and node.name not in seen:
                seen.add(node.name)
                pending.append(mapped[node.name])


def number_comparisons(
    exprs: Iterable[ast.Expr], mapped: Mapping[str, ast.Expr], is_value: Callable[[ast.Node], bool]
) -> list[ast.Compare] | None:
    """The comparisons with a number through which ``exprs`` (and the map entries they name)
    read the value ``is_value`` picks (a call, or a map column made by one): ``run == 3`` in
    "where": "run == 3", ``dn == 3`` in count(dn == 3). None when one reads the value itself:
    max(run), run - 1, a sort by it. A row's place in its run against a number is all the
    answer takes of a streak there, never the run's whole length."""
    found: list[ast.Compare] = []
    seen: set[str] = set()

    def picked(node: ast.Node) -> bool:
        if is_value(node):
            return True
        return (
            isinstance(node, ast.Column)
            and node.name in mapped
            and is_value(through_map(node, mapped))
        )

    pending: list[ast.Node] = list(exprs)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Compare):
            left, right = node.left, node.right
            number = (picked(left) and _is_number(right)) or (picked(right) and _is_number(left))
            if number:
                found.append(node)
                continue
        if picked(node):
            return None
        if isinstance(node, ast.Column) and node.name in mapped:
            if node.name not in seen:
                seen.add(node.name)
                pending.append(mapped[node.name])
            continue
        pending.extend(node.children())
    return found


def _is_number(expr: ast.Expr) -> bool:
    value = ast.literal_value(expr)
    return isinstance(value, int | float) and not isinstance(value, bool)


# Running counts and totals: a row's value is the run (or the total) up to it, 0 on a day
# below for streak(above), its length on the run's last day.
RUNNING_CALLS = frozenset({"streak", "bars_since", "cumsum", "cumprod", "cummax", "cummin"})


def own_runs(expr: ast.Expr, where: ast.Expr, mapped: Mapping[str, ast.Expr]) -> list[ast.Call]:
    """The running calls (``RUNNING_CALLS``) ``expr`` reads, through the map, that ``where``
    keeps rows by (``kept_by_own_run``): mean(run) under "where": "run_end"."""
    return [
        node
        for node in nodes(expr, mapped)
        if isinstance(node, ast.Call)
        and node.name.lower() in RUNNING_CALLS
        and kept_by_own_run(where, node, mapped)
    ]


def kept_by_own_run(where: ast.Expr, call: ast.Call, mapped: Mapping[str, ast.Expr]) -> bool:
    """Whether ``where`` keeps rows by the run ``call`` counts: it reads the call itself
    ("run >= 5") or its condition, as written or as the map made it (streak(above) under
    "above and not next(above)", each run's last day). The call's value over every bar is
    then what the where asks of each kept row, the length of the run it ends; over the kept
    rows alone (all of them above) it would number them."""
    read = {node.to_text() for node in nodes(where, mapped)}
    own = {call.to_text()}
    if call.args:
        own |= {call.args[0].to_text(), through_map(call.args[0], mapped).to_text()}
    return not own.isdisjoint(read)


def emptied_off(where: ast.Expr, call: ast.Call, mapped: Mapping[str, ast.Expr]) -> bool:
    """Whether ``call``'s argument is empty on every row ``where`` drops, so that its run
    over every row skips them (streak and cumsum skip an empty value): it is made, through
    arithmetic, comparisons and the map's names, of an if(c, x, 0 / 0) whose c holds each
    of the where's conjuncts. streak(p < 0) with p = if(g, pnl, 0 / 0) under "where": "g" is
    the losing trades in a row of the g days (p39a M1)."""
    wanted = {through_map(c, mapped).to_text() for c in conjuncts(where)}
    return bool(call.args) and _emptied(call.args[0], wanted, mapped, 0)


def _emptied(expr: ast.Expr, wanted: set[str], mapped: Mapping[str, ast.Expr], depth: int) -> bool:
    expr = through_map(expr, mapped)
    if depth > MAX_DEPTH:
        return False
    if isinstance(expr, ast.Call):
        if expr.name.lower() != "if" or len(expr.args) != 3 or not _empty(expr.args[2]):
            return False  # coalesce(), prev()… may give a value there
        held = {through_map(c, mapped).to_text() for c in conjuncts(expr.args[0])}
        return wanted <= held
    # An empty operand empties arithmetic and comparisons; and/or/not may not stay unknown.
    if not isinstance(expr, ast.Binary | ast.Unary | ast.Compare):
        return False
    return any(_emptied(child, wanted, mapped, depth + 1) for child in expr.children())


def _empty(expr: ast.Expr) -> bool:
    """0 / 0 written out: the empty value."""
    return (
        isinstance(expr, ast.Binary)
        and expr.op == "/"
        and isinstance(expr.right, ast.Number)
        and expr.right.value == 0
    )


def inputs(expr: ast.Expr, mapped: Mapping[str, ast.Expr]) -> set[str]:
    """The columns and the functions (``hour()``) ``expr`` reads, through the map columns it
    names."""
    return {
        node.name if isinstance(node, ast.Column) else f"{node.name}()"
        for node in nodes(expr, mapped)
        if isinstance(node, ast.Column | ast.Call)
    }


def conjuncts(expr: ast.Expr) -> list[ast.Expr]:
    """The operands of a chain of and: a and (b and c) is [a, b, c]."""
    if isinstance(expr, ast.Logical) and expr.op == "and":
        return [*conjuncts(expr.left), *conjuncts(expr.right)]
    return [expr]


def _select_names(stage: Mapping[str, Any]) -> dict[str, ast.Expr]:
    names: dict[str, ast.Expr] = {}
    for item in as_list(stage.get("select")):
        try:
            expr, alias = parse_select_item(item)
        except BarbError:  # the engine ran the query, so this is rare: no name from it
            continue
        names[alias or ast.default_name(expr)] = expr
    return names


def _map_names(query: Mapping[str, Any]) -> dict[str, ast.Expr]:
    names: dict[str, ast.Expr] = {}
    for name, text in (query.get("map") or {}).items():
        try:
            names[str(name)] = parse_expression(str(text))
        except BarbError:
            continue
    return names


def calls_behind(query: Mapping[str, Any], name: str) -> list[ast.Call]:
    """The calls in the expression that made the result's column ``name`` and in those of
    the names it reads, in turn (``dd`` = ``close / cummax(close) - 1`` → ``cummax(close)``);
    empty for a column no expression made."""
    lineage = Lineage(query)
    calls: list[ast.Call] = []
    pending, seen = [(name, 0)], set()
    while pending and len(seen) < MAX_DEPTH:
        column, scope = pending.pop()
        if (column, scope) in seen:
            continue
        seen.add((column, scope))
        found = lineage.definition(column, scope)
        if found is None:
            continue
        expr, _, inner = found
        for node in ast.walk(expr):
            if isinstance(node, ast.Call):
                calls.append(node)
            elif isinstance(node, ast.Column):
                pending.append((node.name, inner))
    return calls
