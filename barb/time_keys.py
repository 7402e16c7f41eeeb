"""Which columns hold a time of day (or a part of the year), read from the query that made
them, and a session's times of day in its own order.

A minute of the day is made in Barb Script as ``hour() * 60 + minute()`` (or counted from the
18:00 open, negative before midnight: ``if(hour() >= 18, … - 1440, …)``), under any name, and
travels on through aggregates that return a row's own value (``arg_max(tod, high) as
high_tod``, ``first``, ``min`` …) and through the ``then`` stage. The column is followed back
through the query's map and select, so the name alone never decides; the values must also be
whole minutes of a day.

The engine orders groups by such a key from a session's open, and the charts draw their axes
as clocks: both ask here, so the table, its CSV, the summary and the chart agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from barb.lineage import Lineage, called_key_names, key_expressions
from barb.script import ast
from barb.script.library import lookup

MINUTES_PER_DAY = 1440
# Aggregates whose value is a value of their argument's kind (a mean of times is a time).
CARRIES_VALUE = frozenset(
    {
        "arg_max",
        "arg_min",
        "first",
        "last",
        "mode",
        "min",
        "max",
        "median",
        "percentile",
        "mean",
        "avg",
    }
)
CLOCK_NAMES = frozenset({"minute_of_day"})
# time()'s text: "09:30".
_CLOCK_TEXT = r"([01]\d|2[0-3]):([0-5]\d)"
HOUR_NAMES = frozenset({"hour"})
# Numbers that name a place in the calendar: a group, never a magnitude to draw as a bar
# (nor to write as one: the year of arg_max(year(), range) read "2,024").
CALENDAR_PARTS = ("year", "month", "quarter", "weekofyear", "dayofyear", "dayofweek")
# Calls that name the period a row lies in, counted from no start a trader measures by.
PERIOD_CALLS = frozenset({"year", "quarter", "month", "week", "weekofyear"})


def time_kind(name: str, query: dict[str, Any], values: Iterable[Any] = ()) -> str | None:
    """``"minute"`` when the query made ``name`` a minute of the day (``hour() * 60 +
    minute()``, or ``time()``'s 'HH:MM', which a chart draws as its minute), ``"hour"`` an
    hour of the day (``hour()``), else None.

    A clock guarded by a marker for "no time" (``if(high > onh, hour() * 60 + minute(), -1)``)
    is a clock while none of ``values`` is the marker: −1 is not 23:59."""
    if name in CLOCK_NAMES:
        return "minute"
    if name in HOUR_NAMES:
        return "hour"
    source = Lineage(query).values_of(name, CARRIES_VALUE)
    if source is None:
        return None
    if _is_clock(source) or _bare_call(source) == "time":
        return "minute"
    marker = no_time_marker(source)
    if marker is not None:
        return None if any(_equals(v, marker) for v in values) else "minute"
    return "hour" if _bare_call(source) == "hour" else None


def no_time_marker(expr: ast.Expr) -> float | None:
    """The number an if() gives instead of a clock (``-1`` in ``if(cond, hour() * 60 +
    minute(), -1)``), else None."""
    if not (isinstance(expr, ast.Call) and expr.name.lower() == "if" and len(expr.args) == 3):
        return None
    for clock, other in ((expr.args[1], expr.args[2]), (expr.args[2], expr.args[1])):
        marker = _literal(other)
        if marker is not None and _is_clock(clock):
            return marker
    return None


def _literal(expr: ast.Expr) -> float | None:
    """A number written in the query (``-1``), else None."""
    if isinstance(expr, ast.Unary) and expr.op == "-":
        inner = _literal(expr.operand)
        return None if inner is None else -inner
    return float(expr.value) if isinstance(expr, ast.Number) else None


def _equals(value: Any, marker: float) -> bool:
    numeric = isinstance(value, (int, float, np.integer, np.floating))
    return numeric and not isinstance(value, bool) and float(value) == marker


def calendar_part(name: str, query: Mapping[str, Any]) -> str | None:
    """``"month"`` or ``"quarter"`` when the query made ``name`` the month (``month()``, 1 to
    12) or the quarter (``quarter()``, 1 to 4) of the year, followed through the map and
    through aggregates that return a row's own value (``arg_max(year(), range)``, or
    ``arg_max(year, n)`` over a first stage's ``group_by: year()``); likewise ``"year"``,
    ``"weekofyear"`` and ``"dayofyear"``."""
    if name.lower() in CALENDAR_PARTS:
        return name.lower()
    source = Lineage(query).source_of(name, CARRIES_VALUE)
    if isinstance(source, ast.Column):  # a group key the engine named after its call
        key = source.name
        part = key if key != name and key in called_key_names(query) else None
    else:
        part = _bare_call(source) if source is not None else None
    return part if part in CALENDAR_PARTS else None


def key_call(name: str, query: Mapping[str, Any]) -> str | None:
    """The call without arguments whose values the group key ``name`` holds: ``month`` of
    ``group_by: month()``, and that key read by a second stage (``then: group_by month``), a
    map's ``"weekday": "dayname()"``; None for any other key. A chart and a plan name such a
    key in words (``by month``, «по месяцу»): the second stage's "по month" and the plan's
    «по «year()»» were the query's code amid Russian. A name an aggregate made
    (``arg_max(time(), high) as high_time``) says more than the call's word and stays."""
    called = called_key_names(query)
    source = Lineage(query).source_of(name, frozenset())
    if isinstance(source, ast.Column):  # a group key the engine named after its call
        return source.name if source.name in called else None
    return _bare_call(source) if source is not None else None


def calendar_keys(query: Mapping[str, Any], names: Iterable[str]) -> frozenset[str]:
    """Those of ``names`` that hold their row's own place in the calendar or on the clock, a
    time function's value (``year()``, ``month()``, ``hour()`` …) followed through names:
    ``"select": ["year()", "ret"]`` on yearly bars holds ``year``, as does ``"yr": "year()"``.
    Such a column names its row; it is no value to draw (their chart was a histogram of the
    years; ``trading_day()`` over time is a saw of 1 … 22)."""
    return frozenset(_time_calls(query, names))


def period_keys(query: Mapping[str, Any], names: Iterable[str], timeframe: str) -> frozenset[str]:
    """Those of ``names`` that name the calendar period their row lies in (``PERIOD_CALLS``,
    and ``hour()`` on hourly bars): a row's label, whose mean is no one's number ("year=2016.5"
    over 18 yearly rows, "month=6.5"). A place within a period is a value a trader reads:
    NQ's 71 RTH days of 2024 up over 1% lie on trading days 1 to 22 of their months, 10.79 on
    average, and ``trading_day()`` keeps those numbers."""
    called = _time_calls(query, names)
    own = "hour" if timeframe == "1h" else None
    return frozenset(n for n, call in called.items() if call in PERIOD_CALLS or call == own)


def _time_calls(query: Mapping[str, Any], names: Iterable[str]) -> dict[str, str]:
    """Each of ``names`` whose value is a time function's, followed through names, with that
    function's name: ``{"yr": "year"}`` for ``"yr": "year()"``."""
    lineage = Lineage(query)
    calls = {}
    for name in names:
        expr = lineage.values_of(name, frozenset())
        spec = lookup(expr.name) if isinstance(expr, ast.Call) else None
        if spec is not None and spec.category == "time":
            calls[name] = expr.name.lower()
    return calls


def _bare_call(expr: ast.Expr) -> str | None:
    """The name of a call without arguments (``hour()`` → hour), else None."""
    return expr.name.lower() if isinstance(expr, ast.Call) and not expr.args else None


def is_clock_expr(expr: ast.Expr) -> bool:
    """Whether ``expr`` is the exchange's minute of the day as written: ``hour() * 60 +
    minute()``, or that counted from an evening open."""
    return _is_clock(expr)


def _is_clock(expr: ast.Expr) -> bool:
    """``hour() * 60 + minute()``, or that counted from an evening open as the reference
    writes it for ETH and OVERNIGHT, whole days earlier on one branch (negative before
    midnight): ``if(hour() >= 18, hour() * 60 + minute() - 1440, hour() * 60 + minute())``,
    or ``hour() * 60 + minute() - if(hour() >= 18, 1440, 0)``."""
    return _clock_zone(expr) == ""


def zoned_clock(name: str, query: Mapping[str, Any]) -> str | None:
    """The zone as written ("MSK") when the query made ``name`` a minute of the day on
    another clock than the exchange's (``hour('MSK') * 60 + minute('MSK')``, counted across
    midnight or not, followed through the aggregates that return a row's own value), else
    None. The exchange's clock is ``time_kind``'s."""
    source = Lineage(query).values_of(name, CARRIES_VALUE)
    zone = _clock_zone(source) if source is not None else None
    return zone or None


def zoned_hour(name: str, query: Mapping[str, Any]) -> str | None:
    """The zone as written ("MSK") when the query made ``name`` an hour of the day on another
    clock than the exchange's (``hour('MSK')``, followed through the aggregates that return a
    row's own value), else None. Its groups are clock hours on that clock: the chart drew
    "hour_msk 22" on an axis of plain numbers where hour() gets "22:00" and "hour (ET)"."""
    source = Lineage(query).values_of(name, CARRIES_VALUE)
    if source is None:  # a group key written as the call ("group_by": "hour('MSK')")
        source = key_expressions(query).get(name)
    return (_clock_call(source, "hour") or None) if source is not None else None


def zoned_hour_column(name: str, series: pd.Series, query: Mapping[str, Any]) -> str | None:
    """``zoned_hour`` of a column whose values are whole hours of a day, else None."""
    zone = zoned_hour(name, query)
    return zone if zone and _whole_in(series, 0, 24) else None


def text_clock_zone(name: str, query: Mapping[str, Any]) -> str | None:
    """The zone as written ("Moscow") when ``name`` holds ``time('Moscow')``'s text
    ('17:30'), followed through the aggregates that return a row's own value
    (``arg_max(time('Moscow'), high)``), else None: such times are on that clock, not the
    exchange's, and the chart named them "(ET)"."""
    source = Lineage(query).values_of(name, CARRIES_VALUE)
    return (_clock_call(source, "time") or None) if source is not None else None


def _clock_zone(expr: ast.Expr) -> str | None:
    """The zone of the clock ``expr`` is a minute of the day on (``_is_clock``'s forms):
    "" for the exchange's (``hour() * 60 + minute()``), "MSK" for ``hour('MSK') * 60 +
    minute('MSK')``; None for no clock, or one mixing two clocks."""
    if isinstance(expr, ast.Call) and expr.name.lower() == "if" and len(expr.args) == 3:
        zones = {_clock_zone(branch) for branch in expr.args[1:]}
        return zones.pop() if len(zones) == 1 else None
    if isinstance(expr, ast.Binary) and expr.op in ("+", "-") and _whole_days(expr.right):
        return _clock_zone(expr.left)
    return _minute_of_day_zone(expr)


def _whole_days(expr: ast.Expr) -> bool:
    """A shift by whole days of minutes: ``1440``, or an if() of such (``if(…, 1440, 0)``)."""
    if isinstance(expr, ast.Number):
        return expr.value % MINUTES_PER_DAY == 0
    if isinstance(expr, ast.Call) and expr.name.lower() == "if" and len(expr.args) == 3:
        return all(_whole_days(branch) for branch in expr.args[1:])
    return False


def _minute_of_day_zone(expr: ast.Expr) -> str | None:
    """``hour() * 60 + minute()`` ("", the exchange's clock) or ``hour('MSK') * 60 +
    minute('MSK')`` ("MSK"), its terms and factors in either order; None for anything else."""
    if not (isinstance(expr, ast.Binary) and expr.op == "+"):
        return None
    for hours, minutes in ((expr.left, expr.right), (expr.right, expr.left)):
        zone = _clock_call(minutes, "minute")
        if zone is None or not (isinstance(hours, ast.Binary) and hours.op == "*"):
            continue
        factors = (hours.left, hours.right)
        if any(_clock_call(f, "hour") == zone for f in factors) and any(
            isinstance(f, ast.Number) and f.value == 60 for f in factors
        ):
            return zone
    return None


def _clock_call(expr: ast.Expr, name: str) -> str | None:
    """The zone ``name()`` reads: "" for the exchange's clock (no argument), the zone as
    written for ``name('MSK')``; None for any other expression."""
    if not (isinstance(expr, ast.Call) and expr.name.lower() == name):
        return None
    if not expr.args:
        return ""
    zone = expr.args[0]
    return zone.value if len(expr.args) == 1 and isinstance(zone, ast.String) else None


def is_minute_of_hour(name: str, query: Mapping[str, Any]) -> bool:
    """Whether ``name`` holds ``minute()``, the minute within its hour (0 to 59): beside an
    hour key the two name one time of day (hour 15, minute 15 is the 15:15 bar)."""
    if name == "minute" and name in called_key_names(query):
        return True
    source = Lineage(query).values_of(name, CARRIES_VALUE)
    return source is not None and _bare_call(source) == "minute"


def is_clock_name(name: str, query: dict[str, Any]) -> bool:
    """Whether ``name`` holds minutes of the day."""
    return time_kind(name, query) == "minute"


def _numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _whole_in(series: pd.Series, bottom: int, top: int) -> bool:
    if not _numeric(series):
        return False
    values = pd.to_numeric(series, errors="coerce").dropna().to_numpy(dtype="float64")
    return bool(values.size) and bool(
        np.all((values >= bottom) & (values < top) & (values == np.round(values)))
    )


def clock_kind(name: str, series: pd.Series, query: dict[str, Any]) -> str | None:
    """``time_kind`` of a column whose values are whole minutes or hours of a day; minutes
    counted from an evening open are negative before midnight (−103 is 22:17)."""
    kind = time_kind(name, query, series.to_numpy() if _numeric(series) else ())
    if kind == "minute":
        return kind if _whole_in(series, -MINUTES_PER_DAY, MINUTES_PER_DAY) else None
    return kind if kind == "hour" and _whole_in(series, 0, 24) else None


def zoned_clock_column(name: str, series: pd.Series, query: Mapping[str, Any]) -> str | None:
    """``zoned_clock`` of a column whose values are whole minutes of a day (negative before
    midnight when counted across it): the zone it is read on ("MSK"), else None."""
    zone = zoned_clock(name, query)
    return zone if zone and _whole_in(series, -MINUTES_PER_DAY, MINUTES_PER_DAY) else None


def minutes_of_day(name: str, column: pd.Series, query: Mapping[str, Any]) -> np.ndarray | None:
    """``column``'s values as minutes of the day (float, NaN where missing), when the query
    made it an hour or a minute of the day, or it is ``time()``'s text ('18:00'); else None."""
    kind = clock_kind(name, column, dict(query))
    if kind is not None:
        values = pd.to_numeric(column, errors="coerce").to_numpy(dtype="float64")
        return values * (60 if kind == "hour" else 1)
    if pd.api.types.is_numeric_dtype(column) or column.empty:
        return None
    if pd.api.types.is_datetime64_any_dtype(column):  # a date: written out, 0.2 s of 50,000
        return None
    # The first value tells of most text (a date's "2024-01-02"): not all 4,600 read.
    if not column.iloc[:1].astype(str).str.fullmatch(_CLOCK_TEXT).all():
        return None
    text = column.astype(str)
    if not text.str.fullmatch(_CLOCK_TEXT).all():
        return None
    parts = text.str.split(":", expand=True).astype(int)
    return (parts[0] * 60 + parts[1]).to_numpy(dtype="float64")


def from_the_open(
    table: pd.DataFrame, by: Sequence[str], query: Mapping[str, Any], open_minute: int
) -> np.ndarray | None:
    """The order of ``table``'s rows (positions) that puts a time-of-day key in a session's
    order, from its open at ``open_minute`` (ETH's 18:00): sorted as numbers, the open's
    18:00 came last, after 16:00, though the trading day starts there. Of two keys (hour by
    year) the first is the time of day, and each time keeps its second key's order. None
    when the first key is no time of day (or there are more than two keys)."""
    if not 1 <= len(by) <= 2 or by[0] not in table.columns:
        return None
    minutes = minutes_of_day(by[0], table[by[0]], query)
    if minutes is None:
        return None
    since_open = (minutes - open_minute) % MINUTES_PER_DAY  # NaN (no key) stays last
    return np.argsort(since_open, kind="stable")


def minute_clocks(columns: Mapping[str, pd.Series], query: dict[str, Any]) -> list[str]:
    """Which of ``columns`` hold minutes of the day as numbers: a day's ``arg_max(t,
    high)`` of ``t = hour() * 60 + minute()``, the mean of those, counted from an evening
    open or not; not time()'s 'HH:MM' text (a clock already), nor a spread of them (std) or
    a span (``hi_t - 570``), which are minutes, not times."""
    found = []
    for name, values in columns.items():
        if not _numeric(values) or time_kind(name, query) != "minute":
            continue
        # A marker for "no time" (-1) among them: read once per distinct value.
        if time_kind(name, query, pd.unique(values.dropna())) == "minute":
            found.append(name)
    return found


def clock_text(minutes: Any) -> str:
    """A minute of the day as the clock reads it: 570 -> ``09:30`` (anything else as it is)."""
    numeric = isinstance(minutes, (int, float, np.integer, np.floating))
    if not numeric or isinstance(minutes, bool) or not np.isfinite(minutes):
        return str(minutes)
    whole = round(float(minutes)) % MINUTES_PER_DAY
    return f"{whole // 60:02d}:{whole % 60:02d}"
