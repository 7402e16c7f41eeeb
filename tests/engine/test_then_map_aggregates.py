"""An aggregate in a second stage's map is over all that stage's rows (the first stage's
table), repeated on each: "the distribution of daily returns by 1% bucket, in % of the days"
is ``days / sum(days) * 100``. Elsewhere outside select an aggregate stays an error, and the
hint names then.map. Expected values from pandas over the sample's RTH minute bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import ask
from rth_bars import sample_rth_days

from barb import execute

pytestmark = pytest.mark.slow

FIRST_YEAR, LAST_YEAR = 2020, 2025
BUCKETS = {
    "session": "RTH",
    "from": "daily",
    "period": f"{FIRST_YEAR}:{LAST_YEAR}",
    "map": {"ret": "(close / prev(close) - 1) * 100", "bucket": "floor(ret, 1)"},
    "group_by": "bucket",
    "select": "count() as days",
}


@pytest.fixture(scope="module")
def rth_days(sample_settings) -> pd.DataFrame:
    daily = sample_rth_days(sample_settings)
    daily["ret"] = (daily["close"] / daily["close"].shift(1) - 1) * 100  # across years
    years = pd.DatetimeIndex(daily.index).year
    return daily[(years >= FIRST_YEAR) & (years <= LAST_YEAR)]


@pytest.fixture(scope="module")
def bucket_days(rth_days) -> pd.Series:
    """Days per 1% bucket of the daily return: the first stage's table, by pandas."""
    ret = rth_days["ret"].dropna()
    buckets = np.floor(np.round(ret.to_numpy(), 9))
    return pd.Series(buckets).value_counts().sort_index()


def test_each_buckets_share_of_all_days(sample_settings, bucket_days) -> None:
    result = ask({**BUCKETS, "then": {"map": {"share": "days / sum(days) * 100"}}}, sample_settings)
    table = result.table.set_index("bucket")
    assert table["days"].to_dict() == bucket_days.to_dict()
    expected = bucket_days / bucket_days.sum() * 100
    np.testing.assert_allclose(table["share"].to_numpy(), expected.to_numpy(), rtol=1e-12)
    assert table["share"].sum() == pytest.approx(100)


def test_a_where_after_the_share_keeps_the_common_buckets(sample_settings, bucket_days) -> None:
    """The share is over all the buckets, taken before the where drops the rare ones."""
    result = ask(
        {**BUCKETS, "then": {"map": {"share": "days / sum(days) * 100"}, "where": "share >= 5"}},
        sample_settings,
    )
    share = bucket_days / bucket_days.sum() * 100
    common = share[share >= 5]
    assert 1 < len(common) < len(share)  # the where kept some and dropped some
    table = result.table.set_index("bucket")
    assert table.index.tolist() == common.index.tolist()
    np.testing.assert_allclose(table["share"].to_numpy(), common.to_numpy(), rtol=1e-12)


def test_each_years_mean_against_the_years_average(sample_settings, rth_days) -> None:
    """``r - mean(r)``: each year's mean return against the mean of the years' means."""
    result = ask(
        {
            **{k: BUCKETS[k] for k in ("session", "from", "period")},
            "map": {"ret": "(close / prev(close) - 1) * 100"},
            "group_by": "year()",
            "select": "mean(ret) as r",
            "then": {"map": {"dev": "r - mean(r)", "z": "(r - mean(r)) / std(r)"}},
        },
        sample_settings,
    )
    yearly = rth_days["ret"].groupby(pd.DatetimeIndex(rth_days.index).year).mean()
    dev = yearly - yearly.mean()
    table = result.table.set_index("year")
    np.testing.assert_allclose(table["dev"].to_numpy(), dev.to_numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(table["z"].to_numpy(), (dev / yearly.std(ddof=1)).to_numpy())


def test_first_and_last_in_then_map_read_the_groups_in_time_order(
    sample_settings, rth_days
) -> None:
    """A sorted first stage lists the years by their mean, not in time: first(r) is still
    the earliest year's, as in then.select."""
    result = ask(
        {
            **{k: BUCKETS[k] for k in ("session", "from", "period")},
            "map": {"ret": "(close / prev(close) - 1) * 100"},
            "group_by": "year()",
            "select": "mean(ret) as r",
            "sort": "r desc",
            "then": {"map": {"earliest": "first(r)", "latest": "last(r)"}},
        },
        sample_settings,
    )
    yearly = rth_days["ret"].groupby(pd.DatetimeIndex(rth_days.index).year).mean()
    assert result.table["year"].tolist() != sorted(result.table["year"])  # the case
    assert result.table["earliest"].tolist() == pytest.approx([yearly.iloc[0]] * len(yearly))
    assert result.table["latest"].tolist() == pytest.approx([yearly.iloc[-1]] * len(yearly))


@pytest.mark.parametrize(
    ("query", "step", "hint"),
    [
        # The first stage's map reads bars and history rows before the period.
        ({"map": {"x": "range / sum(range)"}}, "map", '"then": {"map": {"share": "days / sum('),
        (
            {**BUCKETS, "then": {"where": "days > mean(days)"}},
            "then.where",
            "compute it in then.map",
        ),
        (
            {**BUCKETS, "then": {"map": {"x": "sum(mean(days))"}}},
            "then.map",
            "aggregate it once",
        ),
    ],
)
def test_aggregates_elsewhere_stay_errors(sample_settings, query, step, hint) -> None:
    result = execute({"session": "RTH", "from": "daily", **query}, "NQ", settings=sample_settings)
    payload = result.to_dict()
    assert payload["error_type"] == "ArgumentError" and payload["step"] == step, payload
    assert hint in payload["hint"]
