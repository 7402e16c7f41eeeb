"""What an unfinished group is compared with: "January days by year" said the data's 4 days
of January 2026 held "4 days, against 21 in a whole year (the median)", 21 being a whole
January's (p35d #14). Under a where that keeps one month, or a run of them, of each year
the yardstick names them. Hand-made bars, one an RTH hour, from 2023-01-03 to 2025-01-07;
the days counted with pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask
from small_bars import bars_from_closes, write_minutes

from barb.settings import EngineSettings

WEEKDAYS = pd.bdate_range("2023-01-03", "2025-01-07")
DAYS = WEEKDAYS[WEEKDAYS.strftime("%m-%d") != "01-01"]  # New Year's Day: no trading


@pytest.fixture(scope="module")
def hourly(tmp_path_factory: pytest.TempPathFactory) -> EngineSettings:
    """A bar each RTH hour (09:30 … 16:30, and 16:59) of every weekday."""
    offsets = pd.to_timedelta([570 + 60 * h for h in range(8)] + [1019], unit="min")
    stamps = pd.DatetimeIndex([day + offset for day in DAYS for offset in offsets])
    rng = np.random.default_rng(5)
    close = 15000 + np.cumsum(rng.normal(0, 20, len(stamps)))
    minutes = bars_from_closes(stamps, close, rng.integers(1, 500, len(stamps)), up=5, down=5)
    data_dir: Path = tmp_path_factory.mktemp("hourly_years")
    settings = EngineSettings(data_dir=data_dir)
    write_minutes(minutes, "NQ", settings, "an RTH bar an hour, hand-made")
    return settings


@pytest.mark.parametrize(
    ("where", "months", "named"),
    [
        ("month() == 1", [1], "January"),
        ("month() <= 2", [1, 2], "January–February"),
    ],
)
def test_a_where_of_one_month_a_year_names_the_month(hourly, where, months, named) -> None:
    query = {"where": where, "group_by": "year()", "select": "count() as days"}
    result = ask(query, hourly, **RTH_DAILY)
    kept = DAYS[DAYS.month.isin(months)]
    sizes = pd.Series(1, index=kept).groupby(kept.year).size()
    assert sizes[2025] == 4 and len(sizes) == 3  # the case: 2025's January is unfinished
    assert result.table["days"].tolist() == sizes.tolist()
    median = round(float(np.median(sizes[[2023, 2024]])))
    [said] = [w for w in result.metadata.warnings if "is not over" in w]
    suffix = " (the median)" if sizes[2023] != sizes[2024] else ""
    assert said.endswith(f"It holds 4 days, against {median} in a whole {named}{suffix}."), said


def test_without_a_where_of_months_the_whole_year_is_the_yardstick(hourly) -> None:
    """A where that keeps days of every month (Mondays) leaves the year the unit."""
    query = {"where": "dayname() == 'Mon'", "group_by": "year()", "select": "count() as days"}
    result = ask(query, hourly, **RTH_DAILY)
    mondays = DAYS[DAYS.dayofweek == 0]
    sizes = pd.Series(1, index=mondays).groupby(mondays.year).size()
    assert sizes[2025] == 1
    [said] = [w for w in result.metadata.warnings if "is not over" in w]
    median = round(float(np.median(sizes[[2023, 2024]])))
    assert f"It holds 1 day, against {median} in a whole year" in said, said
