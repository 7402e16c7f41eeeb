"""The model's texts name only times of day the asking instrument has.

CL's RTH is 09:00-14:30, NQ's 09:30-17:00. A CL model that read NQ's '09:30-09:45' as the
opening range computed the wrong window (OR width 0.423 and "95% broke" instead of 0.615
and 78%). Here every HH:MM in the reference and the concept texts is checked against the
times the instrument's own YAML gives, restated from its fields, not from the code under test.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from barb import execute
from barb.data.sample import write_samples
from barb.data.store import data_path
from barb.errors import QueryError
from barb.instruments import Instrument, available_instruments, load_instrument
from barb.reference import describe_concept, indicators_reference, query_reference
from barb.script.patterns import pattern_catalog
from barb.session_concepts import session_concepts

CLOCK = re.compile(r"\b([01]\d|2[0-4]):([0-5]\d)\b")
DAY = 24 * 60


def _minute(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


def _clock(minute: int) -> str:
    return f"{minute % DAY // 60:02d}:{minute % 60:02d}"


# Concepts that name clock times of something other than the instrument's sessions: the stock
# market's power hour, New York's lunch, and the exchange calendar's early closes (restated
# from the bars in test_session_concepts.py).
FACTS = {
    "power_hour": {"15:00", "16:00"},
    "lunch_hour": {"12:00", "13:00"},
    "early_close": {"09:15", "11:30", "13:00", "13:15", "13:45"},
    # The cash session on half days: the futures close at 13:15, the stock market at 13:00.
    "CASH": {"13:00", "13:15"},
    # The London open on London's clock and in ET, in and out of the weeks the clocks differ.
    "utc": {"03:00", "04:00", "08:00", "09:00", "10:00", "11:00"},
}


def own_times(instrument: Instrument) -> set[str]:
    """Every session's start and end, the maintenance break, the settlement window and the
    old floor hours, and in the default session
    the hourly bars' starts (aligned to its open) and the end of its 15-minute opening range."""
    times = {t for spec in instrument.sessions.values() for t in (spec.start, spec.end)}
    for window in (instrument.maintenance_break, *instrument.settlement, instrument.pit_hours):
        if window is not None:
            times |= {window.start, window.end}
    default = instrument.sessions[instrument.default_session]
    opens = _minute(default.start)
    length = (_minute(default.end) - opens) % DAY
    times |= {_clock(opens + offset) for offset in range(0, length, 60)}
    times.add(_clock(opens + 15))
    return times


def texts(instrument: Instrument) -> dict[str, str]:
    """What a model asking about this instrument reads: the query and indicator references,
    and get_concept for every session concept, pattern, session and the clock functions."""
    names = [*session_concepts(), *pattern_catalog(), *instrument.sessions, "time", "hour", "vwap"]
    found = {name: describe_concept(name, instrument) for name in names}
    return {
        "get_query_reference": query_reference(instrument),
        "get_indicators": indicators_reference(instrument),
    } | found


@pytest.mark.parametrize("symbol", available_instruments())
def test_texts_name_only_the_instruments_own_times(symbol: str) -> None:
    instrument = load_instrument(symbol)
    allowed = own_times(instrument)
    # A join's note names another instrument's hours after its symbol ("CL: OVERNIGHT
    # 18:00-09:00, RTH 09:00-14:30…"): those are that instrument's, said as such.
    others = "|".join(s for s in available_instruments() if s != symbol)
    labelled = re.compile(rf"\b(?:{others}): [^;)]*")
    foreign = {
        name: sorted(
            {m.group(0) for m in CLOCK.finditer(labelled.sub("", text))}
            - allowed
            - FACTS.get(name, set())
        )
        for name, text in texts(instrument).items()
    }
    assert {name: times for name, times in foreign.items() if times} == {}


def test_cl_reads_its_own_opening_range_and_hourly_bars() -> None:
    cl = load_instrument("CL")
    reference = query_reference(cl)
    assert "'09:00-09:15' = the 15-minute opening range" in reference
    assert "Q: Average 15-minute opening range (09:00-09:15)" in reference
    # The last hourly bar of the 14:30 close lasts half an hour, and the reference says so.
    assert "RTH's are 09:00, 10:00 … 14:00 (the last one 14:00-14:30, half an hour)" in reference
    assert "session_high('09:00-09:15')" in describe_concept("opening range", cl)
    assert 'window "09:00-10:00"' in describe_concept("initial balance", cl)
    assert "14:00-14:30 (half an hour)" in describe_concept("which hour makes the high", cl)


def test_cls_indicators_name_its_own_open() -> None:
    """CL's get_indicators was NQ's text: vwap() "from NQ RTH 09:30", windows '09:30-10:30'."""
    text = indicators_reference(load_instrument("CL"))
    [vwap] = [line for line in text.splitlines() if line.startswith("- vwap()")]
    assert "(CL RTH 09:00, ETH 18:00)" in vwap
    assert "a window such as '09:00-10:00'" in text
    assert "\"where\": \"time() >= '09:00' and time() < '10:00'\"" in text
    assert "09:30" not in text and "NQ" not in text


def test_cls_vwap_starts_where_its_text_says(sample_settings) -> None:
    """vwap() on CL's RTH 5m bars: each day's first value is the typical price of the 09:00
    bar, from the raw minute bars."""
    write_samples(["CL"], sample_settings)
    query = {"instrument": "CL", "session": "RTH", "from": "5m", "period": "2024-03-01",
             "map": {"vw": "vwap()"}, "select": ["timestamp", "vw"], "limit": 1}  # fmt: skip
    result = execute(query, "NQ", settings=sample_settings)
    assert result.ok, result.to_dict()
    bars = pd.read_parquet(data_path("CL", sample_settings))
    first = bars[(bars["trading_date"] == "2024-03-01") & bars["minute"].between(540, 544)]
    typical = (first["high"].max() + first["low"].min() + first["close"].iloc[-1]) / 3
    assert str(result.table["timestamp"].iloc[0]) == "2024-03-01 09:00:00"
    assert result.table["vw"].iloc[0] == pytest.approx(typical, rel=1e-12)


def test_nq_keeps_its_half_past_wording() -> None:
    nq = load_instrument("NQ")
    reference = query_reference(nq)
    assert "'09:30-09:45' = the 15-minute opening range" in reference
    assert "RTH's are 09:30, 10:30 … 16:30 (the last one 16:30-17:00, half an hour)" in reference
    assert "hour() would call the 09:30 bar 9" in reference
    assert "16:30-17:00 (half an hour)" in describe_concept("which hour makes the high", nq)


def test_an_instrument_without_a_cash_session_reads_what_it_has_instead() -> None:
    cl = load_instrument("CL")
    cash = describe_concept("cash close", cl)
    assert cash.startswith("Cash close — CL has no cash session")
    assert '"session": "14:00-14:30"' in cash
    post = describe_concept("post-cash hour", cl)
    assert "CL has no cash session" in post and '"session": "14:30-17:00"' in post


@pytest.mark.parametrize("session", ["CASH", "cash", "CASH_CLOSE"])
def test_cls_missing_cash_session_says_what_to_use_instead(session: str, sample_settings) -> None:
    """CL asked for CASH from an NQ chat read "Default session is RTH"; it has no cash
    session, and its cash-like close is the last half hour into its own RTH close (14:30,
    instruments/CL.yaml)."""
    write_samples(["CL"], sample_settings)  # NQ and ES are in the default sample
    rth_end = _minute("14:30")
    last_half_hour = f"{_clock(rth_end - 30)}-{_clock(rth_end)}"
    query = {"instrument": "CL", "session": session, "from": "daily", "select": "count()"}
    error = execute(query, "NQ", settings=sample_settings).error
    assert error is not None and error.error_type == "UnknownSession"
    assert error.hint.startswith("CL has no cash session, so no cash close: its RTH (09:00-14:30)")
    assert f'window "{last_half_hour}"' in error.hint
    # The window it names runs; an unknown name keeps the plain hint.
    window = {**query, "session": last_half_hour}
    assert execute(window, "NQ", settings=sample_settings).ok
    unknown = execute({**query, "session": "NOPE"}, "NQ", settings=sample_settings).error
    assert unknown is not None and unknown.hint == "Default session is RTH."


@pytest.mark.parametrize("symbol", available_instruments())
@pytest.mark.parametrize("session", ["NOPE", "9:5-10", "16:30-18:30"])
def test_session_errors_suggest_a_window_of_the_instruments_own(symbol: str, session) -> None:
    """The errors go back to the model: their example window must be the instrument's. (The
    window asked about and the midnight example, '20:00-02:00', are named as they are.)"""
    instrument = load_instrument(symbol)
    with pytest.raises(QueryError) as caught:
        instrument.session(session)
    error = caught.value
    named = {m.group(0) for m in CLOCK.finditer(f"{error.message} {error.hint}")}
    assert named <= own_times(instrument) | {"16:30", "18:30", "20:00", "02:00"}
