"""A chart of groups' means names the highest and the lowest; when they differ by less than
two standard errors of the difference, its subtitle says the differences are noise, as the
model is told. "The most volatile weekday" drew Wednesday in orange and Monday in blue with
nothing to say that five weekdays' mean ranges lie within each other's noise. Whether they
do is decided here with numpy over DuckDB's daily bars, never the engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import figure, run
from matplotlib.text import Text

pytestmark = pytest.mark.slow

NOISE = {"en": "the differences are within noise", "ru": "разница в пределах шума"}
NAME = {"en": "average range", "ru": "средний диапазон"}  # mean(range), as the plan says it
SAID = {"en": "within noise)", "ru": "в пределах шума)"}  # the headline's words for it


def texts(fig) -> str:
    return " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible()).replace("\n", " ")


def within_noise(values: pd.Series, keys: pd.Series) -> bool:
    """Whether the highest and the lowest group's means differ by less than two standard
    errors of their difference (each std, ddof 1, over sqrt(n))."""
    stats = values.groupby(keys).agg(["mean", "std", "count"])
    errors = stats["std"] / np.sqrt(stats["count"])
    high, low = stats["mean"].idxmax(), stats["mean"].idxmin()
    gap = stats.loc[high, "mean"] - stats.loc[low, "mean"]
    return bool(gap < 2 * np.hypot(errors[high], errors[low]))


@pytest.mark.parametrize("language", ["en", "ru"])
def test_weekdays_within_noise_say_so_and_years_apart_do_not(
    sample_settings, days, language
) -> None:
    ranges = days["high"] - days["low"]
    dates = pd.DatetimeIndex(days.index)
    assert within_noise(ranges, pd.Series(dates.dayofweek, index=days.index))
    weekdays = {
        "session": "RTH",
        "from": "daily",
        "map": {"weekday": "dayname()"},
        "group_by": "weekday",
        "select": "mean(range)",
    }
    fig = figure(run(weekdays, sample_settings), language)
    shown = texts(fig)
    # The headline is the column's and says it ("average range: Mon … to Fri … (differences
    # within noise)"): once, not again in the subtitle.
    header = " ".join(t.get_text() for t in fig.texts)
    assert header.startswith(f"{NAME[language]}: ")
    assert SAID[language] in header.split(" NQ · ")[0]
    assert f"{NAME[language]}: {NOISE[language]}" not in shown
    percent = ranges / days["open"] * 100
    assert not within_noise(percent, pd.Series(dates.year, index=days.index))
    years = {
        "session": "RTH",
        "from": "daily",
        "map": {"rp": "range / open * 100"},
        "group_by": "year()",
        "select": "mean(rp) as p",
    }
    assert NOISE[language] not in texts(figure(run(years, sample_settings), language))


def test_the_note_stands_on_its_own_line_after_a_long_subtitle(sample_settings) -> None:
    """A subtitle of long map expressions filled its two lines, and the note at its end was
    cut off: first hour up or down, and whether the day went the same way, under a headline
    of the mean range (which does not say the note)."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "fh": 'session_close("RTH_OPEN") - open',
            "same_dir": "(fh > 0) == (close > open)",
        },
        "group_by": "fh > 0",
        "select": ["mean(same_dir)", "mean(range)"],
    }
    result = run(query, sample_settings)
    assert result.metadata.even_groups == ["mean_same_dir"]
    shown = texts(figure(result))
    assert f"average same_dir: {NOISE['en']}" in shown


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_long_note_is_wrapped_whole_at_a_phones_width(sample_settings, language) -> None:
    """p46e q29: two columns within noise at 360 px: the note on one line was cut to "…the
    differences are within…", losing the word that says it. It wraps, whole."""
    from barb.charts import draw_chart

    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"weekday": "dayname()"},
        "group_by": "weekday",
        "select": ["mean(range)", "median(range)"],
    }
    result = run(query, sample_settings)
    assert result.metadata.even_groups == ["mean_range", "median_range"]
    fig = draw_chart(result, width_px=360, language=language)
    assert fig is not None
    shown = texts(fig)
    assert NOISE[language] in shown
    assert f"{NOISE[language]}…" not in shown and "…" not in shown.split(NAME[language])[-1]
