"""A chart of groups' means singles out no bar the noise test does not: when the groups
differ by no more than noise, every bar is grey and the headline gives their span, not a
winner; when they differ but the extreme lies within noise of other groups, it is named
with them, as a count's is. NQ's RTH range by weekday of 2025 (p = 0.9) drew Friday orange
and Monday blue under "highest Fri, lowest Mon"; its ETH volume by hour of 2024 painted
00:00 "lowest" beside seven overnight hours within 70 contracts of it, each known to ±200.
Which groups are within noise is found here with scipy's Welch t-test over DuckDB's bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_results import figure, run
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgb
from scipy import stats

from barb.charts import chart_headline
from barb.charts.style import HIGH, LOW, NEUTRAL

pytestmark = pytest.mark.slow

WEEKDAYS = {
    "session": "RTH",
    "from": "daily",
    "period": "2025",
    "map": {"weekday": "dayname()"},
    "group_by": "weekday",
    "select": "mean(range)",
}
HOURS = {
    "session": "ETH",
    "from": "1h",
    "period": "2024",
    "group_by": "hour()",
    "select": "mean(volume)",
}


def bar_colors(fig) -> list[tuple[float, float, float]]:
    ax = fig.axes[0]
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return [tuple(float(x) for x in face[:3]) for face in bars.get_edgecolors()]


@pytest.fixture(scope="module")
def hourly(con) -> pd.DataFrame:
    """NQ's 1-hour bars of 2024's trading dates: the hour of the day and the volume."""
    return con.execute(
        """
        SELECT trading_date, hour(timestamp) AS hour, sum(volume) AS volume FROM nq
        WHERE year(trading_date) = 2024 GROUP BY 1, 2
        """
    ).df()


@pytest.mark.parametrize("language", ["en", "ru"])
def test_weekdays_within_noise_name_no_winner(sample_settings, days, language) -> None:
    year = days[pd.DatetimeIndex(days.index).year == 2025]
    ranges = year["high"] - year["low"]
    groups = [g.to_numpy() for _, g in ranges.groupby(pd.DatetimeIndex(year.index).dayofweek)]
    assert stats.f_oneway(*groups).pvalue > 0.5  # no weekday stands apart
    result = run(WEEKDAYS, sample_settings)
    assert result.metadata.even_groups == ["mean_range"]
    fig = figure(result, language)
    assert set(bar_colors(fig)) == {to_rgb(NEUTRAL)}
    # Said once, in the headline: the subtitle's "average range: the differences are within
    # noise" repeated it under "average range: Mon 309.44 to Fri 326.47 (differences within
    # noise)".
    subtitle = {"en": ": the differences are within noise", "ru": ": разница в пределах шума"}
    assert not [t.get_text() for t in fig.texts if t.get_text().endswith(subtitle[language])]
    said = chart_headline(result, language)
    assert said is not None
    assert {"en": "highest", "ru": "больше всего"}[language] not in said
    noise = {"en": "(differences within noise)", "ru": "(разница в пределах шума)"}[language]
    low, high = ranges.groupby(pd.DatetimeIndex(year.index).dayofweek).mean().agg(["min", "max"])
    number = {"en": "{:,.2f}", "ru": "{:.2f}"}[language]
    shown = said.replace("\u00a0", "").replace(" ", "").replace(",", ".")
    for value in (low, high):
        assert number.format(value).replace(",", "") in shown
    assert said.endswith(noise)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_an_hour_lowest_among_alike_hours_is_named_with_them(
    sample_settings, hourly, language
) -> None:
    volume = hourly.groupby("hour")["volume"]
    means = volume.mean()
    lowest = int(means.idxmin())
    alike = sorted(
        int(hour)
        for hour, values in volume
        if hour != lowest
        and stats.ttest_ind(values, volume.get_group(lowest), equal_var=False).pvalue >= 0.05
    )
    assert len(alike) >= 3  # the overnight hours
    result = run(HOURS, sample_settings)
    table = result.table.set_index("hour")["mean_volume"]
    np.testing.assert_allclose(table.sort_index(), means.sort_index(), rtol=1e-9)
    near = result.metadata.near_groups["mean_volume"]
    ends = {int(end[0]["hour"]): sorted(int(g["hour"]) for g in end[1:]) for end in near}
    assert ends == {lowest: alike}
    said = " ".join(result.metadata.warnings)
    assert f"hour {lowest} has the lowest mean" in said
    assert f"{len(alike)} other groups are within noise of it" in said
    headline = chart_headline(result, language)
    assert headline is not None
    # The count after words, never beside the end's number (p48d C6).
    more = {
        "en": f", within noise of {len(alike)} others (",
        "ru": f", в пределах шума ещё {len(alike)} групп (",
    }[language]
    assert more in headline, headline
    # The lowest and those alike painted together; the highest, clear of the next, alone.
    colors = bar_colors(figure(result, language))
    hours = result.table["hour"].tolist()
    painted = sorted(h for h, c in zip(hours, colors, strict=True) if c == to_rgb(LOW))
    assert painted == sorted([lowest, *alike])
    highest = int(means.idxmax())
    assert [h for h, c in zip(hours, colors, strict=True) if c == to_rgb(HIGH)] == [highest]


MINUTES = {
    "session": "RTH",
    "from": "1m",
    "period": "2025",
    "group_by": "time()",
    "select": "mean(range)",
}


def test_the_ends_of_a_day_s_minutes_are_tested_against_each_other_minute(
    sample_settings, con
) -> None:
    """NQ's 1-minute RTH bars of 2025 by time(): 450 groups, past the 31 beyond which each
    end went untested while the summary crowned "lowest 16:49 5.064". Each end is tested
    against every other minute, as scipy's Welch t-test over DuckDB's bars finds them."""
    bars = con.execute(
        """
        SELECT minute, high - low AS range FROM nq
        WHERE year(trading_date) = 2025 AND minute >= 570 AND minute < 1020
        """
    ).df()
    ranges = bars.groupby("minute")["range"]
    means = ranges.mean()
    assert len(means) == 450
    result = run(MINUTES, sample_settings)
    np.testing.assert_allclose(result.table["mean_range"], means.sort_index(), rtol=1e-9)
    said = " ".join(result.metadata.warnings)
    for side, end in (("lowest", means.idxmin()), ("highest", means.idxmax())):
        alike = [
            minute
            for minute, values in ranges
            if minute != end
            and stats.ttest_ind(values, ranges.get_group(end), equal_var=False).pvalue >= 0.05
        ]
        assert len(alike) >= 2
        clock = f"'{end // 60:02d}:{end % 60:02d}'"
        assert f"mean_range: {clock} has the {side} mean" in said, said
        assert f"but {len(alike)} other groups are within noise of it" in said, said


def test_the_ends_of_thousands_of_shares_are_said_untested(sample_settings, con) -> None:
    """NQ's 5-minute RTH bars by date, the share of up bars: 4,647 groups, whose ends are
    tested pair by pair (0.3 s for these): they are said untested, with the highest and the
    lowest DuckDB finds (the first of those tied), not passed over in silence."""
    shares = (
        con.execute(
            """
            WITH bars AS (
                SELECT trading_date, arg_min(open, timestamp) AS open,
                       arg_max(close, timestamp) AS close
                FROM nq WHERE minute >= 570 AND minute < 1020
                GROUP BY trading_date, (minute - 570) // 5
            )
            SELECT trading_date, avg((close > open)::INT) AS up FROM bars GROUP BY 1 ORDER BY 1
            """
        )
        .df()
        .set_index("trading_date")["up"]
    )
    assert len(shares) > 1440
    query = {
        "session": "RTH",
        "from": "5m",
        "group_by": "date()",
        "select": "mean(close > open) as up",
    }
    result = run(query, sample_settings)
    high, low = (f"{day:%Y-%m-%d}" for day in (shares.idxmax(), shares.idxmin()))
    assert [w for w in result.metadata.warnings if w.startswith("up: ")] == [
        f"up: the highest mean (date {high}) and the lowest (date {low}) of {len(shares):,} "
        "groups were not tested against the others (too many to test pair by pair): groups "
        "beside them may be within noise of them."
    ]
