"""A period inside the data on which the session did not trade is said, with why and the
nearest dates that did: "what did NQ do on Christmas" read "No bars matched: the result is
empty", which a person can take for missing data."""

from __future__ import annotations

import numpy as np
import pytest

from barb import execute
from barb.events.rules import closure_name

RTH = "minute >= 570 AND minute < 1020"


def _error(query: dict, settings) -> dict:
    result = execute({"session": "RTH", "from": "daily"} | query, "NQ", settings=settings)
    assert not result.ok, result.metadata.warnings if result.metadata else result
    said = result.to_dict()
    assert said["error_type"] == "InvalidPeriod" and said["step"] == "period", said
    return said


def _nearest(db, before: str, after: str) -> tuple[str, str]:
    """The trading dates of the hand-made bars on either side, by DuckDB."""
    return tuple(
        str(day)
        for day in db.execute(
            f"SELECT (SELECT max(tdate) FROM bars WHERE tdate < DATE '{before}'), "
            f"(SELECT min(tdate) FROM bars WHERE tdate > DATE '{after}')"
        ).fetchone()
    )


@pytest.mark.parametrize("timeframe", ["daily", "1h", "weekly"])
def test_a_saturday_is_no_trading_date_and_the_nearest_are_named(
    timeframe: str, engine_settings, db
) -> None:
    said = _error({"from": timeframe, "period": "2024-02-03"}, engine_settings)
    friday, monday = _nearest(db, "2024-02-03", "2024-02-03")
    assert said["message"] == (
        f"2024-02-03 is not a trading date of NQ (a Saturday); the nearest are {friday} and "
        f"{monday}."
    )
    assert said["hint"] == f'Use "period": "{friday}" or "{monday}".'


def test_a_weekday_the_exchange_traded_but_the_data_lacks_is_said_as_a_gap(
    engine_settings, db
) -> None:
    """The hand-made bars skip Martin Luther King Day 2024, on which CME's equity futures
    traded (a short session): the data's gap, not a holiday."""
    assert not db.execute("SELECT count(*) FROM bars WHERE tdate = DATE '2024-01-15'").fetchone()[0]
    said = _error({"period": "2024-01-15"}, engine_settings)
    before, after = _nearest(db, "2024-01-15", "2024-01-15")
    assert said["message"] == (
        "2024-01-15 is not a trading date of NQ (the data has no bars there, though CME "
        "traded), but NQ reopened at 18:00 that evening: those bars count for the trading date "
        f'{after} (that evening alone: "session": "18:00-00:00", "period": "{after}"); the '
        f"nearest are {before} and {after}."
    )


def test_a_weekend_span_is_said_whole(engine_settings, db) -> None:
    said = _error({"from": "5m", "period": "2024-02-10:2024-02-11"}, engine_settings)
    before, after = _nearest(db, "2024-02-10", "2024-02-11")
    assert said["message"] == (
        "NQ has no trading date from 2024-02-10 to 2024-02-11 (a weekend), but NQ reopened at "
        "18:00 on 2024-02-11: those bars count for the trading date 2024-02-12 (that evening "
        f'alone: "session": "18:00-00:00", "period": "2024-02-12"); the nearest are {before} '
        f"and {after}."
    )


@pytest.mark.parametrize("session", ["ETH", "RTH"])
def test_a_sunday_says_its_evening_traded_and_how_to_read_it(session: str, engine_settings, db):
    """p47b #14: "NQ's range on Sunday 2025-03-09" read "not a trading date (a Sunday)", and a
    model told the trader the market was shut, though Globex reopened at 18:00 (a 68-point
    range). The Sunday's bars belong to Monday's date; the form the error names reads them."""
    said = _error({"session": session, "period": "2024-02-04"}, engine_settings)
    friday, monday = _nearest(db, "2024-02-04", "2024-02-04")
    assert monday == "2024-02-05"
    assert said["message"] == (
        "2024-02-04 is not a trading date of NQ (a Sunday), but NQ reopened at 18:00 that "
        "evening: those bars count for the trading date 2024-02-05 (that evening alone: "
        '"session": "18:00-00:00", "period": "2024-02-05"); the nearest are '
        f"{friday} and {monday}."
    )
    evening = execute(
        {"session": "18:00-00:00", "from": "daily", "period": "2024-02-05"},
        "NQ",
        settings=engine_settings,
    )
    row = evening.table.iloc[0]
    # The calendar Sunday's own bars, by DuckDB.
    expected = db.execute(
        """
        SELECT first(open ORDER BY timestamp), max(high), min(low), last(close ORDER BY timestamp)
        FROM bars WHERE CAST(timestamp AS DATE) = DATE '2024-02-04'
        """
    ).fetchone()
    assert (row["open"], row["high"], row["low"], row["close"]) == pytest.approx(expected)


@pytest.mark.parametrize(
    "query",
    [
        {"period": "2024-02-09:2024-02-11"},  # a Friday in it
        {"period": "2024-02-09", "where": "close > 1e9"},  # empty for another reason
    ],
)
def test_a_period_with_a_trading_date_is_no_error(query: dict, engine_settings) -> None:
    result = execute({"session": "RTH", "from": "daily"} | query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    if "where" in query:
        assert "No bars matched: the result is empty." in result.metadata.warnings


@pytest.mark.parametrize(
    ("day", "name"),
    [
        ("2025-12-25", "Christmas"),
        ("2025-04-18", "Good Friday"),  # an early close: Globex traded until 09:15
        ("2025-11-27", "Thanksgiving"),  # the library names its early close ThanksgivingFriday
        ("2025-06-19", "Juneteenth"),  # "Juneteenth Starting at 2022"
        ("2025-12-26", None),
    ],
)
def test_the_calendar_names_its_holidays_for_a_person(day: str, name: str | None) -> None:
    assert closure_name("CME Globex Equity", np.datetime64(day)) == name


@pytest.mark.slow
def test_the_sample_s_christmas_and_good_friday_are_said(sample_settings, con) -> None:
    """Christmas: CME closed. Good Friday 2025: Globex traded until 09:15, so the full session
    has the date and RTH has no bar; the ETH day is answered."""
    days = con.execute(
        f"""
        SELECT (SELECT count(*) FROM nq WHERE trading_date = DATE '2025-12-25'),
               (SELECT count(*) FROM nq WHERE trading_date = DATE '2025-04-18' AND {RTH}),
               (SELECT strftime(max(timestamp) + INTERVAL 1 MINUTE, '%H:%M') FROM nq
                WHERE trading_date = DATE '2025-04-18'),
               (SELECT max(trading_date) FROM nq WHERE trading_date < DATE '2025-04-18' AND {RTH}),
               (SELECT min(trading_date) FROM nq WHERE trading_date > DATE '2025-04-18' AND {RTH})
        """
    ).fetchone()
    assert days[:2] == (0, 0)
    ended, before, after = days[2], days[3].date(), days[4].date()
    christmas = _error({"period": "2025-12-25"}, sample_settings)
    assert christmas["message"] == (
        "2025-12-25 is not a trading date of NQ (CME closed: Christmas), but NQ reopened at "
        "18:00 that evening: those bars count for the trading date 2025-12-26 (that evening "
        'alone: "session": "18:00-00:00", "period": "2025-12-26"); the nearest are '
        "2025-12-24 and 2025-12-26."
    )
    friday = _error({"period": "2025-04-18"}, sample_settings)
    assert friday["message"] == (
        "2025-04-18 is a trading date of NQ, but its RTH session (09:30-17:00) had no bars: "
        f"trading ended at {ended} (Good Friday); the nearest are {before} and {after}."
    )
    eth = execute(
        {"session": "ETH", "from": "daily", "period": "2025-04-18"}, "NQ", settings=sample_settings
    )
    assert eth.ok and len(eth.table) == 1
