"""A ranking topped by a group that holds part of its month or year, in a second stage
(``then``) as in the first, or cut by the period's start or end rather than the data's end:
its warning names the first whole group, checked against pandas over DuckDB's daily RTH
volumes from the raw minute bars."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from asking import ask
from duckdb_answers import RTH


def _rth_volume(con) -> pd.Series:
    """Each trading date's RTH volume, by date."""
    frame = con.execute(
        f"SELECT trading_date AS d, sum(volume) AS v FROM nq WHERE {RTH} GROUP BY 1 ORDER BY 1"
    ).df()
    return frame.set_index(pd.to_datetime(frame["d"]))["v"]


def _said(result, start: str) -> str:
    [said] = [w for w in result.metadata.warnings if w.startswith(start)]
    return said


def _ranked(said: str, column: str, unit: str, subject: str = "it") -> tuple[float, str]:
    found = re.search(
        rf" Sorted by {column} ascending, {subject} ranks first: among the whole {unit}s the "
        rf"lowest {column} is ([\d.,]+), in ([^.]+)\.$",
        said,
    )
    assert found is not None, said
    return float(found[1].replace(",", "")), found[2]


@pytest.mark.slow
@pytest.mark.parametrize(
    "then", [{"sort": "v asc", "limit": 1}, {"select": ["year", "v"], "sort": "v asc"}]
)
def test_a_second_stage_ranking_the_open_year_first_names_the_first_whole_year(
    then: dict, sample_settings, con
) -> None:
    """ "Which year had the least RTH volume", ranked in then: 2026's 4 days lead it, as in
    a first-stage sort, and the warning names the whole year with the least."""
    volume = _rth_volume(con)
    years = volume.groupby(volume.index.year).sum().sort_values()
    last = int(volume.index[-1].year)
    assert years.index[0] == last  # the open year ranks first
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "year()",
        "select": "sum(volume) as v",
        "then": then,
    }
    said = _said(ask(query, sample_settings), f"The year {last} is not over")
    value, named = _ranked(said, "v", "year")
    whole = years.drop(last)
    assert named == str(whole.index[0]) and value == pytest.approx(whole.iloc[0])


@pytest.mark.slow
def test_a_second_stage_regrouping_the_open_month_by_year_names_the_year(
    sample_settings, con
) -> None:
    """Months summed again by year in then: the open month's year ranks first."""
    volume = _rth_volume(con)
    years = volume.groupby(volume.index.year).sum().sort_values()
    last = volume.index[-1]
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": ["year()", "month()"],
        "select": "sum(volume) as v",
        "then": {"group_by": "year", "select": "sum(v) as y", "sort": "y asc", "limit": 1},
    }
    result = ask(query, sample_settings)
    said = _said(result, f"The month {last.year}-{last.month:02d} is not over")
    value, named = _ranked(said, "y", "year", f"the year {last.year}")
    whole = years.drop(last.year)
    assert named == str(whole.index[0]) and value == pytest.approx(whole.iloc[0])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("period", "cut", "said"),
    [
        ("2023-03-15:2024", (2023, 3), "The month 2023-03 began before the period's start"),
        ("2023:2024-06-04", (2024, 6), "The month 2024-06 continues past the period's end"),
    ],
)
@pytest.mark.parametrize("then", [False, True])
def test_a_month_the_period_cuts_atop_a_ranking_names_the_first_whole_month(
    period: str, cut: tuple[int, int], said: str, then: bool, sample_settings, con
) -> None:
    """ "The month with the least volume since 2023-03-15": March 2023's half month ranks
    first, as the data's unfinished month would; the warning names the first whole month."""
    volume = _rth_volume(con)
    start, end = period.split(":")
    inside = volume.loc[start : end if "-" in end else f"{end}-12-31"]
    months = inside.groupby([inside.index.year, inside.index.month]).sum().sort_values()
    assert months.index[0] == cut  # the cut month ranks first
    query = {
        "session": "RTH",
        "from": "daily",
        "period": period,
        "group_by": ["year()", "month()"],
        "select": "sum(volume) as v",
    }
    ranking = {"sort": "v asc", "limit": 1}
    query |= {"then": ranking} if then else ranking
    value, named = _ranked(_said(ask(query, sample_settings), said), "v", "month")
    (year, month), lowest = months.index[1], months.iloc[1]
    assert named == f"year {year}, month {month}" and value == pytest.approx(lowest)
