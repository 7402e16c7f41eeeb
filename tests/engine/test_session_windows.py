"""Time-window sessions ('09:30-09:45'), CASH/CASH_CLOSE, and their errors, against DuckDB SQL
over the same hand-made minute bars (engine/conftest.py)."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

from barb import execute, render_summary
from barb import frames as frames_module
from barb.errors import InvalidSession, UnknownSession
from barb.frames import get_dataset
from barb.instruments import load_instrument
from barb.reference import query_reference
from barb.settings import EngineSettings

DAILY_SQL = """
    SELECT CAST(tdate AS TIMESTAMP) AS timestamp,
           arg_min(open, timestamp) AS open, max(high) AS high, min(low) AS low,
           arg_max(close, timestamp) AS close, CAST(sum(volume) AS BIGINT) AS volume,
           max(high) - min(low) AS range
    FROM bars WHERE {where} GROUP BY tdate ORDER BY tdate
"""


def run(query: dict, settings: EngineSettings):
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def table(query: dict, settings: EngineSettings) -> pd.DataFrame:
    result = run(query, settings)
    assert result.table is not None
    return result.table


def compare(actual: pd.DataFrame, expected: pd.DataFrame) -> None:
    actual = actual[list(expected.columns)].reset_index(drop=True)
    expected = expected.astype({c: actual[c].dtype for c in expected.columns})
    assert_frame_equal(actual, expected, check_dtype=False)


@pytest.mark.parametrize(
    ("session", "where"),
    [
        ("09:30-09:45", "mod >= 570 AND mod < 585"),  # the 15-minute opening range
        ("9:30-10:30", "mod >= 570 AND mod < 630"),  # the initial balance, loosely written
        ("14:00-14:30", "mod >= 840 AND mod < 870"),
        ("20:00-02:00", "(mod >= 1200 OR mod < 120)"),  # crosses midnight
        ("18:00-17:00", "TRUE"),  # the whole trading day
        ("CASH", "mod >= 570 AND mod < 960"),
        ("CASH_CLOSE", "mod >= 930 AND mod < 960"),
    ],
)
def test_window_daily_bars_match_sql(session: str, where: str, engine_settings, db) -> None:
    actual = table({"session": session, "from": "daily"}, engine_settings)
    compare(actual, db.execute(DAILY_SQL.format(where=where)).df())


def test_opening_range_high_and_low_per_day(engine_settings, db) -> None:
    result = run(
        {"session": "09:30-09:45", "from": "daily", "select": ["mean(high)", "mean(low)"]},
        engine_settings,
    )
    want = db.execute(
        """SELECT avg(h) AS h, avg(l) AS l FROM (
               SELECT tdate, max(high) AS h, min(low) AS l FROM bars
               WHERE mod >= 570 AND mod < 585 GROUP BY tdate)"""
    ).fetchone()
    assert result.summary.values["mean_high"] == pytest.approx(want[0], rel=1e-12)
    assert result.summary.values["mean_low"] == pytest.approx(want[1], rel=1e-12)
    assert result.metadata.session == "09:30-09:45"


def test_a_window_across_midnight_belongs_to_the_date_it_ends(engine_settings, db) -> None:
    """Monday's 20:00-02:00 starts on Sunday evening and is labelled Monday."""
    query = {"session": "20:00-02:00", "from": "daily", "period": "2024-01-08"}
    bar = table(query, engine_settings)
    assert list(bar["timestamp"]) == [pd.Timestamp("2024-01-08")]
    sunday_2000, monday_0159 = db.execute(
        """SELECT max(CASE WHEN timestamp = TIMESTAMP '2024-01-07 20:00' THEN open END),
                  max(CASE WHEN timestamp = TIMESTAMP '2024-01-08 01:59' THEN close END)
           FROM bars"""
    ).fetchone()
    assert bar["open"].iloc[0] == sunday_2000
    assert bar["close"].iloc[0] == monday_0159


def test_an_evening_window_is_the_evening_before_its_date_and_says_so(engine_settings, db) -> None:
    """ "Yesterday evening 18:00-21:00" over period 2024-01-09 read Monday's evening, not
    Tuesday's: the window belongs to the next trading date, as the day's 18:00 open does. The
    label alone does not say it, so the line the model reads names the evening."""
    query = {"session": "18:00-21:00", "from": "daily", "period": "2024-01-09"}
    result = run(query, engine_settings)
    assert list(result.table["timestamp"]) == [pd.Timestamp("2024-01-09")]
    high, low = db.execute(
        """SELECT max(high), min(low) FROM bars
           WHERE timestamp >= TIMESTAMP '2024-01-08 18:00'
             AND timestamp < TIMESTAMP '2024-01-08 21:00'"""
    ).fetchone()
    assert result.table["range"].iloc[0] == high - low
    assert "daily 18:00-21:00 ET (the evening before each date) bar of NQ" in render_summary(result)
    across = run(
        {"session": "20:00-02:00", "from": "daily", "period": "2024-01-08"}, engine_settings
    )
    assert "(from the evening before each date)" in render_summary(across)
    morning = run(
        {"session": "09:30-09:45", "from": "daily", "period": "2024-01-08"}, engine_settings
    )
    assert "evening" not in render_summary(morning)
    rule = "one from 18:00 on, or crossing midnight, counts for the next trading date"
    assert rule in query_reference(load_instrument("NQ"))


def test_intraday_bars_of_a_window_align_to_its_start(engine_settings, db) -> None:
    actual = table(
        {"session": "20:00-02:00", "from": "1h", "period": "2024-02-05:2024-02-09"},
        engine_settings,
    )
    expected = db.execute(
        """
        WITH b AS (
            SELECT *, timestamp - to_minutes(CAST(((mod - 1200 + 1440) % 1440) % 60 AS BIGINT))
                   AS bucket
            FROM bars
            WHERE (mod >= 1200 OR mod < 120)
              AND tdate BETWEEN DATE '2024-02-05' AND DATE '2024-02-09'
        )
        SELECT bucket AS timestamp, arg_min(open, timestamp) AS open, max(high) AS high,
               min(low) AS low, arg_max(close, timestamp) AS close,
               CAST(sum(volume) AS BIGINT) AS volume, max(high) - min(low) AS range
        FROM b GROUP BY tdate, bucket ORDER BY bucket
        """
    ).df()
    compare(actual, expected)
    assert len(actual) == 5 * 6


def test_price_at_a_time_and_the_net_move_of_a_window(engine_settings, db) -> None:
    """'14:00-14:30' opens at the 14:00 price and closes at the 14:30 one (the 14:29 bar's
    close); the same answer as first/last over the 1-minute bars of that half hour."""
    window = table(
        {"session": "14:00-14:30", "from": "daily", "map": {"move": "close - open"}},
        engine_settings,
    )
    minutes = table(
        {
            "session": "RTH",
            "from": "1m",
            "where": "hour() == 14 and minute() < 30",
            "group_by": "date()",
            "select": ["first(open) as at_1400", "last(close) as at_1430"],
        },
        engine_settings,
    )
    sql = db.execute(
        """SELECT max(CASE WHEN mod = 840 THEN open END) AS at_1400,
                  max(CASE WHEN mod = 869 THEN close END) AS at_1430
           FROM bars GROUP BY tdate HAVING count(*) FILTER (WHERE mod = 840) > 0
           ORDER BY tdate"""
    ).df()
    assert list(window["open"]) == list(sql["at_1400"]) == list(minutes["at_1400"])
    assert list(window["close"]) == list(sql["at_1430"]) == list(minutes["at_1430"])
    assert list(window["move"]) == list(sql["at_1430"] - sql["at_1400"])


def test_cash_close_is_the_close_of_the_1559_bar(engine_settings, db) -> None:
    result = run(
        {
            "session": "RTH",
            "from": "daily",
            "map": {"cash": "session_close('CASH')", "post": "close - cash"},
            "select": "mean(post)",
        },
        engine_settings,
    )
    want = db.execute(
        """SELECT avg(rth_close - cash_close) FROM (
               SELECT tdate, max(CASE WHEN mod = 959 THEN close END) AS cash_close,
                      max(CASE WHEN mod = 1019 THEN close END) AS rth_close
               FROM bars GROUP BY tdate)"""
    ).fetchone()[0]
    assert result.summary.value == pytest.approx(want, rel=1e-12)


def test_window_sessions_work_in_session_functions(engine_settings, db) -> None:
    result = run(
        {
            "session": "RTH",
            "from": "daily",
            "map": {"or_high": "session_high('09:30-09:45')"},
            "select": "mean(high > or_high)",
        },
        engine_settings,
    )
    want = db.execute(
        """SELECT avg(CASE WHEN rth_high > or_high THEN 1 ELSE 0 END) FROM (
               SELECT tdate, max(high) FILTER (WHERE mod >= 570 AND mod < 1020) AS rth_high,
                      max(high) FILTER (WHERE mod >= 570 AND mod < 585) AS or_high
               FROM bars GROUP BY tdate)"""
    ).fetchone()[0]
    assert result.summary.value == pytest.approx(want, rel=1e-12)


def test_every_spelling_of_a_window_shares_one_cached_frame(engine_settings) -> None:
    spellings = ("09:30-09:45", "9:30-9:45", " 09:30 - 09:45 ", "09:30–09:45")
    for spelling in spellings:
        assert run({"session": spelling, "from": "daily"}, engine_settings).metadata.session == (
            "09:30-09:45"
        )
    frames = get_dataset("NQ", engine_settings)._frames
    assert ("09:30-09:45", "daily") in frames
    # Other windows (09:45-17:00) may be cached by other tests of this worker's dataset.
    assert not any(key[0] in spellings[1:] for key in frames)


def test_a_window_with_a_named_sessions_hours_is_that_session(engine_settings) -> None:
    for window, name in (("18:00-17:00", "ETH"), ("9:30-17:00", "RTH"), ("09:30-16:00", "CASH")):
        assert run({"session": window, "from": "daily"}, engine_settings).metadata.session == name


def test_only_the_latest_windows_daily_bars_are_kept(engine_settings, db, monkeypatch) -> None:
    monkeypatch.setattr(frames_module, "WINDOWS_KEPT", 2)
    frames = get_dataset("NQ", engine_settings)._frames
    windows = ("11:00-11:05", "11:05-11:10", "11:10-11:15")
    for window in windows:
        query = {"session": "RTH", "from": "daily", "map": {"h": f"session_high('{window}')"}}
        run(query, engine_settings)
    kept = {key[0] for key in frames}
    assert windows[0] not in kept and {windows[1], windows[2]} <= kept
    assert "RTH" in kept  # named sessions are never forgotten
    # A forgotten window is simply built again, with the same bars.
    actual = table({"session": windows[0], "from": "daily"}, engine_settings)
    compare(actual, db.execute(DAILY_SQL.format(where="mod >= 660 AND mod < 665")).df())


def test_intraday_bars_of_windows_are_not_kept(engine_settings) -> None:
    """Windows are open-ended: a process must not keep a minute frame for each one asked."""
    frames = get_dataset("NQ", engine_settings)._frames
    for window in ("10:00-16:00", "10:01-16:00", "10:02-16:00"):
        query = {"session": window, "from": "1m", "period": "2024-02", "select": "count()"}
        assert run(query, engine_settings).summary.value == 21 * (360 - int(window[3:5]))  # 21 days
    assert not any(key[0].startswith("10:0") and key[1] == "1m" for key in frames)


@pytest.mark.parametrize(
    ("session", "words"),
    [
        ("25:00-26:00", "25:00 is not a time of day"),
        ("09:30-09:30", "starts and ends at the same time"),
        ("9.30-10", "HH:MM-HH:MM"),
        ("09:30-", "HH:MM-HH:MM"),
        ("09:60-10:00", "09:60 is not a time of day"),
        ("16:30-18:30", "spans NQ's daily break"),  # runs through the 17:00 break
        ("17:00-18:00", "outside NQ's trading hours"),  # the break itself
        ("00:00-24:00", "spans NQ's daily break"),
    ],
)
def test_bad_windows_are_structured_errors(session: str, words: str, engine_settings) -> None:
    result = execute({"session": session, "from": "daily"}, "NQ", settings=engine_settings)
    assert not result.ok
    error = result.to_dict()
    assert error["error_type"] == "InvalidSession"
    assert error["step"] == "session"
    assert words in error["message"]
    assert any(h in error["hint"] for h in ("HH:MM-HH:MM", "e.g. '09:30-09:45'", "Split it"))
    assert "Internal error" not in error["message"]


def test_a_window_across_the_break_is_split_by_its_hint(engine_settings, db) -> None:
    """'16:00-00:00' (night in Moscow): the hint's two windows run, each on its own trading
    date, and count the minutes DuckDB finds in them."""
    error = execute({"session": "16:00-00:00", "from": "1m"}, "NQ", settings=engine_settings)
    hint = error.to_dict()["hint"]
    assert hint == (
        "Split it in two: '16:00-17:00' (the end of a trading date) and '18:00-00:00' (the "
        "evening of the next one)."
    )
    for window, lo, hi in (("16:00-17:00", 960, 1020), ("18:00-00:00", 1080, 1440)):
        query = {"session": window, "from": "1m", "select": "count()"}
        (expected,) = db.execute(
            f"SELECT count(*) FROM bars WHERE mod >= {lo} AND mod < {hi}"
        ).fetchone()
        assert run(query, engine_settings).summary.value == expected


def test_a_bad_window_inside_a_session_function_is_a_structured_error(engine_settings) -> None:
    query = {"session": "RTH", "from": "daily", "map": {"x": "session_high('25:00-26:00')"}}
    error = execute(query, "NQ", settings=engine_settings).to_dict()
    assert error["error_type"] == "InvalidSession"
    assert "25:00" in error["message"]


def test_an_unknown_name_lists_the_sessions_and_the_window_form(engine_settings) -> None:
    error = execute({"session": "RTHX"}, "NQ", settings=engine_settings).to_dict()
    assert error["error_type"] == "UnknownSession"
    assert "CASH" in error["message"] and "HH:MM-HH:MM" in error["message"]


def test_trading_hours_are_the_instruments_own() -> None:
    cl = load_instrument("CL")
    assert cl.session("09:00-09:15").end == "09:15"
    assert cl.session_key("rth_open") == "RTH_OPEN"
    assert "CASH" not in cl.sessions  # CL has pit hours, not a stock-market cash close
    for symbol in ("NQ", "ES"):
        spec = load_instrument(symbol).session("CASH")
        assert (spec.start, spec.end) == ("09:30", "16:00")
        rth = load_instrument(symbol).session("RTH")
        post = load_instrument(symbol).session("RTH_CLOSE")
        assert (rth.start, rth.end, post.start, post.end) == ("09:30", "17:00", "16:00", "17:00")


window_like = st.one_of(
    st.builds(
        lambda a, b, c, d, sep: f"{a}:{b:02d}{sep}{c}:{d:02d}",
        st.integers(0, 26),
        st.integers(0, 61),
        st.integers(0, 26),
        st.integers(0, 61),
        st.sampled_from(["-", " - ", "–", "_", ".."]),
    ),
    st.text(alphabet="0123456789:-. ", max_size=14),
)
BREAK = set(range(17 * 60, 18 * 60))


@given(text=window_like)
def test_any_window_text_resolves_inside_trading_hours_or_is_a_structured_error(text) -> None:
    nq = load_instrument("NQ")
    try:
        key = nq.session_key(text)
    except (InvalidSession, UnknownSession) as exc:
        assert exc.step == "session" and exc.hint
        return
    spec = nq.session(key)
    assert nq.session_key(key) == key  # the canonical spelling is stable
    start, end = (int(t[:2]) * 60 + int(t[3:]) for t in (spec.start, spec.end))
    minutes = {m % 1440 for m in range(start, end if end > start else end + 1440)}
    assert 0 < len(minutes) < 1440
    assert not minutes & BREAK  # never a bar of the maintenance break


@pytest.mark.slow
@pytest.mark.parametrize(
    ("symbol", "query", "warned"),
    [
        ("CL", {"session": "09:30-09:45"}, "'09:30-09:45'"),
        ("CL", {"session": "RTH", "map": {"h": "session_high('9:30-9:45')"}}, "'09:30-09:45'"),
        ("NQ", {"session": "RTH", "map": {"h": "session_low('09:00-09:15')"}}, "'09:00-09:15'"),
        ("CL", {"session": "09:00-09:15"}, None),
        ("NQ", {"session": "09:30-09:45", "map": {"h": "session_high('10:00-11:00')"}}, None),
    ],
)
def test_a_window_at_another_instruments_open_is_warned(
    symbol: str, query: dict, warned: str | None, sample_settings
) -> None:
    """NQ's opening range '09:30-09:45' written for CL starts 30 minutes into CL's RTH: the
    warning gives CL's own open and first 15 minutes."""
    result = execute(
        {**query, "from": "daily", "period": "2024-03", "select": "count()"},
        symbol,
        settings=sample_settings,
    )
    assert result.ok, result.to_dict()
    found = [w for w in result.metadata.warnings if "starts at the open of" in w]
    if warned is None:
        assert not found
        return
    own = load_instrument(symbol)
    opens = own.sessions["RTH"].start
    [warning] = found
    assert warning.startswith(warned)
    assert f"{symbol}'s RTH opens at {opens}" in warning
    assert f"'{own.window_example}'" in warning


@pytest.mark.slow
def test_a_window_at_a_joined_instruments_open_is_not_warned(sample_settings) -> None:
    """CL with NQ joined over NQ's RTH hours: the window is meant, so no warning."""
    result = execute(
        {
            "session": "09:30-17:00",
            "from": "daily",
            "period": "2024-03",
            "join": {"instrument": "NQ"},
            "select": "count()",
        },
        "CL",
        settings=sample_settings,
    )
    assert result.ok, result.to_dict()
    assert not [w for w in result.metadata.warnings if "starts at the open of" in w]
