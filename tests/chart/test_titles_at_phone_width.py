"""Titles as a phone shows them: a group of several keys stays in one line, a year ×
weekday title names its measure, a tie holding the short last bar reads one pair of
brackets. Checked on the drawn figure against DuckDB over the sample's minute bars."""

from __future__ import annotations

import re

import duckdb
import pandas as pd
import pytest
from engine_results import RTH, figure, run
from test_reading_texts import numbers, title_lines

from barb.charts import chart_headline
from barb.settings import EngineSettings

WEEKDAYS = {"en": ["Mon", "Tue", "Wed", "Thu", "Fri"], "ru": ["Пн", "Вт", "Ср", "Чт", "Пт"]}


def _broken_labels(lines: list[str], language: str) -> list[str]:
    """Lines that end inside a group's label («Ср ·», "2022 ·") or start with its second
    key («23:00 4 810», "Wed 436.46"): the label was cut in two."""
    days = "|".join(WEEKDAYS[language])
    ends = re.compile(rf"(?:\b(?:{days})|\d{{4}})\s·$")
    starts = re.compile(rf"^(?:\d\d:\d\d|(?:{days})\b)")
    return [line for line in lines if ends.search(line.strip()) or starts.match(line.strip())]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_year_by_weekday_title_names_its_measure_and_keeps_its_labels_whole(
    sample_settings: EngineSettings, days: pd.DataFrame, language: str
) -> None:
    """«▲ 2022 · Ср 436,46 (+3 в пределах шума) · ▼ 2013 · Пн 23,45 (+4 в пределах шума)»:
    the Russian title fitted only without saying it was the average range."""
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": ["year()", "dayofweek()"],
        "select": "mean(range)",
    }
    lines = title_lines(figure(run(query, sample_settings), language))
    drawn = " ".join(lines)
    name = {"en": "average range: ", "ru": "средний диапазон: "}[language]
    assert drawn.startswith(name), lines
    assert len(lines) <= 3 and "…" not in drawn
    assert not _broken_labels(lines, language), lines
    ranges = (days["high"] - days["low"]).rename("r").to_frame()
    ranges["year"], ranges["dow"] = ranges.index.year, ranges.index.dayofweek
    ranges = ranges[ranges["year"] < ranges["year"].max()]  # the last, begun year is not ranked
    means = ranges.groupby(["year", "dow"])["r"].mean()
    for (year, dow), mark in ((means.idxmax(), "▲"), (means.idxmin(), "▼")):
        label = f"{mark}\u00a0{year}\u00a0·\u00a0{WEEKDAYS[language][dow]} "
        assert label in drawn, (label, drawn)
        after = drawn.split(label)[1].replace(",", ".") if language == "en" else None
        value = float(after.split()[0]) if after else numbers(drawn.split(label)[1])[0]
        assert value == pytest.approx(means[(year, dow)], abs=0.006)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_weekday_by_hour_title_keeps_each_weekday_with_its_hour(
    sample_settings: EngineSettings, language: str
) -> None:
    """«средний объём: ▲ Пт · 08:00 73 918 · ▼ Ср ·» | «23:00 4 810…»: the hour at a line's
    start read as a group of its own."""
    query = {
        "session": "ETH",
        "from": "1h",
        "period": "2024",
        "group_by": ["dayofweek()", "hour()"],
        "select": "mean(volume)",
    }
    lines = title_lines(figure(run(query, sample_settings), language))
    assert not _broken_labels(lines, language), lines


@pytest.mark.parametrize(("language", "tie"), [("en", "tie: "), ("ru", "равны: ")])
def test_a_tie_with_the_short_last_bar_reads_one_pair_of_brackets(
    sample_settings: EngineSettings, con: duckdb.DuckDBPyConnection, language: str, tie: str
) -> None:
    """RTH hours with no bar over 400 points, the 30-minute 16:30 among them, read
    "0 bars (tie: 11:30, 14:30, 16:30 (30 min))": two brackets closed at once."""
    query = {
        "session": "RTH",
        "from": "1h",
        "where": "range > 400",
        "group_by": "hour()",
        "select": "count()",
    }
    headline = chart_headline(run(query, sample_settings), language)
    assert "))" not in headline and "((" not in headline, headline
    # The RTH hours (bars from 09:30, each hour's on :30) with no bar over 400 points.
    counts = con.execute(
        f"""
        WITH m AS (SELECT *, hour(timestamp) * 60 + minute(timestamp) AS minute FROM nq
                   WHERE {RTH}),
             bars AS (SELECT trading_date, (minute - 570) // 60 AS slot,
                             max(high) - min(low) AS r FROM m GROUP BY 1, 2)
        SELECT slot, count(*) FILTER (WHERE r > 400) AS n FROM bars GROUP BY 1 ORDER BY 1
        """
    ).df()
    empty = counts[counts["n"] == 0]["slot"].tolist()
    assert len(empty) >= 2 and 7 in empty  # the tie the title names holds 16:30
    names = [f"{9 + slot}:30" if slot else "09:30" for slot in empty]
    names[-1] += " — 30 " + ("min" if language == "en" else "мин")
    assert f"({tie}{', '.join(names)})" in headline, headline
