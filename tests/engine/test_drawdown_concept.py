"""The drawdown concept's episode query (peak, depth, trough, recovery, calendar and trading
days under water, falls of a given size), which no concept described and a model had to
invent (p47a Q2/Q3/Q9/Q19), against pandas' episodes over the hand-made bars' RTH days: an
episode begins at each close at a new high (close >= its running high), recovers on the
next episode's first day, and is under water on the days between."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from rth_bars import rth_daily

from barb import execute
from barb.instruments import load_instrument
from barb.reference import describe_concept
from barb.session_concepts import session_concepts
from barb.session_times import SessionTimes


def _episodes(close: pd.Series) -> pd.DataFrame:
    """Each episode's peak, its close, depth in percent, trough, last day under water,
    trading days under water, recovery date and calendar days to it (NaT/NaN: not yet)."""
    episode = (close >= close.cummax()).cumsum()
    rows = []
    for _, closes in close.groupby(episode):
        depth = closes / closes.iloc[0] - 1
        rows.append(
            {
                "peak": closes.index[0],
                "peak_close": closes.iloc[0],
                "max_dd": depth.min() * 100,
                "trough": depth.idxmin(),
                "days_under": len(closes) - 1,
            }
        )
    table = pd.DataFrame(rows)
    table["recovered"] = table["peak"].shift(-1)
    table["calendar_days"] = (table["recovered"] - table["peak"]).dt.days
    return table


@pytest.mark.parametrize("fall", [0, 0.5])
def test_the_episode_query_gives_pandas_episodes(engine_settings, minutes, fall: float) -> None:
    """Every column of the falls of at least ``fall`` percent, the still-running last one's
    recovery empty; the concept says what the columns are."""
    concept = session_concepts()["drawdown"]
    query = concept.text_for(SessionTimes(load_instrument("NQ"))).query
    assert query["then"]["where"] == "max_dd <= -10"
    query = {**query, "then": {**query["then"], "where": f"max_dd <= -{fall}"}}
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    want = _episodes(rth_daily(minutes)["close"])
    want = want[want["max_dd"] <= -fall].reset_index(drop=True)
    got = result.table
    assert len(got) == len(want) >= 2
    for column in ("peak", "trough", "recovered"):
        assert pd.to_datetime(got[column]).tolist() == want[column].tolist(), column
    for column in ("peak_close", "max_dd", "calendar_days", "days_under"):
        np.testing.assert_allclose(got[column].astype(float), want[column].astype(float))
    text = describe_concept("просадка")
    assert text.startswith("Drawdown") and "days_between(peak, next(peak))" in text
    assert describe_concept("equity drawdown").startswith("Backtest statistics")


def _january_falls(engine_settings, *, period: str | None, where: str) -> object:
    """The concept's episodes of 0.5% or more, with a period or kept by then.where."""
    concept = session_concepts()["drawdown"]
    query = concept.text_for(SessionTimes(load_instrument("NQ"))).query
    query = {**query, "then": {**query["then"], "where": where}}
    if period is not None:
        query["period"] = period
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    return result


def test_a_recovery_after_the_period_is_said_and_the_concept_form_finds_it(
    engine_settings, minutes
) -> None:
    """January 2024's 0.99% fall from 2024-01-03 got back on 2024-02-23 (pandas, over all
    the bars): with "period": "2024-01", next(peak) in then reads only January's rows and
    its n/a, which the concept glossed "not yet", is said to be the period's end (p47g d3);
    the concept's form (no period, the peak kept by then.where) gives pandas' date and its
    51 calendar days. Over all the bars the last fall's n/a is "not yet": nothing said."""
    want = _episodes(rth_daily(minutes)["close"])
    want = want[(want["max_dd"] <= -0.5) & (want["peak"] < "2024-02-01")]
    assert len(want) == 1
    cut = _january_falls(engine_settings, period="2024-01", where="max_dd <= -0.5")
    assert pd.to_datetime(cut.table["peak"]).tolist() == want["peak"].tolist()
    assert pd.isna(cut.table["recovered"]).all()
    # Both columns reading next(peak) are n/a where pandas has a value, and both are named.
    named = [c for c in ("recovered", "calendar_days") if want[c].notna().all()]
    assert named == ["recovered", "calendar_days"]
    assert cut.table[named].isna().all().all()
    said = [w for w in cut.metadata.warnings if w.startswith("recovered ")]
    assert len(said) == 1, cut.metadata.warnings
    assert said[0].startswith("recovered and calendar_days are n/a on 1 row listed: ")
    assert "(2024-01-31)" in said[0] and "peak >= '2024-01-02' and peak <= '2024-01-31'" in said[0]
    text = describe_concept("drawdown")
    assert "peak >= '2022-01-01' and peak <= '2022-12-31'" in text
    whole = _january_falls(
        engine_settings,
        period=None,
        where="max_dd <= -0.5 and peak >= '2024-01-01' and peak <= '2024-01-31'",
    )
    assert pd.to_datetime(whole.table["recovered"]).tolist() == want["recovered"].tolist()
    np.testing.assert_allclose(whole.table["calendar_days"].astype(float), [51.0])
    assert not any(w.startswith("recovered ") for w in whole.metadata.warnings)
    running = _january_falls(engine_settings, period=None, where="max_dd <= -0.5")
    assert pd.isna(running.table["recovered"]).iloc[-1]
    assert not any(w.startswith("recovered ") for w in running.metadata.warnings)


def test_the_concept_cagr_in_one_stage_is_pandas(engine_settings, minutes) -> None:
    """The concept's CAGR, last over first close to the power of 365.25 over the calendar
    days between the first and last dates, in one stage (p47g d1: a single-row select with
    then errs), against pandas over the RTH closes."""
    text = describe_concept("cagr")
    assert text.startswith("Drawdown")
    cagr = re.search(r"\(last\(close\) / first\(close\)\) \*\* .*? \* 100 - 100", text)
    assert cagr is not None
    query = {"session": "RTH", "from": "daily", "select": [f"{cagr.group(0)} as cagr"]}
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    close = rth_daily(minutes)["close"]
    days = (close.index[-1] - close.index[0]).days
    want = ((close.iloc[-1] / close.iloc[0]) ** (365.25 / days) - 1) * 100
    assert result.summary.value == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("above_all_before", [True, False])
def test_the_running_peak_note_only_where_the_rows_listed_read_an_earlier_high(
    engine_settings, minutes, above_all_before: bool
) -> None:
    """February 2024's episodes under "period": "2024-02": cummax() starts at 02-01's close,
    below January's 17047.25. The episode from 02-01 reads its fall from its own close,
    where all history reads it from January's high: that row, listed, is said. The episodes
    from a close above every earlier one (pandas) are the same either way, and listed alone
    they said "cummax() starts at the period's first bar …" of nothing they hold (p47g d3:
    ES's 2022 episode from 5481.25, above 2021's 4866)."""
    close = rth_daily(minutes)["close"]
    before = close[close.index < "2024-02-01"].max()
    february = close[(close.index >= "2024-02-01") & (close.index < "2024-03-01")]
    assert february.iloc[0] < before < february.max()
    own = _episodes(february)
    history = _episodes(close[close.index < "2024-03-01"])
    history = history[history["peak"] >= "2024-02-01"]
    where = f"peak_close > {before}" if above_all_before else "peak <= '2024-02-01'"
    if above_all_before:  # the same rows, from the same closes, either way
        kept = own[own["peak_close"] > before].reset_index(drop=True)
        same = history[history["peak_close"] > before].reset_index(drop=True)
        pd.testing.assert_frame_equal(kept[["peak", "max_dd"]], same[["peak", "max_dd"]])
    else:  # 02-01 begins no episode over all history: its fall is January's peak's
        kept = own[own["peak"] == "2024-02-01"].reset_index(drop=True)
        assert "2024-02-01" not in set(history["peak"].dt.strftime("%Y-%m-%d"))
    result = _january_falls(engine_settings, period="2024-02", where=where)
    assert pd.to_datetime(result.table["peak"]).tolist() == kept["peak"].tolist()
    np.testing.assert_allclose(result.table["max_dd"].astype(float), kept["max_dd"])
    said = [w for w in result.metadata.warnings if w.startswith("cummax() starts at")]
    assert len(said) == (0 if above_all_before else 1), result.metadata.warnings
