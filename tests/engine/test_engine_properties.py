"""Property: no query, however malformed, makes `execute` raise; errors are values."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from barb import execute

COLUMNS = ["open", "high", "low", "close", "volume", "range", "timestamp", "x", "rnage"]
FUNCS = ["mean", "prev", "rolling_mean", "count", "dayname", "rsi", "atr", "inside_day", "nope"]

words = st.sampled_from(COLUMNS + FUNCS + ["and", "or", "not", "in", "(", ")", ",", "'Mon'"])
ops = st.sampled_from(["+", "-", "*", "/", ">", "<", "==", "!=", " ", "%", "**"])
numbers = st.integers(-5, 500).map(str)
expression = st.lists(st.one_of(words, ops, numbers), min_size=1, max_size=9).map(" ".join)
calls = st.builds(
    lambda f, a, n: f"{f}({a}, {n})" if n else f"{f}({a})",
    st.sampled_from(FUNCS),
    st.sampled_from(COLUMNS),
    st.one_of(st.none(), st.integers(-3, 30)),
)
text = st.one_of(expression, calls, st.text(string.printable, max_size=30))

queries = st.fixed_dictionaries(
    {},
    optional={
        "session": st.one_of(st.sampled_from(["RTH", "ETH", "ASIAN", "rth", "LUNCH", ""]), text),
        "from": st.sampled_from(["1m", "5m", "1h", "4h", "daily", "weekly", "monthly", "2d"]),
        "period": st.one_of(st.sampled_from(["2024", "2024-02", "last_year", "ytd", "x"]), text),
        "join": st.sampled_from(["fomc", "nfp", "cpi", "opex", "bogus", {"source": "fomc"}]),
        "map": st.dictionaries(st.sampled_from(["a", "b", "gap", "1bad"]), text, max_size=3),
        "where": text,
        "group_by": st.one_of(text, st.lists(text, max_size=2)),
        "select": st.one_of(text, st.lists(st.one_of(calls, text), max_size=3)),
        "sort": st.one_of(text, st.sampled_from(["range desc", "count asc"])),
        "limit": st.one_of(st.integers(-5, 10**7), st.text(max_size=3)),
        "bogus": st.integers(),
    },
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=queries)
def test_execute_never_raises(query, engine_settings) -> None:
    result = execute(query, "NQ", settings=engine_settings)
    payload = result.to_dict()
    if result.ok:
        assert payload["summary"]["type"] in {"scalar", "dict", "table", "grouped"}
    else:
        assert payload["error"] is True
        assert payload["error_type"] != "ExecutionError" or "Internal" not in payload["message"], (
            payload
        )
        assert payload["message"]


@settings(max_examples=60, deadline=None)
@given(junk=st.one_of(st.none(), st.integers(), st.text(max_size=20), st.lists(st.integers())))
def test_non_objects_are_invalid_queries(junk, engine_settings) -> None:
    result = execute(junk, "NQ", settings=engine_settings)  # type: ignore[arg-type]
    assert not result.ok
    assert result.to_dict()["error_type"] == "InvalidQuery"
