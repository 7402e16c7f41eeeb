"""A count and a share are named in the plan's words on the chart, as averages of bar columns
already were (p42b #2, #5): a Russian chat read «count = 168 дней» and
«mean_close_gt_open: больше всего Ср 54,4 %…» under a plan that said «количество баров» and
«доля баров, где закрытие > открытие». Expected values from pandas over the hand-made RTH
days, never through Barb; the words from the one table of them, ``barb.column_words``."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from asking import RTH_DAILY, ask
from matplotlib.text import Text
from rth_bars import rth_daily, rth_hourly

from barb.charts import chart_headline, draw_chart
from barb.column_words import described
from barb.script.parser import parse_expression

COUNTED = {"en": "number of days", "ru": "количество дней"}
# On daily bars the rows are days, in the plan as on the chart (f49d).
SHARE = {"en": "share of days where close > open", "ru": "доля дней, где закрытие > открытие"}
EXTREMES = {"en": ("highest", "lowest"), "ru": ("больше всего", "меньше всего")}
WEEKDAYS = {"en": ["Mon", "Tue", "Wed", "Thu", "Fri"], "ru": ["Пн", "Вт", "Ср", "Чт", "Пт"]}


def _texts(result, language: str) -> list[str]:
    fig = draw_chart(result, language=language)
    assert fig is not None
    fig.canvas.draw()
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_count_is_the_number_of_bars_the_plan_says(engine_settings, minutes, language) -> None:
    days = rth_daily(minutes)
    ranges = days["high"] - days["low"]
    limit = float(ranges.median())
    count = int((ranges > limit).sum())
    assert 1 < count < len(days)
    result = ask({"where": f"range > {limit}", "select": "count()"}, engine_settings, **RTH_DAILY)
    name = COUNTED[language]
    # The plan's words, on daily bars those of days: "number of bars = 516 days" had named
    # one thing two ways.
    assert described(parse_expression("count()"), language, "days") == name
    headline = chart_headline(result, language)
    assert headline == f"{name} = {count}"
    texts = _texts(result, language)  # the query's own "count()" is under the title
    assert not any(t.startswith(("count =", "count:")) for t in texts), texts
    assert headline in texts  # the title


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_count_of_hours_says_bars_once(engine_settings, minutes, language) -> None:
    """On 1h bars a count is of bars, named so once: "number of bars = 1,202 bars" had said
    the unit twice, in the title and the legend."""
    hours = len(rth_hourly(minutes))
    result = ask({"session": "RTH", "from": "1h", "select": "count()"}, engine_settings)
    name = {"en": "number of bars", "ru": "количество баров"}[language]
    number = f"{hours:,}".replace(",", "," if language == "en" else "\u00a0")
    assert chart_headline(result, language) == f"{name} = {number}"
    # The measure may be named alone ("number of bars", the subtitle); a number is never
    # followed by the unit again.
    twice = re.compile(r"\d\s*(bars|баров|бара)\b")
    assert not [text for text in _texts(result, language) if twice.search(text)]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_share_of_up_days_is_named_as_the_plan_names_it(
    engine_settings, minutes, language
) -> None:
    days = rth_daily(minutes)
    up = (days["close"] > days["open"]).astype("float")
    weekday = pd.to_datetime(days.index.to_series()).dt.dayofweek
    shares = up.groupby(weekday).mean()
    assert shares.nunique() == len(shares)  # one highest, one lowest
    high, low = int(shares.idxmax()), int(shares.idxmin())
    query = {"map": {"weekday": "dayname()"}, "group_by": "weekday", "select": "mean(close > open)"}
    result = ask(query, engine_settings, **RTH_DAILY)
    decimal = "." if language == "en" else ","
    percent = "%" if language == "en" else "\u00a0%"
    top, bottom = (  # as the bars write them (p47d D8)
        f"{shares[i] * 100:.1f}".replace(".", decimal) + percent for i in (high, low)
    )
    name = SHARE[language]
    assert described(parse_expression("mean(close > open)"), language, "days") == name
    days_named = WEEKDAYS[language]
    # The hand-made weekdays are within noise of each other: their span (p47d D1).
    ends = f"{days_named[low]} {bottom}", f"{days_named[high]} {top}"
    span = {
        "en": f"{ends[0]} to {ends[1]} (differences within noise)",
        # A dash: "до май" would need each month's genitive (p48f).
        "ru": f"{ends[0]} – {ends[1]} (разница в пределах шума)",
    }[language]
    assert result.metadata.even_groups
    assert chart_headline(result, language) == f"{name}: {span}"
    texts = _texts(result, language)
    assert not any("mean_close_gt_open" in t for t in texts), texts
    assert any(t.startswith(name) for t in texts)  # the axis, if not the title too


@pytest.mark.parametrize(
    ("select", "language", "name"),
    [
        # The range by its formula is the range (it read "mean_high_low = …").
        ("mean(high - low)", "en", "average range"),
        ("mean(high - low)", "ru", "средний диапазон"),
        # Any other formula as written, its average over all of it (it read
        # "mean_close_open_open_100 = …" in both languages).
        ("mean((close - open) / open * 100)", "en", "average ((close - open) / open * 100)"),
        ("mean((close - open) / open * 100)", "ru", "среднее «(close - open) / open * 100»"),
        # A call is one unit: "maximum (abs(close - open))" closed two brackets at once.
        ("max(abs(close - open))", "en", "maximum abs(close - open)"),
        ("max(abs(close - open))", "ru", "максимум «abs(close - open)»"),
    ],
)
def test_an_answer_of_a_formula_is_named_by_it_not_by_a_slug(
    engine_settings, minutes, select: str, language: str, name: str
) -> None:
    days = rth_daily(minutes)
    expected = {
        "mean(high - low)": (days["high"] - days["low"]).mean(),
        "mean((close - open) / open * 100)": (
            (days["close"] - days["open"]) / days["open"] * 100
        ).mean(),
        "max(abs(close - open))": (days["close"] - days["open"]).abs().max(),
    }[select]
    result = ask({"select": select}, engine_settings, **RTH_DAILY)
    assert result.summary.value == pytest.approx(expected)
    headline = chart_headline(result, language)
    assert headline.startswith(f"{name} = "), headline
    assert "mean_" not in headline
