"""The query names its instrument, joins another one, counts bars back, and aggregates twice;
each checked against an independent computation, and each bad input gets an error value."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pandas_market_calendars as mcal
import pytest
import talib
from duckdb_answers import (
    BIGGEST_5M_MOVES_2024,
    RTH,
    biggest_5m_moves_2024,
    rth_closes,
)

from barb import execute, render_summary
from barb.instruments import load_instrument
from barb.period_rows import reach_start
from barb.script.functions import register
from barb.script.library import library
from barb.script.parser import parse_expression
from barb.script.reach import map_reach, reach
from barb.script.warmup import ROW, Reach

# The independent event calendars beside the repository (as in tests/events).
REFERENCE_DIR = Path(
    os.environ.get(
        "BARB_REFERENCE_DIR", Path(__file__).resolve().parents[3] / "shared" / "reference"
    )
)


def _rth_daily(con) -> pd.DataFrame:
    """RTH daily bars over all history from the minute file, one row per trading date."""
    return con.execute(
        f"""
        SELECT trading_date AS d, max(high) AS high, min(low) AS low,
               arg_max(close, timestamp) AS close
        FROM nq WHERE {RTH} GROUP BY 1 ORDER BY 1
        """
    ).df()


def _ok(query: dict, settings, instrument: str = "NQ"):
    result = execute(query, instrument, settings=settings)
    assert result.ok, result.to_dict()
    return result


def _error(query: dict, settings, instrument: str = "NQ") -> dict:
    result = execute(query, instrument, settings=settings)
    assert not result.ok, result.to_dict()
    payload = result.to_dict()
    assert payload["error_type"] != "ExecutionError", payload
    assert payload["message"] and payload.get("step"), payload
    return payload


# --- instrument ----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_query_names_its_instrument(sample_settings, con) -> None:
    """The chat's instrument (NQ here) only fills in a query that names none."""
    query = {"instrument": "ES", "session": "RTH", "from": "daily", "period": "2024"}
    result = _ok({**query, "select": "last(close)"}, sample_settings, instrument="NQ")
    assert result.metadata.instrument == "ES"
    assert result.query["instrument"] == "ES"
    assert result.summary.value == rth_closes(con, "es").loc["2024"].iloc[-1]
    filled = _ok({"session": "RTH", "select": "count()"}, sample_settings, instrument="NQ")
    assert filled.query["instrument"] == "NQ"


@pytest.mark.slow
def test_correlation_of_nq_and_es_daily_returns_in_2024(sample_settings, con) -> None:
    result = _ok(
        {
            "instrument": "NQ",
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "join": {"instrument": "ES"},
            "map": {
                "nq_ret": "close / prev(close) - 1",
                "es_ret": "es_close / prev(es_close) - 1",
            },
            "select": "correlation(nq_ret, es_ret)",
        },
        sample_settings,
    )
    both = pd.concat([rth_closes(con, "nq"), rth_closes(con, "es")], axis=1, join="inner")
    returns = both.pct_change().loc["2024"]
    expected = np.corrcoef(returns.iloc[:, 0], returns.iloc[:, 1])[0, 1]
    assert result.summary.value == pytest.approx(expected, rel=1e-9)


@pytest.mark.slow
def test_beta_and_rolling_correlation_of_nq_to_es(sample_settings, con) -> None:
    """beta = cov(nq, es) / var(es); the 60-day rolling correlation read on the last day and
    on the first day of 2024 (its window reaches into 2023: the period never cuts it)."""
    result = _ok(
        {
            "instrument": "NQ",
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "join": {"instrument": "ES"},
            "map": {
                "nq_ret": "close / prev(close) - 1",
                "es_ret": "es_close / prev(es_close) - 1",
                "corr60": "rolling_correlation(nq_ret, es_ret, 60)",
            },
            "select": ["beta(nq_ret, es_ret) as beta", "first(corr60)", "last(corr60)"],
        },
        sample_settings,
    )
    both = pd.concat([rth_closes(con, "nq"), rth_closes(con, "es")], axis=1, join="inner")
    returns = both.pct_change()
    year = returns.loc["2024"]
    nq, es = year.iloc[:, 0].to_numpy(), year.iloc[:, 1].to_numpy()
    beta = np.cov(nq, es, ddof=1)[0, 1] / np.var(es, ddof=1)
    values = result.summary.values
    assert values["beta"] == pytest.approx(beta, rel=1e-4)

    def corr_ending(day: pd.Timestamp) -> float:
        window = returns.loc[:day].tail(60)
        return float(np.corrcoef(window.iloc[:, 0], window.iloc[:, 1])[0, 1])

    assert values["first_corr60"] == pytest.approx(corr_ending(year.index[0]), abs=1e-3)
    assert values["last_corr60"] == pytest.approx(corr_ending(year.index[-1]), abs=1e-3)


@pytest.mark.slow
def test_instrument_join_on_intraday_bars_matches_on_time(sample_settings, con) -> None:
    result = _ok(
        {
            "session": "RTH",
            "from": "1h",
            "period": "2024-03-05",
            "join": {"instrument": "ES"},
            "select": ["timestamp", "close", "es_close"],
        },
        sample_settings,
    )
    hours = con.execute(
        f"SELECT (minute - 570) // 60 AS h, arg_max(close, timestamp) AS c FROM es WHERE {RTH} "
        "AND trading_date = DATE '2024-03-05' GROUP BY 1 ORDER BY 1"
    ).df()
    assert result.table["es_close"].tolist() == hours["c"].tolist()


@pytest.mark.slow
def test_a_join_says_when_the_same_session_has_other_hours(sample_settings) -> None:
    """CL's RTH (NYMEX pit hours) is not NQ's: the joined bars are not the same hours."""
    query = {"session": "RTH", "from": "daily", "period": "2024-03", "select": "count()"}
    cl = _ok({**query, "join": {"instrument": "CL"}}, sample_settings)
    assert (
        "RTH is 09:30-17:00 for NQ but 09:00-14:30 for CL: the joined bars cover different "
        "hours (write the window '09:30-17:00' for the same clock hours on both)."
        in cl.metadata.warnings
    )
    es = _ok({**query, "join": {"instrument": "ES"}}, sample_settings)
    assert not [w for w in es.metadata.warnings if "different hours" in w]
    window = _ok({**query, "session": "10:00-11:00", "join": {"instrument": "CL"}}, sample_settings)
    assert not [w for w in window.metadata.warnings if "different hours" in w]


def _minute_bars(symbol: str, settings, year: str) -> pd.DataFrame:
    frame = pd.read_parquet(settings.data_dir / f"{symbol}.parquet")
    return frame[frame["trading_date"].dt.year == int(year)]


def _window_bars(minutes: pd.DataFrame, start: int, end: int, freq: int | None) -> pd.DataFrame:
    """Bars of the window [start, end) minutes after midnight: per trading date (freq None)
    or per ``freq`` minutes from the window's start; open is the first minute's open."""
    rows = minutes[(minutes["minute"] >= start) & (minutes["minute"] < end)]
    keys = ["trading_date"]
    if freq is not None:
        rows = rows.assign(slot=(rows["minute"] - start) // freq)
        keys.append("slot")
    return rows.groupby(keys).agg(open=("open", "first"), close=("close", "last"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("asking", "joined", "window", "start", "end"),
    [("NQ", "CL", "09:30-17:00", 570, 1020), ("CL", "NQ", "09:00-14:30", 540, 870)],
)
@pytest.mark.parametrize("tf", ["1h", "daily"])
def test_a_window_session_gives_the_joined_instrument_the_same_clock_hours(
    sample_settings, asking, joined, window, start, end, tf
) -> None:
    """'09:30-17:00' is NQ's RTH and '09:00-14:30' CL's: written as windows they are clock
    hours for both, not the other instrument's own RTH (CL 09:00-14:30, NQ 09:30-17:00)."""
    prefix = joined.lower()
    result = _ok(
        {
            "instrument": asking,
            "session": window,
            "from": tf,
            "period": "2024-03",
            "join": {"instrument": joined},
            "select": ["timestamp", "open", f"{prefix}_open", f"{prefix}_close"],
        },
        sample_settings,
    )
    assert not [w for w in result.metadata.warnings if "different hours" in w]
    freq = 60 if tf == "1h" else None
    theirs = _window_bars(_minute_bars(joined, sample_settings, "2024"), start, end, freq)
    ours = _window_bars(_minute_bars(asking, sample_settings, "2024"), start, end, freq)
    both = ours.join(theirs, how="inner", rsuffix="_j")
    both = both[both.index.get_level_values("trading_date").strftime("%Y-%m") == "2024-03"]
    assert len(result.table) == len(both) > 0
    assert result.table["open"].tolist() == both["open"].tolist()
    assert result.table[f"{prefix}_open"].tolist() == both["open_j"].tolist()
    assert result.table[f"{prefix}_close"].tolist() == both["close_j"].tolist()


@pytest.mark.slow
def test_a_session_name_the_joined_instrument_lacks_hints_at_the_window(sample_settings) -> None:
    """NQ's CASH does not exist on CL: the error gives CASH's hours to write as a window, and
    the joined columns raise no errors of their own."""
    payload = _error(
        {
            "session": "CASH",
            "from": "daily",
            "period": "2024-03",
            "join": {"instrument": "CL"},
            "map": {"b": "cl_close / cl_open - 1"},
            "select": "mean(b)",
        },
        sample_settings,
    )
    assert payload["error_type"] == "UnknownSession"
    assert "'09:30-16:00'" in payload["hint"]
    assert len(payload.get("errors", [payload])) == 1


# --- last_N_bars ----------------------------------------------------------------------------


def test_last_n_bars_are_the_last_trading_days(engine_settings, db) -> None:
    result = _ok(
        {"session": "RTH", "from": "daily", "period": "last_10_bars", "select": "mean(range)"},
        engine_settings,
    )
    expected = db.execute(
        """
        SELECT avg(r) FROM (
            SELECT tdate, max(high) - min(low) AS r FROM bars
            WHERE mod >= 570 AND mod < 1020 GROUP BY 1 ORDER BY 1 DESC LIMIT 10)
        """
    ).fetchone()[0]
    assert result.summary.value == pytest.approx(expected)
    assert result.metadata.rows_scanned == 10


def test_more_bars_than_exist_is_said(engine_settings) -> None:
    result = _ok(
        {"session": "RTH", "from": "weekly", "period": "last_500_bars", "select": "count()"},
        engine_settings,
    )
    assert any("fewer than the 500 asked for" in w for w in result.metadata.warnings)


# --- second stage ---------------------------------------------------------------------------


def test_then_aggregates_the_first_stage_table(engine_settings, db) -> None:
    """Per day the hour that made the RTH high; then how many days per hour."""
    result = _ok(
        {
            "session": "RTH",
            "from": "1h",
            "group_by": "date()",
            "select": "arg_max(hour(), high) as high_hour",
            "then": {"group_by": "high_hour", "select": "count() as days"},
        },
        engine_settings,
    )
    bars = db.execute(
        """
        SELECT tdate, (mod - 570) // 60 AS bucket, min(timestamp) AS ts, max(high) AS h
        FROM bars WHERE mod >= 570 AND mod < 1020 GROUP BY 1, 2
        """
    ).df()
    bars = bars.sort_values("ts")
    top = bars.loc[bars.groupby("tdate")["h"].idxmax()]  # first (earliest) on ties
    expected = top["ts"].dt.hour.value_counts().sort_index()
    got = result.table.set_index("high_hour")["days"]
    assert got.to_dict() == expected.to_dict()
    assert int(got.sum()) == bars["tdate"].nunique()  # each day counted once
    assert result.source_rows is not None and len(result.source_rows) == got.sum()


def test_then_mean_of_each_months_maximum(engine_settings, db) -> None:
    result = _ok(
        {
            "session": "RTH",
            "from": "daily",
            "group_by": "month()",
            "select": "max(close) as mmax",
            "then": {"select": "mean(mmax)"},
        },
        engine_settings,
    )
    expected = db.execute(
        """
        SELECT avg(m) FROM (SELECT month(tdate) AS mo, max(c) AS m FROM (
            SELECT tdate, arg_max(close, timestamp) AS c FROM bars
            WHERE mod >= 570 AND mod < 1020 GROUP BY 1) GROUP BY 1)
        """
    ).fetchone()[0]
    assert result.summary.value == pytest.approx(expected)


@pytest.mark.slow
def test_a_sorted_second_stage_says_which_group_won(sample_settings, con) -> None:
    """ "Which year had the highest median RTH range?" The model reads the year, not just
    the number (the first stage's group key was left out of what it read)."""
    result = _ok(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2008:2025",
            "group_by": "year()",
            "select": ["median(range) as med_range", "count() as n"],
            "then": {"sort": "med_range desc", "limit": 1},
        },
        sample_settings,
    )
    years = con.execute(
        f"""
        SELECT year(trading_date) AS y, median(r) AS m, count(*) AS n FROM (
            SELECT trading_date, max(high) - min(low) AS r FROM nq WHERE {RTH}
            AND year(trading_date) <= 2025 GROUP BY 1) GROUP BY 1 ORDER BY m DESC LIMIT 1
        """
    ).fetchone()
    text = render_summary(result)
    assert text.splitlines()[:3] == [
        "Result: 1 group by year, sorted by med_range descending:",
        "year,med_range,n",
        f"{years[0]},{years[1]:g},{years[2]}",
    ]


@pytest.mark.slow
def test_the_data_s_unfinished_year_is_said_of_its_group(sample_settings) -> None:
    query = {"session": "RTH", "from": "daily", "group_by": "year()", "select": "count()"}
    result = _ok(query, sample_settings)
    last = result.table["year"].iloc[-1]
    assert result.table["count"].iloc[-1] < 10  # the sample ends early in its last year
    assert any(f"The year {last} is not over" in w for w in result.metadata.warnings)
    whole = _ok({**query, "period": f"2008:{last - 1}"}, sample_settings)
    assert not [w for w in whole.metadata.warnings if "not over" in w]
    by_month = _ok({**query, "group_by": ["year()", "month()"]}, sample_settings)
    assert any(f"The month {last}-01 is not over" in w for w in by_month.metadata.warnings)


@pytest.mark.slow
def test_the_data_s_unfinished_week_is_said_of_its_group_under_any_name(
    sample_settings, con
) -> None:
    query = {"session": "RTH", "from": "daily", "period": "2025-12:", "select": "count()"}
    # The sample's last trading date, read from the minute file, not from the result.
    last = pd.Timestamp(_rth_daily(con)["d"].iloc[-1])
    for by in ({"group_by": "week()"}, {"map": {"wk": "week()"}, "group_by": "wk"}):
        result = _ok({**query, **by}, sample_settings)
        monday = (last - pd.Timedelta(days=last.weekday())).date()
        assert last.weekday() < 4  # the sample ends before the week's Friday
        assert any(f"The week {monday} is not over" in w for w in result.metadata.warnings)
    whole = _ok({**query, "period": "2025-12", "group_by": "week()"}, sample_settings)
    assert not [w for w in whole.metadata.warnings if "not over" in w]
    by_year = _ok({**query, "map": {"y": "year()"}, "group_by": "y"}, sample_settings)
    assert any(f"The year {last.year} is not over" in w for w in by_year.metadata.warnings)


@pytest.mark.slow
def test_a_year_that_holds_every_day_the_question_keeps_is_not_called_open(
    sample_settings, con
) -> None:
    """ "The first 4 trading days of each year": the sample ends on 2026-01-07, 2026's fourth
    RTH day, so its group is whole. January and the first five days are not over yet."""
    days = _rth_daily(con)
    days["d"] = pd.to_datetime(days["d"])
    days["year"] = days["d"].dt.year
    days["n"] = days.groupby("year").cumcount() + 1
    days["ret"] = days["close"] / days["close"].shift() - 1
    first4 = days[days["n"] <= 4]
    last = days["d"].iloc[-1]
    assert last == pd.Timestamp("2026-01-07") and (days["year"] == 2026).sum() == 4
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"year": "year()", "n": "trading_day('year')", "ret": "close / prev(close) - 1"},
        "where": "n <= 4",
        "group_by": "year",
        "select": ["sum(ret) as first4", "count() as days"],
    }
    result = _ok(query, sample_settings)
    expected = first4.groupby("year")["ret"].agg(["sum", "size"])
    assert result.table["year"].tolist() == expected.index.tolist()
    assert result.table["first4"].tolist() == pytest.approx(expected["sum"].tolist())
    assert result.table["days"].tolist() == expected["size"].tolist()
    assert not [w for w in result.metadata.warnings if "not over" in w], result.metadata.warnings
    # By the calendar: the first 7 days of January, 2026's all in the data.
    week = _ok({**query, "where": "dayofyear() <= 7"}, sample_settings)
    assert not [w for w in week.metadata.warnings if "not over" in w], week.metadata.warnings
    # January 2026, and 2026's fifth trading day, are still to come.
    for where in ("month() == 1", "n <= 5"):
        still_open = _ok({**query, "where": where}, sample_settings)
        assert any("The year 2026 is not over" in w for w in still_open.metadata.warnings), where


@pytest.mark.slow
@pytest.mark.parametrize("limit", [1, 3, None])
def test_a_ranking_the_unfinished_year_tops_names_the_first_whole_year(
    limit: int | None, sample_settings, con
) -> None:
    """ "In which year was the NQ-ES correlation lowest?" sorted ascending and cut to 1 read
    the data's last year, 4 days of it, with no word of its size: it is said, with the whole
    years' median, and the lowest whole year found among all the groups before the limit.
    Per-year correlations by pandas over each day's last RTH close (DuckDB)."""
    both = pd.concat([rth_closes(con, "nq"), rth_closes(con, "es")], axis=1, join="inner")
    both.index = pd.to_datetime(both.index)
    returns = both.pct_change()  # the year's first day from the last close of the one before
    years = returns.groupby(returns.index.year)
    corr = years.apply(lambda r: r.iloc[:, 0].corr(r.iloc[:, 1])).sort_values()
    days = years.size()
    last = int(both.index[-1].year)
    assert corr.index[0] == last and days[last] < 10  # the open year ranks first
    whole = corr.drop(last)
    query = {
        "session": "RTH",
        "from": "daily",
        "join": {"instrument": "ES"},
        "map": {"nq_ret": "close/prev(close)-1", "es_ret": "es_close/prev(es_close)-1"},
        "group_by": "year()",
        "select": "correlation(nq_ret, es_ret) as corr",
        "sort": "corr asc",
    }
    if limit is not None:
        query["limit"] = limit
    result = _ok(query, sample_settings)
    shown = corr.iloc[: limit or len(corr)]
    assert result.table["year"].tolist() == shown.index.tolist()
    assert result.table["corr"].tolist() == pytest.approx(shown.tolist())
    [said] = [w for w in result.metadata.warnings if f"The year {last} is not over" in w]
    # Every day kept: against the trading days of the exchange's whole year (the median of
    # the groups before it took in a group the period cut).
    calendar = mcal.get_calendar(load_instrument("NQ").calendar)
    year_days = len(calendar.valid_days(f"{last}-01-01", f"{last}-12-31"))
    assert (
        f" It holds {days[last]} days, against {year_days} in the whole year (the exchange's "
        "calendar). "
    ) in said
    found = re.search(
        r" Sorted by corr ascending, it ranks first: among the whole years the lowest corr is "
        r"([\d.]+), in (\d{4})\.$",
        said,
    )
    assert found is not None, said
    assert int(found[2]) == whole.index[0]
    assert float(found[1]) == pytest.approx(whole.iloc[0], abs=1e-4)
    # Sorted the other way, or by the year itself (time order), 2026 does not lead a ranking.
    for sort in ("corr desc", "year desc"):
        other = _ok({**query, "sort": sort, "limit": len(corr)}, sample_settings)
        [said] = [w for w in other.metadata.warnings if f"The year {last} is not over" in w]
        assert f"It holds {days[last]} days" in said and "ranks first" not in said


@pytest.mark.slow
def test_days_without_the_event_a_where_keeps_are_not_said_to_be_missing(sample_settings) -> None:
    """ "How did NQ react to the FOMC last month": the hour after the statement by date()
    lists the FOMC day; the month's other days had no row on purpose, not for want of data
    (p33e Q13 read "No row passed where in 21 date() groups"). A where on the bars alone,
    by date(), still names the days it emptied."""
    if not (REFERENCE_DIR / "events" / "fomc.csv").is_file():
        pytest.skip(f"no reference lists in {REFERENCE_DIR}")
    reference = pd.read_csv(REFERENCE_DIR / "events" / "fomc.csv", parse_dates=["date"])
    december = reference[reference["date"].dt.strftime("%Y-%m") == "2025-12"]["date"]
    query = {
        "session": "ETH", "from": "1m", "period": "2025-12", "join": "fomc",
        "where": "fomc and fomc_minutes >= 0 and fomc_minutes < 60",
        "group_by": "date()", "select": "max(high) - min(low) as hour_range",
    }  # fmt: skip
    result = _ok(query, sample_settings)
    assert list(pd.to_datetime(result.table["date"])) == list(december)
    assert not [w for w in result.metadata.warnings if "No row passed where" in w]

    bars_only = _ok({**query, "where": "time() == '14:00' and close > open"}, sample_settings)
    assert [w for w in bars_only.metadata.warnings if "No row passed where" in w]


@pytest.mark.slow
def test_years_where_emptied_are_named_and_count_cond_keeps_them(sample_settings, con) -> None:
    """ "Days with ADX(14) above 40 per year, 2008-2025", then "and the mean per year?": the
    years with no such day are not groups, so the mean is over the others; the result says
    which, and count(cond) without where gives every year."""
    daily = _rth_daily(con)
    adx = pd.Series(
        talib.ADX(daily["high"], daily["low"], daily["close"], timeperiod=14).to_numpy(),
        index=pd.DatetimeIndex(daily["d"]),
    )
    per_year = (adx.loc[:"2025"] > 40).groupby(adx.loc[:"2025"].index.year).sum()
    empty = per_year[per_year == 0].index.tolist()
    assert empty  # the case that matters: years with no such day

    base = {"session": "RTH", "from": "daily", "period": "2008:2025", "map": {"a": "adx(14)"}}
    where = _ok(
        {**base, "where": "a > 40", "group_by": "year()", "select": "count() as days",
         "then": {"select": "mean(days)"}},
        sample_settings,
    )  # fmt: skip
    assert where.summary.value == pytest.approx(per_year[per_year > 0].mean())
    (said,) = [w for w in where.metadata.warnings if "No row passed where" in w]
    assert f"in {len(empty)} year() groups" in said
    assert f"({', '.join(str(y) for y in empty)})" in said

    counted = _ok(
        {**base, "group_by": "year()", "select": "count(a > 40) as days",
         "then": {"select": "mean(days)"}},
        sample_settings,
    )  # fmt: skip
    assert counted.summary.value == pytest.approx(per_year.mean())
    assert not [w for w in counted.metadata.warnings if "No row passed" in w]
    # A where that names the key drops those groups on purpose: nothing to say.
    later = _ok(
        {**base, "where": "a > 40 and year() >= 2020", "group_by": "year()", "select": "count()"},
        sample_settings,
    )
    assert not [w for w in later.metadata.warnings if "No row passed" in w]
    # "The year with the most such days": the groups the limit cut are not emptied ones.
    top = _ok(
        {**base, "where": "a > 40", "group_by": "year()", "select": "count() as days",
         "sort": "days desc", "limit": 1},
        sample_settings,
    )  # fmt: skip
    assert top.table["year"].tolist() == [per_year.idxmax()]
    (said,) = [w for w in top.metadata.warnings if "No row passed where" in w]
    assert f"in {len(empty)} year() groups" in said
    assert f"({', '.join(str(y) for y in empty)})" in said


@pytest.mark.slow
def test_rows_whose_key_is_missing_are_said_to_be_in_no_group(sample_settings, con) -> None:
    """Grouped by whether the next day closed up: the data's last day has no next day."""
    result = _ok(
        {
            "session": "RTH",
            "from": "daily",
            "map": {"next_up": "next(close) > close"},
            "group_by": "next_up",
            "select": "count()",
        },
        sample_settings,
    )
    days = _rth_daily(con)
    assert result.table["count"].sum() == len(days) - 1
    assert (
        f"The day {days['d'].iloc[-1]:%Y-%m-%d} has no value for next_up (n/a) and is left "
        "out: it is in no group."
    ) in result.metadata.warnings


@pytest.mark.slow
def test_which_weekday_makes_the_weeks_high_counts_each_week_once(sample_settings, con) -> None:
    result = _ok(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "group_by": "week()",
            "select": "arg_max(dayname(), high) as day",
            "then": {"group_by": "day", "select": "count() as weeks"},
        },
        sample_settings,
    )
    days = con.execute(
        f"""
        SELECT trading_date AS d, max(high) AS h FROM nq WHERE {RTH}
        AND year(trading_date) = 2024 GROUP BY 1 ORDER BY 1
        """
    ).df()
    days["week"] = days["d"] - pd.to_timedelta(days["d"].dt.weekday, unit="D")
    # The earliest day holding the week's high: idxmax takes the first of equal values.
    top = days.loc[days.groupby("week")["h"].idxmax(), "d"].dt.strftime("%a").value_counts()
    got = dict(zip(result.table["day"].astype(str), result.table["weeks"], strict=True))
    assert got == top.to_dict()
    assert sum(got.values()) == days["week"].nunique()


# --- periods without data, bad input -------------------------------------------------------


def test_a_period_without_data_names_what_exists(engine_settings) -> None:
    payload = _error({"session": "RTH", "period": "2030", "select": "count()"}, engine_settings)
    assert payload["error_type"] == "InvalidPeriod"
    assert payload["message"] == "No NQ data in 2030; data covers 2024-01-02 to 2024-03-28."


@pytest.mark.parametrize(
    ("timeframe", "said"),
    [
        ("5m", "No session given for 5m bars: ETH (the whole trading day) used"),
        ("daily", "No session given for daily bars: RTH (the default session) used."),
    ],
)
def test_a_session_left_out_is_said(timeframe, said, engine_settings, db) -> None:
    """The model is told RTH is the default; intraday bars without a session are the whole
    day, which it must not take for RTH."""
    result = _ok({"from": timeframe, "select": "count()"}, engine_settings)
    assert any(w.startswith(said) for w in result.metadata.warnings)
    if timeframe == "5m":
        every_bar = db.execute(
            "SELECT count(DISTINCT (tdate, ((mod - 1080 + 1440) % 1440) // 5)) FROM bars"
        ).fetchone()[0]
        assert result.summary.value == every_bar


def test_a_partly_covered_period_is_warned(engine_settings) -> None:
    result = _ok({"session": "RTH", "period": "2024", "select": "count()"}, engine_settings)
    assert any("only partly covered" in w for w in result.metadata.warnings)
    # By year, the unfinished year's group says it with its days (p48d C6: ES 2025:2026
    # had both "only partly covered" and "The year 2026 is not over", one fact twice).
    by_year = _ok(
        {"session": "RTH", "period": "2024", "group_by": "year()", "select": "count()"},
        engine_settings,
    )
    said = by_year.metadata.warnings
    assert by_year.table["count"].tolist() == [result.summary.value]
    assert [w for w in said if w.startswith("The year 2024 is not over")]
    assert not [w for w in said if "only partly covered" in w]


@pytest.mark.parametrize(
    ("query", "error_type", "step"),
    [
        ({"instrument": "XX", "select": "count()"}, "UnknownInstrument", None),
        ({"period": "last_0_bars", "select": "count()"}, "InvalidPeriod", "period"),
        ({"join": {"instrument": "NQ"}, "select": "count()"}, "ArgumentError", "join"),
        ({"join": {"instrument": "CL"}, "select": "count()"}, None, None),
        ({"join": {"instrument": "ES", "filter": "only"}}, "InvalidQuery", "parse"),
        ({"join": {"source": "fomc", "instrument": "ES"}}, "InvalidQuery", "parse"),
        ({"select": "count()", "then": {"select": "count()"}}, "ArgumentError", "then"),
        ({"group_by": "year()", "then": {}}, "ArgumentError", "then"),
        ({"group_by": "year()", "then": {"select": "mean(nope)"}}, "UnknownColumn", None),
        ({"group_by": "year()", "then": {"sort": "nope desc"}}, "UnknownColumn", "then.sort"),
        # A tester grouped the second stage by year() and got no way forward.
        (
            {"group_by": "date()", "select": "max(high) as h", "then": {"group_by": "year()"}},
            "UnknownColumn",
            "then.group_by",
        ),
    ],
)
def test_bad_new_fields_get_error_values(query, error_type, step, engine_settings) -> None:
    payload = _error(query, engine_settings)
    if error_type:
        assert payload["error_type"] == error_type, payload
    if step:
        assert payload["step"] == step, payload
    assert payload.get("hint") or "Available" in payload["message"], payload


def test_sorting_rows_by_a_column_not_selected(engine_settings, db) -> None:
    result = _ok(
        {"session": "RTH", "from": "daily", "select": "close", "sort": "volume desc", "limit": 3},
        engine_settings,
    )
    expected = db.execute(
        """
        SELECT arg_max(close, timestamp), sum(volume) FROM bars WHERE mod >= 570 AND mod < 1020
        GROUP BY tdate ORDER BY sum(volume) DESC LIMIT 3
        """
    ).fetchall()
    # The bar label, the selection, then the sort key that orders them: "sorted by volume"
    # over closes alone gave the model no volume to say.
    assert result.table.columns.tolist() == ["date", "close", "volume"]
    assert result.table["close"].tolist() == [c for c, _ in expected]
    assert result.table["volume"].tolist() == [v for _, v in expected]
    assert render_summary(result).splitlines()[1] == "date,close,volume"  # what the model reads


def test_every_function_declares_its_reach_where_it_is_registered() -> None:
    # A macro (named pattern) reads what its body reads; every other function says it.
    missing = sorted({s.name for s in library().values() if s.reach is None and s.body is None})
    assert missing == []
    rows = [s.name for s in library().values() if s.category == "time"]
    assert rows and all(reach(parse_expression(f"{name}()")) == ROW for name in rows)


def test_map_columns_pass_their_reach_to_what_reads_them() -> None:
    """rolling_mean(volume, 20) reads 19 bars back, prev() of it 20; next() of next() reads
    two ahead; a streak reads all history, and so does anything built on it."""
    columns = map_reach(
        (name, parse_expression(text))
        for name, text in [
            ("avg20", "rolling_mean(volume, 20)"),
            ("rel", "volume / prev(avg20)"),
            ("after", "next(next(close))"),
            ("run", "streak(close > open)"),
            ("long_run", "prev(run) > 3"),
        ]
    )
    assert columns["avg20"] == Reach(19) and columns["rel"] == Reach(20)
    assert columns["after"] == Reach(0, 2)
    assert columns["run"].back is None and columns["long_run"].back is None
    assert reach(parse_expression("prev(rel, 5) > 1"), columns) == Reach(25)
    assert reach(parse_expression("rel > 1")) == ROW  # without the map: a plain column


def test_a_run_per_unit_reads_back_to_its_units_first_bar() -> None:
    """prev(cummax(high, 'week')) reads the week of the bar before the row: one bar back, then
    to that week's first (daily bars: Thursday 02-29 for Friday 03-01, then Monday 02-26),
    and one bar more, as the reach does not tell it from cummax(prev(high), 'week')."""
    pwh = parse_expression("prev(cummax(high, 'week'))")
    assert reach(pwh) == Reach(1, units=("weekly",))
    assert not reach(parse_expression("cumsum(volume, 'Day')")).local
    # Rows 0..9 dated Monday 02-19 … Friday 03-01, two weeks of five days.
    days = pd.bdate_range("2024-02-19", "2024-03-01").to_numpy()
    mondays = days - (pd.DatetimeIndex(days).dayofweek.to_numpy() * np.timedelta64(1, "D"))

    def unit_start(row: int, unit: str) -> int:
        assert unit == "weekly"
        return int(np.searchsorted(days, mondays[row]))

    assert reach_start(9, reach(pwh), unit_start) == 4  # Friday 03-01: from Friday 02-23
    assert reach_start(9, reach(parse_expression("cummax(high, 'week')")), unit_start) == 5
    # Monday 02-26: the week of 02-19 and the bar before it, one row before those given.
    assert reach_start(5, reach(pwh), unit_start) == -1
    assert reach_start(7, reach(parse_expression("prev(high, 3)")), unit_start) == 4


def test_an_order_dependent_function_cannot_be_registered_without_its_reach() -> None:
    with pytest.raises(RuntimeError, match="register it with its reach"):
        register("lookback_probe", category="indicator", summary="reads earlier bars")
    assert "lookback_probe" not in library()


@pytest.mark.slow
def test_a_release_inside_a_bar_is_said_and_the_window_gives_the_hour_after(
    sample_settings,
) -> None:
    """NFP comes out at 08:30, inside the 08:00-09:00 ETH bar: "the hour after" on hourly
    bars is the 09:00 bar. The result says so, and the two ways it suggests agree."""
    hourly = _ok(
        {
            "session": "ETH",
            "from": "1h",
            "period": "2024",
            "join": "nfp",
            "where": "nfp and nfp_minutes >= 0 and nfp_minutes < 60",
            "select": "count()",
        },
        sample_settings,
    )
    assert any(
        w.startswith("NFP came out at 08:30, inside the 1h bar opening 08:00")
        for w in hourly.metadata.warnings
    )
    minutes = _ok(
        {
            "session": "ETH",
            "from": "1m",
            "period": "2024",
            "join": "nfp",
            "where": "nfp and nfp_minutes >= 0 and nfp_minutes < 60",
            "group_by": "date()",
            "select": "max(high) - min(low) as r",
            "then": {"select": "mean(r)"},
        },
        sample_settings,
    )
    assert not [w for w in minutes.metadata.warnings if "came out at" in w]
    window = _ok(
        {
            "session": "08:30-09:30",
            "from": "daily",
            "period": "2024",
            "join": "nfp",
            "where": "nfp",
            "select": "mean(range)",
        },
        sample_settings,
    )
    assert minutes.summary.value == pytest.approx(window.summary.value)


def test_a_where_on_the_minutes_after_a_release_inside_a_bar_says_the_days_it_left_out(
    engine_settings, db
) -> None:
    """FOMC's 14:00 statements (2024-01-31, 2024-03-20) are inside RTH's 13:30 1h bar: the
    first bar from them on opens at 14:30, so "fomc_minutes < 30" keeps no bar of those days.
    Said with the days and how late; a where that also picks days by month speaks only of
    the day it kept, not of one its month left out. Dates from the reference calendar, the
    next bar from DuckDB over the minute bars."""
    if not (REFERENCE_DIR / "events" / "fomc.csv").is_file():
        pytest.skip(f"no reference lists in {REFERENCE_DIR}")
    reference = pd.read_csv(REFERENCE_DIR / "events" / "fomc.csv", parse_dates=["date"])
    days = reference[reference["date"].between("2024-01-02", "2024-03-28")]["date"]
    assert len(days) == 2  # both at 14:00, the era's time
    # RTH's 1h bars open every hour from 09:30: the first opening at or after 14:00.
    [(late, found)] = db.execute(
        """
        SELECT min(570 + (mod - 570) // 60 * 60) - 840, count(DISTINCT tdate) FROM bars
        WHERE mod >= 570 AND mod < 1020 AND 570 + (mod - 570) // 60 * 60 >= 840
          AND tdate IN (SELECT unnest(?::DATE[]))
        """,
        [[d.date() for d in days]],
    ).fetchall()
    assert found == len(days)
    query = {"session": "RTH", "from": "1h", "join": "fomc", "select": "count()"}
    narrow = _ok({**query, "where": "fomc and fomc_minutes >= 0 and fomc_minutes < 30"},
                 engine_settings)  # fmt: skip
    assert narrow.summary.value == 0
    inside = [w for w in narrow.metadata.warnings if "inside the 1h bar" in w]
    assert inside == [
        f"FOMC came out at 14:00, inside the 1h bar opening 13:30, on all {len(days)} fomc "
        f"days in the period: the next bar opens {late} minutes after the release; the "
        "where's fomc_minutes window keeps no bar of any of them, so they are not in the "
        "result. For the time right after a release use 1m bars with the where 'fomc and "
        "fomc_minutes >= 0 and fomc_minutes < 60', or a window such as '14:00-15:00' as the "
        "session."
    ]
    january = _ok({**query, "where": "fomc and month() == 1 and fomc_minutes >= 0"},
                  engine_settings)  # fmt: skip
    assert january.summary.value == 3  # 2024-01-31's 14:30, 15:30 and 16:30 bars
    [said] = [w for w in january.metadata.warnings if "inside the 1h bar" in w]
    assert said.startswith(
        f"FOMC came out at 14:00, inside the 1h bar opening 13:30, on the one fomc day in "
        f"the period: the next bar opens {late} minutes after the release. For"
    )


# The eight 2011-2012 FOMC days with a Chair press conference: the statement came at 12:30.
PRESS_CONFERENCES_2011_2012 = (
    "2011-04-27 2011-06-22 2011-11-02 2012-01-25 2012-04-25 2012-06-20 2012-09-13 2012-12-12"
)


@pytest.mark.slow
def test_a_window_at_the_usual_release_time_says_when_releases_came_otherwise(
    sample_settings, con
) -> None:
    """ "The 30 minutes after FOMC, 2009-2012" as the window 14:00-14:30: the statement came at
    14:15 then, or 12:30 on press-conference days. Dates from the reference calendar."""
    if not (REFERENCE_DIR / "events" / "fomc.csv").is_file():
        pytest.skip(f"no reference lists in {REFERENCE_DIR}")
    reference = pd.read_csv(REFERENCE_DIR / "events" / "fomc.csv", parse_dates=["date"])
    days = reference[reference["date"].dt.year.between(2009, 2012)]["date"]
    press = days.isin(pd.DatetimeIndex(PRESS_CONFERENCES_2011_2012.split()))
    query = {"session": "14:00-14:30", "from": "daily", "join": "fomc", "where": "fomc"}
    result = _ok({**query, "period": "2009:2012", "select": "mean(range)"}, sample_settings)
    assert (
        f"FOMC came out at another time than the window's 14:00 on {len(days)} of the "
        f"{len(days)} fomc days in the period (14:15 on {int((~press).sum())}, 12:30 on "
        f"{int(press.sum())}): there the window starts before the 14:15 releases and misses "
        "the 12:30 ones."
    ) in " ".join(result.metadata.warnings)
    # The 1m form it points to follows each release: the 30 minutes from 14:15 (or 12:30).
    minutes = _ok(
        {
            "session": "ETH",
            "from": "1m",
            "period": "2009:2012",
            "join": "fomc",
            "where": "fomc and fomc_minutes >= 0 and fomc_minutes < 30",
            "group_by": "date()",
            "select": "max(high) - min(low) as r",
            "then": {"select": "mean(r)"},
        },
        sample_settings,
    )
    starts = [
        f"TIMESTAMP '{d:%Y-%m-%d} {'12:30' if p else '14:15'}'"
        for d, p in zip(days, press, strict=True)
    ]
    ranges = con.execute(
        "SELECT avg(r) FROM (SELECT s, max(high) - min(low) AS r FROM nq, "
        f"(SELECT unnest([{', '.join(starts)}]) AS s) WHERE timestamp >= s "
        "AND timestamp < s + INTERVAL 30 MINUTE GROUP BY s)"
    ).fetchone()[0]
    assert minutes.summary.value == pytest.approx(ranges)
    # From 2013 every statement came at 14:00: nothing to say.
    later = _ok({**query, "period": "2015:2016", "select": "mean(range)"}, sample_settings)
    assert not [w for w in later.metadata.warnings if "came out at" in w]
    # A weekly bar's date is its last day, not the release's: the releases are read by their
    # own days, the same 2009-2012 ones (no FOMC in a week the period's edges cut).
    weekly = {**query, "from": "weekly", "period": "2009:2012", "select": "mean(range)"}
    said = [w for w in _ok(weekly, sample_settings).metadata.warnings if "came out" in w]
    assert said == [w for w in result.metadata.warnings if "came out" in w]


@pytest.mark.slow
def test_the_summary_gives_a_named_session_s_hours_on_its_instrument(sample_settings) -> None:
    """From an NQ chat, CL's MORNING is 09:00-11:30, not the 09:30-12:30 the model was
    shown for NQ: the summary says which hours were read."""
    query = {"instrument": "CL", "session": "MORNING", "from": "daily", "period": "2024"}
    named = _ok({**query, "select": "mean(range)"}, sample_settings, "CL")
    assert "daily MORNING (09:00-11:30 ET) bars of CL" in render_summary(named)
    window = _ok({**query, "session": "09:00-11:30", "select": "mean(range)"}, sample_settings)
    assert window.summary.value == named.summary.value
    nq_hours = _ok({**query, "session": "09:30-12:30", "select": "mean(range)"}, sample_settings)
    assert nq_hours.summary.value != named.summary.value
    assert "daily 09:30-12:30 ET bars of CL" in render_summary(nq_hours)


@pytest.mark.slow
def test_a_percentile_written_as_a_share_is_pointed_out(sample_settings, con) -> None:
    query = {"session": "RTH", "from": "daily", "period": "2024"}
    share = _ok({**query, "select": "percentile(range, 0.9)"}, sample_settings)
    assert (
        "percentile(range, 0.9) is the 0.9th percentile (p runs 0 to 100); for the 90th write "
        "percentile(range, 90)." in share.metadata.warnings
    )
    right = _ok({**query, "select": "percentile(range, 90)"}, sample_settings)
    daily = _rth_daily(con)
    ranges = (daily["high"] - daily["low"])[daily["d"].dt.year == 2024]
    assert right.summary.value == pytest.approx(np.percentile(ranges, 90))
    assert not [w for w in right.metadata.warnings if "percentile" in w]


@pytest.mark.slow
def test_releases_on_days_without_trading_are_said_to_count_for_the_next(
    sample_settings, con
) -> None:
    """ "On which weekdays did CPI come out?": two came out on a Good Friday, when NQ did not
    trade, so they count for Monday. Dates from the reference calendar; trading days from
    the minute bars."""
    if not (REFERENCE_DIR / "events" / "cpi.csv").is_file():
        pytest.skip(f"no reference lists in {REFERENCE_DIR}")
    reference = pd.read_csv(REFERENCE_DIR / "events" / "cpi.csv", parse_dates=["date"])
    cpi = reference[reference["date"].dt.year.between(2015, 2025)]["date"]
    traded = pd.DatetimeIndex(_rth_daily(con)["d"])
    off = sorted(d for d in cpi if d not in traded)
    assert off  # the case that matters
    nexts = [traded[traded.searchsorted(d)] for d in off]
    result = _ok(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2015:2025",
            "join": "cpi",
            "where": "cpi",
            "map": {"weekday": "dayname()"},
            "group_by": "weekday",
            "select": "count()",
        },
        sample_settings,
    )
    moved = ", ".join(f"{d:%Y-%m-%d} → {n:%Y-%m-%d}" for d, n in zip(off, nexts, strict=True))
    assert (
        f"{len(off)} CPI releases fell on a day without trading and count for the next "
        f"trading day ({moved})." in result.metadata.warnings
    )
    assert dict(zip(result.table["weekday"], result.table["count"], strict=True))["Mon"] == sum(
        n.dayofweek == 0 for n in nexts
    ) + sum(d.dayofweek == 0 for d in cpi if d in traded)


@pytest.mark.slow
def test_an_intraday_selection_keeps_each_bars_time(sample_settings, con) -> None:
    """ "The 5 biggest 5-minute moves of 2024, and when": selecting move and range kept no
    timestamp, so the model read five numbers without their bars. Checked in DuckDB."""
    result = _ok(BIGGEST_5M_MOVES_2024, sample_settings)
    expected = list(biggest_5m_moves_2024(con).itertuples(index=False, name=None))
    assert result.table.columns.tolist() == ["timestamp", "move", "range", "abs_move"]
    assert [
        (t, round(m, 2))
        for t, m in zip(result.table["timestamp"], result.table["move"], strict=True)
    ] == [(pd.Timestamp(b), round(m, 2)) for b, m in expected]
    assert render_summary(result).splitlines()[1] == "timestamp,move,range,abs_move"


@pytest.mark.slow
def test_the_reference_s_midnight_form_averages_a_time_over_eth(sample_settings, con) -> None:
    """ "At what time does NQ make its daily low, on average, over the full day from 18:00?"
    The form the reference gives counts minutes from the evening open; DuckDB checks it."""
    from barb.instruments import load_instrument
    from barb.reference import query_reference

    form = "if(hour() >= 18, hour() * 60 + minute() - 1440, hour() * 60 + minute())"
    assert form in query_reference(load_instrument("NQ"))
    result = _ok(
        {
            "session": "ETH",
            "from": "1m",
            "period": "2025",
            "map": {"t": form},
            "group_by": "date()",
            "select": "arg_min(t, low) as low_t",
            "then": {"select": "mean(low_t)"},
        },
        sample_settings,
    )
    (expected,) = con.execute(
        """
        SELECT avg(t) FROM (
            SELECT trading_date, arg_min(
                CASE WHEN minute >= 1080 THEN minute - 1440 ELSE minute END, low ORDER BY timestamp
            ) AS t FROM (SELECT * FROM nq ORDER BY timestamp)
            WHERE year(trading_date) = 2025 GROUP BY 1)
        """
    ).fetchone()
    assert result.summary.value == pytest.approx(expected)


def test_the_data_s_last_group_the_calendar_has_not_reached_is_not_said_missing(
    engine_settings, minutes
) -> None:
    """p48d C6: ES's December up days of every year (where month() == 12, by year) were
    told "No row passed where in 1 year() group of the period (2026)": December 2026 has not
    come, the data ending 2026-01-07. The hand-made days end 2024-03-28: "day() >= 30" by
    month has no row in February (no 30th) and none yet in March. February is said, March,
    the data's last group, is not (pandas' calendar of the RTH days)."""
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    days = pd.DatetimeIndex(stamps[(minute >= 570) & (minute < 1020)].dt.normalize().unique())
    late = days[days.day >= 30]
    assert days[-1] == pd.Timestamp("2024-03-28") and set(late.month) == {1}
    result = execute(
        {"session": "RTH", "from": "daily", "where": "day() >= 30", "group_by": "month()",
         "select": "count() as days"},
        "NQ",
        settings=engine_settings,
    )  # fmt: skip
    assert result.table["days"].tolist() == [len(late)]
    assert [w for w in result.metadata.warnings if "No row passed where" in w] == [
        "No row passed where in 1 month() group of the period (2): they are not listed, and a "
        "second stage over the groups does not count them. count(cond) without where lists "
        "every group, with 0."
    ]
