"""rank(x, 'day') and place(x, 'day') over minute bars: the fast per-unit ranks are pandas'
own, byte for byte, on ties, missing values, infinities, -0.0 and rows without a date, and
place() through the engine picks what a plain per-day sort picks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import ask
from hypothesis import given, settings
from hypothesis import strategies as st

from barb.script import group_ranks

_VALUES = [0.0, -0.0, 1.0, 1.0, 2.5, -3.0, np.inf, -np.inf, np.nan, 7.0, 1e300]


@pytest.fixture
def always_fast(monkeypatch):
    monkeypatch.setattr(group_ranks, "_FAST_ROWS", 0)


def _pandas(values: pd.Series, keys: np.ndarray, **how) -> pd.Series:
    return values.groupby(keys, sort=False).rank(**how)


def _same(fast: pd.Series, slow: pd.Series) -> None:
    assert fast.dtype == slow.dtype == np.float64
    assert fast.name == slow.name
    assert fast.index.equals(slow.index)
    np.testing.assert_array_equal(
        fast.to_numpy().view(np.int64), slow.to_numpy().view(np.int64)
    )  # bit for bit, NaN's too


def _fast_only(values: pd.Series, keys: np.ndarray, **how) -> pd.Series:
    """The fast path's answer; it must not have handed the case to pandas."""
    fast = group_ranks._fast_ranks(values, keys, **{"pct": False, **how})
    assert fast is not None
    return pd.Series(fast, index=values.index, name=values.name)


@settings(max_examples=150, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 30), min_size=1, max_size=8),
    picks=st.data(),
)
def test_ranks_match_pandas_on_every_kind_of_value(sizes, picks) -> None:
    n = sum(sizes)
    x = picks.draw(st.lists(st.sampled_from(_VALUES), min_size=n, max_size=n))
    no_date = picks.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    days = np.repeat(np.arange(len(sizes)), sizes).astype("datetime64[D]").astype("M8[ns]")
    days[np.array(no_date) & (np.arange(n) % 3 == 0)] = np.datetime64("NaT")
    values = pd.Series(x, index=np.arange(n) * 2 + 5, name="x")
    for how in (
        {"method": "first", "ascending": False},
        {"method": "max", "ascending": True, "pct": True},
        {"method": "first", "ascending": True},
        {"method": "max", "ascending": False},
    ):
        if np.isnat(days).all():
            continue
        _same(_fast_only(values, days, **how), _pandas(values, days, **how))


@pytest.mark.parametrize("seed", range(5))
def test_ranks_taken_some_keys_at_a_time_match_pandas(monkeypatch, seed: int) -> None:
    """Keys ranked a chunk of rows at a time, each chunk whole keys (one longer than a
    chunk alone): the same ranks."""
    monkeypatch.setattr(group_ranks, "_CHUNK_ROWS", 7)
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 20, 150)
    n = int(sizes.sum())
    days = np.repeat(np.arange(len(sizes)), sizes).astype("datetime64[D]").astype("M8[ns]")
    days[rng.uniform(size=n) < 0.05] = np.datetime64("NaT")
    values = pd.Series(rng.choice(_VALUES, n), name="x")
    for how in (
        {"method": "first", "ascending": False},
        {"method": "max", "ascending": True, "pct": True},
    ):
        _same(_fast_only(values, days, **how), _pandas(values, days, **how))


def test_integer_and_bool_values_rank_as_pandas_ranks_them(always_fast) -> None:
    rng = np.random.default_rng(4)
    days = np.repeat(np.arange(40), 25).astype("datetime64[D]").astype("M8[ns]")
    for values in (
        pd.Series(rng.integers(-3, 4, 1000)),
        pd.Series(rng.integers(0, 2, 1000).astype(bool)),
        pd.Series(rng.integers(0, 5, 1000).astype(np.uint8)),
    ):
        for how in ({"method": "first", "ascending": False}, {"method": "max", "pct": True}):
            how = {"ascending": True, **how}
            _same(group_ranks.ranks(values, days, **how), _pandas(values, days, **how))


def test_what_it_cannot_rank_exactly_goes_to_pandas(always_fast) -> None:
    days = np.repeat(np.arange(4), 5).astype("datetime64[D]").astype("M8[ns]")
    how = {"method": "first", "ascending": False}
    huge = pd.Series(2**60 + np.arange(20, dtype=np.int64))  # not exact as float64
    shuffled = days[::-1].copy()  # a key's rows are one run, but out of order
    nullable = pd.Series(pd.array([1, None, 3, 3] * 5, dtype="Int64"))
    for values, keys in ((huge, days), (pd.Series(np.arange(20.0)), shuffled), (nullable, days)):
        assert group_ranks._fast_ranks(values, keys, pct=False, **how) is None
        pd.testing.assert_series_equal(
            group_ranks.ranks(values, keys, **how), _pandas(values, keys, **how), check_exact=True
        )


def test_place_per_day_picks_each_day_s_first_highest_minute(
    always_fast, engine_settings, minutes
) -> None:
    """ "The minute of each day's highest volume, its 3 busiest" over minute bars: each day's
    rows sorted by volume, highest first, ties earliest first, by Python's sort."""
    bars = minutes.copy()
    bars["day"] = (bars["timestamp"] + pd.Timedelta(hours=6)).dt.normalize()
    expected = []
    for _, day in bars.groupby("day"):
        order = sorted(range(len(day)), key=lambda i: (-day["volume"].iat[i], i))
        expected.extend(day["timestamp"].iloc[order[:3]])
    query = {
        "session": "ETH",
        "from": "1m",
        "map": {"p": "place(volume, 'day')"},
        "where": "p <= 3",
        "select": ["timestamp", "volume", "p"],
    }
    result = ask(query, engine_settings)
    rows = result.table if result.table is not None else result.source_rows
    assert sorted(pd.to_datetime(rows["timestamp"])) == sorted(expected)


def test_rank_per_day_is_the_share_of_the_day_at_or_below(
    always_fast, engine_settings, minutes
) -> None:
    bars = minutes.copy()
    bars["day"] = (bars["timestamp"] + pd.Timedelta(hours=6)).dt.normalize()
    expected = 0
    for _, day in bars.groupby("day"):
        high = day["high"].to_numpy()
        share = (high[None, :] <= high[:, None]).sum(axis=1) / len(high) * 100
        expected += int((share >= 99).sum())
    query = {
        "session": "ETH",
        "from": "1m",
        "where": "rank(high, 'day') >= 99",
        "select": "count()",
    }
    assert ask(query, engine_settings).summary.value == expected
