"""What testers found drawn wrong: a ``then`` stage's where left out of the chart and the CSV
(all 941 weeks drawn behind an answer about 406), and a few days' columns side by side as
bars wider than a day, running into the next day's. Expected values are pandas over the
sample's minute bars, never Barb's engine."""

from __future__ import annotations

import io
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest
from engine_results import as_read, bar_heights, figure, run, title
from matplotlib.collections import PolyCollection
from matplotlib.text import Text

from barb.data.store import data_path
from barb.export import csv_bytes
from barb.settings import EngineSettings

pytestmark = pytest.mark.slow

# "When Monday is down, how does the week end?": per week, Monday's change and the week's;
# then only the weeks that opened on a down Monday.
DOWN_MONDAY_WEEKS = {
    "session": "RTH",
    "from": "daily",
    "map": {"chg": "close - prev(close)", "wd": "dayname()"},
    "group_by": "week()",
    "select": ["first(wd) as first_day", "first(chg) as mon_chg", "sum(chg) as week_chg"],
    "then": {
        "where": 'first_day == "Mon" and mon_chg < 0',
        "select": ["count()", "mean(week_chg > 0) as week_up", "mean(week_chg) as avg_week_chg"],
    },
}


@pytest.fixture(scope="module")
def rth_days(sample_settings: EngineSettings) -> pd.DataFrame:
    """NQ's RTH (09:30-17:00) days by hand: open, high, low, close per trading date."""
    bars = pd.read_parquet(
        data_path("NQ", sample_settings),
        columns=["timestamp", "open", "high", "low", "close", "trading_date", "minute"],
    )
    rth = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)].sort_values("timestamp")
    days = rth.groupby("trading_date").agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )
    days.index = pd.to_datetime(days.index)
    return days


def down_monday_weeks(days: pd.DataFrame, year: int | None = None) -> tuple[pd.DataFrame, int]:
    """The weeks (of ``year``) that opened on a down Monday, and the number of weeks."""
    chg = days["close"].diff()  # a year's first day compares with the year before's last
    frame = pd.DataFrame({"chg": chg, "wd": days.index.day_name().str[:3]})
    if year is not None:
        frame = frame[frame.index.year == year]
    week = frame.index - pd.to_timedelta(frame.index.dayofweek, unit="D")
    weeks = frame.groupby(week).agg(
        first_day=("wd", "first"), mon_chg=("chg", "first"), week_chg=("chg", "sum")
    )
    used = weeks[(weeks["first_day"] == "Mon") & (weeks["mon_chg"] < 0)]
    return used, len(weeks)


def footer(fig) -> str:
    texts = [t.get_text() for t in fig.findobj(Text) if t.get_visible()]
    return " ".join(t.replace("\n", " ") for t in texts)


def test_a_then_where_draws_and_exports_only_the_rows_behind_the_answer(
    sample_settings, rth_days
) -> None:
    used, weeks = down_monday_weeks(rth_days)
    assert 0 < len(used) < weeks  # the case that matters: the where drops weeks
    result = run(DOWN_MONDAY_WEEKS, sample_settings)
    values = result.summary.values
    assert values["count"] == len(used)
    assert values["avg_week_chg"] == pytest.approx(used["week_chg"].mean())

    # The CSV holds the used weeks, no others.
    csv = pd.read_csv(io.BytesIO(csv_bytes(result)))
    assert list(csv["week"]) == [d.strftime("%Y-%m-%d") for d in used.index]
    np.testing.assert_allclose(csv["week_chg"], used["week_chg"])

    for language, then_words in (
        # The groups are weeks: named so ("из 941 недели", the genitive after a number).
        ("en", f"then {len(used)} of {weeks} weeks"),
        ("ru", f"затем {len(used)} из {weeks} {'недели' if weeks % 10 == 1 else 'недель'}"),
    ):
        fig = figure(result, language)
        (ax,) = fig.axes
        # The histogram counts the used weeks: its bars are theirs over the bars' own bins.
        (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
        paths = bars.get_paths()
        heights = np.array([p.vertices[2, 1] - p.vertices[0, 1] for p in paths])
        edges = np.array([p.vertices[0, 0] for p in paths] + [paths[-1].vertices[1, 0]])
        expected, _ = np.histogram(used["week_chg"], bins=edges)
        np.testing.assert_array_equal(heights, expected)
        # The median beside the mean is the used weeks' median (all weeks' had another sign
        # on the full data: 14.3 against −31.0).
        (median_line,) = [line for line in ax.lines if line.get_linestyle() == "--"]
        assert median_line.get_xdata()[0] == pytest.approx(used["week_chg"].median())
        assert then_words in footer(fig)


def test_a_then_where_over_a_few_groups_draws_only_theirs(sample_settings, rth_days) -> None:
    """One year's weeks are few: a bar per down-Monday week, each its week's change."""
    used, weeks = down_monday_weeks(rth_days, 2024)
    result = run({**DOWN_MONDAY_WEEKS, "period": "2024"}, sample_settings)
    assert result.summary.values["count"] == len(used) < weeks
    fig = figure(result)
    (ax,) = fig.axes
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    heights = [p.vertices[2, 1] - p.vertices[0, 1] for p in bars.get_paths()]
    np.testing.assert_allclose(heights, used["week_chg"])
    assert f"then {len(used)} of {weeks} weeks" in footer(fig)


def test_a_then_without_where_still_draws_every_first_stage_row(sample_settings) -> None:
    query = {**DOWN_MONDAY_WEEKS, "then": {"select": "mean(week_chg) as avg_week_chg"}}
    result = run(query, sample_settings)
    first = run({k: v for k, v in query.items() if k != "then"}, sample_settings)
    assert len(result.source_rows) == len(first.table)
    assert result.metadata.then_rows is None
    assert " then " not in footer(figure(result))


def test_a_few_days_of_several_columns_never_overlap(sample_settings, rth_days) -> None:
    """Five days over a weekend (a median gap of 1.5 days): each day's three bars stay in
    their day, and they are the day's range, ATR and true range."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "last_5_bars",
        "map": {"atr": "atr(14)", "tr": "true_range()"},
        "select": ["range", "atr", "tr"],
    }
    result = run(query, sample_settings)
    days = rth_days.copy()
    prev_close = days["close"].shift()
    days["range"] = days["high"] - days["low"]
    days["tr"] = np.maximum(days["high"], prev_close) - np.minimum(days["low"], prev_close)
    days["tr"] = days["tr"].fillna(days["range"])
    days["atr"] = days["tr"].ewm(alpha=1 / 14, adjust=False).mean()  # Wilder, long history
    last = days.iloc[-5:]
    assert np.diff(last.index.to_numpy()).max() > np.diff(last.index.to_numpy()).min()

    for language in ("en", "ru"):
        fig = figure(result, language)
        collections = [
            c for ax in fig.axes for c in ax.collections if isinstance(c, PolyCollection)
        ]
        assert len(collections) == 3  # range, atr, tr side by side
        spans = []
        for column, bars in zip(("range", "atr", "tr"), collections, strict=True):
            paths = sorted(bars.get_paths(), key=lambda p: p.vertices[0, 0])
            heights = [p.vertices[2, 1] - p.vertices[0, 1] for p in paths]
            rel = 1e-6 if column != "atr" else 1e-4  # ATR's seed is long forgotten
            np.testing.assert_allclose(heights, last[column], rtol=rel)
            spans += [(p.vertices[0, 0], p.vertices[1, 0]) for p in paths]
        spans.sort()
        for (_, right), (left, _) in pairwise(spans):
            assert right <= left + 1e-9, "two bars overlap"


def test_a_second_stage_s_own_column_is_drawn_first(sample_settings, rth_days) -> None:
    """ "2025 against 2024": the return made in ``then`` is the answer. Listed after five
    first-stage values it was left off the chart ("+ 2 more values in the CSV: finish,
    ret_pct") under a headline about the average range."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024:2025",
        "map": {"up": "close > prev(close)", "pc": "prev(close)"},
        "group_by": "year()",
        "select": [
            "count() as days",
            "sum(up) as up_days",
            "mean(range) as avg_range",
            "first(pc) as start",
            "last(close) as finish",
        ],
        "then": {"map": {"ret_pct": "(finish / start - 1) * 100"}},
    }
    closes = rth_days["close"]
    years = closes.groupby(closes.index.year).last()
    expected = (years / years.shift() - 1) * 100  # from the year before's last close
    fig = figure(run(query, sample_settings))
    np.testing.assert_allclose(bar_heights(fig.axes[0]), expected.loc[[2024, 2025]], rtol=1e-9)
    assert title(fig).startswith(f"ret_pct: highest 2024 {as_read(expected[2024])}%")
    assert "+ 2 more values in the CSV: start, finish" in footer(fig)
