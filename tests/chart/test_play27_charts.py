"""Charts a tester found unclear while asking about "now" and the recent past (p27b): the time
of today's high and low drawn as a histogram of minute prices, Russian price ticks that ran
together, and more below. Expected values from DuckDB over the sample's minute bars, never
the engine."""

from __future__ import annotations

import io
from itertools import pairwise

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from duckdb_answers import rth_closes
from engine_results import RTH, figure, run
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.text import Text

from barb.charts import chart_headline
from barb.export import OPEN_NOTE, WHOLE_NOTE, csv_bytes
from barb.i18n import text

pytestmark = pytest.mark.slow

DAY = "2026-01-07"  # the sample's last trading date


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def x_tick_labels(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_xticklabels() if t.get_text()]


# --- C1: the time of the day's high and low is drawn on the day's clock ----------------------


@pytest.fixture(scope="module")
def day_extremes(con) -> dict[str, tuple[pd.Timestamp, float]]:
    """The first RTH minute of the day's high and of its low, with the level."""
    high = con.execute(
        f"SELECT timestamp, high FROM nq WHERE {RTH} AND trading_date = DATE '{DAY}' "
        "ORDER BY high DESC, timestamp LIMIT 1"
    ).fetchone()
    low = con.execute(
        f"SELECT timestamp, low FROM nq WHERE {RTH} AND trading_date = DATE '{DAY}' "
        "ORDER BY low, timestamp LIMIT 1"
    ).fetchone()
    assert high is not None and low is not None
    return {"high": (pd.Timestamp(high[0]), high[1]), "low": (pd.Timestamp(low[0]), low[1])}


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_times_of_the_days_high_and_low_are_marked_on_its_price(
    sample_settings, day_extremes, language
) -> None:
    query = {
        "session": "RTH",
        "from": "1m",
        "period": DAY,
        "select": [
            "arg_max(time(), high) as high_time",
            "max(high) as high",
            "arg_min(time(), low) as low_time",
            "min(low) as low",
        ],
    }
    fig = figure(run(query, sample_settings), language)
    (ax,) = fig.axes
    # No histogram of the minute highs: the price over the day's clock.
    assert not [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_paths()][1:]
    assert not ax.patches
    dots = np.concatenate(
        [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection)]
    )
    for when, level in day_extremes.values():
        assert [mdates.date2num(when), level] in dots.tolist()
        assert f"{when:%H:%M}" in texts(fig)  # the time written at the marked bar
    ticks = x_tick_labels(fig)
    assert ticks and all(len(t) == 5 and t[2] == ":" for t in ticks)  # 11:00, a clock


def test_russian_price_ticks_stand_an_em_apart(sample_settings) -> None:
    """A histogram of the day's minute highs: "25 500 25 550 25 600" read as one number."""
    query = {"session": "RTH", "from": "1m", "period": DAY, "select": ["mean(high) as m"]}
    fig = figure(run(query, sample_settings), "ru")
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = sorted(
        (t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()),
        key=lambda b: b.x0,
    )
    assert len(boxes) >= 3
    em = renderer.points_to_pixels(ax.get_xticklabels()[0].get_fontsize())
    assert min(b.x0 - a.x1 for a, b in pairwise(boxes)) >= em * 0.99


# --- C2: one row of all history says which row, of how many -----------------------------------


@pytest.mark.parametrize(
    ("language", "weekday", "one_of"),
    [("en", "Wed", "one row of {n} days"), ("ru", "Ср", "одна строка из {n} дней")],
)
def test_the_latest_row_of_all_history_names_its_day_and_the_rows_it_is_one_of(
    sample_settings, con, language, weekday, one_of
) -> None:
    """ "Where is NQ against its SMA20/50 now": the header's whole period and the footer's
    4,649 of 4,649 days made the row's values look like whole-history figures."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"sma20": "rolling_mean(close, 20)", "sma50": "rolling_mean(close, 50)"},
        "sort": "timestamp desc",
        "limit": 1,
        "select": ["close", "sma20", "sma50"],
    }
    last, days = con.execute(
        f"SELECT max(trading_date), count(DISTINCT trading_date) FROM nq WHERE {RTH}"
    ).fetchone()
    fig = figure(run(query, sample_settings), language)
    written = texts(fig)
    assert f"{weekday} {last:%Y-%m-%d}" in written
    below = written[written.index(f"{weekday} {last:%Y-%m-%d}") + 1]  # the next line
    total = f"{days:,}".replace(",", " " if language == "ru" else ",")
    assert " ".join(below.split()) == one_of.format(n=total)  # any space as a space


# --- C4: a weekly bar's label is its week, not the close's date --------------------------------


@pytest.mark.parametrize(
    ("language", "said"),
    [("en", "close last: {close} (week of {week})"), ("ru", "(неделя с {week})")],
)
def test_the_last_weekly_close_is_dated_by_its_week(sample_settings, con, language, said) -> None:
    """ "Last week against this week", weekly bars: «close: последнее 57,41 (2026-01-05)»
    gave the week's label as the close's date (the close was 2026-01-07's)."""
    query = {"session": "RTH", "from": "weekly", "period": "last_2_bars", "select": ["close"]}
    first, close = con.execute(
        f"""
        WITH week AS (SELECT * FROM nq WHERE {RTH} AND date_trunc('week', trading_date) =
                      (SELECT date_trunc('week', max(trading_date)) FROM nq))
        SELECT min(trading_date), arg_max(close, timestamp) FROM week
        """
    ).fetchone()
    headline = chart_headline(run(query, sample_settings), language)
    assert headline is not None
    expected = said.format(close=f"{close:,.2f}", week=f"{first:%Y-%m-%d}")
    assert headline.endswith(expected) if language == "ru" else headline == expected


# --- A ranking cut to its unfinished top group: the CSV holds what the chart draws ------------


def test_a_ranking_cut_to_an_open_year_sends_the_whole_year_drawn_in_the_csv(
    sample_settings, con
) -> None:
    """ "In which year was the NQ-ES correlation lowest", limit 1: 2026's 4 days rank first,
    and the chart draws (and its headline names) the first whole year, 2021, which the CSV
    left out: the CSV holds both rows, each noted."""
    both = pd.concat([rth_closes(con, "nq"), rth_closes(con, "es")], axis=1, join="inner")
    both.index = pd.to_datetime(both.index)
    returns = both.pct_change()
    years = returns.groupby(returns.index.year)
    corr = years.apply(lambda r: r.iloc[:, 0].corr(r.iloc[:, 1])).sort_values()
    last = int(returns.index.year.max())
    assert corr.index[0] == last  # the open year ranks first
    whole = int(corr.drop(last).index[0])
    query = {
        "session": "RTH",
        "from": "daily",
        "join": {"instrument": "ES"},
        "map": {"nq_ret": "close / prev(close) - 1", "es_ret": "es_close / prev(es_close) - 1"},
        "group_by": "year()",
        "select": ["correlation(nq_ret, es_ret) as corr", "count() as days"],
        "sort": "corr asc",
        "limit": 1,
    }
    result = run(query, sample_settings)
    sent = pd.read_csv(io.BytesIO(csv_bytes(result)))
    assert sent["year"].tolist() == [last, whole]
    assert sent["days"].tolist() == years.size()[[last, whole]].tolist()
    assert sent["note"].tolist() == [text("barb", OPEN_NOTE), text("barb", WHOLE_NOTE)]
    assert sent["corr"].tolist() == pytest.approx(corr[[last, whole]].tolist(), rel=5e-6)
    bottom = figure(result).axes[-1]
    drawn = [t.get_text() for t in bottom.get_xticklabels() if t.get_text()]
    assert [int(t.split()[-1]) for t in drawn] == sent["year"].tolist()


# --- Side-by-side series: the chart's title names the column, as a single series' does ---------


@pytest.mark.parametrize(("language", "dec"), [("en", "."), ("ru", ",")])
def test_a_side_by_side_title_names_its_column(sample_settings, con, language, dec) -> None:
    """Mean range by month for 2020 and 2024: the Russian title fitted only without "rng",
    and read «2020 ▲ июл 467,27 · ▼ ноя 194,06; 2024 …», numbers of nothing."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2020:2024",
        "where": "year() in (2020, 2024)",
        "group_by": ["month()", "year()"],
        "select": "mean(high - low) as rng",
    }
    days = con.execute(
        f"""
        SELECT year(trading_date) AS y, month(trading_date) AS m, max(high) - min(low) AS r
        FROM nq WHERE {RTH} AND year(trading_date) IN (2020, 2024) GROUP BY trading_date
        """
    ).df()
    rng = days.groupby(["y", "m"])["r"].mean()
    fig = figure(run(query, sample_settings), language)
    size = max(t.get_fontsize() for t in fig.findobj(Text))
    lines = [t.get_text() for t in fig.findobj(Text) if t.get_fontsize() == size]
    flat = " ".join(" ".join(lines).split())  # the title's lines as one
    assert flat.startswith("rng: 2020 ")
    for year in (2020, 2024):  # each year's highest and lowest value, whole
        for value in (rng[year].max(), rng[year].min()):
            assert f"{value:.2f}".replace(".", dec) in flat


# --- Groups whose only value is a year: each group at its year --------------------------------


@pytest.mark.parametrize(
    ("language", "said"), [("en", "most often {} ({} of 12)"), ("ru", "чаще всего {} ({} из 12)")]
)
def test_the_year_of_each_months_best_day_is_drawn_at_its_year(
    sample_settings, con, language, said
) -> None:
    """ "In which year was each month's best day": a year is no bar's height, and with no
    other number the groups had no chart at all."""
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "month()",
        "select": "arg_max(year(), close / prev(close) - 1) as best_year",
    }
    closes = rth_closes(con, "nq")
    closes.index = pd.to_datetime(closes.index)
    ret = closes.pct_change()
    best = ret.groupby(ret.index.month).idxmax().map(lambda day: day.year)
    result = run(query, sample_settings)
    fig = figure(result, language)
    (ax,) = fig.axes
    (dots,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert dots.get_offsets()[:, 1].tolist() == best.tolist()  # January first
    assert [t.get_text() for t in ax.texts if t.get_text() != "best_year"] == [str(y) for y in best]
    assert all(t.get_text().isdigit() for t in ax.get_yticklabels() if t.get_text())  # 2020
    mode = best.value_counts()
    assert mode.iloc[0] > mode.iloc[1]  # one year comes up most often
    expected = "best_year: " + said.format(mode.index[0], mode.iloc[0])
    assert chart_headline(result, language) == expected
