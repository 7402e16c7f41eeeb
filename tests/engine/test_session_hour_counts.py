"""A count by hour of the day under a where, drawn: every hour the session trades, 0 where
nothing matched, and the headline's most and least read from the bars drawn. On NQ's 2024
ETH 1h bars with range > 120 the chart said "most often 09:00 171" beside 15:00's 175 (the
ranked hours had stayed in key order when the bars moved to the session's order), and with
range > 200 "least often 03:00 1 bar" beside four bars of 0 (p46t A, D). Expected counts
from pandas over the hand-made minutes."""

from __future__ import annotations

import pandas as pd
import pytest

from barb import execute
from barb.charts import chart_headline
from barb.charts.grouped import read_groups
from barb.settings import EngineSettings

THRESHOLD = 20  # of the hand-made 1h bars' ranges: 13 hours have some, 10 have none


@pytest.fixture(scope="module")
def hour_counts(minutes: pd.DataFrame) -> pd.Series:
    """1h ETH bars with a range over THRESHOLD, by the hour they start, in the session's
    order from its 18:00 open; 0 where none."""
    start = minutes["timestamp"].dt.floor("1h")
    bars = minutes.groupby(start).agg(high=("high", "max"), low=("low", "min"))
    hours = bars.index.hour
    counts = (bars["high"] - bars["low"] > THRESHOLD).groupby(hours).sum()
    return counts.loc[sorted(counts.index, key=lambda h: (h - 18) % 24)]


def _run(engine_settings: EngineSettings, where: str):
    query = {
        "session": "ETH",
        "from": "1h",
        "where": where,
        "group_by": "hour()",
        "select": "count() as bars",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    return result


def test_every_session_hour_is_drawn_and_ranked(
    engine_settings: EngineSettings, hour_counts: pd.Series
) -> None:
    result = _run(engine_settings, f"range > {THRESHOLD}")
    groups = read_groups(result)
    assert groups is not None
    drawn = groups.table.set_index("hour")["bars"]
    assert drawn.index.tolist() == hour_counts.index.tolist()  # 18 … 16, no 17
    assert drawn.astype(int).tolist() == hour_counts.astype(int).tolist()
    top = hour_counts[hour_counts == hour_counts.max()]
    zeros = int((hour_counts == 0).sum())
    assert len(top) == 1 and zeros > 1
    headline = chart_headline(result)
    # A few bars an hour are within noise of each other: their span, no winner (p47d D1).
    assert result.metadata.even_groups == ["bars"]
    assert headline == (
        f"bars: 0 bars ({zeros} groups tied) to {top.index[0]:02d}:00 {top.iloc[0]} bars "
        "(differences within noise)"
    )


def test_hours_a_where_on_the_hour_empties_are_no_never(
    engine_settings: EngineSettings, hour_counts: pd.Series
) -> None:
    """hour() >= 5 and hour() < 17 leaves the evening out on purpose: not drawn, not least."""
    result = _run(engine_settings, f"hour() >= 5 and hour() < 17 and range > {THRESHOLD}")
    groups = read_groups(result)
    assert groups is not None
    hours = groups.table["hour"].tolist()
    assert not {18, 19, 20, 21, 22, 23, 0, 1, 2, 3, 4} & set(hours)
    day = hour_counts.loc[[h for h in hour_counts.index if 5 <= h < 17]]
    low = day[day > 0].min()  # the hours it found; those it added between are not ranked
    headline = chart_headline(result) or ""
    assert headline.startswith(f"bars: {low} bar") and "within noise" in headline
