"""Concepts for what Barb can only approximate or not read at all (p38d): a volume profile's
POC and value area and a TPO profile from 1-minute bars (Q21, Q22: no concept, and the
natural greedy "value area" was 100 points off, not contiguous); the continuous series'
rolls, which Barb does not record (Q10, Q11); the expiring contract's final settlement, which
the quad-witching text put at "the 09:30 ET opening print", so the model read the next
contract's 09:30 open as it (Q25); and the cash close, read as the Nasdaq-100's close (Q24).
Each concept's query is checked against pandas over the hand-made bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from barb import execute
from barb.data.store import data_path
from barb.instruments import load_instrument
from barb.reference import describe_concept
from barb.session_concepts import session_concepts
from barb.session_times import SessionTimes

NQ = load_instrument("NQ")
DATES = ["2024-01-03", "2024-02-06", "2024-03-28"]  # days of the engine_settings bars
# NQ's own bucket, and one point: the hand-made days move 20-30 points, 3 or 4 buckets of 10.
STEPS = [10.0, 1.0]


def _query(concept: str, step: float = 10.0, **changed) -> dict:
    instrument = NQ.model_copy(update={"profile_step": step})
    query = session_concepts()[concept].text_for(SessionTimes(instrument)).query
    return query | changed


@pytest.fixture(scope="module")
def bars(engine_settings) -> pd.DataFrame:
    return pd.read_parquet(data_path("NQ", engine_settings))


def _rth_day(bars: pd.DataFrame, date: str) -> pd.DataFrame:
    rth = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]
    return rth[rth["trading_date"] == date]


def _buckets(day: pd.DataFrame, step: float) -> pd.Series:
    return np.floor(day["close"] / step) * step


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("date", DATES)
def test_the_volume_profile_concept_gives_the_middle_70_percent_band(
    date: str, step: float, bars, engine_settings
) -> None:
    """The query gives what its text says: the POC (the close-binned bucket with the most
    volume, the lowest on a tie) and the buckets from where the volume by price passes 15%
    to where it passes 85%, as pandas computes them."""
    result = execute(_query("volume_profile", step, period=date), "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    day = _rth_day(bars, date)
    profile = day.groupby(_buckets(day, step))["volume"].sum().sort_index()
    share = profile / profile.sum() * 100
    cum = share.cumsum()
    band = profile[(cum > 15) & (cum - share < 85)]
    assert band.sum() / profile.sum() >= 0.70  # what the text says it holds
    assert result.summary.values == pytest.approx(
        {
            "poc": profile.idxmax(),
            "va_low": band.index.min(),
            "va_high": band.index.max() + step,
            "va_pct": band.sum() / profile.sum() * 100,
        }
    )


def test_the_volume_profile_concept_says_what_its_value_area_is() -> None:
    text = describe_concept("value area", NQ)
    assert text.startswith("Volume profile, POC and value area (approximated from 1-minute")
    # Whole edge buckets: the band holds 70% or more (77.2% on NQ's 2026-01-07), never
    # "the middle 70%".
    assert "holding the 15th percentile of the volume by price to the one holding the" in text
    assert "at least 70% (edge buckets whole; va_pct gives the share)" in text
    assert "middle 70%" not in text
    assert "not the CBOT value area, which grows outward from the POC" in text
    assert "bucket of its close, floor(close, 10) (10 points" in text


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("date", DATES)
def test_the_market_profile_concept_counts_half_hours_with_a_close_in_each_bucket(
    date: str, step: float, bars, engine_settings
) -> None:
    result = execute(_query("market_profile", step, period=date), "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    day = _rth_day(bars, date)
    tpos = (
        day.assign(px=_buckets(day, step))
        .groupby("px")["minute"]
        .agg(lambda minutes: (minutes // 30).nunique())
    )
    table = result.table
    assert table is not None
    assert table["px"].tolist() == tpos.index.tolist()
    assert table["tpos"].tolist() == tpos.tolist()


def test_the_rolls_concept_says_the_data_does_not_record_them(bars, engine_settings) -> None:
    """get_concept("roll") was "Did you mean payrolls?"; its query lists the largest gaps
    from one ETH close to the next open, which pandas finds too."""
    text = describe_concept("roll", NQ)
    assert text.startswith("Continuous contract and rolls — NQ's bars are one continuous")
    assert "Barb does not record which contract a bar comes from, when the series rolled" in text
    assert "cannot be read from the data: say so" in text
    result = execute(_query("rolls"), "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    day = bars.groupby("trading_date").agg(open=("open", "first"), close=("close", "last"))
    gap = (day["open"] / day["close"].shift() - 1) * 100
    largest = gap.loc[gap.abs().sort_values(ascending=False).index[:5]]
    assert result.table is not None
    assert result.table["gap_pct"].tolist() == pytest.approx(largest.tolist())


def test_quad_witching_puts_the_final_settlement_outside_the_bars() -> None:
    """Before: "Expiring ES and NQ futures settle at the 09:30 ET opening print", read as
    the 09:30 bar's open of the continuous series (24413 for NQZ25), which by then is the
    next contract's. CME: trading in the expiring contract ends at 09:30 ET and it settles
    at the Special Opening Quotation, from each index stock's opening price."""
    text = describe_concept("quad witching", NQ)
    assert "settle at the 09:30 ET opening print" not in text
    assert "Special Opening Quotation (SOQ), an index value computed from each index stock's" in (
        text
    )
    assert "Barb's bars hold no SOQ" in text
    assert "bars from 09:30 that day are the next contract's" in text


def test_the_cash_close_is_the_futures_price_not_the_index_close() -> None:
    """Before: "The cash-close price is the close of CASH", read as the Nasdaq-100's close."""
    text = describe_concept("cash close", NQ)
    assert "NQ's price at the cash close is the close of CASH" in text
    assert "the futures' price, not the stock index's own close, which Barb does not hold" in text
