"""Charts of queries that testers, playing the model, found drawn or headlined wrong, run by
the engine on the sample. Expected numbers come from DuckDB (or pandas) over the same Parquet
bars, never from the engine."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.text import Text

import barb
from barb import execute
from barb.charts import chart_headline, draw_chart
from barb.data.store import data_path
from barb.result import Result

pytestmark = pytest.mark.slow

RTH = "minute >= 570 AND minute < 1020"
# The FOMC decision days as published (a file of the package, not computed by the engine).
FOMC_DAYS = Path(barb.__file__).parent / "events" / "data" / "fomc.csv"


@pytest.fixture(scope="module")
def con(sample_settings):
    con = duckdb.connect()
    for symbol in ("NQ", "ES"):
        path = data_path(symbol, sample_settings)
        con.execute(f"CREATE VIEW {symbol.lower()} AS SELECT * FROM read_parquet('{path}')")
    yield con
    con.close()


@pytest.fixture(scope="module")
def days(con) -> pd.DataFrame:
    """NQ's RTH days: open, high, low, close, volume, one row per trading date, in order."""
    return (
        con.execute(
            f"""
            SELECT trading_date AS d, arg_min(open, timestamp) AS open, max(high) AS high,
                   min(low) AS low, arg_max(close, timestamp) AS close, sum(volume) AS volume
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


def title(fig: Figure) -> str:
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return max(texts, key=lambda t: t.get_fontsize()).get_text()


def bar_heights(ax: Axes) -> np.ndarray:
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return np.array([p.vertices[2, 1] - p.vertices[0, 1] for p in bars.get_paths()])


def day_text(day: pd.Timestamp) -> str:
    return pd.Timestamp(day).strftime("%Y-%m-%d")


# --- C1: "last" is the latest row in time, whatever the table's order ---------------------


def test_the_last_close_of_a_table_sorted_newest_first_is_the_newest(sample_settings, days):
    query = {
        "session": "RTH",
        "from": "daily",
        "sort": "timestamp desc",
        "limit": 3,
        "select": ["timestamp", "close"],
    }
    result = run(query, sample_settings)
    newest = days.index.max()
    expected = f"close last: {days['close'].iloc[-1]:,.0f} ({day_text(newest)})"
    assert title(figure(result)) == expected
    ru = chart_headline(result, "ru")
    assert ru is not None and ru.endswith(f"({day_text(newest)})")


@pytest.mark.parametrize("limit", [1, 3])
def test_the_last_golden_cross_names_the_latest_cross(sample_settings, days, limit) -> None:
    """ "When was the last golden cross": crosses sorted newest first, one or a few."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "sma50": "rolling_mean(close, 50)",
            "sma200": "rolling_mean(close, 200)",
            "golden": "sma50 > sma200 and prev(sma50) <= prev(sma200)",
        },
        "where": "golden",
        "sort": "timestamp desc",
        "limit": limit,
        "select": ["timestamp", "close", "sma50", "sma200"],
    }
    result = run(query, sample_settings)
    fast, slow = days["close"].rolling(50).mean(), days["close"].rolling(200).mean()
    crosses = days.index[(fast > slow) & (fast.shift() <= slow.shift())]
    assert len(crosses) > limit
    last = crosses.max()
    expected = f"close last: {days.loc[last, 'close']:,.0f} ({day_text(last)})"
    assert chart_headline(result) == expected


# --- C3: a grouped headline is about the value asked for, not the row counts ---------------


def test_an_event_comparison_headlines_the_mean_not_the_count(sample_settings, days) -> None:
    """Mean range on FOMC days and others, with the count of each: the count came first in
    the select and took the headline ("count: highest no fomc 4,502 days")."""
    query = {
        "session": "RTH",
        "from": "daily",
        "join": "fomc",
        "group_by": "fomc",
        "select": ["count()", "mean(range)"],
    }
    result = run(query, sample_settings)
    fomc = pd.read_csv(FOMC_DAYS, comment="#", parse_dates=["date"])["date"]
    # A decision on a day without a session (a Sunday in March 2020) is the next day's news.
    after = days.index.searchsorted(fomc[fomc <= days.index.max()])
    on_fomc = np.isin(np.arange(len(days)), after)
    ranges = days["high"] - days["low"]
    means = {"fomc": ranges[on_fomc].mean(), "no fomc": ranges[~on_fomc].mean()}
    assert on_fomc.sum() > 100
    high, low = max(means, key=means.get), min(means, key=means.get)
    expected = (
        f"mean_range: highest {high} {means[high]:,.1f} points, "
        f"lowest {low} {means[low]:,.1f} points"
    )
    assert chart_headline(result) == expected
    fig = figure(result)
    top = max(fig.axes, key=lambda ax: ax.get_position().y1)
    np.testing.assert_allclose(
        bar_heights(top), [means["no fomc"], means["fomc"]], rtol=1e-9
    )  # the mean's panel on top, right under the headline
