"""A second stage over a first stage's selected columns keeps them: "ret_pct" selected on
monthly bars stays listed, after the month, next to "pct_rank = rank(ret_pct)" made by
then.map, in what the model reads as in the table and the CSV; a then.select that names
"ret_pct" but not the month keeps the month first. Expected values from pandas over the
sample's RTH minute bars (09:30-17:00)."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from asking import ask

from barb import render_summary
from barb.data.store import data_path
from barb.export import csv_bytes
from barb.result import Result

pytestmark = pytest.mark.slow

RTH_START, RTH_END = 570, 1020
DECEMBERS = {
    "session": "RTH",
    "from": "monthly",
    "map": {"ret_pct": "(close / prev(close) - 1) * 100"},
    "where": "month() == 12",
    "select": ["ret_pct"],
}
RANKED = {"map": {"pct_rank": "rank(ret_pct)"}, "sort": "month desc", "limit": 3}
COLUMNS = ["month", "ret_pct", "pct_rank"]


@pytest.fixture(scope="module")
def decembers(sample_settings) -> pd.DataFrame:
    """Each December's return on the month before and its percentile rank among the
    Decembers (the share of Decembers whose return is at most its own), newest first."""
    columns = ["close", "trading_date", "minute"]
    bars = pd.read_parquet(data_path("NQ", sample_settings), columns=columns)
    bars = bars[(bars["minute"] >= RTH_START) & (bars["minute"] < RTH_END)]
    month = pd.DatetimeIndex(bars["trading_date"]).to_period("M")
    closes = bars.groupby(month)["close"].last()
    closes = closes.iloc[:-1]  # the data's last month is not over: Barb leaves it out
    ret = (closes / closes.shift(1) - 1) * 100
    dec = ret[ret.index.month == 12].dropna()
    rank = dec.apply(lambda r: (dec <= r).mean() * 100)
    out = pd.DataFrame({"month": dec.index.astype(str), "ret_pct": dec, "pct_rank": rank})
    return out.iloc[::-1].reset_index(drop=True)


def _read(text: str) -> tuple[list[str], list[list[str]]]:
    """The header and the rows the model reads under the headline."""
    lines = text.splitlines()
    header = lines[1].split(",")
    rows = []
    for line in lines[2:]:
        cells = line.split(",")
        if len(cells) != len(header) or "=" in line:
            break
        rows.append(cells)
    return header, rows


def _csv_header(result: Result) -> list[str]:
    return next(csv.reader(io.StringIO(csv_bytes(result).decode("utf-8-sig"))))


def _check(result: Result, expected: pd.DataFrame) -> None:
    header, rows = _read(render_summary(result))
    assert header == COLUMNS
    assert len(rows) == 3
    for (month, ret, rank), (_, want) in zip(rows, expected.head(3).iterrows(), strict=True):
        assert month == want["month"]
        assert float(ret) == pytest.approx(want["ret_pct"], rel=1e-3)
        assert float(rank) == pytest.approx(want["pct_rank"], rel=1e-3)
    assert result.table is not None
    assert list(result.table.columns) == COLUMNS
    assert result.table["ret_pct"].to_numpy() == pytest.approx(expected["ret_pct"].head(3))
    assert result.table["pct_rank"].to_numpy() == pytest.approx(expected["pct_rank"].head(3))
    assert _csv_header(result)[:3] == COLUMNS


def test_then_map_keeps_the_first_stage_selection(sample_settings, decembers) -> None:
    assert len(decembers) == 18  # 2008-2025
    assert decembers["pct_rank"].iloc[0] == 100  # December 2025: the highest of them
    result = ask({**DECEMBERS, "then": RANKED}, sample_settings)
    _check(result, decembers)


def test_then_select_without_the_label_keeps_it_first(sample_settings, decembers) -> None:
    then = {**RANKED, "select": ["ret_pct", "pct_rank"]}
    result = ask({**DECEMBERS, "then": then}, sample_settings)
    _check(result, decembers)
