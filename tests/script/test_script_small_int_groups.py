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
