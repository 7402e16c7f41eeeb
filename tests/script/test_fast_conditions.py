"""The engine's shortcuts past pandas give pandas' own answers: date fields read from a
table of days (``barb.script.day_fields``) and three-valued and/or on numpy arrays
(``barb.script.conditions.kleene_logical``)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from barb.script.conditions import kleene_logical, known_true, plain_if_known
from barb.script.day_fields import FIELDS, day_field


@pytest.mark.parametrize("field", FIELDS)
def test_day_fields_are_pandas_fields_on_daily_and_minute_stamps(field: str) -> None:
    days = pd.Series(pd.date_range("1900-01-01", "2199-12-31", freq="D"), name="trading_date")
    minutes = pd.Series(pd.date_range("2007-12-30 18:00", periods=40_000, freq="47min"))
    for stamps in (days, minutes, days.iloc[:0]):
        fast = day_field(stamps, field)
        assert fast is not None
        expected = getattr(stamps.dt, field)
        pd.testing.assert_series_equal(fast, expected)


def test_day_fields_leave_missing_and_untabled_dates_to_pandas() -> None:
    assert day_field(pd.Series([pd.NaT, pd.Timestamp("2024-01-02")]), "year") is None
    assert day_field(pd.Series(pd.to_datetime(["1850-06-01"])), "year") is None
    assert day_field(pd.Series(pd.to_datetime(["2024-01-02"]).tz_localize("UTC")), "year") is None


def _conditions() -> list[pd.Series]:
    """Every pairing of true, false and unknown, as nullable and as plain conditions."""
    values = [True, False, None]
    left, right = zip(*itertools.product(values, values), strict=True)
    nullable = [pd.Series(list(v), dtype="boolean", name=n) for v, n in ((left, "a"), (right, "b"))]
    plain = [pd.Series([True, False, True, True, False, False, True, False, True], name="a")]
    return nullable + plain


@pytest.mark.parametrize("op", ["and", "or"])
def test_kleene_logical_is_pandas_three_valued_logic(op: str) -> None:
    for left, right in itertools.product(_conditions(), repeat=2):
        nullable = [
            s if isinstance(s.dtype, pd.BooleanDtype) else s.astype("boolean")
            for s in (left, right)
        ]
        expected = nullable[0] & nullable[1] if op == "and" else nullable[0] | nullable[1]
        pd.testing.assert_series_equal(kleene_logical(op, left, right), plain_if_known(expected))


def test_known_true_and_plain_if_known_match_pandas() -> None:
    unknown = pd.Series([True, None, False], dtype="boolean", name="x")
    known = pd.Series([True, False], dtype="boolean", name="x")
    assert known_true(unknown).tolist() == unknown.fillna(False).to_numpy(dtype=bool).tolist()
    pd.testing.assert_series_equal(plain_if_known(known), known.astype(bool))
    assert plain_if_known(unknown) is unknown
    assert np.array_equal(known_true(pd.Series([True, False])), [True, False])
