"""Sessions and timeframes against DuckDB SQL over the same minute bars."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from barb import execute
from barb.frames import last_weekday_of_period
from barb.period_rows import _days_left
from barb.settings import EngineSettings

WINDOWS = {
    "ETH": "TRUE",
    "RTH": "mod >= 570 AND mod < 1020",
    "OVERNIGHT": "(mod >= 1080 OR mod < 570)",
    "ASIAN": "(mod >= 1080 OR mod < 180)",
    "EUROPEAN": "mod >= 180 AND mod < 570",
    "RTH_OPEN": "mod >= 570 AND mod < 630",
    "MORNING": "mod >= 570 AND mod < 750",
    "AFTERNOON": "mod >= 750 AND mod < 1020",
    "RTH_CLOSE": "mod >= 960 AND mod < 1020",
}
OPENS = {"ETH": 1080, "RTH": 570, "OVERNIGHT": 1080, "ASIAN": 1080, "EUROPEAN": 180}


def sql_daily(db: duckdb.DuckDBPyConnection, session: str) -> pd.DataFrame:
    return db.execute(
        f"""
        SELECT CAST(tdate AS TIMESTAMP) AS timestamp,
               arg_min(open, timestamp) AS open, max(high) AS high, min(low) AS low,
               arg_max(close, timestamp) AS close, CAST(sum(volume) AS BIGINT) AS volume,
               max(high) - min(low) AS range
        FROM bars WHERE {WINDOWS[session]} GROUP BY tdate ORDER BY tdate
        """
    ).df()


def barb_table(query: dict, settings: EngineSettings) -> pd.DataFrame:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    assert result.table is not None
    return result.table


def _cmp(actual: pd.DataFrame, expected: pd.DataFrame) -> None:
    actual = actual[list(expected.columns)].reset_index(drop=True)
    expected = expected.astype({c: actual[c].dtype for c in expected.columns})
    assert_frame_equal(actual, expected, check_dtype=False)


@pytest.mark.parametrize("session", list(WINDOWS))
def test_daily_bars_per_session(session: str, engine_settings, db) -> None:
    actual = barb_table({"session": session, "from": "daily"}, engine_settings)
    _cmp(actual, sql_daily(db, session))


def test_overnight_belongs_to_the_date_it_ends(engine_settings, db) -> None:
    """Monday's overnight session starts Sunday 18:00 and is labelled Monday."""
    table = barb_table(
        {"session": "OVERNIGHT", "from": "daily", "period": "2024-01-08"}, engine_settings
    )
    assert len(table) == 1
    first_minute = db.execute(
        "SELECT arg_min(open, timestamp) FROM bars WHERE timestamp = TIMESTAMP '2024-01-07 18:00'"
    ).fetchone()[0]
    assert table["open"].iloc[0] == first_minute


def test_holiday_has_no_bar(engine_settings) -> None:
    table = barb_table({"session": "RTH", "from": "daily", "period": "2024-01"}, engine_settings)
    assert pd.Timestamp("2024-01-15") not in set(table["timestamp"])
    assert len(table) == 21


@pytest.mark.parametrize(
    ("session", "timeframe", "step"),
    [
        ("RTH", "5m", 5),
        ("RTH", "15m", 15),
        ("RTH", "30m", 30),
        ("RTH", "1h", 60),
        ("RTH", "2h", 120),
        ("RTH", "4h", 240),
        ("OVERNIGHT", "1h", 60),
        ("ETH", "4h", 240),
        ("EUROPEAN", "30m", 30),
    ],
)
def test_intraday_buckets_align_to_session_open(session, timeframe, step, engine_settings, db):
    actual = barb_table(
        {"session": session, "from": timeframe, "period": "2024-02-05:2024-02-16"}, engine_settings
    )
    start = OPENS[session]
    expected = db.execute(
        f"""
        WITH b AS (
            SELECT *, timestamp - to_minutes(CAST(((mod - {start} + 1440) % 1440) % {step}
                                                  AS BIGINT)) AS bucket
            FROM bars
            WHERE {WINDOWS[session]} AND tdate BETWEEN DATE '2024-02-05' AND DATE '2024-02-16'
        )
        SELECT bucket AS timestamp, arg_min(open, timestamp) AS open, max(high) AS high,
               min(low) AS low, arg_max(close, timestamp) AS close,
               CAST(sum(volume) AS BIGINT) AS volume, max(high) - min(low) AS range
        FROM b GROUP BY tdate, bucket ORDER BY bucket
        """
    ).df()
    _cmp(actual, expected)
    assert actual["timestamp"].iloc[0].minute == start % 60


@pytest.mark.parametrize(
    ("timeframe", "unit"),
    [("weekly", "week"), ("monthly", "month"), ("quarterly", "quarter"), ("yearly", "year")],
)
def test_calendar_timeframes(timeframe: str, unit: str, engine_settings, db) -> None:
    actual = barb_table({"session": "RTH", "from": timeframe}, engine_settings)
    expected = db.execute(
        f"""
        SELECT CAST(min(tdate) AS TIMESTAMP) AS timestamp,
               arg_min(open, timestamp) AS open, max(high) AS high, min(low) AS low,
               arg_max(close, timestamp) AS close, CAST(sum(volume) AS BIGINT) AS volume,
               max(high) - min(low) AS range
        FROM bars WHERE {WINDOWS["RTH"]} GROUP BY date_trunc('{unit}', tdate) ORDER BY 1
        """
    ).df()
    if unit in ("week", "month"):
        # The bars end on Thursday 2024-03-28, and CME Globex Equity traded on Good Friday
        # 2024-03-29: the last week and month are not over, so they are left out (a quarter
        # or year not over yet is kept: it is the only one).
        expected = expected.iloc[:-1]
    _cmp(actual, expected)


def test_weekly_with_period_keeps_whole_weeks_only(engine_settings, db) -> None:
    """Weeks cut by the period's edges are left out (and the result says so); a week is
    labelled by its first trading date (Tuesday after Martin Luther King Day)."""
    result = execute(
        {"session": "RTH", "from": "weekly", "period": "2024-01-10:2024-01-31"},
        "NQ",
        settings=engine_settings,
    )
    assert result.ok, result.to_dict()
    expected = db.execute(
        f"""
        SELECT CAST(min(tdate) AS TIMESTAMP) AS timestamp,
               arg_min(open, timestamp) AS open, max(high) AS high, min(low) AS low,
               arg_max(close, timestamp) AS close, CAST(sum(volume) AS BIGINT) AS volume,
               max(high) - min(low) AS range
        FROM bars WHERE {WINDOWS["RTH"]}
        GROUP BY date_trunc('week', tdate)
        HAVING min(tdate) >= DATE '2024-01-10' AND max(tdate) <= DATE '2024-01-31'
        ORDER BY 1
        """
    ).df()
    _cmp(result.table, expected)
    assert result.table["timestamp"].dt.strftime("%Y-%m-%d").tolist() == [
        "2024-01-16",
        "2024-01-22",
    ]
    assert any("2 weekly bars cut by the period's edges" in w for w in result.metadata.warnings)


def test_the_weeks_the_period_cuts_are_named_with_their_days_and_the_forms_that_count_them(
    engine_settings, db
) -> None:
    """ "Weekly bars of ytd" in January 2026 left out the week 2025-12-29 and with it the year's
    first day (+1.06%, the year so far +0.79%), saying only "1 weekly bar ... left out". Each
    cut week is named with its days in the period, and both forms it points to count them:
    daily bars grouped by week(), and the period widened to the cut weeks' edges."""
    period = "2024-01-10:2024-01-31"
    result = execute(
        {"session": "RTH", "from": "weekly", "period": period}, "NQ", settings=engine_settings
    )
    assert result.ok, result.to_dict()
    # DuckDB: the weeks with days on both sides of an edge, their days in it, and their ends.
    cut = db.execute(
        f"""
        SELECT min(tdate) AS first, max(tdate) AS last,
               min(tdate) FILTER (WHERE tdate BETWEEN DATE '2024-01-10' AND DATE '2024-01-31')
                   AS lo,
               max(tdate) FILTER (WHERE tdate BETWEEN DATE '2024-01-10' AND DATE '2024-01-31')
                   AS hi
        FROM bars WHERE {WINDOWS["RTH"]} GROUP BY date_trunc('week', tdate)
        HAVING min(tdate) <= DATE '2024-01-31' AND max(tdate) >= DATE '2024-01-10'
           AND (min(tdate) < DATE '2024-01-10' OR max(tdate) > DATE '2024-01-31')
        ORDER BY 1
        """
    ).fetchall()
    assert len(cut) == 2
    named = " and ".join(
        f"the week {first} ({lo} — {hi} in the period)" for first, _, lo, hi in cut
    )
    whole = f"{cut[0][0]}:{cut[-1][1]}"
    (warning,) = [w for w in result.metadata.warnings if "cut by the period's edges" in w]
    assert warning.startswith("2 weekly bars cut by the period's edges left out"), warning
    assert named in warning, warning
    assert '"from": "daily", "group_by": "week()"' in warning
    assert f'"period": "{whole}"' in warning

    # The two forms: every day of the period in its week, and the cut weeks whole.
    by_week = execute(
        {
            "session": "RTH",
            "from": "daily",
            "period": period,
            "group_by": "week()",
            "select": "count() as days",
        },
        "NQ",
        settings=engine_settings,
    )
    days = db.execute(
        f"""
        SELECT count(DISTINCT tdate) FROM bars
        WHERE {WINDOWS["RTH"]} AND tdate BETWEEN DATE '2024-01-10' AND DATE '2024-01-31'
        """
    ).fetchone()[0]
    assert by_week.ok and int(by_week.table["days"].sum()) == days
    widened = execute(
        {"session": "RTH", "from": "weekly", "period": whole, "select": "count()"},
        "NQ",
        settings=engine_settings,
    )
    assert widened.ok and widened.summary.value == len(result.table) + 2
    assert not any("cut by the period" in w for w in widened.metadata.warnings)


def test_a_period_inside_one_week_names_it(engine_settings) -> None:
    """Weekly bars of one Friday: the week is cut at both edges, and named with that day."""
    result = execute(
        {"session": "RTH", "from": "weekly", "period": "2024-02-09"}, "NQ", settings=engine_settings
    )
    assert result.ok, result.to_dict()
    assert any(
        "the week 2024-02-05 (2024-02-09 in the period)" in w
        and '"period": "2024-02-05:2024-02-09"' in w
        for w in result.metadata.warnings
    ), result.metadata.warnings


def test_the_last_n_weeks_are_n_whole_weeks_and_the_last_n_bars_say_so(engine_settings, db) -> None:
    """ "The last 4 weeks" as last_4_weeks on weekly bars is the 4 whole weeks before the
    data's unfinished one (it ends on a Thursday); last_4_bars is the last 4 bars, that
    week included, and points to last_4_weeks for whole ones."""

    def weeks(period: str):
        result = execute(
            {"session": "RTH", "from": "weekly", "period": period, "select": "count()"},
            "NQ",
            settings=engine_settings,
        )
        assert result.ok, result.to_dict()
        return result

    whole = db.execute(
        f"""
        SELECT count(*) FROM (
            SELECT date_trunc('week', tdate) AS w, max(tdate) AS last FROM bars
            WHERE {WINDOWS["RTH"]} GROUP BY 1)
        WHERE last < (SELECT date_trunc('week', max(tdate)) FROM bars)
        """
    ).fetchone()[0]
    assert whole >= 4 and weeks("last_4_weeks").summary.value == 4
    bars = weeks("last_4_bars")
    assert bars.summary.value == 4
    assert any(
        w.endswith('The last 4 whole weeks: "period": "last_4_weeks".')
        for w in bars.metadata.warnings
    )


def test_one_minute_bars_are_the_raw_bars(engine_settings, minutes) -> None:
    actual = barb_table({"session": "RTH", "from": "1m", "period": "2024-03-05"}, engine_settings)
    day = minutes[
        (minutes["timestamp"] >= "2024-03-05 09:30") & (minutes["timestamp"] < "2024-03-05 17:00")
    ].reset_index(drop=True)
    assert len(actual) == 450
    np.testing.assert_array_equal(actual["close"].to_numpy(), day["close"].to_numpy())
    np.testing.assert_array_equal(actual["range"].to_numpy(), (day["high"] - day["low"]).to_numpy())


@pytest.mark.parametrize(
    ("day", "timeframe", "last"),
    [
        ("2026-01-07", "weekly", "2026-01-09"),  # Wednesday -> that Friday
        ("2026-01-09", "weekly", "2026-01-09"),
        ("2024-03-28", "monthly", "2024-03-29"),
        ("2024-08-15", "monthly", "2024-08-30"),  # the 31st is a Saturday
        ("2024-05-02", "quarterly", "2024-06-28"),  # the 30th is a Sunday
        ("2023-02-01", "yearly", "2023-12-29"),  # the 31st is a Sunday
        ("2024-12-31", "yearly", "2024-12-31"),
    ],
)
def test_last_weekday_of_a_calendar_period(day: str, timeframe: str, last: str) -> None:
    got = last_weekday_of_period(np.datetime64(day, "ns"), timeframe)
    assert got == np.datetime64(last, "ns")


@pytest.mark.parametrize(
    ("last", "period_end", "calendar", "open_days_left"),
    [
        ("2024-03-28", "2024-03-29", "NYSE", False),  # Good Friday: March is over
        ("2024-03-28", "2024-03-29", "CME Globex Equity", True),  # CME traded that day
        ("2024-12-31", "2024-12-31", "NYSE", False),
        ("2031-06-26", "2031-06-27", "NYSE", True),  # past the published calendars: weekdays
        ("2024-03-28", "2024-03-29", "no such calendar", True),
    ],
)
def test_a_bar_is_open_while_its_exchange_still_trades_in_its_span(
    last: str, period_end: str, calendar: str, open_days_left: bool
) -> None:
    got = _days_left(np.datetime64(last, "ns"), np.datetime64(period_end, "ns"), calendar)
    assert got is open_days_left
