"""A ranking of daily bars that lists short sessions says so: "the 5 quietest days of 2024"
listed Thanksgiving and the day after, whose range and volume are a part day's. The
fixture's 2024-02-19 (Presidents' Day: the stock market shut, the futures traded) is such a
session; its rank by volume comes from pandas over the minute file."""

from __future__ import annotations

from rth_bars import rth_minutes

from barb import execute
from barb.result import Result

PRESIDENTS_DAY = "2024-02-19"


def _ask(query: dict, settings) -> Result:
    result = execute({"session": "RTH", "from": "daily", **query}, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def _short(result: Result) -> list[str]:
    return [w for w in result.metadata.warnings if "short session" in w]


def _rank_by_volume(minutes) -> int:
    """Presidents' Day's place among the days by RTH volume, quietest first (1-based)."""
    volume = rth_minutes(minutes).groupby("day")["volume"].sum().sort_values(kind="stable")
    return [f"{d:%Y-%m-%d}" for d in volume.index].index(PRESIDENTS_DAY) + 1


def test_a_ranking_that_lists_a_holiday_session_names_it(engine_settings, minutes) -> None:
    limit = _rank_by_volume(minutes)
    result = _ask({"sort": "volume asc", "limit": limit}, engine_settings)
    assert PRESIDENTS_DAY in result.table["date"].tolist()
    assert _short(result) == [
        f"1 of the {limit} rows listed is a short session: {PRESIDENTS_DAY} (holiday); their "
        'range and volume are a part day\'s. "where": "not holiday() and not early_close()" '
        "leaves them out."
    ]


def test_rankings_without_one_or_by_date_say_nothing(engine_settings, minutes) -> None:
    limit = _rank_by_volume(minutes)
    left_out = _ask(
        {"where": "not holiday()", "sort": "volume asc", "limit": limit}, engine_settings
    )
    assert PRESIDENTS_DAY not in left_out.table["date"].tolist() and not _short(left_out)
    by_date = _ask({"period": "2024-02", "sort": "date desc", "limit": 20}, engine_settings)
    assert PRESIDENTS_DAY in by_date.table["date"].tolist() and not _short(by_date)
