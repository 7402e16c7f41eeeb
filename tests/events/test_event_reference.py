"""Barb's event files against the independent reference lists in shared/reference/events.

The reference is read at test time only; Barb's files are its own transcription of the Federal
Reserve and BLS schedules and are never generated from it. Skipped when the folder is absent.
Set BARB_REFERENCE_DIR to point elsewhere (default: <repo>/../shared/reference).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from barb.events import event_catalog, event_dates
from barb.instruments import Instrument

D = dt.date
REPO = Path(__file__).resolve().parents[2]
REFERENCE_DIR = Path(os.environ.get("BARB_REFERENCE_DIR", REPO.parent / "shared" / "reference"))
EVENTS_DIR = REFERENCE_DIR / "events"

pytestmark = pytest.mark.skipif(
    not (EVENTS_DIR / "fomc.csv").is_file(), reason=f"no reference lists in {EVENTS_DIR}"
)

# The reference's documented coverage gaps (its README, "Coverage gaps"): it has no rows in
# these ranges, so a date only in Barb's file there is not a disagreement.
REFERENCE_GAPS: dict[str, list[tuple[dt.date, dt.date]]] = {
    "fomc": [],
    "nfp": [(D(2026, 2, 12), D(2026, 12, 31))],  # "NFP after 2026-02-11 (the sources end there)"
    "cpi": [(D(2008, 1, 1), D(2010, 1, 31)), (D(2011, 2, 1), D(2014, 12, 31))],
}

# Disagreements found and resolved in Barb's favour, with the reason. Anything else fails.
RESOLVED_TIME_DISAGREEMENTS: dict[dt.date, str] = {
    D(2008, 1, 22): (
        "reference note says 08:30 ET; the FOMC announced the 75 bp cut at 08:20 ET, before "
        "the 08:30 data releases (news items stamped 08:30 already carry the decision)"
    ),
}


def reference(name: str) -> pd.DataFrame:
    table = pd.read_csv(EVENTS_DIR / f"{name}.csv", dtype=str, keep_default_na=False)
    table["day"] = pd.to_datetime(table["date"]).dt.date
    return table


def in_gap(name: str, day: dt.date) -> bool:
    return any(lo <= day <= hi for lo, hi in REFERENCE_GAPS[name])


@pytest.mark.parametrize("name", ["fomc", "nfp", "cpi"])
def test_dates_agree_with_the_reference(name: str, es: Instrument) -> None:
    spec = event_catalog()[name]
    ours = set(event_dates(name, es)["date"].dt.date)
    theirs_all = set(reference(name)["day"])
    # Reference rows after our coverage are dates Barb calls unknown; they must be only that.
    beyond = {d for d in theirs_all if not spec.coverage_start <= d <= spec.coverage_end}
    assert all(d > spec.coverage_end for d in beyond), sorted(beyond)
    theirs = theirs_all - beyond
    only_ours = sorted(d for d in ours - theirs if not in_gap(name, d))
    only_theirs = sorted(theirs - ours)
    assert (only_ours, only_theirs) == ([], [])


@pytest.mark.parametrize("name", ["nfp", "cpi"])
def test_documented_reference_gaps_really_are_empty(name: str) -> None:
    # Otherwise the tolerance above could hide a real disagreement.
    theirs = reference(name)["day"]
    assert not any(in_gap(name, d) for d in theirs)


def test_unscheduled_fomc_decisions_and_times_agree(es: Instrument) -> None:
    ours = event_dates("fomc", es)
    theirs = reference("fomc")
    flagged = theirs[theirs["note"].str.startswith("unscheduled")]
    assert set(flagged["day"]) == set(ours.loc[~ours["scheduled"], "date"].dt.date)
    ours_time = dict(zip(ours["date"].dt.date, ours["time"].dt.strftime("%H:%M"), strict=True))
    for row in flagged.itertuples():
        match = re.search(r"(\d{2}:\d{2}) ET", row.note)
        assert match, row.note
        if row.day in RESOLVED_TIME_DISAGREEMENTS:
            assert match.group(1) != ours_time[row.day]
            continue
        assert match.group(1) == ours_time[row.day], row.day


def test_cpi_reference_months_agree(es: Instrument) -> None:
    ours = event_dates("cpi", es)
    ours_month = dict(zip(ours["date"].dt.date, ours["reference_month"], strict=True))
    theirs = reference("cpi")
    compared = 0
    for row in theirs.itertuples():
        match = re.search(r"reference month (\d{4}-\d{2})", row.note)
        if match and row.day in ours_month:
            assert ours_month[row.day] == match.group(1), row.day
            compared += 1
    assert compared >= 130
