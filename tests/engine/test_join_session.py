"""A join that names its own session on daily bars: "CL's overnight move vs NQ's RTH move"
had no query, as the join read CL in the query's session (its RTH, 09:00-14:30).

Two hand-made markets: "NQ" trades a Good Friday session CL lacks, "CL" a Monday NQ is
shut. Expected values come from pandas over the raw minutes: NQ's 09:30-17:00 bars and CL's
18:00-09:00 bars per trading date, joined on the dates both have.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from asking import ask
from small_bars import bars_from_closes, write_minutes

from barb import execute
from barb.settings import EngineSettings

GOOD_FRIDAY = dt.date(2024, 3, 29)  # NQ trades, CL does not
NQ_SHUT = dt.date(2024, 4, 15)  # CL trades, NQ does not


def _minutes(symbol: str, seed: int, price: float) -> pd.DataFrame:
    """Every minute of each weekday's ETH session (18:00 the evening before to 17:00), but
    the day ``symbol`` does not trade."""
    rng = np.random.default_rng(seed)
    stamps = [
        pd.date_range(
            day - pd.Timedelta(hours=6), day + pd.Timedelta(hours=17), freq="1min", inclusive="left"
        )
        for day in pd.bdate_range("2024-02-01", "2024-04-30")
        if day.date() != (GOOD_FRIDAY if symbol == "CL" else NQ_SHUT)
    ]
    ts = stamps[0].append(stamps[1:])
    close = price * np.exp(np.cumsum(rng.normal(0, 0.001, len(ts))))
    return bars_from_closes(ts, close, rng.integers(1, 500, len(ts)), up=0.0, down=0.0)


@pytest.fixture(scope="module")
def markets(tmp_path_factory: pytest.TempPathFactory) -> tuple[EngineSettings, dict]:
    data_dir: Path = tmp_path_factory.mktemp("two_markets")
    settings = EngineSettings(data_dir=data_dir)
    raw = {"NQ": _minutes("NQ", 7, 17000.0), "CL": _minutes("CL", 11, 80.0)}
    for symbol, minutes in raw.items():
        write_minutes(minutes, symbol, settings, "hand-made bars of two markets")
    return settings, raw


def _window(minutes: pd.DataFrame, start: str, end: str) -> pd.DataFrame:
    """Open and close per trading date (the date of the timestamp six hours later) of the
    minutes from ``start`` to ``end`` (clock times; across midnight when start > end)."""
    ts = pd.DatetimeIndex(minutes["timestamp"])
    clock = ts.strftime("%H:%M")
    inside = (clock >= start) & (clock < end) if start < end else (clock >= start) | (clock < end)
    kept = minutes[inside]
    day = (pd.DatetimeIndex(kept["timestamp"]) + pd.Timedelta(hours=6)).normalize()
    return kept.groupby(day).agg(open=("open", "first"), close=("close", "last"))


def test_cl_overnight_beside_nq_rth_matches_pandas(markets) -> None:
    settings, raw = markets
    nq = _window(raw["NQ"], "09:30", "17:00")
    cl = _window(raw["CL"], "18:00", "09:00")
    both = nq.join(cl, rsuffix="_cl", how="inner")
    both = both.loc["2024-03-01":"2024-04-30"]
    nq_move = both["close"] / both["open"] - 1
    cl_move = both["close_cl"] / both["open_cl"] - 1
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-03-01:2024-04-30",
            "join": {"instrument": "CL", "session": "OVERNIGHT"},
            "map": {"nq_rth": "close / open - 1", "cl_night": "cl_close / cl_open - 1"},
            "select": ["correlation(cl_night, nq_rth)", "count()", "mean(cl_night)"],
        },
        settings,
        "NQ",
    )
    assert result.summary.values["count"] == len(both)
    assert GOOD_FRIDAY not in both.index.date and NQ_SHUT not in both.index.date
    assert result.summary.values["correlation_cl_night_nq_rth"] == pytest.approx(
        nq_move.corr(cl_move)
    )
    assert result.summary.values["mean_cl_night"] == pytest.approx(cl_move.mean())
    warnings = " ".join(result.metadata.warnings)
    assert "CL's bars are its OVERNIGHT (18:00-09:00)" in warnings
    # Asked for: not the warning that a session name has other hours on CL.
    assert "cover different hours" not in warnings


def test_a_join_s_evening_window_says_it_is_the_evening_before(markets) -> None:
    """CL's 20:00-02:00 beside NQ's RTH day is the night before it (the date's Globex
    evening), which the window's text does not say; it was "its 20:00-02:00 (20:00-02:00)"."""
    settings, raw = markets
    nq = _window(raw["NQ"], "09:30", "17:00")
    cl = _window(raw["CL"], "20:00", "02:00")
    both = nq.join(cl, rsuffix="_cl", how="inner").loc["2024-03-01":"2024-04-30"]
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024-03-01:2024-04-30",
            "join": {"instrument": "CL", "session": "20:00-02:00"},
            "map": {"cl_night": "cl_close / cl_open - 1"},
            "select": ["mean(cl_night)", "count()"],
        },
        settings,
        "NQ",
    )
    assert result.summary.values["count"] == len(both)
    assert result.summary.values["mean_cl_night"] == pytest.approx(
        (both["close_cl"] / both["open_cl"] - 1).mean()
    )
    assert (
        "CL's bars are its 20:00-02:00, from the evening before each date, matched to NQ's "
        "RTH (09:30-17:00) bars by date"
    ) in " ".join(result.metadata.warnings)


def test_a_join_session_on_intraday_bars_is_an_error(markets) -> None:
    """Intraday bars are matched on their time: another session's share none."""
    settings, _ = markets
    query = {
        "session": "RTH",
        "from": "1h",
        "join": {"instrument": "CL", "session": "OVERNIGHT"},
        "select": "count()",
    }
    result = execute(query, "NQ", settings=settings)
    assert not result.ok
    error = result.to_dict()
    assert error["step"] == "join" and "daily or longer" in error["message"]


def test_a_join_session_the_instrument_lacks_is_the_join_s_error(markets) -> None:
    settings, _ = markets
    query = {"session": "RTH", "from": "daily", "join": {"instrument": "CL", "session": "CASH"}}
    error = execute({**query, "select": "count()"}, "NQ", settings=settings).to_dict()
    assert error["error_type"] == "UnknownSession" and error["step"] == "join"


def test_a_join_naming_the_query_s_own_session_reads_as_a_plain_join(markets) -> None:
    """{"instrument": "CL", "session": "RTH"} under RTH is the plain join: not said to be
    "a different session", and warned of CL's other RTH hours as a plain join is."""
    settings, _ = markets
    query = {"session": "RTH", "from": "daily", "select": "mean(cl_close)"}
    plain = ask({**query, "join": {"instrument": "CL"}}, settings, "NQ")
    named = ask({**query, "join": {"instrument": "CL", "session": "rth"}}, settings, "NQ")
    assert named.summary.value == plain.summary.value
    assert named.metadata.warnings == plain.metadata.warnings
    assert "RTH is 09:30-17:00 for NQ but 09:00-14:30 for CL" in " ".join(named.metadata.warnings)
