"""Every entrance applies the same input limits: the model's tool, the runners, `/query`
(tests/telegram/test_query_limits_e2e.py) and `barb query` (tests/engine)."""

from __future__ import annotations

import pytest

from bot.assistant.tools import ExecuteQueryArgs, ToolArgumentError, parse_args

DEEP = {"select": [[[[[[[[[["close"]]]]]]]]]]}


def test_the_models_tool_refuses_an_unbounded_query_with_the_reason() -> None:
    with pytest.raises(ToolArgumentError) as caught:
        parse_args("execute_query", {"query": DEEP, "explanation": "x"})
    assert "query: Value error, The query nests JSON more than 8 levels deep." in str(caught.value)
    with pytest.raises(ToolArgumentError, match="more than 18 digits"):
        parse_args("execute_query", {"query": {"limit": 10**40}})


def test_the_models_tool_takes_an_ordinary_query() -> None:
    query = {"session": "RTH", "from": "daily", "select": "mean(range)"}
    args = parse_args("execute_query", {"query": query})
    assert isinstance(args, ExecuteQueryArgs) and args.query == query
