"""Whole queries through `execute`: result shapes, the pipeline order and errors as values."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from barb import execute, render_summary
from barb.result import EDGE_ROWS
from barb.settings import EngineSettings

RTH = "mod >= 570 AND mod < 1020"


def daily_sql(db, extra: str = "") -> pd.DataFrame:
    return db.execute(
        f"""
        SELECT tdate, arg_min(open, timestamp) AS open, max(high) AS high, min(low) AS low,
               arg_max(close, timestamp) AS close, sum(volume) AS volume,
               max(high) - min(low) AS range
        FROM bars WHERE {RTH} {extra} GROUP BY tdate ORDER BY tdate
        """
    ).df()


def ok(query: dict, settings: EngineSettings):
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def test_scalar_mean_range(engine_settings, db) -> None:
    result = ok({"session": "RTH", "from": "daily", "select": "mean(range)"}, engine_settings)
    expected = daily_sql(db)["range"].mean()
    assert result.summary.type == "scalar"
    assert result.summary.value == pytest.approx(expected, rel=1e-12)
    # the proof of a number is the rows behind it
    assert len(result.source_rows) == len(daily_sql(db))
    assert result.table is None
    assert result.metadata.rows_scanned == len(daily_sql(db))


def test_scalar_count_with_where_and_map(engine_settings, db) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"gap": "open - prev(close)"},
        "where": "gap > 0",
        "select": "count()",
    }
    result = ok(query, engine_settings)
    d = daily_sql(db)
    expected = int(((d["open"] - d["close"].shift(1)) > 0).sum())
    assert result.summary.value == expected
    assert len(result.source_rows) == expected
    assert (result.source_rows["gap"] > 0).all()
    assert result.metadata.rows_matched == expected


def test_map_runs_before_where(engine_settings, db) -> None:
    """prev() sees every day, not only the filtered ones (map precedes where)."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"prev_close": "prev(close)"},
        "where": "dayname() == 'Mon'",
    }
    result = ok(query, engine_settings)
    d = daily_sql(db)
    d["prev_close"] = d["close"].shift(1)
    mondays = d[pd.to_datetime(d["tdate"]).dt.dayofweek == 0]
    assert list(result.table["prev_close"].round(6)) == list(mondays["prev_close"].round(6))


def test_dict_of_aggregates(engine_settings, db) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "select": ["count()", "mean(range)", "max(range)", "percentile(range, 90) as p90"],
    }
    result = ok(query, engine_settings)
    d = daily_sql(db)
    values = result.summary.values
    assert result.summary.type == "dict"
    assert values["count"] == len(d)
    assert values["mean_range"] == pytest.approx(d["range"].mean())
    assert values["max_range"] == pytest.approx(d["range"].max())
    assert values["p90"] == pytest.approx(d["range"].quantile(0.9))


def test_grouped_by_weekday(engine_settings, db) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"weekday": "dayname()"},
        "group_by": "weekday",
        "select": ["mean(range)", "count()"],
        "sort": "mean_range desc",
    }
    result = ok(query, engine_settings)
    expected = db.execute(
        f"""
        WITH d AS (SELECT tdate, max(high) - min(low) AS range FROM bars WHERE {RTH}
                   GROUP BY tdate)
        SELECT strftime(tdate, '%a') AS weekday, avg(range) AS mean_range, count(*) AS count
        FROM d GROUP BY 1 ORDER BY 2 DESC
        """
    ).df()
    table = result.table
    assert list(table.columns) == ["weekday", "mean_range", "count"]
    assert list(table["weekday"]) == list(expected["weekday"])
    assert table["mean_range"].tolist() == pytest.approx(expected["mean_range"].tolist())
    assert table["count"].tolist() == expected["count"].tolist()
    s = result.summary
    assert s.type == "grouped" and s.by == ["weekday"] and s.rows == 5
    assert s.max["weekday"] == expected["weekday"].iloc[0]
    assert s.min["weekday"] == expected["weekday"].iloc[-1]
    assert result.source_rows is None


def test_group_by_expression_and_several_keys(engine_settings, db) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": ["month()", "dayofweek()"],
        "select": "sum(volume)",
    }
    result = ok(query, engine_settings)
    expected = db.execute(
        f"""
        SELECT month(tdate) AS m, isodow(tdate) - 1 AS d, sum(volume) AS v
        FROM bars WHERE {RTH} GROUP BY 1, 2 ORDER BY 1, 2
        """
    ).df()
    assert list(result.table.columns) == ["month", "dayofweek", "sum_volume"]
    assert result.table["sum_volume"].tolist() == expected["v"].tolist()
    assert result.table["month"].tolist() == expected["m"].tolist()


def test_top_n_table_with_stats(engine_settings, db) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"change": "close - prev(close)"},
        "sort": "change asc",
        "limit": 5,
    }
    result = ok(query, engine_settings)
    d = daily_sql(db)
    d["change"] = d["close"] - d["close"].shift(1)
    worst = d.sort_values("change").head(5)
    assert result.table["change"].tolist() == pytest.approx(worst["change"].tolist())
    s = result.summary
    assert s.type == "table" and s.rows == 5
    assert s.stats["change"].min == pytest.approx(worst["change"].min(), abs=0.01)
    # Five rows: listed whole, each named by its date, in the table's (sorted) order.
    assert s.whole and s.shown == ["date", "change"] and s.order == "sorted by change ascending"
    assert [row[0] for row in s.top] == [str(t)[:10] for t in worst["tdate"]]


def test_projection_select(engine_settings) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "select": ["timestamp", "range", "range / close * 100 as range_pct"],
        "limit": 3,
    }
    result = ok(query, engine_settings)
    # The bar's date stays first even when the select names only other columns.
    assert list(result.table.columns) == ["date", "timestamp", "range", "range_pct"]
    assert result.table["date"].tolist() == [
        t.strftime("%Y-%m-%d") for t in result.table["timestamp"]
    ]
    row = result.table.iloc[0]
    assert row["range_pct"] == pytest.approx(
        row["range"]
        / ok({"session": "RTH", "from": "daily", "limit": 1}, engine_settings)
        .table["close"]
        .iloc[0]
        * 100
    )


def test_period_limits_the_rows(engine_settings, db) -> None:
    result = ok(
        {"session": "RTH", "from": "daily", "period": "2024-02", "select": "count()"},
        engine_settings,
    )
    expected = db.execute(
        f"SELECT count(DISTINCT tdate) FROM bars WHERE {RTH} "
        "AND tdate BETWEEN '2024-02-01' AND '2024-02-29'"
    ).fetchone()[0]
    assert result.summary.value == expected
    assert str(result.metadata.period_start) == "2024-02-01"
    assert str(result.metadata.period_end) == "2024-02-29"


def test_session_functions_reach_other_sessions(engine_settings, db) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"on_high": "session_high('OVERNIGHT')", "asia_vol": "session_volume('asian')"},
    }
    table = ok(query, engine_settings).table
    expected = db.execute(
        """
        SELECT tdate, max(high) FILTER (WHERE mod >= 1080 OR mod < 570) AS on_high,
               sum(volume) FILTER (WHERE mod >= 1080 OR mod < 180) AS asia_vol
        FROM bars GROUP BY tdate ORDER BY tdate
        """
    ).df()
    assert table["on_high"].tolist() == expected["on_high"].tolist()
    assert table["asia_vol"].tolist() == expected["asia_vol"].astype(float).tolist()


def test_defaults_are_warned(engine_settings) -> None:
    result = ok({"select": "count()"}, engine_settings)
    assert result.metadata.session == "RTH"
    assert result.metadata.timeframe == "daily"
    assert any("default session" in w for w in result.metadata.warnings)
    intraday = ok({"from": "1h", "select": "count()"}, engine_settings)
    assert intraday.metadata.session == "ETH"


def test_period_covered_is_that_of_the_bars_scanned(engine_settings) -> None:
    result = ok(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-02",
            "where": "dayname() == 'Fri'",
            "select": "count()",
        },
        engine_settings,
    )
    assert str(result.metadata.period_start) == "2024-02-01"
    assert str(result.metadata.period_end) == "2024-02-29"
    assert result.metadata.rows_scanned == 21 and result.metadata.rows_matched == 4


@pytest.mark.parametrize("timeframe", ["monthly", "quarterly"])
def test_period_covered_by_calendar_bars_runs_from_their_first_day(
    timeframe: str, engine_settings, db
) -> None:
    """A monthly bar holds its month's days: the period covered begins at the first bar's
    first trading date, not at its last (which read as "from 2024-03-28" for Q1)."""
    result = ok({"session": "RTH", "from": timeframe, "period": "2024"}, engine_settings)
    # March 2024 is not over when the bars end (Thursday 28th; CME traded on Good Friday),
    # so the monthly bars are January and February; Q1, the period's only quarter, is kept.
    end = "2024-02-29" if timeframe == "monthly" else "2024-12-31"
    first, last = db.execute(
        f"SELECT min(tdate), max(tdate) FROM bars WHERE {RTH} "
        f"AND tdate BETWEEN '2024-01-01' AND '{end}'"
    ).fetchone()
    assert (result.metadata.period_start, result.metadata.period_end) == (first, last)
    assert f"{first} — {last}" in render_summary(result)


def test_empty_result_is_not_an_error(engine_settings) -> None:
    result = ok(
        {"session": "RTH", "from": "daily", "where": "range < 0", "select": "count()"},
        engine_settings,
    )
    assert result.summary.value == 0
    assert any("No bars matched" in w for w in result.metadata.warnings)
    table = ok({"session": "RTH", "from": "daily", "where": "range < 0"}, engine_settings)
    assert table.summary.rows == 0


def test_synthetic_data_is_always_marked(engine_settings) -> None:
    result = ok({"session": "RTH", "from": "daily", "select": "count()"}, engine_settings)
    assert result.metadata.data_source == "synthetic"
    assert "SYNTHETIC" in render_summary(result)


def test_summary_stays_small_for_big_tables(engine_settings) -> None:
    result = ok({"session": "ETH", "from": "1m", "map": {"body": "close - open"}}, engine_settings)
    assert result.summary.rows > 50_000
    text = render_summary(result)
    # The first and the last few rows, a few lines about them: not the 85,000 rows.
    assert len(text) < 1200
    assert text.count("\n") < 2 * EDGE_ROWS + 9
    assert result.metadata.truncated
    assert len(result.table) == EngineSettings().max_table_rows


def test_the_rows_behind_a_number_over_many_bars_are_cut_for_display(engine_settings, db) -> None:
    result = ok({"session": "ETH", "from": "1m", "select": "max(range)"}, engine_settings)
    ((widest, bars),) = db.execute("SELECT max(high - low), count(*) FROM bars").fetchall()
    assert result.summary.value == widest and result.metadata.rows_matched == bars
    assert result.metadata.truncated
    limit = EngineSettings().max_table_rows
    rows = result.source_rows
    assert len(rows) == limit and rows is result.source_rows  # built once, when first read
    first = db.execute(f"SELECT high - low FROM bars ORDER BY timestamp LIMIT {limit}").fetchall()
    assert rows["range"].tolist() == [r[0] for r in first]
    # The model is told, so the person is: the CSV does not hold every row behind it.
    said = f"The number is over {bars:,} rows; the CSV holds the first {limit:,} of them."
    assert said in render_summary(result)


def test_to_dict_is_json(engine_settings) -> None:
    result = ok({"session": "RTH", "from": "daily", "select": "mean(range)"}, engine_settings)
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["summary"]["type"] == "scalar"
    assert payload["metadata"]["data_source"] == "synthetic"
    assert isinstance(payload["source_rows"], list)


# --- errors are values ----------------------------------------------------------------------


def err(query: dict, settings: EngineSettings) -> dict:
    result = execute(query, "NQ", settings=settings)
    assert not result.ok
    payload = result.to_dict()
    assert payload["error"] is True
    return payload


def test_unknown_column_names_what_exists(engine_settings) -> None:
    e = err({"session": "RTH", "from": "daily", "where": "rnage > 10"}, engine_settings)
    assert e["error_type"] == "UnknownColumn"
    assert e["step"] == "where"
    assert "rnage" in e["message"] and "range" in e["message"]
    assert "range" in e.get("hint", "")


def test_unknown_session(engine_settings) -> None:
    e = err({"session": "LUNCH", "from": "daily"}, engine_settings)
    assert e["error_type"] == "UnknownSession"
    assert "RTH" in e["message"] and "OVERNIGHT" in e["message"]


def test_bad_period(engine_settings) -> None:
    e = err({"session": "RTH", "period": "2024-13"}, engine_settings)
    assert e["error_type"] == "InvalidPeriod"


def test_syntax_error_has_a_position(engine_settings) -> None:
    e = err({"session": "RTH", "where": "range > > 5"}, engine_settings)
    assert e["error_type"] == "SyntaxError"
    assert e["step"] == "where"
    assert "position" in e["message"]


def test_several_problems_reported_together(engine_settings) -> None:
    e = err(
        {"session": "RTH", "map": {"x": "rnage * 2"}, "where": "foo(close)", "select": "mean(vol)"},
        engine_settings,
    )
    assert len(e["errors"]) == 3
    assert {x["step"] for x in e["errors"]} == {"map", "where", "select"}


def test_unknown_function(engine_settings) -> None:
    e = err({"session": "RTH", "select": "average(range)"}, engine_settings)
    assert e["error_type"] == "UnknownFunction"


def test_wrong_argument_count(engine_settings) -> None:
    e = err({"session": "RTH", "map": {"x": "rolling_mean(range)"}}, engine_settings)
    assert e["error_type"] == "ArgumentError"
    assert "rolling_mean(" in e["message"]


def test_bad_sort_column(engine_settings) -> None:
    e = err(
        {"session": "RTH", "group_by": "dayname()", "select": "mean(range)", "sort": "range desc"},
        engine_settings,
    )
    assert e["error_type"] == "UnknownColumn" and e["step"] == "sort"
    assert "mean_range" in e["message"]


def test_non_boolean_where(engine_settings) -> None:
    e = err({"session": "RTH", "where": "close - open"}, engine_settings)
    assert e["error_type"] == "TypeError"
    assert e["step"] == "where"


def test_division_by_zero_is_nan_not_a_crash(engine_settings) -> None:
    result = ok(
        {"session": "RTH", "from": "daily", "map": {"x": "range / 0"}, "select": "count()"},
        engine_settings,
    )
    assert result.summary.value > 0


def test_mixed_select_is_rejected(engine_settings) -> None:
    e = err({"session": "RTH", "select": ["close", "mean(range)"]}, engine_settings)
    assert e["error_type"] == "ArgumentError"


def test_unknown_instrument(engine_settings) -> None:
    result = execute({"select": "count()"}, "ZZ", settings=engine_settings)
    assert result.to_dict()["error_type"] == "UnknownInstrument"


def test_huge_limit_is_refused(engine_settings) -> None:
    e = err({"session": "RTH", "from": "1m", "limit": 10**9}, engine_settings)
    assert e["error_type"] == "QueryTooLarge"


def test_filtered_rows_keep_their_types(engine_settings) -> None:
    result = ok(
        {
            "session": "RTH",
            "from": "daily",
            "join": "fomc",
            "map": {"wd": "dayname()"},
            "where": "wd in ('Mon', 'Tue')",
        },
        engine_settings,
    )
    table = result.table
    assert isinstance(table["wd"].dtype, pd.CategoricalDtype)
    assert str(table["fomc"].dtype) == "boolean"
    assert set(table["wd"]) <= {"Mon", "Tue"}
