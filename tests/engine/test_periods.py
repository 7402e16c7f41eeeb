"""Periods resolve against the end of the data, never against today's clock."""

import datetime as dt

import pandas as pd
import pytest

from barb.errors import InvalidPeriod
from barb.script.periods import parse_period

END = dt.date(2026, 1, 7)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("2024", dt.date(2024, 1, 1), dt.date(2024, 12, 31)),
        ("2024-02", dt.date(2024, 2, 1), dt.date(2024, 2, 29)),
        ("2023-02", dt.date(2023, 2, 1), dt.date(2023, 2, 28)),
        ("2024-12", dt.date(2024, 12, 1), dt.date(2024, 12, 31)),
        ("2024-03-15", dt.date(2024, 3, 15), dt.date(2024, 3, 15)),
        ("2024-01-01:2024-06-30", dt.date(2024, 1, 1), dt.date(2024, 6, 30)),
        ("2020:2022", dt.date(2020, 1, 1), dt.date(2022, 12, 31)),
        ("2023-05:2023-07", dt.date(2023, 5, 1), dt.date(2023, 7, 31)),
        ("2025-01-01 to 2025-03-31", dt.date(2025, 1, 1), dt.date(2025, 3, 31)),
        ("2023-01-01:", dt.date(2023, 1, 1), None),
        (":2010-12-31", None, dt.date(2010, 12, 31)),
        ("last_year", dt.date(2025, 1, 1), dt.date(2025, 12, 31)),
        ("Last Year", dt.date(2025, 1, 1), dt.date(2025, 12, 31)),
        ("last_month", dt.date(2025, 12, 1), dt.date(2025, 12, 31)),
        ("last_week", dt.date(2025, 12, 29), dt.date(2026, 1, 4)),
        ("last_quarter", dt.date(2025, 10, 1), dt.date(2025, 12, 31)),
        ("ytd", dt.date(2026, 1, 1), END),
        ("mtd", dt.date(2026, 1, 1), END),
        ("wtd", dt.date(2026, 1, 5), END),  # END is a Wednesday; weeks start on Monday
        ("qtd", dt.date(2026, 1, 1), END),
        ("this_quarter", dt.date(2026, 1, 1), END),
        ("2025-Q4", dt.date(2025, 10, 1), dt.date(2025, 12, 31)),  # the label Barb prints
        ("2024-q1", dt.date(2024, 1, 1), dt.date(2024, 3, 31)),
        ("2025-Q2:2025-Q3", dt.date(2025, 4, 1), dt.date(2025, 9, 30)),
        ("2025-Q3:", dt.date(2025, 7, 1), None),
        ("this_week", dt.date(2026, 1, 5), END),
        ("last_7_days", dt.date(2026, 1, 1), END),
        ("last_1_month", dt.date(2025, 12, 8), END),
        ("last_2_years", dt.date(2024, 1, 8), END),
        ("all", None, None),
    ],
)
def test_period_forms(text: str, start: dt.date | None, end: dt.date | None) -> None:
    period = parse_period(text, END)
    assert (period.start, period.end) == (start, end)


def test_no_period_is_all_data() -> None:
    period = parse_period(None, END)
    assert (period.start, period.end, period.text) == (None, None, "all")


@pytest.mark.parametrize(
    "text",
    [
        "junk",
        "2024-13",
        "2024-02-30",
        "2025:2024",
        "last_0_days",
        "20240",
        "yesterday",
        "2025-Q5",
        "2025-Q0",
    ],
)
def test_bad_periods_explain_the_forms(text: str) -> None:
    with pytest.raises(InvalidPeriod) as info:
        parse_period(text, END)
    err = info.value.to_dict()
    assert err["step"] == "period"
    assert text in err["message"]
    assert "last_N_days" in err["hint"]
    # The hint lists the forms, the quarter ones among them.
    assert all(form in err["hint"] for form in ('"qtd"', '"2024-Q1"', '"wtd"', '"2024-03"'))


def test_relative_periods_follow_the_data_not_the_clock() -> None:
    assert parse_period("last_year", dt.date(2019, 6, 1)).start == dt.date(2018, 1, 1)
    # A Monday's week to date is that day alone.
    assert parse_period("wtd", dt.date(2019, 6, 3)).start == dt.date(2019, 6, 3)
    # The quarter of the data's last date, from its first day: 2019-05-17 is in Q2.
    assert parse_period("qtd", dt.date(2019, 5, 17)).start == dt.date(2019, 4, 1)


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ("today", '"period": "2026-01-07"'),
        ("yesterday", '"period": "2026-01-06"'),
        ("last_30_trading_days", '"from": "daily", "period": "last_30_bars"'),
        ("last 5 trading days", '"period": "last_5_bars"'),
        ("prev_month", '"period": "last_month"'),
    ],
)
def test_words_for_a_day_or_span_are_told_the_period_they_mean(text: str, meant: str) -> None:
    """ "yesterday", "today", "last_30_trading_days" got only the list of forms (one wasted
    round trip each): the hint now starts with the period meant, the list after it."""
    with pytest.raises(InvalidPeriod) as info:
        parse_period(text, END, day_before=lambda: dt.date(2026, 1, 6))
    hint = info.value.to_dict()["hint"]
    assert hint.index(meant) < hint.index("Other forms:"), hint
    assert '"2024-Q1"' in hint


def test_yesterday_is_the_data_s_trading_date_before_its_last(engine_settings, db) -> None:
    """Counted from the data's last trading day, as the relative periods are; the hinted
    period holds that day's bar."""
    from barb import execute

    before = db.execute(
        "SELECT max(tdate) FROM bars WHERE tdate < (SELECT max(tdate) FROM bars)"
    ).fetchone()[0]
    result = execute(
        {"session": "RTH", "from": "daily", "period": "yesterday"}, "NQ", settings=engine_settings
    )
    assert not result.ok
    assert f'"period": "{before}"' in result.to_dict()["hint"]
    hinted = execute(
        {"session": "RTH", "from": "daily", "period": str(before)}, "NQ", settings=engine_settings
    )
    assert hinted.ok and len(hinted.table) == 1


@pytest.mark.parametrize("timeframe", ["daily", "1h"])
def test_the_last_bars_up_to_a_date_are_those_before_it(
    engine_settings, db, timeframe: str
) -> None:
    """ "last_4_bars:D", the form a plan pins last_4_bars to when it is shown (bot's
    ``plan.pinned``): the last 4 bars of the session and timeframe whose trading date is D
    or before, whatever bars the data holds after D (imported before Run was pressed)."""
    from barb import execute

    dates = [row[0] for row in db.execute("SELECT DISTINCT tdate FROM bars ORDER BY 1").fetchall()]
    end = dates[len(dates) // 2]
    # RTH's bars: daily ones by trading date; hourly ones from 09:30, the last one 16:30.
    bucket = "0" if timeframe == "daily" else "(mod - 570) // 60"
    expected = db.execute(
        f"""SELECT DISTINCT tdate, {bucket} AS b FROM bars
            WHERE mod >= 570 AND mod < 1020 AND tdate <= ? ORDER BY tdate DESC, b DESC LIMIT 4""",
        [end],
    ).fetchall()[::-1]
    query = {"session": "RTH", "from": timeframe, "period": f"last_4_bars:{end}"}
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    stamps = pd.to_datetime(result.table["timestamp" if timeframe == "1h" else "date"])
    shown = [
        (s.date(), 0 if timeframe == "daily" else (s.hour * 60 + s.minute - 570) // 60)
        for s in stamps
    ]
    assert shown == [(d, b) for d, b in expected]
    assert end < dates[-1]  # bars after it were there, and left out
