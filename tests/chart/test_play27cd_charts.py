"""Charts two testers found misleading while asking about distributions and vague
beginner's questions (p27c, p27d): buckets of a number drawn as evenly spaced categories,
clock times without their time zone, yes/no groups, and more below. Expected values from
DuckDB or pandas over the sample's minute bars, never the engine."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from duckdb_answers import rth_closes
from engine_results import bar_heights, figure, run, title
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from barb.charts import chart_headline
from bot.assistant.replies import Proof
from bot.pool.jobs import QueryJob, run_query_job
from bot.telegram import keyboards

pytestmark = pytest.mark.slow


def bar_spans(fig: Figure) -> np.ndarray:
    """Each bar's left and right edge on the group axis, of the first panel."""
    (bars,) = [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]
    return np.array([(p.vertices[0, 0], p.vertices[1, 0]) for p in bars.get_paths()])


# --- p27c A: buckets of a number on a number line ---------------------------------------------

BUCKETS = {
    "session": "RTH",
    "from": "daily",
    "period": "2020:2025",
    "map": {"ret_pct": "(close / prev(close) - 1) * 100", "bucket": "floor(ret_pct, 0.5)"},
    "group_by": "bucket",
    "select": "count() as days",
}


@pytest.fixture(scope="module")
def return_buckets(con) -> pd.Series:
    """Days per 0.5% bucket of the RTH close-to-close return, 2020-2025, by the bucket's
    lowest value."""
    closes = rth_closes(con, "nq")
    closes.index = pd.to_datetime(closes.index)
    ret = (closes / closes.shift(1) - 1) * 100
    ret = ret[(ret.index.year >= 2020) & (ret.index.year <= 2025)].dropna()
    bucket = np.floor(np.round(ret / 0.5, 9)) * 0.5
    return bucket.value_counts().sort_index()


@pytest.mark.parametrize("language", ["en", "ru"])
def test_number_buckets_stand_at_their_place_on_a_number_line(
    sample_settings, return_buckets, language
) -> None:
    fig = figure(run(BUCKETS, sample_settings), language)
    spans = bar_spans(fig)
    heights = bar_heights(fig.axes[0])
    drawn = heights > 0
    # Each bar spans its bucket, [key, key + 0.5), narrowed alike: an empty bucket is a gap.
    starts = (spans[:, 0] + spans[:, 1]) / 2 - 0.25
    np.testing.assert_allclose(starts[drawn], return_buckets.index.to_numpy(), atol=1e-9)
    np.testing.assert_allclose(heights[drawn], return_buckets.to_numpy())
    widths = spans[:, 1] - spans[:, 0]
    np.testing.assert_allclose(widths, widths[0])
    assert 0.4 < widths[0] <= 0.5
    # The axis ticks numbers at their places, not a label per bar.
    ticks = fig.axes[0].get_xticks()
    lo, hi = fig.axes[0].get_xlim()
    inside = ticks[(ticks >= lo) & (ticks <= hi)]
    assert np.allclose(np.diff(inside), np.diff(inside)[0])
    assert 0 in inside


@pytest.mark.parametrize(
    ("language", "bucket", "unit_name"),
    [("en", "bucket {lo} … {hi}%", "days"), ("ru", "bucket {lo} … {hi}\u00a0%", "дни")],
)
def test_the_headline_names_a_bucket_by_its_range(
    sample_settings, return_buckets, language, bucket, unit_name
) -> None:
    fig = figure(run(BUCKETS, sample_settings), language)
    most = float(return_buckets.idxmax())

    def text(v: float) -> str:
        written = f"{v:g}".replace("-", "\u2212")
        return written.replace(".", ",") if language == "ru" else written

    assert bucket.format(lo=text(most), hi=text(most + 0.5)) in title(fig)
    if language == "ru":  # every number with the Russian comma, the bucket's too
        assert "." not in title(fig)
    # The count's axis names the unit once, in the chart's language: not «days (дни)».
    assert unit_name in [t.get_text() for t in fig.axes[0].texts]


# --- p27d F2: clock times name the exchange's time zone ---------------------------------------


def zone_of(symbol: str) -> str:
    """The instrument's zone as its YAML gives it, named as US traders do (EST/EDT: ET)."""
    import datetime as dt
    from pathlib import Path
    from zoneinfo import ZoneInfo

    import yaml

    root = Path(__file__).resolve().parents[2]
    zone = ZoneInfo(
        yaml.safe_load((root / "instruments" / f"{symbol}.yaml").read_text())["timezone"]
    )
    names = {dt.datetime(2024, m, 1, tzinfo=zone).tzname() for m in (1, 7)}
    assert names == {"EST", "EDT"}
    return "ET"


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_clock_axis_names_the_time_zone(sample_settings, language) -> None:
    hours = {
        "session": "ETH",
        "from": "1h",
        "period": "2025",
        "map": {"t": "time()"},
        "group_by": "t",
        "select": "mean(range)",
    }
    fig = figure(run(hours, sample_settings), language)
    clock = {"en": "time", "ru": "время"}[language]  # "t" named time(): the call's word
    assert fig.axes[-1].get_xlabel() == f"{clock} ({zone_of('NQ')})"
    # The day's high's time as the group: the clock of a then stage's key too.
    when = {
        "session": "RTH",
        "from": "1h",
        "period": "2025",
        "group_by": "date()",
        "select": "arg_max(time(), high) as high_time",
        "then": {"group_by": "high_time", "select": "count() as days"},
    }
    fig = figure(run(when, sample_settings), language)
    assert fig.axes[-1].get_xlabel() == f"high_time ({zone_of('NQ')})"
    # A count by year has no clock: no zone.
    years = {"session": "RTH", "from": "daily", "group_by": "year()", "select": "count()"}
    assert "(ET)" not in figure(run(years, sample_settings), language).axes[-1].get_xlabel()


# --- p27d F5: yes/no groups, values all below zero, legends over the data ---------------------


@pytest.mark.parametrize(
    ("language", "no", "yes"), [("en", "dec: no", "dec: yes"), ("ru", "dec: нет", "dec: да")]
)
def test_a_yes_no_group_is_named_with_its_column(sample_settings, language, no, yes) -> None:
    query = {
        "session": "RTH",
        "from": "monthly",
        "map": {"ret": "(close / prev(close) - 1) * 100", "dec": "month() == 12"},
        "group_by": "dec",
        "select": ["mean(ret > 0) as up_share"],
    }
    result = run(query, sample_settings)
    fig = figure(result, language)
    labels = [t.get_text() for t in fig.axes[-1].get_xticklabels() if t.get_text()]
    assert labels == [no, yes]
    assert no in title(fig) or yes in title(fig)


def covered(fig: Figure) -> list[str]:
    """What a legend's box lies over, in pixels: bars, points of lines, value labels."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    found = []
    for ax in fig.axes:
        box = ax.get_legend().get_window_extent(renderer) if ax.get_legend() else None
        if box is None:
            continue
        for collection in ax.collections:
            if isinstance(collection, PolyCollection):
                for path in collection.get_paths():
                    if path.transformed(ax.transData).get_extents().overlaps(box):
                        found.append("bar")
        for line in ax.lines:
            if line.get_transform() == ax.transData:
                xy = ax.transData.transform(line.get_xydata())
                if any(box.contains(x, y) for x, y in xy):
                    found.append(f"line {line.get_label()}")
            elif line.get_transform() == ax.get_yaxis_transform():  # across the axes
                y = ax.transData.transform((0, line.get_ydata()[0]))[1]
                if box.y0 <= y <= box.y1:
                    found.append("level line")
        for text in ax.texts:
            in_data = getattr(text, "xycoords", None) == "data"
            if in_data and text.get_text() and text.get_window_extent(renderer).overlaps(box):
                found.append(text.get_text())
    return found


@pytest.mark.parametrize("language", ["en", "ru"])
def test_values_all_below_zero_end_the_axis_at_zero(sample_settings, language) -> None:
    """Pullback depths per episode between new closing highs, all at or under zero: the
    y axis ran to +40% over nothing, the legend's room."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2015:2025",
        "map": {"hi": "cummax(close)", "ep": "cumsum(close >= hi)", "dd": "(close / hi - 1) * 100"},
        "group_by": "ep",
        "select": ["min(dd) as depth"],
        "then": {"where": "depth < 0", "select": ["count()", "median(depth)", "min(depth)"]},
    }
    fig = figure(run(query, sample_settings), language)
    (ax,) = fig.axes
    lo, hi = ax.get_ylim()
    assert lo < 0 and 0 <= hi <= 0.03 * (hi - lo)
    assert covered(fig) == []


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_legend_covers_no_data(sample_settings, language) -> None:
    """Six answers over FOMC days by year, labelled upright ("75,0 %" ran under the box),
    and two returns' histogram, the taller outline's peak under the legend."""
    shares = {
        "session": "RTH",
        "from": "daily",
        "join": "fomc",
        "where": "fomc",
        "map": {"chg": "(close / open - 1) * 100"},
        "select": [
            "mean(chg < 0) as down_share",
            "count()",
            "mean(chg)",
            "median(chg)",
            "min(chg)",
            "mean(range)",
        ],
    }
    returns = {
        "session": "RTH",
        "from": "daily",
        "join": {"instrument": "ES"},
        "map": {
            "nq_ret": "(close / prev(close) - 1) * 100",
            "es_ret": "(es_close / prev(es_close) - 1) * 100",
        },
        "select": ["std(nq_ret)", "std(es_ret)", "mean(nq_ret)", "mean(es_ret)", "count()"],
    }
    for query in (shares, returns):
        fig = figure(run(query, sample_settings), language)
        assert any(ax.get_legend() for ax in fig.axes)
        assert covered(fig) == []


# --- p27c C: the biggest absolute move is marked where the move fell --------------------------


@pytest.mark.parametrize("language", ["en", "ru"])
def test_an_absolute_extreme_is_marked_on_the_side_of_its_signed_value(
    sample_settings, con, language
) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "map": {"ret": "(close / prev(close) - 1) * 100", "absret": "abs(ret)"},
        "select": ["max(absret) as biggest", "arg_max(ret, absret) as signed", "mean(ret) as mu"],
    }
    closes = rth_closes(con, "nq")
    closes.index = pd.to_datetime(closes.index)
    ret = ((closes / closes.shift(1) - 1) * 100)[lambda r: r.index.year == 2025]
    signed = float(ret.loc[ret.abs().idxmax()])
    fig = figure(run(query, sample_settings), language)
    (ax,) = fig.axes
    across = [
        float(line.get_xdata()[0])
        for line in ax.lines
        if line.get_transform() == ax.get_xaxis_transform()
    ]
    assert any(abs(x - signed) < 1e-9 for x in across)
    assert not any(abs(x - abs(signed)) < 1e-9 for x in across) or signed > 0
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(label.startswith("biggest = |") for label in labels)


# --- today's high and low: each time with its price, all four in the headline -----------------


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_days_high_and_low_are_headlined_with_their_times(
    sample_settings, con, language
) -> None:
    day = "2026-01-07"
    query = {
        "session": "RTH",
        "from": "1m",
        "period": day,
        "select": [
            "arg_max(time(), high) as high_time",
            "max(high) as high",
            "arg_min(time(), low) as low_time",
            "min(low) as low",
        ],
    }
    found = {}
    for side, order in (("high", "high DESC"), ("low", "low")):
        row = con.execute(
            f"SELECT timestamp, {side} FROM nq WHERE minute >= 570 AND minute < 1020 "
            f"AND trading_date = DATE '{day}' ORDER BY {order}, timestamp LIMIT 1"
        ).fetchone()
        assert row is not None
        found[side] = (pd.Timestamp(row[0]), row[1])

    def price(v: float) -> str:
        text = f"{v:,.2f}"
        return text.replace(",", "\u00a0").replace(".", ",") if language == "ru" else text

    expected = " · ".join(
        f"{side} = {price(level)} ({when:%H:%M})" for side, (when, level) in found.items()
    )
    assert chart_headline(run(query, sample_settings), language) == expected


# --- the bot's CSV button counts the file's rows ----------------------------------------------


@pytest.mark.parametrize(("language", "label"), [("en", "CSV · 2 rows"), ("ru", "CSV · 2 строки")])
def test_the_csv_button_counts_the_rows_of_the_file(sample_settings, language, label) -> None:
    """ "Lowest NQ-ES correlation by year", limit 1: the CSV holds 2026's 4 days and the
    first whole year, the answer; the button said "CSV · 1 rows"."""
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
    outcome = run_query_job(QueryJob(query=query, language=language))
    assert outcome.csv is not None
    sent = pd.read_csv(io.BytesIO(outcome.csv))
    assert outcome.csv_rows == len(sent) == 2
    proof = Proof.from_outcome(query, "", outcome)
    markup = keyboards.answer("q1", language, csv=[keyboards.HeldCsv(0, proof.csv_rows)])
    assert markup.inline_keyboard[0][0].text == label
    one = keyboards.answer("q1", language, csv=[keyboards.HeldCsv(0, 1)]).inline_keyboard[0][0].text
    assert one == {"en": "CSV · 1 row", "ru": "CSV · 1 строка"}[language]


@pytest.mark.parametrize(("language", "label"), [("en", "time (ET)"), ("ru", "время (ET)")])
def test_the_days_clock_names_the_time_zone(sample_settings, language, label) -> None:
    query = {
        "session": "RTH",
        "from": "1m",
        "period": "2026-01-07",
        "select": ["arg_max(time(), high) as high_time", "arg_min(time(), low) as low_time"],
    }
    (ax,) = figure(run(query, sample_settings), language).axes
    assert ax.get_xlabel() == label.replace("ET", zone_of("NQ"))
