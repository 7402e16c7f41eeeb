"""A release day that traded but has no bar in the query's session (NFP on Good Friday: a
Globex session to 09:15, no RTH) is named, not silently left out of a count of releases.
Expected days from the reference list in shared/reference/events and pandas over the
sample's minute bars (which trade the real exchange calendar)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import ask

from barb.data.store import data_path

REPO = Path(__file__).resolve().parents[2]
REFERENCE_DIR = Path(os.environ.get("BARB_REFERENCE_DIR", REPO.parent / "shared" / "reference"))
NFP = REFERENCE_DIR / "events" / "nfp.csv"
RTH_START, RTH_END = 570, 1020  # 09:30-17:00

pytestmark = pytest.mark.skipif(not NFP.is_file(), reason=f"no reference list {NFP}")


@pytest.fixture(scope="module")
def days(sample_settings) -> dict[str, np.ndarray]:
    """The sample's trading dates, all and those with an RTH bar."""
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=["trading_date", "minute"])
    rth = bars[(bars["minute"] >= RTH_START) & (bars["minute"] < RTH_END)]
    return {
        "all": np.unique(bars["trading_date"].to_numpy().astype("datetime64[D]")),
        "rth": np.unique(rth["trading_date"].to_numpy().astype("datetime64[D]")),
    }


def _releases(year: int | None = None) -> np.ndarray:
    dates = pd.to_datetime(pd.read_csv(NFP)["date"])
    if year is not None:
        dates = dates[dates.dt.year == year]
    return dates.to_numpy().astype("datetime64[D]")


def _session_warnings(result) -> list[str]:
    return [w for w in result.metadata.warnings if "traded but" in w]


def _count(session: str) -> dict:
    return {"session": session, "from": "daily", "period": "2023", "join": "nfp",
            "where": "nfp", "select": "count()"}  # fmt: skip


def test_a_release_day_without_an_rth_bar_is_named(sample_settings, days) -> None:
    releases = _releases(2023)
    traded = np.intersect1d(releases, days["all"])
    with_rth = np.intersect1d(releases, days["rth"])
    missed = np.setdiff1d(traded, with_rth)
    assert len(missed) == 1  # 2023-04-07, Good Friday
    rth = ask(_count("RTH"), sample_settings)
    assert rth.summary.value == len(with_rth)
    assert _session_warnings(rth) == [
        f"1 NFP release day traded but has no RTH bar ({missed[0]}): no row carries nfp "
        "there, so it is not counted. To count releases use the ETH session."
    ]
    eth = ask(_count("ETH"), sample_settings)
    assert eth.summary.value == len(traded) == len(releases)
    assert _session_warnings(eth) == []


def test_all_years_name_every_such_day(sample_settings, days) -> None:
    releases = _releases()
    missed = np.setdiff1d(np.intersect1d(releases, days["all"]), days["rth"])
    result = ask(
        {"session": "RTH", "from": "daily", "join": "nfp", "group_by": "year()",
         "select": "count(nfp) as releases"},
        sample_settings,
    )  # fmt: skip
    listed = ", ".join(str(d) for d in missed[:5])
    more = f" and {len(missed) - 5} more" if len(missed) > 5 else ""
    assert _session_warnings(result) == [
        f"{len(missed)} NFP release days traded but have no RTH bar ({listed}{more}): no row "
        "carries nfp there, so they are not counted. To count releases use the ETH session."
    ]
    per_year = result.table.set_index("year")["releases"]
    for year, count in per_year.items():
        in_year = np.array([d.astype(object).year == year for d in releases])
        expected = np.intersect1d(releases[in_year], days["rth"])
        assert count == len(expected), year


def test_a_year_without_such_a_day_says_nothing(sample_settings) -> None:
    query = {**_count("RTH"), "period": "2024"}
    assert _session_warnings(ask(query, sample_settings)) == []


FOMC = REFERENCE_DIR / "events" / "fomc.csv"


def _window_query(length: int) -> dict:
    return {"session": "ETH", "from": "1m", "period": "2020-03", "join": "fomc",
            "where": f"fomc and fomc_minutes >= 0 and fomc_minutes < {length}",
            "group_by": "date()", "select": "max(high) - min(low) as hour_range"}  # fmt: skip


def test_a_sunday_release_before_the_open_is_not_said_to_count(sample_settings) -> None:
    """FOMC cut on Sunday 2020-03-15 at 17:00 (the reference's note); Globex reopened at
    18:00, so an hour's window after the release has no bar of that day."""
    reference = pd.read_csv(FOMC)
    (note,) = reference.loc[reference["date"] == "2020-03-15", "note"]
    assert "17:00 ET" in note
    release = pd.Timestamp("2020-03-15 17:00")
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=["timestamp"])
    after = bars["timestamp"][bars["timestamp"] >= release]
    opens = after.iloc[0]
    late = int((opens - release) / pd.Timedelta(minutes=1))
    assert late == 60
    result = ask(_window_query(late), sample_settings)
    days = pd.to_datetime(result.table["date"]).dt.strftime("%Y-%m-%d").tolist()
    assert not {"2020-03-15", "2020-03-16"} & set(days)  # no bar of it in the window
    warnings = [w for w in result.metadata.warnings if "FOMC" in w]
    assert warnings == [
        "1 FOMC release falls on a day without trading and no bar of its day is inside the "
        f"where's fomc_minutes window (2020-03-15 17:00, market closed: the first bar after "
        f"it opens {opens:%H:%M}, fomc_minutes = {late}): not in the result."
    ]


def test_a_window_reaching_the_open_counts_the_release(sample_settings) -> None:
    result = ask(_window_query(120), sample_settings)
    days = pd.to_datetime(result.table["date"]).dt.strftime("%Y-%m-%d").tolist()
    assert "2020-03-16" in days
    assert [w for w in result.metadata.warnings if "FOMC" in w] == [
        "1 FOMC release fell on a day without trading and counts for the next trading day "
        "(2020-03-15 → 2020-03-16)."
    ]


def test_the_day_after_a_moved_release_says_which_day_prev_reads(sample_settings, days) -> None:
    """ "The day after FOMC", prev(fomc): the Sunday 2020-03-15 cut counts for Monday
    2020-03-16, the first trading day after it, so prev(fomc) keeps Tuesday 2020-03-17, the
    second. The sentence on the moved release had been dropped as of a day the where left
    out, and the answer averaged 2020-03-17 as a day after FOMC with no word. The trading
    days from the sample's bars, the release from the reference list."""
    reference = pd.read_csv(FOMC)
    assert (reference["date"] == "2020-03-15").any()  # the Sunday release
    after = days["rth"][days["rth"] > np.datetime64("2020-03-15")]
    first, second = str(after[0]), str(after[1])
    assert (first, second) == ("2020-03-16", "2020-03-17")
    query = {"session": "RTH", "from": "daily", "period": "2020-03", "join": "fomc",
             "map": {"after": "prev(fomc)"}, "where": "after", "select": "count()"}  # fmt: skip
    result = ask(query, sample_settings)
    moved = [w for w in result.metadata.warnings if "day without trading" in w]
    assert moved == [
        "1 FOMC release fell on a day without trading and counts for the next trading day "
        f"(2020-03-15 → {first}); prev(fomc) is true a trading day later ({second}): the second "
        "trading day after the release, not its first."
    ]


def test_a_statistic_of_the_session_s_bars_is_not_sent_to_eth(sample_settings) -> None:
    """ "Gap-up share on NFP days": ETH would measure another gap, so only a count of
    releases is pointed to ETH; a statistic is told the days are not among the nfp days."""
    query = {"session": "RTH", "from": "daily", "period": "2023", "join": "nfp",
             "map": {"up": "open > prev(close)"}, "group_by": "nfp",
             "select": "mean(up)"}  # fmt: skip
    [said] = _session_warnings(ask(query, sample_settings))
    assert said.endswith(
        "(2023-04-07): no row carries nfp there, so it is not among the nfp days here."
    )
    assert "ETH" not in said
    [counted] = _session_warnings(ask(_count("RTH"), sample_settings))
    assert counted.endswith("To count releases use the ETH session.")


def test_a_moved_release_a_where_left_out_is_not_said(sample_settings) -> None:
    """The Sunday 2020-03-15 cut counts for Monday 2020-03-16; a where keeping 2024's FOMC
    days has no row of it, and said "1 FOMC release … counts for the next trading day"."""
    query = {"session": "RTH", "from": "daily", "join": "fomc", "select": "count()"}
    moved = "counts for the next trading day (2020-03-15 → 2020-03-16)"
    kept_2020 = ask({**query, "where": "fomc and year() == 2020"}, sample_settings)
    assert any(moved in w for w in kept_2020.metadata.warnings)
    kept_2024 = ask({**query, "where": "fomc and year() == 2024"}, sample_settings)
    assert not any("fell on a day without trading" in w for w in kept_2024.metadata.warnings)
