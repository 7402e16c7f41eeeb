"""The day after a US holiday session: prev(close) is the holiday's own close (Thanksgiving's
13:00 close for the Friday after it), not the last stock-market close, and a return or gap
read from it says so, with the form that reads the last stock-market close. Expected values
from pandas over the sample's minute bars, with the NYSE's closed days from
pandas_market_calendars; the form is checked on every day after a holiday session, the
Mondays after Good Friday (no RTH bar, so prev(close) is already Thursday's) and the days
after Sandy's two closed days among them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from barb import execute
from barb.result import Result
from barb.settings import EngineSettings

RTH_START, RTH_END = 570, 1020  # 09:30-17:00
RET = "(close / prev(close) - 1) * 100"
ONE_BACK = "if(prev(holiday()), session_close('RTH', 2), prev(close))"
TWO_BACK = (
    "if(prev(holiday()), if(prev(holiday(), 2), session_close('RTH', 3), "
    "session_close('RTH', 2)), prev(close))"
)


@pytest.fixture(scope="module")
def rth(sample_settings) -> pd.DataFrame:
    """NQ's RTH closes per date, each date's prev(close), the last close of a day the NYSE
    traded before it, and whether the date before it is a holiday session."""
    import pandas_market_calendars as mcal

    from barb.data.store import data_path

    bars = pd.read_parquet(
        data_path("NQ", sample_settings), columns=["trading_date", "minute", "close"]
    )
    bars = bars[(bars["minute"] >= RTH_START) & (bars["minute"] < RTH_END)]
    close = bars.groupby("trading_date")["close"].last()
    nyse = mcal.get_calendar("NYSE").valid_days("2007-12-01", "2026-12-31").tz_localize(None)
    holiday = ~close.index.isin(nyse)
    return pd.DataFrame(
        {
            "close": close,
            "prev": close.shift(),
            "stock": close.where(~holiday).ffill().shift(),
            "after": np.concatenate(([False], holiday[:-1])),
        }
    )


def _ask(query: dict, settings: EngineSettings) -> Result:
    result = execute({"session": "RTH", "from": "daily", **query}, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def _said(result: Result) -> list[str]:
    return [w for w in result.metadata.warnings if "rows kept follow" in w]


def test_the_day_after_thanksgiving_is_said_with_the_last_stock_close(sample_settings, rth) -> None:
    fridays = rth[rth["after"] & (rth.index.month == 11)]
    query = {
        "map": {"ret": RET},
        "where": "post_holiday() and month() == 11",
        "select": ["mean(ret) as ret", "count() as days"],
    }
    result = _ask(query, sample_settings)
    assert result.summary.values["days"] == len(fridays) == 18
    from_thursday = (fridays["close"] / fridays["prev"] - 1).mean() * 100
    assert result.summary.values["ret"] == pytest.approx(from_thursday)  # +0.222%
    first = fridays.index[0]
    thursday = rth.index[rth.index.get_loc(first) - 1]
    assert _said(result) == [
        f"18 of the 18 rows kept follow a US holiday session (e.g. {first:%Y-%m-%d} after "
        f"{thursday:%Y-%m-%d}): prev(close) there is the holiday's own close (the futures "
        "traded, mostly short hours; the stock market was shut), not the last stock-market "
        f"close. From that close: {ONE_BACK}."
    ]
    # The form given reads Wednesday's close (+0.452%), and says nothing more.
    fixed = _ask({**query, "map": {"ret": f"(close / {ONE_BACK} - 1) * 100"}}, sample_settings)
    from_wednesday = (fridays["close"] / fridays["stock"] - 1).mean() * 100
    assert fixed.summary.values["ret"] == pytest.approx(from_wednesday)
    assert abs(from_wednesday - from_thursday) > 0.2
    assert _said(fixed) == []


def test_the_forms_read_the_last_stock_close_on_every_day_after_a_closure(
    sample_settings, rth
) -> None:
    """Every post_holiday() day: after a holiday session the form steps back to the last
    stock-market close; after Good Friday, Christmas or New Year (no RTH bar) prev(close)
    already is it. The one-step form misses only 2012-10-31, after Sandy's second day."""
    settings = EngineSettings(data_dir=sample_settings.data_dir, max_table_rows=10_000)
    result = _ask(
        {
            "map": {"one": ONE_BACK, "two": TWO_BACK, "pc": "prev(close)"},
            "where": "post_holiday()",
            "select": ["date()", "one", "two", "pc"],
            "limit": 10_000,
        },
        settings,
    )
    got = result.table.set_index(pd.to_datetime(result.table["date"]))
    expected = rth.loc[got.index]
    assert (~expected["after"]).sum() > 40  # days after a closure without an RTH bar
    assert np.allclose(got["two"], expected["stock"], equal_nan=True)
    assert np.allclose(got["pc"], expected["prev"], equal_nan=True)
    missed = got.index[~np.isclose(got["one"], expected["stock"], equal_nan=True)]
    assert [f"{d:%Y-%m-%d}" for d in missed] == ["2012-10-31"]
    # The query reads prev(close) in a column and holiday() itself: it knows.
    assert _said(result) == []
    sandy = _ask({"period": "2012-10-31", "map": {"gap": "open - prev(close)"}}, settings)
    assert _said(sandy) == [
        "1 of the 1 rows kept follows a US holiday session (2012-10-31 after 2012-10-30): "
        "prev(close) there is the holiday's own close (the futures traded, mostly short "
        "hours; the stock market was shut), not the last stock-market close. From that close: "
        f"{TWO_BACK}."
    ]


def test_a_group_of_days_after_holidays_is_said(sample_settings, rth) -> None:
    result = _ask(
        {"map": {"ret": RET}, "group_by": "post_holiday()", "select": "mean(ret)"},
        sample_settings,
    )
    assert _said(result)[0].startswith(
        f"{int(rth['after'].sum())} of the {len(rth):,} rows kept follow a US holiday session"
    )


@pytest.mark.parametrize(
    "query",
    [
        # Every day, or every weekday: 2.5% of the days, 8.5% of Tuesdays follow a holiday.
        {"map": {"ret": RET}, "select": "mean(ret)"},
        {"map": {"ret": RET, "wd": "dayname()"}, "group_by": "wd", "select": "mean(ret)"},
        # No prev(close) read.
        {"map": {"body": "close - open"}, "where": "post_holiday()", "select": "mean(body)"},
        # A holiday is one of ETH's days.
        {"session": "ETH", "map": {"ret": RET}, "where": "post_holiday()", "select": "mean(ret)"},
    ],
)
def test_ordinary_questions_say_nothing(sample_settings, query) -> None:
    assert _said(_ask(query, sample_settings)) == []


@pytest.mark.parametrize(
    ("year", "order", "limit"), [(2024, "desc", 20), (2023, "asc", 20), (2024, "desc", 30)]
)
def test_a_day_after_a_holiday_among_the_rows_listed_is_named(
    year: int, order: str, limit: int, sample_settings, rth
) -> None:
    """ "The 20 best days of 2024" held the day after Labor Day, measured from Monday's 13:00
    close: 1 of 20 rows (5%), under the 10% that says it of all the rows kept, and nothing
    was said though the model reads each row. A ranking or list the model reads whole (at
    most 25 rows) names every such row; a longer one keeps the share rule."""
    days = rth.loc[str(year)]
    ranked = (days["close"] / days["prev"] - 1).sort_values(ascending=order == "asc")
    listed = days.loc[ranked.index[:limit]].sort_index()
    after = listed.index[listed["after"]]
    assert len(after) >= 1 and len(after) / limit < 0.1  # under the share rule
    query = {"period": str(year), "map": {"ret": RET}, "sort": f"ret {order}", "limit": limit}
    result = _ask(query, sample_settings)
    assert sorted(result.table["date"].astype(str)) == [f"{d:%Y-%m-%d}" for d in listed.index]
    said = _said(result)  # "rows kept follow" is in "follows" too
    if limit > 25:
        assert said == []
        return
    named = ", ".join(
        f"{d:%Y-%m-%d} after {rth.index[rth.index.get_loc(d) - 1]:%Y-%m-%d}" for d in after
    )
    follow = "follows" if len(after) == 1 else "follow"
    assert said == [
        f"{len(after)} of the {limit} rows kept {follow} a US holiday session ({named}): "
        "prev(close) there is the holiday's own close (the futures traded, mostly short hours; "
        "the stock market was shut), not the last stock-market close. From that close: "
        f"{ONE_BACK}."
    ]
