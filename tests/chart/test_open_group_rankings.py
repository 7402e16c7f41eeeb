"""A ranking of groups that the data's unfinished last year tops: "in which year was the NQ-ES
correlation lowest", sorted ascending and cut to 3, was headlined "corr: lowest 2026 0.796"
over 2026's 4 days, drawn solid and numbered "1.", where the same groups unsorted drew 2026
hollow, "not ranked". The open year is hollow and unnumbered, and the headline names the
first whole year, from the table or, cut to 1, from the engine's ranking of all the groups.
Per-year correlations by pandas over each day's last RTH close (DuckDB), never the engine."""

from __future__ import annotations

import pandas as pd
import pytest
from duckdb_answers import rth_closes
from engine_results import figure, run
from matplotlib.collections import PolyCollection

from barb.charts import chart_headline

pytestmark = pytest.mark.slow

LOWEST_CORR = {
    "session": "RTH",
    "from": "daily",
    "join": {"instrument": "ES"},
    "map": {"nq_ret": "close / prev(close) - 1", "es_ret": "es_close / prev(es_close) - 1"},
    "group_by": "year()",
    "select": ["correlation(nq_ret, es_ret) as corr", "count() as days"],
}
LOWEST = {"en": "corr: lowest", "ru": "corr: меньше всего"}
RANKED_FIRST = {"en": "corr: #1", "ru": "corr: №1"}


@pytest.fixture(scope="module")
def yearly(con) -> pd.DataFrame:
    """Each year's NQ-ES correlation of daily RTH returns and its days, by year."""
    both = pd.concat([rth_closes(con, "nq"), rth_closes(con, "es")], axis=1, join="inner")
    both.index = pd.to_datetime(both.index)
    returns = both.pct_change()  # a year's first day from the last close of the one before
    years = returns.groupby(returns.index.year)
    corr = years.apply(lambda r: r.iloc[:, 0].corr(r.iloc[:, 1]))
    return pd.DataFrame({"corr": corr, "days": years.size()})


def hollow(ax) -> list[bool]:
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return [tuple(face[:3]) == (1.0, 1.0, 1.0) for face in bars.get_facecolors()]


def tick_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_xticklabels() if t.get_text()]


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("limit", [1, 3])
def test_the_open_year_atop_a_ranking_is_hollow_and_the_first_whole_year_is_named(
    sample_settings, yearly, limit, language
) -> None:
    ranked = yearly.sort_values("corr")
    last = int(yearly.index[-1])
    assert ranked.index[0] == last and yearly.loc[last, "days"] < 10  # 2026 ranks first
    whole = ranked.drop(last)
    result = run({**LOWEST_CORR, "sort": "corr asc", "limit": limit}, sample_settings)
    assert result.table["year"].tolist() == ranked.index[:limit].tolist()
    head = chart_headline(result, language) or ""
    corr = f"{whole['corr'].iloc[0]:.3f}"  # at the bars' 3 digits (p47d D8)
    if language == "ru":
        corr = corr.replace(".", ",")
    assert head == f"{LOWEST[language]} {whole.index[0]} {corr}", head
    fig = figure(result, language)
    top, bottom = fig.axes
    # Cut to 1, the first whole year is drawn after the open one: the headline's bar.
    drawn = ranked.index[: max(limit, 2)]
    assert hollow(top) == [year == last for year in drawn]
    assert hollow(bottom) == [year == last for year in drawn]
    expected = [str(last)] + [f"{i}. {year}" for i, year in enumerate(drawn[1:], 1)]
    assert tick_texts(bottom) == expected


def test_the_open_year_in_a_ranking_it_does_not_top_is_hollow_and_unnumbered(
    sample_settings, yearly
) -> None:
    """Sorted the other way, every year listed, 2026 came last as "19. 2026", drawn solid:
    it is hollow, and the whole years are numbered 1 to 18."""
    ranked = yearly.sort_values("corr", ascending=False)
    last = int(yearly.index[-1])
    result = run({**LOWEST_CORR, "sort": "corr desc", "limit": len(ranked)}, sample_settings)
    assert result.table["year"].tolist() == ranked.index.tolist()
    top = f"{ranked['corr'].iloc[0]:.3f}"
    assert chart_headline(result, "en") == f"{RANKED_FIRST['en']} {ranked.index[0]} {top}"
    top_ax, bottom_ax = figure(result).axes
    assert hollow(top_ax) == [year == last for year in ranked.index]
    places = iter(range(1, len(ranked)))
    expected = [str(y) if y == last else f"{next(places)}. {y}" for y in ranked.index]
    assert tick_texts(bottom_ax) == expected
