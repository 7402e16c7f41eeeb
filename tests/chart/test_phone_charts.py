"""Charts read on a phone: portrait, lettered to be read 360 px wide, in English or Russian,
and of the kind the number calls for. Each kind is checked on the drawn figure's own
artists (points, bars, lines, tick texts) against a computation made here."""

from __future__ import annotations

import re

import chart_factories as make
import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from engine_results import as_read
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.text import Text

from barb.charts import chart_headline, draw_chart, render_chart
from barb.charts.header import wrap
from barb.charts.style import FIG_W_IN
from barb.charts.time_of_day import calendar_part, is_clock_name, time_kind
from barb.i18n import messages
from barb.result import Result, Summary

PHONE_PX = 360  # the width a photo is shown at on a small phone
# Smallest text heights, in pixels at PHONE_PX wide, that read without zooming.
MIN_TITLE_PX = 15.0
MIN_AXIS_PX = 11.0  # tick labels and axis names
MIN_ANY_PX = 9.0  # footer, legend, value labels


def px_at_phone(points: float) -> float:
    """A font size in points as pixels when the figure is shown PHONE_PX wide."""
    return points * PHONE_PX / (FIG_W_IN * 72)


@pytest.fixture(scope="module")
def results() -> dict[str, Result]:
    return {name: build() for name, build in make.ALL_SHAPES.items()}


def figure(result: Result, language: str = "en") -> Figure:
    fig = draw_chart(result, language=language)
    assert fig is not None
    fig.canvas.draw()  # tick labels and extents are final only once drawn
    return fig


def texts(fig: Figure) -> list[Text]:
    return [
        t
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.get_figure() is fig
    ]


def tick_texts(ax: Axes, axis: str = "x") -> list[str]:
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [t.get_text() for t in labels if t.get_text()]


def plot_axes(fig: Figure) -> list[Axes]:
    """The data axes, top to bottom."""
    return sorted(fig.axes, key=lambda ax: -ax.get_position().y1)


def bar_heights(ax: Axes) -> np.ndarray:
    """The heights of the vertical bars drawn on ``ax`` (one PolyCollection of them)."""
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return np.array([p.vertices[2, 1] - p.vertices[0, 1] for p in bars.get_paths()])


# --- sized and lettered for a phone ----------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("shape", sorted(make.ALL_SHAPES))
def test_every_chart_is_portrait_and_readable_360_px_wide(
    results: dict[str, Result], shape: str, language: str
) -> None:
    fig = figure(results[shape], language)
    width, height = fig.get_size_inches()
    assert height >= width  # portrait (or square), not 16:9

    found = texts(fig)
    title = max(found, key=lambda t: t.get_fontsize())
    assert title.get_fontweight() == "bold"
    assert px_at_phone(title.get_fontsize()) >= MIN_TITLE_PX
    for ax in fig.axes:
        for label in ax.get_xticklabels() + ax.get_yticklabels():
            if label.get_text():
                assert px_at_phone(label.get_fontsize()) >= MIN_AXIS_PX, label.get_text()
        for name in (ax.xaxis.label, ax.yaxis.label):
            if name.get_text():
                assert px_at_phone(name.get_fontsize()) >= MIN_AXIS_PX, name.get_text()
    for text in found:
        assert px_at_phone(text.get_fontsize()) >= MIN_ANY_PX, text.get_text()


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("shape", sorted(make.ALL_SHAPES))
def test_no_text_runs_off_the_picture(
    results: dict[str, Result], shape: str, language: str
) -> None:
    fig = figure(results[shape], language)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    width, height = fig.canvas.get_width_height()
    for text in texts(fig):
        box = text.get_window_extent(renderer)
        assert box.x0 >= -1 and box.x1 <= width + 1, text.get_text()
        assert box.y0 >= -1 and box.y1 <= height + 1, text.get_text()


def test_the_png_is_portrait_at_any_width(results: dict[str, Result]) -> None:
    import io

    from PIL import Image

    for width in (900, 540):
        png = render_chart(results["grouped_weekdays"], width_px=width)
        assert png is not None
        size = Image.open(io.BytesIO(png)).size
        assert size[0] == width and size[1] == pytest.approx(width * 1.25, abs=1)


# --- the kind follows what the number means --------------------------------------------------


def test_a_correlation_is_a_scatter_with_the_fit_line_and_r_in_the_title(
    results: dict[str, Result],
) -> None:
    result = results["scalar_correlation"]
    rows = result.source_rows
    assert rows is not None
    x, y = rows["on_range"].to_numpy(float), rows["range"].to_numpy(float)
    fig = figure(result)
    (ax,) = fig.axes
    (points,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    np.testing.assert_allclose(points.get_offsets(), np.column_stack((x, y)))
    # The fit line: least squares by the normal equations, not np.polyfit as the chart does.
    design = np.column_stack((x, np.ones_like(x)))
    slope, intercept = np.linalg.solve(design.T @ design, design.T @ y)
    (fit,) = [line for line in ax.get_lines() if len(line.get_xdata()) == 2]
    fx, fy = np.asarray(fit.get_xdata(), float), np.asarray(fit.get_ydata(), float)
    np.testing.assert_allclose(fy, slope * fx + intercept, rtol=1e-9)
    assert fx.min() == x.min() and fx.max() == x.max()
    r = np.corrcoef(x, y)[0, 1]
    title = max(texts(fig), key=lambda t: t.get_fontsize()).get_text()
    assert f"r = {r:.2f}" in title
    assert "on_range" in title and "range" in title


def test_rsi_now_is_the_series_with_the_last_value_marked(results: dict[str, Result]) -> None:
    result = results["scalar_last"]
    rows = result.source_rows
    assert rows is not None
    fig = figure(result)
    price_ax, ax = plot_axes(fig)
    (series,) = [line for line in ax.get_lines() if len(line.get_xdata()) > 100]
    ys = np.asarray(series.get_ydata(), float)
    assert ys[-1] == pytest.approx(make.rsi(rows["close"]).iloc[-1])
    last_x = mdates.date2num(rows["timestamp"].iloc[-1])
    marks = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert any(
        np.allclose(m.get_offsets(), [[last_x, make.rsi(rows["close"]).iloc[-1]]]) for m in marks
    )
    # No candle (the bars' low-high band behind the close is a fill, not candle bodies).
    assert not [c for c in price_ax.collections if type(c) is PolyCollection]
    title = max(texts(fig), key=lambda t: t.get_fontsize()).get_text()
    value = make.rsi(rows["close"]).iloc[-1]
    assert title == f"rsi14 now: {as_read(value)} ({rows['timestamp'].iloc[-1]:%Y-%m-%d})"


def test_atr_now_asked_latest_first_is_the_series_not_one_candle(
    results: dict[str, Result],
) -> None:
    result = results["table_latest"]
    rows = result.source_rows
    assert rows is not None
    fig = figure(result)
    price_ax, ax = plot_axes(fig)
    assert not [c for c in price_ax.collections if type(c) is PolyCollection]  # no candle
    (series,) = [line for line in ax.get_lines() if len(line.get_xdata()) > 100]
    expected = make.true_range_atr(rows)
    np.testing.assert_allclose(np.asarray(series.get_ydata(), float), expected.to_numpy())
    marks = [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection)]
    last = [mdates.date2num(rows["timestamp"].iloc[-1]), expected.iloc[-1]]
    assert any(np.allclose(m, [last]) for m in marks)
    # Points at NQ's tick, two decimals.
    assert f"{expected.iloc[-1]:,.2f} points" in chart_headline(result, "en")  # type: ignore[operator]


def test_a_count_per_year_shows_the_years_with_none(results: dict[str, Result]) -> None:
    result = results["grouped_count_gaps"]
    fig = figure(result)
    (ax,) = fig.axes
    bars = daily = make.daily_bars()
    daily = bars.assign(year=bars["timestamp"].dt.year, gap=bars["open"] - bars["close"].shift())
    picked = daily[(daily["gap"] > 60) & ~daily["year"].isin([2009, 2010, 2017])]
    expected = picked.groupby("year").size().reindex(range(2008, 2027), fill_value=0)
    np.testing.assert_array_equal(bar_heights(ax), expected.to_numpy())
    assert expected.loc[[2009, 2010, 2017]].eq(0).all()
    labels = [t.get_text() for t in ax.texts if t.get_text()]
    assert labels.count("0") >= 3  # the empty years are labelled, not left blank


def test_a_grouped_result_with_two_aggregates_shows_both(results: dict[str, Result]) -> None:
    result = results["grouped_years"]
    table = result.table
    assert table is not None
    fig = figure(result)
    top, bottom = plot_axes(fig)
    # The data runs into 2026, where the table has no row: a count of zero, no mean.
    table = table.set_index("year").reindex(range(2008, 2027))
    np.testing.assert_allclose(bar_heights(top), table["mean_range"].fillna(0).to_numpy())
    np.testing.assert_array_equal(bar_heights(bottom), table["count"].fillna(0).to_numpy())
    names = {t.get_text() for t in texts(fig)}
    assert {"average range (points)", "number of days"} <= names
    assert tick_texts(bottom) and not tick_texts(top)  # one group axis, under both


def test_time_of_day_ticks_read_as_a_clock(results: dict[str, Result]) -> None:
    result = results["grouped_time_of_day"]
    table = result.table
    assert table is not None
    fig = figure(result)
    (ax,) = fig.axes
    ticks = tick_texts(ax)
    assert ticks and all(re.fullmatch(r"\d\d:\d\d", t) for t in ticks), ticks
    positions = ax.get_xticks()
    for at, text in zip(positions, ticks, strict=True):
        minutes = int(table["tod"].iloc[int(at)])
        assert text == f"{minutes // 60:02d}:{minutes % 60:02d}"
        assert minutes % 15 == 0  # round times of day, not every n-th bar
    assert "570" not in " ".join(t.get_text() for t in texts(fig))


@pytest.mark.parametrize(
    ("name", "query", "clock"),
    [
        ("tod", {"map": {"tod": "hour() * 60 + minute()"}}, True),
        ("t", {"map": {"tod": "60 * hour() + minute()", "t": "tod"}}, True),
        (
            "high_tod",
            {"map": {"tod": "hour()*60+minute()"}, "select": "arg_max(tod, high) as high_tod"},
            True,
        ),
        (
            "arg_max_tod_high",
            {
                "map": {"tod": "hour() * 60 + minute()"},
                "select": "arg_max(tod, high)",
                "then": {"group_by": "arg_max_tod_high", "select": "count()"},
            },
            True,
        ),
        ("mean_tod", {"map": {"tod": "hour() * 60 + minute()"}, "select": "mean(tod)"}, True),
        ("std_tod", {"map": {"tod": "hour() * 60 + minute()"}, "select": "std(tod)"}, False),
        ("tod", {"map": {"tod": "hour() * 60"}}, False),
        ("minute_of_day", {}, True),
    ],
)
def test_which_columns_are_a_time_of_day(name: str, query: dict, clock: bool) -> None:
    assert is_clock_name(name, query) is clock


def test_a_mean_time_of_day_reads_as_a_clock_in_headline_and_axis() -> None:
    """The mean and median time of the day's high, over days: 10:12, not 612.3."""
    days = pd.DataFrame({"date": [f"2024-01-{d:02d}" for d in range(2, 12)]})
    days["high_tod"] = [570, 575, 600, 660, 720, 780, 840, 900, 955, 615]
    query = {
        "session": "RTH",
        "from": "5m",
        "map": {"tod": "hour() * 60 + minute()"},
        "group_by": "date()",
        "select": "arg_max(tod, high) as high_tod",
        "then": {"select": ["mean(high_tod)", "median(high_tod)"]},
    }
    mean, median = days["high_tod"].mean(), days["high_tod"].median()
    bars = make.make_bars(10, freq="5min", start="2024-01-02 09:30")
    result = Result(
        query=query,
        summary=Summary(type="dict", values={"mean_high_tod": mean, "median_high_tod": median}),
        source_rows=days,
        metadata=make.metadata(bars, timeframe="5m"),
    )
    clock = [f"{round(v) // 60:02d}:{round(v) % 60:02d}" for v in (mean, median)]
    assert chart_headline(result, "en") == (
        f"average high_tod = {clock[0]} · median high_tod = {clock[1]}"
    )
    fig = figure(result)  # the days as bars, the answers as lines across them
    ticks = tick_texts(fig.axes[0], "y")
    assert ticks and all(re.fullmatch(r"\d\d:\d\d", t) for t in ticks), ticks


@pytest.mark.parametrize(
    ("name", "query", "kind"),
    [
        ("hour", {}, "hour"),
        ("high_hour", {"select": "arg_max(hour(), high) as high_hour"}, "hour"),
        (
            "high_hour",
            {
                "select": "arg_max(hour(), high) as high_hour",
                "then": {"group_by": "high_hour", "select": "count() as days"},
            },
            "hour",
        ),
        ("h", {"map": {"h": "hour()"}}, "hour"),
        ("tod", {"map": {"tod": "hour() * 60 + minute()"}}, "minute"),
        ("tod", {"map": {"tod": "minute() + 60 * hour()"}}, "minute"),
        ("tod", {"map": {"tod": "hour() * 60 + minute() + 1"}}, None),
        ("tod", {"map": {"tod": "hour() * 30 + minute()"}}, None),
        # Unnamed, the engine names a select item after its text.
        (
            "arg_max_tod_high",
            {"map": {"tod": "hour()*60+minute()"}, "select": "arg_max(tod, high)"},
            "minute",
        ),
        (
            "mean_t",
            {"map": {"tod": "hour()*60+minute()", "t": "tod"}, "select": "mean(t)"},
            "minute",
        ),
        ("n", {"map": {"tod": "hour()*60+minute()"}, "select": "count(tod) as n"}, None),
        (
            "days",
            {"select": "arg_max(hour(), high) as h", "then": {"select": "count() as days"}},
            None,
        ),
    ],
)
def test_hours_and_minutes_of_the_day(name: str, query: dict, kind: str | None) -> None:
    assert time_kind(name, query) == kind


@pytest.mark.parametrize(
    ("name", "query", "part"),
    [
        ("month", {}, "month"),
        ("m", {"map": {"m": "month()"}}, "month"),
        ("q", {"map": {"qq": "quarter()", "q": "qq"}}, "quarter"),
        ("first_m", {"map": {"m": "month()"}, "select": "first(m) as first_m"}, "month"),
        ("m", {"map": {"m": "month() + 1"}}, None),
        ("m", {"map": {"m": "month(high)"}}, None),
        ("n", {"map": {"m": "month()"}, "select": "count(m) as n"}, None),
        ("wk", {"map": {"wk": "weekofyear()"}}, "weekofyear"),
        ("best", {"select": "arg_max(dayofyear(), close) as best"}, "dayofyear"),
        ("w", {"map": {"w": "week()"}}, None),
    ],
)
def test_months_and_quarters_followed_to_their_call(
    name: str, query: dict, part: str | None
) -> None:
    assert calendar_part(name, query) == part


def test_hours_of_the_day_read_as_a_clock(results: dict[str, Result]) -> None:
    fig = figure(results["grouped_hours"])
    ticks = tick_texts(fig.axes[0])
    assert ticks and all(re.fullmatch(r"\d\d:00", t) for t in ticks), ticks


# --- in the person's language ----------------------------------------------------------------


# Both languages having every word, each used in the code: tests/telegram/test_texts.py.


@pytest.mark.parametrize("shape", sorted(make.ALL_SHAPES))
def test_a_russian_chart_has_no_english_words_of_its_own(
    results: dict[str, Result], shape: str
) -> None:
    """Everything but the query's own names (columns, functions, instrument, session)."""
    fig = figure(results[shape], "ru")
    query_words = set(re.findall(r"[A-Za-z_]\w*", repr(results[shape].query)))
    # ET, the exchange's time zone by its name, as NQ is the instrument's (a clock's axis).
    query_words |= {"NQ", "RTH", "ETH", "daily", "5m", "1h", "r", "ET"}
    for text in texts(fig):
        english = set(re.findall(r"[A-Za-z_]\w*", text.get_text())) - query_words
        english = {w for w in english if not re.fullmatch(r"[a-z_]+\d*", w) or w in _EN_WORDS}
        assert not english, (text.get_text(), english)


# Words of the English table, which a Russian chart must not show.
_EN_WORDS = {w for v in messages("barb", "en").values() for w in re.findall(r"[A-Za-z]{3,}", v)} - {
    "Barb"
}


def test_russian_numbers_and_words_in_the_headline(results: dict[str, Result]) -> None:
    mean = results["scalar_mean"]
    rows = mean.source_rows
    assert rows is not None
    value = rows["range"].mean()
    whole, cents = f"{value:.2f}".split(".")  # points at NQ's tick, two decimals
    # A fraction takes the genitive singular: 239,94 пункта (5 пунктов, 2 пункта, 1 пункт).
    assert chart_headline(mean, "ru") == f"средний диапазон = {whole},{cents} пункта"
    assert chart_headline(mean, "en") == f"average range = {value:.2f} points"
    groups = results["grouped_weekdays"]
    assert groups.table is not None
    table = groups.table.set_index("weekday")["mean_range"]
    ru = {"Mon": "Пн", "Tue": "Вт", "Wed": "Ср", "Thu": "Чт", "Fri": "Пт"}
    high, low = table.idxmax(), table.idxmin()
    assert chart_headline(groups, "ru") == (
        f"средний диапазон: больше всего {ru[high]} {table[high]:.2f} пункта, "
        f"меньше всего {ru[low]} {table[low]:.2f} пункта"
    ).replace(".", ",")


@pytest.mark.parametrize("shape", sorted(make.ALL_SHAPES))
def test_the_headline_is_one_line_in_both_languages(results: dict[str, Result], shape: str) -> None:
    for language in ("en", "ru"):
        text = chart_headline(results[shape], language)
        assert text and "\n" not in text


def test_an_error_has_no_headline() -> None:
    assert chart_headline(make.error_result(), "ru") is None


def test_weekday_ticks_in_russian(results: dict[str, Result]) -> None:
    fig = figure(results["grouped_weekdays"], "ru")
    assert tick_texts(fig.axes[0]) == ["Пн", "Вт", "Ср", "Чт", "Пт"]


def test_groups_sorted_by_value_keep_every_label_and_no_legend_box() -> None:
    """Years in their own order may be thinned (2008, 2011 … imply the rest); years sorted
    by their range may not: every bar must say which year it is. The extremes are named by
    the headline, so no legend box sits over the tallest bars' labels."""
    result = make.grouped_years()
    in_order = plot_axes(figure(result))
    assert len(tick_texts(in_order[-1])) < len(result.table)  # 18 years, thinned to fit
    table = result.table.sort_values("mean_range", ascending=False).reset_index(drop=True)
    by_value = Result(
        query={**result.query, "sort": "mean_range desc"},
        summary=result.summary,
        table=table,
        metadata=result.metadata,
        focus_columns=result.focus_columns,
    )
    fig = figure(by_value)
    axes = plot_axes(fig)
    assert tick_texts(axes[-1]) == [str(y) for y in table["year"]]
    assert all(ax.get_legend() is None for ax in axes)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_long_value_labels_along_their_bars_stay_inside_the_plot(language: str) -> None:
    """Volumes of millions ("2 465 207") are written along their bars: the room above the
    tallest bar is as tall as its label, which must not run into the axis title."""
    result = make.grouped_years()
    table = result.table.assign(mean_range=result.table["mean_range"] * 10_000 + 1_234_567)
    result = Result(
        # Contracts, whole numbers: points would be written at the tick (2,465,207.25).
        query={**result.query, "select": ["mean(volume) as mean_range", "count()"]},
        summary=result.summary,
        table=table,
        metadata=result.metadata,
        focus_columns=result.focus_columns,
    )
    fig = figure(result, language)
    top = plot_axes(fig)[0]
    plot_top = top.get_window_extent().y1
    labels = [t for t in top.texts if t.get_rotation() == 90]
    assert labels  # the labels are long enough to run along the bars
    assert all(t.get_window_extent().y1 <= plot_top for t in labels)


@pytest.mark.parametrize("points", [12, 16, 20, 26])
@pytest.mark.parametrize(
    "text",
    [
        # The old cut read "… Tuesday 128.9…" at 16 pt.
        "Highest: Monday 134.58 points · lowest: Wednesday 120.37 points · Tuesday 128.91 points"
        " · Wednesday 131.04",
        "Highest: Mon 13458.25 points · lowest: Wednesday 12037.5 points · Tuesday 12891.75 points"
        " · Wednesday 13104.25",
        "Самый высокий: понедельник 134,58 пункта · самый низкий: пятница 120,37 пункта",
    ],
)
def test_a_cut_headline_never_cuts_a_number(text: str, points: int) -> None:
    """A headline too long for two lines loses whole words: "120.37" cut to "12…" would read
    as another number."""
    fig = Figure(figsize=(FIG_W_IN, 5), dpi=100)
    FigureCanvasAgg(fig)
    lines = wrap(fig, text, points, 2, bold=True)
    shown = " ".join(lines)
    assert len(lines) <= 2
    assert shown == text or shown.endswith("…")
    number = r"\d+(?:[.,]\d+)?"
    assert set(re.findall(number, shown)) <= set(re.findall(number, text)), lines
