"""The validation report of a file about to be imported: what is in it, what is wrong with
it (refused), and what looks odd (reported, not refused).

Every check runs over the whole file at once with vectorized comparisons; the rows they
find are named by their line in the file.
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from barb.data.formats import RawBars
from barb.data.layouts import PRICES
from barb.data.words import ENGLISH, Advice, ImportWords, Note
from barb.i18n import N_, percent
from barb.instruments import Instrument

MINUTE_NS = 60 * 1_000_000_000
SHOWN = 10  # problems of each kind listed by line; the rest are counted
# Checks whose every row says the same of the file: its first row is named, the rest are
# counted (a file of times at 30 seconds listed ten lines "… is not on a whole minute.").
SHOWN_ONCE = frozenset({"not on a whole minute"})
GAP_MINUTES = 30  # a hole this long inside a trading session is reported
# Bad prints (see jump_checks): a leap there and back beyond this many robust standard
# deviations of the day's moves and at least MIN_SPIKE, or any leap over BIG_JUMP (log-price).
SPIKE_SIGMAS = 25
MIN_SPIKE = 0.005
BIG_JUMP = 0.10
# Distinct prices needed before "all on 100 ticks" means cents (each is, by chance, 1 in 100).
CENTS_DISTINCT = 50
MAX_VOLUME = 2.0**63  # the stored volume is int64
#: Each check's name in the report ("Refused: OHLC inconsistent: 1"), by its name in code.
CHECK_WORDS = {
    "missing prices": N_("import.check.missing_prices"),
    "infinite prices": N_("import.check.infinite_prices"),
    "missing volume": N_("import.check.missing_volume"),
    "volume too large": N_("import.check.volume_too_large"),
    "negative volume": N_("import.check.negative_volume"),
    "fractional volume": N_("import.check.fractional_volume"),
    "OHLC inconsistent": N_("import.check.ohlc_inconsistent"),
    "duplicates": N_("import.check.duplicates"),
    "not on a whole minute": N_("import.check.not_whole_minute"),
    "bars in the exchange's closed hours": N_("import.check.closed_hours"),
    "jumps": N_("import.check.jumps"),
    "far highs or lows": N_("import.check.far_wicks"),
    "prices at or below zero": N_("import.check.nonpositive"),
    "bars after now": N_("import.check.future"),
    "cut last line": N_("import.check.cut_last_line"),
}


class Finding(BaseModel):
    """One row's problem, named by line (CSV) or row (Parquet)."""

    row: int  # 0-based data row
    line: int | None = None  # physical line in the file
    message: str

    def where(self, words: ImportWords = ENGLISH) -> str:
        if self.line is not None:
            return words("import.line", line=self.line)
        return words("import.row", row=self.row + 1)


class Check(BaseModel):
    """All rows that fail one check: how many, and the first few."""

    name: str
    count: int
    shown: list[Finding]


class ImportReport(BaseModel):
    """Everything a person should see before bars are written."""

    file: str
    layout: str  # the layout's title
    layout_name: str = ""  # its registry name (plain, sierra, …)
    file_kind: str = "CSV"  # CSV or Parquet
    rows: int
    first_date: dt.date | None = None
    last_date: dt.date | None = None
    trading_dates: int = 0
    interval_minutes: int = 1
    timezone: str = ""
    stamp: str = "open"
    clock_note: str = ""
    sessions: dict[str, float] = Field(default_factory=dict)  # session -> share of bars
    errors: list[Check] = Field(default_factory=list)  # any of these refuses the import
    warnings: list[Check] = Field(default_factory=list)
    missing_dates: list[dt.date] = Field(default_factory=list)
    missing_date_count: int = 0
    closed_dates: list[dt.date] = Field(default_factory=list)  # bars on exchange holidays
    gaps: list[str] = Field(default_factory=list)
    gap_count: int = 0
    notes: list[str] = Field(default_factory=list)
    language: str = "en"  # of every sentence in it: the bot's upload asks for the admin's
    advice: Advice = "command"  # how its advice names options: the bot's, in the caption
    # The file passed, but the import is refused against the stored data (it has data and
    # no --replace was given, the prices are far from the instrument's level …): the
    # report then does not end "No problems that stop the import." above that refusal.
    refused_by_stored: bool = False

    @property
    def words(self) -> ImportWords:
        return ImportWords(self.language, self.advice)

    @property
    def ok(self) -> bool:
        return not self.errors

    def count(self, name: str) -> int:
        return sum(c.count for c in (*self.errors, *self.warnings) if c.name == name)

    def text(self) -> str:
        """The report as plain lines, for the terminal and the bot, in its ``language``."""
        words = self.words
        bars = words("import.bars", plural_of=self.rows, rows=words.count(self.rows))
        out = [words("import.header", file=self.file, layout=self.layout, bars=bars)]
        if self.first_date is not None:
            dates = words(
                "import.trading_dates",
                plural_of=self.trading_dates,
                count=words.count(self.trading_dates),
            )
            out.append(
                words(
                    "import.dates",
                    first=self.first_date,
                    last=self.last_date,
                    dates=dates,
                    minutes=self.interval_minutes,
                )
            )
        if self.clock_note:
            out.append(self.clock_note)
        if self.sessions:
            shares = ", ".join(
                f"{name} {percent(share * 100, self.language)}"
                for name, share in self.sessions.items()
            )
            out.append(words("import.sessions", shares=shares))
        out.extend(self.notes)
        for title, checks in (
            (N_("import.refused_check"), self.errors),
            (N_("import.suspicious_check"), self.warnings),
        ):
            for check in checks:
                name = words(CHECK_WORDS[check.name]) if check.name in CHECK_WORDS else check.name
                out.append(words(title, name=name, count=words.count(check.count)))
                out.extend(f"  {f.where(words)}: {f.message}" for f in check.shown)
                if check.count > len(check.shown):
                    more = words.count(check.count - len(check.shown))
                    out.append("  " + words("import.and_more", count=more))
        if self.missing_date_count:
            shown = ", ".join(str(d) for d in self.missing_dates)
            more = "…" if self.missing_date_count > len(self.missing_dates) else ""
            out.append(
                words(
                    "import.missing_dates",
                    count=words.count(self.missing_date_count),
                    dates=shown + more,
                )
            )
        if self.closed_dates:
            shown = ", ".join(str(d) for d in self.closed_dates[:SHOWN])
            out.append(words("import.closed_dates", dates=shown))
        if self.gap_count:
            more = "…" if self.gap_count > len(self.gaps) else ""
            out.append(
                words(
                    "import.gaps",
                    minutes=GAP_MINUTES,
                    count=words.count(self.gap_count),
                    gaps="; ".join(self.gaps) + more,
                )
            )
        if self.ok and not self.refused_by_stored:
            out.append(words("import.no_problems"))
        return "\n".join(out)


def plural(count: int, noun: str) -> str:
    """``1 trading date``, ``6 trading dates``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _outside(words: ImportWords, name: str, price: float, low: float, high: float) -> str:
    return words("import.outside", name=name, price=quote(price), low=quote(low), high=quote(high))


def quote(x: float) -> str:
    """A number as the file wrote it: the shortest form that reads back the same float
    (``17939.25``, not ``:g``'s six digits ``17939.2``), without a trailing ``.0``."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def show(ns: int, utc: bool) -> str:
    text = str(pd.Timestamp(int(ns)))
    return f"{text} UTC" if utc else text


def row_checks(
    raw: RawBars, words: ImportWords = ENGLISH
) -> list[tuple[str, np.ndarray, Callable[[int], str]]]:
    """(name, failing rows mask, message of one row in ``words``' language) of every check
    that refuses a file."""
    o, h, low, c, v = raw.open, raw.high, raw.low, raw.close, raw.volume
    t = raw.instants
    step = np.diff(t)
    return [
        (
            "missing prices",
            np.isnan(o) | np.isnan(h) | np.isnan(low) | np.isnan(c),
            lambda i: words(
                "import.missing_prices",
                names=", ".join(
                    n for n, a in zip(PRICES, (o, h, low, c), strict=True) if np.isnan(a[i])
                ),
            ),
        ),
        (
            # "inf" reads as a number; stored, it made the day's high NaN in every query.
            "infinite prices",
            np.isinf(o) | np.isinf(h) | np.isinf(low) | np.isinf(c),
            lambda i: words(
                "import.not_a_price",
                values=", ".join(
                    f"{n} {quote(a[i])}"
                    for n, a in zip(PRICES, (o, h, low, c), strict=True)
                    if np.isinf(a[i])
                ),
            ),
        ),
        ("missing volume", np.isnan(v), lambda i: words("import.missing_volume")),
        (
            # Beyond int64 the stored volume wrapped round to -9223372036854775808.
            "volume too large",
            v >= MAX_VOLUME,
            lambda i: words(
                "import.volume_too_large", volume=quote(v[i]), limit=f"{MAX_VOLUME:.3g}"
            ),
        ),
        ("negative volume", v < 0, lambda i: words("import.negative_volume", volume=quote(v[i]))),
        (
            "fractional volume",
            ~np.isnan(v) & (v != np.floor(v)),  # a missing one is reported as missing
            lambda i: words("import.fractional_volume", volume=quote(v[i])),
        ),
        (
            "OHLC inconsistent",
            (h < low) | (o < low) | (o > h) | (c < low) | (c > h),
            lambda i: words("import.high_below_low", high=quote(h[i]), low=quote(low[i]))
            if h[i] < low[i]
            else _outside(words, "open", o[i], low[i], h[i])
            if not low[i] <= o[i] <= h[i]
            else _outside(words, "close", c[i], low[i], h[i]),
        ),
        (
            # The importer has sorted the bars and kept each identical repeat once
            # (``importer._in_time_order``): what is left holds other prices than the bar
            # of its time on an earlier line.
            "duplicates",
            np.concatenate(([False], step == 0)),
            lambda i: _repeat(words, raw, i),
        ),
        (
            "not on a whole minute",
            t % MINUTE_NS != 0,
            lambda i: words("import.not_whole_minute", time=show(t[i], raw.utc)),
        ),
    ]


def _repeat(words: ImportWords, raw: RawBars, i: int) -> str:
    """Bar ``i``, whose time bar ``i - 1`` (on an earlier line) has too, with other values:
    the first that differs is named."""
    values = zip(
        (*PRICES, "volume"), (raw.open, raw.high, raw.low, raw.close, raw.volume), strict=True
    )
    column, a = next(
        ((n, a) for n, a in values if a[i - 1] != a[i] and not np.isnan(a[[i - 1, i]]).all()),
        ("close", raw.close),
    )
    return words(
        "import.duplicate",
        time=show(raw.instants[i], raw.utc),
        column=column,
        there=quote(a[i - 1]),
        here=quote(a[i]),
    )


def collect(
    raw: RawBars, checks: list[tuple[str, np.ndarray, Callable[[int], str]]]
) -> list[Check]:
    """Each check's failing bars, named by their row in the file."""
    found = []
    for name, mask, message in checks:
        rows = np.flatnonzero(mask)
        if rows.size:
            limit = 1 if name in SHOWN_ONCE else SHOWN
            shown = [
                Finding(row=raw.file_row(int(i)), message=message(int(i))) for i in rows[:limit]
            ]
            found.append(Check(name=name, count=int(rows.size), shown=shown))
    return found


def jump_checks(
    raw: RawBars, trading_date: np.ndarray, interval_minutes: int, words: ImportWords = ENGLISH
) -> list[tuple[str, np.ndarray, Callable[[int], str]]]:
    """Bad prints: a bar whose close leaps away and straight back (a spike far beyond the
    day's usual moves), or any leap of over ``BIG_JUMP`` in one bar; a high or low over
    ``BIG_JUMP`` beyond the bar's open and close; a price at or below zero.

    Real markets move fast too, but rarely to a price they leave again at once; the scale
    is each trading date's median move, so a wild day (March 2020) is judged against itself,
    and the first bar after a pause (a session's open, a halt) may gap. A price at or below
    zero is reported, not refused (WTI crude settled at -37.63 on 2020-04-20), and the other
    checks go on around it: one zero bar used to switch them off for the whole file.
    """
    o, h, low, c = raw.open, raw.high, raw.low, raw.close
    nonpositive = (o <= 0) | (h <= 0) | (low <= 0) | (c <= 0)
    checks: list[tuple[str, np.ndarray, Callable[[int], str]]] = [
        (
            "prices at or below zero",
            nonpositive,
            lambda i: words(
                "import.nonpositive",
                prices=", ".join(
                    f"{n} {quote(a[i])}" for n, a in zip(PRICES, (o, h, low, c), strict=True)
                ),
            ),
        )
    ]
    if len(c) < 3:
        return checks
    with np.errstate(invalid="ignore", divide="ignore"):
        logs = np.log(np.where(nonpositive, np.nan, c))  # steps from or to such bars: skipped
        wick = _far_wicks(o, h, low, c)
    # Whole-file temporaries are few and reused: on 6.4M bars this check held 365 MB more
    # than the bars (a pandas groupby and a dozen float arrays), the import's highest point.
    step = np.diff(logs)  # step[k]: from bar k to bar k + 1
    del logs
    # Where a step leaps (below), it is not 0 or NaN: its sign is whether it rises.
    rises = step > 0
    size = np.abs(step, out=step)
    limit = _day_medians(size, trading_date[1:])
    np.multiply(limit, SPIKE_SIGMAS * 1.4826, out=limit)
    np.maximum(limit, MIN_SPIKE, out=limit)
    paused = np.diff(raw.instants) > interval_minutes * MINUTE_NS
    leap = (size > limit) & ~paused
    del limit
    # Bar i (1..n-2) spikes when it leaps in from bar i-1 and back out to bar i+1.
    spike = np.zeros(len(c), dtype=bool)
    spike[1:-1] = leap[:-1] & leap[1:] & (rises[:-1] != rises[1:])
    big = np.concatenate(([False], (size > BIG_JUMP) & ~paused))
    after_spike = np.concatenate(([False], spike[:-1]))
    flagged = spike | (big & ~after_spike)

    def message(i: int) -> str:
        closes = [quote(x) for x in c[i - 1 : i + 2]]
        return words(
            "import.jump",
            time=show(raw.instants[i], raw.utc),
            closes=words("import.then").join(closes),
        )

    def far(i: int) -> str:
        return words(
            "import.far_wick",
            time=show(raw.instants[i], raw.utc),
            high=quote(h[i]),
            low=quote(low[i]),
            open=quote(o[i]),
            close=quote(c[i]),
        )

    return [("jumps", flagged, message), ("far highs or lows", wick & ~nonpositive, far), *checks]


def _far_wicks(o: np.ndarray, h: np.ndarray, low: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Bars whose high or low lies over ``BIG_JUMP`` (log) beyond their open and close,
    ``CHUNK`` bars at a time."""
    wick = np.empty(len(c), dtype=bool)
    for lo in range(0, len(c), CHUNK):
        part = slice(lo, lo + CHUNK)
        top, bottom = np.maximum(o[part], c[part]), np.minimum(o[part], c[part])
        wick[part] = (np.log(h[part] / top) > BIG_JUMP) | (np.log(bottom / low[part]) > BIG_JUMP)
    return wick


def _day_medians(values: np.ndarray, dates: np.ndarray) -> np.ndarray:
    """Each value's trading date's median of ``values`` (NaN skipped), as
    ``groupby(dates).transform("median")`` gives it: date by date where the dates run in
    order (an import's do), without the groupby's copies of every row."""
    if len(dates) > 1 and not bool((dates[1:] >= dates[:-1]).all()):
        return pd.Series(values).groupby(dates).transform("median").to_numpy()
    starts = np.flatnonzero(np.r_[True, dates[1:] != dates[:-1]]) if len(dates) else []
    ends = [*starts[1:], len(values)]
    median = np.nanmedian if bool(np.isnan(values).any()) else np.median
    out = np.empty_like(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a date of NaN steps only: NaN
        for a, b in zip(starts, ends, strict=True):
            out[a:b] = median(values[a:b])
    return out


# Bars taken at a time by the checks that would otherwise hold several temporaries of the
# file's length.
CHUNK = 1 << 20


def future_checks(
    raw: RawBars, wall: np.ndarray, now: int, zone: str, words: ImportWords = ENGLISH
) -> list[tuple[str, np.ndarray, Callable[[int], str]]]:
    """Bars stamped after ``now`` (wall-clock ns in the instrument's ``zone``): a file of 2031
    imported in 2026 without a word, a misread year or a vendor's placeholder dates."""
    when = pd.Timestamp(int(now)).strftime("%Y-%m-%d %H:%M")
    return [
        (
            "bars after now",
            wall > now,
            lambda i: words("import.future", time=show(wall[i], False), now=when, zone=zone),
        )
    ]


def hundredfold_prices(raw: RawBars, tick: float) -> Note | None:
    """Why the file's prices look a hundred times too big (cents, not points), or None.

    Prices in points sit on a multiple of 100 ticks about once in a hundred; when every one
    of many distinct prices does, they were written in cents. Each price is on the tick
    either way (whole cents of NQ are whole quarters too), so the tick alone cannot tell.
    """
    # Column by column: the four columns joined (and their sorted copy) were 4 times the
    # memory of the largest array the import holds.
    distinct = np.unique(
        np.concatenate(
            [np.unique(c[~np.isnan(c)]) for c in (raw.open, raw.high, raw.low, raw.close)]
        )
    )
    if distinct.size < CENTS_DISTINCT:
        return None
    step = tick * 100
    units = distinct / step
    if not np.allclose(units, np.round(units), rtol=0, atol=1e-6):
        return None
    first = raw.open[0]
    return (
        N_("import.refuse.cents"),
        {
            "step": quote(step),
            "tick": quote(tick),
            "first": quote(first),
            "points": quote(first / 100),
        },
    )


def detect_interval(instants: np.ndarray) -> int | None:
    """The bars' interval in minutes: the shortest step between consecutive bars that is
    common (illiquid one-minute data skips many minutes, but one-minute steps stay common);
    None when the file has too few steps to tell."""
    steps = np.diff(instants) // MINUTE_NS
    steps = steps[(steps > 0) & (steps <= 24 * 60)]
    values, counts = np.unique(steps, return_counts=True)
    common = values[counts >= max(3, 0.05 * steps.size)]
    return int(common[0]) if common.size else None


def session_shares(minute: np.ndarray, instrument: Instrument) -> dict[str, float]:
    """Share of the bars that fall in each of the instrument's sessions."""
    shares = {}
    for name, spec in instrument.sessions.items():
        start, length = spec.start_minute, spec.length_minutes
        inside = (minute.astype(np.int64) - start) % (24 * 60) < length
        share = float(inside.mean()) if len(minute) else 0.0
        if share > 0:
            shares[name] = round(share, 4)
    return shares


def calendar_findings(
    report: ImportReport,
    wall: np.ndarray,
    trading_date: np.ndarray,
    schedule_dates: np.ndarray,
    interval_minutes: int,
) -> None:
    """Dates the calendar has and the file lacks, bars on closed days, holes in sessions."""
    dates = np.unique(trading_date)
    missing = np.setdiff1d(schedule_dates, dates)
    report.missing_date_count = int(missing.size)
    report.missing_dates = [pd.Timestamp(d).date() for d in missing[:SHOWN]]
    closed = np.setdiff1d(dates, schedule_dates)
    report.closed_dates = [pd.Timestamp(d).date() for d in closed[: SHOWN * 10]]
    step = np.diff(wall)
    same_day = trading_date[1:] == trading_date[:-1]
    hole = same_day & (step > max(GAP_MINUTES, interval_minutes) * MINUTE_NS)
    rows = np.flatnonzero(hole)
    report.gap_count = int(rows.size)
    report.gaps = [
        report.words(
            "import.gap", start=pd.Timestamp(int(wall[i])), end=pd.Timestamp(int(wall[i + 1]))
        )
        for i in rows[:3]
    ]
