"""What a half day's and a holiday's answers say (p47b): a where on a time of day after an
early close gets the close as its reason, and a crude-oil holiday warning speaks of its
own exchange, not of the stock market. Hand-made minute bars around Thanksgiving 2024 (the
28th closes at 13:00, the 29th at 13:15), written as NQ and as CL; expected values from
pandas over the same bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import ask, warnings_with
from small_bars import bars_from_closes, session_stamps, write_minutes

from barb.settings import EngineSettings

CLOSES = {"2024-11-28": "13:00", "2024-11-29": "13:15"}


def _minutes() -> pd.DataFrame:
    rng = np.random.default_rng(47)
    ts = session_stamps("2024-11-20", "2024-12-04", CLOSES)
    n = len(ts)
    close = np.round((20000 + np.cumsum(rng.choice([-1.0, 0.0, 1.0], n) * 2.25)) * 4) / 4
    return bars_from_closes(ts, close, rng.integers(1, 300, n))


@pytest.fixture(scope="module")
def bars() -> pd.DataFrame:
    bars = _minutes()
    stamp = bars["timestamp"]
    bars["date"] = (stamp + pd.Timedelta(hours=6)).dt.normalize()  # from 18:00: the next day
    bars["clock"] = stamp.dt.strftime("%H:%M")
    return bars


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, bars) -> EngineSettings:
    settings = EngineSettings(data_dir=tmp_path_factory.mktemp("half_days"))
    raw = bars.drop(columns=["date", "clock"])
    write_minutes(raw, "NQ", settings, "Thanksgiving 2024, hand-made")
    write_minutes(raw, "CL", settings, "Thanksgiving 2024, hand-made")
    return settings


def _said(result) -> list[str]:
    return warnings_with(result, "closed earlier")


def test_a_time_after_an_early_close_says_the_close(settings, bars) -> None:
    """p47b #30: "the 15:59 bar on the day after Thanksgiving" read only "No bars matched"."""
    friday = bars[bars["date"] == "2024-11-29"]
    assert friday["clock"].iloc[-1] == "13:14" and not (friday["clock"] == "15:59").any()
    query = {"from": "1m", "period": "2024-11-29", "where": "time() == '15:59'"}
    result = ask(query, settings, session="ETH")
    assert len(result.table) == 0
    assert _said(result) == [
        "No bar at 15:59 on 2024-11-29 (early close, closed 13:15): that session closed "
        'earlier. Its last price is the daily close ("from": "daily").'
    ]


def test_an_hour_after_both_short_closes_names_both(settings, bars) -> None:
    days = bars[bars["date"].isin(pd.to_datetime(["2024-11-28", "2024-11-29"]))]
    assert not (days["timestamp"].dt.hour.between(14, 16)).any()
    query = {"from": "5m", "period": "2024-11-28:2024-11-29", "where": "hour() >= 14"}
    result = ask(query, settings, session="RTH")
    assert _said(result) == [
        "No bars at or after 14:00 on 2024-11-28 (holiday, closed 13:00), 2024-11-29 (early "
        "close, closed 13:15): those sessions closed earlier. Their last price is the daily "
        'close ("from": "daily").'
    ]


@pytest.mark.parametrize(
    "query",
    [
        # A full day, empty for another reason.
        {"period": "2024-11-26", "where": "time() == '15:59' and close > 1e9"},
        # The half day, at a time it traded.
        {"period": "2024-11-29", "where": "time() == '12:00' and close > 1e9"},
        # Not a time of day.
        {"period": "2024-11-29", "where": "close > 1e9"},
    ],
)
def test_other_empty_results_say_no_close(settings, bars, query) -> None:
    result = ask({"from": "1m"} | query, settings, session="ETH")
    assert len(result.table) == 0 and _said(result) == []


def test_a_week_emptied_by_another_condition_blames_no_close(settings, bars) -> None:
    """r47c bug 5: the Thanksgiving week's full days had a 15:59 bar; "volume < 0" emptied
    the result, and the two short days' closes had been given as its reason."""
    week = bars[bars["date"].between("2024-11-25", "2024-11-29")]
    at = week[week["clock"] == "15:59"]
    assert sorted(at["date"].dt.day.unique()) == [25, 26, 27] and (at["volume"] > 0).all()
    query = {
        "from": "1m",
        "period": "2024-11-25:2024-11-29",
        "where": "time() == '15:59' and volume < 0",
    }
    result = ask(query, settings, session="ETH")
    assert len(result.table) == 0 and _said(result) == []


def test_a_crude_holiday_warning_speaks_of_its_exchange(settings, bars) -> None:
    """p47b #8: CL's day after Thanksgiving said "the stock market was shut", beside the
    point for crude. The return itself is from the holiday's own close."""
    query = {
        "from": "daily",
        "period": "2024-11-29",
        "map": {"ret": "(close / prev(close) - 1) * 100"},
        "select": ["close", "ret"],
    }
    rth = bars[(bars["clock"] >= "09:00") & (bars["clock"] < "14:30")]
    close = rth.groupby("date")["close"].last()
    cl = ask(query, settings, "CL", session="RTH")
    assert cl.table["ret"].iloc[0] == pytest.approx(
        (close["2024-11-29"] / close["2024-11-28"] - 1) * 100
    )
    [said] = warnings_with(cl, "follows a US holiday session")
    assert said == (
        "1 of the 1 rows kept follows a US holiday session (2024-11-29 after 2024-11-28, "
        "closed 13:00): prev(close) there is the holiday's own close (NYMEX trades short hours "
        "on US holidays), not the last full session's close. From that close: "
        "if(prev(holiday()), session_close('RTH', 2), prev(close))."
    )
    nq = ask(query, settings, "NQ", session="RTH")
    [said] = warnings_with(nq, "follows a US holiday session")
    assert "the stock market was shut), not the last stock-market close" in said


# CL in January 2025: the national day of mourning (the 9th) traded a full day to 17:00,
# MLK day (the 20th) stopped at 14:30, the end of CL's RTH (09:00-14:30).
CRUDE_CLOSES = {"2025-01-09": "17:00", "2025-01-20": "14:30"}


@pytest.fixture(scope="module")
def crude(tmp_path_factory: pytest.TempPathFactory) -> tuple[EngineSettings, pd.DataFrame]:
    rng = np.random.default_rng(48)
    ts = session_stamps("2025-01-06", "2025-01-24", CRUDE_CLOSES)
    close = np.round((75 + np.cumsum(rng.choice([-1.0, 0.0, 1.0], len(ts)) * 0.02)) * 100) / 100
    bars = bars_from_closes(ts, close, rng.integers(1, 300, len(ts)), up=0.01, down=0.01)
    settings = EngineSettings(data_dir=tmp_path_factory.mktemp("crude_holidays"))
    write_minutes(bars, "CL", settings, "January 2025, hand-made")
    bars["date"] = (bars["timestamp"] + pd.Timedelta(hours=6)).dt.normalize()
    bars["clock"] = bars["timestamp"].dt.strftime("%H:%M")
    return settings, bars


def _short_holidays(bars: pd.DataFrame, last_minute: str) -> list[str]:
    """The holiday sessions (the 9th, the 20th) whose last bar comes before the session's
    last minute: the ones a prev(close) after them reads short."""
    last = bars.groupby("date")["timestamp"].max().dt.strftime("%H:%M")
    return [day for day in ("2025-01-09", "2025-01-20") if last[day] < last_minute]


def test_a_crude_holiday_that_traded_its_session_whole_is_not_said(crude) -> None:
    """p48f M2: CL's RTH gaps said "NYMEX trades short hours on US holidays" for 2025-01-10
    (after the 9th, a full day to 17:00) and 2025-01-21 (MLK, to 14:30: RTH whole), and
    proposed session_close('RTH', 2), which skips a whole session."""
    settings, bars = crude
    assert _short_holidays(bars, "14:29") == []  # both reach RTH's last minute
    query = {
        "from": "daily",
        "period": "2025-01-06:2025-01-24",
        "map": {"gap": "open - prev(close)"},
        "select": ["gap"],
    }
    rth = ask(query, settings, "CL", session="RTH")
    assert len(rth.table) == 15
    assert warnings_with(rth, "US holiday session") == []


def test_a_crude_holiday_short_in_its_session_is_said(crude) -> None:
    """On ETH (to 17:00) MLK's 14:30 stop is short, the 9th's full day is not: only the
    21st is said, among the rows after a holiday."""
    settings, bars = crude
    assert _short_holidays(bars, "16:59") == ["2025-01-20"]
    query = {
        "from": "daily",
        "period": "2025-01-06:2025-01-24",
        "map": {"gap": "open - prev(close)"},
        "where": "post_holiday()",
        "select": ["gap"],
    }
    eth = ask(query, settings, "CL", session="ETH")
    assert list(eth.table["date"].astype(str)) == ["2025-01-10", "2025-01-21"]
    [said] = warnings_with(eth, "US holiday session")
    assert "(2025-01-21 after 2025-01-20, closed 14:30)" in said
    assert "2025-01-10" not in said


def test_a_next_day_return_is_judged_by_the_day_it_reads(settings, bars) -> None:
    """p48f M3: next(close) / close - 1 listed in time order said "2024-11-28 (holiday),
    2024-11-29 (early close) ...: their next_ret is a part day's"; the 29th's runs to the
    full 2 December. The rows whose next() reads a short session are the ones said."""
    query = {
        "from": "daily",
        "period": "2024-11-25:2024-12-03",
        "map": {"next_ret": "(next(close) / close - 1) * 100"},
        "select": ["close", "next_ret"],
    }
    result = ask(query, settings, "NQ", session="RTH")
    rth = bars[(bars["clock"] >= "09:30") & (bars["clock"] < "17:00")]
    last = rth.groupby("date")["clock"].max()
    close = rth.groupby("date")["close"].last()
    expected = ((close.shift(-1) / close - 1) * 100)["2024-11-25":"2024-12-03"]
    assert result.table["next_ret"].to_numpy() == pytest.approx(expected.to_numpy())
    short = last.index[last < "16:59"]  # RTH's last minute is 16:59
    after = [last.index[last.index > day][0] for day in expected.index]
    reads_short = [
        f"{day:%Y-%m-%d}" for day, nxt in zip(expected.index, after, strict=True) if nxt in short
    ]
    assert reads_short == ["2024-11-27", "2024-11-28"]
    assert warnings_with(result, "part day's") == []
    [said] = warnings_with(result, "next(close) reads a short session")
    assert f"e.g. {reads_short[0]} reads {reads_short[1]}" in said
