"""The event catalog, the model's event list and the concept lookup."""

from __future__ import annotations

import datetime as dt

import pytest

from barb.errors import DataError, UnknownEvent
from barb.events import (
    EventSpec,
    describe_event,
    event_catalog,
    event_dates,
    events_for,
    events_reference,
)
from barb.instruments import Instrument, available_instruments, load_instrument


@pytest.mark.parametrize("symbol", available_instruments())
def test_every_instrument_event_exists_in_the_catalog(symbol: str) -> None:
    instrument = load_instrument(symbol)
    assert instrument.events, f"{symbol} lists no events"
    assert set(instrument.events) <= set(event_catalog())
    assert [spec.name for spec in events_for(instrument)] == instrument.events


def test_the_catalog_has_the_seed_events_and_eia() -> None:
    catalog = event_catalog()
    assert list(catalog) == ["fomc", "nfp", "cpi", "opex", "quad_witching", "eia"]
    assert catalog["opex"].impact == "medium"
    assert catalog["quad_witching"].impact == "high"
    assert catalog["eia"].category == "energy"
    for spec in catalog.values():
        assert isinstance(spec, EventSpec)
        assert spec.description and spec.source and spec.title
        assert spec.coverage_start <= spec.coverage_end


def test_coverage_comes_from_the_files_and_the_rule_range() -> None:
    catalog = event_catalog()
    assert (catalog["fomc"].coverage_start, catalog["fomc"].coverage_end) == (
        dt.date(2008, 1, 1),
        dt.date(2026, 12, 31),
    )
    assert catalog["nfp"].coverage_end == dt.date(2026, 2, 28)
    assert catalog["cpi"].coverage_end == dt.date(2026, 2, 28)
    assert catalog["opex"].kind == "rule" and catalog["opex"].coverage_end.year == 2030
    assert "rule-based" in catalog["eia"].description


def test_unknown_event_in_an_instrument_yaml_is_a_clear_error(es: Instrument) -> None:
    broken = es.model_copy(update={"events": ["fomc", "ecb"]})
    with pytest.raises(DataError, match=r"ES lists unknown event\(s\) ecb.*catalog"):
        events_for(broken)


def test_event_dates_rejects_events_the_instrument_does_not_list(es: Instrument) -> None:
    with pytest.raises(UnknownEvent) as info:
        event_dates("eia", es)
    assert "not available for ES" in info.value.message


def test_event_dates_returns_a_copy(es: Instrument) -> None:
    first = event_dates("fomc", es)
    first.loc[0, "scheduled"] = True
    first.drop(index=first.index, inplace=True)
    again = event_dates("fomc", es)
    assert len(again) == 155 and not again.loc[0, "scheduled"]


def test_event_dates_columns(es: Instrument) -> None:
    table = event_dates("fomc", es, start=dt.date(2020, 1, 1), end=dt.date(2020, 12, 31))
    assert list(table.columns[:4]) == ["date", "time", "scheduled", "trading_date"]
    assert {"press_conference", "note"} <= set(table.columns)
    assert str(table["date"].dtype) == "datetime64[ns]"
    assert str(table["time"].dtype) == "datetime64[ns]"
    assert table["scheduled"].dtype == bool
    assert (table["date"] == table["date"].dt.normalize()).all()
    sunday = table[table["date"] == "2020-03-15"].iloc[0]
    assert sunday["trading_date"] == dt.datetime(2020, 3, 16)


def test_a_release_on_a_closed_day_counts_for_the_next_trading_date(
    es: Instrument, cl: Instrument
) -> None:
    # NFP on Good Friday 2015: CME equity futures traded that morning, NYMEX crude did not.
    def trading(instrument: Instrument) -> dt.date:
        table = event_dates("nfp", instrument)
        return table.loc[table["date"] == "2015-04-03", "trading_date"].iloc[0].date()

    assert trading(es) == dt.date(2015, 4, 3)
    assert trading(cl) == dt.date(2015, 4, 6)


def test_events_reference_is_compact_and_says_what_is_covered(
    es: Instrument, cl: Instrument
) -> None:
    text = events_reference(es)
    lines = text.splitlines()
    assert len(lines) <= 25
    assert lines[0].startswith("EVENTS")
    assert "- fomc — FOMC Rate Decision (macro, high impact)" in text
    assert "- opex — Monthly Options Expiration (options, medium impact)" in text
    assert "2008-01-01..2026-02-28" in text
    assert "null" in text and "fomc_minutes" in text
    assert "eia" not in text
    cl_text = events_reference(cl)
    assert "- eia — EIA Weekly Petroleum Status Report (energy, high impact)" in cl_text
    assert len(cl_text.splitlines()) <= 25
    # A range on event days needs a session that holds the release (CPI's 08:30 is before
    # either RTH), said in each instrument's own hours.
    for said, hours in ((text, "09:30-17:00"), (cl_text, "09:00-14:30")):
        assert f"A bar holds the release only inside its session's hours (RTH is {hours})" in said
        assert "use a session that holds it (ETH, the whole day)" in said


@pytest.mark.parametrize(
    ("asked", "name"),
    [("OPEX", "opex"), ("quad witching", "quad_witching"), ("jobs report", "nfp"),
     ("Fed", "fomc"), ("crude inventories", "eia"), ("cpi", "cpi")],
)  # fmt: skip
def test_describe_event_finds_names_and_aliases(asked: str, name: str) -> None:
    text = describe_event(asked)
    spec = event_catalog()[name]
    assert text.startswith(f"{name} — {spec.title}")
    assert spec.coverage in text
    assert spec.description in text
    assert "unknown" in text


def test_describe_event_unknown_suggests() -> None:
    with pytest.raises(UnknownEvent) as info:
        describe_event("fmoc")
    assert info.value.hint == "Did you mean 'fomc'?"
    assert "fomc" in info.value.message
