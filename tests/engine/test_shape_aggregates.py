"""skew and kurt over the full sample: by year, in a second stage and with their sample size,
against pandas' Series.skew()/kurt() and DuckDB's skewness/kurtosis over the minute file."""

from __future__ import annotations

import pandas as pd
import pytest
from duckdb_answers import RTH, rth_closes

from barb import execute
from barb.result import Result

DAILY_RETURNS = {"session": "RTH", "from": "daily", "map": {"ret": "close / prev(close) - 1"}}


def _ok(query: dict, settings) -> Result:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


@pytest.mark.slow
def test_skew_and_kurt_of_daily_returns_by_year(sample_settings, con) -> None:
    result = _ok(
        {**DAILY_RETURNS, "group_by": "year()", "select": ["skew(ret)", "kurt(ret)"]},
        sample_settings,
    )
    returns = rth_closes(con, "nq").pct_change()
    by_year = returns.groupby(returns.index.year)
    table = result.table.set_index("year")
    assert list(table.index) == list(by_year.groups)
    assert table["skew_ret"].tolist() == pytest.approx(by_year.skew().tolist(), rel=1e-9)
    assert table["kurt_ret"].tolist() == pytest.approx(
        by_year.apply(pd.Series.kurt).tolist(), rel=1e-9
    )
    # DuckDB's sample estimators are the same ones.
    duck = con.execute(
        f"""
        SELECT year(d) AS y, skewness(c / prev - 1) AS s, kurtosis(c / prev - 1) AS k FROM (
            SELECT d, c, lag(c) OVER (ORDER BY d) AS prev FROM (
                SELECT trading_date AS d, arg_max(close, timestamp) AS c FROM nq
                WHERE {RTH} GROUP BY 1))
        GROUP BY 1 ORDER BY 1
        """
    ).df()
    assert table["skew_ret"].tolist() == pytest.approx(duck["s"].tolist(), rel=1e-6)
    assert table["kurt_ret"].tolist() == pytest.approx(duck["k"].tolist(), rel=1e-6)


@pytest.mark.slow
def test_skew_and_kurt_of_monthly_returns_in_a_second_stage(sample_settings, con) -> None:
    """Each month's return as the sum of its daily returns, then their shape."""
    result = _ok(
        {
            **DAILY_RETURNS,
            "group_by": ["year()", "month()"],
            "select": "sum(ret) as m",
            "then": {"select": ["skew(m)", "kurt(m)"]},
        },
        sample_settings,
    )
    returns = rth_closes(con, "nq").pct_change()
    months = returns.groupby([returns.index.year, returns.index.month]).sum()
    values = result.summary.values
    assert values["skew_m"] == pytest.approx(months.skew(), rel=1e-9)
    assert values["kurt_m"] == pytest.approx(months.kurt(), rel=1e-9)


@pytest.mark.slow
def test_skew_over_some_of_the_days_says_how_many(sample_settings, con) -> None:
    """Like std, skew and kurt count only the rows with a value: the up days here."""
    result = _ok(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "map": {"up_ret": "if(close > open, close / open - 1, 0 / 0)"},
            "select": ["skew(up_ret)", "kurt(up_ret)", "count()"],
        },
        sample_settings,
    )
    days = con.execute(
        f"""
        SELECT trading_date AS d, arg_min(open, timestamp) AS o, arg_max(close, timestamp) AS c
        FROM nq WHERE {RTH} AND year(trading_date) = 2024 GROUP BY 1 ORDER BY 1
        """
    ).df()
    up = (days["c"] / days["o"] - 1).where(days["c"] > days["o"])
    values = result.summary.values
    assert values["skew_up_ret"] == pytest.approx(up.skew(), rel=1e-9)
    assert values["kurt_up_ret"] == pytest.approx(up.kurt(), rel=1e-9)
    sample = int(up.notna().sum())
    assert 0 < sample < len(days) == values["count"]
    assert result.summary.samples == {"skew_up_ret": sample, "kurt_up_ret": sample}
