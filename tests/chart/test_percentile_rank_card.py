"""A percentile rank on a card reads "66.93 of 100", never the ordinal of a fraction
("66.93th percentile", «66,93-й перцентиль»), and when the engine warns that a rank of a
distance in points blends price levels, the card gives the rank in percent of the price
under it: NQ's ATR(14) ranked 66.93 in points over a year the price ran from 16,234 to
25,851, and 1.95 in percent. Checked with TA-Lib's ATR over DuckDB's daily bars."""

from __future__ import annotations

import pandas as pd
import pytest
import talib
from engine_results import figure, run
from matplotlib.text import Text

from barb.charts import chart_headline

pytestmark = pytest.mark.slow

QUERY = {
    "session": "RTH",
    "from": "daily",
    "period": "last_1_years",
    "map": {"atr14": "atr(14)", "atr_rank": "rank(atr14)"},
    "sort": "timestamp desc",
    "limit": 1,
    "select": ["atr14", "atr_rank"],
}


def texts(fig) -> str:
    return " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible()).replace("\n", " ")


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_card_gives_the_rank_in_percent_beside_points(sample_settings, days, language) -> None:
    atr = pd.Series(talib.ATR(days["high"], days["low"], days["close"], 14), index=days.index)
    result = run(QUERY, sample_settings)
    rows = result.metadata.rows_matched
    window = pd.DataFrame({"atr": atr, "close": days["close"]}).iloc[-rows:]
    in_points = window["atr"].rank(method="max", pct=True).iloc[-1] * 100
    in_percent = (window["atr"] / window["close"]).rank(method="max", pct=True).iloc[-1] * 100
    assert abs(in_points - in_percent) > 20  # the two readings differ
    shown = texts(figure(result, language))
    headline = chart_headline(result, language)
    assert headline is not None
    of = {"en": "of 100", "ru": "из 100"}[language]
    points = f"{in_points:.2f}" if language == "en" else f"{in_points:.2f}".replace(".", ",")
    percent = f"{in_percent:.2f}" if language == "en" else f"{in_percent:.2f}".replace(".", ",")
    assert f"{points} {of}" in headline
    assert f"{points} {of}" in shown
    assert "th percentile" not in shown and "-й перцентиль" not in shown
    price = {"en": "in % of the price", "ru": "в % от цены"}[language]
    assert f"{price}: {percent} {of}" in shown
