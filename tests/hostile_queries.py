"""Hostile Barb Script: hypothesis strategies over the grammar, hand-made pathological inputs,
and the judges that run them through the engine and `barb query`.

What is checked is the promise of issue 15: whatever the JSON, the answer is a result or an
error value naming the problem; never an internal error, never a traceback, never a run past
the time limit. The strategies produce plausible queries with small mistakes as well as
nonsense: the registries' own names (functions, timeframes, sessions, events) mixed with
misspellings, wrong types, extreme numbers and odd text.

Used by tests/engine/test_hostile_queries.py (a short run in CI) and bench/hostile.py (the
10,000-query run whose figures are in docs/reliability.md).
"""

from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

import barb.script.library  # noqa: F401  (fills the function registry)
from barb.errors import QueryError, QueryTimeout
from barb.script.library import library
from barb.script.limits import load_query_text, time_limit
from barb.timeframes import TIMEFRAMES

INTERNAL = "Internal error"

COLUMNS = ("open", "high", "low", "close", "volume", "range", "timestamp", "trading_date")
JUNK_NAMES = ("rnage", "Close", "x", "_", "fomc", "es_close", "a1", "select", "nan")
OPERATORS = ("+", "-", "*", "/", "%", "**", "==", "!=", "<", "<=", ">", ">=", "and", "or")
FIELDS = (
    "session",
    "from",
    "period",
    "join",
    "map",
    "where",
    "group_by",
    "select",
    "sort",
    "limit",
    "instrument",
    "then",
)

# --- expressions ------------------------------------------------------------------------

_numbers = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.sampled_from(
        ["0", "-0", "1", "-1", "0.5", "1e308", "1e-308", "1e999", "-1e308", "2.5", "14", "200"]
    ),
    st.sampled_from(["99999999999999999999", "4294967296", "9223372036854775808", "00", "1."]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
_strings = st.one_of(
    st.sampled_from(
        ["'RTH'", "'ETH'", "'Mon'", "'Friday'", '"x"', "''", "'unterminated", "'09:30'"]
    ),
    st.text(max_size=8).map(lambda s: "'" + s.replace("'", "") + "'"),
)
_names = st.sampled_from(COLUMNS + JUNK_NAMES)
_function_names = st.one_of(
    st.sampled_from(sorted(library()) or ["mean"]),
    st.sampled_from(["foo", "MEAN", "mean_", "eval", "__import__", "exec"]),
)


def _call(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(_function_names, st.lists(children, max_size=4)).map(
        lambda fa: f"{fa[0]}({', '.join(fa[1])})"
    )


_atoms = st.one_of(_names, _numbers, _strings, st.sampled_from(["true", "false", "null", "()"]))


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, st.sampled_from(OPERATORS), children).map(" ".join),
        children.map(lambda c: f"({c})"),
        children.map(lambda c: f"-{c}"),
        children.map(lambda c: f"not {c}"),
        _call(children),
        st.tuples(children, st.lists(_numbers, min_size=1, max_size=3)).map(
            lambda cl: f"{cl[0]} in ({', '.join(cl[1])})"
        ),
    )


expressions = st.one_of(
    st.recursive(_atoms, _extend, max_leaves=12),
    st.text(max_size=30),  # anything at all
)

# --- field values -----------------------------------------------------------------------

json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**20), 10**20),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=20),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=10,
)

_periods = st.one_of(
    st.sampled_from(
        [
            "2024",
            "2024-03",
            "2024-02-30",
            "2024-13",
            "0000",
            "9999",
            "2024:2023",
            ":2024",
            "2024..",
            "2020 to 2024",
            "2020to2024",
            "last_year",
            "ytd",
            "mtd",
            "all",
            "last_30_bars",
            "last_0_days",
            "last_99999999_years",
            "last_week",
            "last quarter",
            " 2024 ",
            "2024-1-1:2024-3-31",
        ]
    ),
    st.tuples(
        st.integers(0, 10**15),
        st.sampled_from(["day", "days", "week", "months", "years", "bars", "decades"]),
    ).map(lambda nu: f"last_{nu[0]}_{nu[1]}"),
    st.text(max_size=20),
)
_timeframes = st.one_of(
    st.sampled_from([*sorted(TIMEFRAMES), "1d", "w", "day", "2m", "1min", "yearly", "tick"]),
    st.text(max_size=6),
)
_sessions = st.one_of(
    st.sampled_from(
        ["RTH", "ETH", "rth", "OVERNIGHT", "ASIAN", "NOPE", "09:30-09:45", "23:00-01:00"]
    ),
    st.sampled_from(["25:00-26:00", "09:30-09:30", "9:30-10", "cash_close"]),
    st.text(max_size=10),
)
_instruments = st.sampled_from(["NQ", "ES", "CL", "nq", "XX", "../etc", "", "NQ "])
_select_item = st.one_of(
    expressions,
    st.tuples(expressions, _names).map(lambda en: f"{en[0]} as {en[1]}"),
    st.tuples(_function_names, _names).map(lambda fn: f"{fn[0]}({fn[1]})"),
)
_selects = st.one_of(
    _select_item,
    st.lists(_select_item, max_size=4),
    st.lists(_select_item, min_size=1, max_size=4).map(", ".join),
)
_sort_keys = st.tuples(
    _names, st.sampled_from(["", " desc", " asc", " DESC", " up", "   desc  "])
).map("".join)
_sorts = st.one_of(
    _sort_keys,
    st.lists(_sort_keys, max_size=3),
    st.lists(_sort_keys, min_size=1, max_size=3).map(", ".join),
    st.integers(),
    st.dictionaries(st.sampled_from(["column", "descending", "x"]), json_values, max_size=2),
)
_limits = st.one_of(
    st.integers(-5, 200_000),
    st.sampled_from([0, -1, 10**17, 2**63, 1.5, "10", True, None]),
)
_joins = st.one_of(
    st.sampled_from(["FOMC", "NFP", "CPI", "opex", "nope", ""]),
    st.fixed_dictionaries(
        {"source": st.sampled_from(["FOMC", "NFP", "x"])},
        optional={"filter": st.sampled_from(["only", "exclude", "maybe"])},
    ),
    st.fixed_dictionaries({"instrument": _instruments}),
    st.lists(st.sampled_from(["FOMC", "NFP"]), max_size=2),
)
_maps = st.dictionaries(st.one_of(_names, st.text(max_size=6)), expressions, max_size=3)

FIELD_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "session": _sessions,
    "from": _timeframes,
    "period": _periods,
    "join": _joins,
    "map": _maps,
    "where": expressions,
    "group_by": st.one_of(expressions, st.lists(expressions, max_size=2)),
    "select": _selects,
    "sort": _sorts,
    "limit": _limits,
    "instrument": _instruments,
}


# --- plausible queries: right names, right arities, literals in range -----------------------

_NUMERIC = ("open", "high", "low", "close", "volume", "range")
_PLAIN_FUNCTIONS = sorted(n for n, f in library().items() if not f.is_aggregate)
_AGGREGATES = sorted(n for n, f in library().items() if f.is_aggregate)


@st.composite
def _valid_call(draw: st.DrawFn, names: list[str], depth: int) -> str:
    spec = library()[draw(st.sampled_from(names))]
    args: list[str] = []
    for param in spec.params:
        if not param.required and draw(st.booleans()):
            break  # leave this and the rest to their defaults
        if param.kind in ("series", "daily"):
            if param.accepts == "condition":
                args.append(draw(_valid_condition(depth - 1)))
            else:
                args.append(draw(_valid_number(depth - 1)))
        elif param.kind in ("int", "number"):
            low = int(param.min) if param.min is not None else 1
            high = min(int(param.max) if param.max is not None else 400, low + 400)
            args.append(str(draw(st.integers(low, max(low, high)))))
        elif param.kind == "string":
            args.append(draw(st.sampled_from(["'RTH'", "'ETH'", "'OVERNIGHT'"])))
        else:
            args.append(draw(st.sampled_from(["true", "false"])))
    return f"{spec.name}({', '.join(args)})"


def _valid_number(depth: int) -> st.SearchStrategy[str]:
    leaves = st.one_of(st.sampled_from(_NUMERIC), st.integers(-5, 500).map(str))
    if depth <= 0:
        return leaves
    return st.one_of(
        leaves,
        _valid_call(_PLAIN_FUNCTIONS, depth),
        st.tuples(_valid_number(depth - 1), st.sampled_from("+-*/"), _valid_number(depth - 1)).map(
            " ".join
        ),
    )


def _valid_condition(depth: int) -> st.SearchStrategy[str]:
    compare = st.tuples(
        _valid_number(depth), st.sampled_from(["<", ">", "<=", ">=", "==", "!="]), _valid_number(0)
    ).map(" ".join)
    return st.one_of(
        compare,
        st.sampled_from(["inside_day()", "gap_up()", "up_bar()", "dayname() == 'Mon'"]),
        st.tuples(compare, st.sampled_from(["and", "or"]), compare).map(" ".join),
    )


@st.composite
def plausible_queries(draw: st.DrawFn) -> dict[str, Any]:
    """A query a model could write: real names and arities, so that the evaluator runs."""
    query: dict[str, Any] = {
        "from": draw(st.sampled_from(["daily", "daily", "weekly", "1h", "15m", "5m", "1m"])),
        "session": draw(st.sampled_from(["RTH", "ETH", "OVERNIGHT"])),
    }
    if query["from"] in ("1m", "5m", "15m") or draw(st.booleans()):
        query["period"] = draw(st.sampled_from(["2024", "2025-06", "last_30_days", "ytd"]))
    maps = draw(st.dictionaries(st.sampled_from(["a", "b", "gap"]), _valid_number(2), max_size=2))
    if maps:
        query["map"] = maps
    columns = list(_NUMERIC) + list(maps)
    if draw(st.booleans()):
        query["where"] = draw(_valid_condition(2))
    shape = draw(st.sampled_from(["scalar", "grouped", "table"]))
    aggregate = st.tuples(st.sampled_from(_AGGREGATES), st.sampled_from(columns)).map(
        lambda ac: "count()"
        if ac[0] == "count"
        else f"{ac[0]}({ac[1]})"
        if ac[0] not in ("percentile", "correlation")
        else f"percentile({ac[1]}, 90)"
        if ac[0] == "percentile"
        else f"correlation({ac[1]}, close)"
    )
    if shape == "grouped":
        query["group_by"] = draw(st.sampled_from(["dayname()", "year()", "month()", "hour()"]))
        query["select"] = draw(st.lists(aggregate, min_size=1, max_size=3))
    elif shape == "scalar":
        query["select"] = draw(aggregate)
    else:
        picked = draw(st.lists(st.sampled_from(columns), min_size=1, max_size=3, unique=True))
        query["select"] = picked
        query["sort"] = f"{draw(st.sampled_from(picked))} {draw(st.sampled_from(['asc', 'desc']))}"
        query["limit"] = draw(st.integers(1, 50))
    return query


@st.composite
def queries(draw: st.DrawFn, nested: bool = True) -> dict[str, Any]:
    """A query: half plausible ones, half known fields with plausible or wrong values."""
    if nested and draw(st.booleans()):
        return draw(plausible_queries())
    query: dict[str, Any] = {}
    names = draw(st.lists(st.sampled_from(FIELDS), unique=True, max_size=7))
    for name in names:
        if name == "then":
            if nested:
                query[name] = draw(st.one_of(queries(nested=False), json_values))
            continue
        wrong_type = draw(st.integers(0, 9)) == 0
        query[name] = draw(json_values if wrong_type else FIELD_VALUES[name])
    if draw(st.integers(0, 19)) == 0:
        query[draw(st.text(max_size=10))] = draw(json_values)
    return query


@st.composite
def query_texts(draw: st.DrawFn) -> str:
    """JSON text of a query, sometimes damaged: cut short or with a character changed."""
    text = json.dumps(draw(queries()), ensure_ascii=draw(st.booleans()))
    damage = draw(st.integers(0, 19))
    if damage == 1:
        text = text[: len(text) * draw(st.integers(1, 9)) // 10]
    elif damage == 2:
        at = len(text) * draw(st.integers(0, 9)) // 10
        text = text[:at] + draw(st.sampled_from(list('{}[]",:\\0 x'))) + text[at + 1 :]
    return text


# --- hand-made pathological inputs (JSON text) ---------------------------------------------


def pathological_texts() -> list[tuple[str, str]]:
    """(name, JSON text): the issue's reproductions and their relatives."""
    deep_select = '{"select": ' + "[" * 500 + '"close"' + "]" * 500 + "}"
    cases = {
        "sort by a column not selected": {
            "from": "daily",
            "select": "close",
            "sort": "volume desc",
        },
        "sort is a number": {"from": "daily", "sort": 5},
        # Found by the 10,000 run: daily rows shown without their (duplicate) trading_date.
        "sort daily rows by trading_date": {"sort": "trading_date desc"},
        "period last_99999999_years": {"period": "last_99999999_years", "select": "count()"},
        "next(close, 1e308)": {"map": {"x": "next(close, 1e308)"}, "select": "mean(x)"},
        "prev(close, 1e18)": {"map": {"x": "prev(close, 99999999999999999)"}, "select": "max(x)"},
        "rolling window 1e9": {"map": {"x": "rolling_mean(close, 1000000000)"}, "select": "max(x)"},
        "sort with 100,000 spaces": {"sort": "close" + " " * 100_000 + "x"},
        "period with 100,000 spaces": {"period": "2024" + " " * 100_000 + "x"},
        "period ' to ' with spaces": {"period": "2024" + " " * 3_000 + "to" + " " * 900 + "y"},
        "sort with 3,900 spaces": {"sort": "close" + " " * 3_900 + "x"},
        "limit above the maximum": {"select": "close", "limit": 10**15},
        "60 nested brackets": {"where": "(" * 60 + "close" + ")" * 60 + " > 0"},
        "900 unary minus": {"where": "-" * 900 + "close > 0"},
        "200 nots": {"where": "not " * 200 + "close > 0"},
        "power tower": {"map": {"x": "**".join(["close"] * 200)}, "select": "max(x)"},
        "huge power": {"map": {"x": "close ** 1e308"}, "select": "max(x)"},
        "division by zero": {"map": {"x": "close / 0"}, "select": "mean(x)"},
        "a thousand select items": {"select": ["close"] * 1_000},
        "empty object": {},
        "empty strings": {"session": "", "from": "", "period": "", "select": "", "where": ""},
        "then of a then": {"select": "count()", "then": {"then": {"then": {"select": "x"}}}},
        "non-ASCII names": {"map": {"диапазон": "high - low"}, "select": "mean(диапазон)"},
        "emoji expression": {"where": "close > 💥"},
    }
    texts = [(name, json.dumps(query)) for name, query in cases.items()]
    texts += [
        ("select nested 500 deep (the pool-breaking query)", deep_select),
        ("JSON nested 100,000 deep", "[" * 100_000 + "]" * 100_000),
        ("5,000-digit integer", '{"limit": ' + "9" * 5_000 + "}"),
        ("lone surrogate", '{"period": "\\ud800"}'),
        ("lone surrogate in a key", '{"\\udfff": 1}'),
        ("NaN", '{"limit": NaN}'),
        ("Infinity", '{"map": {"x": "close"}, "limit": -Infinity}'),
        ("1e999", '{"limit": 1e999}'),
        ("not JSON", "{nope"),
        ("empty text", ""),
        ("a list", '["select", "close"]'),
        ("null", "null"),
        ("a string", '"select close"'),
        ("duplicate keys", '{"select": "close", "select": 5}'),
        ("byte-order mark", '\ufeff{"select": "count()"}'),
        ("one megabyte of text", '{"where": "' + "x" * 1_000_000 + '"}'),
    ]
    return texts


# --- judges -----------------------------------------------------------------------------


@dataclass
class Verdict:
    """What one input did: fine, or which promise it broke."""

    name: str
    seconds: float
    error_type: str | None = None
    internal: bool = False
    traceback: bool = False
    timed_out: bool = False
    detail: str = ""

    @property
    def broken(self) -> bool:
        return self.internal or self.traceback or self.timed_out


def run_engine(name: str, text: str, settings: Any, timeout_s: float) -> Verdict:
    """JSON text → the input limits → execute(), as every entrance does, under the limit."""
    from barb.interpreter import execute

    started = time.perf_counter()
    verdict = Verdict(name=name, seconds=0.0)
    try:
        with time_limit(timeout_s):
            try:
                value = load_query_text(text)
            except QueryError as exc:
                verdict.error_type = exc.error_type
            else:
                result = execute(value, "NQ", settings=settings)
                if result.error is not None:
                    verdict.error_type = result.error.error_type
                    verdict.internal = result.error.message.startswith(INTERNAL)
                    verdict.detail = result.error.message
                else:
                    json.dumps(result.to_dict(), ensure_ascii=False).encode()
    except QueryTimeout:
        verdict.timed_out = True
    except Exception:
        verdict.traceback = True
        verdict.detail = traceback.format_exc(limit=-3)
    verdict.seconds = time.perf_counter() - started
    return verdict


def run_cli(name: str, text: str, cli_runner: Any) -> Verdict:
    """`barb query TEXT` in this process (click's runner): exit code, output, no traceback.

    An answer exits 0 and prints the summary; a refused query exits 1 and prints one JSON
    error value. Anything else (a traceback, another exit code, unparsable error output)
    breaks the promise.
    """
    from barb.cli import main

    started = time.perf_counter()
    outcome = cli_runner.invoke(main, ["query", text])
    verdict = Verdict(name=name, seconds=time.perf_counter() - started)
    output = outcome.output
    escaped = outcome.exception is not None and not isinstance(outcome.exception, SystemExit)
    verdict.traceback = escaped or "Traceback" in output or outcome.exit_code not in (0, 1)
    if escaped:
        verdict.detail = "".join(traceback.format_exception(outcome.exception, limit=-3))
    elif verdict.traceback:
        verdict.detail = output[-800:]
    if outcome.exit_code == 1 and not verdict.traceback:
        try:
            payload = json.loads(output)
        except ValueError:
            verdict.traceback = True
            verdict.detail = output[-800:]
            return verdict
        verdict.error_type = payload.get("error_type")
        verdict.internal = str(payload.get("message", "")).startswith(INTERNAL)
        verdict.timed_out = verdict.error_type == "QueryTimeout"
        verdict.detail = str(payload.get("message", ""))
    return verdict
