"""render_chart: one portrait PNG per result shape, None when there is nothing to draw."""

from __future__ import annotations

import datetime as dt
import io
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import chart_factories as make
import numpy as np
import pandas as pd
import pytest
from PIL import Image

from barb.charts import render_chart
from barb.charts.grouped import calendar_order, group_labels
from barb.charts.value_text import TickFormatter, format_value
from barb.charts.words import words_for
from barb.result import Result, Summary

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
REQUIRED_SHAPES = [
    "grouped_weekdays",
    "grouped_years",
    "grouped_two_keys",
    "table_indicator",
    "table_top5",
    "table_intraday",
    "scalar_count",
    "scalar_mean",
    "dict",
]


def image(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png))


@pytest.fixture(scope="module")
def results() -> dict[str, Result]:
    return {name: build() for name, build in make.ALL_SHAPES.items()}


@pytest.mark.parametrize("shape", sorted(make.ALL_SHAPES))
def test_every_shape_renders_a_portrait_png(results: dict[str, Result], shape: str) -> None:
    png = render_chart(results[shape])
    assert png is not None
    assert png.startswith(PNG_SIGNATURE)
    assert image(png).size == (900, 1125)


def test_the_required_shapes_are_all_covered() -> None:
    assert set(REQUIRED_SHAPES) <= set(make.ALL_SHAPES)


@pytest.mark.parametrize("shape", REQUIRED_SHAPES)
def test_synthetic_data_is_marked(results: dict[str, Result], shape: str) -> None:
    synthetic = render_chart(make.with_source(results[shape], "synthetic"))
    imported = render_chart(make.with_source(results[shape], "imported"))
    assert synthetic is not None and imported is not None
    # The badge sits in the bottom-right corner, where an imported chart is blank.
    corner = (560, 1080, 900, 1125)
    marked = np.asarray(image(synthetic).convert("RGB").crop(corner), dtype=int)
    plain = np.asarray(image(imported).convert("RGB").crop(corner), dtype=int)

    # The badge is the only colour there: an imported chart's footer (it names the file) is
    # grey text at most.
    def coloured(pixels: np.ndarray) -> float:
        return float((np.ptp(pixels, axis=2) > 40).mean())

    assert coloured(plain) == 0
    assert coloured(marked) > 0.05


def test_width_scales_the_whole_picture(results: dict[str, Result]) -> None:
    small = render_chart(results["grouped_weekdays"], width_px=450)
    large = render_chart(results["grouped_weekdays"], width_px=900)
    assert small is not None and large is not None
    assert image(small).size == (450, 562)
    # The same picture at half the size: the large one, halved, is nearly the small one.
    halved = image(large).convert("L").resize((450, 562))
    diff = np.abs(np.asarray(halved, dtype=int) - np.asarray(image(small).convert("L"), dtype=int))
    assert diff.mean() < 12  # another chart at the same size differs by ~38


def test_the_same_result_gives_the_same_bytes(results: dict[str, Result]) -> None:
    assert render_chart(results["scalar_mean"]) == render_chart(results["scalar_mean"])


def test_an_error_result_has_no_chart() -> None:
    assert render_chart(make.error_result()) is None


def test_an_empty_table_has_no_chart() -> None:
    assert render_chart(make.empty_table()) is None


def test_a_number_without_rows_has_no_chart() -> None:
    result = make.scalar_count()
    assert result.source_rows is not None
    empty = Result(
        query=result.query,
        summary=Summary(type="scalar", value=0, columns=["count"]),
        source_rows=result.source_rows.iloc[0:0],
        metadata=result.metadata,
    )
    assert render_chart(empty) is None


def test_grouped_without_a_value_column_has_no_chart() -> None:
    result = make.grouped_weekdays()
    assert result.table is not None and result.summary is not None
    keys_only = result.table[["weekday"]]
    summary = result.summary.model_copy(update={"columns": ["weekday"]})
    bare = Result(query=result.query, summary=summary, table=keys_only, metadata=result.metadata)
    assert render_chart(bare) is None


def test_weekdays_are_drawn_incalendar_order() -> None:
    table = pd.DataFrame({"weekday": ["Fri", "Mon", "Thu", "Tue", "Wed"], "n": [5, 1, 4, 2, 3]})
    ordered = calendar_order(table, ["weekday"])
    assert ordered["weekday"].tolist() == ["Mon", "Tue", "Wed", "Thu", "Fri"]
    assert ordered["n"].tolist() == [1, 2, 3, 4, 5]


def test_several_keys_join_into_one_label() -> None:
    table = pd.DataFrame({"year": [2024, 2024], "weekday": ["Mon", "Tue"], "month": [1, 12]})
    assert group_labels(table, ["year", "weekday"]) == ["2024 · Mon", "2024 · Tue"]
    assert group_labels(table, ["month"]) == ["Jan", "Dec"]


def test_charts_render_in_parallel_threads(results: dict[str, Result]) -> None:
    shapes = ["grouped_years", "table_candles", "dict", "scalar_count"]
    serial = [render_chart(results[s]) for s in shapes]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda s: render_chart(results[s]), shapes * 2))
    assert parallel == serial * 2


def test_rendering_does_not_touch_pyplot() -> None:
    code = "import sys, barb.charts; assert 'matplotlib.pyplot' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def render_cost(result: Result) -> float:
    """The median CPU time of three renders (after a first one that warms the caches)."""
    render_chart(result)
    times = []
    for _ in range(3):
        started = time.process_time()
        render_chart(result)
        times.append(time.process_time() - started)
    return statistics.median(times)


@pytest.mark.parametrize("shape", ["table_indicator", "table_intraday", "scalar_correlation"])
def test_large_tables_cost_about_what_a_small_chart_does(
    results: dict[str, Result], shape: str
) -> None:
    """Thousands of rows are thinned before drawing: a 50,000-bar chart costs no more than
    three five-bar charts, measured in the same run (a pathology such as 50k markers costs
    ten times more)."""
    small = render_cost(results["grouped_weekdays"])
    assert render_cost(results[shape]) < 3 * small


@pytest.mark.parametrize(
    "value",
    [
        pd.Timestamp("2020-07-15"),
        dt.date(2020, 7, 15),
        np.datetime64("2020-07-15T00:00:00", "ns"),
    ],
)
def test_a_date_answer_is_written_as_the_date(value) -> None:
    """arg_max(date(), ret) answers with a day; the chart's title and legend name it."""
    assert format_value(value) == "2020-07-15"
    assert format_value(pd.Timestamp("2024-03-15 09:30")) == "2024-03-15 09:30"
    assert format_value(pd.NaT) == format_value(None) == "n/a"


@pytest.mark.parametrize(
    ("locs", "language", "texts"),
    [
        ([0, 1e6, 2e6, 3e6], "en", ["0", "1M", "2M", "3M"]),
        ([2e6, 2.5e6, 3e6], "en", ["2M", "2.5M", "3M"]),
        ([-1e6, 0, 1e6], "en", ["\u22121M", "0", "1M"]),
        ([0, 1e6, 2e6], "ru", ["0", "1\u00a0млн", "2\u00a0млн"]),
        ([0, 250_000, 500_000], "en", ["0", "250,000", "500,000"]),
    ],
)
def test_axis_ticks_of_millions_read_in_millions(locs, language, texts) -> None:
    """ "2,400,000" is wider than the axis margin, and was cut to "400,000" on the phone."""
    formatter = TickFormatter(words_for(language))
    formatter.set_locs(locs)
    assert [formatter(v) for v in locs] == texts
