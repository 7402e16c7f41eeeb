"""Session concepts (opening range, initial balance, cash close…): found by name or alias,
each with a query that runs, and named in the model's query reference."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from barb import execute
from barb.data.sample import write_samples
from barb.instruments import available_instruments, load_instrument
from barb.reference import describe_concept, query_reference
from barb.session_concepts import session_concepts
from barb.session_times import SessionTimes

CONCEPTS = list(session_concepts().values())


@pytest.mark.parametrize("concept", CONCEPTS, ids=lambda c: c.name)
def test_every_concept_query_runs(concept, engine_settings) -> None:
    query = concept.text_for(SessionTimes(load_instrument("NQ"))).query
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, (concept.name, result.to_dict())


@pytest.mark.slow
@pytest.mark.parametrize("symbol", available_instruments())
@pytest.mark.parametrize("concept", CONCEPTS, ids=lambda c: c.name)
def test_every_concept_query_runs_on_every_instrument(concept, symbol, sample_settings) -> None:
    """The query as each instrument reads it, with its own times (and, where it lacks a
    session the concept needs, the text it reads instead), runs on its sample."""
    write_samples([symbol], sample_settings)
    query = concept.text_for(SessionTimes(load_instrument(symbol))).query
    result = execute(query, symbol, settings=sample_settings)
    assert result.ok, (concept.name, symbol, result.to_dict())


@pytest.mark.parametrize("concept", CONCEPTS, ids=lambda c: c.name)
def test_every_concept_is_found_by_name_and_alias(concept) -> None:
    for name in (concept.name, concept.name.replace("_", " ").upper(), *concept.aliases):
        text = describe_concept(name)
        assert text.startswith(concept.title), name
        assert '"session"' in text  # the query comes with it


def test_the_reference_names_windows_concepts_and_the_tie_rule() -> None:
    text = query_reference(load_instrument("NQ"))
    assert "'HH:MM-HH:MM'" in text
    assert "opening_range" in text and "initial_balance" in text
    assert "CASH" in text and "RTH_CLOSE" in text
    assert "earliest" in text and "arg_max(time(), high)" in text
    assert "09:30, 10:30" in text  # hourly RTH bars are named by their start


def test_concepts_state_the_session_hours() -> None:
    assert "09:30-10:30" in describe_concept("initial balance")
    cash = describe_concept("cash close")
    assert "16:00" in cash and "RTH is 09:30-17:00" in cash and "session_close('CASH')" in cash
    assert "16:00-17:00" in describe_concept("post-cash hour")
    assert "earliest" in describe_concept("which hour makes the high")


def test_a_misspelt_concept_gets_suggestions() -> None:
    assert "opening_range" in describe_concept("opening rnage")


def test_get_concept_answers_for_sessions_and_functions_too() -> None:
    """A model asks get_concept about what traders name: a session, an indicator, an SMA."""
    nq = load_instrument("NQ")
    rth = describe_concept("RTH", nq)
    assert rth.startswith("RTH session of NQ: 09:30 — 17:00") and '"session": "RTH"' in rth
    assert describe_concept("overnight session", nq).startswith("OVERNIGHT session of NQ: 18:00")
    atr = describe_concept("ATR", nq)
    assert atr.startswith("atr(n=14) — Average True Range") and "get_indicators" in atr
    sma = describe_concept("SMA", nq)
    assert sma.startswith("SMA in Barb Script is rolling_mean(col, n, [by])")
    assert describe_concept("RTH").startswith("No concept called")  # sessions need the instrument


@pytest.mark.parametrize(
    ("symbol", "name", "said"),
    [
        ("NQ", "settlement", "session_close('15:59-16:00')"),
        ("CL", "Расчётная цена", "session_close('14:28-14:30')"),
        ("CL", "пит-сессия", '"session": "09:00-14:30"'),
        ("ES", "globex high", "session_high('OVERNIGHT')"),
        ("NQ", "гэп выходных", "week() != prev(week())"),
        ("NQ", "диапазон открытия", "session_high('09:30-09:45')"),
        ("CL", "ФРС", "FOMC"),
        ("NQ", "power hour", '"session": "15:00-16:00"'),
        ("ES", "пауэр ауэр", '"session": "15:00-16:00"'),
        ("NQ", "последний час торгов акциями", "15:00-16:00"),
        ("CL", "power hour", "equity-index notion"),
        ("CL", "power hour", '"session": "14:00-14:30"'),
        ("NQ", "азиатская сессия", "ASIAN session of NQ: 18:00 — 03:00"),
        ("CL", "Европейская сессия", "EUROPEAN session of CL: 03:00 — 09:00"),
        # The night before the cash open, not the Globex day (p31c A1: ETH's range is two
        # thirds larger).
        ("ES", "ночная сессия", "OVERNIGHT session of ES: 18:00 — 09:30"),
        ("NQ", "овернайт", "OVERNIGHT session of NQ"),
        ("CL", "отчёт по нефти", "EIA Weekly Petroleum Status Report"),
        ("CL", "нефтяной отчет", "EIA Weekly Petroleum Status Report"),
        ("NQ", "обед", '"session": "12:00-13:00"'),
        ("NQ", "lunch hour", "12:00-13:00"),
        ("NQ", "half day", "13:15 ET"),
        ("NQ", "сокращенная сессия", "early_close()"),
        ("NQ", "короткий день", "09:15 ET"),
        ("CL", "early close", "13:45 ET"),
        ("NQ", "golden cross", "rolling_mean(close, 200)"),
        ("NQ", "золотой крест", "prev(sma50) <= prev(sma200)"),
        ("NQ", "death cross", "prev(sma50) >= prev(sma200)"),
        ("NQ", "крест смерти", "bollinger_middle"),
        ("NQ", "santa claus rally", "trading_days_left('month', 'stocks') < 5"),
        ("NQ", "ралли санта клауса", "days == 7"),
        # Daily bars cannot order a stop after an intraday entry: minute bars from the
        # opening range's end (p32e Q19).
        ("NQ", "стоп-лосс", "time() >= '09:45' and high > orh"),
        ("CL", "что сработало первым", "time() >= '09:15' and high > orh"),
        ("NQ", "stop loss", "prev(atr(14)), not atr(14)"),
        # The equity's drawdown from a 0 start; the asking instrument's multiplier. A price's
        # drawdown is its own concept, with the episodes and their recovery (p47a).
        ("NQ", "просадка капитала", "if(cummax(equity) > 0, cummax(equity), 0)"),
        ("NQ", "максимальная просадка", "days_between(peak, next(peak))"),
        ("NQ", "max drawdown", "get_concept backtest_basics"),
        ("ES", "профит-фактор", "pnl * 50"),
        ("CL", "win rate", "pnl * 1000"),
    ],
)
def test_concepts_traders_name_in_english_and_russian(symbol: str, name: str, said: str) -> None:
    """Each instrument reads its own settlement window and floor hours (NYMEX settles CL at
    14:28-14:30 ET, CME the index futures at 16:15 ET)."""
    assert said in describe_concept(name, load_instrument(symbol))


def test_the_weekend_gap_is_the_first_trading_day_of_each_week(engine_settings) -> None:
    """After a holiday Monday the gap lands on Tuesday: counted against the ETH daily bars'
    own weeks, computed here with pandas."""
    import pandas as pd

    from barb.data.store import data_path

    nq = load_instrument("NQ")
    concept = session_concepts()["weekend_gap"]
    query = concept.text_for(SessionTimes(nq)).query | {"period": "2024"}
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    bars = pd.read_parquet(data_path("NQ", engine_settings), columns=["trading_date"])
    dates = pd.Series(bars["trading_date"].unique()).sort_values()
    weeks = dates.dt.to_period("W-SUN")
    # The data's first day has no close before it, so no gap.
    first = dates[(weeks != weeks.shift()).to_numpy()].iloc[1:]
    assert result.summary.values["count"] == int((first.dt.year == 2024).sum())
    # The Sunday reopen before a holiday Monday is that week's gap: no advice to drop it.
    assert not [w for w in result.metadata.warnings if "holiday sessions" in w]


@pytest.mark.slow
@pytest.mark.parametrize("symbol", ["NQ", "CL"])
def test_the_settlement_example_measures_a_move(symbol: str, sample_settings) -> None:
    """On CL the settlement window ends with RTH (14:30): an example on RTH bars compared the
    close with itself and always said 0. On ETH it measures the move after the settle."""
    write_samples([symbol], sample_settings)
    query = session_concepts()["settlement"].text_for(SessionTimes(load_instrument(symbol))).query
    result = execute(query, symbol, settings=sample_settings)
    assert result.ok, result.to_dict()
    assert result.summary.values["mean_abs_move"] > 0


@pytest.mark.slow
def test_the_settlement_example_takes_each_era_s_window(sample_settings) -> None:
    """ES settled at 16:15 through 2020-10-23 and at 16:00 since: the example read 16:00
    for all history (2.908 for 2.413 on the sample). Checked with pandas over the bars."""
    import pandas as pd

    from barb.data.store import data_path

    write_samples(["ES"], sample_settings)
    concept = session_concepts()["settlement"]
    query = concept.text_for(SessionTimes(load_instrument("ES"))).query
    result = execute(query, "ES", settings=sample_settings)
    assert result.ok, result.to_dict()

    bars = pd.read_parquet(
        data_path("ES", sample_settings), columns=["trading_date", "minute", "close"]
    )
    day_close = bars.groupby("trading_date")["close"].last()
    old_era = bars["trading_date"] <= pd.Timestamp("2020-10-23")
    at = bars["minute"] == (16 * 60 + 14)
    at = at.where(old_era, bars["minute"] == 15 * 60 + 59)
    settle = bars[at].groupby("trading_date")["close"].last()
    move = (day_close - settle).dropna()
    assert result.summary.values["days"] == len(move)
    assert result.summary.values["mean_abs_move"] == pytest.approx(move.abs().mean(), rel=1e-9)


def _rth_days(settings, symbol: str = "NQ") -> pd.DataFrame:
    """RTH daily bars of the raw minute bars (09:30-17:00 for NQ): high, low, close."""
    from barb.data.store import data_path

    bars = pd.read_parquet(data_path(symbol, settings))
    rth = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]
    return rth.groupby("trading_date").agg(
        high=("high", "max"), low=("low", "min"), close=("close", "last")
    )


@pytest.mark.slow
def test_the_early_close_times_are_those_of_the_bars(sample_settings) -> None:
    """The last minute bar of each early-close day of NQ, from the raw bars and the exchange
    calendar read directly, with the two closes at 08:30 CT on the national days of mourning
    that CME announced (notices of 2018-12-02 and 2024-12-30) and the calendar lacks: the
    times the concept states, and the query's table."""
    import pandas_market_calendars as mcal

    from barb.data.store import data_path
    from barb.events.rules import us_market_closed

    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=["timestamp", "trading_date"])
    last = bars.groupby("trading_date")["timestamp"].max()
    cal = mcal.get_calendar("CME Globex Equity")
    early = cal.early_closes(cal.schedule(last.index.min(), last.index.max())).index
    mourning = pd.DatetimeIndex(["2018-12-05", "2025-01-09"])
    last = last[last.index.isin(early.tz_localize(None).union(mourning))]
    shut = us_market_closed(last.index.to_numpy().astype("datetime64[D]"))
    kinds = pd.DataFrame({"last_bar": last.dt.strftime("%H:%M"), "holiday": shut})
    expected = kinds.groupby(["last_bar", "holiday"]).size()
    assert expected.to_dict() == {
        ("09:14", True): 7,  # Good Fridays: over before the 09:30 open
        ("09:29", True): 2,  # the days of mourning: closed at the 09:30 open
        ("11:29", True): 38,  # holidays until Feb 2014
        ("12:59", True): 74,  # holidays since
        ("13:14", False): 39,  # Jul 3, the day after Thanksgiving, Dec 24
    }
    half_days = kinds[~kinds["holiday"]].index.strftime("%m-%d")
    assert set(half_days) <= {"07-03", "12-24"} | {f"11-{d}" for d in range(23, 30)}
    assert len(kinds[kinds.index.year == 2024]) == 11

    nq = load_instrument("NQ")
    text = describe_concept("early close", nq)
    for said in (
        "13:00 ET",
        "11:30 ET until Feb 2014",
        "13:15 ET",
        "09:15 ET",
        "2024: 11",
        "09:30 ET on the national days of mourning (2018-12-05",
    ):
        assert said in text, said
    query = session_concepts()["early_close"].text_for(SessionTimes(nq)).query
    result = execute(query, "NQ", settings=sample_settings)
    assert result.ok, result.to_dict()
    table = result.table.set_index(["last_bar", "holiday"])["days"]
    assert table.to_dict() == expected.to_dict()


@pytest.mark.slow
def test_the_santa_rally_matches_pandas(sample_settings) -> None:
    """The last 5 NYSE days of December and the first 2 of January, from the close before
    them to the last one's close, over the seasons the data holds whole."""
    import pandas_market_calendars as mcal

    day = _rth_days(sample_settings)
    stocks = mcal.get_calendar("NYSE").valid_days(day.index.min(), day.index.max())
    stocks = pd.DatetimeIndex(stocks.tz_localize(None)).intersection(day.index)
    returns = []
    for year in range(day.index.year.min(), day.index.year.max()):
        december = stocks[(stocks.year == year) & (stocks.month == 12)][-5:]
        january = stocks[(stocks.year == year + 1) & (stocks.month == 1)][:2]
        if len(december) < 5 or len(january) < 2:
            continue
        before = day["close"].iloc[day.index.get_loc(december[0]) - 1]
        returns.append((day["close"][january[-1]] / before - 1) * 100)
    returns = pd.Series(returns)

    query = session_concepts()["santa_rally"].text_for(SessionTimes(load_instrument("NQ"))).query
    result = execute(query, "NQ", settings=sample_settings)
    assert result.ok, result.to_dict()
    assert result.summary.values["seasons"] == len(returns) == 18
    assert result.summary.values["mean_ret_pct"] == pytest.approx(returns.mean(), rel=1e-9)
    assert result.summary.values["up_share"] == pytest.approx((returns > 0).mean())


def _stock_days(day: pd.DataFrame) -> pd.DatetimeIndex:
    """The NYSE's trading days, through the end of the data's last month."""
    import pandas_market_calendars as mcal

    end = day.index.max() + pd.offsets.MonthEnd(0)
    days = mcal.get_calendar("NYSE").valid_days(day.index.min(), end)
    return pd.DatetimeIndex(days.tz_localize(None))


@pytest.mark.slow
def test_the_turn_of_the_month_matches_pandas(sample_settings) -> None:
    """The last NYSE day of each month and the first three of the next against the rest, by
    close-to-close return over the stock market's days only: a holiday session's close is
    never the base of the next day's return."""
    day = _rth_days(sample_settings)
    calendar = _stock_days(day)
    month = calendar.to_period("M")
    number = pd.Series(1, index=calendar).groupby(month).cumsum()
    last = ~month.to_series().duplicated(keep="last").to_numpy()
    window = pd.Series((number.to_numpy() <= 3) | last, index=calendar)
    closes = day["close"][day.index.isin(calendar)]
    returns = (closes / closes.shift() - 1) * 100
    frame = pd.DataFrame({"ret": returns, "tom": window[closes.index]})
    expected = frame.groupby("tom").agg(
        days=("ret", "size"), mean=("ret", "mean"), up=("ret", lambda r: (r.dropna() > 0).mean())
    )
    assert len(day) - len(closes) > 100  # holiday sessions the query must step over

    query = session_concepts()["turn_of_the_month"].text_for(SessionTimes(load_instrument("NQ")))
    result = execute(query.query, "NQ", settings=sample_settings)
    assert result.ok, result.to_dict()
    table = result.table.set_index("window")
    for label, tom in (("turn of month", True), ("other days", False)):
        assert table.loc[label, "days"] == expected.loc[tom, "days"]
        assert table.loc[label, "mean_ret_pct"] == pytest.approx(expected.loc[tom, "mean"])
        assert table.loc[label, "up_share"] == pytest.approx(expected.loc[tom, "up"])


@pytest.mark.slow
def test_sell_in_may_matches_pandas(sample_settings) -> None:
    """Each whole May-October and November-April, from the month-end close before it to its
    last month-end close, compounded over its six months."""
    day = _rth_days(sample_settings)
    month_end = day["close"].groupby(day.index.to_period("M")).last()
    seasons: dict[str, list[float]] = {"May-Oct": [], "Nov-Apr": []}
    for period in month_end.index:
        if period.month not in (4, 10) or period - 6 not in month_end.index:
            continue
        half = "May-Oct" if period.month == 10 else "Nov-Apr"
        seasons[half].append((month_end[period] / month_end[period - 6] - 1) * 100)

    query = session_concepts()["sell_in_may"].text_for(SessionTimes(load_instrument("NQ"))).query
    result = execute(query, "NQ", settings=sample_settings)
    assert result.ok, result.to_dict()
    table = result.table.set_index("half")
    for half, returns in seasons.items():
        assert table.loc[half, "seasons"] == len(returns)
        assert table.loc[half, "mean_ret_pct"] == pytest.approx(np.mean(returns), rel=1e-9)
        assert table.loc[half, "up_share"] == pytest.approx(np.mean(np.array(returns) > 0))
    assert table["seasons"].tolist() == [18, 17]


@pytest.mark.slow
def test_the_golden_cross_matches_pandas(sample_settings) -> None:
    day = _rth_days(sample_settings)
    fast, slow = day["close"].rolling(50).mean(), day["close"].rolling(200).mean()
    golden = (fast > slow) & (fast.shift() <= slow.shift())
    death = (fast < slow) & (fast.shift() >= slow.shift())
    by_year = pd.DataFrame({"golden": golden, "death": death}).groupby(day.index.year).sum()

    query = session_concepts()["golden_cross"].text_for(SessionTimes(load_instrument("NQ"))).query
    result = execute(query, "NQ", settings=sample_settings)
    assert result.ok, result.to_dict()
    table = result.table.set_index("year")
    assert table["golden_crosses"].tolist() == by_year["golden"].tolist()
    assert table["death_crosses"].tolist() == by_year["death"].tolist()
    assert by_year.to_numpy().sum() > 0


@pytest.mark.slow
def test_reversal_days_match_pandas(sample_settings) -> None:
    """p28c F3: «разворотный день» and "key reversal" found only short days and expiration
    days; the concept counts tops, bottoms and outside tops."""
    assert describe_concept("разворотный день").startswith("Reversal day")
    assert describe_concept("key reversal").startswith("Reversal day")
    day = _rth_days(sample_settings)
    high, low, close = day["high"], day["low"], day["close"]
    top = (high > high.shift()) & (close < close.shift())
    bottom = (low < low.shift()) & (close > close.shift())
    outside_top = (high > high.shift()) & (low < low.shift()) & (close < low.shift())
    query = session_concepts()["reversal_day"].text_for(SessionTimes(load_instrument("NQ"))).query
    result = execute(query, "NQ", settings=sample_settings)
    assert result.ok, result.to_dict()
    assert result.summary.values == {
        "bearish": top.sum(),
        "bullish": bottom.sum(),
        "bearish_outside": outside_top.sum(),
        "count": len(day),
    }
    assert 0 < outside_top.sum() < top.sum()


def test_the_hour_of_the_high_leaves_out_the_early_closes(engine_settings) -> None:
    """p41b: an early close has no afternoon bars, so its high can only be in the morning
    (NQ's 151 took 10:30 from 5th to 4th place). The example leaves them out: its counts
    against pandas over the hand-made bars' RTH hours, without the calendar's early closes
    read from pandas_market_calendars (Presidents' Day 2024-02-19, which has full bars)."""
    import pandas_market_calendars as mcal

    from barb.data.store import data_path

    concept = session_concepts()["high_of_day_hour"].text_for(SessionTimes(load_instrument("NQ")))
    assert "Early closes are left out" in concept.description
    result = execute(concept.query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    bars = pd.read_parquet(data_path("NQ", engine_settings))
    cal = mcal.get_calendar("CME Globex Equity")
    early = cal.early_closes(cal.schedule("2024-01-01", "2024-03-31")).index.tz_localize(None)
    assert list(early.intersection(bars["trading_date"].unique())) == [pd.Timestamp("2024-02-19")]
    rth = bars[(bars["minute"] >= 570) & (bars["minute"] < 1020)]
    rth = rth[~rth["trading_date"].isin(early)]
    hour = (rth["minute"] - 570) // 60
    highs = rth.assign(hour=hour).groupby(["trading_date", "hour"])["high"].max()
    first = highs.groupby(level=0).idxmax().map(lambda key: key[1])  # the earliest on a tie
    expected = first.map(lambda h: f"{9 + (30 + 60 * h) // 60:02d}:30").value_counts()
    counted = result.table.set_index("high_time")["days"]
    assert counted.to_dict() == expected.to_dict()


def test_power_hour_is_the_last_hour_of_the_cash_session(engine_settings) -> None:
    """Not the post-cash hour the did-you-mean offered ("after hours", 16:00-17:00): the
    window 15:00-16:00, its range checked with pandas over the minute bars."""
    from barb.data.store import data_path

    query = session_concepts()["power_hour"].text_for(SessionTimes(load_instrument("NQ"))).query
    assert query["session"] == "15:00-16:00"
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    bars = pd.read_parquet(data_path("NQ", engine_settings))
    hour = bars[(bars["minute"] >= 900) & (bars["minute"] < 960)]
    day = hour.groupby("trading_date").agg(high=("high", "max"), low=("low", "min"))
    assert result.summary.values["mean_range"] == pytest.approx((day["high"] - day["low"]).mean())


def test_the_utc_concept_reads_the_london_open_on_london_s_clock(engine_settings, minutes) -> None:
    """p34d #2: the London open is 03:00 ET except in the weeks the US has changed its clocks
    and Europe not yet (04:00 ET). The concept's window on London's clock, against zoneinfo's
    conversion of the hand-made bars, on both sides of 2024-03-10."""
    query = session_concepts()["utc"].text_for(SessionTimes(load_instrument("NQ"))).query
    said = execute(query, "NQ", settings=engine_settings)
    assert said.ok, said.to_dict()
    result = execute(
        query | {"select": ["date()", "open", "high", "low", "close"], "limit": 100},
        "NQ",
        settings=engine_settings,
    )
    assert result.ok, result.to_dict()
    got = result.table.set_index(pd.to_datetime(result.table["date"]))
    local = pd.DatetimeIndex(minutes["timestamp"]).tz_localize("America/New_York")
    hour = minutes[local.tz_convert("Europe/London").hour == 8]
    day = hour["timestamp"].dt.normalize()  # 03:00 or 04:00 ET: the trading date's own day
    expected = hour.groupby(day).agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )
    for column in ("open", "high", "low", "close"):
        assert np.allclose(got[column], expected[column].loc[got.index]), column
    et_hours = set(hour["timestamp"].dt.hour)
    assert et_hours == {3, 4}  # both sides of the change are in the bars


def test_a_lone_window_at_cls_open_on_nq_is_said_with_the_clock_reading(engine_settings) -> None:
    """'09:00-10:00' alone on NQ may be CL's first hour carried over: still said, now with
    the reading that leaves a clock hour meant as written alone."""
    result = execute(
        {
            "session": "ETH",
            "from": "daily",
            "map": {"r": "session_high('09:00-10:00') - session_low('09:00-10:00')"},
            "select": "mean(r)",
        },
        "NQ",
        settings=engine_settings,
    )
    assert result.ok, result.to_dict()
    assert (
        "'09:00-10:00' starts at the open of CL's RTH (09:00), not NQ's: NQ's RTH opens at "
        "09:30 (its first 15 minutes are '09:30-09:45'). A clock hour meant as written "
        "(another time zone's, in ET) is right as it is."
    ) in result.metadata.warnings


def test_the_previous_settlement_is_prev_of_the_settle_column(tmp_path) -> None:
    """p34a C: a lag put inside the settlement's era if (session_close('15:59-16:00', 1))
    read 10-23's 16:00 close on 2020-10-26, a day that settled at 16:15. The concept shows
    prev(settle); on hand-made bars around the switch it gives each day the settle before,
    as pandas reads it, and says why the lag inside the if does not."""
    import json
    import re

    from small_bars import write_minutes

    from barb.settings import EngineSettings

    nq = load_instrument("NQ")
    text = describe_concept("settlement", nq)
    assert "not a lag inside the if" in text
    [shown] = re.findall(r'"map": (\{"settle": [^{}]*"prev_settle": [^{}]*\})', text)
    rng = np.random.default_rng(26)
    days = pd.bdate_range("2020-10-19", "2020-10-28")
    stamps = [
        pd.date_range(d - pd.Timedelta(hours=6), d + pd.Timedelta(hours=17), freq="1min")[:-1]
        for d in days
    ]
    ts = stamps[0].append(stamps[1:])
    close = np.round((11000 + np.cumsum(rng.choice([-1.0, 1.0], len(ts)) * 0.75)) * 4) / 4
    minutes = pd.DataFrame(
        {
            "timestamp": ts.values.astype("datetime64[ns]"),
            "open": close,
            "high": close + 0.25,
            "low": close - 0.25,
            "close": close,
            "volume": np.ones(len(ts), dtype=np.int64),
        }
    )
    settings = EngineSettings(data_dir=tmp_path)
    write_minutes(minutes, "NQ", settings, "the settlement switch, hand-made")

    # The settle of each day from the raw bars: the 16:14 bar's close through 10-23, the
    # 15:59 bar's since.
    clock = minutes["timestamp"].dt.strftime("%H:%M")
    day = minutes["timestamp"].dt.normalize()
    at = np.where(day <= pd.Timestamp("2020-10-23"), clock == "16:14", clock == "15:59")
    settle = minutes[at].groupby(day[at])["close"].last()
    query = {"session": "RTH", "from": "daily", "period": "2020-10-20:2020-10-28"}
    map_ = json.loads(shown) | {"lagged": re.sub(r"'\)", "', 1)", json.loads(shown)["settle"])}
    result = execute(
        query | {"map": map_, "select": ["prev_settle", "lagged"]}, "NQ", settings=settings
    )
    assert result.ok, result.to_dict()
    table = result.table.set_index(pd.to_datetime(result.table["date"]))
    expected = settle.shift().loc[table.index]
    assert table["prev_settle"].to_numpy() == pytest.approx(expected.to_numpy())
    # The lag inside the if on 10-26: 10-23's 15:59 close, not its settle.
    monday = pd.Timestamp("2020-10-26")
    friday_1559 = minutes[(day == pd.Timestamp("2020-10-23")) & (clock == "15:59")]["close"]
    assert table.loc[monday, "lagged"] == friday_1559.iloc[0] != expected[monday]


def test_limit_moves_are_measured_from_the_previous_cash_close(engine_settings, minutes) -> None:
    """ "How many limit-down days did NQ have?" found no concept ("No concept called 'limit
    down'"), and a model counted 7% moves from the 17:00 close, or called them limit days.
    CME's reference is the previous day's cash close; the bars hold no halt or locked
    limit, and the concept says so. Its query's deepest fall from that reference, with
    pandas over the hand-made bars' ETH days."""
    for name in ("limit down", "лимит вниз", "circuit breaker"):
        text = describe_concept(name, load_instrument("NQ"))
        assert text.startswith("Price limits"), text
        assert "session_close('CASH', 1)" in text and "not limit days" in text
    assert "no pause or locked limit" in describe_concept("limit up", load_instrument("CL"))
    # The overnight limit's change has a date (CME, effective October 2020; press of
    # 2020-11-03: "until October, overnight moves were limited to 5%"), not "later years".
    limits = describe_concept("limit up", load_instrument("NQ"))
    assert "5% until October 2020 and 7% since" in limits and "later years" not in limits

    query = session_concepts()["price_limits"].text_for(SessionTimes(load_instrument("NQ"))).query
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    stamps = minutes["timestamp"]
    date = (stamps + pd.Timedelta(hours=6)).dt.normalize()  # 18:00 opens the next date
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    cash = minutes[(minute >= 570) & (minute < 960)].groupby(date)["close"].last()
    day_low = minutes.groupby(date)["low"].min()
    ref = cash.reindex(day_low.index).shift(1)  # a trading date earlier
    low_pct = (day_low / ref - 1) * 100
    assert result.summary.values["days"] == int(ref.notna().sum())
    assert result.summary.values["deepest"] == pytest.approx(low_pct.min(), rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("symbol", ["NQ", "ES"])
def test_the_initial_balance_extends_over_the_cash_session(symbol, sample_settings) -> None:
    """Market profile reads the IB's extension over the day session, to the 16:00 cash close:
    over RTH to 17:00 the post-cash hour counted too (NQ's extended_up 0.6729 of all days,
    0.6690 over the cash session). Checked against the minute file over all history."""
    from barb.data.store import data_path

    query = describe_concept("initial balance", load_instrument(symbol)).split("Barb Script: ")[1]
    result = execute(json.loads(query), symbol, settings=sample_settings)
    assert result.ok, result.to_dict()
    bars = pd.read_parquet(data_path(symbol, sample_settings), columns=["timestamp", "high", "low"])
    bars["day"] = bars["timestamp"].dt.normalize()
    minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute

    def window(start: int, end: int) -> pd.DataFrame:
        inside = bars[(minute >= start) & (minute < end)]
        return inside.groupby("day").agg(high=("high", "max"), low=("low", "min"))

    ib, cash = window(9 * 60 + 30, 10 * 60 + 30), window(9 * 60 + 30, 16 * 60)
    days = cash.join(ib, rsuffix="_ib", how="inner")
    values = result.summary.values
    assert values["extended_up"] == pytest.approx((days["high"] > days["high_ib"]).mean())
    assert values["extended_down"] == pytest.approx((days["low"] < days["low_ib"]).mean())
    assert values["ib_range"] == pytest.approx((days["high_ib"] - days["low_ib"]).mean())
