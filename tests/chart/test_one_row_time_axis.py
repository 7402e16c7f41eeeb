"""A time axis under one row names that row's date, on it (f49g): the running total of the
single trade a second stage summed (NQ's one gap up over 4% in 2024, pandas's day) read
05.03, 07.03, 09.03, 11.03 under its one point, dates with no row, and not its own."""

from __future__ import annotations

import pandas as pd
from asking import ask
from matplotlib.text import Text

from barb.charts import draw_chart
from barb.data.store import data_path

RTH_START, RTH_END = 570, 1020


def _gap_days(settings) -> pd.Series:
    """NQ's RTH days of 2024 whose open gapped up over 4% from the previous close."""
    columns = ["open", "close", "trading_date", "minute"]
    minutes = pd.read_parquet(data_path("NQ", settings), columns=columns)
    rth = minutes[(minutes["minute"] >= RTH_START) & (minutes["minute"] < RTH_END)]
    days = rth.groupby("trading_date").agg(open=("open", "first"), close=("close", "last"))
    gap = (days["open"] / days["close"].shift() - 1) * 100
    days.index = pd.to_datetime(days.index)
    return gap[(gap > 4) & (days.index.year == 2024)]


def test_one_summed_trade_is_dated_under_its_point(sample_settings) -> None:
    [day] = _gap_days(sample_settings).index
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2024",
        "map": {"gap_pct": "(open - prev(close)) / prev(close) * 100", "pnl": "close - open"},
        "where": "gap_pct > 4",
        "select": ["date()", "pnl"],
        "then": {"select": ["count() as trades", "sum(pnl) as total"]},
    }
    result = ask(query, sample_settings)
    assert result.summary.values is not None and result.summary.values["trades"] == 1
    fig = draw_chart(result, language="ru")
    assert fig is not None
    fig.canvas.draw()
    [ax] = [a for a in fig.axes if a.get_visible() and a.lines]
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks == [day.date().isoformat()]
    assert ax.get_xticks()[0] == ax.lines[0].get_xdata()[-1]
    texts = [t.get_text() for t in fig.findobj(Text)]
    assert not any(t.startswith(("05.03", "07.03")) for t in texts)
