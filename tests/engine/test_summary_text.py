"""What the model reads for a result: read back from ``render_summary`` and checked against
pandas computed straight from the minute bars.

The bars are a year of RTH minutes (``year_minutes`` in conftest), so that a query can return
twelve monthly bars, forty daily ones, or 25 groups.
"""

from __future__ import annotations

import re
import warnings

import pandas as pd
import pytest

from barb import execute, render_summary
from barb.result import EDGE_ROWS, WHOLE_MAX_NARROW_ROWS, Result
from barb.settings import EngineSettings

with warnings.catch_warnings():
    # The tokenizer package opens its bundled data with a deprecated importlib call.
    warnings.simplefilter("ignore", DeprecationWarning)
    import bpe_openai

    O200K = bpe_openai.get_encoding("o200k_base")

RET = "(close - prev(close)) / prev(close) * 100"


def run(query: dict, settings: EngineSettings) -> Result:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def listed(text: str) -> tuple[list[str], list[list[str]]]:
    """The header and the value lines the model reads under the headline."""
    lines = text.splitlines()
    header = lines[1].split(",")
    rows = []
    for line in lines[2:]:
        if line.startswith("…"):
            continue
        if line.startswith("Scanned "):  # the scope line: the listing is over
            break
        cells = line.split(",")
        if len(cells) != len(header) or "=" in line:
            break
        rows.append(cells)
    return header, rows


def daily(minutes: pd.DataFrame) -> pd.DataFrame:
    """Daily RTH bars straight from the minutes, by pandas."""
    day = minutes["timestamp"].dt.normalize()
    return minutes.groupby(day).agg(
        open=("open", "first"),
        high=("high", "max"),
        low=("low", "min"),
        close=("close", "last"),
        volume=("volume", "sum"),
    )


def tokens(text: str) -> int:
    """Tokens of the model's tokenizer (o200k, as GPT-4o and later count them)."""
    return len(O200K.encode(text))


def test_twelve_monthly_returns_are_read_whole_and_labelled(year_settings, year_minutes) -> None:
    query = {"session": "RTH", "from": "monthly", "map": {"ret_pct": RET}}
    text = render_summary(run(query, year_settings))
    closes = daily(year_minutes)["close"].groupby(lambda d: d.strftime("%Y-%m")).last()
    expected = closes.pct_change() * 100

    assert text.splitlines()[0] == "Result: 12 rows of monthly bars, in time order, all shown:"
    header, rows = listed(text)
    assert header == ["month", "ret_pct"]
    assert [r[0] for r in rows] == [f"2023-{m:02d}" for m in range(1, 13)]
    assert rows[0][1] == "n/a"  # no month before January to compare with
    got = [float(r[1]) for r in rows[1:]]
    assert got == pytest.approx(expected.iloc[1:].tolist(), rel=1e-3, abs=1e-3)
    # Compact: no key repeated on every row, no timestamps, no thousands separators.
    assert "ret_pct=" not in text.split("mean:")[0]
    assert "timestamp" not in text and "2023-01-01" not in text
    assert float(text.split("mean: ret_pct=")[1].split("\n")[0]) == pytest.approx(
        expected.mean(), rel=1e-3
    )
    # The one warning says why January is n/a (the data begins in it); the rest is compact.
    (said,) = [line for line in text.splitlines() if "ret_pct has no value on 2023-01" in line]
    assert tokens(text.replace(said, "")) <= 200


def test_selecting_one_column_keeps_the_month_first(year_settings, year_minutes) -> None:
    query = {"session": "RTH", "from": "monthly", "map": {"ret": RET}, "select": "ret"}
    result = run(query, year_settings)
    assert list(result.table.columns) == ["month", "ret"]
    assert result.table["month"].tolist() == [f"2023-{m:02d}" for m in range(1, 13)]
    header, rows = listed(render_summary(result))
    assert header == ["month", "ret"] and len(rows) == 12


def test_a_longer_table_is_summarized_by_top_and_bottom_in_sort_order(
    year_settings, year_minutes
) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2023-03-01:2023-05-31",
        "map": {"chg": "close - open"},
        "sort": "chg desc",
    }
    result = run(query, year_settings)
    text = render_summary(result)
    bars = daily(year_minutes)
    bars["chg"] = bars["close"] - bars["open"]
    window = bars.loc["2023-03-01":"2023-05-31"]
    n = len(window)
    assert n > WHOLE_MAX_NARROW_ROWS
    # Ties keep time order (a stable sort), as the engine's.
    ranked = window.sort_values("chg", ascending=False, kind="stable", na_position="last")
    dates = [d.strftime("%Y-%m-%d") for d in ranked.index]

    first = text.splitlines()[0]
    assert first == (
        f"Result: {n} rows of daily bars, sorted by chg descending; "
        f"the first {EDGE_ROWS} and the last {EDGE_ROWS} in that order:"
    )
    header, rows = listed(text)
    assert header == ["date", "chg"]
    assert len(rows) == 2 * EDGE_ROWS
    assert [r[0] for r in rows] == dates[:EDGE_ROWS] + dates[-EDGE_ROWS:]
    assert f"… {n - 2 * EDGE_ROWS} more rows …" in text
    shown = [float(r[1]) for r in rows[:EDGE_ROWS]]
    assert shown == pytest.approx(ranked["chg"].iloc[:EDGE_ROWS].tolist())
    # Each extreme with its day (the first in time of those holding it) and its ties.
    stats = re.search(r"^chg: min=(\S+) \((.+?)\), max=(\S+) \((.+?)\), mean=(\S+)$", text, re.M)
    assert stats is not None
    low, high = window["chg"].min(), window["chg"].max()
    assert float(stats.group(1)) == pytest.approx(low)
    assert stats.group(2) == _named(window["chg"], low)
    assert float(stats.group(3)) == pytest.approx(high)
    assert stats.group(4) == _named(window["chg"], high)
    assert float(stats.group(5)) == pytest.approx(window["chg"].mean(), rel=1e-3)


def _named(column: pd.Series, value: float) -> str:
    """How the summary names the rows of a daily column holding ``value``: the first day,
    and how many more hold it."""
    days = column.index[column == value]
    more = f" and {len(days) - 1} more" if len(days) > 1 else ""
    return f"{days[0]:%Y-%m-%d}{more}"


def test_many_groups_show_extremes_and_both_ends_in_key_order(year_settings, year_minutes) -> None:
    query = {"session": "RTH", "from": "daily", "group_by": "date()", "select": "max(range)"}
    result = run({**query, "period": "2023-05-01:2023-07-31"}, year_settings)
    text = render_summary(result)
    bars = daily(year_minutes).loc["2023-05-01":"2023-07-31"]
    assert len(bars) > WHOLE_MAX_NARROW_ROWS
    ranges = bars["high"] - bars["low"]
    assert text.splitlines()[0].startswith(f"Result: {len(bars)} groups by date, ordered by date;")
    header, rows = listed(text)
    assert header == ["date", "max_range"]
    keys = [d.strftime("%Y-%m-%d") for d in bars.index]
    assert [r[0] for r in rows] == keys[:EDGE_ROWS] + keys[-EDGE_ROWS:]
    assert f"… {len(bars) - 2 * EDGE_ROWS} more groups …" in text
    top = ranges.idxmax().strftime("%Y-%m-%d")
    assert f"highest max_range: date={top}, max_range={ranges.max():g}" in text


def test_a_result_of_25_rows_and_4_values_is_whole_within_about_400_tokens(
    year_settings, year_minutes
) -> None:
    # 25 groups, one per 15-minute slot from 09:30 to 15:30, and four aggregate columns.
    query = {
        "session": "RTH",
        "from": "15m",
        "map": {"slot": "hour() * 100 + minute()", "body": "close - open"},
        "where": "hour() * 60 + minute() <= 930",
        "group_by": "slot",
        "select": ["mean(range)", "mean(body)", "max(range)", "count()"],
    }
    result = run(query, year_settings)
    text = render_summary(result)
    assert result.summary.rows == 25 and result.summary.whole
    header, rows = listed(text)
    assert header == ["slot", "mean_range", "mean_body", "max_range", "count"]
    slots = [h * 100 + m for h in range(9, 16) for m in range(0, 60, 15)]
    assert [int(r[0]) for r in rows] == slots[2:27]
    # Every group is in sight, and a mean of the groups' values is no overall figure (a
    # mean of 25 counts, of per-slot means): none is offered for the model to misread.
    assert not [line for line in text.splitlines() if line.startswith("mean")]
    # The hand-made slots are alike (random ranges), and the model is told so: that warning is
    # what the rows mean, not their format, and is measured apart.
    said = [line for line in text.splitlines() if line.startswith("Warning:")]
    assert len(said) == 1 and "differ no more than 25 groups of pure noise" in said[0]
    text = _without_warnings(text)
    # Measured with a real tokenizer, every decimal costs 3-5 tokens and its comma one more:
    # 25 such rows come to about 500, where the rule of thumb of 4 characters a token says
    # about 250. Both bounds fail if the format grows (repeated keys, more digits, prose).
    assert tokens(text) <= 550
    assert len(text) / 4 <= 400


def _without_warnings(text: str) -> str:
    """The summary without its warning lines: what they say depends on the rows, and each
    has tests of its own."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("Warning:"))


def test_years_have_no_thousands_separator_and_one_row_is_one_row(
    year_settings, year_minutes
) -> None:
    query = {"session": "RTH", "from": "daily", "group_by": "year()", "select": "sum(volume)"}
    text = render_summary(run(query, year_settings))
    total = int(year_minutes["volume"].sum())
    assert text.splitlines()[:3] == [
        "Result: 1 group by year:",
        "year,sum_volume",
        f"2023,{total}",
    ]
    one = render_summary(run({"session": "RTH", "from": "yearly"}, year_settings))
    assert one.splitlines()[0] == "Result: 1 row of yearly bars:"
    bars = daily(year_minutes)
    ohlc = [bars["open"].iloc[0], bars["high"].max(), bars["low"].min(), bars["close"].iloc[-1]]
    assert one.splitlines()[1:3] == [
        "year,open,high,low,close",
        "2023," + ",".join(f"{v:.10g}" for v in ohlc),
    ]
    assert "Scanned 1 yearly RTH (09:30-17:00 ET) bar of NQ" in one


# Whole results as traders ask for them: 25 rows of 4 values (bars, ratios of bars, groups of
# aggregates), a weekday × hour grid of 2 values (40 rows), 18 weeks of 7 values.
WHOLE_RESULTS = {
    "daily OHLC": {"session": "RTH", "from": "daily", "period": "2023-03-01:2023-04-04"},
    "daily ratios": {
        "session": "RTH",
        "from": "daily",
        "period": "2023-03-01:2023-04-04",
        "map": {
            "ret": "close / prev(close) - 1",
            "vol_ratio": "volume / prev(volume)",
            "gap": "open - prev(close)",
        },
        "select": ["ret", "vol_ratio", "gap", "range"],
    },
    "15m slots": {
        "session": "RTH",
        "from": "15m",
        "map": {"slot": "hour() * 100 + minute()", "body": "close - open"},
        "where": "hour() * 60 + minute() <= 930",
        "group_by": "slot",
        "select": ["mean(range)", "mean(body)", "max(range)", "count()"],
    },
    "weekday x hour grid": {
        "session": "RTH",
        "from": "1h",
        "map": {"wd": "dayname()", "t": "time()"},
        "group_by": ["wd", "t"],
        "select": ["mean(range) as rng", "mean(close > open) as up"],
    },
    "18 weeks x 7": {
        "session": "RTH",
        "from": "daily",
        "period": "2023-01-02:2023-05-05",
        "map": {"ret": RET, "rp": "range / open * 100"},
        "group_by": "week()",
        "select": [
            "mean(rp) as avg_rp",
            "max(rp) as max_rp",
            "mean(ret > 0) as up",
            "std(ret) as vol",
            "min(ret) as worst",
            "max(ret) as best",
            "mean(volume) as avg_vol",
        ],
    },
}


@pytest.mark.parametrize("case", WHOLE_RESULTS)
def test_whole_results_cost_their_digits_and_a_few_fixed_lines(case: str, year_settings) -> None:
    result = run(WHOLE_RESULTS[case], year_settings)
    text = render_summary(result)
    header, rows = listed(text)
    assert result.summary.whole and len(rows) == result.summary.rows
    # The listing is the cells and their commas, nothing else: no keys repeated per row,
    # one line each. What a value costs is its digits (o200k reads up to 3 digits a token).
    listing = "\n".join([",".join(header), *(",".join(r) for r in rows)])
    assert listing in text
    cells = [cell for row in rows for cell in row]
    digits = sum(tokens(cell) for cell in cells)
    assert tokens(listing) <= digits + len(cells) + tokens(",".join(header)) + 1
    # Around it: the headline, the means of a whole listing, what was scanned (with the
    # session's hours, 9 tokens), the data note; warnings are what the rows mean (the
    # hand-made 15m slots are alike, and said to be), not the format.
    assert tokens(_without_warnings(text)) - tokens(listing) <= 110


def test_columns_beyond_the_rows_limit_are_named_as_not_listed(year_settings, year_minutes) -> None:
    """Ten columns over three months: the rows carry eight, the summary names the other two
    (mean and max only in the mean line before, read as if every column were shown)."""
    names = ["o", "h", "l", "c", "v", "rng", "mid", "body", "up", "dn"]
    exprs = ["open", "high", "low", "close", "volume", "range", "(high + low) / 2",
             "close - open", "high - open", "open - low"]  # fmt: skip
    query = {
        "session": "RTH",
        "from": "monthly",
        "period": "2023-01:2023-03",
        "select": [f"{e} as {n}" for e, n in zip(exprs, names, strict=True)],
    }
    text = render_summary(run(query, year_settings))
    header, rows = listed(text)
    assert header == ["month", *names[:8]]
    assert "not listed: up, dn — select fewer columns to read them" in text.splitlines()
    months = (
        daily(year_minutes)
        .groupby(lambda d: d.strftime("%Y-%m"))
        .agg(high=("high", "max"), low=("low", "min"))
    )
    got = [float(r[header.index("rng")]) for r in rows]
    assert got == pytest.approx((months["high"] - months["low"]).iloc[:3].tolist(), rel=1e-4)


def test_eight_columns_are_all_listed(year_settings) -> None:
    query = {"session": "RTH", "from": "monthly", "period": "2023-01:2023-03"}
    query["select"] = [f"close + {i} as c{i}" for i in range(8)]
    text = render_summary(run(query, year_settings))
    assert listed(text)[0] == ["month", *(f"c{i}" for i in range(8))]
    assert "not listed" not in text


def test_groups_name_their_columns_not_listed(year_settings) -> None:
    query = {"session": "RTH", "from": "daily", "group_by": "month()"}
    query["select"] = [f"mean(close + {i}) as c{i}" for i in range(10)]
    text = render_summary(run(query, year_settings))
    assert listed(text)[0] == ["month", *(f"c{i}" for i in range(8))]
    assert "not listed: c8, c9 — select fewer columns to read them" in text


def test_a_histogram_of_many_narrow_buckets_is_read_whole(year_settings, year_minutes) -> None:
    """Daily returns in 0.025% buckets: every bucket with its count, the middle included (the
    first and last five alone held the tails' one-day buckets), and the zero bucket is 0,
    not -0 (a small loss to a reader)."""
    bucket = "round((close / prev(close) - 1) * 4000) / 40"
    query = {"session": "RTH", "from": "daily", "map": {"bucket": bucket}}
    result = run({**query, "group_by": "bucket", "select": "count() as days"}, year_settings)
    closes = daily(year_minutes)["close"]
    expected = ((closes / closes.shift() - 1) * 4000).round().div(40).value_counts().sort_index()
    expected.index = expected.index + 0.0  # -0.0 and 0.0 are one bucket
    assert 2 * EDGE_ROWS + 10 < len(expected) <= WHOLE_MAX_NARROW_ROWS
    text = render_summary(result)
    assert text.splitlines()[0].endswith("all shown:")
    header, rows = listed(text)
    assert header == ["bucket", "days"]
    assert [float(key) for key, _ in rows] == expected.index.tolist()
    assert [int(days) for _, days in rows] == expected.tolist()


def test_a_zero_rounded_from_below_reads_0(year_settings) -> None:
    """round(-0.1) is -0.0 in floating point: shown as "-0" it reads as a small loss."""
    query = {"session": "RTH", "from": "daily", "period": "2023-01", "map": {"z": "round(-0.1)"}}
    result = run({**query, "group_by": "z", "select": "count() as days"}, year_settings)
    header, rows = listed(render_summary(result))
    assert header == ["z", "days"] and [key for key, _ in rows] == ["0"]


def test_a_group_key_selected_again_in_then_is_not_averaged(year_settings, year_minutes) -> None:
    """then's select lists the first stage's key to name its rows: "mean: month=6.5" beside
    the shares is noise; the shares' mean is what a reader wants."""
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "month()",
        "select": ["sum(volume) as vol", "count() as days"],
        "then": {"map": {"per_day": "vol / days"}, "select": ["month", "per_day"]},
    }
    text = render_summary(run(query, year_settings))
    [means] = [line for line in text.splitlines() if line.startswith("mean: ")]
    per_day = daily(year_minutes).groupby(lambda d: d.month)["volume"].mean()
    assert means.startswith("mean: per_day=") and "month" not in means
    assert float(means.split("=")[1]) == pytest.approx(per_day.mean(), rel=1e-3)


def test_one_value_by_two_keys_is_read_whole_up_to_the_narrow_rows(
    year_settings, year_minutes
) -> None:
    """The reference promises 60 rows of one value column; with two keys the cells counted
    the keys too and 46 rows of "mean range by hour and CPI day" were cut to their ends,
    hiding the 08:00 rows the question was about (p28e F2). Month by weekday: 60 rows."""
    days = daily(year_minutes)
    ranges = days["high"] - days["low"]
    expected = ranges.groupby([days.index.month, days.index.dayofweek]).mean()
    assert 41 < len(expected) <= WHOLE_MAX_NARROW_ROWS
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": ["month()", "dayofweek()"],
        "select": "mean(range) as r",
    }
    text = render_summary(run(query, year_settings))
    assert text.splitlines()[0].endswith("all shown:")
    header, rows = listed(text)
    assert header == ["month", "dayofweek", "r"]
    assert len(rows) == len(expected)
    for (month, weekday, value), ((m, d), mean) in zip(rows, expected.items(), strict=True):
        assert (int(month), int(weekday)) == (m, d)
        assert float(value) == pytest.approx(mean, abs=0.01)


def test_an_intraday_row_at_midnight_is_named_by_its_time(engine_settings) -> None:
    """ETH's hourly rows read "2026-01-05 23:00", "2026-01-06", "2026-01-06 01:00": the
    midnight bar looked like a day among hours."""
    result = run({"session": "ETH", "from": "1h", "period": "2024-01-09"}, engine_settings)
    _, rows = listed(render_summary(result))
    expected = [f"{t:%Y-%m-%d %H:%M}" for t in result.table["timestamp"]]
    assert [row[0] for row in rows] == expected
    assert "2024-01-09 00:00" in expected


def _extremes(text: str, column: str, where: str = "") -> tuple[float, str, float, str, float]:
    """A column's summary line read back: min, its row, max, its row, mean."""
    pattern = rf"^{column}{where}: min=(\S+) \((.+?)\), max=(\S+) \((.+?)\), mean=(\S+)$"
    found = re.search(pattern, text, re.M)
    assert found is not None, text
    low, low_at, high, high_at, mean = found.groups()
    return float(low), low_at, float(high), high_at, float(mean)


def _rows_named(column: pd.Series, value: float, name) -> str:
    """How the summary names the rows holding ``value``: the first (in the table's order) by
    ``name``, and how many more hold it."""
    at = column.index[column == value]
    more = f" and {len(at) - 1} more" if len(at) > 1 else ""
    return f"{name(at[0])}{more}"


def test_a_weekday_by_hour_grid_of_two_values_is_read_whole(year_settings, year_minutes) -> None:
    """40 weekday × hour cells of mean range and up share: the first and the last five hid
    Wednesday's 13:30 bar, the FOMC hour and the grid's one anomaly (p40e Q27). Every cell is
    listed, as pandas computes it from the minutes."""
    rth = year_minutes.copy()
    minute = rth["timestamp"].dt.hour * 60 + rth["timestamp"].dt.minute
    rth["day"] = rth["timestamp"].dt.normalize()
    rth["slot"] = (minute - 570) // 60
    bars = rth.groupby(["day", "slot"]).agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )
    bars = bars.reset_index()
    bars["wd"] = bars["day"].dt.day_name().str[:3]
    bars["t"] = [f"{9 + (30 + 60 * s) // 60:02d}:30" for s in bars["slot"]]
    bars["rng"] = bars["high"] - bars["low"]
    bars["up"] = bars["close"] > bars["open"]
    expected = bars.groupby(["wd", "t"])[["rng", "up"]].mean()
    assert len(expected) == 40

    text = render_summary(run(WHOLE_RESULTS["weekday x hour grid"], year_settings))
    assert text.splitlines()[0] == "Result: 40 groups by wd, t, ordered by wd, t, all shown:"
    header, rows = listed(text)
    assert header == ["wd", "t", "rng", "up"]
    got = {(wd, t): (float(rng), float(up)) for wd, t, rng, up in rows}
    assert set(got) == set(expected.index)
    for key, (rng, up) in got.items():
        assert rng == pytest.approx(expected.loc[key, "rng"], rel=1e-3)
        assert up == pytest.approx(expected.loc[key, "up"], rel=1e-3)


def test_eighteen_rows_of_seven_values_are_read_whole(year_settings, year_minutes) -> None:
    """18 years of 7 columns were cut to their first and last five, and no line named the
    worst day of the hidden 2020 (p40e Q11): 18 weeks of the same 7 columns are all listed
    (their summary would cost more tokens than the rows it leaves out)."""
    days = daily(year_minutes)
    days["ret"] = days["close"].pct_change() * 100
    days = days.loc["2023-01-02":"2023-05-05"]
    worst = days["ret"].groupby(days.index.to_period("W-SUN").start_time).min()
    assert len(worst) == 18

    text = render_summary(run(WHOLE_RESULTS["18 weeks x 7"], year_settings))
    assert text.splitlines()[0].endswith("all shown:")
    header, rows = listed(text)
    assert header[0] == "week" and len(header) == 8 and len(rows) == 18
    at = header.index("worst")
    assert [r[0] for r in rows] == [f"{w:%Y-%m-%d}" for w in worst.index]
    assert [float(r[at]) for r in rows] == pytest.approx(worst.tolist(), rel=1e-3)


def test_every_column_of_a_summarized_grouped_result_names_its_extremes(
    year_settings, year_minutes
) -> None:
    """260 days of 5 columns: each column's min and max come with their day and ties, as
    pandas finds them, not the first column's alone (2020's -12.6% worst day and +11.6% best
    were in no line the model read, p40e Q11)."""
    query = {
        "session": "RTH",
        "from": "1m",
        "map": {"body": "close - open"},
        "group_by": "date()",
        "select": ["mean(range) as r", "count() as n", "std(body) as v",
                   "min(body) as worst", "max(body) as best"],
    }  # fmt: skip
    result = run(query, year_settings)
    assert not result.summary.whole
    text = render_summary(result)
    body = year_minutes["close"] - year_minutes["open"]
    by_day = pd.DataFrame(
        {"range": year_minutes["high"] - year_minutes["low"], "body": body}
    ).groupby(year_minutes["timestamp"].dt.normalize())
    expected = pd.DataFrame(
        {
            "r": by_day["range"].mean(),
            "n": by_day["body"].size(),
            "v": by_day["body"].std(),
            "worst": by_day["body"].min(),
            "best": by_day["body"].max(),
        }
    )
    for name, column in expected.items():
        low, low_at, high, high_at, mean = _extremes(text, name, " across groups")
        assert low == pytest.approx(column.min(), rel=1e-3)
        assert high == pytest.approx(column.max(), rel=1e-3)
        assert mean == pytest.approx(column.mean(), rel=1e-3)
        assert low_at == _rows_named(column, column.min(), lambda d: f"{d:%Y-%m-%d}")
        assert high_at == _rows_named(column, column.max(), lambda d: f"{d:%Y-%m-%d}")


def test_a_plain_list_names_the_rows_of_its_min_and_max(year_settings, year_minutes) -> None:
    """Monthly returns as a plain list read "ret: min=-22.16, max=23.95": the best month,
    2020-10, was not named (p40e Q15). 260 daily returns: each extreme with its day."""
    query = {"session": "RTH", "from": "daily", "map": {"ret": RET}, "select": "ret"}
    text = render_summary(run(query, year_settings))
    closes = daily(year_minutes)["close"]
    ret = (closes / closes.shift() - 1) * 100
    low, low_at, high, high_at, _ = _extremes(text, "ret")
    assert (low, high) == (pytest.approx(ret.min(), rel=1e-3), pytest.approx(ret.max(), rel=1e-3))
    assert low_at == f"{ret.idxmin():%Y-%m-%d}" and high_at == f"{ret.idxmax():%Y-%m-%d}"


def test_a_few_named_and_the_rest_counted() -> None:
    """The caveats' one way of naming a few of many (``named_text``): counts in sentences
    carry thousands separators."""
    from barb.summary_text import named_text

    assert named_text(["a"], 1) == "a"
    assert named_text(["a", "b"], 2) == "a, b"
    assert named_text(["a", "b"], 1_236) == "a, b and 1,234 more"
