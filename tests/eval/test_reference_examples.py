"""The reference's examples compute what their questions say, on the instrument that reads them.

Each query is read out of the text the model gets (the example under its question in
get_query_reference, or the query get_concept shows), run through Barb on the sample, and
compared with pandas and TA-Lib over the raw minute bars (``minute_bars``), which know nothing
of Barb. The examples here are the ones testers caught leading a model to a wrong answer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import talib
from minute_bars import SESSIONS, daily, window_daily

from barb import execute
from barb.instruments import load_instrument
from barb.reference import describe_concept, query_reference
from barb.result import Result

pytestmark = pytest.mark.slow

# CL's pit session opens at 09:00 (instruments/CL.yaml); its 15-minute opening range:
CL_OR = ("09:00", "09:15")
REPO = Path(__file__).resolve().parents[2]
REFERENCE_DIR = Path(os.environ.get("BARB_REFERENCE_DIR", REPO.parent / "shared" / "reference"))


def example_query(symbol: str, question: str) -> dict:
    """The query printed under the example whose question starts with ``question``."""
    lines = query_reference(load_instrument(symbol)).splitlines()
    asked = next(i for i, line in enumerate(lines) if line.startswith(f"Q: {question}"))
    return json.loads(lines[asked + 1])


def concept_query(symbol: str, name: str) -> dict:
    return json.loads(describe_concept(name, load_instrument(symbol)).split("Barb Script: ")[1])


def answer(query: dict, symbol: str, settings) -> Result:
    result = execute(query, symbol, settings=settings)
    assert result.ok, result.to_dict()
    return result


def by_year(days: pd.DataFrame, mask: pd.Series) -> list[int]:
    """How many days of each year of data meet ``mask`` (0 for a year with none)."""
    return [int(n) for n in mask.groupby(days.index.year).sum()]


def test_cls_opening_range_example_is_its_first_15_minutes(eval_settings) -> None:
    """CL's model once read NQ's '09:30-09:45' as the opening range."""
    query = example_query("CL", "Average 15-minute opening range")
    window = window_daily("CL", *CL_OR)
    expected = {
        "mean_range": window["range"].mean(),
        "up_share": (window["close"] > window["open"]).mean(),
    }
    assert answer(query, "CL", eval_settings).summary.values == pytest.approx(expected, rel=1e-9)


def test_cls_opening_range_concept_breaks_out_of_its_first_15_minutes(eval_settings) -> None:
    query = concept_query("CL", "opening range")
    rth = daily("CL", "RTH")
    opening = window_daily("CL", *CL_OR).reindex(rth.index)  # one per RTH day, as map reads it
    known = opening["high"].notna()
    expected = {
        "or_width": (opening["high"] - opening["low"]).mean(),
        "broke_high": (rth["high"] > opening["high"])[known].mean(),
        "broke_low": (rth["low"] < opening["low"])[known].mean(),
    }
    assert answer(query, "CL", eval_settings).summary.values == pytest.approx(expected, rel=1e-9)
    assert expected["or_width"] == pytest.approx(0.615, abs=0.001)  # NQ's window gave 0.423


def test_rsi_days_per_year_keep_the_years_without_any(eval_settings) -> None:
    """With where + count() the years without a match vanished, and an average per year
    taken from them divided by too few years."""
    query = example_query("NQ", "Days with RSI(14) below 30 per year")
    table = answer(query, "NQ", eval_settings).table
    days = daily("NQ", "RTH")
    rsi = pd.Series(talib.RSI(days["close"].to_numpy(dtype=float), 14), index=days.index)
    expected = by_year(days, rsi < 30)
    assert list(table["year"]) == sorted(set(days.index.year))
    assert list(table["days"]) == expected
    assert 0 in expected  # the years a where would have dropped


def test_macd_example_counts_signal_and_zero_line_crosses(eval_settings) -> None:
    """The example once called the histogram turning positive "crossovers above zero": that is
    the MACD line crossing its signal line (12 in 2024 on NQ), not the zero line (6)."""
    table = answer(example_query("NQ", "MACD line crossing above"), "NQ", eval_settings).table
    days = daily("NQ", "RTH")
    line, _, hist = (
        pd.Series(values, index=days.index)
        for values in talib.MACD(days["close"].to_numpy(dtype=float), 12, 26, 9)
    )
    # Counted from 2009 on: TA-Lib seeds the signal EMA differently in the warm-up year.
    later = table["year"] >= 2009
    years = days.index.year >= 2009
    above_signal = (hist > 0) & (hist.shift() <= 0)
    above_zero = (line > 0) & (line.shift() <= 0)
    assert list(table.loc[later, "above_signal"]) == by_year(days[years], above_signal[years])
    assert list(table.loc[later, "above_zero"]) == by_year(days[years], above_zero[years])
    in_2024 = table.set_index("year").loc[2024]
    assert (in_2024["above_signal"], in_2024["above_zero"]) == (12, 6)


def test_longest_run_of_up_days_is_close_over_previous_close(eval_settings) -> None:
    """An up day, as traders mean it, closes above the previous close (not above its open)."""
    query = example_query("NQ", "Longest run of up days")
    close = daily("NQ", "RTH")["close"]
    up = (close > close.shift()).to_numpy()
    longest = run_length = 0
    for is_up in up:
        run_length = run_length + 1 if is_up else 0
        longest = max(longest, run_length)
    assert answer(query, "NQ", eval_settings).summary.value == longest


def test_atr_example_ranks_today_within_the_last_year(eval_settings) -> None:
    """A question comparing today's ATR with the last year needs the comparison in the row:
    the example once returned today's ATR alone."""
    table = answer(example_query("NQ", "What is the ATR(14) now"), "NQ", eval_settings).table
    days = daily("NQ", "RTH")
    high, low, close = (days[c].to_numpy(dtype=float) for c in ("high", "low", "close"))
    atr = pd.Series(talib.ATR(high, low, close, 14), index=days.index)
    year = atr[atr.index > atr.index[-1] - pd.DateOffset(years=1)]
    assert len(table) == 1
    row = table.iloc[0]
    assert row["atr14"] == pytest.approx(year.iloc[-1], rel=1e-9)
    # The share of the year's days whose ATR is at most today's, in percent.
    assert row["atr_rank"] == pytest.approx(np.mean(year <= year.iloc[-1]) * 100, rel=1e-9)


def _clock(text: str) -> int:
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


@pytest.mark.parametrize("symbol", ["NQ", "CL"])
def test_the_fomc_range_example_reads_a_session_that_holds_the_release(
    symbol: str, eval_settings
) -> None:
    """On RTH the example compared days whose bars missed the statement on CL, whose RTH
    closes at 14:30, 30 minutes after it (and the 07:00 and 08:20 cuts before the open)."""
    fomc = REFERENCE_DIR / "events" / "fomc.csv"
    if not fomc.is_file():
        pytest.skip(f"no reference list {fomc}")
    query = example_query(symbol, "Average range on FOMC days vs other days")
    start, end = (_clock(t) for t in SESSIONS[symbol][query["session"]])
    reference = pd.read_csv(fomc, parse_dates=["date"])
    # Times by era (the reference's README and notes): 14:00 from 2013, 14:15 before, 12:30
    # on the 2011-2012 press-conference days, the unscheduled ones as noted.
    for time in ("14:00", "14:15", "12:30", "07:00", "08:30", "10:00"):
        assert (_clock(time) - start) % 1440 < (end - start) % 1440, time
    days = daily(symbol, query["session"])
    known = reference["date"][reference["date"] <= days.index[-1]]
    at = np.searchsorted(days.index.to_numpy(), known.to_numpy())  # Sunday 03-15 → Monday
    flagged = days.index.isin(days.index[at])
    result = answer(query, symbol, eval_settings)
    table = result.table.set_index("fomc")
    for is_fomc, rows in ((True, days[flagged]), (False, days[~flagged])):
        assert table.loc[is_fomc, "count"] == len(rows)
        assert table.loc[is_fomc, "mean_range"] == pytest.approx(rows["range"].mean(), rel=1e-9)
    assert not [w for w in result.metadata.warnings if "came out" in w]
