"""A second stage's count of the first stage's rows by what each one picked ("which weekday
makes the week's high") is tested against equal shares, and the group a reader names
against each other one: NQ's 2024 gave Fri 17 and Mon 16 weeks of 53, and "Friday" was
named with no word. Expected counts from pandas over the hand-made minute bars, p-values
from scipy.stats, never through Barb."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from asking import ask
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex
from matplotlib.text import Text
from scipy import stats

from barb.charts import chart_headline, draw_chart
from barb.charts.style import HIGH, LOW
from barb.charts.words import words_for
from barb.data.store import data_path
from barb.export import csv_bytes, csv_dialect

RTH = (570, 1020)  # NQ's RTH, 09:30-17:00, in minutes of the day

WEEK_HIGH = {
    "session": "RTH",
    "from": "daily",
    "group_by": "week()",
    "select": "arg_max(dayname(), high) as day",
    "then": {"group_by": "day", "select": "count() as weeks"},
}


@pytest.fixture(scope="module")
def rth_days(minutes: pd.DataFrame) -> pd.DataFrame:
    """The fixture's RTH days: high, open and close, with pandas."""
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    rth = minutes[(minute >= RTH[0]) & (minute < RTH[1])]
    days = rth.groupby(rth["timestamp"].dt.normalize()).agg(
        high=("high", "max"), open=("open", "first"), close=("close", "last")
    )
    days["week"] = days.index - pd.to_timedelta(days.index.dayofweek, unit="D")
    return days


def _by_weekday(picked: pd.Series, days: pd.DataFrame) -> pd.Series:
    """Weeks by the weekday each one's pick fell on, every weekday of the days at 0 where none
    did (the fixture's Thursday: p48d M1)."""
    weekdays = days.index.day_name().str[:3].unique()
    return picked.dt.day_name().str[:3].value_counts().reindex(weekdays, fill_value=0)


def _noise(result) -> list[str]:
    return [w for w in result.metadata.warnings if "noise" in w]


def test_the_weekday_counted_most_is_said_within_noise_of_the_next(
    engine_settings, rth_days
) -> None:
    first = rth_days.groupby("week")["high"].idxmax()  # the earliest of a tie
    counts = _by_weekday(first, rth_days)
    counts = counts.sort_values(ascending=False, kind="stable")
    result = ask(WEEK_HIGH, engine_settings)
    assert dict(zip(result.table["day"], result.table["weeks"], strict=True)) == counts.to_dict()
    top, total = counts.max(), int(counts.sum())
    # Days tied at the most are named together (p48f C3), in the table's order.
    leaders = [
        day for day, n in zip(result.table["day"], result.table["weeks"], strict=True) if n == top
    ]
    close = []
    for day in result.table.sort_values("weeks", ascending=False, kind="stable")["day"]:
        if day in leaders:
            continue
        p = stats.binomtest(int(counts[day]), int(top + counts[day]), 0.5).pvalue
        if p >= 0.05:
            close.append(f"'{day}' {counts[day]} (p = {float(f'{p:.2g}'):g})")
    assert close, counts  # the fixture's weeks: a first within noise of others
    assert len(leaders) == 2  # the fixture's weeks: a tie for the most
    assert _noise(result) == [
        f"weeks: '{leaders[0]}' and '{leaders[1]}' have the most ({top} each of {total}), but "
        f"{len(close)} other groups are within noise of them by the exact binomial test of "
        f"the two counts: {', '.join(close)}; their order is noise."
    ]


def test_two_counted_groups_near_even_shares_are_said_within_noise(
    engine_settings, rth_days
) -> None:
    last = rth_days.groupby("week").last()
    up = int((last["close"] > last["open"]).sum())
    down = len(last) - up
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"up": "close > open"},
        "group_by": "week()",
        "select": "last(up) as up",
        "then": {"group_by": "up", "select": "count() as weeks"},
    }
    result = ask(query, engine_settings)
    assert result.table["weeks"].tolist() == [down, up]
    p = stats.binomtest(up, up + down, 0.5).pvalue
    assert p >= 0.05
    high, low = ("false", "true") if down >= up else ("true", "false")
    assert _noise(result) == [
        f"The counts differ by less than their noise: weeks over the 2 up groups (highest up "
        f"{high} {max(up, down)}, lowest up {low} {min(up, down)} of {up + down}) lie no "
        f"further from equal shares than chance would put them (exact binomial test p = "
        f"{float(f'{p:.2g}'):g})."
    ]


def test_groups_of_text_are_named_quoted(engine_settings, rth_days) -> None:
    """Groups 'high first' and 'low first' were named "highest high first 262, lowest low
    first 255", which reads as a statement about the market (p38b): a text group is named
    quoted, as the query wrote it."""
    last = rth_days.groupby("week").last()
    counts = {"up week": int((last["close"] > last["open"]).sum())}
    counts["down week"] = len(last) - counts["up week"]
    high, low = sorted(counts, key=counts.get, reverse=True)
    assert counts[high] > counts[low]
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"side": "if(close > open, 'up week', 'down week')"},
        "group_by": "week()",
        "select": "last(side) as side",
        "then": {"group_by": "side", "select": "count() as weeks"},
    }
    p = stats.binomtest(counts[high], len(last), 0.5).pvalue
    assert p >= 0.05
    assert _noise(ask(query, engine_settings)) == [
        f"The counts differ by less than their noise: weeks over the 2 side groups (highest "
        f"'{high}' {counts[high]}, lowest '{low}' {counts[low]} of {len(last)}) lie no further "
        f"from equal shares than chance would put them (exact binomial test p = "
        f"{float(f'{p:.2g}'):g})."
    ]


def test_a_count_by_the_first_stages_own_key_says_nothing(engine_settings) -> None:
    """Months counted by how many weekday groups each holds (5 each): the first stage's own
    key counts the calendar, not chance."""
    by_key = {
        "session": "RTH",
        "from": "daily",
        "group_by": ["month()", "dayname()"],
        "select": "count() as n",
        "then": {"group_by": "month", "select": "count() as days"},
    }
    assert not _noise(ask(by_key, engine_settings))


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_chart_names_the_groups_within_the_firsts_noise_with_it(
    engine_settings, rth_days, language
) -> None:
    """p43b Q17: the chart's title read "most often high only 1,607" in the answer's orange
    while the text said 'low only' 1,568 was within noise of it (p = 0.5): the title names
    them together, within noise, and their bars share the colour."""
    first = rth_days.groupby("week")["high"].idxmax()
    counts = _by_weekday(first, rth_days)
    top = counts.max()
    tied = [day for day in counts.index if counts[day] == top]  # the fixture's Mon and Fri
    close = [
        day
        for day in counts.sort_values(ascending=False, kind="stable").index
        if day not in tied
        and stats.binomtest(int(counts[day]), int(top + counts[day]), 0.5).pvalue >= 0.05
    ]
    assert close  # the premise, as above
    result = ask(WEEK_HIGH, engine_settings)
    named = dict(zip(words_for("en").weekdays, words_for(language).weekdays, strict=True))
    headline = chart_headline(result, language)
    assert len(close) == 3  # Wed 2, Tue 1 and Thu 0: counted, their counts spanned
    more = {"en": "within noise of 3 others", "ru": "в пределах шума ещё 3 группы"}[language]
    assert f", {more} ({counts[close].min()}–{counts[close].max()})" in headline, headline
    assert headline.index(named[tied[0]]) < headline.index(more)  # named with the first
    fig = draw_chart(result, language=language)
    fig.canvas.draw()
    ((ax, bars),) = [
        (ax, c) for ax in fig.axes for c in ax.collections if isinstance(c, PolyCollection)
    ]
    days = [t.get_text() for t in ax.get_xticklabels()]  # Mon … Fri, Thu's 0 among them
    colors = dict(zip(days, map(to_hex, bars.get_edgecolor()), strict=True))
    # Every weekday is within noise of the first (Thu's 0 too): none is painted the most.
    assert sorted(named[day] for day in (*tied, *close)) == sorted(days)
    assert to_hex(HIGH) not in set(colors.values())


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_chart_names_the_groups_within_the_fewests_noise_with_it(
    year_settings, year_minutes, language
) -> None:
    """p43f M2: "most often Fri 298, least often Wed 137" while Thu 141 and Tue 142 were
    within noise of Wed (p = 0.81): the least counted end is named with them too, as the most
    counted end is. Up days against each weekday's down days: a clear first, a noisy last."""
    days = year_minutes.groupby(year_minutes["timestamp"].dt.normalize()).agg(
        open=("open", "first"), close=("close", "last")
    )
    side = days.index.day_name().str[:3].where(days["close"] <= days["open"], "up")
    counts = pd.Series(side).value_counts()
    fewest = counts.sort_values(kind="stable").index[0]
    close = [
        day
        for day in counts.sort_values(kind="stable").index
        if day != fewest
        and stats.binomtest(int(counts[day]), int(counts[fewest] + counts[day]), 0.5).pvalue >= 0.05
    ]
    assert close and "up" not in close  # the premise: the bottom is noise, the top is not
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"side": "if(close > open, 'up', dayname())"},
        "select": ["side"],
        "then": {"group_by": "side", "select": "count() as days"},
    }
    result = ask(query, year_settings)
    assert dict(zip(result.table["side"], result.table["days"], strict=True)) == counts.to_dict()
    words = {"en": ("or", "(within noise)"), "ru": ("или", "(в пределах шума)")}[language]
    named = dict(zip(words_for("en").weekdays, words_for(language).weekdays, strict=True))
    headline = chart_headline(result, language)
    if len(close) <= 2:
        near = ", ".join(f"{named[day]} {counts[day]}" for day in close)
        least = f"{named[fewest]} {counts[fewest]} {words[0]} {near} {words[1]}"
    else:  # more are counted, their counts spanned: the caption ran to 170 characters
        # The count after words, not beside the end's: "18 days or 4 more" (p48d C6).
        more = {
            "en": f"within noise of {len(close)} others",
            "ru": f"в пределах шума ещё {len(close)} группы",
        }[language]
        span = f"{counts[close].min()}–{counts[close].max()}"
        unit = {"en": "days", "ru": "дней"}[language]  # "count() as days" is days (p47d D4)
        least = f"{named[fewest]} {counts[fewest]} {unit}, {more} ({span})"
    assert headline.endswith(least), headline
    noise = {"en": "within noise", "ru": "в пределах шума"}[language]
    assert headline.count(noise) == 1  # the most counted, 'up', stands alone
    # The model is told the same end, not only the chart: "'Wed' has the fewest …".
    [said] = [w for w in result.metadata.warnings if "has the fewest" in w]
    assert f"'{fewest}' has the fewest ({counts[fewest]} of {counts.sum():,})" in said
    assert all(f"'{day}' {counts[day]} (p = " in said for day in close)
    fig = draw_chart(result, language=language)
    fig.canvas.draw()
    ((ax, bars),) = [
        (ax, c) for ax in fig.axes for c in ax.collections if isinstance(c, PolyCollection)
    ]
    names = [t.get_text() for t in ax.get_xticklabels()]
    colors = dict(zip(names, map(to_hex, bars.get_edgecolor()), strict=True))
    together = [named[day] for day in (fewest, *close)]
    assert len({colors[day] for day in together}) == 1
    assert colors[together[0]] not in {colors[day] for day in colors if day not in together}


DOWN_BY_WEEKDAY = {
    "session": "RTH",
    "from": "daily",
    "where": "close < open",
    "group_by": "dayname()",
    "select": "count() as days",
}


def _weekday_table(rth_days: pd.DataFrame, hit: pd.Series) -> pd.DataFrame:
    """Each weekday's days and the where's hits among them, with pandas, Mon … Fri."""
    names = pd.Series(rth_days.index.day_name().str[:3], index=rth_days.index)
    table = pd.DataFrame({"days": names.value_counts(), "hits": hit.groupby(names).sum()})
    return table.reindex(["Mon", "Tue", "Wed", "Thu", "Fri"]).fillna(0).astype(int)


def test_a_first_stage_count_under_a_where_is_read_as_each_groups_share(
    engine_settings, rth_days
) -> None:
    """The lead's NQ: days down over 3% by weekday, Mon 33 … Tue 26, and inside days 85/68/
    64/81/77, were listed with no word, and "Monday has the most" read as a finding. The
    counts are the where's hits of each weekday's days (which holidays make unequal): tested
    as shares of them, by χ² on the weekdays × (hit, not) table, as scipy's
    chi2_contingency; within noise, the chart says so too."""
    table = _weekday_table(rth_days, rth_days["close"] < rth_days["open"])
    _, p, _, expected = stats.chi2_contingency(
        table[["hits"]].assign(others=table["days"] - table["hits"]), correction=False
    )
    assert p >= 0.05 and expected.min() >= 5  # the premise: χ², within noise
    result = ask(DOWN_BY_WEEKDAY, engine_settings)
    assert result.table["days"].tolist() == table["hits"].tolist()
    high, low = table["hits"].idxmax(), table["hits"].idxmin()

    def share(day: str) -> str:
        hits, days = table.loc[day, "hits"], table.loc[day, "days"]
        return f"'{day}' {hits} of its {days} days ({float(f'{100 * hits / days:.2g}'):g}%)"

    assert _noise(result) == [
        f"The counts differ by less than their noise: days over the 5 dayname groups, highest "
        f"{share(high)} and lowest {share(low)}, are as shares of their groups' days no "
        f"further apart than chance would put them (χ² p = {float(f'{p:.2g}'):g})."
    ]
    assert result.metadata.even_groups == ["days"]  # the chart's "within noise" line


def test_a_first_stage_count_that_depends_on_its_group_says_nothing(
    engine_settings, rth_days
) -> None:
    """Every Monday and Tuesday's up days: the weekday decides the count, and no note says
    otherwise (the other weekdays, emptied by the where, are tested as 0 of their days).
    Nor is a where on the calendar alone tested: its counts are the calendar's."""
    day = rth_days.index.dayofweek
    up = rth_days["close"] > rth_days["open"]
    table = _weekday_table(rth_days, pd.Series((day == 0) | ((day == 1) & up), rth_days.index))
    mon, tue = table.loc["Mon"], table.loc["Tue"]
    pair = stats.fisher_exact([[mon.hits, mon.days - mon.hits], [tue.hits, tue.days - tue.hits]])
    assert pair.pvalue < 0.05  # the premise: Monday stands apart from Tuesday
    query = {**DOWN_BY_WEEKDAY, "where": "dayofweek() == 0 or (dayofweek() == 1 and close > open)"}
    result = ask(query, engine_settings)
    assert result.table["days"].tolist() == [mon.hits, tue.hits]
    assert not _noise(result)
    assert not result.metadata.even_groups and not result.metadata.near_groups
    calendar = ask({**DOWN_BY_WEEKDAY, "where": "not holiday() and day() > 3"}, engine_settings)
    assert not _noise(calendar)


def test_the_lowest_group_is_one_the_where_emptied(engine_settings, minutes) -> None:
    """p46t A: a group the where emptied holds the fewest (0 of its bars): the counts' noise
    sentence names it as the lowest, not the lowest group counted (hour 2, 1 of 62 bars),
    as its test already counted those groups at 0."""
    stamps = minutes["timestamp"]
    hourly = minutes.groupby(stamps.dt.floor("h")).agg(high=("high", "max"), low=("low", "min"))
    over = (hourly["high"] - hourly["low"] > 20).groupby(hourly.index.hour).agg(["sum", "size"])
    empty = over.index[over["sum"] == 0].tolist()
    assert empty and (over["size"] == 62).all()  # the case: hours with none, 62 bars each
    result = ask(
        {"session": "ETH", "from": "1h", "where": "range > 20", "group_by": "hour()",
         "select": "count() as bars"},
        engine_settings,
    )  # fmt: skip
    assert sorted(result.table["hour"]) == over.index[over["sum"] > 0].tolist()
    [said] = [w for w in result.metadata.warnings if "their noise" in w]
    assert f"lowest hour {empty[0]} 0 of its 62 bars (0%)" in said


@pytest.mark.slow
def test_the_fewest_end_is_the_groups_the_where_emptied(sample_settings) -> None:
    """p46t A: NQ's 2024 ETH 1h bars with range > 120 by hour said "hour 2 has the fewest (1
    of 260 bars)" while six hours had none, which the next warning listed; with range > 200,
    no fewest note at all. The hours with none are that end, named together, and the
    counted hours within noise of them after them (scipy's Fisher test of the two shares)."""
    columns = ["high", "low", "trading_date", "minute"]
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=columns)
    bars = bars[bars["trading_date"].dt.year == 2024]
    bars["hour"] = bars["minute"] // 60
    hours = bars.groupby(["trading_date", "hour"]).agg(high=("high", "max"), low=("low", "min"))
    by_hour = (hours["high"] - hours["low"] > 120).groupby(level="hour").agg(["sum", "size"])
    empty = by_hour.index[by_hour["sum"] == 0].tolist()
    assert len(empty) == 6  # the case: hours 0, 1, 19, 20, 22 and 23
    sizes = by_hour.loc[empty, "size"]
    assert sizes.min() == sizes.max()
    result = ask(
        {"session": "ETH", "from": "1h", "period": "2024", "where": "range > 120",
         "group_by": "hour()", "select": "count() as bars"},
        sample_settings,
    )  # fmt: skip
    [fewest] = [w for w in result.metadata.warnings if "the fewest" in w]
    listed = ", ".join(f"hour {h}" for h in empty[:5]) + " and 1 more"
    assert fewest.startswith(
        f"bars: {listed} have the fewest (0 of {sizes.iloc[0]} bars each), but "
    )
    low = by_hour.drop(empty).sort_values("sum", kind="stable").index[0]
    hits, size = by_hour.loc[low]
    p = stats.fisher_exact([[hits, size - hits], [0, sizes.iloc[0]]]).pvalue
    share = float(f"{100 * hits / size:.2g}")
    assert f"hour {low} {hits} of its {size} bars ({share:g}%, p = {float(f'{p:.2g}'):g})" in fewest


LOW_HOUR = {
    "session": "ETH",
    "from": "1h",
    "group_by": "date()",
    "select": "arg_min(time(), low) as low_hour",
    "then": {"group_by": "low_hour", "select": "count() as days", "sort": "days desc"},
}


@pytest.fixture(scope="module")
def low_hours(minutes: pd.DataFrame) -> pd.Series:
    """Days whose ETH low fell in each hourly bar (the earliest of a tie), every hour the
    session has a bar in, 0 where none: pandas over the fixture's minutes."""
    stamps = minutes["timestamp"]
    day = (stamps + pd.Timedelta(hours=6)).dt.normalize()  # 18:00 opens the next date
    lows = minutes.groupby([day.rename("day"), stamps.dt.floor("h").rename("hour")])["low"].min()
    hours = lows.reset_index()
    picked = hours.loc[hours.groupby("day")["low"].idxmin(), "hour"].dt.strftime("%H:%M")
    every = sorted(hours["hour"].dt.strftime("%H:%M").unique())
    return picked.value_counts().reindex(every, fill_value=0)


def test_the_hours_no_days_low_fell_in_are_listed_at_zero(engine_settings, low_hours) -> None:
    """p48d M1: CL's ETH hour of the day's low over 3 months listed the 20 hours some low
    fell in, and the warning and chart named '00:00' (1 of 64) the fewest while 13:00, 20:00
    and 21:00 had none. Every hour of the session is listed, those with no low at 0, and
    they are the fewest end the model and the chart are told of."""
    empty = low_hours.index[low_hours == 0].tolist()
    assert len(low_hours) == 23 and empty == ["07:00", "13:00"]  # the fixture's case
    result = ask(LOW_HOUR, engine_settings)
    table = result.table
    assert dict(zip(table["low_hour"], table["days"], strict=True)) == low_hours.to_dict()
    assert table["low_hour"].tolist()[-2:] == empty  # sorted last, days desc
    total = int(low_hours.sum())
    [fewest] = [w for w in result.metadata.warnings if "the fewest" in w]
    assert fewest.startswith(f"days: '07:00' and '13:00' have the fewest (0 each of {total}), ")
    low = low_hours[low_hours > 0].sort_values(kind="stable")
    p = stats.binomtest(0, int(low.iloc[0]), 0.5).pvalue
    assert f"'{low.index[0]}' {low.iloc[0]} (p = {float(f'{p:.2g}'):g})" in fewest
    headline = chart_headline(result, "en")
    assert "least often 0 days (tie: 07:00, 13:00)" in headline, headline


def test_a_count_by_minute_of_the_low_lists_no_empty_minutes(engine_settings, low_hours) -> None:
    """The minutes of the day no low fell in (over a thousand) are no answer: not listed."""
    query = {**LOW_HOUR, "from": "1m"}
    result = ask(query, engine_settings)
    assert (result.table["days"] > 0).all()
    assert int(result.table["days"].sum()) == int(low_hours.sum())


def test_the_chart_numbers_tied_groups_as_one_place_and_names_those_the_limit_cut(
    engine_settings, low_hours
) -> None:
    """p48c Q35: limit 8 cut through 5 groups of 8 weeks; the text said so, the chart
    numbered the 3 kept "6., 7., 8." and named none of the 2 cut. Tied bars share the
    first one's place (pandas' rank by "min"), and a note names those past the limit."""
    limit = 6
    ordered = low_hours.sort_values(ascending=False, kind="stable")  # then key order
    edge = ordered.iloc[limit - 1]
    cut = ordered.iloc[limit:][ordered.iloc[limit:] == edge].index.tolist()
    assert len(cut) >= 2  # the case: the 6th hour's count held by more past the limit
    places = ordered.rank(method="min", ascending=False).astype(int).iloc[:limit]
    assert places.duplicated().any()  # ties among those kept too
    query = {**LOW_HOUR, "then": {**LOW_HOUR["then"], "limit": limit}}
    result = ask(query, engine_settings)
    assert result.table["low_hour"].tolist() == places.index.tolist()
    fig = draw_chart(result, language="en")
    fig.canvas.draw()
    labels = [t.get_text() for ax in fig.axes for t in ax.get_xticklabels() if t.get_text()]
    assert labels == [f"{place}. {hour}" for hour, place in places.items()]
    shown = " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())
    assert f"Also {edge}, cut by the limit: {', '.join(cut[:3])}" in shown.replace("\n", " ")


def test_a_where_on_the_picked_hour_lists_no_hour_it_left_out(engine_settings, low_hours) -> None:
    """``low_hour >= '09:00'`` leaves the night hours out on purpose: none is listed at 0,
    nor is 13:00, which no low fell in, the where having read the key."""
    query = {**LOW_HOUR, "then": {**LOW_HOUR["then"], "where": "low_hour >= '09:00'"}}
    result = ask(query, engine_settings)
    kept = low_hours[(low_hours.index >= "09:00") & (low_hours > 0)]
    assert dict(zip(result.table["low_hour"], result.table["days"], strict=True)) == kept.to_dict()


def test_a_where_on_what_the_groups_are_keyed_by_is_no_count_to_test(
    engine_settings, rth_days, minutes
) -> None:
    """p48c Q36: gap-up and gap-down weeks, "where": "open != pwc" under "group_by": "open >
    pwc", were told "476 of 476 days against 460 of 464, Fisher p = 0.059": a test of how
    often the where's filter on the key's own values passed. Such a part narrows each group's
    days, as the calendar's does; a where with nothing else says nothing, and a part that
    picks by other values is tested over the days the narrowing keeps (pandas' counts,
    scipy's Fisher test)."""
    up = rth_days["close"] > rth_days["open"]
    query = {"session": "RTH", "from": "daily", "group_by": "close > open",
             "select": "count() as days"}  # fmt: skip
    kept = rth_days["close"] - rth_days["open"] > -30  # drops the 3 biggest down days
    assert int((~up & ~kept).sum()) == 3 and (up & kept).equals(up)
    alone = ask({**query, "where": "close - open > -30"}, engine_settings)
    assert alone.table["days"].tolist() == [int((~up & kept).sum()), int(up.sum())]
    assert not _noise(alone)  # had been "true 31 of 31 days and false 28 of 31, p = 0.24"

    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    rth = minutes[(minute >= RTH[0]) & (minute < RTH[1])]
    days = rth.groupby(rth["timestamp"].dt.normalize()).agg(
        high=("high", "max"), low=("low", "min")
    )
    wide = (days["high"] - days["low"]) > 25
    narrowed = rth_days["close"] - rth_days["open"] > -5
    hits = narrowed & wide
    table = [[int((hits & ~up).sum()), int((narrowed & ~up).sum())],
             [int((hits & up).sum()), int((narrowed & up).sum())]]  # fmt: skip
    assert table[0][1] < int((~up).sum())  # the case: the narrowing drops some down days
    p = stats.fisher_exact([[hit, rows - hit] for hit, rows in table]).pvalue
    assert p >= 0.05  # the premise: within noise, so said
    result = ask({**query, "where": "close - open > -5 and range > 25"}, engine_settings)
    assert result.table["days"].tolist() == [table[0][0], table[1][0]]
    [said] = _noise(result)
    for key, (hit, rows) in zip(("false", "true"), table, strict=True):
        assert f"close_gt_open {key} {hit} of its {rows} days" in said
    assert f"Fisher's exact test p = {float(f'{p:.2g}'):g})" in said


def test_groups_tied_for_the_fewest_are_named_together(engine_settings, low_hours) -> None:
    """p48f C3: "'01:00' has the fewest (3 of 259), but 12 other groups are within noise of
    it: '02:00' 3 (p = 1), '04:00' 3 (p = 1) ..." called one of three equal counts the
    fewest. Hours tied at the fewest count above zero are named together, as those at 0
    were (five by name)."""
    query = {**LOW_HOUR, "then": {**LOW_HOUR["then"], "where": "low_hour >= '00:00'"}}
    result = ask(query, engine_settings)
    counted = low_hours[low_hours > 0]
    assert (
        dict(zip(result.table["low_hour"], result.table["days"], strict=True)) == counted.to_dict()
    )
    fewest = counted[counted == counted.min()]
    assert len(fewest) > 3  # the case: a tie at the fewest, above zero
    [said] = [w for w in _noise(result) if "the fewest" in w]
    hours = sorted(fewest.index)  # in the table's order: by count, then by hour
    names = ", ".join(f"'{hour}'" for hour in hours[:5])
    assert said.startswith(f"days: {names} and {len(hours) - 5} more have the fewest ")
    assert f"({counted.min()} each of {counted.sum()})" in said


def test_an_outcome_reading_some_of_the_keys_columns_is_tested_as_shares(
    engine_settings, rth_days
) -> None:
    """r48c #2: "do gap-up days close green more often", "where": "close > open" under
    "group_by": "gap_up" with gap_up = open > prev(close), reads close and open, some of
    what the key reads: it was taken for a condition on the key's own values (p48c Q36's
    open != pwc under open > pwc) and the counts (NQ 1,235 against 1,143, 51% and 51%)
    were listed with no word. It is the day's outcome, tested as each group's share of its
    days (pandas' counts, scipy's χ²), inline as through a map column."""
    gap = rth_days["open"] > rth_days["close"].shift()
    gap, up = gap.iloc[1:], (rth_days["close"] > rth_days["open"]).iloc[1:]  # day 1: no gap
    table = pd.DataFrame({"days": gap.value_counts(), "hits": up.groupby(gap).sum()})
    table = table.reindex([False, True])
    _, p, _, expected = stats.chi2_contingency(
        table[["hits"]].assign(others=table["days"] - table["hits"]), correction=False
    )
    assert p >= 0.05 and expected.min() >= 5  # the premise: χ², within noise
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"gap_up": "open > prev(close)"},
        "where": "close > open",
        "group_by": "gap_up",
        "select": "count() as days",
    }
    inline = ask(query, engine_settings)
    assert inline.table["days"].tolist() == table["hits"].tolist()
    mapped = ask(
        {**query, "map": {**query["map"], "green": "close > open"}, "where": "green"},
        engine_settings,
    )
    for result in (inline, mapped):
        [said] = _noise(result)
        for key, (days, hits) in zip(("false", "true"), table.to_numpy(), strict=True):
            assert f"gap_up {key} {hits} of its {days} days" in said, said
        assert said.endswith(f"(χ² p = {float(f'{p:.2g}'):g}).")


def test_the_tie_cut_by_the_limit_names_months_as_the_bars_do(engine_settings, rth_days) -> None:
    """p48i 1: "two months of 2025 with the most up days" with September and October tied
    at 14 drew Dec and Sep and noted "Also 14, cut by the limit: 10": October's number,
    which read as ten more. The months cut are named as the bars name them, in the chart's
    language (pandas' count of each month's days 1-7)."""
    first_week = rth_days.index[rth_days.index.day <= 7]
    counts = pd.Series(first_week.month).value_counts().sort_index()
    ordered = counts.sort_values(ascending=False, kind="stable")
    edge = ordered.iloc[0]
    cut = [m for m in ordered.index[1:] if ordered[m] == edge]
    assert cut == [3] and ordered.index[0] == 2  # the case: Feb and Mar tied, Mar cut
    query = {"session": "RTH", "from": "daily", "where": "day() <= 7", "group_by": "month()",
             "select": "count() as days", "sort": "days desc", "limit": 1}  # fmt: skip
    result = ask(query, engine_settings)
    for language in ("en", "ru"):
        fig = draw_chart(result, language=language)
        fig.canvas.draw()
        shown = " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())
        month = words_for(language).months[cut[0] - 1]
        assert month in ("Mar", "мар")
        note = words_for(language)("limit_tie_note", value=str(edge), names=month)
        assert note in shown.replace("\n", " "), shown
        # and the caption says #2 is a tie too: "#2 Feb 5 days, tied with Mar"
        feb = words_for(language).months[ordered.index[0] - 1]
        tied_with = {"en": f"{feb} {edge} days, tied with {month}",
                     "ru": f"{feb} {edge} дней, столько же: {month}"}[language]  # fmt: skip
        assert tied_with in chart_headline(result, language), chart_headline(result, language)
        # The CSV says it too, on the row March ties with: its file held Feb alone.
        sep = csv_dialect(language).separator
        frame = pd.read_csv(io.BytesIO(csv_bytes(result, language)), sep=sep, dtype=str)
        header = {"en": "note", "ru": "примечание"}[language]
        assert frame[header].fillna("").tolist() == [note], frame


@pytest.mark.parametrize("language", ["en", "ru"])
def test_months_no_test_could_compare_are_spanned_not_crowned(
    engine_settings, rth_days, language
) -> None:
    """p48i 3: one year of NQ's months drew May 371.59 orange as "the most" against Jan
    369.51, while only the model was told each month is one stretch that no test can
    compare. The fixture's three months, once each: the headline spans pandas' lowest and
    highest monthly mean body and says they are too few to compare; no bar is coloured."""
    means = (rth_days["close"] - rth_days["open"]).groupby(rth_days.index.month).mean()
    high, low = int(means.idxmax()), int(means.idxmin())
    query = {"session": "RTH", "from": "daily", "group_by": "month()",
             "select": "mean(close - open) as body"}  # fmt: skip
    result = ask(query, engine_settings)
    assert any("each month appears once" in w for w in result.metadata.warnings)
    months = words_for(language).months
    headline = chart_headline(result, language)
    said = {"en": "too few years to compare", "ru": "слишком мало лет для сравнения"}
    assert said[language] in headline, headline
    assert headline.index(months[low - 1]) < headline.index(months[high - 1]), headline
    fig = draw_chart(result, language=language)
    fig.canvas.draw()
    ((_, bars),) = [
        (ax, c) for ax in fig.axes for c in ax.collections if isinstance(c, PolyCollection)
    ]
    assert {to_hex(HIGH), to_hex(LOW)}.isdisjoint(map(to_hex, bars.get_facecolor()))


def test_a_line_of_time_of_day_groups_is_ticked_at_round_times(engine_settings, minutes) -> None:
    """p48i 7: mean volume by time() of 1-minute RTH bars, 450 groups drawn as a line, was
    ticked every 63rd minute: 10:33, 11:36, 12:39. The ticks are whole hours (or halves,
    quarters) among the session's minutes, as pandas lists them."""
    stamps = minutes["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    session = sorted(set(minute[(minute >= RTH[0]) & (minute < RTH[1])]))
    assert len(session) == 450  # the case: more groups than bars are drawn for
    query = {"session": "RTH", "from": "1m", "group_by": "time()", "select": "mean(volume)"}
    fig = draw_chart(ask(query, engine_settings), language="en")
    fig.canvas.draw()
    ticks = [t.get_text() for ax in fig.axes for t in ax.get_xticklabels() if t.get_text()]
    at = [int(t[:2]) * 60 + int(t[3:]) for t in ticks]
    assert len(at) >= 4 and set(at) <= set(session), ticks
    assert all(m % 15 == 0 for m in at), ticks


def test_a_where_on_the_buckets_own_values_is_no_count_to_test(engine_settings, rth_days) -> None:
    """ "How often do gaps fill, by gap size": gap days bucketed by floor(abs(gap), step)
    under "where": "abs(gap) >= step". Each bucket's days are all kept (1,069 of its 1,069
    against 753 of its 753 on NQ), so the counts are the buckets' sizes, how the gaps spread;
    yet "bucket 0.25 has the most, but 22 other groups are within noise of it (p = 1); their
    order is noise" was said of them. The where reads what the key reads, abs() and floor()
    aside: it narrows the rows as the calendar's would, and nothing is tested (pandas'
    counts)."""
    gap = (rth_days["open"] - rth_days["close"].shift()).abs()
    step = float(gap.quantile(0.2))
    buckets = (gap[gap >= step] // step * step).value_counts().sort_index()
    assert len(buckets) >= 3 and buckets.nunique() > 1  # the case: buckets of unequal size
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"gap": "open - prev(close)", "bucket": f"floor(abs(gap), {step!r})"},
        "where": f"abs(gap) >= {step!r}",
        "group_by": "bucket",
        "select": "count() as days",
    }
    result = ask(query, engine_settings)
    assert result.table["days"].tolist() == buckets.tolist()
    assert not _noise(result), _noise(result)
