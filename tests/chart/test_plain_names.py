"""What a person reads on a chart (p38c, p38b Q13): the bold first line and the axes name an
aggregate of a bar column in the plan's words, not the engine's column name ("mean_range:
больше всего Ср 140,69 пункта" over an axis "weekday"); a percentile rank's list ends its
axis at 100 and writes labels that differ when the values do ("100.0" three times, under
"100 percentile"); a 25-row list says what it left to the CSV and writes its dates as large
as other charts write their smallest numbers; a grouped headline leads with a value whose
groups differ, not one the noise check called noise. Expected values from pandas over the
factories' bars, never Barb's engine."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import chart_factories as make
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from barb.charts import chart_headline, draw_chart
from barb.charts.columns import column_name
from barb.charts.style import VALUE_PT
from barb.charts.words import words_for
from barb.result import Result, summarize_grouped, summarize_table

WEEKDAYS = {"en": ["Mon", "Tue", "Wed", "Thu", "Fri"], "ru": ["Пн", "Вт", "Ср", "Чт", "Пт"]}


def drawn(result: Result, language: str = "en") -> Figure:
    fig = draw_chart(result, language=language)
    assert fig is not None
    fig.canvas.draw()
    return fig


def shown(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def weekday_means(query: dict[str, Any], column: str) -> tuple[Result, pd.Series]:
    """Mean ranges by weekday, as pandas has them, under ``column`` for ``query``."""
    bars = make.daily_bars()
    bars["weekday"] = bars["timestamp"].dt.strftime("%a")
    means = bars.groupby("weekday")["range"].mean()
    table = means.rename(column).reset_index()
    result = Result(
        query=query,
        summary=summarize_grouped(table, ["weekday"], [column]),
        table=table,
        metadata=make.metadata(bars),
        focus_columns=["weekday", column],
    )
    return result, means.reindex(WEEKDAYS["en"])


WEEKDAY_QUERY = {
    "session": "RTH",
    "from": "daily",
    "map": {"weekday": "dayname()"},
    "group_by": "weekday",
}


@pytest.mark.parametrize(
    ("language", "name", "form", "unit", "axis", "key"),
    [
        ("en", "average range", "{name}: {low} {bottom} to {high} {top} points (differences "
         "within noise)", "points", "average range (points)", "weekday"),
        ("ru", "средний диапазон", "{name}: {low} {bottom} – {high} {top} пункта (разница "
         "в пределах шума)", "пункты", "средний диапазон (пункты)", "день недели"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("alias", [None, "mean_range"])
def test_an_average_of_a_bar_column_is_named_in_the_plans_words(
    language: str, name: str, form: str, unit: str, axis: str, key: str, alias: str | None
) -> None:
    """p38c C01/C07: "mean(range)" under the engine's name for it is "average range"
    («средний диапазон») in the headline, which says the noise, and over the axis; the key the
    query named for ``dayname()`` is the weekday in the chart's language."""
    select = "mean(range)" + (f" as {alias}" if alias else "")
    column = alias or "mean_range"
    result, means = weekday_means({**WEEKDAY_QUERY, "select": select}, column)
    assert result.metadata is not None
    result.metadata.even_groups = [column]
    days = WEEKDAYS[language]
    high, low = int(np.argmax(means)), int(np.argmin(means))
    decimal = "." if language == "en" else ","
    top, bottom = (f"{means.iloc[i]:.2f}".replace(".", decimal) for i in (high, low))
    expected = form.format(name=name, high=days[high], top=top, low=days[low], bottom=bottom)
    assert chart_headline(result, language) == expected
    texts = shown(drawn(result, language))
    assert axis in texts and key in texts
    # The noise said once, by the headline in the plan's words: not again under it.
    assert sum("noise" in t or "шума" in t for t in texts) == 1
    assert not any(t.startswith(column) for t in texts)  # the query's text under it aside


def test_a_name_the_query_made_stays_as_written() -> None:
    """No words stand for ``rng_pct``: the chart quotes the query's name (the CSV's header)
    inside Barb's words for its average, as the plan does («среднее «rng_pct»»; the engine's
    ``mean_rng_pct`` had put Barb's English word in a Russian headline, f49g); a name the
    query chose for an average of the range stays as written, as the answer's text calls
    it."""
    query = {**WEEKDAY_QUERY, "map": {**WEEKDAY_QUERY["map"], "rng_pct": "range / open * 100"}}
    result, _ = weekday_means({**query, "select": "mean(rng_pct)"}, "mean_rng_pct")
    chosen, _ = weekday_means({**WEEKDAY_QUERY, "select": "mean(range) as avg"}, "avg")
    assert (chart_headline(result, "en") or "").startswith("average rng_pct: ")
    assert (chart_headline(result, "ru") or "").startswith("среднее «rng_pct»: ")
    for language in ("en", "ru"):
        assert (chart_headline(chosen, language) or "").startswith("avg: ")


def ranked(
    values: pd.Series, bars: pd.DataFrame, query: dict[str, Any], focus: list[str]
) -> Result:
    table = bars.loc[values.index].reset_index(drop=True)
    return Result(
        query=query,
        summary=summarize_table(table, focus, ["timestamp", *focus]),
        table=table,
        metadata=make.metadata(bars),
        focus_columns=focus,
    )


def percentile_top5() -> tuple[Result, pd.Series]:
    """``rank(range)``'s top 5 days: pandas' percent rank, 100 and just under it."""
    bars = make.daily_bars()
    bars["r"] = bars["range"].rank(pct=True) * 100
    top = bars["r"].sort_values(ascending=False).head(5)
    query = {"session": "RTH", "from": "daily", "map": {"r": "rank(range)"}, "sort": "r desc",
             "limit": 5}  # fmt: skip
    return ranked(top, bars, query, ["r"]), top


@pytest.mark.parametrize(
    ("language", "ordinal"), [("en", "100th percentile"), ("ru", "100-й перцентиль")]
)
def test_a_percentile_rank_list_ends_at_100_with_labels_that_differ(
    language: str, ordinal: str
) -> None:
    """p38c C05: the top 5 by rank(range) read "100.0" three times on an axis running to
    120, under "r: #1 … 100 percentile"."""
    result, top = percentile_top5()
    assert top.nunique() == 5 and top.iloc[0] == 100 and top.iloc[2] > 99.95
    fig = drawn(result, language)
    (ax,) = fig.axes
    assert ax.get_xlim() == (0.0, 100.0)
    labels = [t.get_text() for t in ax.texts]
    decimal = "." if language == "en" else ","
    assert labels == [f"{v:.2f}".replace(".", decimal) for v in top]
    renderer = fig.canvas.get_renderer()
    right = fig.bbox.x1
    assert all(t.get_window_extent(renderer).x1 <= right for t in ax.texts)  # inside the figure
    day = pd.Timestamp(result.table["timestamp"].iloc[0]).strftime("%Y-%m-%d")  # type: ignore[index]
    number = "№1" if language == "ru" else "#1"
    assert chart_headline(result, language) == f"r: {number} {day} {ordinal}"


def test_ordinals_take_their_suffix() -> None:
    """1st, 2nd, 3rd, 11th, 22nd: CLDR's ordinal forms, through Babel; a fraction has no
    ordinal ("99.9th percentile", «99,9-й перцентиль»): "99.9 of 100"."""
    from barb.charts.value_text import with_unit
    from barb.charts.words import words_for

    en, ru = words_for("en"), words_for("ru")
    texts = [with_unit(t, "percentile", en) for t in ("1", "2", "3", "11", "22", "99.9")]
    assert texts == [
        "1st percentile",
        "2nd percentile",
        "3rd percentile",
        "11th percentile",
        "22nd percentile",
        "99.9 of 100",
    ]
    assert with_unit("99,9", "percentile", ru) == "99,9 из 100"
    assert with_unit("100", "percentile", ru) == "100-й перцентиль"


def top25_with_percent() -> tuple[Result, pd.DataFrame]:
    """The 25 widest days of a year with their range in points and in percent."""
    bars = make.daily_bars()
    bars["range_pct"] = bars["range"] / bars["open"] * 100
    year = bars[bars["timestamp"].dt.year == 2024]
    top = year.sort_values("range", ascending=False).head(25)
    query = {"session": "RTH", "from": "daily", "period": "2024",
             "map": {"range_pct": "range / open * 100"}, "select": ["range", "range_pct"],
             "sort": "range desc", "limit": 25}  # fmt: skip
    return ranked(top["range"], bars, query, ["range", "range_pct"]), top


@pytest.mark.parametrize(
    ("language", "note"),
    [("en", "+ 1 more value in the CSV: range_pct"), ("ru", "+ ещё 1 значение в CSV: range_pct")],
)
def test_a_long_list_says_what_it_left_to_the_csv_and_is_legible(language: str, note: str) -> None:
    """p38c C06: a top 25 selecting range and range_pct drew range alone and said nothing
    of range_pct, its 25 dates at 10 pt (7 px on a phone), under the 11.5 pt a grouped chart
    writes its smallest values in. Its dates are as large now, and none touches the next."""
    result, top = top25_with_percent()
    fig = drawn(result, language)
    (ax,) = fig.axes
    assert note in shown(fig)
    labels = [t.get_text() for t in ax.texts if t.get_text() != note]
    values = [float(t.replace(",", ".").replace("\u00a0", "")) for t in labels]
    assert values == pytest.approx(top["range"].round(2).tolist())
    dates = [t for t in ax.get_yticklabels() if t.get_text()]
    assert len(dates) == 25
    assert min(t.get_fontsize() for t in dates) >= VALUE_PT - 1.5
    renderer = fig.canvas.get_renderer()
    boxes = sorted((t.get_window_extent(renderer) for t in dates), key=lambda b: b.y0)
    assert all(low.y1 <= high.y0 for low, high in pairwise(boxes))


def test_a_headline_leads_with_a_value_apart_not_one_within_noise() -> None:
    """p38b Q13: FOMC days' 15-minute range in percent (0.491% against 0.478%, within
    noise) headed the chart over their share of days with both sides broken (58.0% against
    71.4%, apart). The headline names the first value whose groups differ, and its bars
    are the ones coloured, on top."""
    bars = make.daily_bars()
    bars["fomc"] = bars.index % 20 == 0
    bars["or_pct"] = bars["range"] / bars["open"] * 100
    bars["both"] = bars["close"] > bars["open"]
    stats = bars.groupby("fomc").agg(
        days=("range", "size"), or_pct=("or_pct", "mean"), both_broken=("both", "mean")
    )
    table = stats.reset_index()
    query = {"session": "RTH", "from": "daily", "join": "fomc", "group_by": "fomc",
             "map": {"or_pct": "range / open * 100"},
             "select": ["count() as days", "mean(or_pct) as or_pct",
                        "mean(close > open) as both_broken"]}  # fmt: skip
    meta = make.metadata(bars).model_copy(
        update={"even_groups": ["or_pct"], "apart_groups": ["both_broken"]}
    )
    values = ["days", "or_pct", "both_broken"]
    result = Result(
        query=query,
        summary=summarize_grouped(table, ["fomc"], values, counts=["days"]),
        table=table,
        metadata=meta,
        focus_columns=["fomc", *values],
    )
    share = stats["both_broken"] * 100
    # Two groups by a yes/no key compared, FOMC days first (p47d D7), at the bars' one
    # precision (D8).
    assert chart_headline(result, "en") == (
        f"both_broken: fomc days {share[True]:.1f}% vs other days {share[False]:.1f}%"
    )
    # Without the noise check's word the first value leads, as before.
    plain = meta.model_copy(update={"even_groups": None, "apart_groups": None})
    result.metadata = plain
    assert (chart_headline(result, "en") or "").startswith("or_pct: ")


def test_a_statistic_of_a_name_the_query_made_is_in_barb_s_words() -> None:
    """f49g: «percentile_chg_10 = −313,55 пункта · … · std_chg = 246,47 пункта» headed a
    Russian chart: the function's English name in the engine's. The plan's words, the
    query's name quoted."""
    query = {
        **WEEKDAY_QUERY,
        "map": {**WEEKDAY_QUERY["map"], "chg": "close - open"},
        "select": ["percentile(chg, 10)", "std(chg)", "median(chg) as mid"],
    }
    result, _ = weekday_means(query, "percentile_chg_10")
    ru, en = words_for("ru"), words_for("en")
    assert column_name("percentile_chg_10", result, ru) == "10-й перцентиль «chg»"
    assert column_name("std_chg", result, ru) == "стандартное отклонение «chg»"
    assert column_name("percentile_chg_10", result, en) == "10th percentile of chg"
    assert column_name("mid", result, ru) == "mid"  # a name the query chose
    assert (chart_headline(result, "ru") or "").startswith("10-й перцентиль «chg»: ")


def test_a_headline_no_form_of_which_fits_still_names_what_it_measures() -> None:
    """«▲ 2022 · Ср 436,46, в пределах шума ещё 3 группы · ▼ 2023 · Вт…»: a Russian title of
    25 groups (year × weekday) fitted in no form, and the last, cut in two lines, said
    neither what was measured nor the lowest group's number. Now the shortest form that
    names it is cut in the most lines a title takes, and both numbers stay."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from barb.charts.header import MAX_TITLE_LINES, fit_headline

    name = "средний диапазон"
    ends = (
        "▲ 2022 · Ср 436,46, в пределах шума ещё 3 группы · ▼ 2023 · Вт 228,36, в пределах "
        "шума ещё 11 групп"
    )
    forms = [f"{name}: {ends} (405,40–420,12) (241,28–259,64)", f"{name}: {ends}", ends * 2]
    fig = Figure(figsize=(6, 7.5))
    FigureCanvasAgg(fig)  # as the chart draws: text measured by its renderer
    drawn = fit_headline(fig, forms, name=name)
    assert drawn[0].startswith(name)
    assert len(drawn) == MAX_TITLE_LINES
    said = " ".join(drawn)
    assert "436,46" in said and "228,36" in said
