"""File names, titles and units for a result's chart and CSV."""

from __future__ import annotations

import re

import chart_factories as make
import pytest

from barb.charts.columns import axis_text
from barb.charts.file_names import chart_filename, csv_filename, proof_basename
from barb.charts.header import scope_text, subtitle_text
from barb.charts.words import words_for
from barb.column_units import column_unit

#: Letters of any script, digits, "_", "-", "." and the comparison signs every file system
#: keeps.
SAFE = re.compile(r"^[\w.\-+()=≠≥≤＞＜÷×]+$")


@pytest.mark.parametrize("shape", sorted(make.ALL_SHAPES))
@pytest.mark.parametrize("language", ["en", "ru"])
def test_names_are_safe_and_say_what_and_when(shape: str, language: str) -> None:
    result = make.ALL_SHAPES[shape]()
    meta = result.metadata
    assert meta is not None
    for name in (chart_filename(result, language), csv_filename(result, None, language)):
        assert SAFE.match(name), name
        assert len(name) <= 110
        assert name.startswith(f"NQ_{meta.session}_")
        assert f"{meta.period_start}_{meta.period_end}" in name
    assert chart_filename(result, language).endswith(".png")
    assert csv_filename(result, None, language) == proof_basename(result, language) + ".csv"


def test_the_name_says_what_was_computed_in_the_persons_words() -> None:
    """The chart's words, in the chat's language: a Russian chat got
    "NQ_RTH_daily_mean_range_by_weekday_…" under a caption in Russian."""
    weekdays = make.grouped_weekdays()
    assert (
        chart_filename(weekdays, "en")
        == "NQ_RTH_average_range_by_weekday_2008-01-02_2026-01-07.png"
    )
    assert (
        csv_filename(weekdays, None, "ru")
        == "NQ_RTH_средний_диапазон_по_дню_недели_2008-01-02_2026-01-07.csv"
    )
    assert csv_filename(weekdays, (3, 5), "ru").endswith(
        "_2008-01-02_2026-01-07_первые_3_из_5_строк.csv"
    )
    # The where keeps its sign: "gap_60" had lost which side of 60.
    assert "_where_gap_＞_60_" in chart_filename(make.scalar_count(), "en")
    assert "_где_gap_＞_60_" in chart_filename(make.scalar_count(), "ru")


def test_a_long_query_still_gives_a_short_name() -> None:
    result = make.scalar_count()
    result.query = {**result.query, "where": " and ".join(f"gap > {i}" for i in range(40))}
    name = chart_filename(result, "ru")
    assert len(name) <= 110 and SAFE.match(name)
    assert name.endswith("_2008-01-02_2026-01-07.png")


def test_an_error_result_still_has_a_name() -> None:
    assert SAFE.match(chart_filename(make.error_result()))


def test_scope_and_subtitle() -> None:
    result = make.grouped_weekdays()
    assert result.metadata is not None
    en, ru = words_for("en"), words_for("ru")
    assert scope_text(result.metadata, en) == "NQ · RTH · daily · 2008-01-02 — 2026-01-07"
    # The map that only names the group key is not repeated.
    assert subtitle_text(result.query, en) == "average range · by weekday"
    # A key the query named for a calendar call is that call's word, as the axis says it;
    # the measure in words, as the headline names it («mean(range) · по дню недели» had put
    # code where the person reads).
    assert subtitle_text(result.query, ru) == "средний диапазон · по дню недели"
    joined = {"join": [{"instrument": "ES"}, {"source": "fomc"}], "select": "count()"}
    assert subtitle_text(joined, en) == "number of bars · with ES, fomc"
    # A join's own session is named: CL's night beside NQ's RTH day, not CL's RTH.
    night = {"join": [{"instrument": "CL", "session": "OVERNIGHT"}], "select": "count()"}
    assert subtitle_text(night, ru) == "количество баров · с CL OVERNIGHT"
    then = {"group_by": "year()", "select": "max(close) as top", "then": {"select": "mean(top)"}}
    assert subtitle_text(then, en) == "maximum close (top) · by year · then: average top"
    # A calendar key in words, in the case "по" takes: «по month()» was code (p47d D5).
    assert subtitle_text(then, ru) == "максимум закрытия (top) · по году · затем: среднее «top»"
    hours = {"group_by": ["month()", "hour()", "fomc"], "select": "mean(range)"}
    assert subtitle_text(hours, ru) == "средний диапазон · по месяцу, часу, fomc"


def test_a_second_stage_key_named_for_a_calendar_call_is_in_words() -> None:
    """f49g: the month-of-year chart's subtitle read «по году, месяцу · затем: mean(ret) · по
    month»: the second stage's key is the column the first stage's ``month()`` made. A name
    of the query's own stays as written, a day name an aggregate picked too (``day``, the
    weekday of each week's high, says more than «по дню недели»)."""
    ru = words_for("ru")
    months = {
        "group_by": ["year()", "month()"],
        "select": "last(close) / first(open) - 1 as ret",
        "then": {"group_by": "month", "select": "mean(ret)"},
    }
    assert subtitle_text(months, ru) == (
        "last(close) / first(open) - 1 as ret · по году, месяцу · затем: среднее «ret» · по месяцу"
    )
    days = {
        "group_by": "week()",
        "select": "arg_max(dayname(), high) as day",
        "then": {"group_by": "day", "select": "count() as weeks"},
    }
    assert subtitle_text(days, ru).endswith("затем: количество недель · по day")
    own = {"map": {"big": "range > 300"}, "group_by": "big", "select": "count()"}
    assert subtitle_text(own, ru) == "количество баров · по big · big = range > 300"
    inside = {"map": {"inside": "inside_day()"}, "group_by": "inside", "select": "count()"}
    assert subtitle_text(inside, ru) == "количество баров · по inside · inside = inside_day()"


@pytest.mark.parametrize(
    ("column", "unit"),
    [
        ("mean_range", "points"),
        ("gap", "points"),
        ("change_pct", "%"),
        ("volume", "contracts"),
        ("mean_volume", "contracts"),
        ("close", "price"),
        ("count", "days"),
        ("rsi", None),
    ],
)
def test_units_from_column_names(column: str, unit: str | None) -> None:
    assert column_unit(column) == unit


def test_units_from_the_map_expression() -> None:
    query = {"map": {"chg": "(close - prev(close)) / prev(close) * 100"}}
    assert column_unit("chg", query=query) == "%"
    assert column_unit("mean_chg", query=query) == "%"
    result = make.scalar_count_intraday()
    assert axis_text("count", result) == "number of bars"  # the unit in its name
    assert axis_text("count", result, words_for("ru")) == "количество баров"


CHG_PCT = "(close - prev(close)) / prev(close) * 100"


@pytest.mark.parametrize(
    ("query", "column", "unit"),
    [
        # Followed through map references: next_chg is next(chg_pct), a percent.
        ({"map": {"chg_pct": CHG_PCT, "next_chg": "next(chg_pct)"}}, "next_chg", "%"),
        ({"map": {"c": CHG_PCT}, "select": "mean(c) as avg_next"}, "avg_next", "%"),
        # "* 100" of a ratio is a percent in a select expression too, whatever the name.
        (
            {"map": {"ret": "close / prev(close) - 1"}, "select": "std(ret) * 100 as vol"},
            "vol",
            "%",
        ),
        ({"select": "mean(close > open) as p_close_above_open"}, "p_close_above_open", "share"),
        ({"map": {"up": "close > open"}, "select": "mean(up) * 100 as up_pct"}, "up_pct", "%"),
        ({"map": {"up": "close > open"}, "select": "sum(up) as n_open"}, "n_open", "days"),
        ({"map": {"gap_open": "open - prev(close)"}}, "gap_open", "points"),
        ({"map": {"mid_close": "(high + low) / 2"}}, "mid_close", "price"),
        ({"map": {"sma50": "rolling_mean(close, 50)"}}, "sma50", "price"),
        ({"select": "std(close) as close_vol"}, "close_vol", "points"),
        ({"select": "sum(volume) as total"}, "total", "contracts"),
        ({"map": {"atr_vol": "atr(14)"}}, "atr_vol", "points"),
        # A distance scaled by a number is what its name says (a contract's dollars, ticks),
        # else nothing; by 1 or -1 it stays points; a percent of a range stays a percent.
        ({"map": {"pnl": "(close - prev(close)) * 50"}}, "pnl", "dollars"),
        ({"map": {"t": "range / 0.25"}, "select": "max(t) as max_ticks"}, "max_ticks", "ticks"),
        ({"map": {"stop": "atr(14) * 2"}}, "stop", None),
        ({"map": {"down": "(close - open) * -1"}}, "down", "points"),
        ({"map": {"rp": "range / open * 100"}}, "rp", "%"),
        # Mixed units, oscillators and unknowns show no unit rather than a guess.
        ({"select": "sum(close * volume) as dollar_vol"}, "dollar_vol", None),
        ({"map": {"x_pct": "close + volume"}}, "x_pct", None),
        ({"map": {"rsi_close": "rsi(close, 14)"}}, "rsi_close", None),
        ({"map": {"since": "bars_since(close > open)"}}, "since", "days"),
        # A rank is a percentile (59.7 read as points); over 100 it is a fraction, no unit.
        ({"map": {"r": "rank(range)"}, "select": "last(r) as r_now"}, "r_now", "percentile"),
        ({"map": {"r": "rolling_rank(range, 252)"}}, "r", "percentile"),
        ({"map": {"r": "rank(range) / 100"}}, "r", None),
        # A second stage's count counts the first stage's groups; its mean of a count not.
        (
            {"group_by": "year()", "select": "count() as n", "then": {"select": "mean(n)"}},
            "mean_n",
            "days",
        ),
        (
            {"group_by": "year()", "select": "count() as n", "then": {"select": "count()"}},
            "count",
            None,
        ),
        # Columns no expression made: the bars', a joined instrument's.
        ({"join": [{"instrument": "ES"}]}, "es_close", "price"),
        ({"join": [{"instrument": "ES"}]}, "es_volume", "contracts"),
    ],
)
def test_units_from_expressions(query: dict, column: str, unit: str | None) -> None:
    assert column_unit(column, "daily", query) == unit
