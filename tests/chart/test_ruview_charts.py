"""Charts a reviewer opened in English and Russian and found wrong (ruview): a clock behind an
if(), highest/lowest over groups that are not there, cut headlines, the beta's scatter,
plurals and roundings. Expected numbers come from DuckDB or pandas over the same Parquet
bars, never the engine."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pandas as pd
import pytest
from duckdb_answers import rth_closes
from engine_results import RTH, bar_heights, figure, run
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.colors import to_hex
from matplotlib.text import Text

from barb.charts import chart_headline
from barb.export import csv_bytes

pytestmark = pytest.mark.slow


def clock(minutes: float) -> str:
    whole = round(minutes) % 1440
    return f"{whole // 60:02d}:{whole % 60:02d}"


def csv_rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))


# --- 1: a clock behind a marker for "no time" reads on the clock, and so does the CSV ----------

GUARDED = {
    "session": "RTH",
    "from": "1m",
    "period": "2024-01",
    "map": {"onh": "session_high('OVERNIGHT')", "tm": "if(high > onh, hour() * 60 + minute(), -1)"},
    "where": "tm >= 0",
    "group_by": "date()",
    "select": "min(tm) as first_break",
    "then": {
        "select": [
            "count() as days",
            "median(first_break) as med",
            "percentile(first_break, 25) as p25",
            "percentile(first_break, 75) as p75",
        ]
    },
}


@pytest.fixture(scope="module")
def first_breaks(con) -> list[int]:
    """Each January 2024 day's first RTH minute above that day's overnight high."""
    frame = con.execute(
        f"""
        WITH onh AS (
            SELECT trading_date, max(high) AS onh FROM nq
            WHERE (minute >= 1080 OR minute < 570)
              AND trading_date >= DATE '2024-01-01' AND trading_date < DATE '2024-02-01'
            GROUP BY 1)
        SELECT b.trading_date, min(b.minute) AS first_break
        FROM nq b JOIN onh USING (trading_date)
        WHERE {RTH} AND b.high > onh.onh
        GROUP BY 1 ORDER BY 1
        """
    ).df()
    return frame["first_break"].astype(int).tolist()


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_clock_behind_a_no_time_marker_reads_on_the_clock(
    sample_settings, first_breaks, language
) -> None:
    """``if(high > onh, hour() * 60 + minute(), -1)`` read "med = 593 · p25 = 573"."""
    result = run(GUARDED, sample_settings)
    values = np.array(first_breaks, dtype="float64")
    head = chart_headline(result, language) or ""
    assert f"med = {clock(float(np.median(values)))}" in head, head
    assert f"p25 = {clock(float(np.percentile(values, 25)))}" in head, head
    fig = figure(result, language)
    (ax,) = fig.axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    mean_word = "среднее" if language == "ru" else "mean"
    assert f"p75 = {clock(float(np.percentile(values, 75)))}" in legend, legend
    assert f"{mean_word} = {clock(float(values.mean()))}" in legend, legend
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and all(len(t) == 5 and t[2] == ":" for t in ticks), ticks


def test_the_csv_writes_minutes_of_the_day_on_the_clock(sample_settings, first_breaks) -> None:
    rows = csv_rows(csv_bytes(run(GUARDED, sample_settings)))
    assert [r["first_break"] for r in rows] == [clock(m) for m in first_breaks]


def test_a_no_time_marker_left_in_the_values_is_not_a_time(sample_settings) -> None:
    """Without the where, the days with no break keep −1: not 23:59."""
    query = {k: v for k, v in GUARDED.items() if k not in ("where", "then")}
    query["select"] = "max(tm) as last_break"
    query["map"] = {**GUARDED["map"], "tm": "if(high > onh + 1000000, hour() * 60 + minute(), -1)"}
    result = run(query, sample_settings)
    assert (result.table["last_break"] == -1).all()
    rows = csv_rows(csv_bytes(result))
    assert {r["last_break"] for r in rows} == {"-1"}
    assert "23:59" not in (chart_headline(result, "en") or "")


# --- 2: highest and lowest among the whole groups the result holds, ties named -----------------


def test_the_open_last_year_is_hollow_and_not_the_highest(sample_settings, days) -> None:
    """r01: "max_dd: highest 2026 −1.0%" named a year of 4 days."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"dd_pct": "(close / cummax(close, 'year') - 1) * 100"},
        "group_by": "year()",
        "select": "min(dd_pct) as max_dd",
    }
    result = run(query, sample_settings)
    close = days["close"]
    years = pd.DatetimeIndex(close.index).year
    peak = close.groupby(years).cummax()
    expected = ((close / peak - 1) * 100).groupby(years).min()
    last = int(expected.index[-1])
    whole = expected.drop(last)
    head = chart_headline(result, "en") or ""
    # A drawdown's lowest, the deepest, first.
    match = re.fullmatch(r"max_dd: lowest (\d{4}) \S+%, highest (\d{4}) \S+%", head)
    assert match is not None, head
    assert int(match[1]) == whole.idxmin() and int(match[2]) == whole.idxmax()
    assert expected.idxmax() == last  # the open year would have been the highest
    fig = figure(result, "ru")
    (ax,) = fig.axes
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    faces = [to_hex(f) for f in bars.get_facecolors()]
    assert faces[-1] == "#ffffff" and faces.count("#ffffff") == 1
    assert any(t.get_text().startswith(f"{last}: ") for t in ax.texts)


def test_ties_are_named_and_added_empty_groups_are_not_the_lowest(sample_settings, days) -> None:
    """h01: "lowest bucket -10 (0 days)" was a bucket the chart added; g09's lowest named one
    of five years at 0."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2020:2025",
        "map": {"ret": "(close - prev(close)) / prev(close) * 100", "bucket": "round(ret)"},
        "group_by": "bucket",
        "select": "count() as days",
    }
    result = run(query, sample_settings)
    ret = days["close"].pct_change() * 100
    ret = ret[(ret.index >= pd.Timestamp("2020-01-01")) & (ret.index < pd.Timestamp("2026-01-01"))]
    bucket = np.sign(ret) * np.floor(ret.abs() + 0.5)
    counts = bucket.groupby(bucket).size()
    lowest = counts[counts == counts.min()]
    assert len(lowest) > 1  # a tie, and buckets between with no day at all
    head = chart_headline(result, "en") or ""
    day_word = "day" if counts.min() == 1 else "days"
    if len(lowest) <= 3:
        names = ", ".join(f"{int(k)}" for k in lowest.index)
        assert head.endswith(f"least often {counts.min()} {day_word} (tie: {names})"), head
    else:
        assert head.endswith(f"{counts.min()} {day_word} ({len(lowest)} buckets tied)"), head


# --- 3: a grouped headline fits its two bold lines with both numbers --------------------------

_SHOWN_NUMBER = {
    "en": re.compile(r"−?\d[\d,]*(?:\.\d+)?"),
    "ru": re.compile(r"−?\d[\d\u00a0]*(?:,\d+)?"),
}


def shown_numbers(text: str, language: str) -> list[tuple[float, int]]:
    """The numbers written in ``text``, each with the decimals it is written to."""
    out = []
    for found in _SHOWN_NUMBER[language].findall(text):
        plain = found.replace("−", "-").replace("\u00a0", "")
        plain = plain.replace(",", "") if language == "en" else plain.replace(",", ".")
        out.append((float(plain), len(plain.split(".")[1]) if "." in plain else 0))
    return out


def shows(value: float, text: str, language: str) -> bool:
    return any(abs(n - value) <= 0.5 * 10**-d + 1e-9 for n, d in shown_numbers(text, language))


def drawn_headline(fig) -> tuple[str, int]:
    """The headline as drawn (its bold lines joined) and how many lines it took."""
    from barb.charts.style import TITLE_PT

    lines = [t.get_text() for t in fig.texts if t.get_fontsize() == TITLE_PT and t.get_text()]
    return " ".join(lines), len(lines)


def _weekday_ranges(days: pd.DataFrame) -> pd.Series:
    return (days["high"] - days["low"]).groupby(pd.DatetimeIndex(days.index).dayofweek).mean()


def _year_ranges(days: pd.DataFrame) -> pd.Series:
    whole = days[pd.DatetimeIndex(days.index).year < days.index.max().year]
    return (whole["high"] - whole["low"]).groupby(pd.DatetimeIndex(whole.index).year).mean()


def _up_close_ranges(days: pd.DataFrame) -> pd.Series:
    return (days["high"] - days["low"]).groupby(days["close"] > days["open"]).mean()


def _hour_volumes(con) -> pd.Series:
    """ETH hourly bars by clock hour: each bar's volume, averaged per hour of the day."""
    frame = con.execute(
        """
        SELECT hour(timestamp) AS h, avg(v) AS v FROM (
            SELECT trading_date, hour(timestamp) AS hh, min(timestamp) AS timestamp,
                   sum(volume) AS v
            FROM nq GROUP BY 1, 2)
        GROUP BY 1 ORDER BY 1
        """
    ).df()
    return frame.set_index("h")["v"]


GROUPED_HEADLINES = {
    "weekday": (
        {"map": {"weekday": "dayname()"}, "group_by": "weekday", "select": "mean(range)"},
        _weekday_ranges,
    ),
    "yes/no": (
        {
            "map": {"closed_above_open": "close > open"},
            "group_by": "closed_above_open",
            "select": ["count()", "mean(range) as mean_day_range", "mean(volume)"],
        },
        _up_close_ranges,
    ),
    "year": (
        {"group_by": "year()", "select": ["mean(range) as mean_day_range", "count()"]},
        _year_ranges,
    ),
}


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("kind", [*GROUPED_HEADLINES, "hour"])
def test_a_grouped_headline_shows_the_highest_and_the_lowest_whole(
    sample_settings, days, con, kind, language
) -> None:
    """g06 "mean_range: максимум не quad_witching 35,7 пункта…" lost the lowest, the number
    being compared; the drawn headline takes a shorter form instead."""
    if kind == "hour":
        query = {"session": "ETH", "from": "1h", "group_by": "hour()", "select": "mean(volume)"}
        expected = _hour_volumes(con)
    else:
        shape, compute = GROUPED_HEADLINES[kind]
        query = {"session": "RTH", "from": "daily", **shape}
        expected = compute(days)
    fig = figure(run(query, sample_settings), language)
    text, lines = drawn_headline(fig)
    # Up to three lines: a form that names the column is taken in three before a nameless
    # one in two (ETH's hours by volume: "average volume: highest 15:00 …").
    assert "…" not in text and lines <= 3, text
    assert shows(expected.max(), text, language), (text, expected.max())
    assert shows(expected.min(), text, language), (text, expected.min())


# --- 5: a beta's scatter has the market on x, so its fit line is the beta ---------------------


@pytest.mark.parametrize(
    "select",
    [
        ["beta(nq_ret, es_ret) as beta", "correlation(nq_ret, es_ret) as corr"],
        ["correlation(nq_ret, es_ret) as corr", "beta(nq_ret, es_ret) as beta"],
        ["beta(nq_ret, es_ret) as beta"],
    ],
)
def test_a_beta_scatter_puts_the_market_on_x(sample_settings, con, select) -> None:
    """j01: "beta = 1,31" over a line of ES on NQ, whose slope was 0.64."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2023:2024",
        "join": {"instrument": "ES"},
        "map": {"nq_ret": "close / prev(close) - 1", "es_ret": "es_close / prev(es_close) - 1"},
        "select": select,
    }
    both = pd.DataFrame({name: rth_closes(con, name) for name in ("nq", "es")}).dropna()
    rets = (both / both.shift() - 1).loc["2023-01-01":"2024-12-31"].dropna()
    beta = np.polyfit(rets["es"], rets["nq"], 1)[0]
    assert beta > 1.1  # far from its inverse's slope, so the orientation shows

    fig = figure(run(query, sample_settings), "ru")
    (ax,) = fig.axes
    (line,) = [ln for ln in ax.lines if len(ln.get_xdata()) == 2]
    xs, ys = (np.asarray(v, dtype="float64") for v in line.get_data())
    assert (ys[1] - ys[0]) / (xs[1] - xs[0]) == pytest.approx(beta, rel=1e-6)
    (points,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    np.testing.assert_allclose(np.sort(points.get_offsets()[:, 0]), np.sort(rets["es"]), rtol=1e-9)
    assert ax.get_xlabel().startswith("es_ret")


# --- 14: a Russian plural agrees with the number as shown ------------------------------------


def russian_form(shown: str) -> str:
    """CLDR's Russian rule, written out: a fraction takes "other", whole numbers by their
    last digits."""
    if "," in shown:
        return "контракта"
    n = int(shown.replace("\u00a0", ""))
    if n % 10 == 1 and n % 100 != 11:
        return "контракт"
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return "контракта"
    return "контрактов"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (4809.9, "4\u00a0810 контрактов"),
        (2408.99, "2\u00a0409 контрактов"),
        (58400.72, "58\u00a0401 контракт"),
        (168.2, "168,2 контракта"),
    ],
)
def test_a_plural_is_chosen_from_the_rounded_number(value, expected) -> None:
    from barb.charts.value_text import format_value, with_unit
    from barb.charts.words import words_for

    words = words_for("ru")
    assert (
        with_unit(format_value(value, "contracts", words=words), "contracts", words, value)
        == expected
    )


def test_every_volume_in_a_russian_headline_agrees_with_its_word(sample_settings, con) -> None:
    """g02: "58 401 контракта" and "4 810 контракта" took the word of 58 400,72 and 4 809,9."""
    query = {"session": "ETH", "from": "1h", "group_by": "hour()", "select": "mean(volume)"}
    expected = _hour_volumes(con)
    head = chart_headline(run(query, sample_settings), "ru") or ""
    found = re.findall(r"(\d[\d\u00a0]*(?:,\d+)?) (контракт\w*)", head)
    assert len(found) == 2, head
    assert [float(n.replace("\u00a0", "").replace(",", ".")) for n, _ in found] == [
        round(expected.max()),  # whole contracts, as the bars write them (p47d D8)
        round(expected.min()),
    ]
    assert [word for _, word in found] == [russian_form(n) for n, _ in found]


# --- 16: a half rounds away from zero, whatever the digit before it ---------------------------


@pytest.mark.parametrize(
    ("value", "en", "ru"),
    [
        (-293.25, "−293.3", "−293,3"),
        (293.25, "293.3", "293,3"),
        (390.25, "390.3", "390,3"),
        (-390.25, "−390.3", "−390,3"),
        (535.75, "535.8", "535,8"),
        (-535.75, "−535.8", "−535,8"),
        (0.125, "0.13", "0,13"),
        (-0.125, "−0.13", "−0,13"),
    ],
)
def test_quarter_points_round_half_away_from_zero(value, en, ru) -> None:
    """r04 "−293,2" for −293.25 and h02 "390,2" for 390.25, beside j07's "535,8" for 535.75:
    half to even."""
    from barb.charts.value_text import format_value
    from barb.charts.words import words_for

    decimals = 2 if abs(value) < 1 else 1
    assert format_value(value, decimals=decimals, words=words_for("en")) == en
    assert format_value(value, decimals=decimals, words=words_for("ru")) == ru
    assert format_value(value, "%", decimals=decimals, words=words_for("en")) == en + "%"


# --- 19: a difference of two percents is in percentage points ---------------------------------


def test_a_difference_of_two_percents_is_in_percentage_points(sample_settings, con) -> None:
    """j08: NQ's mean range % minus ES's was "diff (%)", "highest 2022 1.00%"."""
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2020:2025",
        "join": {"instrument": "ES"},
        "map": {"nq_r": "range / open * 100", "es_r": "(es_high - es_low) / es_open * 100"},
        "group_by": "year()",
        "select": ["mean(nq_r) as nq", "mean(es_r) as es"],
        "then": {"map": {"diff": "nq - es"}},
    }
    means = {}
    for name in ("nq", "es"):
        frame = con.execute(
            f"SELECT trading_date AS d, arg_min(open, timestamp) AS open, max(high) AS high, "
            f"min(low) AS low FROM {name} WHERE {RTH} "
            f"AND trading_date BETWEEN DATE '2020-01-01' AND DATE '2025-12-31' GROUP BY 1"
        ).df()
        pct = (frame["high"] - frame["low"]) / frame["open"] * 100
        means[name] = pct.groupby(pd.DatetimeIndex(frame["d"]).year).mean()
    diff = (means["nq"] - means["es"]).sort_index()
    result = run(query, sample_settings)
    for language, pp in (("en", "pp"), ("ru", "п.п.")):
        fig = figure(result, language)
        texts = [t.get_text() for t in fig.findobj(Text)]
        assert f"diff ({pp})" in texts, texts
        ax = next(a for a in fig.axes if any(t.get_text() == f"diff ({pp})" for t in a.texts))
        np.testing.assert_allclose(bar_heights(ax), diff.to_numpy(), rtol=1e-9)
        head = chart_headline(result, language) or ""
        assert head.startswith("diff: ") and head.count(f" {pp}") == 2 and "%" not in head, head


# --- 9: a best month per year names its month --------------------------------------------------


@pytest.mark.parametrize(
    ("language", "months"),
    [
        ("en", "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec"),
        ("ru", "янв фев мар апр май июн июл авг сен окт ноя дек"),
    ],
)
def test_the_best_month_of_each_year_names_its_month(
    sample_settings, days, language, months
) -> None:
    """t06: "best: highest 2020 25.9%" with best_month nowhere on the chart."""
    query = {
        "session": "RTH",
        "from": "monthly",
        "period": "2010:2024",
        "map": {"ret_pct": "(close - prev(close)) / prev(close) * 100"},
        "group_by": "year()",
        "select": ["arg_max(month(), ret_pct) as best_month", "max(ret_pct) as best"],
    }
    dates = pd.DatetimeIndex(days.index)
    closes = days["close"].groupby([dates.year, dates.month]).last()
    ret = (closes / closes.shift() - 1) * 100
    ret = ret[(ret.index.get_level_values(0) >= 2010) & (ret.index.get_level_values(0) <= 2024)]
    best = ret.groupby(level=0).max()
    best_month = ret.groupby(level=0).idxmax().map(lambda key: key[1])
    names = months.split()
    fig = figure(run(query, sample_settings), language)
    text, _ = drawn_headline(fig)
    for year in (best.idxmax(), best.idxmin()):
        found = re.search(rf"{year} (\S+) (\S+)\s?%", text)
        assert found is not None, text
        assert found[1] == names[best_month[year] - 1], text
        assert shows(best[year], found[2], language), (text, best[year])


# --- 18: the CSV writes a zero key as 0, never -0 --------------------------------------------


def test_the_csv_writes_a_negative_zero_key_as_zero(sample_settings, days) -> None:
    """h01: round(ret) of the days between −0.5% and 0 keyed their bucket "-0"."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"ret": "(close - prev(close)) / prev(close) * 100", "bucket": "round(ret)"},
        "where": "ret < 0",  # the down days: the bucket of those under 0.5% is −0
        "group_by": "bucket",
        "select": "count() as days",
    }
    ret = (days["close"].pct_change() * 100).dropna()
    around_zero = int(((ret < 0) & (ret > -0.5)).sum())
    rows = csv_rows(csv_bytes(run(query, sample_settings)))
    keys = [r["bucket"] for r in rows]
    assert "-0" not in keys and keys.count("0") == 1, keys
    assert int(next(r["days"] for r in rows if r["bucket"] == "0")) == around_zero
