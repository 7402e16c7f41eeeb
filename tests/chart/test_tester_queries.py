"""Charts of queries that testers, playing the model, found drawn or headlined wrong, run by
the engine on the sample. Expected numbers come from DuckDB (or pandas) over the same Parquet
bars, never from the engine."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from engine_results import RTH, as_read, bar_heights, bar_widths, figure, run, title
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.text import Text

import barb
from barb.charts import chart_headline, draw_chart

pytestmark = pytest.mark.slow

# The FOMC decision days as published (a file of the package, not computed by the engine).
FOMC_DAYS = Path(barb.__file__).parent / "events" / "data" / "fomc.csv"


def day_text(day: pd.Timestamp) -> str:
    return pd.Timestamp(day).strftime("%Y-%m-%d")


# --- C1: "last" is the latest row in time, whatever the table's order ---------------------


def test_the_last_close_of_a_table_sorted_newest_first_is_the_newest(sample_settings, days):
    query = {
        "session": "RTH",
        "from": "daily",
        "sort": "timestamp desc",
        "limit": 3,
        "select": ["timestamp", "close"],
    }
    result = run(query, sample_settings)
    newest = days.index.max()
    expected = f"close last: {days['close'].iloc[-1]:,.2f} ({day_text(newest)})"  # NQ's tick
    assert title(figure(result)) == expected
    ru = chart_headline(result, "ru")
    assert ru is not None and ru.endswith(f"({day_text(newest)})")


@pytest.mark.parametrize("limit", [1, 3])
def test_the_last_golden_cross_names_the_latest_cross(sample_settings, days, limit) -> None:
    """ "When was the last golden cross": crosses sorted newest first, one or a few."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "sma50": "rolling_mean(close, 50)",
            "sma200": "rolling_mean(close, 200)",
            "golden": "sma50 > sma200 and prev(sma50) <= prev(sma200)",
        },
        "where": "golden",
        "sort": "timestamp desc",
        "limit": limit,
        "select": ["timestamp", "close", "sma50", "sma200"],
    }
    result = run(query, sample_settings)
    fast, slow = days["close"].rolling(50).mean(), days["close"].rolling(200).mean()
    crosses = days.index[(fast > slow) & (fast.shift() <= slow.shift())]
    assert len(crosses) > limit
    last = crosses.max()
    on_tick = f"{days.loc[last, 'close']:,.2f}"  # a price at NQ's tick (20,020.50)
    if limit == 1:  # the row's values
        assert chart_headline(result).startswith(f"close = {on_tick} · sma50 = ")
        assert chart_headline(result).endswith(f" ({day_text(last)})")
    else:
        assert chart_headline(result) == f"close last: {on_tick} ({day_text(last)})"


def test_the_latest_of_filtered_rows_is_the_last_match_not_now(sample_settings, days) -> None:
    """The last golden cross, all its columns: its sma50 is the last cross's, not "now", and
    the sparse crosses' dates on the axis do not run into each other."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "sma50": "rolling_mean(close, 50)",
            "sma200": "rolling_mean(close, 200)",
            "golden": "sma50 > sma200 and prev(sma50) <= prev(sma200)",
        },
        "where": "golden",
        "sort": "timestamp desc",
        "limit": 1,
    }
    result = run(query, sample_settings)
    fast, slow = days["close"].rolling(50).mean(), days["close"].rolling(200).mean()
    last = days.index[(fast > slow) & (fast.shift() <= slow.shift())].max()
    # A mean of prices, at NQ's tick's two decimals, a half away from zero.
    value = f"{Decimal(str(fast[last])).quantize(Decimal('0.01'), ROUND_HALF_UP):,}"
    assert chart_headline(result) == f"sma50 last: {value} ({day_text(last)})"
    assert chart_headline(result, "ru").startswith("sma50: последнее ")
    fig = figure(result)
    marked = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert f"last: {value} ({day_text(last)})" in marked
    assert not [t for t in marked if t.startswith("now")]
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    bottom = min(fig.axes, key=lambda ax: ax.get_position().y0)
    ticks = [t.get_window_extent(renderer) for t in bottom.get_xticklabels() if t.get_text()]
    assert len(ticks) >= 2
    assert not [(a, b) for i, a in enumerate(ticks) for b in ticks[i + 1 :] if a.overlaps(b)]


# --- C3: a grouped headline is about the value asked for, not the row counts ---------------


def test_an_event_comparison_headlines_the_mean_not_the_count(sample_settings, days) -> None:
    """Mean range on FOMC days and others, with the count of each: the count came first in
    the select and took the headline ("count: highest no fomc 4,502 days")."""
    query = {
        "session": "RTH",
        "from": "daily",
        "join": "fomc",
        "group_by": "fomc",
        "select": ["count()", "mean(range)"],
    }
    result = run(query, sample_settings)
    fomc = pd.read_csv(FOMC_DAYS, comment="#", parse_dates=["date"])["date"]
    # A decision on a day without a session (a Sunday in March 2020) is the next day's news.
    after = days.index.searchsorted(fomc[fomc <= days.index.max()])
    on_fomc = np.isin(np.arange(len(days)), after)
    ranges = days["high"] - days["low"]
    means = {"fomc: yes": ranges[on_fomc].mean(), "fomc: no": ranges[~on_fomc].mean()}
    assert on_fomc.sum() > 100
    # Two groups by a yes/no key are compared, FOMC days first (p47d D7).
    expected = (
        f"average range: fomc days {ranges[on_fomc].mean():,.2f} vs other days "
        f"{ranges[~on_fomc].mean():,.2f} points"
    )
    assert (chart_headline(result) or "").startswith(expected)
    fig = figure(result)
    top = max(fig.axes, key=lambda ax: ax.get_position().y1)
    np.testing.assert_allclose(
        bar_heights(top), [means["fomc: no"], means["fomc: yes"]], rtol=1e-9
    )  # the mean's panel on top, right under the headline


# --- C-units: the unit is worked out from the expression, not guessed from the name -------


def figure_texts(fig: Figure) -> str:
    return " | ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())


def test_a_percent_followed_through_map_references_is_a_percent(sample_settings, days) -> None:
    """``next_chg`` is ``next(chg_pct)``, and chg_pct is a change times 100: a percent (it
    was written "0.068 points", from "chg" in the name)."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "chg_pct": "(close - prev(close)) / prev(close) * 100",
            "next_chg": "next(chg_pct)",
        },
        "select": "mean(next_chg) as avg_next_chg",
    }
    result = run(query, sample_settings)
    expected = (days["close"].pct_change() * 100).shift(-1).mean()
    assert abs(expected) < 0.1  # below 1, three significant digits (0.0676%)
    assert chart_headline(result) == f"avg_next_chg = {as_read(expected)}%"
    fig = figure(result)
    assert "points" not in figure_texts(fig)
    assert fig.axes[0].get_xlabel() == "next_chg (%)"


def test_a_volatility_named_vol_is_a_percent_not_contracts(sample_settings, days) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"ret": "(close - prev(close)) / prev(close)"},
        "select": ["std(ret) * sqrt(252) * 100 as nq_vol"],
    }
    result = run(query, sample_settings)
    expected = days["close"].pct_change().std() * np.sqrt(252) * 100
    assert chart_headline(result) == f"nq_vol = {as_read(expected)}%"
    assert chart_headline(result, "ru") == f"nq_vol = {as_read(expected)}\u00a0%".replace(".", ",")
    # Days per year would not prove a volatility (they read as its contracts): no chart.
    assert draw_chart(result) is None


def test_the_mean_of_a_condition_is_a_share_written_as_a_percent(sample_settings, days) -> None:
    """0.445 of the days is 44.5% of them, not "0.445%"."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "chg_pct": "(close - prev(close)) / prev(close) * 100",
            "cond": "abs(chg_pct) > 1",
        },
        "select": "mean(cond) as share_over_1pct",
    }
    result = run(query, sample_settings)
    change = (days["close"].pct_change() * 100).dropna()  # the first day has no change
    share = (change.abs() > 1).mean()
    assert 0.2 < share < 0.8
    assert chart_headline(result) == f"share_over_1pct = {as_read(share, share=True)}%"


def test_a_share_of_days_by_weekday_is_no_price(sample_settings, days) -> None:
    """``p_close_above_open`` ends in "_open" but is a share of days: bars in percent, their
    axis and labels too (it read "(price)")."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"wd": "dayname()"},
        "group_by": "wd",
        "select": "mean(close > open) as p_close_above_open",
    }
    result = run(query, sample_settings)
    up = (days["close"] > days["open"]).groupby(days.index.dayofweek).mean()
    fig = figure(result)
    (ax,) = fig.axes
    np.testing.assert_allclose(bar_heights(ax), up.to_numpy(), rtol=1e-9)
    texts = figure_texts(fig)
    assert "price" not in texts
    assert "p_close_above_open (%)" in texts
    assert f"{up.max() * 100:.1f}%" in chart_headline(result)  # as its bar (p47d D8)
    ticks = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert ticks and all(t.endswith("%") for t in ticks), ticks
    assert "50%" in ticks  # ticks in percent, as the labels: not 0.5
    ru_ticks = [t.get_text() for t in figure(result, "ru").axes[0].get_yticklabels()]
    assert "50\u00a0%" in ru_ticks  # Russian puts a no-break space before the sign


# --- C5: one row reads as its values; whole numbers never tick in fractions ---------------

ATH_MAP = {"ath": "cummax(close)", "since": "bars_since(close >= ath)"}


def days_since_high(closes: pd.Series) -> pd.Series:
    """Days since the close last stood at its all-time high (0 on such a day)."""
    at_high = closes >= closes.cummax()
    last_high = pd.Series(np.where(at_high, np.arange(len(closes)), np.nan)).ffill()
    return pd.Series(np.arange(len(closes)) - last_high.to_numpy(), index=closes.index)


def test_one_row_is_a_card_of_its_values(sample_settings, days) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": ATH_MAP,
        "sort": "timestamp desc",
        "limit": 1,
        "select": ["timestamp", "close", "ath", "since"],
    }
    result = run(query, sample_settings)
    close, ath = days["close"].iloc[-1], days["close"].max()
    since = int(days_since_high(days["close"]).iloc[-1])
    newest = day_text(days.index.max())
    values = [f"{close:,.2f}", f"{ath:,.2f}", f"{since} days"]  # prices at NQ's tick
    assert chart_headline(result) == (
        f"close = {values[0]} · ath = {values[1]} · since = {values[2]} ({newest})"
    )
    fig = figure(result)
    (ax,) = fig.axes
    assert not ax.axison  # no empty price panel, no axis of one bar
    written = [t.get_text() for t in ax.texts]
    for name, value in zip(("close", "ath", "since"), values, strict=True):
        assert written.index(value) == written.index(name) + 1  # each name, then its value
    assert f"Wed {newest}" in written


def test_whole_numbers_tick_in_whole_numbers(sample_settings, days) -> None:
    """Days since the high over a month are 0 or 1: the panel ticks 0 and 1, not 0.2 …"""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025-12",
        "map": ATH_MAP,
        "select": ["timestamp", "close", "since"],
    }
    result = run(query, sample_settings)
    closes = days["close"]
    # A running high counts from the period's first bar, as the engine's cummax does.
    december = days_since_high(closes[(closes.index >= "2025-12-01") & (closes.index < "2026")])
    assert np.array_equal(result.table["since"].to_numpy(), december.to_numpy())
    assert december.max() <= 3  # few values: where fractional ticks came in
    fig = figure(result)
    lower = min(fig.axes, key=lambda ax: ax.get_position().y0)
    ticks = [t.get_text() for t in lower.get_yticklabels() if t.get_text()]
    assert ticks and all(t.isdigit() for t in ticks), ticks
    assert int(ticks[-1]) >= december.max()


# --- C6: labels of falling bars never cover the axis's labels -----------------------------

MONTHLY_RET = {"ret": "(close - prev(close)) / prev(close) * 100"}


def monthly_returns(days: pd.DataFrame) -> pd.Series:
    """Each month's change of the last close, in percent, indexed by the month."""
    closes = days["close"].groupby(days.index.to_period("M")).last()
    return closes.pct_change() * 100


def label_boxes(fig: Figure) -> tuple[list, list]:
    """The value labels' boxes and the axis labels' boxes (ticks and axis names), drawn."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    values, axis = [], []
    for ax in fig.axes:
        # A value has digits; the axis's name above it ("mean_ret (%)") has none.
        numbers = [t for t in ax.texts if any(c.isdigit() for c in t.get_text())]
        values += [t.get_window_extent(renderer) for t in numbers]
        ticks = ax.get_xticklabels() + ax.get_yticklabels()
        axis += [t.get_window_extent(renderer) for t in ticks if t.get_text()]
        axis += [ax.spines[side].get_window_extent(renderer) for side in ("left", "bottom")]
    return values, axis


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize(
    "shape",
    [
        {"period": "2025", "map": {**MONTHLY_RET, "m": "month()"}, "group_by": "m"},
        {"sort": "ret asc", "limit": 6},  # the worst months, as horizontal bars
    ],
)
def test_labels_of_falling_bars_clear_the_axis(sample_settings, days, shape, language) -> None:
    query = {"session": "RTH", "from": "monthly", "map": MONTHLY_RET, "select": "ret", **shape}
    if "group_by" in shape:
        query["select"] = "mean(ret)"
    result = run(query, sample_settings)
    returns = monthly_returns(days)
    if "group_by" in shape:
        expected = returns[returns.index.year == 2025].to_numpy()
    else:
        expected = returns.nsmallest(6).to_numpy()
    assert (expected < -5).any()  # labels that hang under a bar, long ones
    fig = figure(result, language)
    (ax,) = fig.axes
    horizontal = "group_by" not in shape
    drawn = bar_widths(ax) if horizontal else bar_heights(ax)
    np.testing.assert_allclose(drawn, expected, rtol=1e-9)
    values, axis = label_boxes(fig)
    assert len(values) == len(expected)
    overlaps = [(v, a) for v in values for a in axis if v.overlaps(a)]
    assert not overlaps


def test_a_selected_monthly_column_headlines_its_best_and_worst_month(
    sample_settings, days
) -> None:
    """``"select": "ret"`` on monthly bars keeps only the month's label: it headlined
    "12 rows", then "ret last: 17.2% (2025-12)", December's as if it were the answer (p40e
    Q15: "ret last: 11.3%" over 216 months whose best was 2020-10's 23.95%)."""
    query = {
        "session": "RTH",
        "from": "monthly",
        "period": "2025",
        "map": MONTHLY_RET,
        "select": "ret",
    }
    result = run(query, sample_settings)
    returns = monthly_returns(days)
    year = returns[returns.index.year == 2025]
    best, worst = year.idxmax(), year.idxmin()
    assert best != year.index[-1] or worst != year.index[-1]

    def pct(value: float) -> str:
        return f"{value:.2f}%".replace("-", "\N{MINUS SIGN}")  # as the bars (p47d D8)

    assert chart_headline(result) == (
        f"ret: highest {best} {pct(year.max())}, lowest {worst} {pct(year.min())}"
    )


# --- C4: columns that share a unit are drawn together ---------------------------------------


# NQ's and ES's daily returns of December 2025, side by side.
NQ_ES_RETURNS = {
    "session": "RTH",
    "from": "daily",
    "period": "2025-12",
    "join": {"instrument": "ES"},
    "map": {
        "nq_ret": "(close - prev(close)) / prev(close) * 100",
        "es_ret": "(es_close - prev(es_close)) / prev(es_close) * 100",
    },
}


def _es_closes(con) -> pd.Series:
    """ES's RTH close of each trading date, from DuckDB."""
    es = con.execute(
        f"SELECT trading_date AS d, arg_max(close, timestamp) AS c FROM es WHERE {RTH} "
        "GROUP BY 1 ORDER BY 1"
    ).df()
    return es.set_index("d")["c"]


def test_nq_and_es_returns_share_one_panel(sample_settings, con, days) -> None:
    query = {**NQ_ES_RETURNS, "select": ["timestamp", "nq_ret", "es_ret"]}
    result = run(query, sample_settings)
    returns = pd.DataFrame(
        {
            "nq_ret": days["close"].pct_change() * 100,
            "es_ret": _es_closes(con).pct_change() * 100,
        }
    )
    december = returns[(returns.index >= "2025-12-01") & (returns.index < "2026-01-01")]
    fig = figure(result)
    (ax,) = fig.axes
    bars = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bars) == 2  # one set of bars per column, side by side
    for drawn, column in zip(bars, ("nq_ret", "es_ret"), strict=True):
        heights = [p.vertices[2, 1] - p.vertices[0, 1] for p in drawn.get_paths()]
        np.testing.assert_allclose(heights, december[column].to_numpy(), rtol=1e-9)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["nq_ret", "es_ret"]
    assert "nq_ret · es_ret (%)" in figure_texts(fig)


def test_the_relative_strength_of_nq_over_es_is_drawn_beside_the_returns(
    sample_settings, con, days
) -> None:
    """The relative strength "rel": "nq_ret - es_ret" is in percentage points, the returns
    in percent: the chart drew the returns and left rel, the value asked for, to "+ 1 more
    value in the CSV" (p37a #16). A difference of percents shares their axis."""
    query = {
        **NQ_ES_RETURNS,
        "map": {**NQ_ES_RETURNS["map"], "rel": "nq_ret - es_ret"},
        "select": ["timestamp", "nq_ret", "es_ret", "rel"],
    }
    result = run(query, sample_settings)
    rel = days["close"].pct_change() * 100 - _es_closes(con).pct_change() * 100
    december = rel[(rel.index >= "2025-12-01") & (rel.index < "2026-01-01")]
    fig = figure(result)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["nq_ret", "es_ret", "rel"]
    bars = [c for c in ax.collections if isinstance(c, PolyCollection)]
    heights = [p.vertices[2, 1] - p.vertices[0, 1] for p in bars[2].get_paths()]
    np.testing.assert_allclose(heights, december.to_numpy(), rtol=1e-9)
    assert not any("more value" in text for text in figure_texts(fig))


def test_a_golden_cross_list_draws_close_and_averages_on_one_price_axis(
    sample_settings, days
) -> None:
    """The last three crosses with close, sma50 and sma200: all three on the price axis (it
    drew sma50 alone as bars from zero)."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "sma50": "rolling_mean(close, 50)",
            "sma200": "rolling_mean(close, 200)",
            "golden": "sma50 > sma200 and prev(sma50) <= prev(sma200)",
        },
        "where": "golden",
        "sort": "timestamp desc",
        "limit": 3,
        "select": ["timestamp", "close", "sma50", "sma200"],
    }
    result = run(query, sample_settings)
    fast, slow = days["close"].rolling(50).mean(), days["close"].rolling(200).mean()
    crosses = days.index[(fast > slow) & (fast.shift() <= slow.shift())].sort_values()[-3:]
    fig = figure(result)
    (ax,) = fig.axes
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]  # no bars
    lines = {line.get_label(): np.asarray(line.get_ydata(), float) for line in ax.get_lines()}
    np.testing.assert_allclose(lines["sma50"], fast[crosses].to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(lines["sma200"], slow[crosses].to_numpy(), rtol=1e-9)
    low, high = ax.get_ylim()
    levels = np.concatenate([days["close"][crosses], fast[crosses], slow[crosses]])
    assert low < levels.min() and levels.max() < high  # every line in view
