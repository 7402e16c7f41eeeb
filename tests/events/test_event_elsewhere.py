"""An event that is another market's: EIA asked about on NQ (not listed there) tells how to
get it from CL, and that way runs and reads NQ's bars; opex and quad witching on CL say they
are the stock market's expirations, not crude oil's."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from pandas.tseries.holiday import USFederalHolidayCalendar

from barb import execute
from barb.errors import UnknownEvent
from barb.events import events_reference, resolve_event
from barb.instruments import Instrument
from barb.reference import describe_concept


def _suggested_query(text: str) -> dict:
    match = re.search(r'(\{"instrument": "CL".*?\}) \(', text)
    assert match is not None, text
    return json.loads(match.group(1))


def test_eia_on_nq_gives_the_query_from_cl(nq: Instrument) -> None:
    text = describe_concept("eia", nq)
    assert "cannot be joined on NQ" in text
    assert '"join": {"source": "eia"}' not in text  # the way that fails is not offered
    query = _suggested_query(text)
    assert query["join"] == ["eia", {"instrument": "NQ"}]
    assert query["session"] == "09:30-17:00"  # NQ's RTH as clock hours, on both
    with pytest.raises(UnknownEvent) as caught:
        resolve_event("eia", nq)
    assert caught.value.hint is not None and json.dumps(query) in caught.value.hint


def test_eia_on_cl_is_joined_directly(cl: Instrument) -> None:
    text = describe_concept("eia", cl)
    assert 'Use: "join": {"source": "eia"}' in text
    assert "cannot be joined" not in text


def _eia_dates(first: pd.Timestamp, last: pd.Timestamp) -> set[pd.Timestamp]:
    """Wednesdays, Thursday in weeks with a federal holiday on Monday to Wednesday."""
    holidays = set(USFederalHolidayCalendar().holidays(first - pd.Timedelta(days=7), last))
    dates = set()
    for wednesday in pd.date_range(first - pd.Timedelta(days=7), last, freq="W-WED"):
        week = {wednesday - pd.Timedelta(days=d) for d in range(3)}
        dates.add(wednesday + pd.Timedelta(days=1) if week & holidays else wednesday)
    return {d for d in dates if first <= d <= last}


@pytest.mark.slow
def test_the_suggested_query_reads_nq_on_eia_days(nq: Instrument, sample_settings) -> None:
    query = {**_suggested_query(describe_concept("eia", nq)), "period": "2024"}
    query["select"] = ["trading_date", "nq_high", "nq_low"]
    result = execute(query, "NQ", settings=sample_settings)
    assert result.ok, result.to_dict()
    minutes = pd.read_parquet(sample_settings.data_dir / "NQ.parquet")
    minutes = minutes[(minutes["minute"] >= 570) & (minutes["minute"] < 1020)]
    days = minutes.groupby("trading_date").agg(high=("high", "max"), low=("low", "min"))
    cl = pd.read_parquet(sample_settings.data_dir / "CL.parquet", columns=["trading_date"])
    traded = set(days.index) & set(cl["trading_date"].unique())
    eia = sorted(_eia_dates(pd.Timestamp("2024-01-01"), pd.Timestamp("2024-12-31")) & traded)
    assert pd.to_datetime(result.table["trading_date"]).tolist() == eia
    assert np.array_equal(result.table["nq_high"], days.loc[eia, "high"])
    assert np.array_equal(result.table["nq_low"], days.loc[eia, "low"])


@pytest.mark.parametrize("name", ["opex", "quad_witching"])
def test_equity_expirations_say_so_on_cl(name: str, cl: Instrument, nq: Instrument) -> None:
    for text in (describe_concept(name, cl), _event_line(events_reference(cl), name)):
        assert "For CL:" in text and "stock" in text and "not of this instrument's own" in text
    assert "For NQ" not in describe_concept(name, nq)
    assert "For NQ" not in events_reference(nq)


def _event_line(reference: str, name: str) -> str:
    """The event's line in the list and the note under it."""
    lines = reference.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"- {name} "))
    return "\n".join(lines[at : at + 2])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["opex", "quad_witching"])
def test_a_result_on_equity_expirations_says_so_on_cl(name: str, sample_settings) -> None:
    """A model that skipped the event list presented opex days as CL's own expirations."""
    query = {"session": "RTH", "from": "daily", "join": name, "where": name}
    said = f"'{name}' on CL: these are the expirations of US stock"
    cl = execute({**query, "instrument": "CL", "select": "count()"}, settings=sample_settings)
    assert cl.ok and any(w.startswith(said) for w in cl.metadata.warnings), cl.metadata.warnings
    nq = execute({**query, "instrument": "NQ", "select": "count()"}, settings=sample_settings)
    assert nq.ok and not any("stock-market dates" in w for w in nq.metadata.warnings)
