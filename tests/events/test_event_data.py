"""Barb's own event data files: known dates, counts per year, times of day by era."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pandas as pd
import pytest

from barb.errors import DataError
from barb.events import data_files, event_dates
from barb.events.data_files import DATA_DIR, load_event_file
from barb.instruments import Instrument

D = dt.date


def dates(name: str, instrument: Instrument) -> set[dt.date]:
    return set(event_dates(name, instrument)["date"].dt.date)


@pytest.mark.parametrize("file_name", ["fomc.csv", "nfp.csv", "cpi.csv"])
def test_every_file_names_its_official_source_and_coverage(file_name: str) -> None:
    header = [
        line for line in (DATA_DIR / file_name).read_text().splitlines() if line.startswith("#")
    ]
    text = "\n".join(header)
    assert "Source:" in text
    assert ("federalreserve.gov" in text) if file_name == "fomc.csv" else ("bls.gov" in text)
    assert any(line.startswith("# coverage:") for line in header)
    data = load_event_file(file_name)
    assert data.coverage_start == D(2008, 1, 1)
    assert data.rows[0].date >= data.coverage_start
    assert data.rows[-1].date <= data.coverage_end


# --- FOMC -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "day",
    [
        D(2008, 1, 30),
        D(2008, 12, 16),
        D(2009, 4, 29),  # second meeting day, not 04-28
        D(2011, 4, 27),  # first press conference
        D(2012, 8, 1),
        D(2013, 5, 1),
        D(2015, 12, 16),  # lift-off
        D(2017, 2, 1),
        D(2018, 11, 8),  # Thursday after the midterm elections
        D(2020, 11, 5),
        D(2022, 6, 15),
        D(2023, 2, 1),
        D(2023, 11, 1),
        D(2024, 5, 1),
        D(2024, 11, 7),
        D(2025, 12, 10),
        D(2026, 1, 28),
        D(2026, 4, 29),
        D(2026, 12, 9),
    ],
)
def test_fomc_known_decision_days(es: Instrument, day: dt.date) -> None:
    assert day in dates("fomc", es)


def test_fomc_not_the_first_meeting_day_nor_non_decision_calls(es: Instrument) -> None:
    days = dates("fomc", es)
    for not_a_decision in [
        D(2009, 4, 28),
        D(2008, 3, 11),  # TSLF announcement
        D(2010, 5, 9),  # swap lines
        D(2019, 10, 4),
        D(2020, 3, 18),  # the meeting replaced by the 03-15 action
        D(2020, 8, 27),
        D(2026, 5, 6),
    ]:
        assert not_a_decision not in days


def test_fomc_unscheduled_decisions_are_marked_with_their_times(es: Instrument) -> None:
    table = event_dates("fomc", es)
    unscheduled = table[~table["scheduled"]]
    assert list(unscheduled["time"].dt.strftime("%Y-%m-%d %H:%M")) == [
        "2008-01-22 08:20",
        "2008-10-08 07:00",
        "2020-03-03 10:00",
        "2020-03-15 17:00",
    ]


def test_fomc_eight_scheduled_decisions_a_year(es: Instrument) -> None:
    table = event_dates("fomc", es)
    scheduled = Counter(table.loc[table["scheduled"], "date"].dt.year)
    # 2020: the 03-17/18 meeting was replaced by the Sunday 03-15 emergency decision.
    assert scheduled == {year: 7 if year == 2020 else 8 for year in range(2008, 2027)}
    unscheduled = Counter(table.loc[~table["scheduled"], "date"].dt.year)
    assert unscheduled == {2008: 2, 2020: 2}


def test_fomc_statement_time_by_era(es: Instrument) -> None:
    table = event_dates("fomc", es)
    for row in table[table["scheduled"]].itertuples():
        clock = row.time.strftime("%H:%M")
        if row.date.year >= 2013:
            assert clock == "14:00", row.date
        elif row.press_conference:
            assert row.date >= pd.Timestamp(2011, 4, 27)
            assert clock == "12:30", row.date
        else:
            assert clock == "14:15", row.date


def test_fomc_press_conferences_by_era(es: Instrument) -> None:
    table = event_dates("fomc", es)
    scheduled = table[table["scheduled"]]
    with_pc = set(scheduled.loc[scheduled["press_conference"], "date"].dt.date)
    assert {d for d in with_pc if d.year < 2013} == {
        D(2011, 4, 27), D(2011, 6, 22), D(2011, 11, 2),
        D(2012, 1, 25), D(2012, 4, 25), D(2012, 6, 20), D(2012, 9, 13), D(2012, 12, 12),
    }  # fmt: skip
    # 2013-2018: the quarterly meetings with projections; from 2019: every meeting.
    for d in scheduled["date"].dt.date:
        if 2013 <= d.year <= 2018:
            assert (d in with_pc) == (d.month in (3, 6, 9, 12)), d
        elif d.year >= 2019:
            assert d in with_pc, d


# --- NFP ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("day", "why"),
    [
        (D(2008, 7, 3), "Thursday, July 4 on Friday"),
        (D(2009, 1, 9), "second Friday"),
        (D(2010, 4, 2), "Good Friday"),
        (D(2013, 10, 22), "2013 shutdown, September report"),
        (D(2013, 11, 8), "2013 shutdown, October report"),
        (D(2014, 7, 3), "Thursday, July 4 on Friday"),
        (D(2015, 7, 2), "Thursday, July 3 observed"),
        (D(2020, 7, 2), "Thursday, July 3 observed"),
        (D(2025, 7, 3), "Thursday, July 4 on Friday"),
        (D(2025, 11, 20), "2025 shutdown, September report"),
        (D(2025, 12, 16), "November report with October payrolls"),
        (D(2026, 1, 9), "December 2025 report"),
        (D(2026, 2, 11), "early-2026 lapse, January report"),
    ],
)
def test_nfp_known_release_days(es: Instrument, day: dt.date, why: str) -> None:
    assert day in dates("nfp", es), why


def test_nfp_shutdown_dates_are_moved_not_duplicated(es: Instrument) -> None:
    days = dates("nfp", es)
    for planned_but_moved in [
        D(2013, 10, 4),
        D(2013, 11, 1),
        D(2025, 10, 3),
        D(2025, 11, 7),
        D(2026, 2, 6),
    ]:
        assert planned_but_moved not in days
    table = event_dates("nfp", es)
    assert "2025-10" not in set(table["reference_month"])  # no separate October 2025 report


def test_nfp_twelve_releases_a_year(es: Instrument) -> None:
    per_year = Counter(event_dates("nfp", es)["date"].dt.year)
    expected = {year: 12 for year in range(2008, 2025)} | {2025: 11, 2026: 2}
    assert per_year == expected
    months = event_dates("nfp", es)["reference_month"]
    assert months.is_unique


def test_nfp_non_fridays_are_the_documented_exceptions(es: Instrument) -> None:
    table = event_dates("nfp", es)
    not_friday = table[table["date"].dt.weekday != 4]
    assert set(not_friday["date"].dt.date) == {
        D(2008, 7, 3), D(2009, 7, 2), D(2013, 10, 22), D(2014, 7, 3), D(2015, 7, 2),
        D(2020, 7, 2), D(2025, 7, 3), D(2025, 11, 20), D(2025, 12, 16), D(2026, 2, 11),
    }  # fmt: skip
    assert (table["time"].dt.strftime("%H:%M") == "08:30").all()


# --- CPI ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("day", "month"),
    [
        (D(2008, 3, 14), "2008-02"),
        (D(2008, 12, 16), "2008-11"),
        (D(2011, 8, 18), "2011-07"),
        (D(2013, 10, 30), "2013-09"),  # 2013 shutdown
        (D(2014, 7, 22), "2014-06"),
        (D(2017, 4, 14), "2017-03"),  # Good Friday
        (D(2022, 6, 10), "2022-05"),
        (D(2025, 10, 24), "2025-09"),  # produced during the 2025 shutdown
        (D(2025, 12, 18), "2025-11"),
        (D(2026, 2, 13), "2026-01"),  # early-2026 lapse
    ],
)
def test_cpi_known_release_days(es: Instrument, day: dt.date, month: str) -> None:
    table = event_dates("cpi", es)
    row = table[table["date"].dt.date == day]
    assert list(row["reference_month"]) == [month]


def test_cpi_october_2025_was_never_published(es: Instrument) -> None:
    table = event_dates("cpi", es, start=D(2025, 10, 25), end=D(2025, 12, 17))
    assert table.empty
    assert "2025-10" not in set(event_dates("cpi", es)["reference_month"])


def test_cpi_twelve_releases_a_year(es: Instrument) -> None:
    table = event_dates("cpi", es)
    per_year = Counter(table["date"].dt.year)
    assert per_year == {year: 12 for year in range(2008, 2025)} | {2025: 11, 2026: 2}
    # Each release describes the month after the previous one (October 2025 skipped).
    months = pd.PeriodIndex(table["reference_month"], freq="M")
    steps = [(b - a).n for a, b in pairwise(months)]
    assert Counter(steps) == {1: len(steps) - 1, 2: 1}
    # Always released in the month after the reference month, even after the shutdowns.
    assert (table["date"].dt.to_period("M") == months + 1).all()
    assert (table["time"].dt.strftime("%H:%M") == "08:30").all()


# --- the loader -----------------------------------------------------------------------------


@pytest.fixture
def scratch_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(data_files, "DATA_DIR", tmp_path)
    load_event_file.cache_clear()
    yield tmp_path
    load_event_file.cache_clear()


def test_loader_reports_file_and_line_of_a_bad_row(scratch_dir: Path) -> None:
    (scratch_dir / "x.csv").write_text(
        "# coverage: 2020-01-01 .. 2020-12-31\ndate,note\n2020-01-03,\n2020-02-30,\n"
    )
    with pytest.raises(DataError, match=r"x\.csv, line 4"):
        load_event_file("x.csv")


def test_loader_requires_order_and_coverage(scratch_dir: Path) -> None:
    (scratch_dir / "unordered.csv").write_text(
        "# coverage: 2020-01-01 .. 2020-12-31\ndate\n2020-03-01\n2020-02-01\n"
    )
    with pytest.raises(DataError, match="date order"):
        load_event_file("unordered.csv")
    (scratch_dir / "outside.csv").write_text(
        "# coverage: 2020-01-01 .. 2020-12-31\ndate\n2021-03-01\n"
    )
    with pytest.raises(DataError, match="outside"):
        load_event_file("outside.csv")
    (scratch_dir / "nocoverage.csv").write_text("date\n2020-03-01\n")
    with pytest.raises(DataError, match="coverage"):
        load_event_file("nocoverage.csv")
