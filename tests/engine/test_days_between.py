"""days_between(start, end): calendar days between two dates, which a date minus a date
refused with a hint that offered only trading days, leaving CAGR's years and "recovered in
297 calendar days" to the model's own date arithmetic (p47a Q8). Checked against pandas'
date subtraction over the hand-made bars' RTH days."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask
from rth_bars import rth_daily

from barb import execute


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    return rth_daily(minutes)


def test_days_from_a_written_date_and_from_the_previous_row(engine_settings, days) -> None:
    """In map: from a date written as text, and between two date columns (a row's and the
    previous row's: 3 over a weekend, 4 over the fixture's Monday holiday)."""
    query = {
        "map": {
            "since": "days_between('2023-12-31', date())",
            "gap": "days_between(prev(date()), date())",
        },
        "select": ["date()", "since", "gap"],
    }
    table = ask(query, engine_settings, **RTH_DAILY).table
    dates = pd.DatetimeIndex(days.index)
    np.testing.assert_array_equal(table["since"], (dates - pd.Timestamp("2023-12-31")).days)
    gaps = pd.Series(dates).diff().dt.days.to_numpy()
    np.testing.assert_array_equal(table["gap"], gaps)
    assert {3, 4} <= set(gaps[1:])


def test_cagr_over_the_calendar_days_of_the_period(engine_settings, days) -> None:
    """In select over aggregates: the period's calendar span from the close before it, and
    the compound annual growth rate over it."""
    feb = days.loc["2024-02"]
    before = days.loc[:"2024-01-31"].iloc[-1]
    span = (feb.index[-1] - before.name).days
    cagr = ((feb["close"].iloc[-1] / before["close"]) ** (365.25 / span) - 1) * 100
    query = {
        "period": "2024-02",
        "map": {"before": "prev(close)", "since": "prev(date())"},
        "select": [
            "days_between(first(since), last(date())) as days",
            "((last(close) / first(before)) ** (365.25 / days_between(first(since), "
            "last(date()))) - 1) * 100 as cagr",
        ],
    }
    values = ask(query, engine_settings, **RTH_DAILY).summary.values
    assert values["days"] == span == 29
    assert values["cagr"] == pytest.approx(cagr)


def test_calendar_days_under_water_per_episode_in_a_second_stage(engine_settings, days) -> None:
    """The drawdown episodes' calendar days from each peak to the next (its recovery), over
    the first stage's date labels, as pandas counts them."""
    close = days["close"]
    episode = (close >= close.cummax()).cumsum()
    peaks = pd.Series(close.index).groupby(episode.to_numpy()).first()
    expected = (peaks.shift(-1) - peaks).dt.days
    query = {
        "map": {"ep": "cumsum(if(close >= cummax(close), 1, 0))"},
        "group_by": "ep",
        "select": ["first(date()) as peak"],
        "then": {"map": {"days": "days_between(peak, next(peak))"}, "select": ["peak", "days"]},
    }
    table = ask(query, engine_settings, **RTH_DAILY).table
    assert len(table) == len(peaks) > 3
    np.testing.assert_array_equal(table["days"], expected.to_numpy())


def test_a_date_minus_a_date_is_pointed_to_days_between(engine_settings) -> None:
    """The refusal of a date minus a date names the call that counts calendar days, with
    the query's own dates, beside the trading-day counts it offered before."""
    query = {**RTH_DAILY, "map": {"gap": "date() - prev(date())"}}
    said = execute(query, "NQ", settings=engine_settings).to_dict()
    assert said["error_type"] == "TypeError"
    assert said["hint"].startswith(
        "dates cannot be subtracted; calendar days: days_between(prev(date()), date()); "
        "trading days between the rows a condition keeps"
    )


@pytest.mark.parametrize(
    ("call", "words"),
    [
        ("days_between(close, date())", "needs dates for start, got a number"),
        ("days_between(date(), 'soon')", "needs dates for end, got 'soon'"),
    ],
)
def test_what_is_not_a_date_is_refused(engine_settings, call: str, words: str) -> None:
    said = execute({**RTH_DAILY, "map": {"d": call}}, "NQ", settings=engine_settings).to_dict()
    assert said["error_type"] == "TypeError" and words in said["message"]
