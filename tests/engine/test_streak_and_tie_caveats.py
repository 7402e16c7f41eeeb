"""What a streak or an arg_max answer does not show by itself: a run that began before the
period, and other rows tied with the one shown. Expected runs and ties are found with pandas
over daily bars built from the minute file (rth_bars)."""

from __future__ import annotations

import pandas as pd
import pytest
from matplotlib.text import Text
from rth_bars import rth_daily, rth_hourly

from barb import execute
from barb.charts import draw_chart
from barb.data.store import data_path


def _down_runs(daily: pd.DataFrame) -> pd.Series:
    down = daily["close"] < daily["close"].shift()
    return down.groupby((~down).cumsum()).cumsum().astype(int)


def _name(day) -> str:
    return day if isinstance(day, str) else f"{day:%Y-%m-%d}"


def _longest_said(runs: pd.Series, start: int, end: int, form: str) -> str:
    """The warning of the run ending at row ``end`` that began before the period opening at
    row ``start``: its length from its first row, its rows before the period, and the
    longest run counted from row ``start`` on (each run's rows before it left out), where
    ``form`` counts so."""
    length = int(runs.iloc[end])
    began = end - length + 1
    inside = runs.iloc[start:].copy()
    if inside.iloc[0] > 0:  # the run the period opens in, numbered from the period's first row
        opening = int((inside > 0).cummin().sum())
        inside.iloc[:opening] = range(1, opening + 1)
    return (
        f"streak() counts the run ending {_name(runs.index[end])} ({length}) from "
        f"{_name(runs.index[began])}, {start - began} of its rows before the period; within "
        f"the period alone the longest run is {int(inside.max())}, ending "
        f"{_name(inside.idxmax())}, as {form} counts it."
    )


_THEN = "streak() in a then stage over the rows the first stage lists"


def _streak_query(period: str) -> dict:
    return {
        "session": "RTH",
        "from": "daily",
        "period": period,
        "map": {"down_run": "streak(close < prev(close))"},
        "select": ["max(down_run) as longest", "arg_max(date(), down_run) as end_date"],
    }


def _streak_warnings(result) -> list[str]:
    return [w for w in result.metadata.warnings if w.startswith("streak()")]


def _period_inside_a_run(runs: pd.Series) -> tuple[int, int, int]:
    """A period opening on the third day or later of a down run: its first day's position,
    the run's last day's, and the run's length."""
    start = next(i for i in range(20, len(runs)) if runs.iloc[i] >= 3)
    end = start
    while end + 1 < len(runs) and runs.iloc[end + 1] > runs.iloc[end]:
        end += 1
    return start, end, int(runs.iloc[end])


def test_a_run_begun_before_the_period_is_named(engine_settings, minutes) -> None:
    runs = _down_runs(rth_daily(minutes))
    days = runs.index
    start, end, _ = _period_inside_a_run(runs)
    result = execute(_streak_query(f"{days[start]:%Y-%m-%d}:"), "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    assert _streak_warnings(result) == [_longest_said(runs, start, end, _THEN)]


def test_no_warning_when_the_period_opens_outside_a_run(engine_settings, minutes) -> None:
    runs = _down_runs(rth_daily(minutes))
    start = next(i for i in range(20, len(runs)) if runs.iloc[i] <= 1)
    period = f"{runs.index[start]:%Y-%m-%d}:"
    result = execute(_streak_query(period), "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    assert _run_warnings(result) == []


def test_a_run_begun_before_the_period_is_named_only_when_a_row_of_it_is_kept(
    engine_settings, minutes
) -> None:
    """ "3 down days in a row in 2025" with where run == 3 named the 7-day run that opened
    2025, though no row of it was in the result. The period here opens inside a down run;
    a where that keeps none of the run's rows in the period says nothing of it, one that
    keeps its end names it."""
    runs = _down_runs(rth_daily(minutes))
    days = runs.index
    start, end, length = _period_inside_a_run(runs)
    period = f"{days[start]:%Y-%m-%d}:"
    inside = runs.iloc[start:]
    query = {**_streak_query(period), "select": "count()"}

    others = execute({**query, "where": "down_run < 2"}, "NQ", settings=engine_settings)
    assert others.ok, others.to_dict()
    assert others.summary.value == int((inside < 2).sum())
    assert _run_warnings(others) == []

    its_end = execute({**query, "where": f"down_run == {length}"}, "NQ", settings=engine_settings)
    assert its_end.ok, its_end.to_dict()
    assert its_end.summary.value == int((inside == length).sum())
    began = end - length + 1
    # Read against a number alone: the rows the run's days before the period move across
    # it, in one sentence (p48d C4), not the period's longest run.
    assert _run_warnings(its_end) == [
        f"down_run == {length} holds on {days[end]:%Y-%m-%d} as streak() reads {length} "
        f"there, counting the run from {days[began]:%Y-%m-%d}, {start - began} of its rows "
        f"before the period; {_THEN} counts from the period's start and reads "
        f"{end - start + 1}, where it does not hold."
    ]

    # A limit lists rows: the run is named when they include its row, not otherwise.
    ranked = {"session": "RTH", "from": "daily", "period": period,
              "map": {"down_run": "streak(close < prev(close))"}, "limit": 1}  # fmt: skip
    top = inside.sort_values(ascending=False, kind="stable").index[0]
    assert top == days[end]  # the run the period opens in is its longest
    longest = execute({**ranked, "sort": "down_run desc"}, "NQ", settings=engine_settings)
    assert longest.ok, longest.to_dict()
    assert _streak_warnings(longest) == [_longest_said(runs, start, end, _THEN)]
    latest = execute({**ranked, "sort": "date desc"}, "NQ", settings=engine_settings)
    assert latest.ok, latest.to_dict()
    assert latest.table["date"].iloc[0] == f"{days[-1]:%Y-%m-%d}" and days[-1] > days[end]
    assert _run_warnings(latest) == []


def _tie_warnings(result) -> list[str]:
    return [w for w in result.metadata.warnings if " rows share the " in w]


def test_tied_longest_runs_are_all_named(engine_settings, minutes) -> None:
    runs = _down_runs(rth_daily(minutes))
    ends = runs.index[runs == runs.max()]
    result = execute(_streak_query("all"), "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    assert result.summary.values["end_date"] == ends[0]
    if len(ends) == 1:
        assert _tie_warnings(result) == []
    else:
        others = ", ".join(f"{d:%Y-%m-%d}" for d in ends[1:6])
        assert _tie_warnings(result)[0].startswith(
            f"{len(ends)} rows share the largest down_run ({runs.max()}): "
            f"{ends[0]:%Y-%m-%d} is shown (the earliest); also {others}"
        )


def test_many_ties_list_five_and_count_the_rest(engine_settings, minutes) -> None:
    """Every Friday has the largest weekday: the first is shown, five more listed."""
    days = rth_daily(minutes).index
    fridays = days[days.dayofweek == days.dayofweek.max()]
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"wd": "dayofweek()"},
        "select": ["arg_max(date(), wd) as day", "arg_min(date(), wd) as first_monday"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    listed = ", ".join(f"{d:%Y-%m-%d}" for d in fridays[1:6])
    assert (
        f"{len(fridays)} rows share the largest wd (4): {fridays[0]:%Y-%m-%d} is shown (the "
        f"earliest); also {listed} and {len(fridays) - 6} more."
    ) in _tie_warnings(result)
    assert any(
        w.startswith(f"{len(days[days.dayofweek == 0])} rows share the smallest wd (0)")
        for w in _tie_warnings(result)
    )


def test_grouped_arg_max_counts_the_groups_with_ties(engine_settings, minutes) -> None:
    """Every month's largest weekday is each of its Fridays: each month shows its first
    Friday, and the warning counts the months and lists the other Fridays of each."""
    days = rth_daily(minutes).index
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"wd": "dayofweek()"},
        "group_by": "month()",
        "select": "arg_max(date(), wd) as day",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.ok, result.to_dict()
    months, shown = [], []
    for month, dates in pd.Series(days, index=days.month).groupby(level=0):
        top = dates[dates.dt.dayofweek == dates.dt.dayofweek.max()]
        also = ", ".join(f"{d:%Y-%m-%d}" for d in top.iloc[1:6])  # a few groups: up to 5
        more = f" and {len(top) - 6} more" if len(top) > 6 else ""
        months.append(f"{month}: {top.iloc[0]:%Y-%m-%d}, also {also}{more}")
        shown.append(top.iloc[0])
    n = len(months)
    assert result.table["day"].tolist() == shown
    assert [w for w in result.metadata.warnings if "tie for the" in w] == [
        f"In {n} of {n} month groups (100.0%), two or more rows tie for the largest wd: "
        f"arg_max gives each the earliest of them only ({'; '.join(months)})."
    ]


def test_an_intraday_streak_restarts_each_day_with_per_and_warns_without(
    engine_settings, minutes
) -> None:
    """ "After 3 red hours in a row": the run went on through the night, counting yesterday's
    last hours with today's first (2,245 cases for 2,036 on the sample)."""
    hours = rth_hourly(minutes)
    red = hours["close"] < hours["open"]
    days = hours.index.get_level_values("day")
    per_day = red.groupby([days, (~red).cumsum()]).cumsum()
    through = red.groupby((~red).cumsum()).cumsum()
    assert (per_day == 3).sum() != (through == 3).sum()  # the data tells them apart

    def run(expression: str):
        query = {
            "session": "RTH",
            "from": "1h",
            "map": {"run": expression},
            "where": "run == 3",
            "select": "count()",
        }
        result = execute(query, "NQ", settings=engine_settings)
        assert result.ok, result.to_dict()
        return result

    daily = run("streak(close < open, 'day')")
    assert daily.summary.value == (per_day == 3).sum()
    assert not _streak_warnings(daily)
    across = run("streak(close < open)")
    assert across.summary.value == (through == 3).sum()
    crossing = int((through > hours.groupby("day").cumcount() + 1).sum())
    assert (
        f"streak() runs on across sessions: {crossing:,} of the rows count bars of an earlier "
        "trading date; streak(cond, 'day') restarts the count each day."
    ) in _streak_warnings(across)


def test_an_intraday_next_that_reads_the_next_day_is_said(engine_settings, minutes) -> None:
    """ "After 3 red hours in a row, is the next hour green?": the day's last hour's "next
    hour" was the next morning's first. Counted in pandas; the where the warning gives keeps
    each next hour within its day."""
    hours = rth_hourly(minutes)
    red = hours["close"] < hours["open"]
    days = hours.index.get_level_values("day")
    run = red.groupby([days, (~red).cumsum()]).cumsum()
    following = pd.Series(days, index=hours.index).shift(-1)
    same_day = following == days
    later_day = following.notna().to_numpy() & ~same_day.to_numpy()  # the data's end: none
    query = {
        "session": "RTH",
        "from": "1h",
        "map": {"run": "streak(close < open, 'day')", "up": "next(close) > next(open)"},
        "where": "run == 3",
        "select": ["count()", "mean(up) as up_share"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    crossing = int(((run == 3) & later_day).sum())
    assert crossing and result.summary.values["count"] == (run == 3).sum()
    assert (
        f"next(close) reads a later trading date for {crossing:,} of the {(run == 3).sum():,} "
        'rows kept (the day\'s last bars); "where": "… and next(date()) == date()" keeps it '
        "within the day."
    ) in result.metadata.warnings
    within = execute(
        {**query, "where": "run == 3 and next(date()) == date()"}, "NQ", settings=engine_settings
    )
    assert within.summary.values["count"] == ((run == 3) & same_day.to_numpy()).sum()
    assert not [w for w in within.metadata.warnings if "later trading date" in w]


@pytest.mark.slow
def test_a_monthly_run_begun_before_the_period_is_named_by_its_months(sample_settings) -> None:
    """ "How many months in a row is NQ up now" over last_3_bars named the run "ending
    2026-01-02", the month's first trading date, though it runs to the data's last close
    (p30b Q23): monthly bars are named by their month, as the table labels them. Every row
    of last_3_bars is in that run, so nothing is said there now (p48f M4); a period of two
    months, the run's last and the one that broke it, names it by its months."""
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=["trading_date", "close"])
    month = pd.DatetimeIndex(bars["trading_date"]).to_period("M")
    closes = bars["close"].groupby(month).last()
    up = closes > closes.shift()
    runs = up.groupby((~up).cumsum()).cumsum().astype(int)
    start = len(runs) - 3  # last_3_bars
    end = len(runs) - 1
    length = int(runs.iloc[end])
    assert length > end - start + 1  # the run began before the period (the sample's own)
    query = {
        "session": "ETH",
        "from": "monthly",
        "period": "last_3_bars",
        "map": {"run": "streak(close > prev(close))"},
        "select": ["close", "run"],
    }
    result = execute(query, "NQ", settings=sample_settings)
    assert result.ok, result.to_dict()
    assert result.table["run"].iloc[-1] == length
    assert _streak_warnings(result) == []
    # The last run of 2+ months that a down month broke: the period is its last month and
    # that one.
    last = max(i for i in range(1, len(runs) - 1) if runs.iloc[i] >= 2 and runs.iloc[i + 1] == 0)
    period = f"{runs.index[last]}:{runs.index[last + 1]}"
    broken = execute(query | {"period": period}, "NQ", settings=sample_settings)
    assert broken.ok, broken.to_dict()
    length = int(runs.iloc[last])
    [said] = _streak_warnings(broken)
    assert said.startswith(
        f"streak() counts the run ending {runs.index[last]} ({length}) from "
        f"{runs.index[last - length + 1]}, {length - 1} of its rows before the period"
    )


def test_a_run_begun_before_a_month_names_the_months_own_longest_and_form(
    engine_settings, minutes
) -> None:
    """ "The longest losing streak in 2025" read 7, ending 2025-01-02, with 6 of its days in
    December 2024 said but no way to count 2025's alone (6, 05-15 to 05-22; p46f Q17). The
    up run that opens March 2024 here: the warning gives March's own longest and the form
    that counts it, and that form, run, gives pandas' run restarted each month."""
    daily = rth_daily(minutes)
    up = daily["close"] > daily["close"].shift()
    runs = up.groupby((~up).cumsum()).cumsum().astype(int)
    march = runs.loc["2024-03"]
    assert march.iloc[0] > 1  # the case: March opens inside a run begun in February
    monthly = up.groupby([(~up).cumsum(), daily.index.month]).cumsum().astype(int)
    own = monthly.loc["2024-03"]
    assert own.max() < march.max()
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024-03",
        "map": {"run": "streak(close > prev(close))"},
        "select": ["max(run) as longest", "arg_max(date(), run) as ended"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    length = int(march.iloc[0])
    assert result.summary.values == {"longest": length, "ended": march.index[0]}
    opens = runs.index.get_loc(march.index[0])
    assert _streak_warnings(result) == [
        _longest_said(runs, opens, opens, "streak(close > prev(close), 'month')")
    ]
    assert (
        f"the longest run is {own.max()}, ending {own.idxmax():%Y-%m-%d}"
        in (_streak_warnings(result)[0])
    )
    query["map"] = {"run": "streak(close > prev(close), 'month')"}
    fixed = execute(query, "NQ", settings=engine_settings)
    assert fixed.summary.values == {"longest": own.max(), "ended": own.idxmax()}
    assert _run_warnings(fixed) == []


def test_the_restart_offered_is_the_unit_the_period_names(tmp_path_factory, minutes) -> None:
    """For the period "2026", whose rows (to 2026-01-07) are also one month's, the form
    offered was streak(cond, 'month'), where the person asked for a year (p46t minor). The
    hand-made bars moved 3 weeks back (2023-12-12 to 2024-03-07): "2024" opens inside an up
    run begun in 2023, and its rows are also one quarter's; the form is the year's, and run
    it gives pandas' run restarted each year."""
    from small_bars import write_minutes

    from barb.settings import EngineSettings

    moved = minutes.assign(timestamp=minutes["timestamp"] - pd.Timedelta(days=21))
    settings = EngineSettings(data_dir=tmp_path_factory.mktemp("moved_back"))
    write_minutes(moved, "NQ", settings, "the engine bars, 3 weeks earlier")
    daily = rth_daily(moved)
    up = daily["close"] > daily["close"].shift()
    yearly = up.groupby([(~up).cumsum(), daily.index.year]).cumsum().astype(int)
    runs = up.groupby((~up).cumsum()).cumsum().astype(int)
    assert runs.loc["2024"].iloc[0] > yearly.loc["2024"].iloc[0]  # the case: a run from 2023
    assert daily.loc["2024"].index.quarter.nunique() == 1  # one quarter's rows too
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "map": {"run": "streak(close > prev(close))"},
        "select": ["max(run) as longest", "arg_max(date(), run) as ended"],
    }
    [said] = _streak_warnings(execute(query, "NQ", settings=settings))
    assert said.endswith(", as streak(close > prev(close), 'year') counts it.")
    query["map"] = {"run": "streak(close > prev(close), 'year')"}
    fixed = execute(query, "NQ", settings=settings)
    own = yearly.loc["2024"]
    assert fixed.summary.values == {"longest": own.max(), "ended": own.idxmax()}
    assert _run_warnings(fixed) == []


def test_a_longest_run_the_period_ends_inside_is_said_whole(engine_settings, minutes) -> None:
    """ "The longest losing streak of 2024" read 6 with the run 2024-12-19 to 12-31 among
    its ties and nothing said that it went on to 7 on 2025-01-02 (p46f Q17). February's
    longest up run here is the one the month ends in; it goes on into March."""
    daily = rth_daily(minutes)
    up = daily["close"] > daily["close"].shift()
    runs = up.groupby((~up).cumsum()).cumsum().astype(int)
    february = runs.loc["2024-02"]
    assert february.iloc[-1] == february.max() and runs.loc["2024-03-01"] > 0  # the case
    after = runs.loc["2024-03-01":]
    ended = after.index[int((after > 0).cummin().sum()) - 1]
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024-02",
        "map": {"run": "streak(close > prev(close))"},
        "select": "max(run) as longest",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.summary.value == february.max()
    assert [w for w in result.metadata.warnings if w.startswith("The run ending")] == [
        f"The run ending 2024-02-29 ({february.iloc[-1]}) is still going on the period's last "
        f"row: it went on to {runs.loc[ended]} on {ended:%Y-%m-%d}; a period reaching "
        f"{ended:%Y-%m-%d} counts it whole."
    ]
    # Not said where the longest run is not the one the period ends in (January's).
    january = execute({**query, "period": "2024-01"}, "NQ", settings=engine_settings)
    assert runs.loc["2024-01"].iloc[-1] < runs.loc["2024-01"].max()
    assert not [w for w in january.metadata.warnings if w.startswith("The run ending")]
    # Nor of a count of the days at one length, which the run going on does not change: "NQ
    # up 3 days in a row in 2025" (where run == 3), 16, had been told the run ending on the
    # period's last day counts whole in a longer period (p48d C3).
    length = int(february.iloc[-1])
    for where, days in (("==", february == length), (">=", february >= length)):
        counted = execute(
            {**query, "where": f"run {where} {length}", "select": "count()"},
            "NQ",
            settings=engine_settings,
        )
        assert counted.summary.value == int(days.sum())
        assert not [w for w in counted.metadata.warnings if w.startswith("The run ending")]


def test_a_run_past_the_period_reads_only_the_bars_after_it(
    engine_settings, minutes, monkeypatch
) -> None:
    """Carrying a cut run on ran the whole first stage again from the data's start, over
    ever longer periods: NQ's ETH minute bars of 2008-02 went from 2.1 s and 255 MB to 10 s
    and 1.24 GB (p46w #7). Only the streak's condition is read now, over the bars after the
    period and the history it reads (2 days for a 3-day mean), not the other streak the map
    holds; the run's whole length is pandas'."""
    from barb.caveats import run_edges

    daily = rth_daily(minutes)
    above = daily["close"] > daily["close"].rolling(3).mean()
    runs = above.groupby((~above).cumsum()).cumsum().astype(int)
    at = next(i for i in range(20, len(runs) - 1) if runs.iloc[i] > 0 and runs.iloc[i + 1] > 0)
    day = runs.index[at]
    after = runs.iloc[at + 1 :]
    ended = after.index[int((after > 0).cummin().sum()) - 1]
    loaded: list[pd.Timestamp] = []
    real = run_edges.bars_in_scope

    def recorded(plan):
        scope = real(plan)
        loaded.append(pd.Timestamp(scope.frame["trading_date"].min()))
        return scope

    monkeypatch.setattr(run_edges, "bars_in_scope", recorded)
    query = {
        "session": "RTH",
        "from": "daily",
        "period": f"{day:%Y-%m-%d}",
        "map": {
            "mean3": "rolling_mean(close, 3)",
            "run": "streak(close > mean3)",
            "red": "streak(close < open)",
        },
        "select": "max(run) as longest",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.summary.value == runs.iloc[at]
    assert [w for w in result.metadata.warnings if w.startswith("The run ending")] == [
        f"The run ending {day:%Y-%m-%d} ({runs.iloc[at]}) is still going on the period's last "
        f"row: it went on to {runs.loc[ended]} on {ended:%Y-%m-%d}; a period reaching "
        f"{ended:%Y-%m-%d} counts it whole."
    ]
    assert loaded and min(loaded) >= runs.index[at - 2]  # the 3-day mean's days, no more


def _holiday_runs(cond: pd.Series) -> tuple[pd.Series, list[tuple[pd.Timestamp, list[str]]]]:
    """The runs of ``cond`` and, of its longest runs, those holding a day the NYSE was shut
    (pandas_market_calendars): each one's last day and those days."""
    import pandas_market_calendars as mcal

    runs = cond.groupby((~cond).cumsum()).cumsum().astype(int)
    open_days = mcal.get_calendar("NYSE").valid_days(runs.index[0], runs.index[-1])
    shut = ~runs.index.isin(open_days.tz_localize(None))
    found = []
    for end in runs.index[runs == runs.max()]:
        at = runs.index.get_loc(end)
        days = runs.index[at - runs.iloc[at] + 1 : at + 1][shut[at - runs.iloc[at] + 1 : at + 1]]
        if len(days):
            found.append((end, [f"{day:%Y-%m-%d}" for day in days]))
    return runs, found


def test_a_longest_run_holding_a_holiday_session_is_said(engine_settings, minutes) -> None:
    """CL's longest winning streak, 16 on ETH and one of three 11s on RTH, ends on Memorial
    Day 2008, a 13:00 holiday session, with nothing said, though rows listed after one are
    (p46f Q18). Here Presidents Day 2024 (the futures trading, the stock market shut) is one
    of the days of one of five tied runs of quiet days; the form said leaves it out."""
    daily = rth_daily(minutes)
    move = (daily["close"] / daily["close"].shift() - 1).abs() * 100
    runs, found = _holiday_runs(move < 0.2)
    ties = int((runs == runs.max()).sum())
    assert len(found) == 1 and ties > 1  # one of the tied runs holds a holiday session
    (end, days), n = found[0], runs.max()
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"run": "streak(abs(close / prev(close) - 1) * 100 < 0.2)"},
        "select": ["max(run) as longest", "arg_max(date(), run) as ended"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.summary.values["longest"] == n
    [said] = [w for w in result.metadata.warnings if "US holiday session" in w]
    assert said.startswith(
        f"Of the {ties} longest runs ({n}), the one ending {end:%Y-%m-%d} counts a US holiday "
        f"session among its days: {days[0]} ("
    )
    # That form: the streak over the stock market's days alone, its record said (p46w #4).
    stock_days = daily.drop(pd.to_datetime(days))
    stock_move = (stock_days["close"] / stock_days["close"].shift() - 1).abs() * 100
    stock_runs, none = _holiday_runs(stock_move < 0.2)
    assert not none
    assert said.endswith(
        f"On the stock market's days alone the longest run is {stock_runs.max()}, ending "
        f'{stock_runs.idxmax():%Y-%m-%d}: "where": "not holiday()" with the streak in a then '
        "stage leaves it out."
    )
    fixed = execute(
        {
            "session": "RTH",
            "from": "daily",
            "where": "not holiday()",
            "then": {"map": {"run": query["map"]["run"]}, "select": "max(run) as longest"},
        },
        "NQ",
        settings=engine_settings,
    )
    assert fixed.summary.value == stock_runs.max()
    assert not [w for w in fixed.metadata.warnings if "US holiday session" in w]
    # The longest up run begins the day after Presidents Day: nothing to say.
    up_runs, up_found = _holiday_runs(daily["close"] > daily["close"].shift())
    assert not up_found
    query["map"] = {"run": "streak(close > prev(close))"}
    up = execute(query, "NQ", settings=engine_settings)
    assert up.summary.values["longest"] == up_runs.max()
    assert not [w for w in up.metadata.warnings if "US holiday session" in w]


def test_a_longer_run_a_holiday_session_broke_is_said(engine_settings, minutes) -> None:
    """NQ's longest red-body RTH streak read 8 with a note on the holiday sessions inside
    the runs of 8, as if the stock market's days held no longer one; there it is 11, to
    2010-12-02: Thanksgiving's session of 2010-11-25 was an up day and broke it, and the
    form the note gives returns 11 (p46w #4). Here closes above their 3-day mean: on all
    days the longest run is 9; Presidents Day 2024 (the stock market shut) closed below its
    mean and broke a run of 11 of the stock market's days (pandas, that mean over those
    days, as the form said computes it)."""
    daily = rth_daily(minutes)
    holiday = pd.Timestamp("2024-02-19")

    def runs(days: pd.DataFrame) -> pd.Series:
        above = days["close"] > days["close"].rolling(3).mean()
        return above.groupby((~above).cumsum()).cumsum().astype(int)

    every, stock = runs(daily), runs(daily.drop(holiday))
    assert every.loc[holiday] == 0 and stock.max() > every.max()  # the case
    end = stock.idxmax()
    assert stock.index[stock.index.get_loc(end) - stock.max() + 1] < holiday < end
    run = "streak(close > rolling_mean(close, 3))"
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"run": run},
        "select": ["max(run) as longest", "arg_max(date(), run) as ended"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.summary.values["longest"] == every.max()
    [said] = [w for w in result.metadata.warnings if "stock market's days" in w]
    assert said.startswith(
        f"The longest run is {every.max()} on all of the futures' days; on the stock market's "
        f"days alone it is {stock.max()}, ending {end:%Y-%m-%d}: the session of 2024-02-19 ("
    )
    assert said.endswith(
        'broke it. "where": "not holiday()" with the streak in a then stage counts it whole.'
    )
    fixed = execute(
        {
            "session": "RTH",
            "from": "daily",
            "where": "not holiday()",
            "select": ["date()", "close"],
            "then": {"map": {"run": run}, "select": "max(run) as longest"},
        },
        "NQ",
        settings=engine_settings,
    )
    assert fixed.summary.value == stock.max()
    # Not said where no holiday session broke a longer run (the up days' record stands).
    query["map"] = {"run": "streak(close > prev(close))"}
    up = execute(query, "NQ", settings=engine_settings)
    assert not [w for w in up.metadata.warnings if "stock market's days" in w]


def _chart_text(result, language: str) -> str:
    """Every text of the result's chart drawn at a phone's width, its lines joined."""
    fig = draw_chart(result, width_px=360, language=language)
    assert fig is not None
    return " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible()).replace("\n", " ")


def test_the_chart_says_the_run_the_period_cuts(engine_settings, minutes) -> None:
    """The chart of "the longest losing streak in 2025" read "max_run = 7 days · ended =
    2025-01-02" over a 2025 axis, with nothing of the 6 days in 2024 the warning says (p46f
    Q17). March 2024 opens inside an up run here, and February's longest run goes on into
    March: each chart says so under its subtitle, in the person's language."""
    daily = rth_daily(minutes)
    up = daily["close"] > daily["close"].shift()
    runs = up.groupby((~up).cumsum()).cumsum().astype(int)
    runs.index = runs.index.strftime("%Y-%m-%d")
    march = runs.loc["2024-03-01":"2024-03-31"]
    length = int(march.iloc[0])
    began = runs.index[runs.index.get_loc(march.index[0]) - (length - 1)]
    own = up.groupby([(~up).cumsum(), daily.index.month]).cumsum().astype(int)
    own.index = runs.index
    own = own.loc["2024-03-01":"2024-03-31"]
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024-03",
        "map": {"run": "streak(close > prev(close))"},
        "select": ["max(run) as longest", "arg_max(date(), run) as ended"],
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert [run.model_dump(exclude_defaults=True) for run in result.metadata.cut_runs] == [
        {
            "length": length,
            "ended": march.index[0],
            "began": began,
            "inside": int(own.max()),
            "inside_end": own.idxmax(),
        }
    ]
    assert (
        f"Run of {length} to {march.index[0]} began {began}, before the period; in the period "
        f"alone: {own.max()}, to {own.idxmax()}"
    ) in _chart_text(result, "en")
    assert (
        f"Серия длиной {length} по {march.index[0]} началась {began}, до периода; в самом "
        f"периоде: {own.max()}, по {own.idxmax()}"
    ) in _chart_text(result, "ru")
    february = runs.loc["2024-02-01":"2024-02-29"]
    after = runs.loc["2024-03-01":]
    ended = after.index[int((after > 0).cummin().sum()) - 1]
    result = execute({**query, "period": "2024-02"}, "NQ", settings=engine_settings)
    assert (
        f"Run of {february.iloc[-1]} to 2024-02-29 went on past the period: {runs.loc[ended]} "
        f"on {ended}"
    ) in _chart_text(result, "en")
    assert (
        f"Серия длиной {february.iloc[-1]} по 2024-02-29 продолжилась после периода: "
        f"{runs.loc[ended]} на {ended}"
    ) in _chart_text(result, "ru")
    # A period that cuts no run: nothing said.
    result = execute({**query, "period": "2024-01"}, "NQ", settings=engine_settings)
    assert result.metadata.cut_runs == [] and "Run of" not in _chart_text(result, "en")


def test_a_count_of_runs_at_a_length_is_told_the_rows_before_the_period(
    engine_settings, minutes
) -> None:
    """p47c F: "how many times did NQ fall 3 days in a row in 2024" as count(dn == 3) read
    14, the run that opened 2024 numbered on from 2023 (its 3rd day fell in December), where
    streak(..., 'year') counts 15; the warning spoke of the longest run alone. The up run
    that opens March 2024 here: its rows read on from February, and the count of first
    days (run == 1) with the month's form is pandas' restarted one, another number."""
    daily = rth_daily(minutes)
    up = daily["close"] > daily["close"].shift()
    runs = up.groupby((~up).cumsum()).cumsum().astype(int)
    monthly = up.groupby([(~up).cumsum(), daily.index.month]).cumsum().astype(int)
    march, own = runs.loc["2024-03"], monthly.loc["2024-03"]
    assert (march == 1).sum() != (own == 1).sum()  # the case: the count differs
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024-03",
        "map": {"run": "streak(close > prev(close))"},
        "select": "count(run == 1) as firsts",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.summary.value == (march == 1).sum()
    moved = march.index[(march == 1) != (own == 1)]
    assert list(moved) == [march.index[0]]  # the run's first row in March alone
    length = int(march.iloc[0])
    began = runs.index[runs.index.get_loc(march.index[0]) - (length - 1)]
    month = "streak(close > prev(close), 'month')"
    assert _run_warnings(result) == [
        f"run == 1 does not hold on 2024-03-01 as streak() reads {length} there, counting the "
        f"run from {began:%Y-%m-%d}, {length - 1} of its rows before the period; {month} counts "
        "from the period's start and reads 1, where it holds."
    ]
    query["map"] = {"run": "streak(close > prev(close), 'month')"}
    fixed = execute(query, "NQ", settings=engine_settings)
    assert fixed.summary.value == (own == 1).sum()


def test_a_where_on_a_streak_against_a_number_names_the_rows_it_moves(
    engine_settings, minutes
) -> None:
    """p48d C4: "NQ after 3+ down days" ("dn3": "streak(close < prev(close)) >= 3") was told
    the period's longest run and "a count of the rows at one length (== 3) differs by them
    too", in three clauses. The kept rows the run's days before the period carry over the
    threshold are named in one sentence with the comparison as written; where none is (a
    threshold the period's own count reaches there too), nothing is said."""
    daily = rth_daily(minutes)
    up = daily["close"] > daily["close"].shift()
    runs = up.groupby((~up).cumsum()).cumsum().astype(int)
    monthly = up.groupby([(~up).cumsum(), daily.index.month]).cumsum().astype(int)
    march, own = runs.loc["2024-03"], monthly.loc["2024-03"]
    length = int(march.iloc[0])
    assert length >= 2 and own.iloc[0] == 1  # the case: March opens inside a run
    began = runs.index[runs.index.get_loc(march.index[0]) - (length - 1)]
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024-03",
        "map": {"up2": f"streak(close > prev(close)) >= {length}"},
        "where": "up2",
        "select": "count() as days",
    }
    result = execute(query, "NQ", settings=engine_settings)
    assert result.summary.value == int((march >= length).sum())
    moved = march.index[(march >= length) & (own < length)]
    assert len(moved) == 1  # the row the period's own count leaves out
    assert _run_warnings(result) == [
        f"streak(close > prev(close)) >= {length} holds on {moved[0]:%Y-%m-%d} as streak() "
        f"reads {march[moved[0]]} there, counting the run from {began:%Y-%m-%d}, "
        f"{length - 1} of its rows before the period; streak(close > prev(close), 'month') "
        f"counts from the period's start and reads {own[moved[0]]}, where it does not hold."
    ]
    # Read against 1, which the run's first row in March reaches alone: nothing to say.
    plain = execute({**query, "map": {"up2": "streak(close > prev(close)) >= 1"}}, "NQ",
                    settings=engine_settings)  # fmt: skip
    assert plain.summary.value == int((march >= 1).sum())
    assert _run_warnings(plain) == []


def _run_warnings(result) -> list[str]:
    """The warnings of a run begun before the period: either form."""
    return [w for w in result.metadata.warnings if "of its rows before the period" in w]


def test_the_current_run_of_a_period_inside_it_is_not_set_against_the_period(
    engine_settings, minutes
) -> None:
    """ "How many days in a row is NQ falling now" as the last bar's streak read the right 2
    with "within the period alone the longest run is 1" beside it (p48f M4): every row of
    the period is in that run, so counted from the period's start it is only the period's
    length. Nothing said; a period holding a row outside the run still names it."""
    runs = _down_runs(rth_daily(minutes))
    days = runs.index
    start, end, length = _period_inside_a_run(runs)
    query = {
        "session": "RTH",
        "from": "daily",
        "period": f"{days[start]:%Y-%m-%d}:{days[end]:%Y-%m-%d}",  # the run's last days
        "map": {"down_run": "streak(close < prev(close))"},
        "select": ["down_run"],
    }
    now = execute(query, "NQ", settings=engine_settings)
    assert now.ok, now.to_dict()
    assert now.table["down_run"].tolist() == runs.iloc[start : end + 1].tolist()
    assert now.table["down_run"].iloc[-1] == length
    assert _streak_warnings(now) == []
    wider = execute(
        query | {"period": f"{days[start]:%Y-%m-%d}:{days[end + 1]:%Y-%m-%d}"},
        "NQ",
        settings=engine_settings,
    )
    assert wider.ok, wider.to_dict()
    assert runs.iloc[end + 1] == 0  # the day after the run is outside it
    assert len(_streak_warnings(wider)) == 1
