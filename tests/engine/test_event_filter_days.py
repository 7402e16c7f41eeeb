"""What an event filter's answer says of the days it did not keep.

A period holding no event day ("the last 5 FOMC days" as last_5_bars with the FOMC filter)
had read "Scanned 0 daily bars, no bars", as if the data were missing (p48h M1); a window's
early closes were told to FOMC-only results that held no FOMC early close (p48h C1).
Expected trading days from pandas over the hand-made minute bars (a trading date runs from
18:00 the evening before), event days from the reference lists in shared/reference/events.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import ask
from small_bars import write_minutes

from barb.settings import EngineSettings

REFERENCE_DIR = Path(
    os.environ.get(
        "BARB_REFERENCE_DIR", Path(__file__).resolve().parents[3] / "shared" / "reference"
    )
)
# Two early closes on days of no FOMC decision, one on a decision day (2024-03-20).
EARLY_CLOSES = ("2024-02-16", "2024-02-23", "2024-03-20")

pytestmark = pytest.mark.skipif(
    not (REFERENCE_DIR / "events" / "fomc.csv").is_file(),
    reason=f"no reference lists in {REFERENCE_DIR}",
)


def _reference(event: str) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(pd.read_csv(REFERENCE_DIR / "events" / f"{event}.csv")["date"])


def _trading_dates(minutes: pd.DataFrame) -> pd.DatetimeIndex:
    stamps = minutes["timestamp"]
    dates = stamps.dt.normalize() + pd.to_timedelta((stamps.dt.hour >= 18).astype(int), unit="D")
    return pd.DatetimeIndex(dates.unique()).sort_values()


def _said(result, words: str) -> list[str]:
    return [w for w in result.metadata.warnings if words in w]


def test_a_month_without_the_event_says_it_had_none(engine_settings, minutes) -> None:
    """ "Was there an FOMC decision in February 2024?" The month's bars were scanned and
    none was an FOMC day: said with the month's trading days, not "no bars"."""
    days = _trading_dates(minutes)
    february = days[(days >= "2024-02-01") & (days <= "2024-02-29")]
    fomc = _reference("fomc")
    assert not fomc.isin(february).any() and fomc.isin(days).sum() == 2  # 01-31, 03-20
    query = {"session": "ETH", "from": "daily", "period": "2024-02",
             "join": {"source": "fomc", "filter": "only"}, "select": "count()"}  # fmt: skip
    result = ask(query, engine_settings)
    meta = result.metadata
    assert result.summary.value == 0 and meta.rows_matched == 0
    assert meta.rows_scanned == len(february)
    assert (meta.period_start, meta.period_end) == (february[0].date(), february[-1].date())
    assert meta.warnings == [f"February 2024 had {len(february)} trading days, none an FOMC day."]


def test_the_last_bars_without_the_event_say_how_to_ask_for_its_last_days(
    engine_settings, minutes
) -> None:
    """last_5_bars is the last 5 trading days (2024-03-22 to 2024-03-28 here), none of them
    an FOMC day: said, with the form that lists the last 5 FOMC days."""
    days = _trading_dates(minutes)
    last = days[-5:]
    assert not _reference("fomc").isin(last).any()
    query = {"session": "ETH", "from": "daily", "period": "last_5_bars",
             "join": {"source": "fomc", "filter": "only"}, "select": ["range"]}  # fmt: skip
    result = ask(query, engine_settings)
    assert result.metadata.rows_scanned == 5
    assert result.metadata.warnings == [
        f"The period last_5_bars ({last[0]:%Y-%m-%d} — {last[-1]:%Y-%m-%d}) had 5 trading days, "
        "none an FOMC day; for the last 5 FOMC days leave the period out and sort by date "
        'descending: "sort": "date desc", "limit": 5.'
    ]
    # That form lists them: the reference's FOMC days in the data, latest first.
    listed = ask({**query, "period": "all", "sort": "date desc", "limit": 5}, engine_settings)
    fomc = _reference("fomc")
    assert listed.table["date"].tolist() == [f"{d:%Y-%m-%d}" for d in fomc[fomc.isin(days)][::-1]]
    # Seven bars hold 2024-03-20: a row, and nothing said of days without one.
    seven = ask({**query, "period": "last_7_bars"}, engine_settings)
    assert seven.table["date"].tolist() == ["2024-03-20"] and seven.metadata.warnings == []


def test_a_day_the_exclude_filter_leaves_out_is_said(engine_settings) -> None:
    query = {"session": "ETH", "from": "daily", "period": "2024-01-31",
             "join": {"source": "fomc", "filter": "exclude"}, "select": "count()"}  # fmt: skip
    assert "2024-01-31" in _reference("fomc").strftime("%Y-%m-%d")
    result = ask(query, engine_settings)
    assert result.metadata.warnings == [
        '2024-01-31 had 1 trading day, an FOMC day, which "filter": "exclude" leaves out.'
    ]


@pytest.fixture(scope="module")
def closes_early(
    tmp_path_factory: pytest.TempPathFactory, minutes: pd.DataFrame
) -> tuple[EngineSettings, pd.DataFrame]:
    """The hand-made bars with their last bar at 13:14 on ``EARLY_CLOSES``."""
    stamps = minutes["timestamp"]
    dates = stamps.dt.strftime("%Y-%m-%d")
    late = dates.isin(EARLY_CLOSES) & (stamps.dt.hour * 60 + stamps.dt.minute >= 13 * 60 + 15)
    minutes = minutes[~late.to_numpy()].reset_index(drop=True)
    settings = EngineSettings(data_dir=tmp_path_factory.mktemp("early"))
    write_minutes(minutes, "NQ", settings, "hand-made bars with three early closes")
    return settings, minutes


def _without_window_bars(minutes: pd.DataFrame, start: str, end: str) -> pd.DatetimeIndex:
    """The trading dates with no bar in the window (``start`` to ``end``, on one day)."""
    days = _trading_dates(minutes)
    clock = minutes["timestamp"].dt.strftime("%H:%M")
    inside = minutes["timestamp"][(clock >= start) & (clock < end)].dt.normalize()
    return days.difference(pd.DatetimeIndex(inside.unique()))


def test_early_closes_are_said_of_the_event_days_kept_only(closes_early) -> None:
    """FOMC days in 14:00-17:00: the early closes of other days are no row the result would
    have held; a decision day that closed early is."""
    settings, minutes = closes_early
    missing = _without_window_bars(minutes, "14:00", "17:00")
    assert missing.strftime("%Y-%m-%d").tolist() == list(EARLY_CLOSES)
    fomc = _reference("fomc")
    query = {"session": "14:00-17:00", "from": "daily", "period": "2024-01-02:2024-02-29",
             "join": {"source": "fomc", "filter": "only"}, "map": {"move": "close - open"},
             "select": ["move"]}  # fmt: skip
    result = ask(query, settings)
    assert result.table["date"].tolist() == ["2024-01-31"]
    assert _said(result, "no bars in") == []
    # The other days: the two early closes are theirs, and said.
    others = ask({**query, "join": {"source": "fomc", "filter": "exclude"}}, settings)
    early = missing[~missing.isin(fomc) & (missing <= "2024-02-29")]
    assert len(early) == 2
    assert _said(others, "no bars in") == [
        f"2 trading days have no bars in 14:00-17:00 (the futures closed at 13:15, e.g. "
        f"{early[0]:%Y-%m-%d}): the result holds none of them."
    ]
    # A decision day that closed early is a row the answer lacks: said, as is a where's.
    whole = ask({**query, "period": "2024"}, settings)
    kept_missing = missing[missing.isin(fomc)]
    assert whole.table["date"].tolist() == ["2024-01-31"]
    said = (
        f"1 trading day has no bars in 14:00-17:00 (the futures closed at 13:15, e.g. "
        f"{kept_missing[0]:%Y-%m-%d}): the result holds no row of it."
    )
    assert _said(whole, "no bars in") == [said]
    where = {**query, "period": "2024", "join": "fomc", "where": "fomc"}
    assert _said(ask(where, settings), "no bars in") == [said]
    assert np.isin(kept_missing, fomc).all()
