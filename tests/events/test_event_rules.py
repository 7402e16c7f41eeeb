"""Rule-based events, checked against dates computed independently with the calendar module."""

from __future__ import annotations

import calendar
import datetime as dt

import numpy as np
import pytest
from nyse_holidays import NYSE_EARLY_CLOSES_2024

from barb.events import event_dates
from barb.events.rules import stock_market_early_closes
from barb.instruments import Instrument

D = dt.date
YEARS = range(2008, 2031)


def easter(year: int) -> dt.date:
    """Gregorian Easter Sunday (anonymous Gregorian algorithm)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    ell = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * ell) // 451
    month, day = divmod(h + ell - 7 * m + 114, 31)
    return D(year, month, day + 1)


def options_market_closed(day: dt.date) -> bool:
    """The only US options-market holidays that can fall on a third Friday (15th-21st):
    Good Friday, and Juneteenth (a market holiday from 2022; Friday the 18th when the 19th is
    a Saturday)."""
    good_friday = easter(day.year) - dt.timedelta(days=2)
    juneteenth = D(day.year, 6, 19)
    if juneteenth.weekday() == 5:
        juneteenth -= dt.timedelta(days=1)
    return day == good_friday or (day.year >= 2022 and day == juneteenth)


def expected_expirations(months: tuple[int, ...]) -> list[dt.date]:
    out = []
    for year in YEARS:
        for month in months:
            fridays = [
                week[calendar.FRIDAY]
                for week in calendar.monthcalendar(year, month)
                if week[calendar.FRIDAY]
            ]
            day = D(year, month, fridays[2])
            if options_market_closed(day):
                day -= dt.timedelta(days=1)
            out.append(day)
    return out


def test_easter_helper() -> None:
    assert [easter(y) for y in (2008, 2014, 2019, 2022, 2025)] == [
        D(2008, 3, 23), D(2014, 4, 20), D(2019, 4, 21), D(2022, 4, 17), D(2025, 4, 20),
    ]  # fmt: skip


@pytest.mark.parametrize("symbol", ["es", "nq", "cl"])
def test_opex_is_the_third_friday_or_the_thursday_before_a_holiday(
    symbol: str, request: pytest.FixtureRequest
) -> None:
    instrument: Instrument = request.getfixturevalue(symbol)
    got = list(event_dates("opex", instrument)["date"].dt.date)
    assert got == expected_expirations(tuple(range(1, 13)))


@pytest.mark.parametrize("symbol", ["es", "nq", "cl"])
def test_quad_witching_is_the_quarterly_subset(symbol: str, request: pytest.FixtureRequest) -> None:
    instrument: Instrument = request.getfixturevalue(symbol)
    quad = event_dates("quad_witching", instrument)
    assert list(quad["date"].dt.date) == expected_expirations((3, 6, 9, 12))
    opex = event_dates("opex", instrument)
    assert set(quad["date"]) == set(opex.loc[opex["quarterly"], "date"])


@pytest.mark.parametrize(
    ("thursday", "holiday"),
    [
        (D(2008, 3, 20), "Good Friday 2008-03-21 (quad witching)"),
        (D(2014, 4, 17), "Good Friday 2014-04-18"),
        (D(2019, 4, 18), "Good Friday 2019-04-19"),
        (D(2022, 4, 14), "Good Friday 2022-04-15"),
        (D(2025, 4, 17), "Good Friday 2025-04-18 (open on CME Globex Equity in the calendar)"),
        (D(2026, 6, 18), "Juneteenth 2026-06-19 (quad witching)"),
    ],
)
def test_holiday_thursday_expirations(es: Instrument, thursday: dt.date, holiday: str) -> None:
    table = event_dates("opex", es)
    row = table[table["date"].dt.date == thursday]
    assert len(row) == 1, holiday
    assert row["moved_from"].iloc[0].date() == thursday + dt.timedelta(days=1)
    # Good Friday 2017 was the second Friday of April: April opex stayed on the 21st.
    assert D(2017, 4, 21) in set(table["date"].dt.date)


def test_expiration_time_is_the_opening_print(es: Instrument) -> None:
    for name in ("opex", "quad_witching"):
        times = event_dates(name, es)["time"]
        assert (times.dt.strftime("%H:%M") == "09:30").all()


def test_eia_wednesday_1030_or_thursday_1100_after_a_holiday(cl: Instrument) -> None:
    table = event_dates("eia", cl)
    by_day = {row.date.date(): row for row in table.itertuples()}
    normal = by_day[D(2024, 1, 10)]
    assert (normal.time.strftime("%a %H:%M"), normal.holiday_delay) == ("Wed 10:30", False)
    for thursday in [
        D(2024, 1, 18),  # MLK Day Monday
        D(2023, 7, 6),  # July 4 on Tuesday
        D(2018, 7, 5),  # July 4 on Wednesday
        D(2020, 11, 12),  # Veterans Day on Wednesday
        D(2024, 6, 20),  # Juneteenth on Wednesday
        D(2015, 9, 10),  # Labor Day
    ]:
        row = by_day[thursday]
        assert (row.time.strftime("%a %H:%M"), row.holiday_delay) == ("Thu 11:00", True)
    # One release a week, never on a weekend.
    assert (table["date"].diff().dropna().dt.days.between(6, 8)).all()
    assert set(table["date"].dt.weekday) == {2, 3}


def test_eia_is_only_for_crude(es: Instrument, cl: Instrument) -> None:
    assert "eia" in cl.events
    assert "eia" not in es.events


def test_the_stock_market_s_half_days_close_at_1300() -> None:
    """CASH's warning names the stock market's own close on its half days, where the index
    futures trade on to 13:15 (p38b Q19)."""
    closes = stock_market_early_closes()
    found = {day: minute for day, minute in closes.items() if str(day).startswith("2024")}
    assert found == {np.datetime64(day, "D"): 13 * 60 for day in NYSE_EARLY_CLOSES_2024}
