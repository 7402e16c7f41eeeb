"""A threshold written on another scale than its value is said, with the form on the right one.

"Days whose range was in the top 5%" written ``rank(range) > 0.95`` counted 257 of NQ's 259
RTH days of 2024 and said nothing: rank() is a percentile 0-100. "Weeks where more than 55%
of days closed up" written ``up > 55`` over a share (0-1) keeps no week. Checked with pandas
over the fixture's RTH days: its own percentile rank (method max, pct) and weekly shares.
"""

from __future__ import annotations

import pandas as pd
import pytest
import talib
from asking import ask, warnings_with
from rth_bars import rth_daily

from barb.caveats.scale_mixups import OSCILLATORS
from barb.charts import chart_headline
from barb.script.library import library

RTH_DAILY = {"session": "RTH", "from": "daily", "period": "2024"}
PERCENTILE = "is a percentile from 0 to 100"
SHARE = "is a share from 0 to 1"


@pytest.fixture(scope="module")
def days(minutes) -> pd.DataFrame:
    """RTH days with their range and its percentile rank over the period, as rank() reads
    it: the share of the days at or below each one's range, times 100."""
    bars = rth_daily(minutes)
    bars["range"] = bars["high"] - bars["low"]
    bars["rank"] = bars["range"].rank(method="max", pct=True) * 100
    return bars


def _count(where: str, settings) -> tuple[int, list[str]]:
    result = ask({"where": where, "select": "count() as n"}, settings, **RTH_DAILY)
    return int(result.summary.value), result.metadata.warnings


def test_a_rank_against_a_fraction_is_said_with_its_count(engine_settings, days) -> None:
    kept = int((days["rank"] > 0.95).sum())
    top = int((days["rank"] > 95).sum())
    # The fraction keeps nearly every day; the top 5% is a few of them.
    assert kept >= len(days) - 1 and 0 < top <= round(0.05 * len(days)) + 1

    count, warnings = _count("rank(range) > 0.95", engine_settings)
    assert count == kept
    assert [w for w in warnings if PERCENTILE in w] == [
        f"rank() is a percentile from 0 to 100: rank(range) > 0.95 keeps {kept} of the "
        f"{len(days)} rows; the top 5% is rank(range) > 95."
    ]

    count, warnings = _count("rank(range) > 95", engine_settings)
    assert count == top
    assert not [w for w in warnings if PERCENTILE in w]


def test_a_bottom_rank_written_first_and_within_a_where(engine_settings, days) -> None:
    """A number on the left, among other conditions: the form is said, no count (the where
    kept its rows for both conditions)."""
    result = ask(
        {"map": {"rk": "rank(range)"}, "where": "0.1 >= rk and close > open", "select": "count()"},
        engine_settings,
        **RTH_DAILY,
    )
    up = days["close"] > days["open"]
    assert result.summary.value == int(((days["rank"] <= 0.1) & up).sum())
    assert warnings_with(result, PERCENTILE) == [
        "rank() is a percentile from 0 to 100: 0.1 >= rk reads 0.1 on the wrong scale; the "
        "bottom 10% is rk <= 10."
    ]


def test_a_share_against_a_percent_in_a_then_stage_is_said(engine_settings, days) -> None:
    week = days.index.to_series().dt.to_period("W")
    shares = (days["close"] > days["open"]).groupby(week).mean()
    query = {
        "group_by": "week()",
        "select": "mean(close > open) as up",
        "then": {"where": "up > 55"},
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.table is None or len(result.table) == 0
    assert warnings_with(result, SHARE) == [
        f"up is a share from 0 to 1: up > 55 keeps 0 of the {len(shares)} rows; more than "
        "55% is up > 0.55."
    ]

    fixed = ask({**query, "then": {"where": "up > 0.55"}}, engine_settings, **RTH_DAILY)
    assert len(fixed.table) == int((shares > 0.55).sum()) > 0
    assert not warnings_with(fixed, SHARE)


@pytest.mark.parametrize(
    "where",
    [
        "range > 0.5",  # a price column: its scale is the data's
        "rank(range) > 5",  # on the percentile's own scale
        "rank(range) > 0",
        "close / open - 1 > 0.005",  # a ratio, not a percentile
    ],
)
def test_thresholds_on_their_scale_say_nothing(engine_settings, where: str) -> None:
    _, warnings = _count(where, engine_settings)
    assert not [w for w in warnings if PERCENTILE in w or SHARE in w]


def test_a_rank_against_a_fraction_in_a_statistic_is_said(engine_settings, days) -> None:
    """count() of the comparison, not the where's: the form, without a count."""
    result = ask({"select": "count(rank(range) >= 0.9) as big"}, engine_settings, **RTH_DAILY)
    assert result.summary.value == int((days["rank"] >= 0.9).sum())
    assert warnings_with(result, PERCENTILE) == [
        "rank() is a percentile from 0 to 100: rank(range) >= 0.9 reads 0.9 on the wrong "
        "scale; the top 10% is rank(range) >= 90."
    ]


def test_a_mean_of_ranks_is_given_its_scale_not_a_top_share(engine_settings, days) -> None:
    """A then stage's mean rank per week is a percentile with no top rows of its own."""
    week = days.index.to_series().dt.to_period("W")
    means = days["rank"].groupby(week).mean()
    query = {
        "group_by": "week()",
        "select": "mean(rank(range)) as avg_rank",
        "then": {"where": "avg_rank < 0.5"},
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert int((means < 0.5).sum()) == 0
    assert warnings_with(result, PERCENTILE) == [
        f"avg_rank is a percentile from 0 to 100: avg_rank < 0.5 keeps 0 of the {len(means)} "
        "rows; on that scale it is avg_rank < 50."
    ]


def test_an_oscillator_against_a_fraction_is_said(engine_settings, days) -> None:
    """rsi() runs 0-100 (TA-Lib's RSI over the RTH closes): > 0.7 is every day it has."""
    rsi = pd.Series(talib.RSI(days["close"].to_numpy(dtype=float), 14), index=days.index)
    kept, known = int((rsi > 0.7).sum()), int(rsi.notna().sum())
    assert kept == known

    count, warnings = _count("rsi(close, 14) > 0.7", engine_settings)
    assert count == kept
    assert [w for w in warnings if "runs from 0 to 100" in w] == [
        f"rsi() runs from 0 to 100: rsi(close, 14) > 0.7 keeps {kept} of the {len(days)} rows; "
        "on that scale it is rsi(close, 14) > 70."
    ]
    count, warnings = _count("rsi(close, 14) > 70", engine_settings)
    assert count == int((rsi > 70).sum())
    assert not [w for w in warnings if "runs from 0 to 100" in w]


def test_the_oscillators_said_are_barb_functions() -> None:
    assert set(library()) >= OSCILLATORS


def test_a_first_stages_mean_rsi_in_a_then_where_is_said(engine_settings, days) -> None:
    """ "Weeks whose average RSI was above 50": the first stage averages rsi() per week as
    r, the then stage's ``r > 0.5`` keeps every week with an RSI and was told nothing; r
    holds rsi() values (TA-Lib's RSI over the RTH closes, averaged per week by pandas)."""
    rsi = pd.Series(talib.RSI(days["close"].to_numpy(dtype=float), 14), index=days.index)
    week = days.index.to_series().dt.to_period("W")
    means = rsi.groupby(week).mean().dropna()
    query = {
        "map": {"rsi": "rsi(close, 14)"},
        "group_by": "week()",
        "select": "mean(rsi) as r",
        "then": {"where": "r > 0.5"},
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    weeks = len(rsi.groupby(week))
    assert len(result.table) == int((means > 0.5).sum()) == len(means)
    assert warnings_with(result, "run from 0 to 100") == [
        f"r holds rsi() values, which run from 0 to 100: r > 0.5 keeps {len(means)} of the "
        f"{weeks} rows; on that scale it is r > 50."
    ]

    fixed = ask({**query, "then": {"where": "r > 50"}}, engine_settings, **RTH_DAILY)
    assert len(fixed.table) == int((means > 50).sum()) < len(means)
    assert not warnings_with(fixed, "run from 0 to 100")


@pytest.mark.parametrize(
    "select",
    [
        "sum(rsi) as r",  # a sum of RSI is on no 0-100 scale
        "mean(close) as r",
    ],
)
def test_a_then_where_on_other_values_says_no_oscillator(engine_settings, select: str) -> None:
    query = {
        "map": {"rsi": "rsi(close, 14)"},
        "group_by": "week()",
        "select": select,
        "then": {"where": "r > 0.5"},
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert not warnings_with(result, "0 to 100")


@pytest.mark.parametrize(
    ("select", "then_map", "named"),
    [
        (["count(close > open) / count() as up"], None, "up"),
        (["sum(close > open) as ups", "count() as n"], {"up": "ups / n"}, "up (ups / n)"),
    ],
)
def test_a_share_counted_by_hand_against_a_percent_is_said(
    engine_settings, days, select: list[str], then_map: dict | None, named: str
) -> None:
    """The up days over all the days, written count(close > open) / count() (or summed in a
    first stage and divided in the then stage), is a share as mean(close > open) is: "weeks
    where more than 55% of days closed up" as ``up > 55`` kept no week and said nothing."""
    week = days.index.to_series().dt.to_period("W")
    shares = (days["close"] > days["open"]).groupby(week).mean()
    then = {"where": "up > 55", **({"map": then_map} if then_map else {})}
    query = {"group_by": "week()", "select": select, "then": then}
    result = ask(query, engine_settings, **RTH_DAILY)
    assert result.table is None or len(result.table) == 0
    assert warnings_with(result, SHARE) == [
        f"{named} is a share from 0 to 1: up > 55 keeps 0 of the {len(shares)} rows; more "
        "than 55% is up > 0.55."
    ]
    fixed = ask({**query, "then": {**then, "where": "up > 0.55"}}, engine_settings, **RTH_DAILY)
    assert len(fixed.table) == int((shares > 0.55).sum()) > 0
    assert not warnings_with(fixed, SHARE)


def test_a_then_rank_against_a_fraction_is_said_as_its_top_share(engine_settings, days) -> None:
    """ "Days in the top 10% by range" as a first stage's ``rank(range) as rk`` and a then
    stage's ``rk > 0.9`` keeps nearly every day: said as the first stage's own rank is,
    with the top 10% (rank is a percentile 0-100 over the period's days)."""
    query = {"map": {"rk": "rank(range)"}, "select": "range, rk", "then": {"where": "rk > 0.9"}}
    result = ask(query, engine_settings, **RTH_DAILY)
    kept = int((days["rank"] > 0.9).sum())
    assert len(result.table) == kept >= len(days) - 3
    assert warnings_with(result, "percentile") == [
        f"rk holds rank(), a percentile from 0 to 100: rk > 0.9 keeps {kept} of the "
        f"{len(days)} rows; the top 10% is rk > 90."
    ]
    fixed = ask({**query, "then": {"where": "rk > 90"}}, engine_settings, **RTH_DAILY)
    assert len(fixed.table) == int((days["rank"] > 90).sum()) < len(days) // 5
    assert not warnings_with(fixed, "percentile")


def test_a_then_where_keeping_no_group_says_so_and_not_their_noise(engine_settings, days) -> None:
    """ "Months whose average RSI was under 30" written ``r < 0.3`` keeps no month (TA-Lib's
    RSI, averaged per month by pandas, is far above 0.3): said as a first stage's where
    keeping no bar is, and nothing of the months' noise, which the answer does not hold."""
    rsi = pd.Series(talib.RSI(days["close"].to_numpy(dtype=float), 14), index=days.index)
    means = rsi.groupby(days.index.month).mean()
    assert len(means) >= 2 and means.min() > 0.3
    query = {
        "map": {"rsi": "rsi(close, 14)"},
        "group_by": "month()",
        "select": "mean(rsi) as r",
        "then": {"where": "r < 0.3"},
    }
    result = ask(query, engine_settings, **RTH_DAILY)
    assert len(result.table) == 0
    warnings = result.metadata.warnings
    assert "No months matched the then where: the result is empty." in warnings
    assert not [w for w in warnings if "appears once" in w or "noise" in w]
    # The person's headline says so too ("0 rows" read as an answer).
    assert chart_headline(result) == f"nothing matched (0 of {len(means)} months, 2024)"
    assert chart_headline(result, "ru") == f"ничего не подошло (0 из {len(means)} месяцев, 2024)"
    kept = ask({**query, "then": {"where": "r < 50"}}, engine_settings, **RTH_DAILY)
    assert len(kept.table) == int((means < 50).sum()) > 0
    assert not [w for w in kept.metadata.warnings if "matched the then where" in w]
