"""'Available: …' lists in errors read the same every time: sorted, whatever order the names
came in (a set's order changes from one process to the next)."""

from __future__ import annotations

import pytest

from barb import execute
from barb.errors import UnknownEvent, available
from barb.events import resolve_event
from barb.instruments import load_instrument
from barb.script.validator import unknown_column

BAR_COLUMNS = ["close", "high", "low", "open", "range", "timestamp", "trading_date", "volume"]


def listed(message: str) -> list[str]:
    return message.split("Available: ")[1].split(".")[0].split("; ")[0].split(", ")


def test_an_unknown_column_lists_every_column_sorted(engine_settings) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"gap": "open - prev(close)", "body": "close - open"},
        "where": "rnage > 5",
    }
    result = execute(query, "NQ", settings=engine_settings)
    error = result.error.to_dict()
    assert error["error_type"] == "UnknownColumn" and error["step"] == "where"
    assert listed(error["message"]) == sorted([*BAR_COLUMNS, "gap", "body"])
    assert error["hint"] == "did you mean 'range'?"


def test_the_same_columns_in_any_order_give_the_same_message() -> None:
    names = [*BAR_COLUMNS, "gap_pct", "Zeta", "alpha"]
    messages = {
        unknown_column("gpa_pct", order, step="where").message
        for order in (names, list(reversed(names)), set(names), frozenset(names[::2] + names))
    }
    assert len(messages) == 1
    assert listed(messages.pop()) == sorted(names, key=str.lower)


def test_a_long_list_is_cut_after_the_first_names_in_order() -> None:
    names = [f"c{i:02d}" for i in range(40, 0, -1)]
    assert available(names, limit=3) == "c01, c02, c03, …"
    assert available(["b", "a", "b"]) == "a, b"


def test_an_unknown_event_lists_the_instruments_events_sorted() -> None:
    crude = load_instrument("CL")
    with pytest.raises(UnknownEvent) as info:
        resolve_event("fomx", crude)
    names = listed(info.value.message)
    assert names == sorted(crude.events)
    assert info.value.hint == "Did you mean 'fomc'?"
