"""A where's few rows read as a setup say how well their mean is known and what the period's
rows without the where give: "5 down days in a row, then?" kept 21 days of NQ's last 5 years,
mean next return +0.41% (12 of 21 up) with no word, while the other 1,268 days' 0.065% was
well within its noise (Welch p = 0.34). Expected values from pandas over the hand-made RTH
days and scipy.stats' t quantile, Welch t-test and Fisher exact test, never through Barb."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask
from rth_bars import rth_daily
from scipy import stats

from barb.summary_text import value_text

NEXT = {"next_ret": "(next(close) / close - 1) * 100"}
TWO_DOWN = "close < prev(close) and prev(close) < prev(close, 2)"


@pytest.fixture(scope="module")
def days(minutes: pd.DataFrame) -> pd.DataFrame:
    daily = rth_daily(minutes)
    daily["next_ret"] = (daily["close"].shift(-1) / daily["close"] - 1) * 100
    daily["range"] = daily["high"] - daily["low"]
    daily["up"] = daily["close"] > daily["open"]
    prev = daily["close"].shift()
    daily["two_down"] = ((daily["close"] < prev) & (prev < daily["close"].shift(2))).fillna(False)
    return daily


def _said(name: str, values: pd.Series, kept: pd.Series, share: bool = False) -> str:
    """The sentence for ``values`` over the rows ``kept``: the mean ± max(2, t) standard
    errors, the mean of all the rows with a value, and the test against the others."""
    known = values.notna()
    setup, others = values[kept & known], values[~kept & known]
    n, m = len(setup), len(others)
    errors = max(2.0, stats.t.ppf(0.975, n - 1))
    band = errors * setup.std(ddof=1) / np.sqrt(n)
    if share:
        hits, other_hits = int(setup.sum()), int(others.sum())
        table = [[hits, n - hits], [other_hits, m - other_hits]]
        test, p = "Fisher", stats.fisher_exact(table).pvalue
    else:
        test, p = "Welch", stats.ttest_ind(setup, others, equal_var=False).pvalue
    apart = (
        f"the difference from the other {m:,} is within noise"
        if p >= 0.05
        else f"the {n:,} rows differ from the other {m:,} by more than noise"
    )
    p_text = "< 0.001" if p < 0.001 else f"= {float(f'{p:.2g}'):g}"
    return (
        f"{float(setup.mean()):.4g} ± {float(f'{band:.2g}'):g} ({errors:.3g} standard errors, "
        f"{n:,} rows); over all {n + m:,} of the period's rows it is "
        f"{value_text(float(values[known].astype(float).mean()))}: {apart} ({test} p {p_text})."
    )


def _with(result, name: str) -> list[str]:
    return [w for w in result.metadata.warnings if w.startswith(f"{name} is ")]


def test_a_where_sample_says_its_noise_beside_the_periods_value(engine_settings, days) -> None:
    """After two down days: 11 days, the next return known on 10 (the data ends after one),
    and the share of up days: both well within the other days' noise."""
    kept = days["two_down"]
    assert 5 < kept.sum() < len(days) / 4  # few rows, as a setup keeps
    result = ask(
        {
            "map": NEXT,
            "where": TWO_DOWN,
            "select": ["count()", "mean(next_ret)", "mean(close > open) as up_share"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    assert result.summary.values["count"] == kept.sum()
    [ret] = _with(result, "mean_next_ret")
    assert ret.endswith(_said("mean_next_ret", days["next_ret"], kept))
    assert value_text(result.summary.values["mean_next_ret"]) in ret
    [share] = _with(result, "up_share")
    assert share.endswith(_said("up_share", days["up"], kept, share=True))
    assert "within noise" in ret and "within noise" in share


def test_a_setup_apart_from_the_other_days_says_so(engine_settings, days) -> None:
    """Days wider than 35 points: their mean range is apart from the others' by more than
    their noise, said with the p; within five bands of the period's mean, so still said."""
    kept = days["range"] > 35
    result = ask({"where": "range > 35", "select": "mean(range)"}, engine_settings, **RTH_DAILY)
    [said] = _with(result, "mean_range")
    assert said.endswith(_said("mean_range", days["range"], kept))
    assert "differ from the other" in said


def test_nothing_is_said_without_a_where_or_when_it_keeps_most_rows(engine_settings) -> None:
    query = {"map": NEXT, "select": ["mean(next_ret)", "mean(close > open)"]}
    for where in (None, "range > 0", "not (" + TWO_DOWN + ")"):
        asked = query if where is None else {**query, "where": where}
        result = ask(asked, engine_settings, **RTH_DAILY)
        assert not [w for w in result.metadata.warnings if "of the period's rows it is" in w]


def test_an_event_filter_is_a_setup_too(engine_settings, days) -> None:
    """ "filter": "only" picks the rows as a where would: the Fed's two 2024 decision days in
    the bars' span (31 January, 20 March), each range known to ±12.7 standard errors."""
    kept = pd.Series(days.index.isin(pd.to_datetime(["2024-01-31", "2024-03-20"])), days.index)
    result = ask(
        {"join": {"source": "fomc", "filter": "only"}, "select": "mean(range)"},
        engine_settings,
        **RTH_DAILY,
    )
    [said] = _with(result, "mean_range")
    assert said.endswith(_said("mean_range", days["range"], kept))
