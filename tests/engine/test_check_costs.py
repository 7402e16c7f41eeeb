"""The warning checks skip the work whose answer is known before it is done, and say what
they said: a where whose period lies past its reach of the data's start reads no row's
value, a key of many values is not collected over every bar, the short sessions of a run's
daily rows are found once for the checks that ask, a number off every scale reads no
unit, and a listing its short days do not change writes no sentence about them. Expected
values from pandas over the bars, not through Barb's checks."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
import talib
from asking import RTH_DAILY, ask
from rth_bars import rth_daily

from barb import interpreter
from barb.caveats import (
    calendar,
    data_start,
    events,
    groups,
    kept_days,
    price_levels,
    scale_mixups,
    short_day_groups,
)
from barb.caveats.calendar import RANK_SHIFT
from barb.caveats.kept_days import KeptDays
from barb.caveats.short_session_groups import short_group_caveat
from barb.caveats.short_sessions import part_day_share_caveat
from barb.period_rows import bars_in_scope
from barb.planning import plan_query
from barb.script.query import parse_query


def _counting(patch: pytest.MonkeyPatch, owner: Any, name: str) -> list[tuple[Any, ...]]:
    """Every call of ``owner.name`` from now on, by its arguments; it still answers."""
    calls: list[tuple[Any, ...]] = []
    original: Callable[..., Any] = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return original(*args, **kwargs)

    patch.setattr(owner, name, counted)
    return calls


def test_a_where_past_its_reach_of_the_data_start_reads_no_row(engine_settings, minutes) -> None:
    """The 20-day mean reads 19 days back: in March, the hand-made data's third month, no
    day of the period lies within those of its first bar (2024-01-02), so no row is looked
    at for being empty; over the whole data the 19 are said, as before."""
    days = rth_daily(minutes)
    sma = talib.SMA(days["close"].to_numpy(), 20)
    below = days["close"].to_numpy() < sma  # NaN compares false: unknown is not below
    march = (days.index >= "2024-03-01") & (days.index < "2024-04-01")
    query = {"map": {"sma": "rolling_mean(close, 20)"}, "where": "close < sma"}
    count = {"select": "count() as below"}
    with pytest.MonkeyPatch.context() as patch:
        unread = _counting(patch, data_start.DataStart, "unread")
        in_march = ask({**query, **count, "period": "2024-03"}, engine_settings, **RTH_DAILY)
        assert unread == []
        whole = ask({**query, **count}, engine_settings, **RTH_DAILY)
        assert len(unread) == 1
    assert in_march.summary.value == int((below & march).sum())
    assert not [w for w in in_march.metadata.warnings if w.startswith("The where dropped")]
    assert whole.summary.value == int(below.sum())
    empty = int(np.isnan(sma).sum())
    assert empty == 19
    assert any(w.startswith(f"The where dropped {empty} of") for w in whole.metadata.warnings)


@pytest.mark.parametrize("key", ["date()", "hour()"])
def test_a_key_of_many_values_is_told_from_some_of_the_bars(engine_settings, key: str) -> None:
    """A where on 1-minute bars by date() (60 dates): the groups it emptied are not looked
    for among every bar's dates, only among evenly spaced ones, and nothing is said, as
    over all of them; by hour() (24 values) every bar is read, and the hours the where
    emptied are said as before."""
    query = {
        "session": "ETH",
        "from": "1m",
        "where": "volume > 496",
        "group_by": key,
        "select": "count()",
    }
    with pytest.MonkeyPatch.context() as patch:
        seen = _counting(patch, groups.pd, "unique")
        fast = ask(query, engine_settings)
    read = max(len(args[0]) for args in seen)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(groups, "_many_values", lambda *_: False)
        full = ask(query, engine_settings)
    assert fast.metadata.warnings == full.metadata.warnings
    bars = fast.metadata.rows_scanned
    if key == "date()":
        assert read < bars // 10
    else:
        assert read == bars


def test_the_short_sessions_of_a_runs_days_are_found_once(sample_settings) -> None:
    """RTH range by weekday: the groups of mostly short days and the short days' share both
    read which of the days are short sessions of RTH; the run finds them once, and each
    check says with them what it says on its own."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"weekday": "dayname()"},
        "group_by": "weekday",
        "select": "mean(range)",
    }
    with pytest.MonkeyPatch.context() as patch:
        found = _counting(patch, kept_days, "short_days")
        result = ask(query, sample_settings)
    assert [args[1] for args in found] == ["RTH"]
    plan = plan_query(parse_query(query), "NQ", sample_settings)
    captured: dict[str, Any] = {}
    with pytest.MonkeyPatch.context() as patch:
        original = interpreter.part_day_share_caveat

        def keep(plan: Any, ctx: Any, kept: Any, **kwargs: Any) -> list[str]:
            captured.update(ctx=ctx, kept=kept, kept_days=kwargs["kept_days"])
            return original(plan, ctx, kept, **kwargs)

        patch.setattr(interpreter, "part_day_share_caveat", keep)
        again = ask(query, sample_settings)
    assert again.metadata.warnings == result.metadata.warnings
    ctx, kept, shared = captured["ctx"], captured["kept"], captured["kept_days"]
    assert shared.of(kept) and not KeptDays(plan.dataset, kept.copy()).of(kept)
    assert short_group_caveat(plan, kept, kept_days=shared) == short_group_caveat(plan, kept)
    assert part_day_share_caveat(plan, ctx, kept, kept_days=shared) == part_day_share_caveat(
        plan, ctx, kept
    )
    # The days as pandas reads them: 2024-07-03's RTH closed at 13:15 (an early close).
    days = pd.to_datetime(kept["trading_date"]).dt.date.astype(str).to_numpy()
    short = dict(zip(days, shared.short("RTH"), strict=True))
    assert short["2024-07-03"] and not short["2024-07-02"]


def test_a_number_off_every_scale_reads_no_unit(engine_settings) -> None:
    """gap > 150 is off no percentile's, oscillator's or share's scale: its side's unit and
    origin are not looked up; rank(range) > 0.95 is on a fraction's, and is said as before."""
    looked: list[str] = []

    def unit(expr: Any) -> str | None:
        looked.append(expr.to_text())
        return "percentile"

    def origin(expr: Any) -> str | None:
        looked.append(expr.to_text())
        return None

    for where, said in (("range > 150", False), ("rank(range) > 0.95", True)):
        query = {"session": "RTH", "from": "daily", "where": where, "select": "count()"}
        stage = plan_query(parse_query(query), "NQ", engine_settings).first
        looked.clear()
        warnings = scale_mixups.scale_caveat(stage, unit, origin, 3, 60)
        assert bool(warnings) is said
        assert looked == ([] if not said else ["rank(range)"])


def test_a_listing_its_short_days_do_not_change_writes_no_sentence(sample_settings) -> None:
    """The hour of each day's RTH high over 2024-01 to 2024-10: its short days neither
    head nor end the listing nor move a column beyond noise, so nothing is said and their
    sentence is not written; over all of 2024 (Christmas Eve among the last rows) it is,
    with the short days pandas finds among the 1-hour bars."""
    query = {
        "session": "RTH",
        "from": "1h",
        "group_by": "date()",
        "select": "arg_max(hour(), high) as high_hour",
    }
    for period, said in (("2024-01:2024-10", False), ("2024", True)):
        with pytest.MonkeyPatch.context() as patch:
            written = _counting(patch, short_day_groups, "_text")
            result = ask({**query, "period": period}, sample_settings)
        told = [w for w in result.metadata.warnings if "short session" in w]
        assert len(written) == len(told) == int(said)
    raw = pd.read_parquet(sample_settings.data_dir / "NQ.parquet", columns=["timestamp"])
    stamps = raw["timestamp"]
    minute = stamps.dt.hour * 60 + stamps.dt.minute
    rth = stamps[(minute >= 570) & (minute < 960) & (stamps.dt.year == 2024)]
    last = rth.groupby(rth.dt.date).max()
    closes = last.dt.hour * 60 + last.dt.minute
    short = int((closes < 15 * 60).sum())
    assert told[0].startswith(f"{short} of the {len(last)} days grouped are short sessions")
    assert np.datetime64("2024-12-24") in np.array(last.index[closes < 900], dtype="datetime64[D]")


WEEKDAY = {
    "session": "RTH",
    "from": "daily",
    "map": {"weekday": "dayname()"},
    "group_by": "weekday",
}


@pytest.mark.parametrize(
    "query",
    [
        {**WEEKDAY, "select": "mean(range)"},
        {**WEEKDAY, "period": "2025", "select": "mean(range)"},
        {**WEEKDAY, "period": "2024", "select": ["mean(range)", "mean(volume)"]},
        {**WEEKDAY, "select": "mean(close - open)"},  # signed: evaluated again
        {**WEEKDAY, "period": "2024-01", "select": "mean(volume)"},
    ],
)
def test_a_weekday_mean_the_holidays_barely_move_is_not_evaluated_again(
    sample_settings, query: dict
) -> None:
    """A mean of sizes by weekday that no group's holiday sessions move by ``RANK_SHIFT`` of
    itself is told so by its sums (``_barely_moved``): nothing is evaluated again, and the
    shift and the warnings are those of the evaluation; any other is evaluated. The moves as
    pandas computes them."""

    def run(patch: pytest.MonkeyPatch) -> tuple[Any, list[tuple[Any, ...]]]:
        found: list[tuple[Any, ...]] = []
        original = calendar.holiday_shift

        def spy(stage: Any, ctx: Any, kept: Any, closed: Any, **kwargs: Any) -> Any:
            found.append((kept, closed, original(stage, ctx, kept, closed, **kwargs)))
            return found[-1][-1]

        patch.setattr(interpreter, "holiday_shift", spy)
        return ask(query, sample_settings), found

    with pytest.MonkeyPatch.context() as patch:
        evaluated = _counting(patch, calendar, "evaluate_aggregate")
        result, found = run(patch)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(calendar, "_barely_moved", lambda *_: None)
        full, again = run(patch)
    assert result.metadata.warnings == full.metadata.warnings
    ((kept, closed, quick),) = found
    ((_, _, whole),) = again
    assert len(closed) and quick is not None and whole is not None  # holiday rows weighed
    assert quick.notable() is whole.notable() and quick.ends == whole.ends
    assert quick.most == pytest.approx(whole.most, rel=1e-9, abs=1e-12)
    stage = plan_query(parse_query(query), "NQ", sample_settings).first
    # The most a group's mean moves without the holiday sessions, by pandas.
    holiday = np.isin(kept["trading_date"].to_numpy().astype("datetime64[D]"), closed)
    sized = all(item.name in ("mean_range", "mean_volume") for item in stage.select)
    most = 0.0
    for item in stage.select:
        column = kept[item.name.removeprefix("mean_")] if sized else kept["close"] - kept["open"]
        was = column.groupby(kept["weekday"], observed=True).mean()
        now = column[~holiday].groupby(kept["weekday"][~holiday], observed=True).mean()
        most = max(most, float(((now.reindex(was.index) - was).abs() / was.abs()).max()))
    barely = sized and most < RANK_SHIFT
    assert (evaluated == []) is barely
    if barely:
        assert quick.most == pytest.approx(most, rel=1e-9)


@pytest.mark.parametrize(("period", "said"), [("2024", False), ("2008:2025", True)])
def test_a_period_whose_closes_cannot_blend_reads_no_unit(
    sample_settings, period: str, said: bool
) -> None:
    """Mean RTH range by weekday: over 2024 NQ's minute closes span less than the
    ``LEVEL_RATIO`` (pandas' lowest and highest), so the price-level check stops before it
    reads the statistics' units from the query; over 2008-2025 they span more, the units
    are read and the blend is said."""
    query = {**WEEKDAY, "period": period, "select": "mean(range)"}
    with pytest.MonkeyPatch.context() as patch:
        units = _counting(patch, price_levels, "_distance_units")
        result = ask(query, sample_settings)
    blended = [w for w in result.metadata.warnings if "price level changed" in w]
    assert bool(units) is bool(blended) is said
    raw = pd.read_parquet(sample_settings.data_dir / "NQ.parquet", columns=["timestamp", "close"])
    first, last = period.split(":") if ":" in period else (period, period)
    year = raw["timestamp"].dt.year
    closes = raw["close"][(year >= int(first)) & (year <= int(last))]
    assert bool(closes.max() / closes.min() >= price_levels.LEVEL_RATIO) is said


def test_bars_without_a_joined_event_are_not_read_for_releases(engine_settings) -> None:
    """On 1-hour bars with no event joined, the releases-inside-a-bar check reads no bar's
    date or time (every bar's, 1,400 here and 100,000 on 15-minute bars of six years);
    with FOMC joined it reads them, and finds its 14:00 releases inside the 13:30 bar on
    both FOMC days of the data (2024-01-31, 2024-03-20)."""
    for query, reads in (
        ({"session": "RTH", "from": "1h", "select": "count()"}, False),
        ({"session": "RTH", "from": "1h", "join": "fomc", "select": "count()"}, True),
    ):
        plan = plan_query(parse_query(query), "NQ", engine_settings)
        scope = bars_in_scope(plan)
        blind = dataclasses.replace(scope, frame=scope.frame.drop(columns=["timestamp"]))
        if reads:
            with pytest.raises(KeyError):
                events._releases_inside_bars(plan, blind)
        else:
            assert events._releases_inside_bars(plan, blind) == []
        said = events._releases_inside_bars(plan, scope)
        inside = "FOMC came out at 14:00, inside the 1h bar opening 13:30, on all 2 fomc days"
        assert [w[: len(inside)] for w in said] == ([inside] if reads else [])
