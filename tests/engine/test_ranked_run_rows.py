"""A chart of rows ranked by a streak is true to the text (p48f M5): tied rows share a place
and a tied first is headlined as a tie, the rows a limit cut from a tie are named, the
subtitle keeps "first N", and bars that are earlier days of a run drawn above are greyed
and counted as runs. Expected values from pandas over the hand-made bars of
conftest.py."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex
from matplotlib.text import Text

from barb import execute
from barb.charts import chart_headline, draw_chart
from barb.charts.style import ACCENT, NEUTRAL
from barb.export import csv_bytes

RTH = (570, 1020)  # NQ's RTH, 09:30-17:00, in minutes of the day
LIMIT = 8
QUERY = {
    "session": "RTH",
    "from": "daily",
    "map": {"run": "streak(close < prev(close))"},
    "sort": "run desc",
    "limit": LIMIT,
    "select": ["run"],
}


@pytest.fixture(scope="module")
def runs(minutes: pd.DataFrame) -> pd.DataFrame:
    """Each RTH day's losing streak and the run it belongs to, with pandas, ranked as the
    query sorts them (a stable sort: ties in time order)."""
    minute = minutes["timestamp"].dt.hour * 60 + minutes["timestamp"].dt.minute
    rth = minutes[(minute >= RTH[0]) & (minute < RTH[1])]
    close = rth.groupby(rth["timestamp"].dt.normalize())["close"].last()
    down = (close < close.shift()).astype(int)
    run_id = (down == 0).cumsum()
    days = pd.DataFrame({"run": down.groupby(run_id).cumsum(), "run_id": run_id})
    return days.sort_values("run", ascending=False, kind="stable")


def _texts(fig) -> str:
    return " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible()).replace("\n", " ")


def test_a_streak_ranking_chart_says_ties_cuts_and_runs(engine_settings, runs) -> None:
    listed, rest = runs.iloc[:LIMIT], runs.iloc[LIMIT:]
    edge = listed["run"].iloc[-1]
    cut = [f"{day:%Y-%m-%d}" for day in rest.index[rest["run"] == edge]]
    assert cut  # the case: the limit cuts through the last value's tie
    top = listed.index[listed["run"] == listed["run"].iloc[0]]
    assert len(top) == 3  # the case: a three-way tie for first
    repeated = listed["run_id"].duplicated().to_numpy()
    assert repeated.any()  # the case: two rows of one run listed

    result = execute(QUERY, "NQ", settings=engine_settings)
    assert result.ok
    assert result.table["run"].tolist() == listed["run"].tolist()
    fig = draw_chart(result, language="en")
    fig.canvas.draw()
    ax = next(ax for ax in fig.axes if ax.get_yticklabels())
    places = listed["run"].rank(method="min", ascending=False).astype(int)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert [label.split(".")[0] for label in labels] == [str(p) for p in places]
    [bars] = [c for c in ax.collections if isinstance(c, PolyCollection)]
    colors = [to_hex(c) for c in bars.get_facecolors()]
    assert colors == [NEUTRAL if r else ACCENT for r in repeated]
    shown = _texts(fig)
    assert f"Also {edge}, cut by the limit: {', '.join(cut[:3])}" in shown
    # and the CSV on the last row, whose tie the limit cut: the file said nothing of it
    frame = pd.read_csv(io.BytesIO(csv_bytes(result)), dtype=str)
    notes = frame["note"].fillna("").tolist()
    assert notes == [""] * (LIMIT - 1) + [f"Also {edge}, cut by the limit: {', '.join(cut[:3])}"]
    assert f"{LIMIT} bars, {listed['run_id'].nunique()} runs" in shown
    assert f"first {LIMIT}" in shown
    first = ", ".join(f"{day:%Y-%m-%d}" for day in top[:2])
    assert chart_headline(result, "en").startswith(f"run: tied #1 {first} +1 ")
