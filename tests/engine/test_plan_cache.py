"""A query asked again is not planned again, until its data changes.

Plans are kept per query text while the instrument's dataset is the one loaded; a new data
file makes a new dataset, and the next answer must come from the new bars.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from barb import execute
from barb.data.store import DataMeta, data_path, write_bars
from barb.planning import plan_query
from barb.script.query import parse_query
from barb.sessions import minutes_of_day, trading_dates
from barb.settings import EngineSettings

QUERY = {"session": "RTH", "from": "daily", "select": "max(high)"}


def write(minutes: pd.DataFrame, settings: EngineSettings) -> None:
    frame = minutes.copy()
    frame["trading_date"] = trading_dates(frame["timestamp"], 18 * 60)
    frame["minute"] = minutes_of_day(frame["timestamp"])
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description="bars for the plan cache",
        first_date=frame["trading_date"].iloc[0].date(),
        last_date=frame["trading_date"].iloc[-1].date(),
        rows=len(frame),
    )
    write_bars(frame, meta, data_path("NQ", settings))


def test_a_plan_is_kept_until_the_data_file_changes(tmp_path: Path, minutes: pd.DataFrame) -> None:
    settings = EngineSettings(data_dir=tmp_path)
    write(minutes, settings)
    first = plan_query(parse_query(QUERY), "NQ", settings)
    assert plan_query(parse_query(dict(QUERY)), "NQ", settings) is first
    before = execute(QUERY, "NQ", settings=settings).summary.value
    rth = minutes["timestamp"].dt.hour * 60 + minutes["timestamp"].dt.minute
    assert before == minutes.loc[(rth >= 570) & (rth < 1020), "high"].max()

    higher = minutes.assign(high=minutes["high"] + 100)
    write(higher, settings)
    again = plan_query(parse_query(QUERY), "NQ", settings)
    assert again is not first and again.dataset is not first.dataset
    assert execute(QUERY, "NQ", settings=settings).summary.value == before + 100
