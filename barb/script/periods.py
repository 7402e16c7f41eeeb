"""Periods: "2024", "2024-03", "2024-Q1", "2024-01-01:2024-06-30", "last_year", "ytd", "qtd",
"last_30_days"…

Relative periods count back from the last date in the data, never from today's clock, so
the same query gives the same answer tomorrow.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from barb.errors import InvalidPeriod

# Every pattern here is matched whole against one token, with no nested or adjacent
# repetition, so matching is linear in the text's length (no backtracking blow-up).
_DATE = r"\d{4}(?:-\d{1,2}(?:-\d{1,2})?)?"
_DATE_RE = re.compile(_DATE)
# "2025-Q4", the label Barb prints for a quarter.
_QUARTER_RE = re.compile(r"(\d{4})-?[Qq]([1-4])")
_RELATIVE_RE = re.compile(r"last_(\d+)_(day|week|month|year)s?")
_LAST_BARS_RE = re.compile(r"last_(\d+)_bars?")
# "last_5_bars:2024-03-08": the last 5 bars up to that date, as a plan pins last_5_bars to the
# data's end when it is shown (bot/assistant/plan.py ``pinned``).
_LAST_BARS_TO_RE = re.compile(r"last_(\d+)_bars?:(\d{4}_\d{1,2}_\d{1,2})")

PERIOD_FORMS = (
    '"2024"',
    '"2024-03"',
    '"2024-03-15"',
    '"2024-Q1"',
    '"2023-01-01:2024-06-30" (a side may be empty)',
    '"2020:2022"',
    '"last_year" (the previous calendar year)',
    '"last_quarter" / "last_month"',
    '"last_week"',
    '"ytd" / "qtd" / "mtd" / "wtd"',
    '"last_N_days|weeks|months|years" (calendar time back from the last data date: '
    "last_30_days is 30 calendar days, about 21 trading days; on weekly+ bars "
    "the last N whole bars)",
    '"last_N_bars" (the last N bars of the query\'s session and timeframe, an unfinished last '
    'one included: "from": "daily", "period": "last_30_bars" is the last 30 trading days)',
    '"all"',
)


@dataclass(frozen=True)
class Period:
    """Which bars a query keeps: trading dates from ``start`` to ``end`` (None: open), or the
    last ``bars`` bars of the query's session and timeframe (up to ``end`` when it is given:
    a calendar bar whose first date is on or before it)."""

    start: dt.date | None
    end: dt.date | None
    text: str
    bars: int | None = None
    # last_N_<unit>s: N and the unit ("week"). On bars of that unit (weekly bars and
    # last_N_weeks) the period is the last N whole bars, not the calendar days back.
    count: int | None = None
    unit: str | None = None

    @property
    def everything(self) -> bool:
        return self.start is None and self.end is None and self.bars is None

    @property
    def calendar_unit(self) -> str | None:
        """The calendar unit the period names, as streak()'s per says it: "2026" and
        "last_year" a year, "2024-Q1" a quarter, "2024-03" a month, "this_week" a week,
        "2024-03-15" a day; None for a span or a count of units ("last_30_days"). The data's
        first week of 2026 is also its January: the rows cannot say which was asked."""
        raw = self.text.strip()
        key = raw.lower().replace(" ", "_").replace("-", "_")
        if re.fullmatch(r"\d{4}", raw) or key in ("ytd", "this_year", "last_year"):
            return "year"
        if _QUARTER_RE.fullmatch(raw) or key in ("qtd", "this_quarter", "last_quarter"):
            return "quarter"
        if re.fullmatch(r"\d{4}-\d{1,2}", raw) or key in ("mtd", "this_month", "last_month"):
            return "month"
        if key in ("wtd", "this_week", "last_week"):
            return "week"
        return "day" if re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", raw) else None

    # Said to the person with the answer, e.g. that the period was cut to the data.
    note: str | None = None

    def within(self, first: dt.date, last: dt.date) -> Period:
        """The period with its ends cut to the data's first and last trading dates, compared
        as days: ":9999-12-31" on data to 2026-01-07 ends 2026-01-07. Every later step reads
        the ends as nanosecond times, which end at 2262-04-11 and wrap past it silently (the
        period kept no bars, or "2020:2999" read as no trading date from 2020 on)."""
        start = max(self.start, first) if self.start is not None else None
        end = min(self.end, last) if self.end is not None else None
        if (start, end) == (self.start, self.end):
            return self
        return replace(self, start=start, end=end)


def _month_end(year: int, month: int) -> dt.date:
    nxt = dt.date(year + (month == 12), month % 12 + 1, 1)
    return nxt - dt.timedelta(days=1)


def _add_months(day: dt.date, months: int) -> dt.date:
    total = day.year * 12 + day.month - 1 + months
    year, month = divmod(total, 12)
    return dt.date(year, month + 1, min(day.day, _month_end(year, month + 1).day))


def _quarter_start(day: dt.date) -> dt.date:
    return dt.date(day.year, 3 * ((day.month - 1) // 3) + 1, 1)


def _bounds(token: str, original: str) -> tuple[dt.date, dt.date]:
    """First and last calendar day that a date token ("2024", "2024-03", "2024-03-15",
    "2024-Q1") covers."""
    quarter = _QUARTER_RE.fullmatch(token)
    if quarter:
        first = dt.date(int(quarter.group(1)), 3 * int(quarter.group(2)) - 2, 1)
        return first, _add_months(first, 3) - dt.timedelta(days=1)
    parts = [int(p) for p in token.split("-")]
    try:
        if len(parts) == 1:
            return dt.date(parts[0], 1, 1), dt.date(parts[0], 12, 31)
        if len(parts) == 2:
            return dt.date(parts[0], parts[1], 1), _month_end(parts[0], parts[1])
        day = dt.date(parts[0], parts[1], parts[2])
        return day, day
    except ValueError as exc:
        raise _error(original, f"'{token}' is not a valid date ({exc})") from None


def _error(text: str, why: str | None = None, instead: str | None = None) -> InvalidPeriod:
    """The forms a period is written in; ``instead``: the one meant, when the words say it."""
    shown = text if len(text) <= 60 else text[:57] + "…"
    message = f"Period '{shown}' is not understood" + (f": {why}." if why else ".")
    forms = ", ".join(PERIOD_FORMS)
    hint = f"{instead} Other forms: {forms}" if instead else f"Use one of: {forms}"
    return InvalidPeriod(message, step="period", hint=hint)


_TRADING_DAYS_RE = re.compile(r"(?:last|past)_(\d+)_(?:trading_days?|sessions?)")


def _meant(key: str, data_end: dt.date, day_before: Callable[[], dt.date | None]) -> str | None:
    """The period a word a person says for a day or a span stands for, counted from the
    data's last trading day as every relative period is: "yesterday" on data ending
    2026-01-07 is "2026-01-06" (the trading date before it)."""
    if key == "today":
        return (
            f'"today" is the data\'s last trading date: "period": "{data_end}" (relative '
            "periods count from it, not from the clock)."
        )
    if key == "yesterday":
        before = day_before()
        if before is None:
            return None
        return (
            f'"yesterday" is the trading date before the data\'s last ({data_end}): '
            f'"period": "{before}" (relative periods count from the data\'s last trading day).'
        )
    match = _TRADING_DAYS_RE.fullmatch(key)
    if match:
        n = match.group(1)
        return (
            f'The last {n} trading days are the last {n} daily bars: "from": "daily", '
            f'"period": "last_{n}_bars" (last_{n}_days counts calendar days).'
        )
    for word in ("previous_", "prev_"):
        if key.startswith(word) and key[len(word) :] in ("week", "month", "quarter", "year"):
            return f'The previous {key[len(word) :]}: "period": "last_{key[len(word) :]}".'
    return None


def _date_token(token: str) -> bool:
    return bool(_DATE_RE.fullmatch(token) or _QUARTER_RE.fullmatch(token))


def _split_range(raw: str) -> tuple[str, str] | None:
    """'2020:2022', '2020..2022', '2020 to 2022' → the two sides (either may be empty)."""
    for separator in (":", ".."):
        if separator in raw:
            left, _, right = raw.partition(separator)
            return left.strip(), right.strip()
    words = raw.split()
    if "to" in words and 2 <= len(words) <= 3:
        at = words.index("to")
        return " ".join(words[:at]), " ".join(words[at + 1 :])
    return None


def _relative_start(n: int, unit: str, data_end: dt.date) -> dt.date | None:
    """The first day of the last n units; None when that is before the calendar begins."""
    try:
        if unit == "day":
            return data_end - dt.timedelta(days=n - 1)
        if unit == "week":
            return data_end - dt.timedelta(weeks=n) + dt.timedelta(days=1)
        if unit == "month":
            return _add_months(data_end, -n) + dt.timedelta(days=1)
        return _add_months(data_end, -12 * n) + dt.timedelta(days=1)
    except (OverflowError, ValueError):
        return None


def last_whole_span(
    n: int, unit: str, data_end: dt.date, finished: bool
) -> tuple[dt.date, dt.date]:
    """First and last calendar day of the last ``n`` whole weeks, months or years (``unit``):
    up to the one ``data_end`` lies in when it is ``finished``, else up to the one before.
    The dates last_N_weeks covers on weekly bars, for a person to read; OverflowError or
    ValueError when they are before the calendar begins."""
    if unit == "week":
        monday = data_end - dt.timedelta(days=data_end.weekday())
        following = monday + dt.timedelta(weeks=1) if finished else monday
        return following - dt.timedelta(weeks=n), following - dt.timedelta(days=1)
    if unit == "month":
        first = data_end.replace(day=1)
        following = _add_months(first, 1) if finished else first
        return _add_months(following, -n), following - dt.timedelta(days=1)
    following = dt.date(data_end.year + 1 if finished else data_end.year, 1, 1)
    return dt.date(following.year - n, 1, 1), following - dt.timedelta(days=1)


def parse_period(
    text: str | None,
    data_end: dt.date,
    data_start: dt.date | None = None,
    day_before: Callable[[], dt.date | None] = lambda: None,
) -> Period:
    """Resolve a period against the last trading date in the data.

    A relative period that reaches back before the data (``last_99999999_years``) is cut to
    the data's first date, with a note saying so: the person gets all the data there is
    rather than an error for asking too much. ``day_before`` reads the trading date before
    ``data_end``, asked only to say what "yesterday" is.
    """
    if text is None:
        return Period(None, None, "all")
    raw = text.strip()
    key = raw.lower().replace(" ", "_").replace("-", "_") if not raw[:1].isdigit() else raw
    if key in ("all", "all_time", "max"):
        return Period(None, None, "all")
    if key in ("ytd", "this_year"):
        return Period(dt.date(data_end.year, 1, 1), data_end, raw)
    if key in ("qtd", "this_quarter"):
        return Period(_quarter_start(data_end), data_end, raw)
    if key in ("mtd", "this_month"):
        return Period(data_end.replace(day=1), data_end, raw)
    if key in ("wtd", "this_week"):
        # Weeks start on Monday; the data's last date is a trading date, so its week is the
        # trading week ("this week so far").
        return Period(data_end - dt.timedelta(days=data_end.weekday()), data_end, raw)
    if key == "last_year":
        year = data_end.year - 1
        return Period(dt.date(year, 1, 1), dt.date(year, 12, 31), raw)
    if key == "last_month":
        first = _add_months(data_end.replace(day=1), -1)
        return Period(first, _month_end(first.year, first.month), raw)
    if key == "last_week":
        monday = data_end - dt.timedelta(days=data_end.weekday() + 7)
        return Period(monday, monday + dt.timedelta(days=6), raw)
    if key == "last_quarter":
        q_start = _quarter_start(data_end)
        start = _add_months(q_start, -3)
        return Period(start, q_start - dt.timedelta(days=1), raw)
    match = _LAST_BARS_RE.fullmatch(key) or _LAST_BARS_TO_RE.fullmatch(key)
    if match:
        digits = match.group(1)
        bars = int(digits) if len(digits) <= 12 else 10**12  # more than any data holds
        if bars < 1:
            raise _error(raw, "N must be at least 1")
        # The key reads the date's dashes as underscores.
        end = _bounds(match.group(2).replace("_", "-"), raw)[1] if match.lastindex == 2 else None
        return Period(None, end, raw, bars=bars)
    match = _RELATIVE_RE.fullmatch(key)
    if match:
        digits, unit = match.group(1), match.group(2)
        n = int(digits) if len(digits) <= 12 else 10**12  # past any calendar either way
        if n < 1:
            raise _error(raw, "N must be at least 1")
        start = _relative_start(n, unit, data_end)
        if start is None or (data_start is not None and start < data_start):
            since = f" ({data_start})" if data_start else ""
            note = (
                f"Period '{raw}' reaches back before the data begin{since}: all the data up "
                f"to {data_end} is used."
            )
            return Period(data_start, data_end, raw, note=note, count=n, unit=unit)
        return Period(start, data_end, raw, count=n, unit=unit)
    if _date_token(raw):
        start, end = _bounds(raw, raw)
        return Period(start, end, raw)
    sides = _split_range(raw)
    if sides and any(sides) and all(_date_token(side) for side in sides if side):
        start = _bounds(sides[0], raw)[0] if sides[0] else None
        end = _bounds(sides[1], raw)[1] if sides[1] else None
        if start and end and start > end:
            raise _error(raw, f"it starts ({start}) after it ends ({end})")
        return Period(start, end, raw)
    raise _error(raw, instead=_meant(key, data_end, day_before))
