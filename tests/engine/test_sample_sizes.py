"""A statistic over fewer rows than were kept says how many: "after an up day, the mean next
day's return" written as ``if(up, next(ret), 0 / 0)`` over every day is a mean of the up
days only, and "N matched" counts them all. Expected counts from pandas over RTH daily bars
built from the minute file."""

from __future__ import annotations

import pandas as pd
import pytest
from asking import RTH_DAILY, ask
from duckdb_answers import RTH
from rth_bars import rth_daily

from barb import execute, render_summary

NEXT_AFTER_UP = {
    "ret": "close / prev(close) - 1",
    "nr": "if(close > open, next(ret), 0 / 0)",
}


def _after_up_days(minutes: pd.DataFrame) -> pd.DataFrame:
    daily = rth_daily(minutes)
    ret = daily["close"] / daily["close"].shift() - 1
    daily["nr"] = ret.shift(-1).where(daily["close"] > daily["open"])
    return daily


def test_a_mean_over_some_of_the_days_says_how_many(engine_settings, minutes) -> None:
    daily = _after_up_days(minutes)
    result = ask(
        {"map": NEXT_AFTER_UP, "select": ["mean(nr)", "count()"]}, engine_settings, **RTH_DAILY
    )
    values = result.summary.values
    assert values["count"] == len(daily)
    assert values["mean_nr"] == pytest.approx(daily["nr"].mean())
    sample = int(daily["nr"].notna().sum())
    assert 0 < sample < len(daily) / 2 + 20  # the up days, less the last day if it is one
    assert result.summary.samples == {"mean_nr": sample}
    first = render_summary(result).splitlines()[0]
    assert first.startswith("Result: mean_nr=")
    assert first.endswith(f" (over {sample:,} rows with a value), count={len(daily)}")
    # The empty value written as the reference says is not warned about as a division.
    assert not [w for w in result.metadata.warnings if "Division by zero" in w]


def test_a_single_statistic_and_a_correlation_count_their_rows(engine_settings, minutes) -> None:
    daily = _after_up_days(minutes)
    daily["ret"] = daily["close"] / daily["close"].shift() - 1
    result = ask(
        {"map": NEXT_AFTER_UP, "select": "percentile(nr, 90)"}, engine_settings, **RTH_DAILY
    )
    sample = int(daily["nr"].notna().sum())
    assert f"(over {sample:,} rows with a value)" in render_summary(result).splitlines()[0]
    pair = ask(
        {"map": {"ret": NEXT_AFTER_UP["ret"]}, "select": "correlation(ret, prev(ret))"},
        engine_settings,
        **RTH_DAILY,
    )
    both = int((daily["ret"].notna() & daily["ret"].shift().notna()).sum())
    assert pair.summary.samples == {"correlation_ret_prev_ret": both}
    assert pair.summary.value == pytest.approx(daily["ret"].corr(daily["ret"].shift()))


def test_groups_say_what_their_statistic_is_over(engine_settings, minutes) -> None:
    daily = _after_up_days(minutes)
    result = ask(
        {"map": NEXT_AFTER_UP, "group_by": "month()", "select": "mean(nr)"},
        engine_settings,
        **RTH_DAILY,
    )
    sample = int(daily["nr"].notna().sum())
    month = daily["nr"].groupby(daily.index.month)
    named = _short_groups(month.size(), month.count(), "month")  # each about half empty
    assert (
        f"mean_nr is over the {sample:,} of the {len(daily):,} rows kept that have a value "
        f"(the others are empty){named}."
    ) in result.metadata.warnings
    both = ask(
        {"map": NEXT_AFTER_UP, "group_by": "month()", "select": ["mean(nr)", "std(nr)"]},
        engine_settings,
        **RTH_DAILY,
    )
    assert (
        f"mean_nr and std_nr are over the {sample:,} of the {len(daily):,} rows kept that have "
        f"a value (the others are empty){named}."
    ) in both.metadata.warnings


def test_picks_and_extremes_say_the_rows_they_skip(engine_settings, minutes) -> None:
    """p35b #24 "which month is most often the year's best": arg_max(m, ret) chose 2008's
    among February-December, January having no close before it, and said nothing where
    mean() over the same rows said so. arg_max, max and min skip the rows whose value is
    missing (arg_max's val, not the arg it names) and now say it as mean() does."""
    daily = _after_up_days(minutes)
    daily["day"] = daily.index.day_name().str[:3]
    month = daily.groupby(daily.index.month)
    best = month.apply(lambda rows: rows.loc[rows["nr"].idxmax(), "day"])
    result = ask(
        {
            "map": NEXT_AFTER_UP,
            "group_by": "month()",
            "select": ["arg_max(dayname(), nr) as best", "max(nr) as top", "min(nr) as low"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    assert result.table["best"].astype(str).tolist() == best.tolist()
    assert result.table["top"].tolist() == pytest.approx(month["nr"].max().tolist())
    assert result.table["low"].tolist() == pytest.approx(month["nr"].min().tolist())
    sample = int(daily["nr"].notna().sum())
    named = _short_groups(month["nr"].size(), month["nr"].count(), "month")
    assert (
        f"best, top and low are over the {sample:,} of the {len(daily):,} rows kept that have "
        f"a value (the others are empty){named}."
    ) in result.metadata.warnings
    # An arg that is missing leaves no row out: the pick is made among every row.
    named_only = ask(
        {"map": NEXT_AFTER_UP, "group_by": "month()", "select": "arg_max(nr, close) as at"},
        engine_settings,
        **RTH_DAILY,
    )
    assert not [w for w in named_only.metadata.warnings if "rows kept that have a value" in w]


def test_the_first_weeks_best_day_is_said_to_lack_its_first_return(
    engine_settings, minutes
) -> None:
    """The data's first day has no close before it: the first week's best day is one of its
    other days, said with the day left out as mean() says it."""
    daily = rth_daily(minutes)
    ret = daily["close"] / daily["close"].shift() - 1
    week = ret.groupby(daily.index - pd.to_timedelta(daily.index.dayofweek, unit="D"))
    rows, sizes = week.size(), week.count()
    assert (rows - sizes).iloc[0] == 1 and (rows - sizes).iloc[1:].eq(0).all()
    result = ask(
        {
            "map": {"ret": "close / prev(close) - 1"},
            "group_by": "week()",
            "select": "arg_max(date(), ret) as best",
        },
        engine_settings,
        **RTH_DAILY,
    )
    picked = pd.to_datetime(result.table["best"]).tolist()
    assert picked == week.idxmax().tolist()
    first = f"{daily.index[0]:%Y-%m-%d}"  # week() names a week by its first trading date
    assert (
        f"best is over the {int(sizes.sum())} of the {len(daily)} rows kept that have a value "
        f"(the others are empty), in week {first} over {sizes.iloc[0]} of its "
        f"{rows.iloc[0]} rows. {_data_start('ret', ret.notna())}"
    ) in result.metadata.warnings


def test_only_a_count_of_every_row_is_said_to_count_them_all(engine_settings, minutes) -> None:
    """ "In which months does ES rise": ``count(ret) as n`` counts the rows with a value (17
    Januaries of 18), yet the warning said "count() counts all of them" of a query with no
    count(). It speaks of count() only when the select has one, by its name."""
    daily = _after_up_days(minutes)
    month = daily["nr"].groupby(daily.index.month)
    named = _short_groups(month.size(), month.count(), "month")
    sample = int(daily["nr"].notna().sum())
    said = (
        f"mean_nr is over the {sample:,} of the {len(daily):,} rows kept that have a value "
        f"(the others are empty){named}"
    )
    query = {"map": NEXT_AFTER_UP, "group_by": "month()"}
    with_values = ask(
        {**query, "select": ["mean(nr)", "count(nr) as n"]}, engine_settings, **RTH_DAILY
    )
    assert with_values.table["n"].tolist() == month.count().tolist()
    assert f"{said}." in with_values.metadata.warnings
    every = ask({**query, "select": ["mean(nr)", "count() as n"]}, engine_settings, **RTH_DAILY)
    assert every.table["n"].tolist() == month.size().tolist()
    assert f"{said}; count() (n) counts all of them." in every.metadata.warnings
    plain = ask({**query, "select": ["mean(nr)", "count()"]}, engine_settings, **RTH_DAILY)
    assert f"{said}; count() counts all of them." in plain.metadata.warnings


def test_nothing_is_said_when_every_row_has_a_value(engine_settings) -> None:
    result = ask({"select": ["mean(range)", "percentile(range, 90)"]}, engine_settings, **RTH_DAILY)
    assert result.summary.samples == {}
    assert "over" not in render_summary(result).splitlines()[0]
    grouped = ask({"group_by": "month()", "select": "mean(range)"}, engine_settings, **RTH_DAILY)
    assert not [w for w in grouped.metadata.warnings if "rows kept that have a value" in w]


def test_groups_say_nothing_of_the_first_days_missing_return(engine_settings, minutes) -> None:
    """The data's first day has no previous close: one empty row of about 60 is no news."""
    ret = "close / prev(close) - 1"
    query = {"map": {"ret": ret}, "group_by": "month()", "select": ["mean(ret)", "std(ret)"]}
    result = ask(query, engine_settings, **RTH_DAILY)
    assert not [w for w in result.metadata.warnings if "rows kept that have a value" in w]
    assert ask({**query, "select": "mean(ret)"}, engine_settings, **RTH_DAILY).ok


def test_one_missing_row_is_not_worth_a_word(engine_settings) -> None:
    """The data's first day has no previous close: a mean of returns over every day is over
    one row fewer, which is no news beside the value."""
    result = ask(
        {"map": {"ret": "close / prev(close) - 1"}, "select": ["mean(ret)", "std(ret)"]},
        engine_settings,
        **RTH_DAILY,
    )
    assert result.summary.samples == {}
    assert "rows with a value" not in render_summary(result)


def _data_start(subject: str, has: pd.Series) -> str:
    """ "above has no value on 19 of them (2024-01-02 to 2024-01-29), as it needs bars from
    before 2024-01-02, where the data begins; it has one from 2024-01-30 on.": ``has`` says
    which days (its index, from the data's first) have a value; the first days have none."""
    days = pd.DatetimeIndex(has.index).strftime("%Y-%m-%d")
    first = int(has.to_numpy().argmax())
    assert first and not has.iloc[:first].any()
    rows = days[0] if first == 1 else f"{first:,} of them ({days[0]} to {days[first - 1]})"
    tail = f"; it has one from {days[first]} on" if first > 1 else ""
    return (
        f"{subject} has no value on {rows}, as it needs bars from before {days[0]}, where the "
        f"data begins{tail}."
    )


def _short_groups(rows: pd.Series, sizes: pd.Series, key: str, named: int = 3) -> str:
    """ ", in month 1 over 1 of its 20 rows": the groups with more than one empty row and at
    least 1% empty, or one empty row that is 5% of them, the ``named`` emptiest (the earlier
    of a tie), in group order; then how many other groups have an empty row."""
    empty = rows - sizes
    short = empty[((empty > 1) & (empty >= 0.01 * rows)) | ((empty > 0) & (empty >= 0.05 * rows))]
    share = (short / rows[short.index]).sort_values(ascending=False, kind="stable")
    worst = sorted(share.index[:named])
    said = [f"{key} {g} over {sizes[g]:,} of its {rows[g]:,}" for g in worst]
    said[0] += " rows"
    more = int((empty > 0).sum()) - len(worst)
    tail = f" and {more} more group{'s' if more > 1 else ''}" if more else ""
    return ", in " + ", ".join(said) + tail


@pytest.mark.slow
def test_groups_with_a_few_empty_rows_are_counted_beside_those_named(sample_settings, con) -> None:
    """Volume by weekday: Mon, Thu and Fri were named short and the warning ended there,
    though Tue and Wed had a few empty rows too (929 of 936, 926 of 935). Here Monday's up
    days are empty, and on every weekday the few 13ths of January: too few to name."""
    days = con.execute(
        f"""
        SELECT trading_date AS d, arg_min(open, timestamp) AS open,
               arg_max(close, timestamp) AS close, max(high) - min(low) AS range
        FROM nq WHERE {RTH} GROUP BY 1 ORDER BY 1
        """
    ).df()
    d = pd.to_datetime(days["d"])
    empty = ((d.dt.dayofweek == 0) & (days["close"] > days["open"])) | (
        (d.dt.month == 1) & (d.dt.day == 13)
    )
    weekday = d.dt.dayofweek
    rows, sizes = weekday.groupby(weekday).size(), (~empty).groupby(weekday).sum()
    named = _short_groups(rows, sizes, "dayofweek")
    # The case: Monday alone named, the other four each a few rows short.
    assert named.startswith(", in dayofweek 0 over ") and named.endswith(" and 4 more groups")
    result = ask(
        {
            "session": "RTH",
            "from": "daily",
            "map": {
                "x": "if((dayofweek() == 0 and close > open) or (month() == 1 and day() == 13),"
                " 0 / 0, range)"
            },
            "group_by": "dayofweek()",
            "select": "mean(x)",
        },
        sample_settings,
    )
    assert (
        f"mean_x is over the {int(sizes.sum()):,} of the {len(days):,} rows kept that have "
        f"a value (the others are empty){named}."  # no count() selected: none to explain
    ) in result.metadata.warnings


def test_a_group_short_of_rows_is_named(engine_settings, minutes) -> None:
    """ "Share of days above the 20-day mean, by month": the mean has no value before its
    20th day, so January's share is over its last two days; a count over all months hid which."""
    daily = rth_daily(minutes)
    above = daily["close"] > daily["close"].rolling(20).mean()
    has = daily["close"].rolling(20).mean().notna()
    month = daily.index.month
    rows, sizes = has.groupby(month).size(), has.groupby(month).sum()
    # The case: January alone short, by the 19 days before the mean's first.
    assert sizes[1] == rows[1] - 19 and (sizes.loc[2:] == rows.loc[2:]).all()
    result = ask(
        {
            "map": {"above": "close > rolling_mean(close, 20)"},
            "group_by": "month()",
            "select": ["mean(above)", "count()"],
        },
        engine_settings,
        **RTH_DAILY,
    )
    assert result.table["mean_above"].tolist() == pytest.approx(
        above[has].groupby(month[has]).mean().tolist()
    )
    assert (
        f"mean_above is over the {int(has.sum()):,} of the {len(daily):,} rows kept that have "
        f"a value (the others are empty){_short_groups(rows, sizes, 'month')}; count() counts "
        f"all of them. {_data_start('above', has)}"
    ) in result.metadata.warnings
    assert (
        _short_groups(rows, sizes, "month") == f", in month 1 over {sizes[1]} of its {rows[1]} rows"
    )


def test_the_worst_few_short_groups_are_named_and_the_rest_counted(
    engine_settings, minutes
) -> None:
    """Up days' bodies by weekday: every weekday is about half empty; three are named."""
    daily = rth_daily(minutes)
    body = (daily["close"] - daily["open"]).where(daily["close"] > daily["open"])
    weekday = daily.index.dayofweek
    rows, sizes = body.groupby(weekday).size(), body.groupby(weekday).count()
    result = ask(
        {
            "map": {"up": "if(close > open, close - open, 0 / 0)"},
            "group_by": "dayofweek()",
            "select": "mean(up)",
        },
        engine_settings,
        **RTH_DAILY,
    )
    named = _short_groups(rows, sizes, "dayofweek")
    assert named.endswith(" and 2 more groups")
    assert (
        f"mean_up is over the {int(sizes.sum()):,} of the {len(daily):,} rows kept that have "
        f"a value (the others are empty){named}."
    ) in result.metadata.warnings


def test_a_short_group_the_limit_leaves_out_is_not_named(engine_settings, minutes) -> None:
    daily = rth_daily(minutes)
    has = daily["close"].rolling(20).mean().notna()
    result = ask(
        {
            "map": {"above": "close > rolling_mean(close, 20)"},
            "group_by": "month()",
            "select": "mean(above)",
            "sort": "month desc",
            "limit": 2,
        },
        engine_settings,
        **RTH_DAILY,
    )
    assert result.table["month"].tolist() == [3, 2]
    assert (
        f"mean_above is over the {int(has.sum()):,} of the {len(daily):,} rows kept that have "
        "a value (the others are empty)."
    ) in result.metadata.warnings


@pytest.mark.slow
def test_the_year_the_50_day_mean_starts_in_is_named(sample_settings, con) -> None:
    """ "Share of days above the 50-day SMA by year" over all history: 2008 is over the days
    from the 50th on, and the warning says so by name."""
    daily = con.execute(
        """
        SELECT trading_date AS d, arg_max(close, timestamp) AS close
        FROM nq WHERE minute >= 570 AND minute < 1020 GROUP BY 1 ORDER BY 1
        """
    ).df()
    has = daily["close"].rolling(50).mean().notna()
    year = daily["d"].dt.year
    rows, sizes = has.groupby(year).size(), has.groupby(year).sum()
    assert sizes[2008] == rows[2008] - 49 and (sizes.drop(2008) == rows.drop(2008)).all()
    result = ask(
        {
            "map": {"year": "year()", "above": "close > rolling_mean(close, 50)"},
            "group_by": "year",
            "select": ["mean(above)", "count()"],
        },
        sample_settings,
        **RTH_DAILY,
    )
    has.index = daily["d"]
    said = (
        f"mean_above is over the {int(has.sum()):,} of the {len(daily):,} rows kept that have "
        f"a value (the others are empty), in year 2008 over {sizes[2008]:,} of its "
        f"{rows[2008]:,} rows; count() counts all of them. {_data_start('above', has)}"
    )
    assert said in result.metadata.warnings
    assert said in render_summary(result)


@pytest.mark.slow
def test_a_single_empty_row_among_few_is_named(sample_settings, con) -> None:
    """ "Average monthly return by calendar month": January's mean is over one return fewer
    than its Januaries (the data's first month has no previous close), 17 of 18, and the
    model had answered "over 18 Januaries". One empty row among thousands stays unsaid."""
    months = con.execute(
        """
        SELECT date_trunc('month', trading_date) AS m, arg_max(close, timestamp) AS close
        FROM nq WHERE minute >= 570 AND minute < 1020 GROUP BY 1 ORDER BY 1
        """
    ).df()
    months = months[months["m"] < months["m"].max()]  # the open month is left out
    has = months["close"].shift().notna()
    month = months["m"].dt.month
    rows, sizes = has.groupby(month).size(), has.groupby(month).sum()
    assert (rows - sizes).to_dict() == {m: int(m == 1) for m in range(1, 13)}
    result = execute(
        {
            "session": "RTH",
            "from": "monthly",
            "map": {"ret": "close / prev(close) - 1"},
            "group_by": "month()",
            "select": ["mean(ret)", "count()"],
        },
        "NQ",
        settings=sample_settings,
    )
    first = months["m"].iloc[0].strftime("%Y-%m")
    (begins,) = con.execute("SELECT min(trading_date) FROM nq").fetchone()
    assert (
        f"mean_ret is over the {int(has.sum()):,} of the {len(months):,} rows kept that have "
        f"a value (the others are empty), in month 1 over {sizes[1]} of its {rows[1]} rows; "
        f"count() counts all of them. ret has no value on {first}, as it needs bars from "
        f"before {begins:%Y-%m-%d}, where the data begins. From its own open on the first bar: "
        '"ret": "close / coalesce(prev(close), open) - 1".'
    ) in result.metadata.warnings


def test_a_share_beside_the_count_of_days_says_the_first_day_has_no_value(
    engine_settings, minutes
) -> None:
    """ "Days with a big move per year: days=259, big=113, share=0.438" was 113 of 2008's
    258 days with a return (the data's first day has no close before it), and "113 of 259
    (43.8%)" did not add up. Beside a count() of the days and a count of the condition the
    one empty row is said, in its group as a monthly return's January is; with no count()
    it stays unsaid, and beside count() alone too: ES's up share by weekday was told of 1
    empty Wednesday of 934 that changed no value shown (p47c H)."""
    daily = rth_daily(minutes)
    ret = daily["close"] / daily["close"].shift() - 1
    up = (ret > 0).where(ret.notna())
    month = up.groupby(daily.index.month)
    rows, sizes = month.size(), month.count()
    assert (rows - sizes).to_dict() == {1: 1, 2: 0, 3: 0}
    assert 0.05 * rows[1] > 1  # one empty row: too few to be said by itself
    query = {"map": {"ret": "close / prev(close) - 1"}, "group_by": "month()"}
    result = ask(
        {**query, "select": ["count() as days", "count(ret > 0) as ups", "mean(ret > 0) as share"]},
        engine_settings,
        **RTH_DAILY,
    )
    assert result.table["days"].tolist() == rows.tolist()
    assert result.table["ups"].tolist() == month.sum().astype(int).tolist()
    assert result.table["share"].tolist() == pytest.approx(month.mean().tolist())
    assert (
        f"share is over the {int(sizes.sum()):,} of the {len(daily):,} rows kept that have a "
        f"value (the others are empty), in month 1 over {sizes[1]} of its {rows[1]} rows; "
        f"count() (days) counts all of them. {_data_start('ret > 0', ret.notna())}"
    ) in result.metadata.warnings
    alone = ask({**query, "select": "mean(ret > 0) as share"}, engine_settings, **RTH_DAILY)
    assert not [w for w in alone.metadata.warnings if "rows kept that have a value" in w]
    days = ask(
        {**query, "select": ["count() as days", "mean(ret > 0) as share"]},
        engine_settings,
        **RTH_DAILY,
    )
    assert not [w for w in days.metadata.warnings if "rows kept that have a value" in w]

    single = ask(
        {"map": query["map"], "select": ["count() as days", "mean(ret > 0) as share"]},
        engine_settings,
        **RTH_DAILY,
    )
    assert single.summary.values["share"] == pytest.approx(up.mean())
    assert single.summary.samples == {"share": int(up.count())}
    assert (
        f"share is over {int(up.count()):,} of the {len(daily):,} rows kept: "
        f"{_data_start('ret > 0', ret.notna())}"
    ) in single.metadata.warnings


def test_a_count_of_a_true_false_column_named_as_rows_is_said(engine_settings, minutes) -> None:
    """ "Does ES rise more often on Fridays": count(up) as days beside count(up == true) as
    up_days and mean(up) read "Mon 451, 451, 0.5306", Monday's up days twice. count(up)
    counts the rows where up is true; a name that says so (up_days) is not warned of."""
    daily = rth_daily(minutes)
    up = daily["close"] > daily["close"].shift()
    weekday = up.groupby(daily.index.dayofweek)
    mon_rows, mon_up = int(weekday.size()[0]), int(weekday.sum()[0])
    assert 0 < mon_up < mon_rows
    query = {"map": {"weekday": "dayname()", "up": "close > prev(close)"}, "group_by": "weekday"}
    result = ask(
        {**query, "select": ["count(up) as days", "count(up == true) as up_days", "mean(up)"]},
        engine_settings,
        **RTH_DAILY,
    )
    monday = result.table.set_index("weekday").loc["Mon"]
    assert monday["days"] == monday["up_days"] == mon_up
    assert (
        f"days is count(up): it counts the rows where up is true ({mon_up} of the {mon_rows} "
        "rows in weekday Mon), as count(up == true) does, not the rows; count() counts rows."
    ) in result.metadata.warnings
    single = ask(
        {"map": query["map"], "select": ["count(up) as n", "count()"]},
        engine_settings,
        **RTH_DAILY,
    )
    assert single.summary.values["n"] == int(up.sum())
    assert (
        f"n is count(up): it counts the rows where up is true ({int(up.sum())} of the "
        f"{len(daily)} rows), as count(up == true) does, not the rows; count() counts rows."
    ) in single.metadata.warnings
    for select in (["count(up) as up_days", "mean(up)"], ["count(up) as days", "max(range)"]):
        named = ask({**query, "select": select}, engine_settings, **RTH_DAILY)
        assert not [w for w in named.metadata.warnings if "is count(up)" in w]


def test_a_count_of_a_condition_named_after_its_event_is_not_warned_of(
    engine_settings, minutes
) -> None:
    """p35c C4: "count(hit) as stopped" beside "count() as days" was told that it counts
    the rows where hit is true, not the rows: what its name says. Only a name made of words
    for rows (days, n_trades) reads as all of them."""
    daily = rth_daily(minutes)
    prior = daily["close"].shift()
    hit, gap = daily["low"] <= prior - 10, daily["open"] < prior - 10
    assert 0 < gap.sum() < hit.sum() < len(daily)
    query = {"map": {"hit": "low <= prev(close) - 10", "gap": "open < prev(close) - 10"}}
    select = ["count() as days", "count(hit) as stopped", "count(gap) as gappedThrough"]
    result = ask({**query, "select": select}, engine_settings, **RTH_DAILY)
    values = result.summary.values
    assert (values["days"], values["stopped"], values["gappedThrough"]) == (
        len(daily),
        int(hit.sum()),
        int(gap.sum()),
    )
    assert not [w for w in result.metadata.warnings if "is count(" in w]
    named = ask(
        {**query, "select": ["count() as days", "count(hit) as n_trades"]},
        engine_settings,
        **RTH_DAILY,
    )
    assert [w for w in named.metadata.warnings if "is count(" in w] == [
        f"n_trades is count(hit): it counts the rows where hit is true ({int(hit.sum())} of "
        f"the {len(daily)} rows), as count(hit == true) does, not the rows; count() counts "
        "rows."
    ]
