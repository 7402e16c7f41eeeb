"""A Markov table, group_by ["yesterday", "today"] of up or down, drawn as yesterday's slots
with today's bars beside each other: its headline had named each today's bar with the
yesterday of its highest and lowest, "down ▲ up 1,140", read as yesterday down, today up
(1,139) where it was today down after yesterday up (p40a #9). And the data's first day,
with neither key, was said apart under each key ("2 rows with no value for yesterday", "1
row with no value for today") and read as 3 rows left out of the 2. Expected values from
pandas over the hand-made RTH days, never through Barb."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from asking import RTH_DAILY, ask
from matplotlib.figure import Figure
from matplotlib.text import Text
from rth_bars import rth_daily

from barb.charts import chart_headline, draw_chart

MARKOV = {
    "map": {
        "yesterday": 'if(prev(close) > prev(close, 2), "up", "down")',
        "today": 'if(close > prev(close), "up", "down")',
    },
    "group_by": ["yesterday", "today"],
    "select": ["count()"],
}


@pytest.fixture(scope="module")
def moves(minutes: pd.DataFrame) -> pd.DataFrame:
    """Each RTH day's move and the day before's, up or down (n/a without a close before)."""
    close = rth_daily(minutes)["close"]
    prev = close.shift()

    def side(now: pd.Series, before: pd.Series) -> pd.Series:
        return pd.Series(np.where(now > before, "up", "down"), close.index).where(before.notna())

    return pd.DataFrame({"yesterday": side(prev, close.shift(2)), "today": side(close, prev)})


def test_a_markov_headline_reads_its_keys_in_their_order(engine_settings, moves) -> None:
    """Per yesterday, in the axis's order, today's most and least frequent move with its
    count: the bars of that slot, first key first."""
    counts = moves.dropna().groupby(["yesterday", "today"]).size()
    words, marks = [], []
    for yesterday in ("down", "up"):
        today = counts[yesterday]
        assert today.nunique() == 2  # no tie: one most and one least often
        high, low = today.idxmax(), today.idxmin()
        words.append(
            f"{yesterday}: most often {high} {today[high]} days, "
            f"least often {low} {today[low]} days"
        )
        marks.append(f"{yesterday} ▲ {high} {today[high]} · ▼ {low} {today[low]}")
    assert counts["down"]["up"] != counts["up"]["down"]  # the other reading is another number
    result = ask(MARKOV, engine_settings, **RTH_DAILY)
    assert chart_headline(result) == "count: " + "; ".join(words)
    forms = ("count: " + "; ".join(words), "count: " + "; ".join(marks))
    assert _title(draw_chart(result)) in forms


def _title(fig: Figure | None) -> str:
    """The PNG's title, its lines joined: the texts of the largest size drawn."""
    assert fig is not None
    fig.canvas.draw()
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    size = max(t.get_fontsize() for t in texts)
    lines = [t.get_text() for t in texts if t.get_fontsize() == size]
    return " ".join(lines).replace("\n", " ").replace("\u00a0", " ")


def test_rows_without_either_key_are_counted_once(engine_settings, moves) -> None:
    """The first day has neither key, the second no yesterday: 2 rows left out, not 3."""
    left = moves.isna().any(axis=1)
    result = ask(MARKOV, engine_settings, **RTH_DAILY)
    assert result.table["count"].sum() == len(moves) - left.sum()
    [said] = [w for w in result.metadata.warnings if "in no group" in w]
    assert said == (
        f"{left.sum()} rows with no value (n/a) for a key left out: they are in no group (none "
        f"for yesterday on {moves['yesterday'].isna().sum()}, today on "
        f"{moves['today'].isna().sum()} of them)."
    )
