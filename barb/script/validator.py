"""Checks an expression tree before it runs, collecting every problem in one pass.

The checks are derived from the function registry: names, argument counts and literal
parameters come from each ``FunctionSpec``, so nothing here lists functions by hand.
``bind_arguments`` is shared with the evaluator, which needs the same matching of arguments
to parameters (defaults included) when it runs a call.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from barb.absent_data import absent_data_text
from barb.errors import (
    ArgumentError,
    QueryError,
    TypeMismatch,
    UnknownColumn,
    UnknownFunction,
    available,
    closest_names,
    one_closest_name,
    sorted_names,
)
from barb.events.names import event_column_hint, event_guess_hint, flag_hint
from barb.frames import BAR_COLUMNS
from barb.instruments import Instrument
from barb.script import ast
from barb.script.calendar_names import calendar_name_hint
from barb.script.daily_calls import DAILY_ARGUMENTS, UNIT_WORDS
from barb.script.functions import FunctionSpec, Param
from barb.script.indicator_forms import ABSENT, FAMILY_NAMES
from barb.script.library import (
    OTHER_FORMS,
    OTHER_NAMES,
    contains_aggregate,
    indicator_lines,
    library,
    lookup,
)
from barb.script.then_date_parts import is_date_part, then_date_part_hint
from barb.session_times import times_for

# Where in a select item a node sits: "row" outside select (map, where, group_by);
# "select" at the top of a select item; "aggregate" inside an aggregate's arguments;
# "row_in_select" inside a row-wise function (prev, rolling_mean…) that is not in an
# aggregate, whose own arguments cannot hold an aggregate; "over_all" in a second stage's
# map, where an aggregate is one value over all its rows, repeated on each (a share of the
# total: days / sum(days) * 100).
Mode = Literal["row", "select", "aggregate", "row_in_select", "over_all"]

_MAX_LISTED_COLUMNS = 25
# A whole-number argument without its own bound (a shift, a window) counts bars: more than
# any data set holds is a mistake, and far more would overflow the evaluator's integers.
MAX_BARS_ARGUMENT = 10_000_000


@dataclass(frozen=True)
class SelectNames:
    """The columns a second stage's select makes (``names``) and its group_by's texts: its
    map, which runs before them, cannot read those names."""

    names: frozenset[str]
    group_by: Sequence[str]


@dataclass(frozen=True)
class FirstStageColumns:
    """What a second stage's rows were made from: the first stage's ``columns`` (its bars'
    and its map's, ``mapped``) and whether it ``grouped`` them. Its table holds only its
    select (and group keys), so a name among these that the table lacks is to be selected
    there, not added by a map."""

    columns: frozenset[str]
    mapped: frozenset[str]
    grouped: bool


def validate(
    expr: ast.Expr,
    columns: Collection[str],
    *,
    step: str,
    allow_aggregates: bool,
    group_by: Collection[str] | None = None,
    aggregates_over_all: bool = False,
    instrument: Instrument | None = None,
    later: SelectNames | None = None,
    first_stage: FirstStageColumns | None = None,
) -> list[QueryError]:
    """Every problem with ``expr`` given the columns that exist; empty when it can run.

    ``allow_aggregates`` is true for select items. There, with ``group_by`` given (the group
    key columns) or when the item holds an aggregate, every column and row-wise function must
    sit inside an aggregate, except the group keys themselves. ``aggregates_over_all`` is
    true for a second stage's map: an aggregate there is over all the stage's rows.
    ``later``: the names the stage's select makes after the map being checked.
    ``first_stage``: a second stage's, the columns of the first stage's rows.
    """
    checker = _Checker(columns, step, group_by, instrument, later, first_stage)
    if allow_aggregates:
        checker.strict_select = group_by is not None or contains_aggregate(expr)
        checker.visit(expr, "select")
    else:
        where = step.endswith("where")  # "where": "ecb_meeting" reads a true/false column
        checker.visit(expr, "over_all" if aggregates_over_all else "row", condition=where)
    return checker.errors


# A share of the total, the aggregate most wanted outside select.
_SHARE_MAP = '"map": {"share": "days / sum(days) * 100"}'


def misplaced_aggregate(text: str, step: str) -> ArgumentError:
    """An aggregate where rows are read one by one (map, where, group_by). The evaluator
    raises this same error, so the validator and the run cannot tell the model two things."""
    if step.startswith("then."):
        hint = (
            "compute it in then.map, where an aggregate is over all the rows, e.g. "
            f"{_SHARE_MAP}, and use that column here"
        )
    else:
        hint = (
            f'aggregates go in select, e.g. select: "{text}"; to compare each row with an '
            "average use a window such as rolling_mean(range, 20); for a share of the total, "
            f'group_by, then "then": {{{_SHARE_MAP}}} (in then.map an aggregate is over all '
            "rows)"
        )
    return ArgumentError(
        f"{text} is an aggregate (one value for many rows) and cannot be used in {step}.",
        step=step,
        hint=hint,
    )


def bind_arguments(
    spec: FunctionSpec, args: Sequence[ast.Expr], *, step: str
) -> tuple[list[tuple[Param, Any]], list[QueryError]]:
    """Match a call's arguments to the function's parameters.

    Returns ``(param, value)`` pairs in parameter order (extra variadic arguments repeat the
    last parameter): for a ``series`` parameter the value is an expression (a ``Column`` for
    an omitted argument with a default column, ``None`` for an omitted optional one); for a
    literal parameter it is the Python value. Also returns the problems found.
    """
    params = spec.params
    given: list[ast.Expr | None] = list(args)
    # rsi(14) means rsi(close, 14): a leading series parameter with a default column may be
    # skipped when the first argument is a number.
    if (
        params
        and params[0].kind == "series"
        and params[0].default_column is not None
        and 0 < len(given) < len(params)
        and isinstance(ast.literal_value(given[0]), int | float)
        and not isinstance(ast.literal_value(given[0]), bool)
    ):
        given.insert(0, None)

    needed = max((i + 1 for i, p in enumerate(params) if p.required), default=0)
    if len(given) < needed or (len(given) > len(params) and not spec.variadic):
        return [], [_count_error(spec, args, step)]

    bound: list[tuple[Param, Any]] = []
    errors: list[QueryError] = []
    for i, arg in enumerate(given):
        param = params[min(i, len(params) - 1)]
        if arg is None:
            bound.append((param, _default(param)))
        elif param.kind in ("series", "daily"):
            bound.append((param, arg))
        else:
            value, error = _literal_argument(spec, param, arg, step)
            bound.append((param, value))
            if error:
                errors.append(error)
    for param in params[len(given) :]:
        bound.append((param, _default(param)))
    return bound, errors


def _default(param: Param) -> Any:
    if param.default_column is not None:
        return ast.Column(param.default_column)
    return param.default


# Aggregates another language also calls on two values, one row at a time (SQL's
# greatest(), Python's max(a, b)), by the comparison that picks that row's value with if().
_ROW_WISE_PICKS = {"max": (">", "larger", "highest"), "min": ("<", "smaller", "lowest")}


def _row_wise_pick(spec: FunctionSpec, args: Sequence[ast.Expr]) -> str | None:
    """The if() that picks the larger (max) or smaller (min) of two values in each row, for
    max(a, b) written to mean that: 'if(high - open > open - low, high - open, open - low)'.
    None for any other call: max(col) is one column's highest over many rows."""
    pick = _ROW_WISE_PICKS.get(spec.name)
    if pick is None or len(args) != 2:
        return None
    a, b = (arg.to_text() for arg in args)
    return f"if({a} {pick[0]} {b}, {a}, {b})"


def _count_error(spec: FunctionSpec, args: Sequence[ast.Expr], step: str) -> ArgumentError:
    got = len(args)
    required = sum(p.required for p in spec.params)
    total = len(spec.params)
    if spec.variadic:
        takes = f"at least {required}"
    elif required == total:
        takes = str(total)
    else:
        takes = f"{required} to {total}"
    noun = "argument" if takes == "1" else "arguments"
    hint = spec.example or f"call it as {spec.signature()}"
    if spec.category == "time" and not spec.params:
        # month(low_date) in a second stage: the date of another row is picked where the
        # bars are, with an arg aggregate.
        hint = (
            f"{spec.name}() reads each bar's own date or time; for another row's (the day of "
            f"the low), pick it in the first stage: arg_min({spec.name}(), low)"
        )
    picked = _row_wise_pick(spec, args)
    if picked is not None:
        # "max(a, b)" in select is as wrong as in map: max takes one column.
        _, pair, over_rows = _ROW_WISE_PICKS[spec.name]
        hint = (
            f"{spec.name}(col) is one column's {over_rows} over many rows; the {pair} of two "
            f'values in each row is "{picked}" (in map; aggregate that column in select)'
        )
    return ArgumentError(
        f"{spec.name}() takes {takes} {noun}, got {got}: {spec.signature()}.",
        step=step,
        hint=hint,
    )


def _literal_argument(
    spec: FunctionSpec, param: Param, arg: ast.Expr, step: str
) -> tuple[Any, ArgumentError | None]:
    """The Python value of a literal parameter, or the reason it is not acceptable."""
    value = ast.literal_value(arg)
    ok = False
    if param.kind in ("int", "number") and isinstance(value, int | float):
        ok = not isinstance(value, bool)
        if ok and param.kind == "int":
            ok = float(value).is_integer()
            value = int(value) if ok else value
        if ok and param.min is not None and value < param.min:
            ok = False
        if ok and value > _upper_bound(param):
            ok = False
    elif param.kind == "string":
        ok = isinstance(value, str)
        if ok and param.choices is not None:
            value = value.lower()
            ok = value in param.choices
    elif param.kind == "bool":
        ok = isinstance(value, bool)
    if ok:
        return value, None
    hint = spec.example or f"call it as {spec.signature()}"
    if param.choices is not None:
        hint = f"{param.name} is {_describe_literal(param)}, e.g. {hint}"
    return None, ArgumentError(
        f"In {spec.name}(), {param.name} must be {_describe_literal(param)}, "
        f"got {arg.to_text()}: {spec.signature()}.",
        step=step,
        hint=hint,
    )


def _upper_bound(param: Param) -> float:
    if param.max is not None:
        return param.max
    return MAX_BARS_ARGUMENT if param.kind == "int" else float("inf")


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _describe_literal(param: Param) -> str:
    if param.kind in ("int", "number"):
        what = "a whole number" if param.kind == "int" else "a number"
        top = _upper_bound(param)
        if param.min is not None and top != float("inf"):
            return f"{what} from {param.min:g} to {_number(top)}"
        if param.min is not None:
            return f"{what} ≥ {param.min:g}"
        if top != float("inf"):
            return f"{what} ≤ {_number(top)}"
        return what
    if param.kind == "string" and param.choices is not None:
        return "one of " + ", ".join(f"'{choice}'" for choice in param.choices)
    if param.kind == "string":
        return "a text in quotes, e.g. 'RTH'"
    return "true or false"


# Words for "no value" from other languages, and the reference's own "empty" ("division by
# zero gives empty"): if(gap, slip, empty) was told to add a column "empty" = high - low
# (p35c C4). Barb Script has no literal for it.
_NULL_WORDS = frozenset({"null", "none", "nan", "na", "nil", "empty", "missing"})


def unknown_column(
    name: str,
    columns: Collection[str],
    step: str,
    *,
    instrument: Instrument | None = None,
    compared: ast.Node | None = None,
    condition: bool = False,
) -> UnknownColumn:
    """The error for a missing column, naming the columns that exist. The hint follows what
    the name was written for: a weekday or month (``compared``: the comparison it stands
    in), an event or its minutes (``condition``: the name stands alone as true/false, as
    "where": "ecb_meeting"), data the bars do not hold (open_interest, bid: never a map
    entry), a misspelt column, a function; else a map entry."""
    listed = sorted_names(columns)
    shown = available(listed, limit=_MAX_LISTED_COLUMNS)
    hint = None
    same = [c for c in listed if c.lower() == name.lower()]
    if name.lower() in _NULL_WORDS:
        hint = (
            "Barb Script has no null: to leave rows out use where; for an empty value "
            "write 0 / 0 (division by zero is empty), e.g. if(cond, x, 0 / 0), which "
            "count(), mean() and the other aggregates skip."
        )
    elif same:
        hint = f"did you mean '{same[0]}'?"
    else:
        hint = (
            calendar_name_hint(name, compared)
            or event_column_hint(name, listed, instrument)
            or absent_data_text(name, instrument)
            or _other_column_hint(name, listed, instrument, condition)
        )
    return UnknownColumn(
        f"Column '{name}' does not exist. Available: {shown}.", step=step, hint=hint
    )


def _other_column_hint(
    name: str, listed: list[str], instrument: Instrument | None, condition: bool
) -> str:
    close = difflib.get_close_matches(name, listed, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    if lookup(name) is not None:
        return f"{name} is a function; call it with parentheses: {name.lower()}()"
    event = event_guess_hint(name, listed, instrument, condition=condition)
    if event is not None:
        return event
    if condition:  # a flag: an event's column, or one to make ("high - low" is no condition)
        return flag_hint(name, instrument)
    return 'add it first with map, e.g. map: {"' + name + '": "high - low"}'


def select_column(
    name: str, columns: Collection[str], step: str, later: SelectNames
) -> UnknownColumn:
    """A second stage's map reading a column its own select makes ("days / sum(days) * 100"
    beside "select": "count() as days"): the map runs first. A share of each group's rows
    counts them all in the map, then divides each group's count by that."""
    keys = list(later.group_by)
    group_by = json.dumps(keys[0] if len(keys) == 1 else keys or "<key>")
    form = (
        '"then": {"map": {"total": "count()"}, "group_by": ' + group_by + ', "select": '
        '["count() as days", "count() / first(total) * 100 as pct"]}'
    )
    return UnknownColumn(
        f"Column '{name}' does not exist. Available: "
        f"{available(sorted_names(columns), limit=_MAX_LISTED_COLUMNS)}.",
        step=step,
        hint=f"in then, map runs before group_by and select, so it cannot read '{name}', which "
        f"then.select makes. For each group's share of the rows, count them all in map "
        f"first: {form}",
    )


def first_stage_column(
    name: str, columns: Collection[str], step: str, first_stage: FirstStageColumns
) -> UnknownColumn:
    """A second stage naming a column of the first stage's rows that its table does not
    hold: "up" made by the first stage's map and counted there ("count(up) as up_days"),
    then read as mean(up), was told to add it with map, as if it were "high - low" (p32c)."""
    shown = available(sorted_names(columns), limit=_MAX_LISTED_COLUMNS)
    made = "made by the first stage's map" if name in first_stage.mapped else "a bar column"
    if first_stage.grouped:
        alias = f"mean_{name}"
        hint = (
            f"a second stage's rows are the first stage's groups, which hold only its group "
            f"keys and select: aggregate {name} in the first stage's select (e.g. add "
            f'"mean({name}) as {alias}" there) and use its column "{alias}" here'
        )
    else:
        hint = (
            f"a second stage's rows hold only the columns the first stage's select lists: "
            f'add "{name}" to that select'
        )
    return UnknownColumn(
        f"Column '{name}' ({made}) is not in the first stage's result. Available: {shown}.",
        step=step,
        hint=hint,
    )


def unknown_function(
    name: str, columns: Collection[str], step: str, instrument: Instrument | None = None
) -> UnknownFunction:
    """The error for a missing function, naming those with a similar name. A summary quoted
    in the hint is filled in as the reference fills it (``instrument``'s words, else those
    of the reference's wording symbol): "$price_unit" never reaches the model."""
    similar = closest_names(name.lower(), library())
    known = OTHER_NAMES.get(name.lower())
    if known is not None:
        similar = [known, *(s for s in similar if s != known)][:3]
    if name.lower() in OTHER_FORMS or name.lower() in ABSENT:  # var is no misspelt atr
        similar = []
    message = f"Function '{name}' does not exist."
    if similar:
        message += " Similar: " + ", ".join(f"{s}()" for s in similar) + "."
    if name in columns:
        hint = f"{name} is a column; use it without parentheses"
    elif name.lower() in OTHER_FORMS:  # written with Barb's functions
        hint = f"Barb Script writes it {OTHER_FORMS[name.lower()]}"
    elif name.lower() in ABSENT:  # no form gives it: a guessed name would answer another
        hint = ABSENT[name.lower()]
    elif lines := indicator_lines(FAMILY_NAMES.get(name.lower(), name.lower())):
        hint = "each line is its own function: " + ", ".join(s.signature() for s in lines)
    elif known is not None:  # another language's name for it: how Barb's is called
        spec = library()[known]
        hint = f"Barb Script calls it {spec.signature()}: {_filled_summary(spec, instrument)}"
    elif (guess := one_closest_name(name.lower(), library())) is not None:
        hint = f"did you mean {guess}()?"
    else:  # none clearly nearest: a guessed name would run and give another statistic
        hint = "see the FUNCTIONS list in the query reference"
    return UnknownFunction(message, step=step, hint=hint)


def _filled_summary(spec: FunctionSpec, instrument: Instrument | None) -> str:
    return str(times_for(instrument).fill(spec.summary))


class _Checker:
    def __init__(
        self,
        columns: Collection[str],
        step: str,
        group_by: Collection[str] | None,
        instrument: Instrument | None = None,
        later: SelectNames | None = None,
        first_stage: FirstStageColumns | None = None,
    ):
        self.instrument = instrument
        self.later = later
        self.first_stage = first_stage
        self.columns = columns if isinstance(columns, set | frozenset | dict) else list(columns)
        self.step = step
        self.group_by = set(group_by or ())
        self.strict_select = False
        self.errors: list[QueryError] = []
        self._seen: set[str] = set()

    def report(self, error: QueryError) -> None:
        if error.message not in self._seen:  # one column misspelt twice is one problem
            self._seen.add(error.message)
            self.errors.append(error)

    def visit(self, node: ast.Node, mode: Mode, *, condition: bool = False) -> None:
        """Check ``node``; ``condition``: it stands where a true/false value is read (a
        where, an operand of and/or/not), which an unknown name's hint follows."""
        if isinstance(node, ast.Column):
            self.column(node.name, mode, condition=condition)
        elif isinstance(node, ast.Call):
            self.call(node, mode)
        elif isinstance(node, ast.Compare):
            for side in (node.left, node.right):
                if isinstance(side, ast.Column):  # Mon in dayofweek() == Mon
                    self.column(side.name, mode, compared=node)
                else:
                    self.visit(side, mode)
        else:
            logical = isinstance(node, ast.Logical | ast.Not)
            for child in node.children():
                self.visit(child, mode, condition=logical)

    def column(
        self,
        name: str,
        mode: Mode,
        *,
        compared: ast.Compare | None = None,
        condition: bool = False,
    ) -> None:
        if name not in self.columns and self.later is not None and name in self.later.names:
            self.report(select_column(name, self.columns, self.step, self.later))
        elif (
            name not in self.columns
            and self.first_stage is not None
            and name in self.first_stage.columns
        ):
            self.report(first_stage_column(name, self.columns, self.step, self.first_stage))
        elif name not in self.columns and self.first_stage is not None and is_date_part(name):
            # "group_by": "year" in then: year() is no column there either (p40e Q19).
            self.report(
                UnknownColumn(
                    f"Column '{name}' does not exist. Available: "
                    f"{available(sorted_names(self.columns), limit=_MAX_LISTED_COLUMNS)}.",
                    step=self.step,
                    hint=then_date_part_hint(name, self.first_stage.grouped),
                )
            )
        elif name not in self.columns:
            self.report(
                unknown_column(
                    name,
                    self.columns,
                    self.step,
                    instrument=self.instrument,
                    compared=compared,
                    condition=condition,
                )
            )
        elif mode == "select" and self.strict_select and name not in self.group_by:
            self.report(
                TypeMismatch(
                    f"Column '{name}' is used in select outside an aggregate, so it has no "
                    "single value per result.",
                    step=self.step,
                    hint=f"wrap it in an aggregate, e.g. mean({name}) or max({name})",
                )
            )

    def call(self, node: ast.Call, mode: Mode) -> None:
        spec = lookup(node.name)
        if spec is None:
            self.report(unknown_function(node.name, self.columns, self.step, self.instrument))
            for arg in node.args:
                self.visit(arg, mode)
            return
        bound, errors = bind_arguments(spec, node.args, step=self.step)
        for error in errors:
            self.report(error)
        if spec.is_aggregate:
            # max(a, b) in map is a row-wise pick miswritten, not an aggregate misplaced: the
            # count error gives the form, and "aggregates go in select" would not fix it.
            if bound or _row_wise_pick(spec, node.args) is None:
                self.aggregate_placement(node, mode)
            inner: Mode = "aggregate"
        elif spec.category == "scalar":
            inner = mode
        elif mode == "select":
            if self.strict_select and not contains_aggregate(node):
                self.report(
                    TypeMismatch(
                        f"{node.to_text()} gives one value per row, so it cannot stand alone "
                        "in select.",
                        step=self.step,
                        hint=f"put it inside an aggregate, e.g. mean({node.to_text()})",
                    )
                )
            inner = "row_in_select"
        else:
            inner = mode
        if not bound:  # the argument count was wrong: still check what was written
            for arg in node.args:
                self.visit(arg, inner)
            return
        written = {id(arg) for arg in node.args}
        for param, value in bound:
            if param.kind == "daily":
                self.daily_argument(node, value)
                continue
            if param.kind != "series" or not isinstance(value, ast.Node):
                continue  # literal parameters were checked by bind_arguments
            if id(value) in written:
                self.visit(value, inner, condition=param.accepts == "condition")
            elif isinstance(value, ast.Column):  # an omitted argument's default column
                self.column(value.name, "aggregate")

    def daily_argument(self, call: ast.Call, value: ast.Expr) -> None:
        """daily()'s (weekly()'s, monthly()'s) expression: checked against the bars it runs
        on, not the rows."""
        if self.step.startswith("then."):
            self.report(
                ArgumentError(
                    f"{call.to_text()} reads bars by their trading date, and a second "
                    "stage's rows are the first stage's result, not bars.",
                    step=self.step,
                    hint="compute it in the first stage's map and carry it over, e.g. "
                    f'"map": {{"v": "{call.to_text()}"}} with "first(v) as v" in the select '
                    "grouped by date()",
                )
            )
            return
        inner = value.expr if isinstance(value, ast.OnDailyBars) else value
        checker = _DailyChecker(call, self.columns, self.step, self.instrument)
        checker.visit(inner, "row")
        for error in checker.errors:
            self.report(error)

    def aggregate_placement(self, node: ast.Call, mode: Mode) -> None:
        text = node.to_text()
        if mode == "row":
            self.report(misplaced_aggregate(text, self.step))
        elif mode == "aggregate":
            self.report(
                ArgumentError(
                    f"Aggregates cannot be nested: {text} is inside another aggregate.",
                    step=self.step,
                    hint="compute the inner value per row in map, then aggregate it once",
                )
            )
        elif mode == "row_in_select":
            self.report(
                ArgumentError(
                    f"{text} is an aggregate and cannot be the argument of a row-wise function.",
                    step=self.step,
                    hint="apply the row-wise function first, then aggregate, e.g. "
                    "mean(prev(close))",
                )
            )


class _DailyChecker(_Checker):
    """Checks daily()'s (weekly()'s, monthly()'s) expression, which runs on the session's
    daily (weekly, monthly) bars over all history: it reads their columns only (a map's, a
    join's or an event's are the rows'), holds no aggregate (daily() gives one value per
    trading date) and no daily() of its own."""

    def __init__(
        self,
        call: ast.Call,
        query_columns: Collection[str],
        step: str,
        instrument: Instrument | None,
    ):
        super().__init__(BAR_COLUMNS, step, None, instrument)
        self.daily_call = call
        self.query_columns = query_columns
        # "daily()"; its bars: "daily bars"
        self.called = f"{call.name}()"
        self.bars = f"{call.name} bars"

    def column(
        self,
        name: str,
        mode: Mode,
        *,
        compared: ast.Compare | None = None,
        condition: bool = False,
    ) -> None:
        if name in BAR_COLUMNS:
            return
        if name not in self.query_columns:
            error = unknown_column(name, BAR_COLUMNS, self.step)
            if error.hint is not None and error.hint.startswith("add it first with map"):
                # A map column is not read in here: the form is a function of the bars'.
                error = UnknownColumn(
                    error.message,
                    step=self.step,
                    hint=f"inside {self.called} write it from the bars' columns, e.g. "
                    f"{self.daily_call.name}(rolling_mean(close, 20))",
                )
            self.report(error)
            return
        self.report(
            UnknownColumn(
                f"{self.daily_call.to_text()} runs on the session's {self.bars}, which have "
                f"no column '{name}' (the query's map, join and event columns are its rows' "
                f"own): inside {self.called} only {', '.join(BAR_COLUMNS)} and functions of "
                "them.",
                step=self.step,
                hint=f"write what '{name}' computes inside {self.called} from those columns (a "
                f"20-bar SMA: {self.daily_call.name}(rolling_mean(close, 20))), and do the "
                f"arithmetic with the rows' columns outside it: open - "
                f"{self.daily_call.name}(atr(14))",
            )
        )

    def call(self, node: ast.Call, mode: Mode) -> None:
        spec = lookup(node.name)
        if spec is not None and any(p.kind == "daily" for p in spec.params):
            self.report(
                ArgumentError(
                    f"{node.to_text()} is inside {self.daily_call.to_text()}: "
                    f"{'(), '.join(DAILY_ARGUMENTS)}() cannot be nested, the expression "
                    f"already runs on {self.bars}.",
                    step=self.step,
                    hint="write the expression once, with lag for earlier dates: "
                    f"{self.daily_call.name}(atr(14), 2) is the ATR two "
                    f"{UNIT_WORDS[self.daily_call.name]}s back",
                )
            )
            return
        super().call(node, mode)

    def aggregate_placement(self, node: ast.Call, mode: Mode) -> None:
        if mode != "row":  # nested in another aggregate: the usual error
            super().aggregate_placement(node, mode)
            return
        self.report(
            ArgumentError(
                f"{node.to_text()} is an aggregate (one value for many rows) and cannot be "
                f"inside {self.daily_call.to_text()}, which gives each row one value of its "
                f"trading {UNIT_WORDS[self.daily_call.name]}.",
                step=self.step,
                hint=f"over past {self.bars} use a window inside it, e.g. "
                f"{self.daily_call.name}(rolling_mean(range, 20)); aggregate its values in "
                f"select, e.g. mean({self.daily_call.name}(atr(14)))",
            )
        )
