"""Part groups the engine reports (``Metadata.cut_groups``), which the chart had ignored.

"This week vs last week" (daily bars of last_2_weeks by week()): the week the period's start
cut to one day was drawn solid and headlined as the lowest, while only the unfinished week was
drawn hollow. Every week that holds part of its days is hollow, unnumbered and never the
headline's group.

Part weeks by pandas over the raw minute bars against the exchange's trading days
(pandas_market_calendars), never through Barb.
"""

from __future__ import annotations

import pandas as pd
import pandas_market_calendars as mcal
import pytest
from engine_results import figure, run
from matplotlib.collections import PolyCollection

from barb.charts import chart_headline
from barb.data.store import data_path
from barb.instruments import load_instrument

pytestmark = pytest.mark.slow

WEEKS = {
    "session": "RTH",
    "from": "daily",
    "period": "last_2_weeks",
    "group_by": "week()",
    "select": ["mean(range) as avg_range", "count() as days"],
}


@pytest.fixture(scope="module")
def daily(sample_settings) -> pd.DataFrame:
    """NQ's RTH days from the raw minute bars: range and the week's Monday."""
    minutes = pd.read_parquet(data_path("NQ", sample_settings))
    rth = minutes[(minutes["minute"] >= 570) & (minutes["minute"] < 1020)]
    days = rth.groupby("trading_date").agg(high=("high", "max"), low=("low", "min"))
    days["range"] = days["high"] - days["low"]
    days["week"] = days.index - pd.to_timedelta(days.index.dayofweek, unit="D")
    days["weekday"] = days.index.dayofweek
    return days


def hollow(ax) -> list[bool]:
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return [tuple(face[:3]) == (1.0, 1.0, 1.0) for face in bars.get_facecolors()]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_every_part_week_is_hollow_and_the_headline_names_a_whole_one(
    sample_settings, daily, language
) -> None:
    result = run(WEEKS, sample_settings)
    weeks = [pd.Timestamp(w) for w in result.table["week"]]
    calendar = mcal.get_calendar(load_instrument("NQ").calendar)
    trading = calendar.valid_days(weeks[0], weeks[-1] + pd.Timedelta(days=6)).tz_localize(None)
    whole_size = (
        pd.Series(trading)
        .groupby(pd.Series(trading) - pd.to_timedelta(pd.Series(trading).dt.dayofweek, unit="D"))
        .size()
    )
    held = result.table.set_index("week")["days"]
    part = [int(held[w]) < int(whole_size[w]) for w in result.table["week"]]
    assert part[0] and part[-1] and not all(part)  # a cut first week, an unfinished last one
    fig = figure(result, language)
    for ax in fig.axes:
        assert hollow(ax) == part
    [whole] = [w for w, p in zip(weeks, part, strict=True) if not p]
    mean = daily.loc[daily["week"] == whole, "range"].mean()
    head = chart_headline(result, language) or ""
    assert str(whole.date()) in head, head
    number = f"{mean:.2f}" if language == "en" else f"{mean:.2f}".replace(".", ",")
    assert number in head, head
