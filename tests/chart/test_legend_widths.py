"""Legends inside the picture at phone width: a long series name or answer (Russian above
all) ran the box off the right edge ("доля дней, где high_time >= '15:00' = 30,78 %").
Measured with the renderer, as matplotlib lays the box out, not estimated."""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D

from barb import execute
from barb.charts import draw_chart
from barb.charts.axes import legend, plot_axes, text_handle
from barb.charts.legend_width import fit_legends
from barb.charts.style import MARGIN_X, new_figure
from barb.result import Result
from barb.settings import EngineSettings

# The tester's query: the share of ES days whose high came at 15:00 or later.
LATE_HIGHS = {
    "session": "RTH",
    "from": "1m",
    "where": "not early_close()",
    "group_by": "date()",
    "select": "arg_max(time(), high) as high_time",
    "then": {"select": ["count()", "mean(high_time >= '15:00')"]},
}
# Two long overlay names over a year's closes: a legend of two columns side by side.
TWO_AVERAGES = {
    "session": "RTH",
    "from": "daily",
    "period": "2025",
    "map": {
        "sma_twenty_days_of_closing_price": "rolling_mean(close, 20)",
        "sma_fifty_days_of_closing_price": "rolling_mean(close, 50)",
    },
    "select": [
        "timestamp",
        "close",
        "sma_twenty_days_of_closing_price",
        "sma_fifty_days_of_closing_price",
    ],
}


@pytest.fixture(scope="module")
def late_highs(sample_settings: EngineSettings) -> Result:
    """Run once: a minute-bar query over all of ES's history takes a few seconds."""
    result = execute(LATE_HIGHS, "ES", settings=sample_settings)
    assert result.ok, result.to_dict()
    return result


def legends_of(fig: Figure) -> list[Legend]:
    found = [ax.get_legend() for ax in fig.axes]
    return [box for box in found if box is not None]


def assert_inside(fig: Figure) -> None:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = legends_of(fig)
    assert boxes
    for box in boxes:
        extent = box.get_window_extent(renderer)
        assert extent.x0 >= 0 and extent.y0 >= 0, extent
        assert extent.x1 <= fig.bbox.width and extent.y1 <= fig.bbox.height, extent


def words_of(labels: list[str]) -> list[str]:
    return [w for label in labels for w in label.replace("\n", " ").split(" ") if w]


@pytest.mark.slow
@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_long_answer_legend_stays_inside_the_picture(late_highs: Result, language: str) -> None:
    fig = draw_chart(late_highs, language=language)
    assert fig is not None
    assert_inside(fig)


@pytest.mark.slow
@pytest.mark.parametrize("language", ["en", "ru"])
def test_long_series_names_stay_inside_the_picture(
    sample_settings: EngineSettings, language: str
) -> None:
    result = execute(TWO_AVERAGES, "NQ", settings=sample_settings)
    assert result.ok, result.to_dict()
    fig = draw_chart(result, language=language)
    assert fig is not None
    assert_inside(fig)


@pytest.mark.slow
@pytest.mark.slow
def test_a_histogram_legend_stays_off_the_tick_labels(sample_settings: EngineSettings) -> None:
    """A year's range statistics in Russian: the legend at the upper right grew left past
    the y axis, over its tick labels and off the picture's left edge."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "select": ["mean(range)", "median(range)", "std(range)", "max(range)", "sum(range)"],
    }
    result = execute(query, "NQ", settings=sample_settings)
    fig = draw_chart(result, language="ru")
    assert fig is not None
    assert_inside(fig)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    (box,) = legends_of(fig)
    assert box.get_window_extent(renderer).x0 >= fig.axes[0].get_window_extent(renderer).x0


def test_a_wrapped_answer_keeps_every_word_and_its_value_together(late_highs: Result) -> None:
    """Broken at spaces only: "4 496" keeps its no-break space, and the "=" starts the line
    with its value rather than dangle at the end of the name."""
    fig = draw_chart(late_highs, language="ru")
    assert fig is not None
    (box,) = legends_of(fig)
    labels = [t.get_text() for t in box.get_texts()]
    share, count = labels
    assert share.split("\n") == ["доля дней, где high_time >= '15:00'", "= 30,78\u00a0%"]
    assert count == "количество дней = 4\u00a0496"


def _long_handles(n: int) -> list[Line2D]:
    names = [
        "средний дневной диапазон в пунктах за обычную сессию",
        "средний объём в контрактах",
        "доля дней с закрытием выше открытия",
    ]
    return [Line2D([], [], color="red", label=names[i % len(names)]) for i in range(n)]


@pytest.mark.parametrize(
    ("loc", "ncol"),
    [
        ("upper left", 1),
        ("upper left", 3),
        ("upper right", 1),
        ("upper right", 3),
        ("lower right", 2),
    ],
)
def test_every_placement_fits_with_its_labels_intact(loc: str, ncol: int) -> None:
    fig = new_figure(900)
    FigureCanvasAgg(fig)
    ax = plot_axes(fig)
    handles = _long_handles(3)
    legend(ax, handles, loc=loc, ncol=ncol)
    assert_inside(fig)
    (box,) = legends_of(fig)
    texts = [t.get_text() for t in box.get_texts()]
    assert words_of(texts) == words_of([h.get_label() for h in handles])
    # Nor over the tick labels left of the plot: the box starts at the plot's edge.
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    assert box.get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x0 - 0.5


def test_a_legend_that_fits_is_left_as_it_was() -> None:
    fig = new_figure(900)
    FigureCanvasAgg(fig)
    ax = plot_axes(fig)
    legend(ax, [text_handle("2023"), text_handle("2025")], loc="upper right", ncol=2)
    (box,) = legends_of(fig)
    assert [t.get_text() for t in box.get_texts()] == ["2023", "2025"]
    assert box._ncols == 2  # the columns it was asked for
    assert not fit_legends(fig)


def test_a_plot_moved_right_after_its_legend_was_fitted_is_fitted_again() -> None:
    """``keep_y_labels_inside`` moves a plot's left edge, and its legend with it."""
    fig = new_figure(900)
    FigureCanvasAgg(fig)
    ax = plot_axes(fig)
    legend(ax, _long_handles(1), loc="upper left")
    box = ax.get_position()
    ax.set_position((box.x0 + 0.12, box.y0, box.width - 0.12, box.height))
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    (legend_box,) = legends_of(fig)
    assert legend_box.get_window_extent(renderer).x1 > fig.bbox.width * (1 - MARGIN_X)
    assert fit_legends(fig)
    assert_inside(fig)
