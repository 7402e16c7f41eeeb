"""Issue 15's reproductions: each gives a result or a clear error value, not "Internal error".

Counts are checked against DuckDB over the same bars (this folder's conftest).
"""

from __future__ import annotations

import pytest

from barb import execute
from barb.settings import EngineSettings

RTH_DAYS = "SELECT count(DISTINCT tdate) FROM bars WHERE mod >= 570 AND mod < 1020"


def error_of(query: dict, settings: EngineSettings) -> dict:
    result = execute(query, "NQ", settings=settings)
    assert not result.ok
    error = result.error.to_dict()
    assert not error["message"].startswith("Internal error"), error
    return error


def test_sort_by_a_column_that_is_not_selected_is_answered(engine_settings, db) -> None:
    """The three highest-volume days' closes, labelled by their date, with the volume that
    ordered them."""
    query = {"session": "RTH", "from": "daily", "select": "close", "sort": "volume desc"}
    result = execute({**query, "limit": 3}, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    expected = db.execute(
        """
        SELECT arg_max(close, timestamp) FROM bars WHERE mod >= 570 AND mod < 1020
        GROUP BY tdate ORDER BY sum(volume) DESC LIMIT 3
        """
    ).fetchall()
    assert result.table.columns.tolist() == ["date", "close", "volume"]
    assert result.table["close"].tolist() == [c for (c,) in expected]


def test_sort_by_a_column_no_result_has_says_what_there_is(engine_settings) -> None:
    query = {"session": "RTH", "from": "daily", "group_by": "year()", "sort": "volume desc"}
    error = error_of(query, engine_settings)
    assert error["error_type"] == "UnknownColumn"
    assert error["step"] == "sort"
    assert error["message"] == (
        "Cannot sort by 'volume': no such column in the result. Available: count, year."
    )
    assert error["hint"] == (
        'Add it to select, e.g. "mean(range) as volume", or sort by one of the results.'
    )
    # The hint is itself a query that works.
    fixed = execute({**query, "select": "mean(range) as volume"}, "NQ", settings=engine_settings)
    assert fixed.ok, fixed.to_dict()


def test_sort_by_an_aggregate_names_its_result_column(engine_settings) -> None:
    query = {"from": "daily", "group_by": "year()", "select": "mean(range)"}
    error = error_of({**query, "sort": "mean(range) desc"}, engine_settings)
    assert "the column 'mean_range': sort by 'mean_range desc'" in error["message"]
    fixed = execute({**query, "sort": "mean_range desc"}, "NQ", settings=engine_settings)
    assert fixed.ok, fixed.to_dict()


def test_daily_rows_sort_by_their_hidden_trading_date(engine_settings) -> None:
    """Found by the hostile run: daily rows are shown without trading_date (it repeats the
    date), so sorting them by it used to end in an internal error."""
    result = execute({"from": "daily", "sort": "trading_date desc"}, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    assert result.table["date"].iloc[0] == "2024-03-28"
    assert "trading_date" not in result.table.columns


def test_sort_by_a_selected_column_still_works(engine_settings, db) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "select": ["close", "volume"],
        "sort": "volume desc",
        "limit": 3,
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok
    top = db.execute(
        "SELECT sum(volume) AS v FROM bars WHERE mod >= 570 AND mod < 1020 "
        "GROUP BY tdate ORDER BY v DESC LIMIT 3"
    ).fetchall()
    assert result.table["volume"].tolist() == [v for (v,) in top]


@pytest.mark.parametrize("sort", [5, 5.5, True, {"column": 5}])
def test_sort_of_the_wrong_type_is_a_shape_error(sort, engine_settings) -> None:
    error = error_of({"from": "daily", "select": "close", "sort": sort}, engine_settings)
    assert error["error_type"] == "InvalidQuery"
    assert "Field 'sort" in error["message"]


def test_a_relative_period_beyond_the_data_is_cut_to_the_data_with_a_warning(
    engine_settings, db
) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "last_99999999_years",
        "select": "count()",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    assert result.summary.value == db.execute(RTH_DAYS).fetchone()[0]
    assert str(result.metadata.period_start) == "2024-01-02"
    assert (
        "Period 'last_99999999_years' reaches back before the data begin (2024-01-02): all the "
        "data up to 2024-03-28 is used." in result.metadata.warnings
    )


def test_a_relative_period_inside_the_data_has_no_warning(engine_settings, db) -> None:
    query = {"session": "RTH", "from": "daily", "period": "last_7_days", "select": "count()"}
    result = execute(query, "NQ", settings=engine_settings)
    expected = db.execute(RTH_DAYS + " AND tdate >= DATE '2024-03-22'").fetchone()[0]
    assert result.summary.value == expected
    assert not any("reaches back" in w for w in result.metadata.warnings)


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        ("next(close, 1e308)", "In next(), n must be a whole number from 1 to 10,000,000"),
        ("prev(close, 99999999999)", "In prev(), n must be a whole number from 1 to 10,000,000"),
        ("rolling_mean(close, 1e12)", "In rolling_mean(), n must be a whole number from 1 to"),
    ],
)
def test_numeric_arguments_out_of_range_are_refused(expression, words, engine_settings) -> None:
    error = error_of(
        {"from": "daily", "map": {"x": expression}, "select": "mean(x)"}, engine_settings
    )
    assert error["error_type"] == "ArgumentError"
    assert words in error["message"]


def test_a_shift_within_range_still_computes(engine_settings, db) -> None:
    query = {"session": "RTH", "from": "daily", "map": {"x": "next(close, 2)"}, "select": "sum(x)"}
    result = execute(query, "NQ", settings=engine_settings)
    closes = db.execute(
        "SELECT arg_max(close, timestamp) FROM bars WHERE mod >= 570 AND mod < 1020 "
        "GROUP BY tdate ORDER BY tdate"
    ).fetchall()
    assert result.summary.value == pytest.approx(sum(c for (c,) in closes[2:]), rel=1e-12)
