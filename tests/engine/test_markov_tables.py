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
            f"{yesterday} — most often {high} {today[high]} days, "
            f"least often {low} {today[low]} days"
        )
        marks.append(f"{yesterday} ▲ {high} {today[high]} · ▼ {low} {today[low]}")
    assert counts["down"]["up"] != counts["up"]["down"]  # the other reading is another number
    result = ask(MARKOV, engine_settings, **RTH_DAILY)
    assert chart_headline(result) == "number of days: " + "; ".join(words)
    forms = ("number of days: " + "; ".join(words), "number of days: " + "; ".join(marks))
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
    first, second = moves.index[left]
    assert said == (
        f"{left.sum()} days, {first:%Y-%m-%d} (the data's first day), {second:%Y-%m-%d}, have "
        "no value (n/a) for a key and are left out: they are in no group (none "
        f"for yesterday on {moves['yesterday'].isna().sum()}, today on "
        f"{moves['today'].isna().sum()} of them)."
    )


# --- p42b #6, #24: a Markov table of yes/no keys and a share, its title whole at phone width --

UP_NEXT = {
    "map": {
        "y": "prev(close) > prev(open)",
        "d": "close > open",
        "nxt": "next(close) > next(open)",
    },
    "group_by": ["y", "d"],
    "select": "mean(nxt)",
}
#: A yes/no key's label, the series' words and the column's name, in English and Russian.
FLAGS = {"en": ("yes", "no"), "ru": ("да", "нет")}
SERIES = {"en": ("highest", "lowest"), "ru": ("больше всего", "меньше всего")}


def _percent(value: float, language: str) -> str:
    text = f"{value * 100:.1f}"  # as the bars write it (p47d D8)
    return f"{text}%" if language == "en" else f"{text.replace('.', ',')}\u00a0%"


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_markov_table_of_yes_no_keys_is_titled_whole(engine_settings, minutes, language) -> None:
    """Each today (d) with the yesterday (y) of its highest and lowest share of up
    tomorrows, as pandas has them: the caption says "d: no — highest y: yes …", not «d:
    нет: больше всего» (two colons), and the drawn title holds all four values with no
    word cut ("…▼y…" lost the last group's lowest)."""
    days = rth_daily(minutes)
    up = days["close"] > days["open"]
    frame = pd.DataFrame({"y": up.shift(1), "d": up, "nxt": up.shift(-1).astype("float")}).iloc[
        1:-1
    ]  # the first day has no yesterday, the last no tomorrow
    shares = frame.groupby(["d", "y"])["nxt"].mean()
    yes, no = FLAGS[language]
    high_word, low_word = SERIES[language]
    parts, values = [], []
    for today in (False, True):
        mine = shares[today]
        assert mine.nunique() == 2  # one highest, one lowest
        high, low = mine.idxmax(), mine.idxmin()
        flag = {True: yes, False: no}
        top, bottom = _percent(mine[high], language), _percent(mine[low], language)
        parts.append(
            f"d: {flag[today]} — {high_word} y: {flag[high]} {top}, "
            f"{low_word} y: {flag[low]} {bottom}"
        )
        values += [top, bottom]
    result = ask(UP_NEXT, engine_settings, **RTH_DAILY)
    name = {"en": "average nxt", "ru": "среднее «nxt»"}[language]  # Barb's words (f49g)
    assert chart_headline(result, language) == f"{name}: " + "; ".join(parts)
    title = _title(draw_chart(result, language=language))
    assert "…" not in title and ": " + high_word not in title
    assert title.startswith(f"{name}: d: ")
    for value in values:
        assert value.replace("\u00a0", " ") in title


def test_a_title_takes_a_third_line_rather_than_lose_a_value(engine_settings) -> None:
    """At the chart's phone width (900 px, shown at 360) no two-line form holds the Russian
    Markov title: it takes three lines, each ending at a whole group and value."""
    result = ask(UP_NEXT, engine_settings, **RTH_DAILY)
    fig = draw_chart(result, language="ru")
    assert fig is not None
    fig.canvas.draw()
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    size = max(t.get_fontsize() for t in texts)
    lines = [t.get_text() for t in texts if t.get_fontsize() == size]
    assert len(lines) == 3
    # A group's value ends a line, or the separator after it (never one that starts a line).
    ends = ("%", "%;", "·", "\u00a0нет", "\u00a0да")
    assert all(line.endswith(ends) for line in lines), lines
    assert not any(line.startswith("·") for line in lines), lines
