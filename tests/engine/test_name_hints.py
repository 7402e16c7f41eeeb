"""Names written where a column is read, whose error pointed to a map entry "high - low":
a weekday or month written bare (dayofweek() == Mon), an event Barb has or has not
(snb_meeting, fomc_minutez; OPEC and the ECB, which Barb knows it has no dates for), and
fomc_minutes, the minutes from the FOMC statement that a join adds on intraday bars, read
as the FOMC minutes' release days (p34c C1, C2). Each error now names the form to write, and
that form, run, counts what DuckDB counts over the bars."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from barb import execute
from barb.events.data_files import data_file_path
from tests.asking import ask

FIRST, LAST = dt.date(2024, 1, 2), dt.date(2024, 3, 28)  # the engine_settings bars

DAILY = {"session": "ETH", "from": "daily", "select": "count()"}


def _error(query: dict, settings) -> dict:
    result = execute(DAILY | query, "NQ", settings=settings)
    assert not result.ok, result.to_dict()
    return result.to_dict()


def _written_form(hint: str) -> str:
    """The expression a hint ends with, after its last ': '."""
    return hint.rsplit(": ", 1)[1]


def _dates(db, where: str) -> int:
    return db.execute(f"SELECT count(DISTINCT tdate) FROM bars WHERE {where}").fetchone()[0]


@pytest.mark.parametrize(
    ("where", "form", "sql"),
    [
        ("dayofweek() == Mon", "dayofweek() == 0", "isodow(tdate) = 1"),
        ("dayofweek() != Friday", "dayofweek() != 4", "isodow(tdate) != 5"),
        ("dayname() == Tues", "dayname() == 'Tue'", "isodow(tdate) = 2"),
        ("month() == Feb", "month() == 2", "month(tdate) = 2"),
        ("Mar > month()", "3 > month()", "month(tdate) < 3"),
    ],
)
def test_a_bare_weekday_or_month_is_told_as_its_function_reads_it(
    engine_settings, db, where, form, sql
) -> None:
    said = _error({"where": where}, engine_settings)
    assert said["error_type"] == "UnknownColumn"
    assert "map" not in said["hint"]
    assert _written_form(said["hint"]) == form
    # The form the hint writes counts the days DuckDB counts (the holiday Monday has no bar).
    result = ask({"where": form}, engine_settings, **DAILY)
    assert result.summary.value == _dates(db, sql) > 0


def test_a_weekday_list_without_quotes_is_told_to_quote_it(engine_settings) -> None:
    said = _error({"where": "dayname() in (Mon, Fri)"}, engine_settings)
    assert said["error_type"] == "SyntaxError"
    assert "dayname() == 'Mon'" in said["hint"] and "dayofweek() == 0" in said["hint"]


def _fomc_days() -> list[dt.date]:
    """The statement days in the test bars' range, read from Barb's data file by pandas."""
    rows = pd.read_csv(data_file_path("fomc.csv"), comment="#")
    days = pd.to_datetime(rows["date"]).dt.date
    return [day for day in days if FIRST <= day <= LAST]


def test_a_flag_that_is_no_event_lists_the_events_to_join(engine_settings) -> None:
    said = _error({"where": "snb_meeting"}, engine_settings)
    assert "errors" not in said  # one error
    hint = said["hint"]
    assert "high - low" not in hint
    assert "one of NQ's events (fomc, nfp, cpi, opex, quad_witching)" in hint
    assert '"join": "fomc"' in hint
    # The join it names marks the statement days of the data file.
    joined = ask({"join": "fomc", "where": "fomc"}, engine_settings, **DAILY)
    assert joined.summary.value == len(_fomc_days()) == 2


def test_an_unknown_event_joined_is_one_error_listing_the_events(engine_settings) -> None:
    said = _error({"join": "snb_meeting", "where": "snb_meeting"}, engine_settings)
    assert said["error_type"] == "UnknownEvent" and "errors" not in said
    assert said["hint"].startswith("NQ's calendar holds only fomc (FOMC Rate Decision), nfp")
    assert said["hint"].endswith("Barb has no dates for 'snb_meeting'.")
    # A name with a space also failed to parse where it was used: a second error.
    said = _error(
        {"join": "fomc meeting", "group_by": "fomc meeting", "select": "mean(range)"},
        engine_settings,
    )
    assert "errors" not in said and said["hint"] == "Did you mean 'fomc'?"
    said = _error({"join": {"instrument": "NQ"}, "map": {"r": "nq_close"}}, engine_settings)
    assert "errors" not in said and said["message"].startswith("The query already runs on NQ")


@pytest.mark.parametrize(
    "query",
    [
        {"where": "fomc_minutes > 0"},
        {"join": "fomc", "where": "fomc_minutes >= 0"},
        {"where": "fomc_minutez"},
        {"join": "fomc_minutes", "where": "fomc_minutes"},
        {"join": {"source": "fomc_minutes", "filter": "only"}},
        {"from": "1h", "where": "fomc_minutes >= 0 and fomc_minutes < 60"},
        {"from": "1h", "join": "fomc_minutes"},
    ],
)
def test_fomc_minutes_is_told_as_the_column_it_is(engine_settings, query) -> None:
    """Not the FOMC minutes' days, and not 'did you mean fomc' (the statement days, three
    weeks before the minutes): the column exists with join fomc on intraday bars."""
    said = _error(query, engine_settings)
    assert "errors" not in said
    assert "did you mean" not in said["message"]
    hint = said["hint"]
    assert hint.startswith('fomc_minutes is the column "join": "fomc" adds on intraday bars')
    assert "Barb's calendar has no FOMC minutes" in hint


def test_the_minutes_column_read_as_true_false_is_told_to_compare_it(engine_settings, db) -> None:
    query = {"session": "ETH", "from": "1m", "join": "fomc", "select": "count()"}
    said = execute(query | {"where": "fomc_minutes"}, "NQ", settings=engine_settings).to_dict()
    assert said["message"] == "'fomc_minutes' in where gives a number per row, not true/false."
    form = said["hint"].split("e.g. '")[1].split("'")[0]
    assert form == "fomc and fomc_minutes >= 0 and fomc_minutes < 60"
    result = ask(query | {"where": form}, engine_settings)
    days = ", ".join(f"DATE '{day}'" for day in _fomc_days())
    hour_after = f"tdate IN ({days}) AND mod >= 840 AND mod < 900"  # 14:00-14:59
    expected = db.execute(f"SELECT count(*) FROM bars WHERE {hour_after}").fetchone()[0]
    assert result.summary.value == expected == 120


@pytest.mark.parametrize(
    "query",
    [
        {"join": "opec"},
        {"join": "OPEC meeting"},
        {"where": "opec"},
        {"where": "opec_meeting"},
        {"join": "ecb"},
    ],
)
def test_an_event_barb_has_no_dates_for_is_said_not_guessed(engine_settings, query) -> None:
    """ "join": "opec" was answered "did you mean 'opex'?" (options expiration), and "where":
    "opec" "did you mean 'open'?": a model that retries once answered an OPEC question with
    expiry days (p37a #8). The error says Barb has no such dates and names no stand-in."""
    said = _error(query, engine_settings)
    what = "ECB meeting" if "ecb" in str(query) else "OPEC meeting"
    assert said["hint"].startswith(f"Barb has no {what} dates, so no query can mark those days")
    assert "did you mean" not in (said["message"] + said["hint"]).lower()
    assert not said.get("errors")  # one error
