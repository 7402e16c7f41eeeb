"""One label per bar: the model's summary, the CSV's first column and the chart's x ticks name
a bar the same way, and the label is what the calendar says (checked with pandas)."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from small_bars import bars_from_closes, write_minutes

import barb.charts.render as chart_render
from barb import execute, render_summary
from barb.bar_labels import label_column, with_bar_label
from barb.charts import render_chart
from barb.data.store import data_path
from barb.export import csv_bytes
from barb.result import Result
from barb.settings import EngineSettings

RET = "(close - prev(close)) / prev(close) * 100"


def run(query: dict, settings) -> Result:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def csv_rows(result: Result) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(csv_bytes(result).decode("utf-8-sig"))))


def summary_labels(result: Result, pattern: str) -> list[str]:
    """The first cell of each row the model reads, from the header line to the first line
    that is not a row (the "… more rows …" marker is skipped)."""
    lines = render_summary(result).splitlines()
    labels = []
    for line in lines[2:]:
        if line.startswith("…"):
            continue
        first = line.split(",")[0]
        if not re.match(pattern, first):
            break
        labels.append(first)
    return labels


def chart_ticks(result: Result, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The x tick texts of the chart's bottom axes, read from the figure before encoding."""
    figures: list[Figure] = []
    encode = chart_render.canvas_png

    def keep(canvas):
        figures.append(canvas.figure)
        return encode(canvas)

    monkeypatch.setattr(chart_render, "canvas_png", keep)
    assert render_chart(result) is not None
    axes = [ax for ax in figures[0].axes if ax.get_xticklabels()]
    bottom = min(axes, key=lambda ax: ax.get_position().y0)
    return [t.get_text() for t in bottom.get_xticklabels() if t.get_text()]


@pytest.mark.parametrize(
    ("timeframe", "name", "pattern"),
    [
        ("daily", "date", r"^2023-\d\d-\d\d$"),
        ("weekly", "week", r"^2023-\d\d-\d\d$"),
        ("monthly", "month", r"^2023-\d\d$"),
        ("quarterly", "quarter", r"^2023-Q[1-4]$"),
        ("yearly", "year", r"^2023$"),
    ],
)
def test_each_timeframe_labels_its_bars_the_same_in_summary_and_csv(
    year_settings, timeframe: str, name: str, pattern: str
) -> None:
    result = run({"session": "RTH", "from": timeframe, "map": {"ret": RET}}, year_settings)
    rows = csv_rows(result)
    assert next(iter(rows[0])) == name
    # One name per bar: the timestamps it stands for are not repeated beside it.
    assert "timestamp" not in rows[0] and "trading_date" not in rows[0]
    labels = [r[name] for r in rows]
    assert all(pd.Series(labels).str.match(pattern))
    assert labels == sorted(labels) and len(set(labels)) == len(labels)
    assert render_summary(result).splitlines()[1].split(",")[0] == name
    listed = summary_labels(result, pattern)
    assert listed[0] == labels[0] and listed[-1] == labels[-1]
    assert set(listed) <= set(labels)


def test_labels_follow_the_calendar(year_minutes) -> None:
    days = pd.DatetimeIndex(sorted(set(year_minutes["timestamp"].dt.normalize())))
    frame = pd.DataFrame({"timestamp": days, "trading_date": days})
    _, daily = label_column(frame, "daily")
    assert daily.tolist() == [d.strftime("%Y-%m-%d") for d in days]
    _, quarterly = label_column(frame, "quarterly")
    assert quarterly.tolist() == [f"{d.year}-Q{(d.month - 1) // 3 + 1}" for d in days]
    assert label_column(frame, "5m") is None  # intraday bars keep their timestamp


def test_a_week_is_named_by_its_first_trading_date() -> None:
    # The week of 2023-01-16 (a holiday Monday): its first trading date is Tuesday the 17th.
    frame = pd.DataFrame(
        {
            "timestamp": pd.to_datetime(["2023-01-16", "2023-01-23"]),
            "first_trading_date": pd.to_datetime(["2023-01-17", "2023-01-23"]),
            "trading_date": pd.to_datetime(["2023-01-20", "2023-01-27"]),
        }
    )
    assert label_column(frame, "weekly")[1].tolist() == ["2023-01-17", "2023-01-23"]
    # Without that column, the bar's timestamp is taken as the week's first trading date.
    plain = frame.drop(columns="first_trading_date")
    assert label_column(plain, "weekly")[1].tolist() == ["2023-01-16", "2023-01-23"]


def test_a_column_the_query_made_keeps_its_name() -> None:
    bars = pd.DataFrame({"timestamp": pd.to_datetime(["2023-01-03"]), "range": [5.0]})
    table = pd.DataFrame({"date": ["mine"], "range": [5.0]})
    assert with_bar_label(table, bars, "daily")["date"].tolist() == ["mine"]


def test_selecting_columns_keeps_the_label_first_in_table_and_csv(year_settings) -> None:
    query = {"session": "RTH", "from": "quarterly", "map": {"ret": RET}, "select": "ret"}
    result = run(query, year_settings)
    assert list(result.table.columns) == ["quarter", "ret"]
    text = csv_bytes(result).decode("utf-8-sig").splitlines()
    assert text[0] == "quarter,ret,source"
    assert [line.split(",")[0] for line in text[1:]] == ["2023-Q1", "2023-Q2", "2023-Q3", "2023-Q4"]


def test_the_rows_behind_a_number_are_labelled_too(year_settings) -> None:
    query = {"session": "RTH", "from": "monthly", "select": "mean(range)"}
    rows = csv_rows(run(query, year_settings))
    assert [r["month"] for r in rows] == [f"2023-{m:02d}" for m in range(1, 13)]


def test_chart_ticks_are_bar_labels(year_settings, monkeypatch) -> None:
    result = run({"session": "RTH", "from": "monthly", "map": {"ret": RET}}, year_settings)
    ticks = chart_ticks(result, monkeypatch)
    labels = [r["month"] for r in csv_rows(result)]
    assert len(ticks) >= 3
    assert set(ticks) <= set(labels)
    assert ticks == sorted(ticks)


@pytest.mark.parametrize("timeframe", ["daily", "monthly", "quarterly"])
def test_selected_columns_are_drawn_over_their_bars_labels(
    timeframe, year_settings, monkeypatch
) -> None:
    """ "select": "ret" keeps only the label: the chart still draws the bars over time,
    named as the CSV names them (it used to be a histogram of ret's values)."""
    query = {"session": "RTH", "from": timeframe, "map": {"ret": RET}, "select": "ret"}
    result = run(query, year_settings)
    ticks = chart_ticks(result, monkeypatch)
    labels = [r[result.table.columns[0]] for r in csv_rows(result)]
    assert len(ticks) >= 2 and set(ticks) <= set(labels) and ticks == sorted(ticks)


def test_ranked_days_are_named_by_their_date(year_settings, monkeypatch) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"body": "close - open"},
        "sort": "body asc",
        "limit": 5,
    }
    result = run(query, year_settings)
    figures: list[Figure] = []
    encode = chart_render.canvas_png
    monkeypatch.setattr(chart_render, "canvas_png", lambda c: figures.append(c.figure) or encode(c))
    render_chart(result)
    names = [t.get_text() for t in figures[0].axes[0].get_yticklabels()]
    dates = [r["date"] for r in csv_rows(result)]
    # "1. Tue 2023-03-07": the rank, the weekday, and the CSV's label.
    assert [n.split()[-1] for n in names] == dates


@pytest.mark.slow
def test_date_functions_on_weekly_bars_name_the_labelled_week(sample_settings) -> None:
    """The week labelled 2024-12-30 ends in 2025, and still date(), year() and month() say
    what its label says: "the widest week of 2024" names a week shown in 2024."""
    result = run(
        {
            "session": "RTH",
            "from": "weekly",
            "period": "2024-12-23:2025-01-17",
            "map": {"d": "date()", "y": "year()", "m": "month()"},
            "select": ["d", "y", "m"],
        },
        sample_settings,
    )
    table = result.table
    labels = pd.to_datetime(table["week"])
    assert list(table["d"]) == list(labels)
    assert list(table["y"]) == list(labels.dt.year)
    assert list(table["m"]) == list(labels.dt.month)
    assert "2024-12-30" in set(table["week"])


# Two years of hand-made bars, one at the open and one at the close of each weekday's RTH:
# months and quarters repeat their number, 1 … 12 twice.
TWO_YEARS = pd.bdate_range("2022-01-03", "2023-12-29")


@pytest.fixture(scope="module")
def two_years(tmp_path_factory: pytest.TempPathFactory) -> EngineSettings:
    offsets = pd.to_timedelta([570, 1019], unit="min")
    stamps = pd.DatetimeIndex([day + offset for day in TWO_YEARS for offset in offsets])
    rng = np.random.default_rng(3)
    close = np.round((12000 + np.cumsum(rng.normal(0, 30, len(stamps)))) * 4) / 4
    minutes = bars_from_closes(stamps, close, rng.integers(1, 500, len(stamps)))
    settings = EngineSettings(data_dir=tmp_path_factory.mktemp("two_years"))
    write_minutes(minutes, "NQ", settings, "two RTH bars a weekday, hand-made")
    return settings


def _pandas_closes(settings: EngineSettings, freq: str) -> pd.DataFrame:
    """Each month's (quarter's) last RTH close and its return on the one before, by pandas
    over the bars as written."""
    frame = pd.read_parquet(data_path("NQ", settings))
    closes = frame.groupby(frame["timestamp"].dt.to_period(freq))["close"].last()
    return pd.DataFrame({"close": closes, "ret": closes / closes.shift()})


@pytest.mark.parametrize(
    ("timeframe", "key", "freq"), [("monthly", "month", "M"), ("quarterly", "quarter", "Q")]
)
def test_a_selected_month_of_several_years_keeps_the_bars_label_beside_it(
    two_years, timeframe: str, key: str, freq: str, monkeypatch
) -> None:
    """w44d: ``"select": ["month()", "ret"]`` over 24 monthly bars read "1, 2, … 12, 1, 2 …":
    the month's number took the label's name and the label was dropped, leaving no year.
    The label stays first, as ``bar_month``, the same in the summary, the CSV and the chart."""
    expected = _pandas_closes(two_years, freq)
    labels = [str(p).replace("Q", "-Q") for p in expected.index]  # 2022-01, 2022-Q1
    query = {"session": "RTH", "from": timeframe, "map": {"ret": "close / prev(close)"}}
    result = run({**query, "select": [f"{key}()", "ret"]}, two_years)
    assert list(result.table.columns) == [f"bar_{key}", key, "ret"]
    rows = csv_rows(result)
    assert [r[f"bar_{key}"] for r in rows] == labels
    assert [int(r[key]) for r in rows] == [getattr(p, key) for p in expected.index]
    ret = pd.to_numeric(pd.Series([r["ret"] for r in rows]))
    # The CSV writes 6 significant digits.
    np.testing.assert_allclose(ret.iloc[1:], expected["ret"].iloc[1:], rtol=5e-6)
    text = render_summary(result).splitlines()
    assert text[1] == f"bar_{key},{key},ret"
    listed = summary_labels(result, r"^\d{4}-Q?\d\d?$")
    assert listed[0] == labels[0] and listed[-1] == labels[-1] and set(listed) <= set(labels)
    ticks = chart_ticks(result, monkeypatch)
    assert len(ticks) >= 2 and set(ticks) <= set(labels)


def test_the_best_months_of_several_years_say_which_year(two_years) -> None:
    expected = _pandas_closes(two_years, "M")["ret"].nlargest(3)
    query = {
        "session": "RTH",
        "from": "monthly",
        "map": {"ret": "close / prev(close)"},
        "select": ["month()", "ret"],
        "sort": "ret desc",
        "limit": 3,
    }
    rows = csv_rows(run(query, two_years))
    assert [r["bar_month"] for r in rows] == [str(p) for p in expected.index]
    assert [int(r["month"]) for r in rows] == [p.month for p in expected.index]


def test_a_selected_key_that_names_each_bar_once_is_the_label(two_years) -> None:
    """year() of yearly bars is what their label says: the rows are named by it alone."""
    query = {"session": "RTH", "from": "yearly", "select": ["year()", "close"]}
    result = run(query, two_years)
    assert list(result.table.columns) == ["year", "close"]
    assert result.table["year"].tolist() == [2022, 2023]


def test_the_command_lines_rows_of_months_are_named_by_the_month_alone(
    year_settings, monkeypatch
) -> None:
    """A month's timestamp (its first trading date) and trading_date (its last) were listed
    unlabelled beside its label in the command line's rows (p47a), which the CSV and the
    summary leave out: the rows now show the CSV's columns. Intraday rows keep both."""
    from click.testing import CliRunner

    from barb.cli import main

    monkeypatch.setenv("BARB_DATA_DIR", str(year_settings.data_dir))
    monkeypatch.setattr("barb.interpreter.default_settings", lambda: year_settings)
    query = '{"session": "RTH", "from": "monthly", "map": {"ret": "close / prev(close) - 1"}}'
    out = CliRunner().invoke(main, ["query", query])
    assert out.exit_code == 0, out.output
    header = out.output.split("table (first 10 of 12):\n")[1].splitlines()[0].split()
    assert header == ["month", "open", "high", "low", "close", "volume", "range", "ret"]
    csv_header = (
        csv_bytes(run(json.loads(query), year_settings)).decode("utf-8-sig").splitlines()[0]
    )
    assert csv_header.split(",")[:-1] == header  # the CSV adds its source
    hourly = '{"session": "RTH", "from": "1h", "period": "2023-03-01"}'
    listed = CliRunner().invoke(main, ["query", hourly]).output
    assert "timestamp" in listed and "trading_date" in listed


@pytest.mark.parametrize(
    ("timeframe", "en", "ru"),
    [("daily", "days", ("дня", "дней")), ("monthly", "months", ("месяца", "месяцев"))],
)
def test_many_rows_tied_at_a_listings_extreme_are_counted_by_their_bars_name(
    year_settings, year_minutes, timeframe: str, en: str, ru: tuple[str, str]
) -> None:
    """A drawdown listed day by day is 0 on every day at a new high: the chart's headline
    counted them as "322 groups tied", which are no groups. It counts them by the bars'
    name, as many as pandas finds at their running high (English and Russian)."""
    from barb.charts import chart_headline

    query = {
        "session": "RTH",
        "from": timeframe,
        "map": {"dd": "(close / cummax(close) - 1) * 100"},
        "select": "dd",
    }
    result = run(query, year_settings)
    stamps = year_minutes["timestamp"]
    close = year_minutes.groupby(stamps.dt.to_period("D" if timeframe == "daily" else "M"))[
        "close"
    ].last()
    at_high = int((close >= close.cummax()).sum())
    assert at_high > 3  # too many to name
    # At the bars' own precision (0.000% beside -0.591%).
    assert re.search(rf"highest 0(\.0+)?% \({at_high} {en} tied\)", chart_headline(result))
    # Russian's genitive after "у": "у 71 дня", "у 25 дней".
    one = at_high % 10 == 1 and at_high % 100 != 11
    assert f"(одинаково у {at_high} {ru[0] if one else ru[1]})" in chart_headline(result, "ru")


@pytest.mark.parametrize(
    ("timeframe", "select", "en", "ru"),
    [
        ("daily", "date(), dd", "days", ("дня", "дней")),
        ("1h", "date(), hour(), dd", "bars", ("бара", "баров")),
    ],
)
def test_a_listing_that_selects_its_date_counts_its_tie_by_its_bars(
    year_settings, year_minutes, timeframe: str, select: str, en: str, ru: tuple[str, str]
) -> None:
    """The same listing with date() selected carries no bar label: its headline read "(322
    groups tied)" of days (and of hourly bars), where nothing is a group."""
    from barb.charts import chart_headline

    query = {
        "session": "RTH",
        "from": timeframe,
        "map": {"dd": "(close / cummax(close) - 1) * 100"},
        "select": select,
    }
    result = run(query, year_settings)
    rth = year_minutes.set_index("timestamp").between_time("09:30", "16:59")
    # RTH's hourly bars start at its 09:30 open.
    bar = (rth.index - pd.Timedelta("30min")).floor("D" if timeframe == "daily" else "h")
    close = rth["close"].groupby(bar).last()
    at_high = int((close >= close.cummax()).sum())
    assert at_high > 3  # too many to name
    assert re.search(rf"highest 0(\.0+)?% \({at_high} {en} tied\)", chart_headline(result))
    one = at_high % 10 == 1 and at_high % 100 != 11
    assert f"(одинаково у {at_high} {ru[0] if one else ru[1]})" in chart_headline(result, "ru")


def test_a_then_listing_of_day_groups_counts_its_tie_in_days(year_settings, year_minutes) -> None:
    """A then stage's rows are the first stage's groups: of date() keys, days."""
    from barb.charts import chart_headline

    query = {
        "session": "RTH",
        "from": "1h",
        "group_by": "date()",
        "select": "last(close) as c",
        "then": {"map": {"dd": "(c / cummax(c) - 1) * 100"}, "select": "date, dd"},
    }
    result = run(query, year_settings)
    rth = year_minutes.set_index("timestamp").between_time("09:30", "16:59")
    close = rth["close"].groupby(rth.index.floor("D")).last()
    at_high = int((close >= close.cummax()).sum())
    assert at_high > 3
    assert re.search(rf"highest 0(\.0+)?% \({at_high} days tied\)", chart_headline(result))


def test_a_listing_that_selects_its_date_names_each_extreme_by_it(
    year_settings, year_minutes
) -> None:
    """The model read "r: min=2, max=10" of a daily listing that selected date(), with no
    day named, where the same listing without it read "max=10 (2023-… and 1 more)". Its own
    date column names the extremes now, as pandas finds them (first row, ties counted)."""
    query = {"session": "RTH", "from": "daily", "select": ["date()", "round(range / 10, 0) as r"]}
    text = render_summary(run(query, year_settings))
    rth = year_minutes.set_index("timestamp").between_time("09:30", "16:59")
    days = rth.groupby(rth.index.normalize()).agg(high=("high", "max"), low=("low", "min"))
    r = ((days["high"] - days["low"]) / 10).round(0)

    def at(value: float) -> str:
        first = r[r == value].index[0].strftime("%Y-%m-%d")
        more = int((r == value).sum()) - 1
        return f"{first} and {more} more" if more else first

    assert f"r: min={r.min():g} ({at(r.min())}), max={r.max():g} ({at(r.max())})" in text
