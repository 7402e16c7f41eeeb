"""Frames built per query from the trading dates they read are the rows of the whole-history
frame they stand for, and the frames kept per process share the mapped minute columns."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from barb.frames import MINUTE_OF_DAY, get_dataset
from barb.interpreter import execute, plan_query
from barb.period_rows import _cached_rows, _sliced_rows
from barb.script.query import parse_query
from barb.settings import EngineSettings

SLICED = [
    ("ETH", "1m"),
    ("RTH", "1m"),
    ("OVERNIGHT", "1m"),
    ("09:30-09:45", "1m"),
    ("10:00-11:30", "5m"),
    ("RTH", "5m"),
    ("ETH", "5m"),
]


@pytest.mark.parametrize(("session", "timeframe"), SLICED)
def test_frames_for_days_are_the_rows_of_the_whole_history(
    engine_settings: EngineSettings, session: str, timeframe: str
) -> None:
    dataset = get_dataset("NQ", engine_settings)
    assert dataset.sliced(session, timeframe)
    whole = dataset.frame(session, timeframe)
    index = dataset.day_index(session, timeframe)

    # The index counts each trading date's bars as the whole-history frame has them.
    dates, counts = np.unique(whole["trading_date"].to_numpy(), return_counts=True)
    np.testing.assert_array_equal(index.dates, dates)
    np.testing.assert_array_equal(np.diff(index.starts), counts)
    assert index.rows == len(whole)

    rng = np.random.default_rng(3)
    ranges = [(0, len(dates)), (0, 1), (len(dates) - 1, len(dates)), (5, 5)]
    ranges += [tuple(sorted(rng.integers(0, len(dates) + 1, 2))) for _ in range(8)]
    for first, stop in ranges:
        part = dataset.frame_for_days(session, timeframe, int(first), int(stop))
        expected = whole.iloc[index.starts[first] : index.starts[stop]].reset_index(drop=True)
        pd.testing.assert_frame_equal(part, expected, check_index_type=False)


QUERIES: list[dict[str, Any]] = [
    {"session": "ETH", "from": "1m", "group_by": "hour()", "select": "mean(volume)"},
    {"session": "ETH", "from": "1m", "period": "2024-02-06", "select": "max(range)"},
    {"session": "RTH", "from": "1m", "select": "count()"},
    {"session": "RTH", "from": "1m", "period": "2024-02", "select": "mean(range)"},
    {"session": "RTH", "from": "1m", "period": "2024-01-15", "select": "count()"},  # holiday
    {"session": "RTH", "from": "1m", "period": "2024-02-05:2024-02-07", "select": "count()"},
    {
        "session": "RTH",
        "from": "1m",
        "period": "2024-03-04",
        "map": {"e": "ema(close, 600)"},  # warm-up reaches back over two trading dates
        "select": "mean(e)",
    },
    {
        "session": "RTH",
        "from": "1m",
        "period": "2024-02-01",
        "map": {"n": "next(close, 30)"},  # reaches into the next date
        "select": "mean(n)",
    },
    {"session": "RTH", "from": "1m", "period": "last_500_bars", "select": "mean(close)"},
    {"session": "RTH", "from": "1m", "period": "2024-03-25:2024-04-30", "select": "count()"},
    {"session": "RTH", "from": "1m", "period": "2024-02-03", "select": "count()"},  # Saturday
    {
        "session": "RTH",
        "from": "5m",
        "period": "2024-02",
        "map": {"vw": "vwap()"},
        "select": "mean(close > vw)",
    },
    {"session": "09:30-09:45", "from": "1m", "period": "2024-03", "select": "mean(range)"},
    {
        "session": "10:00-11:30",
        "from": "5m",
        "period": "2024-02-12:2024-02-16",
        "map": {"r": "rsi(close, 14)"},
        "select": "mean(r)",
    },
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: f"{q['session']} {q.get('period')}")
def test_sliced_rows_equal_the_cached_slice(
    engine_settings: EngineSettings, query: dict[str, Any]
) -> None:
    plan = plan_query(parse_query(query).with_instrument("NQ"), "NQ", engine_settings)
    sliced, cached = _sliced_rows(plan), _cached_rows(plan)
    pd.testing.assert_frame_equal(sliced.frame, cached.frame)
    np.testing.assert_array_equal(sliced.in_period, cached.in_period)
    assert cached.cut == ()


def test_minute_bars_are_not_kept_and_eth_minutes_are_views_of_the_mapped_columns(
    engine_settings: EngineSettings,
) -> None:
    dataset = get_dataset("NQ", engine_settings)
    for session in ("RTH", "ETH"):
        result = execute(
            {"session": session, "from": "1m", "period": "2024-02", "select": "count()"},
            "NQ",
            settings=engine_settings,
        )
        assert result.ok
        assert (session, "1m") not in dataset._frames

    index = dataset.day_index("ETH", "1m")
    eth = dataset.frame_for_days("ETH", "1m", 0, len(index.dates))
    minutes = dataset.bars.frame
    for name in ("timestamp", "open", "high", "low", "close", "volume", "trading_date"):
        assert np.shares_memory(eth[name].to_numpy(), minutes[name].to_numpy()), name
    assert np.shares_memory(eth[MINUTE_OF_DAY].to_numpy(), minutes["minute"].to_numpy())
    # The one column that would be new memory is built only for the queries that read it.
    assert "range" not in eth.columns


RANGE_READ: list[tuple[dict[str, Any], bool]] = [
    ({"group_by": "hour()", "select": "mean(volume)"}, False),
    (
        {"map": {"body": "close - open"}, "where": "body > 0", "select": ["timestamp", "body"]},
        False,
    ),
    ({"select": ["timestamp", "close"], "sort": "range desc", "limit": 3}, True),
    ({"where": "nr7()", "group_by": "hour()", "select": "count()"}, True),  # a pattern's body
    ({"group_by": "hour()", "select": "max(range)"}, True),
    ({"select": "count()"}, True),  # the rows behind a number are shown whole
    ({"limit": 5}, True),  # so are bars selected whole
]


@pytest.mark.parametrize(("clauses", "reads"), RANGE_READ, ids=lambda v: str(v)[:40])
def test_minute_bars_get_their_range_when_the_query_reads_or_shows_it(
    engine_settings: EngineSettings, db, clauses: dict[str, Any], reads: bool
) -> None:
    query = {"session": "RTH", "from": "1m", "period": "2024-02-06", **clauses}
    plan = plan_query(parse_query(query).with_instrument("NQ"), "NQ", engine_settings)
    assert plan.reads_range is reads
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.error
    if "sort" in clauses:  # the day's three widest bars, by DuckDB
        widest = db.execute(
            "SELECT close FROM bars WHERE tdate = '2024-02-06' AND mod >= 570 "
            "AND mod < 1020 ORDER BY high - low DESC, timestamp LIMIT 3"
        ).fetchall()
        assert result.table["close"].tolist() == [row[0] for row in widest]
    if "limit" in clauses and "sort" not in clauses:  # the day's first five bars, by DuckDB
        first = db.execute(
            "SELECT high - low FROM bars WHERE tdate = '2024-02-06' AND mod >= 570 "
            "AND mod < 1020 ORDER BY timestamp LIMIT 5"
        ).fetchall()
        assert result.table["range"].tolist() == [row[0] for row in first]


def test_an_intraday_join_reads_only_the_other_instruments_dates(
    engine_settings: EngineSettings,
) -> None:
    from barb.period_rows import _other_bars
    from barb.timeframes import timeframe

    dataset = get_dataset("NQ", engine_settings)
    whole = dataset.frame("RTH", "1m")
    dates = whole["trading_date"].to_numpy()
    some = dates[(dates >= np.datetime64("2024-02-05")) & (dates <= np.datetime64("2024-02-09"))]

    bars = _other_bars(dataset, "RTH", timeframe("1m"), some)

    expected = whole[
        (whole["trading_date"] >= "2024-02-05") & (whole["trading_date"] <= "2024-02-09")
    ]
    pd.testing.assert_frame_equal(bars, expected.reset_index(drop=True))


def test_recent_frames_are_kept_within_their_budget(
    engine_settings: EngineSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from barb import frames

    dataset = get_dataset("NQ", engine_settings)
    dataset._recent.clear()
    first = dataset.frame_for_days("RTH", "1m", 0, 3)
    assert dataset.frame_for_days("RTH", "1m", 0, 3) is first
    columns = list(first.columns)

    # A query that adds columns works on its own shallow copy: the kept frame is unchanged.
    days = dataset.day_index("RTH", "1m").dates
    period = ":".join(str(d.astype("datetime64[D]")) for d in (days[0], days[2]))
    result = execute(
        {"session": "RTH", "from": "1m", "period": period, "map": {"x": "close * 2"}},
        "NQ",
        settings=engine_settings,
    )
    # The query read the kept frame, and its table of every column the range beside it:
    # kept too, the same bars with high - low after volume, for the next such question.
    assert list(dataset._recent) == [("RTH", "1m", 0, 3, False), ("RTH", "1m", 0, 3, True)]
    assert result.ok
    assert list(first.columns) == columns
    ranged = dataset.frame_for_days("RTH", "1m", 0, 3, ranged=True)
    at = columns.index("volume") + 1
    assert list(ranged.columns) == [*columns[:at], "range", *columns[at:]]
    pd.testing.assert_frame_equal(ranged[columns], first)
    assert (ranged["range"] == first["high"] - first["low"]).all()

    dataset._recent.clear()
    first = dataset.frame_for_days("RTH", "1m", 0, 3)
    monkeypatch.setattr(frames, "RECENT_BYTES", frames._private_bytes(first) + 1)
    dataset.frame_for_days("RTH", "1m", 3, 6)
    assert ("RTH", "1m", 0, 3, False) not in dataset._recent
    assert ("RTH", "1m", 3, 6, False) in dataset._recent
    everything = dataset.frame_for_days("RTH", "1m", 0, len(days))
    assert ("RTH", "1m", 0, len(days), False) not in dataset._recent  # larger than the budget
    assert len(everything) == dataset.day_index("RTH", "1m").rows
