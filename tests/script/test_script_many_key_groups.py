"""Grouping by many keys whose value counts multiply past int64 (p46d #8)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from barb.script.context import RowGroups


def test_keys_whose_combinations_pass_int64_group_as_pandas_does() -> None:
    """Six keys of 3,000 values each (3000**6 > 2**63), rows repeated so that groups hold
    several, and a missing key leaving its row out: the groups, their order and their sums
    are pandas'."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({key: rng.integers(0, 3_000, 4_000) + 0.5 for key in "abcdef"})
    frame = pd.concat([frame, frame.iloc[::3]], ignore_index=True)
    frame.loc[7, "d"] = np.nan
    frame["x"] = rng.normal(size=len(frame))
    keys = list("abcdef")
    assert np.prod([frame[k].nunique() for k in keys], dtype=object) > 2**63
    rows = RowGroups.by_keys(frame, keys)
    expected = frame.groupby(keys, sort=True)["x"]
    assert rows.index.equals(expected.sum().index)
    np.testing.assert_array_equal(rows.size(), expected.size())
    np.testing.assert_allclose(rows.reduce(frame["x"], "sum"), expected.sum())
    assert rows.codes[7] == -1
