"""A grouped chart crowns no group that the text calls too few rows to compare (p48f M6:
"fill share by month" headed February's 75% from 4 gaps, though the warning said groups
under 5 were too few). Hand-made bars of conftest.py; expected values from pandas."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import ask, warnings_with
from matplotlib.text import Text

from barb.caveats.group_noise import FEW_ROWS
from barb.charts import chart_headline, draw_chart

RTH = (570, 1020)  # NQ's RTH, 09:30-17:00, in minutes of the day
# To 5 March: March holds 3 days, the highest mean range of the three months.
QUERY = {
    "session": "RTH",
    "from": "daily",
    "period": "2024-01-02:2024-03-05",
    "group_by": "month()",
    "select": ["count() as days", "mean(range) as avg_range"],
}


@pytest.fixture(scope="module")
def months(minutes: pd.DataFrame) -> pd.DataFrame:
    minute = minutes["timestamp"].dt.hour * 60 + minutes["timestamp"].dt.minute
    rth = minutes[(minute >= RTH[0]) & (minute < RTH[1])]
    days = rth.groupby(rth["timestamp"].dt.normalize()).agg(
        high=("high", "max"), low=("low", "min")
    )
    days = days[:"2024-03-05"]
    ranges = (days["high"] - days["low"]).groupby(days.index.month)
    return pd.DataFrame({"days": ranges.size(), "avg_range": ranges.mean()})


def test_a_group_too_few_to_compare_is_not_crowned(engine_settings, months) -> None:
    few = months[months["days"] < FEW_ROWS]
    assert few.index.tolist() == [3] and months["avg_range"].idxmax() == 3  # the case
    result = ask(QUERY, engine_settings)
    assert result.table["avg_range"].tolist() == pytest.approx(months["avg_range"].tolist())
    assert warnings_with(result, "too few to compare")
    whole = months[months["days"] >= FEW_ROWS]["avg_range"]
    headline = chart_headline(result, "en")
    assert "Mar" not in headline
    high, low = whole.idxmax(), whole.idxmin()
    names = {1: "Jan", 2: "Feb"}
    assert f"highest {names[high]} {whole[high]:.2f}" in headline
    assert f"lowest {names[low]} {whole[low]:.2f}" in headline
    fig = draw_chart(result, language="en")
    fig.canvas.draw()
    shown = " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())
    assert "Mar: too few rows to compare" in shown.replace("\n", " ")
