"""Grouping by a small integer key with gaps in its span (hour 17 of a CME day is empty)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from barb.script import bincount as parallel
from barb.script.context import RowGroups


@pytest.fixture(params=[False, True], ids=["serial", "threads"])
def threaded(request, monkeypatch):
    if request.param:
        monkeypatch.setattr(parallel, "PARALLEL_ROWS", 10)
    return request.param


def test_sparse_codes_match_pandas(threaded) -> None:
    rng = np.random.default_rng(3)
    hours = rng.choice([0, 1, 2, 5, 9, 23], size=5_000).astype(np.int16)  # gaps in the span
    x = rng.normal(size=5_000)
    y = x * 0.5 + rng.normal(size=5_000)
    volume = rng.integers(1, 100, 5_000)
    frame = pd.DataFrame({"h": hours, "x": x, "y": y, "v": volume})
    rows = RowGroups.by_keys(frame, ["h"])
    expected = frame.groupby("h")
    assert list(rows.index) == [0, 1, 2, 5, 9, 23]
    np.testing.assert_allclose(rows.reduce(frame["x"], "mean"), expected["x"].mean())
    np.testing.assert_allclose(rows.reduce(frame["x"], "median"), expected["x"].median())
    np.testing.assert_array_equal(rows.reduce(frame["v"], "sum"), expected["v"].sum())
    np.testing.assert_array_equal(rows.size(), expected.size())
    spread = rows.spread(rows.reduce(frame["x"], "mean"))
    np.testing.assert_allclose(spread, expected["x"].transform("mean"))


def test_parallel_bincount_equals_numpy(monkeypatch) -> None:
    monkeypatch.setattr(parallel, "PARALLEL_ROWS", 10)
    codes = np.random.default_rng(1).integers(0, 7, 10_001)
    weights = np.arange(10_001, dtype=np.float64)
    np.testing.assert_array_equal(
        parallel.bincount(codes, weights, minlength=9), np.bincount(codes, weights, minlength=9)
    )
    np.testing.assert_array_equal(parallel.as_codes(codes + 5, 5), codes)


def test_several_small_integer_keys_match_pandas(threaded) -> None:
    """Year and month (and a third key) combine into one code: same groups, same order."""
    rng = np.random.default_rng(5)
    n = 6_000
    frame = pd.DataFrame(
        {
            "year": rng.choice([2019, 2020, 2023], size=n).astype(np.int32),  # gaps in the span
            "month": rng.integers(1, 13, n).astype(np.int64),
            "flag": rng.integers(0, 2, n).astype(np.int8),
            "x": rng.normal(size=n),
            "v": rng.integers(1, 100, n),
        }
    )
    frame.loc[(frame["year"] == 2020) & (frame["month"] == 7), "month"] = 8  # an empty combo
    for keys in (["year", "month"], ["month", "year"], ["year", "month", "flag"]):
        rows = RowGroups.by_keys(frame, keys)
        assert rows.slots is not None  # the combined small-integer path, with gaps
        expected = frame.groupby(keys)
        assert list(rows.index) == list(expected.size().index)
        assert rows.index.names == keys
        np.testing.assert_allclose(rows.reduce(frame["x"], "mean"), expected["x"].mean())
        np.testing.assert_allclose(rows.reduce(frame["x"], "median"), expected["x"].median())
        np.testing.assert_array_equal(rows.reduce(frame["v"], "sum"), expected["v"].sum())
        np.testing.assert_array_equal(rows.size(), expected.size())
        np.testing.assert_allclose(
            rows.spread(rows.reduce(frame["x"], "max")), expected["x"].transform("max")
        )


def test_wide_integer_keys_fall_back_to_factorizing() -> None:
    frame = pd.DataFrame({"a": [0, 10**6, 0], "b": [1, 2, 1], "x": [1.0, 2.0, 3.0]})
    rows = RowGroups.by_keys(frame, ["a", "b"])
    assert rows.slots is None and rows.sizes is None
    assert list(rows.index) == [(0, 1), (10**6, 2)]
    np.testing.assert_allclose(rows.reduce(frame["x"], "sum"), [4.0, 2.0])


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_squares_by_block_equal_numpy(threaded, monkeypatch, dtype) -> None:
    """Sums of squares about a centre, block by block and across threads, as numpy gives
    them over the whole array; blocks of 1,000 rows so 10,001 rows cross many."""
    monkeypatch.setattr(parallel, "_BLOCK", 1_000)
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 7, 10_001)
    values = rng.integers(0, 5_000, 10_001).astype(dtype)
    expected = np.bincount(codes, (values - 2_400.5) ** 2, minlength=9)
    got = parallel.bincount_squares(codes, values, 2_400.5, minlength=9)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert got[7:].tolist() == [0.0, 0.0]
