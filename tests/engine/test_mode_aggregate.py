"""mode() over the engine: "per year, which hour most often makes the day's high" in two
stages, each day's hour of the high by arg_max, then the commonest of them.

The expected answers are built with pandas from the minute bars, never through Barb: hourly
RTH bars from the session's hours, each day's earliest bar at its high, and the commonest
label per group, of equally frequent ones the first in time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import pandas as pd
import pytest
import yaml
from rth_bars import rth_minutes

from barb import execute
from barb.result import Result
from barb.settings import PROJECT_ROOT
from barb.time_keys import calendar_part, time_kind

USUAL_HOUR_BY_YEAR = {
    "session": "RTH",
    "from": "1h",
    "group_by": ["year()", "date()"],
    "select": "arg_max(time(), high) as high_time",
    "then": {"group_by": "year", "select": "mode(high_time) as usual_hour"},
}


def _ok(query: dict, settings) -> Result:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def hours_of_the_high(minutes: pd.DataFrame, day: pd.Series, start: str) -> pd.Series:
    """Each day's hourly bar (named by its start, 'HH:MM') holding the day's high, the
    earliest of equal ones: ``minutes`` are the session's, ``day`` their trading date, hourly
    bars run from the session's ``start``."""
    opens = _minutes(start)
    stamps = minutes["timestamp"]
    slot = (stamps.dt.hour * 60 + stamps.dt.minute - opens) // 60
    hourly = minutes.groupby([day.rename("day"), slot.rename("slot")])["high"].max()
    top = hourly.groupby(level="day").idxmax().map(lambda key: key[1])  # first of equals
    return top.map(lambda s: f"{(opens + 60 * s) // 60:02d}:{(opens + 60 * s) % 60:02d}")


def _minutes(clock: str) -> int:
    """'09:30' → 570."""
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


def commonest(values: Iterable[str]) -> str:
    """The value seen most often; of equals, the one seen first (Counter keeps that order)."""
    return Counter(values).most_common(1)[0][0]


def test_the_commonest_hour_of_the_high_is_read_in_time_order(engine_settings, minutes) -> None:
    """Sorted by the high, the first stage's rows are out of time order; mode reads them in
    time order, so of two days with one hour each the earlier day's is the answer."""
    rth = rth_minutes(minutes)
    hours = hours_of_the_high(rth, rth["day"], "09:30")
    highs = rth.groupby("day")["high"].max()
    # Two days in a row with different hours, the later one higher (first once sorted).
    pairs = [
        (a, b)
        for a, b in zip(hours.index[:-1], hours.index[1:], strict=True)
        if hours[a] != hours[b] and highs[b] > highs[a]
    ]
    assert pairs
    a, b = pairs[0]
    result = _ok(
        {
            "session": "RTH",
            "from": "1h",
            "period": f"{a:%Y-%m-%d}:{b:%Y-%m-%d}",
            "group_by": "date()",
            "select": ["arg_max(time(), high) as high_time", "max(high) as hi"],
            "sort": "hi desc",
            "then": {"select": "mode(high_time) as usual"},
        },
        engine_settings,
    )
    assert result.summary.value == hours[a]
    assert (
        f"2 values of high_time are equally frequent (1 row each): {hours[a]} is shown (the "
        f"earliest); also {hours[b]}."
    ) in result.metadata.warnings


def test_the_commonest_hour_of_the_high_per_month(engine_settings, minutes) -> None:
    rth = rth_minutes(minutes)
    hours = hours_of_the_high(rth, rth["day"], "09:30")
    query = {
        **USUAL_HOUR_BY_YEAR,
        "group_by": ["month()", "date()"],
        "then": {"group_by": "month", "select": "mode(high_time) as usual_hour"},
    }
    table = _ok(query, engine_settings).table
    want = hours.groupby(hours.index.month).agg(commonest)
    assert table["month"].tolist() == want.index.tolist()
    assert table["usual_hour"].tolist() == want.tolist()


def test_a_mode_of_time_labels_is_a_time_of_day_of_years_a_year() -> None:
    """What it holds travels through mode as through arg_max: the table orders and the
    chart draws usual_hour as a clock, and writes a year as 2024, not 2,024."""
    assert time_kind("usual_hour", USUAL_HOUR_BY_YEAR) == "minute"
    query = {
        "from": "daily",
        "group_by": "month()",
        "select": "arg_max(year(), range) as y",
        "then": {"select": "mode(y) as usual_year"},
    }
    assert calendar_part("usual_year", query) == "year"


@pytest.mark.slow
def test_the_commonest_hour_of_the_high_by_year_on_the_sample(sample_settings) -> None:
    """The question's own two stages over the whole sample, against hourly bars built here
    from the minute file and the RTH hours the instrument file states."""
    result = _ok(USUAL_HOUR_BY_YEAR, sample_settings)
    spec = yaml.safe_load((PROJECT_ROOT / "instruments" / "NQ.yaml").read_text())
    start, end = spec["sessions"]["RTH"]["start"], spec["sessions"]["RTH"]["end"]
    bars = pd.read_parquet(sample_settings.data_dir / "NQ.parquet", columns=["timestamp", "high"])
    stamps = bars["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    rth = bars[(minute >= _minutes(start)) & (minute < _minutes(end))]  # inside its own date
    hours = hours_of_the_high(rth, rth["timestamp"].dt.normalize(), start)
    want = hours.groupby(hours.index.year).agg(commonest)
    table = result.table
    assert table["year"].tolist() == want.index.tolist()
    assert table["usual_hour"].tolist() == want.tolist()
    # Not each year's first day's hour: the count decides.
    assert (hours.groupby(hours.index.year).first() != want).any()
