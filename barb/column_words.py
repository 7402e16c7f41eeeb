"""What a person calls a column: the bars' own columns, and the aggregates of them, in words.

``mean(range)`` is "average range" (in Russian «средний диапазон»), ``percentile(range, 90)``
"90th percentile of range", ``range`` itself «диапазон». A name the query made (``rng_pct``,
``r``) has no words: a chart shows it as written, and a sentence quotes it in the languages
that need it («rng_pct»), where "среднее range" had dropped an English name into Russian
grammar. The plan before Run and a chart's headline and axes both name a column here, so the
plan's "average range" is the chart's, and one table holds the words.
"""

from __future__ import annotations

from typing import cast

from barb.i18n import DEFAULT, N_, decimal, text
from barb.script import ast
from barb.script.ast import NodeT

#: The bars' own columns (``barb.frames.BAR_COLUMNS`` but their times) with their words: the
#: name, the form after an aggregate's word (the Russian genitive, «медиана диапазона») and
#: the average (an adjective agrees with its noun: «средний диапазон», «среднее закрытие»).
_COLUMNS: dict[str, tuple[str, str, str]] = {
    "open": (N_("column.open"), N_("column_of.open"), N_("column_mean.open")),
    "high": (N_("column.high"), N_("column_of.high"), N_("column_mean.high")),
    "low": (N_("column.low"), N_("column_of.low"), N_("column_mean.low")),
    "close": (N_("column.close"), N_("column_of.close"), N_("column_mean.close")),
    "volume": (N_("column.volume"), N_("column_of.volume"), N_("column_mean.volume")),
    "range": (N_("column.range"), N_("column_of.range"), N_("column_mean.range")),
}
#: What an aggregate computes, by function; its argument fills ``{x}`` (and ``{y}``, ``{p}``).
_AGGREGATES: dict[str, str] = {
    "mean": N_("aggregate.mean"),
    "sum": N_("aggregate.sum"),
    "max": N_("aggregate.max"),
    "min": N_("aggregate.min"),
    "median": N_("aggregate.median"),
    "std": N_("aggregate.std"),
    "skew": N_("aggregate.skew"),
    "kurt": N_("aggregate.kurt"),
    "percentile": N_("aggregate.percentile"),
    "correlation": N_("aggregate.correlation"),
}
#: An aggregate's word alone, for answers of one column said after its name ("range:
#: average 364.56 · median 343.50 · 90th percentile 516.30 points"); ``{p}`` a percentile's.
_STATISTICS: dict[str, str] = {
    "mean": N_("statistic.mean"),
    "sum": N_("statistic.sum"),
    "max": N_("statistic.max"),
    "min": N_("statistic.min"),
    "median": N_("statistic.median"),
    "std": N_("statistic.std"),
    "skew": N_("statistic.skew"),
    "kurt": N_("statistic.kurt"),
    "percentile": N_("statistic.percentile"),
}
_COUNT, _COUNT_WHERE = N_("aggregate.count"), N_("aggregate.count_where")
#: What a count counts, by the unit of its rows (``barb.column_units.COUNTED_ROWS``), as the
#: word after "number of" («количество дней»): on daily bars a count of bars is one of days,
#: and "number of bars = 516 days" named one thing two ways.
_COUNTED: dict[str, str] = {
    "days": N_("rows.daily"),
    "weeks": N_("rows.weekly"),
    "months": N_("rows.monthly"),
    "quarters": N_("rows.quarterly"),
    "years": N_("rows.yearly"),
    "bars": N_("rows.other"),
    "groups": N_("rows.groups"),  # a second stage's rows: the first stage's groups (hours)
}
#: A group key made by a calendar call, as "by" takes it in a chart's subtitle and a plan
#: ("по месяцу", where "по month()" was the query's code amid Russian words, p47d D5).
_BY_KEYS = {
    "year": N_("by_key.year"),
    "quarter": N_("by_key.quarter"),
    "month": N_("by_key.month"),
    "week": N_("by_key.week"),
    "weekday": N_("by_key.weekday"),
    "dayname": N_("by_key.dayname"),
    "dayofweek": N_("by_key.weekday"),
    "date": N_("by_key.date"),
    "hour": N_("by_key.hour"),
    "time": N_("by_key.time"),
}
_SHARE = N_("aggregate.share")  # the mean of a condition: a share of the rows counted
_CONDITIONS = (ast.Compare, ast.Logical, ast.Not, ast.InList)
#: The words joining conditions in words («закрытие > открытие и объём > 100000»), by operator.
_JOINS: dict[str, str] = {
    "and": N_("condition.and"),
    "or": N_("condition.or"),
    "not": N_("condition.not"),
}


def _text(key: str, lang: str | None, **values: object) -> str:
    return text("barb", key, lang, **values)


def quoted(name: str, lang: str | None = DEFAULT) -> str:
    """A name no word stands for, as a sentence in ``lang`` holds it: ``weekday``, «weekday»."""
    return _text(N_("quoted"), lang, name=name)


def key_after_by(call: str, lang: str | None = DEFAULT) -> str | None:
    """A group key made by ``call`` (``month``) as "by" takes it ("month", «месяцу»), in the
    chart's subtitle and the plan alike; None for a call with no word."""
    found = _BY_KEYS.get(call)
    return None if found is None else _text(found, lang)


def bars_counted(lang: str | None = DEFAULT, rows: str = "bars") -> str:
    """What ``count()`` is in words, "number of bars": a name that says its unit, the bars
    counted (``rows``: "days" on daily bars, "number of days")."""
    return _text(_COUNT, lang, rows=_rows(rows, lang))


def _rows(rows: str, lang: str | None) -> str:
    return _text(_COUNTED.get(rows, _COUNTED["bars"]), lang)


#: A formula that is a bar column itself: ``mean(high - low)`` is the average range, where
#: the engine's "mean_high_low" headed the answer, the chart and /query.
_SAME_AS_COLUMN = {ast.Binary("-", ast.Column("high"), ast.Column("low")): ast.Column("range")}


def _as_columns(expr: NodeT, *, within: bool = False) -> NodeT:
    """``expr`` as a bar column when it is one by formula (``high - low``), and so each
    argument of a call that is; ``within``: each such formula anywhere in it, for a
    comparison said in words. Not inside a longer formula: "(high - low) / open" as
    "range / open" would read as the average range divided."""
    same = _SAME_AS_COLUMN.get(expr) if isinstance(expr, ast.Binary) else None
    if same is not None:
        return cast(NodeT, same)
    if within or isinstance(expr, ast.Call):
        return ast.with_children(expr, lambda child: _as_columns(child, within=within))
    return expr


def plain_words(expr: ast.Expr, lang: str | None = DEFAULT, rows: str = "bars") -> str | None:
    """Words for ``expr`` when it is a bar column, an aggregate of bar columns ("average
    range", «максимум объёма»), a count of bars ("number of bars") or a share of those
    meeting a condition ("share of bars where close > open"); None for anything else, which
    is shown as written. A count and a share are words whatever the condition names: the
    engine's name for them (``count``, ``mean_close_gt_open``) headed a Russian chart whose
    plan said «количество баров», «доля баров, где закрытие > открытие»."""
    expr = _as_columns(expr)
    if isinstance(expr, ast.Column) and expr.name in _COLUMNS:
        return _text(_COLUMNS[expr.name][0], lang)
    if counts_rows(expr):
        return described(expr, lang, rows)
    if not isinstance(expr, ast.Call) or expr.name.lower() not in _AGGREGATES:
        return None
    columns = [a for a in expr.args if not isinstance(a, ast.Number)]
    if not columns or not all(isinstance(a, ast.Column) and a.name in _COLUMNS for a in columns):
        return None
    return _aggregate(expr, lang)


def aggregate_words(expr: ast.Expr, lang: str | None = DEFAULT) -> str | None:
    """An aggregate of a name the query made in Barb's words, that name quoted ("average
    rng_pct", «среднее «rng_pct»», «10-й перцентиль «chg»»), as the plan says it; None for
    anything else. The engine's name for it (``percentile_chg_10``, ``mean_ret``) had headed
    Russian charts with Barb's English words."""
    expr = _as_columns(expr)
    if not (isinstance(expr, ast.Call) and expr.name.lower() in _AGGREGATES and expr.args):
        return None
    # Of a formula the engine's name stays: "average range / open * 100" read as the
    # average range divided.
    if not all(isinstance(a, ast.Column | ast.Number) for a in expr.args):
        return None
    return _aggregate(expr, lang)


def formula_words(expr: ast.Expr, lang: str | None = DEFAULT) -> str | None:
    """A formula the engine could only name by a slug of it, as written: an aggregate of it
    in Barb's words around it ("average ((close - open) / open * 100)", «среднее «(close -
    open) / open * 100»», its brackets or quotes keeping the average over the whole), any
    other as the query wrote it (``rsi(close, 14)``, ``close - open``). The slugs
    ("mean_close_open_open_100", "rsi_close_14") had headed charts in both languages. None
    for a column."""
    if isinstance(expr, ast.Column):
        return None
    if isinstance(expr, ast.Call) and expr.name.lower() in _AGGREGATES and expr.args:
        first, rest = expr.args[0], expr.args[1:]
        if len(rest) <= 1 and all(isinstance(a, ast.Number) for a in rest):
            # A call is one unit as a name is, quoted as one («round(range / 100)»); English
            # brackets around it read "maximum (round(range / 100))", two closed at once.
            if isinstance(first, ast.Call):
                x = quoted(first.to_text(), lang)
            else:
                x = _text(N_("formula"), lang, formula=first.to_text())
            p = ast.literal_value(rest[0]) if rest else None
            return _text(
                _AGGREGATES[expr.name.lower()],
                lang,
                x=x,
                y="",
                p=_p_text(p, lang),
                ordinal_of=_ordinal(p),
            )
    return expr.to_text()


def statistic_of(expr: ast.Expr, lang: str | None = DEFAULT) -> tuple[str, str] | None:
    """An aggregate of one bar column as that column's name and the statistic's word alone
    (``percentile(range, 90)``: "range", "90th percentile"), for several answers of one
    column said once by its name; None for anything else."""
    expr = _as_columns(expr)
    if not isinstance(expr, ast.Call) or expr.name.lower() not in _STATISTICS or not expr.args:
        return None
    first, rest = expr.args[0], expr.args[1:]
    if not isinstance(first, ast.Column) or first.name not in _COLUMNS:
        return None
    if not all(isinstance(a, ast.Number) for a in rest):
        return None
    p = ast.literal_value(rest[0]) if rest else None
    word = _text(_STATISTICS[expr.name.lower()], lang, p=_p_text(p, lang), ordinal_of=_ordinal(p))
    return _text(_COLUMNS[first.name][0], lang), word


def described(expr: ast.Expr, lang: str | None = DEFAULT, rows: str = "bars") -> str:
    """``expr`` as a sentence names it: in words as far as it has them (an aggregate of a name
    the query made keeps that name, quoted: «среднее «rng_pct»»), else as written; a count
    of ``rows`` ("days") as "number of days"."""
    expr = _as_columns(expr)
    if isinstance(expr, ast.Call) and expr.name.lower() == "count":
        if not expr.args:
            return bars_counted(lang, rows)
        x = condition_text(expr.args[0], lang)
        return _text(_COUNT_WHERE, lang, rows=_rows(rows, lang), x=x)
    if isinstance(expr, ast.Call) and expr.name.lower() == "mean" and _is_condition(expr.args):
        return _text(_SHARE, lang, rows=_rows(rows, lang), x=condition_text(expr.args[0], lang))
    if isinstance(expr, ast.Call) and expr.name.lower() in _AGGREGATES:
        return _aggregate(expr, lang)
    return plain_words(expr, lang) or quoted(expr.to_text(), lang)


def condition_text(expr: ast.Expr, lang: str | None = DEFAULT) -> str:
    """A condition or formula in words as far as it has them: and, or and not in
    ``lang``'s words, and each comparison they join with the bar columns it compares named
    (``range < 150``, «диапазон < 150»), when it names no other column and calls nothing:
    a word inside a call («sma(закрытие, 20)») or beside a name the query made reads worse
    than the comparison as written, which it then is. «gap_pct > 0.5 и закрытие > открытие»:
    one call or made name had left the whole filter code («… and close > open»)."""
    return _said(expr, lang)


def _said(node: ast.Node, lang: str | None) -> str:
    """``node``'s text with and, or and not in ``lang``'s words: a Russian plan read
    «закрытие > открытие and объём > 100000». Parenthesized as ``to_text`` does, and a
    negated condition always."""
    if isinstance(node, ast.Logical):
        own = node.precedence
        left, right = _said_within(node.left, own, lang), _said_within(node.right, own + 1, lang)
        return f"{left} {_text(_JOINS[node.op], lang)} {right}"
    if isinstance(node, ast.Not):
        # «не (закрытие > открытие)»: "not close > open" is read as (not close) > open.
        operand = _said(node.operand, lang)
        if isinstance(node.operand, _CONDITIONS):
            operand = f"({operand})"
        return f"{_text(_JOINS['not'], lang)} {operand}"
    return _compared(node, lang)


def _compared(node: ast.Node, lang: str | None) -> str:
    """One comparison (or any operand of and, or, not): its bar columns in words when it
    names no other column and calls nothing, else as written."""
    nodes = list(ast.walk(node))
    if any(isinstance(n, ast.Call) for n in nodes):
        return node.to_text()
    node = _as_columns(node, within=True)  # "high - low > 100" is «диапазон > 100»
    nodes = list(ast.walk(node))
    if not all(n.name in _COLUMNS for n in nodes if isinstance(n, ast.Column)):
        return node.to_text()
    return _renamed(node, lang).to_text()


def _said_within(node: ast.Node, min_precedence: int, lang: str | None) -> str:
    said = _said(node, lang)
    return f"({said})" if node.precedence < min_precedence else said


def _renamed(node: ast.Node, lang: str | None) -> ast.Node:
    if isinstance(node, ast.Column):
        return ast.Column(_text(_COLUMNS[node.name][0], lang))
    return ast.with_children(node, lambda child: _renamed(child, lang))


def _aggregate(expr: ast.Call, lang: str | None) -> str:
    """An aggregate in words, its bar columns named by theirs and any other argument quoted."""
    func = expr.name.lower()
    first = expr.args[0] if expr.args else None
    if func == "mean" and isinstance(first, ast.Column) and first.name in _COLUMNS:
        return _text(_COLUMNS[first.name][2], lang)
    x, y = (_argument(a, lang) for a in (*expr.args, None, None)[:2])
    p = ast.literal_value(expr.args[1]) if len(expr.args) > 1 else None
    return _text(_AGGREGATES[func], lang, x=x, y=y, p=_p_text(p, lang), ordinal_of=_ordinal(p))


def _p_text(p: object, lang: str | None) -> object:
    """A percentile's number as the locale writes it: «97,5-й перцентиль», where the
    query's "97.5" read as a Russian decimal written the English way; a whole one as
    written (90, not "90,0")."""
    if isinstance(p, bool) or not isinstance(p, int | float):
        return p
    return str(int(p)) if float(p).is_integer() else decimal(p, lang)


def _ordinal(p: object) -> float | None:
    """A percentile's number as an ordinal takes it: "1st", "22nd", "90th" ("1th" before)."""
    return float(p) if isinstance(p, int | float) and not isinstance(p, bool) else None


def _argument(expr: ast.Expr | None, lang: str | None) -> str:
    if expr is None:
        return ""
    if isinstance(expr, ast.Column) and expr.name in _COLUMNS:
        return _text(_COLUMNS[expr.name][1], lang)
    return quoted(expr.to_text(), lang)


def _is_condition(args: tuple[ast.Expr, ...]) -> bool:
    return len(args) == 1 and isinstance(args[0], _CONDITIONS)


def counts_rows(expr: ast.Expr) -> bool:
    """Whether ``expr`` counts bars: ``count()``, ``count(range > 300)``, or takes the share
    of them meeting a condition, ``mean(close > open)``."""
    if not isinstance(expr, ast.Call):
        return False
    func = expr.name.lower()
    if func == "count":
        return not expr.args or _is_condition(expr.args)
    return func == "mean" and _is_condition(expr.args)
