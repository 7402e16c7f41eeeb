"""The pydantic shape of a query: defaults, normal forms and errors that name the fix."""

import pytest

from barb.errors import InvalidQuery, UnknownTimeframe
from barb.script.query import parse_query, split_top_level


def test_strings_and_lists_normalise() -> None:
    q = parse_query(
        {
            "session": "rth",
            "from": "1d",
            "join": "fomc",
            "group_by": "weekday",
            "select": "mean(range), percentile(range, 90) as p90",
            "sort": "mean_range desc",
            "limit": 3,
        }
    )
    assert q.timeframe == "daily"
    assert q.join[0].source == "fomc"
    assert q.group_by == ["weekday"]
    assert q.select == ["mean(range)", "percentile(range, 90) as p90"]
    assert q.sort[0].column == "mean_range" and q.sort[0].descending
    assert parse_query(q.to_json()) == q


def test_split_respects_parentheses_and_quotes() -> None:
    assert split_top_level("if(a, 'x,y', b), c") == ["if(a, 'x,y', b)", "c"]


def test_unknown_field_suggests_the_right_one() -> None:
    with pytest.raises(InvalidQuery) as info:
        parse_query({"form": "daily"})
    assert "form" in info.value.message
    assert "Did you mean 'from'" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("raw", "message", "hint"),
    [
        (
            {"join": {"instrument": "ES", "from": "1h"}},
            "Unknown field 'from' in join.",
            "the query's own timeframe and period",
        ),
        (
            {"join": ["fomc", {"source": "cpi", "filtr": "only"}]},
            "Unknown field 'filtr' in join.",
            "Did you mean 'filter'? join takes: source, instrument, session, filter.",
        ),
        (
            {"then": {"selct": "mean(x)"}},
            "Unknown field 'selct' in then.",
            "Did you mean 'select'? then takes: map, where, group_by, select, sort, limit.",
        ),
    ],
)
def test_a_nested_unknown_field_is_named_where_it_is(raw: dict, message: str, hint: str) -> None:
    """A join's unknown key read "Unknown field 'join'. Did you mean 'join'?"."""
    with pytest.raises(InvalidQuery) as info:
        parse_query(raw)
    assert info.value.message == message
    assert hint in (info.value.hint or "")


def test_unknown_timeframe_lists_the_real_ones() -> None:
    with pytest.raises(UnknownTimeframe) as info:
        parse_query({"from": "3d"})
    assert info.value.step == "from"
    assert "daily" in info.value.message and "4h" in info.value.message


@pytest.mark.parametrize(
    "raw",
    [
        [1, 2],
        "select",
        {"limit": 0},
        {"limit": "ten"},
        {"sort": "a b c"},
        {"map": {"bad name": "close"}},
        {"map": {"x": ""}},
        {"join": {"source": "fomc", "filter": "maybe"}},
    ],
)
def test_malformed_queries_are_invalid_query(raw: object) -> None:
    with pytest.raises(InvalidQuery) as info:
        parse_query(raw)  # type: ignore[arg-type]
    assert info.value.to_dict()["error"] is True
