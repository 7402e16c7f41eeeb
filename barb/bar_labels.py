"""One label per bar, the same wherever a bar is named: the model's summary, the CSV, the chart.

Daily and longer bars are named by the calendar unit they stand for (``2023-01-05``, week of
``2023-01-03``, ``2023-01``, ``2023-Q1``, ``2023``), not by the timestamp they happen to carry
(a monthly bar's timestamp is its month's first day, a weekly bar's its Monday, which may be
a holiday). Intraday bars keep their ``timestamp``: the minute is the label.

Every label is text that sorts in time order, so a table sorted by its label stays in order.

A query's own column may take the label's name: ``"select": ["month()", "ret"]`` makes a
``month`` column. When it names each bar once (``year()`` on yearly bars: 2008 … 2025) it is
the rows' name and stands in for the label; when it does not (month 1 … 12 of 216 monthly
bars), the label stays first under ``bar_month``, so that each row still says which month of
which year it is (2023-01), the same in the summary, the CSV and the chart.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

# The weekly bar's first trading date, when the frame carries it under this name; otherwise
# the bar's timestamp is taken to be that date (weekly bars are stamped with it).
WEEK_FIRST_DATE = "first_trading_date"
# Columns a bar label stands in for: the person sees the label instead of these.
REPLACED_COLUMNS = ("timestamp", "trading_date", WEEK_FIRST_DATE)


@dataclass(frozen=True)
class BarLabel:
    """How the bars of one timeframe are named."""

    column: str
    # Said to the model next to the column when the values alone would not tell it.
    meaning: str | None
    example: str

    @property
    def beside(self) -> str:
        """The label's name beside a query's column of its own name: ``bar_month``."""
        return f"bar_{self.column}"


BAR_LABELS: dict[str, BarLabel] = {
    "daily": BarLabel("date", None, "2023-01-05"),
    "weekly": BarLabel("week", "the week's first trading date", "2023-01-03"),
    "monthly": BarLabel("month", None, "2023-01"),
    "quarterly": BarLabel("quarter", None, "2023-Q1"),
    "yearly": BarLabel("year", None, "2023"),
}


def bar_label(timeframe: str) -> BarLabel | None:
    """The label of ``timeframe``'s bars; None for intraday bars, which keep ``timestamp``."""
    return BAR_LABELS.get(timeframe)


def label_column(
    frame: pd.DataFrame, timeframe: str, at: np.ndarray | None = None
) -> tuple[str, np.ndarray] | None:
    """The label column of ``frame``'s bars as (name, text values in row order), or None
    for intraday bars; of the rows at positions ``at`` alone when given."""
    label = bar_label(timeframe)
    if label is None:
        return None
    dates = _bar_dates(frame, timeframe)
    if dates is None:
        return None
    return label.column, _format(dates if at is None else dates[at], timeframe)


def row_label(frame: pd.DataFrame, row: int, timeframe: str) -> str:
    """Row ``row`` of ``frame`` by its bar label (its minute on intraday bars), else by its
    first column: a then stage's rows are the first stage's table, named by its date()."""
    bar = frame.iloc[[row]]
    labelled = label_column(bar, timeframe)
    if labelled is not None:
        return str(labelled[1][0])
    if "timestamp" in bar.columns:
        return f"{pd.Timestamp(bar['timestamp'].iloc[0]):%Y-%m-%d %H:%M}"
    value = bar.iloc[0, 0]
    return f"{value:%Y-%m-%d}" if isinstance(value, pd.Timestamp) else str(value)


def unit_label(start: np.datetime64, unit: str) -> str:
    """The label of the ``unit`` (week, month, quarter, year) that begins on ``start``, as
    its bar is labelled: 2023-01-03, 2023-01, 2023-Q1, 2023."""
    timeframe = {"week": "weekly", "month": "monthly", "quarter": "quarterly"}.get(unit, "yearly")
    return str(_format(np.array([start], dtype="datetime64[ns]"), timeframe)[0])


def with_bar_label(table: pd.DataFrame, bars: pd.DataFrame, timeframe: str) -> pd.DataFrame:
    """``table`` (row for row the rows of ``bars``) with the bar label as its first column:
    the date, week, month… of daily and longer bars, the ``timestamp`` of intraday ones.

    A column of the label's name that the query made and that names each row once is left
    as it is (the query's own column wins over the label); one that does not, the label is
    kept beside (``bar_month`` 2023-01 before ``month`` 1).
    """
    label = bar_label(timeframe)
    if label is None:
        # Intraday bars are named by their minute: a selection of other columns keeps it.
        if "timestamp" in table.columns or "timestamp" not in bars.columns:
            return table
        out = table.copy(deep=False)
        out.insert(0, "timestamp", bars["timestamp"].to_numpy())
        return out
    name = label_name(table, timeframe)
    if name is None:
        return table
    labelled = label_column(bars, timeframe)
    if labelled is None:
        # A second stage's rows are the first stage's table, already labelled ("2025-12"):
        # its select of other columns keeps that label, as the first stage's select does.
        named = table_label(bars, timeframe)
        if named is None:
            return table
        values = bars[named].to_numpy()
    else:
        values = labelled[1]
    out = table.copy(deep=False)
    out.insert(0, name, values)
    return out


def label_name(columns: pd.DataFrame, timeframe: str) -> str | None:
    """The name the bar label takes beside ``columns`` (a query's columns of daily or longer
    bars): its own (``month``); ``bar_month`` when the query made a ``month`` column that
    does not name each row once (1 … 12 of 216 months); None when it does (``year()`` of
    yearly bars), and the rows are named by it."""
    label = bar_label(timeframe)
    if label is None or label.column not in columns.columns:
        return None if label is None else label.column
    if _names_each_row(columns[label.column]) or label.beside in columns.columns:
        return None
    return label.beside


def as_labelled(frame: pd.DataFrame, timeframe: str) -> pd.DataFrame:
    """``frame`` as a person reads it: where a bar label names the rows, without the dates
    it stands in for (``REPLACED_COLUMNS``). A month's ``timestamp`` is its first trading
    date and its ``trading_date`` its last: listed beside ``month`` 2008-01, unlabelled, they
    read as two other dates of the same row (p47a). The CSV and the command line's rows;
    the model's summary hides them too (``barb.result.summarize_table``)."""
    if table_label(frame, timeframe) is None:
        return frame
    return frame.drop(columns=[c for c in REPLACED_COLUMNS if c in frame.columns])


def _names_each_row(values: pd.Series) -> bool:
    return bool(values.notna().all() and values.is_unique)


def table_label(table: pd.DataFrame, timeframe: str) -> str | None:
    """The bar label column ``table`` starts with (``month``, or ``bar_month`` beside the
    query's own ``month``), if it has one."""
    label = bar_label(timeframe)
    if label is None or not len(table.columns):
        return None
    first = table.columns[0]
    # A label is text; a column of dates under that name is the query's own (date()).
    if first not in (label.column, label.beside) or table[first].dtype != object:
        return None
    return first


def _bar_dates(frame: pd.DataFrame, timeframe: str) -> np.ndarray | None:
    """The date each bar is named by, as datetime64[ns]."""
    if timeframe == "weekly":
        order = (WEEK_FIRST_DATE, "timestamp", "trading_date")
    else:
        # The trading date decides which day, month or year a bar belongs to (an overnight
        # session ends on the next calendar day); a bar stamped otherwise is named by that.
        order = ("trading_date", "timestamp")
    for name in order:
        if name not in frame.columns:
            continue
        values = frame[name]
        if values.dtype == _NS:  # the engine's own columns: no conversion to pay for
            return values.to_numpy()
        if isinstance(values.dtype, pd.DatetimeTZDtype):
            return values.dt.tz_localize(None).to_numpy(dtype="datetime64[ns]")
        if pd.api.types.is_datetime64_any_dtype(values):
            return values.to_numpy(dtype="datetime64[ns]")
    return None


_NS = np.dtype("datetime64[ns]")


# numpy writes ISO dates at a given unit far faster than strftime, and the labels of a
# query's bars are kept for the next query over the same bars: the rows behind a daily
# number are thousands of bars, whose labels would otherwise cost more than the query.
_UNITS = {"daily": "D", "weekly": "D", "monthly": "M", "yearly": "Y"}


def label_dates(labels: pd.Series, timeframe: str) -> np.ndarray | None:
    """The dates bar labels stand for (``2023-01`` -> 2023-01-01), the inverse of the naming
    above; None when a label does not read as one."""
    text = labels.astype(str)
    try:
        if timeframe == "quarterly":
            dates = pd.PeriodIndex(text, freq="Q").start_time.to_numpy()
        else:
            dates = np.array(list(text), dtype=f"datetime64[{_UNITS[timeframe]}]")
    except (KeyError, ValueError):
        return None
    return dates.astype("datetime64[ns]")


def _format(dates: np.ndarray, timeframe: str) -> np.ndarray:
    key = dates.astype("datetime64[ns]", copy=False).view(np.int64)
    return _format_cached(timeframe, key.tobytes()).copy()


@lru_cache(maxsize=16)
def _format_cached(timeframe: str, raw: bytes) -> np.ndarray:
    dates = np.frombuffer(raw, dtype=np.int64).view("datetime64[ns]")
    if timeframe == "quarterly":
        years = np.datetime_as_string(dates.astype("datetime64[Y]"), unit="Y")
        quarter = dates.astype("datetime64[M]").astype(np.int64) % 12 // 3 + 1
        text = np.char.add(np.char.add(years, "-Q"), quarter.astype(str))
    else:
        unit = _UNITS[timeframe]
        text = np.datetime_as_string(dates.astype(f"datetime64[{unit}]"), unit=unit)
    out = text.astype(object)
    out[np.isnat(dates)] = None
    return out
