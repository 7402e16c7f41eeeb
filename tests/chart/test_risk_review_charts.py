"""What a tester found playing streaks, drawdowns and levels (risk): headlines of columns at
or below zero read backwards ("max_dd: highest Dec −1.1%", "больше всего"), one-row cards
rounded prices off the tick (CL 57.19 read 57.2), the open year's note lost "not ranked" in
Russian, and runs grouped by a counter were named by it, not by their days. Expected values
are pandas over the sample's minute bars (DuckDB for the days), never Barb's engine."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import duckdb
import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, bar_heights, figure, run
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Text

from barb import execute
from barb.charts import chart_headline
from barb.charts.style import HIGH, LOW, TITLE_PT
from barb.data.sample import write_samples
from barb.data.store import data_path
from barb.result import Result
from barb.settings import EngineSettings

pytestmark = pytest.mark.slow

CL_RTH = "minute >= 540 AND minute < 870"  # 09:00-14:30, CL's RTH
EN_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
RU_MONTHS = ["янв", "фев", "мар", "апр", "май", "июн", "июл", "авг", "сен", "окт", "ноя", "дек"]
MONTHLY_DRAWDOWN = {
    "session": "RTH",
    "from": "daily",
    "period": "2020:2025",
    "map": {"dd_pct": "(close / cummax(close, 'month') - 1) * 100"},
    "group_by": ["year()", "month()"],
    "select": "min(dd_pct) as max_dd",
}


@pytest.fixture(scope="module")
def cl_settings(sample_settings: EngineSettings) -> EngineSettings:
    """The sample's data directory with CL's sample in it too."""
    write_samples(["CL"], sample_settings)  # leaves an existing file alone
    return sample_settings


@pytest.fixture(scope="module")
def cl_days(cl_settings: EngineSettings) -> pd.DataFrame:
    """CL's RTH days (open, high, low, close by trading date), from its sample's minutes."""
    return _days(data_path("CL", cl_settings), CL_RTH)


@pytest.fixture(scope="module")
def es_days(sample_settings: EngineSettings) -> pd.DataFrame:
    return _days(data_path("ES", sample_settings), RTH)


def _days(path: object, session: str) -> pd.DataFrame:
    con = duckdb.connect()
    try:
        frame = con.execute(
            f"""
            SELECT trading_date AS d, arg_min(open, timestamp) AS open, max(high) AS high,
                   min(low) AS low, arg_max(close, timestamp) AS close
            FROM read_parquet('{path}') WHERE {session} GROUP BY 1 ORDER BY 1
            """
        ).df()
    finally:
        con.close()
    return frame.set_index("d")


def drawn_headline(fig: Figure) -> str:
    """The headline as drawn, its bold lines joined."""
    lines = [t.get_text() for t in fig.texts if t.get_fontsize() == TITLE_PT and t.get_text()]
    return " ".join(lines)


def number(text: str, language: str) -> float:
    """A number as a chart writes it: "−1,336.8" in English, "−1 336,8" in Russian."""
    plain = text.replace("\u2212", "-").replace("\u00a0", "").replace(" ", "")
    return float(plain.replace(",", "") if language == "en" else plain.replace(",", "."))


def faces(fig: Figure) -> list[str]:
    (ax,) = fig.axes
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return [to_hex(f) for f in bars.get_facecolors()]


def drawdowns(closes: pd.Series, keys: list[pd.Index]) -> pd.Series:
    """Each period's deepest close below its running high so far, in percent."""
    peak = closes.groupby(keys).cummax()
    return ((closes / peak - 1) * 100).groupby(keys).min()


# --- 1: a column at or below zero leads with, and colours, its lowest ---------------------------


def test_a_monthly_drawdown_leads_with_its_deepest_month(sample_settings, days) -> None:
    """q44: "max_dd: highest 2025 · Dec −1.1%, lowest 2020 · Jul −32.5%" coloured Dec 2025,
    the shallowest month, as the answer; in Russian "больше всего 2025 · дек", no name."""
    closes = days["close"][(days.index.year >= 2020) & (days.index.year <= 2025)]
    index = pd.DatetimeIndex(closes.index)
    expected = drawdowns(closes, [index.year, index.month])
    deep, shallow = expected.idxmin(), expected.idxmax()
    result = run(MONTHLY_DRAWDOWN, sample_settings)
    for language, months, lowest, highest in (
        ("en", EN_MONTHS, "lowest", "highest"),
        ("ru", RU_MONTHS, "ниже всего", "выше всего"),
    ):
        fig = figure(result, language)
        (ax,) = fig.axes
        np.testing.assert_allclose(bar_heights(ax), expected.to_numpy())
        colors = faces(fig)
        assert colors[expected.index.get_loc(deep)] == HIGH  # the answer's colour
        assert colors[expected.index.get_loc(shallow)] == LOW
        head = drawn_headline(fig)
        # The full form or, when it overflows two lines, the one with ▼ and ▲: the column
        # named either way, the deepest month first.
        found = re.fullmatch(
            rf"max_dd: (?:{lowest}|▼) (\d{{4}})\s·\s(\w+) (\S+)\s?%,? (?:{highest}|· ▲) "
            rf"(\d{{4}})\s·\s(\w+) (\S+)\s?%",
            head,
        )
        assert found is not None, head
        assert (int(found[1]), months.index(found[2]) + 1) == deep
        assert (int(found[4]), months.index(found[5]) + 1) == shallow
        assert number(found[3], language) == pytest.approx(expected[deep], abs=0.05)
        assert number(found[6], language) == pytest.approx(expected[shallow], abs=0.05)
        assert "больше" not in head and "меньше" not in head


def test_drawdowns_side_by_side_lead_each_year_with_its_deepest_month(
    sample_settings, days
) -> None:
    """Months by year, a bar per year in each month's slot: each year's lowest first."""
    query = {**MONTHLY_DRAWDOWN, "period": "2023:2025", "group_by": ["month()", "year()"]}
    closes = days["close"][(days.index.year >= 2023) & (days.index.year <= 2025)]
    index = pd.DatetimeIndex(closes.index)
    expected = drawdowns(closes, [index.year, index.month])
    result = run(query, sample_settings)
    parts = []
    for year in (2023, 2024, 2025):
        months = expected[year]
        low, high = (EN_MONTHS[int(months.idxmin()) - 1], EN_MONTHS[int(months.idxmax()) - 1])
        parts.append(
            f"{year} — lowest {low} {months.min():.2f}%, "  # as the bars write them (D8)
            f"highest {high} {months.max():.2f}%"
        )
    assert chart_headline(result) == "max_dd: " + "; ".join(parts).replace("-", "\u2212")
    assert "ниже всего" in (chart_headline(result, "ru") or "")


def test_a_yearly_drawdown_of_cl_names_its_deepest_year_first(cl_settings, cl_days) -> None:
    """q36: "max_dd_pct: highest 2021 −21.5%, lowest 2020 −80.3%"."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2019:2025",
        "map": {"dd_pct": "(close / cummax(close, 'year') - 1) * 100"},
        "group_by": "year()",
        "select": ["min(dd_pct) as max_dd_pct", "arg_min(date(), dd_pct) as trough_date"],
    }
    closes = cl_days["close"][(cl_days.index.year >= 2019) & (cl_days.index.year <= 2025)]
    expected = drawdowns(closes, [pd.DatetimeIndex(closes.index).year])
    deep, shallow = int(expected.idxmin()), int(expected.idxmax())
    result = execute(query, "CL", settings=cl_settings)
    fig = figure(result)
    np.testing.assert_allclose(bar_heights(fig.axes[0]), expected.to_numpy())
    low, high = f"{expected[deep]:.2f}%", f"{expected[shallow]:.2f}%"
    assert drawn_headline(fig) == (
        f"max_dd_pct: lowest {deep} {low}, highest {shallow} {high}".replace("-", "\u2212")
    )
    ru = drawn_headline(figure(result, "ru"))
    low, high = (v.replace(".", ",").replace("%", "\u00a0%") for v in (low, high))
    # At the model's digits the words may not fit the phone's width: then the marks.
    assert ru in (
        f"max_dd_pct: ниже всего {deep} {low}, выше всего {shallow} {high}".replace("-", "\u2212"),
        f"max_dd_pct: ▼ {deep} {low} · ▲ {shallow} {high}".replace("-", "\u2212"),
    )


def test_positive_and_mixed_columns_keep_highest_first(sample_settings, days) -> None:
    """The mean range (all above zero) and the mean close - open (either sign) by year:
    highest first, in its colour, as before."""
    whole = days[days.index.year < days.index.max().year]  # the open year is not compared
    years = pd.DatetimeIndex(whole.index).year
    for select, values in (
        ("mean(range) as r", (whole["high"] - whole["low"]).groupby(years).mean()),
        ("mean(close - open) as m", (whole["close"] - whole["open"]).groupby(years).mean()),
    ):
        name = select.split()[-1]
        assert (values > 0).all() or ((values < 0).any() and (values > 0).any())
        query = {"session": "RTH", "from": "daily", "group_by": "year()", "select": select}
        result = run(query, sample_settings)
        top, bottom = int(values.idxmax()), int(values.idxmin())
        fig = figure(result)
        head = drawn_headline(fig)
        assert re.match(rf"{name}: (?:highest|▲) {top} ", head), head
        assert re.search(rf"(?:lowest|▼) {bottom} ", head), head
        colors = faces(fig)
        assert colors[list(values.index).index(top)] == HIGH
        assert colors[list(values.index).index(bottom)] == LOW
        ru = drawn_headline(figure(result, "ru"))
        assert re.match(rf"{name}: (?:больше всего|▲) {top} ", ru), ru


def test_the_worst_losing_runs_are_lowest_and_named_by_their_first_day(
    sample_settings, es_days
) -> None:
    """q32: "total_pts: меньше всего 1674 −912,8 пункта": the worst run "the least", and
    named by the counter that told the runs apart, with no date on the chart."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "chg": "close - prev(close)",
            "down": "chg < 0",
            "run_id": "cumsum(if(down, 0, 1))",
        },
        "where": "down",
        "group_by": "run_id",
        "select": [
            "count() as days",
            "sum(chg) as total_pts",
            "first(date()) as start",
            "last(date()) as end",
        ],
        "sort": "total_pts asc",
        "limit": 5,
    }
    chg = es_days["close"].diff()
    down = chg < 0
    runs = (~down).cumsum()
    frame = pd.DataFrame({"chg": chg[down], "day": es_days.index[down]})
    worst = (
        frame.groupby(runs[down])
        .agg(total=("chg", "sum"), start=("day", "first"))
        .sort_values("total", kind="stable")
        .head(5)
    )
    starts = [pd.Timestamp(d).strftime("%Y-%m-%d") for d in worst["start"]]
    result = execute(query, "ES", settings=sample_settings)
    fig = figure(result)
    top = fig.axes[0]
    np.testing.assert_allclose(bar_heights(top), worst["total"].to_numpy())
    ticks = [t.get_text() for t in fig.axes[-1].get_xticklabels()]
    assert ticks == [f"{i + 1}. {d}" for i, d in enumerate(starts)]
    assert fig.axes[-1].get_xlabel() == "start"
    # A sum of changes, on ES's tick: written with its two decimals (−912.75, not −912.8).
    total = Decimal(str(worst["total"].iloc[0])).quantize(Decimal("0.01"), ROUND_HALF_UP)
    value = f"{total:,}".replace("-", "\u2212")
    assert drawn_headline(fig) == f"total_pts: lowest {starts[0]} {value} points"
    ru = drawn_headline(figure(result, "ru"))
    assert ru.startswith(f"total_pts: ниже всего {starts[0]} {value.replace('.', ',')} пункт")


def test_the_worst_days_listed_lowest_first_are_lowest_in_russian(sample_settings, days) -> None:
    """A short list of days sorted from the lowest change: in Russian "ниже всего", not
    "меньше всего" (the least) for the biggest loss."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"chg": "close - prev(close)"},
        "sort": "chg asc",
        "limit": 5,
        "select": ["chg"],
    }
    chg = days["close"].diff().dropna().sort_values(kind="stable")
    worst, day = float(chg.iloc[0]), pd.Timestamp(chg.index[0]).strftime("%Y-%m-%d")
    assert chg.iloc[4] < 0
    result = run(query, sample_settings)
    for language, words in (("en", "lowest"), ("ru", "ниже всего")):
        head = drawn_headline(figure(result, language))
        found = re.fullmatch(rf"chg: {words} {day} ([−\d\u00a0,.]+) (?:points|пункт\w*)", head)
        assert found is not None, head
        assert number(found[1], language) == pytest.approx(worst, abs=0.5)


# --- 2: a one-row card writes prices at the instrument's tick -----------------------------------


def card_texts(result: Result, language: str) -> list[str]:
    fig = figure(result, language)
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible()]


@pytest.mark.parametrize(
    ("symbol", "prices"),
    [("CL", "{:.2f}"), ("NQ", "{:,.2f}")],
)
def test_a_one_row_card_writes_prices_at_the_tick(
    cl_settings, days, cl_days, symbol, prices
) -> None:
    """q45/q46: CL's 57.19 / 57.74 / 55.26 read 57.2 / 57.7 / 55.3, NQ's 25,850.75 read
    25,851: prices the market never printed, beside the model's exact ones."""
    bars = cl_days if symbol == "CL" else days
    day = pd.Timestamp("2026-01-05")
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2026-01-05",
        "select": ["close", "high", "low"],
    }
    result = execute(query, symbol, settings=cl_settings)
    expected = [prices.format(bars.loc[day, c]) for c in ("close", "high", "low")]
    assert any(len(v.split(".")[1]) == 2 and not v.endswith("0") for v in expected)
    texts = card_texts(result, "en")
    for name, value in zip(("close", "high", "low"), expected, strict=True):
        assert texts.index(value) == texts.index(name) + 1  # each name, then its value
    ru = [v.replace(",", "\u00a0").replace(".", ",") for v in expected]
    texts = card_texts(result, "ru")
    assert all(v in texts for v in ru), (ru, texts)


def test_the_all_time_high_card_is_on_the_tick(sample_settings, days) -> None:
    """q20: «ath = 25 851» for 25 850.75."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"ath": "cummax(close)", "dd_pct": "(close / ath - 1) * 100"},
        "sort": "timestamp desc",
        "limit": 1,
        "select": ["close", "ath", "dd_pct"],
    }
    result = run(query, sample_settings)
    ath = f"{days['close'].max():,.2f}"
    assert "ath = " + ath in drawn_headline(figure(result))
    assert "ath = " + ath.replace(",", "\u00a0").replace(".", ",") in drawn_headline(
        figure(result, "ru")
    )


# --- 3: the open year's note says "not ranked" in Russian too, inside the figure -----------------


def test_the_open_years_note_says_it_is_not_ranked_in_both_languages(sample_settings, days) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"dd_pct": "(close / cummax(close, 'year') - 1) * 100"},
        "group_by": "year()",
        "select": "min(dd_pct) as max_dd",
    }
    last = int(days.index.max().year)  # the data ends in its first days
    assert (days.index.year == last).sum() < 10
    result = run(query, sample_settings)
    for language, words in (("en", "not ranked"), ("ru", "не в рейтинге")):
        fig = figure(result, language)
        (ax,) = fig.axes
        (note,) = [t for t in ax.texts if t.get_text().startswith(f"{last}: ")]
        assert words in note.get_text().replace("\n", " ")
        box = note.get_window_extent()
        assert box.x0 >= 0 and box.x1 <= fig.get_figwidth() * fig.dpi
