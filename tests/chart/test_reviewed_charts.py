"""Charts a reviewer of 79 real answers found wrong (round 4), run by the engine on the
sample. Expected numbers come from DuckDB or pandas over the same Parquet bars, never from
the engine."""

from __future__ import annotations

import re

import duckdb
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from barb import execute
from barb.charts import chart_headline, draw_chart
from barb.data.store import data_path
from barb.result import Result

pytestmark = pytest.mark.slow

RTH = "minute >= 570 AND minute < 1020"
MINUS = "\u2212"


@pytest.fixture(scope="module")
def con(sample_settings):
    con = duckdb.connect()
    path = data_path("NQ", sample_settings)
    con.execute(f"CREATE VIEW nq AS SELECT * FROM read_parquet('{path}')")
    yield con
    con.close()


@pytest.fixture(scope="module")
def days(con) -> pd.DataFrame:
    """NQ's RTH days: open, high, low, close, one row per trading date, in order."""
    return (
        con.execute(
            f"""
            SELECT trading_date AS d, arg_min(open, timestamp) AS open, max(high) AS high,
                   min(low) AS low, arg_max(close, timestamp) AS close
            FROM nq WHERE {RTH} GROUP BY 1 ORDER BY 1
            """
        )
        .df()
        .set_index("d")
    )


def run(query: dict, settings) -> Result:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def figure(result: Result, language: str = "en") -> Figure:
    fig = draw_chart(result, language=language)
    assert fig is not None
    fig.canvas.draw()
    return fig


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def number(text: str) -> float:
    """A written number back to a float: ``−0,00032`` -> -0.00032 (either language)."""
    plain = text.replace(MINUS, "-").replace("\u00a0", "").replace(" ", "")
    plain = plain.replace(",", ".") if re.search(r",\d+$", plain) and "." not in plain else plain
    return float(plain.replace(",", ""))


# --- 1: tiny values keep their digits and their sign --------------------------------------


def test_a_tiny_mean_return_is_not_written_as_zero(sample_settings, con) -> None:
    """The mean one-minute return of a month is about 1e-05: "mean_ret = 0.000" said zero."""
    query = {
        "session": "RTH",
        "from": "1m",
        "period": "2024-03",
        "map": {"ret": "close / prev(close) - 1"},
        "select": "mean(ret)",
    }
    result = run(query, sample_settings)
    # prev() of the month's first bar is February's last RTH close.
    (expected,) = con.execute(
        f"""
        SELECT avg(ret) FROM (
            SELECT trading_date, close / lag(close) OVER (ORDER BY timestamp) - 1 AS ret
            FROM nq WHERE {RTH}
        ) WHERE trading_date >= DATE '2024-03-01' AND trading_date < DATE '2024-04-01'
        """
    ).fetchone()
    assert 0 < abs(expected) < 1e-3
    for language in ("en", "ru"):
        head = chart_headline(result, language)
        assert head is not None and head.startswith("mean_ret = ")
        written = number(head.removeprefix("mean_ret = "))
        assert written == pytest.approx(expected, rel=0.01)  # three significant digits


def test_tiny_weekday_means_keep_their_sign_and_differ(sample_settings, days) -> None:
    """Mean daily return by weekday: Thursday's negative mean read "0,000" under a bar below
    zero, and Monday's 0.00108 and Tuesday's 0.00073 both read "0,001"."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2015:2024",
        "map": {"wd": "dayname()", "ret": "close / prev(close) - 1"},
        "group_by": "wd",
        "select": "mean(ret)",
    }
    result = run(query, sample_settings)
    ret = days["close"] / days["close"].shift() - 1  # 2015's first prev() is 2014's close
    ret = ret[(ret.index >= pd.Timestamp("2015-01-01")) & (ret.index < pd.Timestamp("2025-01-01"))]
    means = ret.groupby(pd.DatetimeIndex(ret.index).dayofweek).mean()
    assert (means < 0).any() and means.abs().max() < 0.01
    fig = figure(result, "ru")
    (ax,) = [a for a in fig.axes if a.texts]
    labels = [t.get_text() for t in ax.texts if re.search(r"\d", t.get_text())]
    assert len(labels) == len(means) and len(set(labels)) == len(labels)
    written = np.array([number(t) for t in labels])
    np.testing.assert_allclose(written, means.to_numpy(), atol=1e-5)
    assert all(t.startswith(MINUS) == (m < 0) for t, m in zip(labels, means, strict=True))
    head = chart_headline(result, "ru")
    low = means.idxmin()
    assert head is not None and head.endswith(f"Чт {MINUS}{abs(means[low]):.5f}".replace(".", ","))
