"""Which clock a file's times are on: their time zone and whether bars are stamped at their
open or their close, read from where the exchange is shut.

A file of naive times says nothing about its zone, and taking Chicago time for New York time
shifts every bar by an hour without any error. But the exchange's closed hours (for CME the
17:00-18:00 New York maintenance break and the Friday-to-Sunday weekend) are empty in real
data, so the right reading is the one under which (almost) no bar falls in them. The same
test tells bar-close stamps (NinjaTrader's) from bar-open stamps: read as open stamps, close
stamps put the last bar before the break inside it.
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from barb.data.formats import BadFile, RawBars
from barb.data.layouts import Stamp
from barb.data.words import ENGLISH, ImportWords, Message
from barb.i18n import N_
from barb.instruments import Instrument, parse_clock
from barb.sessions import MINUTES_PER_DAY

MINUTE_NS = 60 * 1_000_000_000
HOUR_NS = 60 * MINUTE_NS
DAY_NS = 24 * HOUR_NS

# Zones a vendor file is likely to be in: the exchanges', the vendors' and UTC.
CANDIDATE_ZONES = (
    "America/New_York",
    "America/Chicago",
    "UTC",
    "America/Denver",
    "America/Los_Angeles",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Moscow",
    "Asia/Tokyo",
    "Asia/Singapore",
    "Australia/Sydney",
)


# A zone's clock moved by whole hours: "America/New_York+7", the clock MetaTrader brokers
# keep (the FX week opens at 00:00 Monday: EET/EEST switched on the US dates, not the EU
# ones, which no IANA zone does). Whole hours only: offsets change on whole hours, which
# ``_Walls`` relies on.
_SHIFTED = re.compile(r"(?P<zone>.+?)(?P<hours>[+-]\d{1,2})")


def split_zone(zone: str) -> tuple[str, int]:
    """A zone as ``--timezone`` names it -> (IANA zone, hours its clock is moved by).

    >>> split_zone("America/New_York+7"), split_zone("Etc/GMT+5")
    (('America/New_York', 7), ('Etc/GMT+5', 0))

    A name that is neither stays as it is (hours 0), for ``zoneinfo`` to refuse."""
    if _is_zone(zone):
        return zone, 0
    found = _SHIFTED.fullmatch(zone)
    if found is None or not _is_zone(found["zone"]) or abs(int(found["hours"])) > 23:
        return zone, 0
    return found["zone"], int(found["hours"])


def _is_zone(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def localize(index: pd.DatetimeIndex, zone: str, **options: object) -> pd.DatetimeIndex:
    """Naive times on ``zone``'s clock (``split_zone``'s names too) as instants; ``options``
    are ``tz_localize``'s (what to do with a clock change's skipped or repeated hour)."""
    base, hours = split_zone(zone)
    if hours:
        index = index - pd.Timedelta(hours=hours)
    return index.tz_localize(base, **options)  # type: ignore[arg-type]


def on_clock(aware: pd.Timestamp, zone: str) -> pd.Timestamp:
    """An instant as ``zone``'s clock (``split_zone``'s names too) shows it, naive."""
    base, hours = split_zone(zone)
    return aware.tz_convert(base).tz_localize(None) + pd.Timedelta(hours=hours)


def zone_words(zone: str, words: ImportWords = ENGLISH) -> str:
    """'America/New_York' -> 'New York time (America/New_York)'."""
    return str(words.say(zone_message(zone)))


def zone_message(zone: str) -> Message:
    """``zone_words`` to be said later, in a refusal."""
    base, hours = split_zone(zone)
    if zone == "UTC":
        return "UTC"
    city = base.rsplit("/", 1)[-1].replace("_", " ")
    if hours:
        return (N_("import.zone_shifted"), {"city": city, "hours": f"{hours:+d}", "zone": zone})
    return (N_("import.zone"), {"city": city, "zone": zone})


@dataclass(frozen=True)
class ClockReading:
    zone: str  # zone of the file's times ("UTC" when the file carries its own)
    stamp: Stamp
    note: str  # one sentence for the validation report
    closed_bars: int  # bars that still fall in closed hours under this reading
    # Whether the bars bear the zone out: an hour off, they would fill closed hours, or so
    # read their days start and end on the session's times.
    confirmed: bool = False


def in_closed_hours(
    wall: np.ndarray, instrument: Instrument, weekend: bool = True, step: int = MINUTE_NS
) -> np.ndarray:
    """Bars (wall-clock ns in the instrument's zone, ``step`` ns long) inside the exchange's
    closed hours (only its daily break when not ``weekend``): their first and last minutes
    both are. An hourly bar on the half hour opening at 17:30 trades from the 18:00 open
    (``opening_in_break``); it was refused as a bar in the daily break. Worked out
    ``CHUNK`` bars at a time: over 6.4M bars at once its temporaries took 146 MB."""
    shut = np.empty(len(wall), dtype=bool)
    for lo in range(0, len(wall), CHUNK):
        part = wall[lo : lo + CHUNK]
        closed = _closed_minutes(part, instrument, weekend)
        if step > MINUTE_NS:
            closed &= _closed_minutes(part + (step - MINUTE_NS), instrument, weekend)
        shut[lo : lo + CHUNK] = closed
    return shut


def opening_in_break(wall: np.ndarray, instrument: Instrument, step: int) -> np.ndarray:
    """Where bars of ``step`` ns that open inside the closed hours but reach past them
    (the 17:30 bar of hourly bars on the half hour) open once trading does, in ns: their
    trades start there. Other bars' times are returned as they are."""
    brk = instrument.maintenance_break
    if step <= MINUTE_NS or brk is None:
        return wall
    straddles = _closed_minutes(wall, instrument, True) & ~in_closed_hours(
        wall, instrument, True, step
    )
    if not straddles.any():
        return wall
    minute = (wall // MINUTE_NS) % MINUTES_PER_DAY
    late = (parse_clock(brk.end) - minute) % MINUTES_PER_DAY
    return np.where(straddles, wall + late * MINUTE_NS, wall)


def _closed_minutes(wall: np.ndarray, instrument: Instrument, weekend: bool) -> np.ndarray:
    minute = (wall // MINUTE_NS) % MINUTES_PER_DAY
    weekday = ((wall // DAY_NS) + 3) % 7  # 1970-01-01 was a Thursday; Monday = 0
    shut = (weekday == 5) & weekend
    brk = instrument.maintenance_break
    if brk is not None:
        start, end = parse_clock(brk.start), parse_clock(brk.end)
        shut |= (minute - start) % MINUTES_PER_DAY < (end - start) % MINUTES_PER_DAY
        if not weekend:
            return shut
        shut |= (weekday == 4) & (minute >= start)  # Friday after the close
        shut |= (weekday == 6) & (minute < end)  # Sunday before the open
    return shut


def closed_reason(wall_ns: int, instrument: Instrument, words: ImportWords = ENGLISH) -> str:
    """Which closed hours a bar (wall-clock ns) falls in, for the report: "2024-03-09
    10:00:00 is on a Saturday, when the exchange is shut."."""
    t = pd.Timestamp(int(wall_ns))
    brk = instrument.maintenance_break
    if t.weekday() == 5:
        return words("import.shut.saturday", time=t)
    if brk is not None:
        minute = t.hour * 60 + t.minute
        if t.weekday() == 4 and minute >= parse_clock(brk.start):
            return words("import.shut.friday", time=t)
        if t.weekday() == 6 and minute < parse_clock(brk.end):
            return words("import.shut.sunday", time=t)
        return words("import.shut.break", time=t, start=brk.start, end=brk.end)
    return words("import.shut.closed", time=t)


class _Walls:
    """The file's times as the instrument's wall clock under each candidate zone.

    Offsets change only at whole hours, so they are worked out once per distinct hour of
    the file and spread to its bars: a few milliseconds per zone on millions of bars.
    Closed hours depend only on a bar's minute of the week, so the counts of bars in them
    (``closed``) read each bar's minute of the week on the file's clock, moved by its
    hour's offset, in a table of the week's 10,080 minutes, ``CHUNK`` bars at a time: over
    every bar at once, the search over 11 zones and 2 stamps held about 390 MB of
    temporaries for a 350 MB file (6.4M bars), the largest part of the import's peak, and
    took 15-20 s of divisions.
    """

    def __init__(self, raw: RawBars, target: str):
        self.instants = raw.instants
        self.utc = raw.utc
        self.target = target
        self.hours = _distinct(raw.instants // HOUR_NS) * HOUR_NS
        # int32 and int16: the file's distinct hours number far fewer than 2**31, and a
        # week has 10,080 minutes.
        self.inverse = np.empty(len(raw.instants), dtype=np.int32)
        self.week_minute = np.empty(len(raw.instants), dtype=np.int16)
        for lo in range(0, len(raw.instants), CHUNK):
            part = raw.instants[lo : lo + CHUNK]
            self.inverse[lo : lo + CHUNK] = np.searchsorted(self.hours, part // HOUR_NS * HOUR_NS)
            self.week_minute[lo : lo + CHUNK] = _week_minute(part)
        self._offsets: dict[str, np.ndarray] = {}

    def offsets(self, zone: str) -> np.ndarray:
        """ns to add to each distinct hour's times to read them as the target's wall clock."""
        if zone not in self._offsets:
            index = pd.DatetimeIndex(self.hours.view("datetime64[ns]"))
            if self.utc:
                local = index.tz_localize("UTC")
            else:
                # Scoring only: a clock-change hour is read one way; conversion proper
                # refuses it.
                local = localize(
                    index,
                    zone,
                    ambiguous=np.ones(len(index), dtype=bool),
                    nonexistent="shift_forward",
                )
            shifted = local.tz_convert(self.target).tz_localize(None).asi8
            self._offsets[zone] = shifted - self.hours
        return self._offsets[zone]

    def wall(self, zone: str) -> np.ndarray:
        return self.instants + self.offsets(zone)[self.inverse]

    def week_minutes(self, zone: str, shift: int = 0) -> Iterator[np.ndarray]:
        """The bars' minutes of the week (Monday 00:00 = 0, possibly outside 0-10,079: take
        them ``mode="wrap"``) read in ``zone`` and moved by ``shift`` ns (whole minutes),
        ``CHUNK`` bars at a time."""
        assert shift % MINUTE_NS == 0
        moved = (self.offsets(zone) // MINUTE_NS).astype(np.int32) + shift // MINUTE_NS
        for lo in range(0, len(self.instants), CHUNK):
            yield self.week_minute[lo : lo + CHUNK] + moved[self.inverse[lo : lo + CHUNK]]

    def closed(
        self,
        zone: str,
        instrument: Instrument,
        step: int,
        shift: int = 0,
        weekend: bool = True,
    ) -> int:
        """How many bars, read in ``zone`` and moved by ``shift`` ns (``-step`` for close
        stamps), fall in the exchange's closed hours (as ``in_closed_hours`` finds them)."""
        shut = _closed_week(instrument, weekend)
        last = step // MINUTE_NS - 1  # a longer bar is in them when its last minute is too
        count = 0
        for minute in self.week_minutes(zone, shift):
            closed = shut.take(minute, mode="wrap")
            if last:
                closed &= shut.take(minute + last, mode="wrap")
            count += int(np.count_nonzero(closed))
        return count


MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY


def _week_minute(wall: np.ndarray) -> np.ndarray:
    """Minutes of the week (Monday 00:00 = 0) of wall-clock ns; 1970-01-01 was a Thursday."""
    return (wall // MINUTE_NS + 3 * MINUTES_PER_DAY) % MINUTES_PER_WEEK


def _closed_week(instrument: Instrument, weekend: bool) -> np.ndarray:
    """Whether each of the week's minutes (Monday 00:00 = 0) is in the closed hours."""
    minutes = np.arange(MINUTES_PER_WEEK, dtype=np.int64) - 3 * MINUTES_PER_DAY
    return _closed_minutes(minutes * MINUTE_NS, instrument, weekend)


# Bars taken at a time where a whole-file computation would hold many temporaries of the
# file's length (8 MB per int64 column of a chunk).
CHUNK = 1 << 20


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``, sorted, without sorting a copy of all of them at once."""
    parts = [np.unique(values[lo : lo + CHUNK]) for lo in range(0, len(values), CHUNK)]
    return np.unique(np.concatenate(parts)) if parts else values[:0]


def clear_margin(raw: RawBars) -> int:
    """How many fewer bars in the closed hours one reading must leave than another to be
    taken for it: a few stray bars (an exchange's test prints, a vendor's settlement bar)
    must not flip the reading of a whole file."""
    return max(2, len(_distinct(raw.instants // DAY_NS)) // 4)


def closed_bars(
    raw: RawBars, instrument: Instrument, interval_minutes: int, zone: str, stamp: Stamp | None
) -> int:
    """How many of the file's bars fall in the exchange's closed hours with its naive times
    read in ``zone`` (the fewer of the two stamps when ``stamp`` is not given)."""
    step = interval_minutes * MINUTE_NS
    walls = _Walls(raw, instrument.timezone)
    stamps: tuple[Stamp, ...] = (stamp,) if stamp else ("open", "close")
    return min(walls.closed(zone, instrument, step, -step if s == "close" else 0) for s in stamps)


def read_clock(
    raw: RawBars,
    instrument: Instrument,
    interval_minutes: int,
    declared_zone: str | None,
    declared_stamp: Stamp | None,
    words: ImportWords = ENGLISH,
    home_zone: str | None = None,
) -> ClockReading:
    """The zone and stamp under which the file's bars respect the exchange's closed hours,
    with the report's note on it in ``words``' language; naive times are taken to be in
    ``home_zone`` (default: the instrument's) unless the bars say otherwise.

    A declared zone that the file contradicts is refused (``BadFile``) with what was found.
    """
    if raw.utc and declared_zone not in (None, "UTC"):
        raise BadFile((N_("import.refuse.own_zone"), {}))
    if len(raw) == 0:
        raise BadFile((N_("import.refuse.no_bars"), {}))
    walls = _Walls(raw, instrument.timezone)
    home_zone = home_zone or instrument.timezone
    zones = ["UTC"] if raw.utc else list(dict.fromkeys([home_zone, *CANDIDATE_ZONES]))
    if declared_zone and declared_zone not in zones:
        zones.insert(0, declared_zone)
    default_stamp = declared_stamp or raw.layout.stamp
    stamps: list[Stamp] = [default_stamp, "close" if default_stamp == "open" else "open"]
    step = interval_minutes * MINUTE_NS
    scores: dict[tuple[str, Stamp], int] = {}
    for zone in zones:
        for stamp in stamps:
            shift = -step if stamp == "close" else 0
            scores[zone, stamp] = walls.closed(zone, instrument, step, shift)
    days = len(_distinct(raw.instants // DAY_NS))
    margin = clear_margin(raw)
    order = {key: i for i, key in enumerate(scores)}

    def best(keys: list[tuple[str, Stamp]]) -> tuple[str, Stamp]:
        return min(keys, key=lambda k: (scores[k], order[k]))

    overall = best(list(scores))
    home = "UTC" if raw.utc else (declared_zone or home_zone)
    if declared_zone:
        mine = best([k for k in scores if k[0] == declared_zone])
        if scores[mine] >= margin and not raw.utc:
            # Bars where the exchange is shut, refused either way: a broker's MetaTrader
            # clock declared as Europe/Athens (or EET) fills the break in the weeks the US
            # and the EU change their clocks on different dates (and was sent to Moscow
            # time, which fits it only in those weeks); told the clock that fits instead.
            shifted = _shifted_reading(
                walls, instrument, step, mine[1], scores[mine], mine[0], words
            )
            if shifted is not None:
                raise BadFile(shifted)
        if scores[mine] - scores[overall] >= margin and overall[0] != declared_zone:
            raise BadFile(_contradiction(raw, instrument, declared_zone, overall[0]))
    allowed = [k for k in scores if k[0] == home] if declared_zone or raw.utc else list(scores)
    if declared_stamp:
        allowed = [k for k in allowed if k[1] == declared_stamp]
    default = (home, default_stamp)
    choice = best(allowed)
    if scores[default] - scores[choice] < margin:
        choice = default
    # Would the file break the closed hours if it were an hour off? If not (a file of
    # day-session bars only), nothing in it confirms the zone.
    evidence_zone = choice[0]
    stamped = -step if choice[1] == "close" else 0
    filled = [
        walls.closed(choice[0], instrument, step, stamped + shift) - scores[choice] >= margin
        for shift in (-HOUR_NS, HOUR_NS)
    ]
    evidence = any(filled)
    # A clock off by hours fills the daily break every day; bars only on weekends are
    # misread dates or stray bars, refused one by one by the importer instead.
    in_break = walls.closed(choice[0], instrument, step, stamped, weekend=False)
    if not declared_zone and not raw.utc and in_break > _stray_limit(days, margin, step):
        raise BadFile(
            _shifted_reading(walls, instrument, step, choice[1], scores[choice], None)
            or _fixed_offset_reading(walls, instrument, step, days, margin)
            or _no_reading(raw, instrument, step)
        )
    # Bars up to the break on one side only (a file that ends at the 17:00 close) confirm
    # the zone only if the days also start where a session does: a New York cash-session
    # file declared Chicago time ends at 17:00 on the New York clock.
    if declared_zone and not all(filled) and not raw.utc:
        elsewhere = _declared_off_bounds(walls, instrument, step, declared_zone, declared_stamp)
        if elsewhere is not None:
            raise BadFile(elsewhere)
    # Day-session files never touch the closed hours: their days' first and last bars
    # against the instrument's session bounds tell the zone and the stamp instead.
    zone_unsure = not evidence and not declared_zone and not raw.utc
    stamp_unsure = (
        declared_stamp is None
        and raw.layout.name not in VENDOR_STAMPS
        and abs(scores[choice[0], "open"] - scores[choice[0], "close"]) < margin
    )
    if zone_unsure or stamp_unsure:
        shaped = _read_shape(walls, instrument, step, choice, zones, zone_unsure, stamp_unsure)
        if shaped is None and stamp_unsure:
            raise BadFile((N_("import.refuse.stamp_unknown"), {}))
        if shaped is not None:
            reading, days_run, on_bounds = shaped
            if scores[reading] - scores[choice] < margin:
                choice = reading
                if on_bounds:
                    note = _shape_note(choice, days_run, words)
                    return ClockReading(choice[0], choice[1], note, scores[choice], True)
    shows_break = _shows_break(walls, instrument, step, choice)
    note = _note(raw, instrument, choice, evidence, declared_zone, words, shows_break)
    confirmed = (evidence and choice[0] == evidence_zone) or _on_bounds(
        walls, instrument, step, choice
    )
    return ClockReading(choice[0], choice[1], note, scores[choice], confirmed)


#: Layouts whose vendor documents the stamp (NinjaTrader's bar close, Databento's and
#: TradingView's bar open): the file's shape is not asked about it.
VENDOR_STAMPS = frozenset({"ninjatrader", "databento", "tradingview"})


def _session_bounds(instrument: Instrument) -> tuple[set[int], set[int]]:
    """The minutes of the day the instrument's sessions start and end at."""
    starts = {parse_clock(s.start) for s in instrument.sessions.values()}
    ends = {parse_clock(s.end) % MINUTES_PER_DAY for s in instrument.sessions.values()}
    return starts, ends


def _day_bounds(
    opens: np.ndarray, step: int, instrument: Instrument
) -> tuple[np.ndarray, np.ndarray]:
    """Each calendar day's first bar open and last bar end (minute of the day, wall clock),
    where trading is: a bar opening in the daily break and reaching past it (17:30 on
    hourly bars on the half hour) starts at the break's end, one reaching into it ends at
    its start."""
    day = opens // DAY_NS
    first = np.r_[True, day[1:] != day[:-1]]
    last = np.r_[day[1:] != day[:-1], True]
    start = (opens[first] // MINUTE_NS) % MINUTES_PER_DAY
    end = ((opens[last] + step) // MINUTE_NS) % MINUTES_PER_DAY
    brk = instrument.maintenance_break
    if brk is not None and step > MINUTE_NS:
        b0, b1 = parse_clock(brk.start), parse_clock(brk.end)
        width = (b1 - b0) % MINUTES_PER_DAY
        start = np.where((start - b0) % MINUTES_PER_DAY < width, b1, start)
        into = (end - b0) % MINUTES_PER_DAY
        end = np.where((into > 0) & (into <= width), b0, end)
    return start, end


def _read_shape(
    walls: _Walls,
    instrument: Instrument,
    step: int,
    choice: tuple[str, Stamp],
    zones: list[str],
    zone_unsure: bool,
    stamp_unsure: bool,
) -> tuple[tuple[str, Stamp], tuple[int, int], bool] | None:
    """The (zone, stamp) under which the file's days start and end on session bounds, the
    days' most common (start, end) minute under it, and whether both ends fit on at least
    half the days (the report then says so); None when no reading leads.

    A cash-session file 09:31-16:00 fits only as close stamps (opens 09:30, last end
    16:00); one of 08:30-14:59 only as Chicago time (09:30-16:00 in New York). Another
    zone is taken only when both ends fit on at least half the days; failing a zone, the
    stamp is still read on the chosen zone's clock.
    """
    starts, ends = _session_bounds(instrument)
    stamps: tuple[Stamp, ...] = ("open", "close") if stamp_unsure else (choice[1],)
    candidates = [(z, s) for z in (zones if zone_unsure else [choice[0]]) for s in stamps]
    hits: dict[tuple[str, Stamp], int] = {}
    both: dict[tuple[str, Stamp], int] = {}
    run: dict[tuple[str, Stamp], tuple[int, int]] = {}
    days = 1
    for key in candidates:
        opens = walls.wall(key[0]) - (step if key[1] == "close" else 0)
        start, end = _day_bounds(opens, step, instrument)
        on_start, on_end = np.isin(start, list(starts)), np.isin(end, list(ends))
        hits[key] = int(on_start.sum() + on_end.sum())
        both[key] = int((on_start & on_end).sum())
        pairs, counts = np.unique(np.c_[start, end], axis=0, return_counts=True)
        common = pairs[int(np.argmax(counts))]
        run[key] = (int(common[0]), int(common[1]))
        days = len(start)

    def lead(keys: list[tuple[str, Stamp]]) -> tuple[str, Stamp] | None:
        ranked = sorted(keys, key=lambda k: -hits[k])
        if hits[ranked[0]] == 0 or (len(ranked) > 1 and hits[ranked[1]] == hits[ranked[0]]):
            return None
        return ranked[0]

    best = lead(candidates)
    if zone_unsure and best is not None and best[0] != choice[0] and both[best] * 2 >= days:
        _refuse_rival_zones(choice[0], best, hits, both, run, days)
    if best is not None and (best[0] == choice[0] or both[best] * 2 >= days):
        return best, run[best], both[best] * 2 >= days
    if not stamp_unsure:
        return None
    best = lead([k for k in candidates if k[0] == choice[0]])
    return None if best is None else (best, run[best], both[best] * 2 >= days)


def _declared_off_bounds(
    walls: _Walls,
    instrument: Instrument,
    step: int,
    declared: str,
    stamp: Stamp | None,
) -> Message | None:
    """The refusal of a declared zone under which a day-session file's days neither start
    nor end on the instrument's session times, when another zone Barb tries has them
    start and end on them (on at least half the days), else None.

    A Kibot cash-session file in Chicago time (08:30-15:00) imported with `--timezone
    America/New_York` was refused asking for `--stamp`, and with `--stamp open` stored an
    hour early: nothing near the closed hours tells the zone, but the days' ends do.
    """
    starts, ends = (list(bounds) for bounds in _session_bounds(instrument))
    stamps: tuple[Stamp, ...] = (stamp,) if stamp else ("open", "close")

    def fits(zone: str, stamped: Stamp) -> tuple[int, int, int, tuple[int, int]]:
        opens = walls.wall(zone) - (step if stamped == "close" else 0)
        start, end = _day_bounds(opens, step, instrument)
        on_start, on_end = np.isin(start, starts), np.isin(end, ends)
        pairs, counts = np.unique(np.c_[start, end], axis=0, return_counts=True)
        common = pairs[int(np.argmax(counts))]
        run = (int(common[0]), int(common[1]))
        return int((on_start | on_end).sum()), int((on_start & on_end).sum()), len(start), run

    pairs = _session_pairs(instrument)
    mine = {s: fits(declared, s) for s in stamps}
    if any(both * 2 >= days for _, both, days, _ in mine.values()):
        return None
    # Fitting one end is not enough when another zone reads the days as one whole session:
    # a New York cash-session file (09:30-16:00) declared Chicago time runs 10:30-17:00,
    # ending on RTH's close, and was stored an hour late without a word.
    one_end = any(either * 2 >= days for either, _, days, _ in mine.values())
    if one_end and any(mine[s][3] in pairs for s in stamps):
        return None
    for zone in dict.fromkeys([instrument.timezone, *CANDIDATE_ZONES]):
        if zone == declared:
            continue
        for stamped in stamps:
            _, both, days, run = fits(zone, stamped)
            if one_end and run not in pairs:
                continue
            if both * 2 >= days:
                values = {
                    "declared": zone_message(declared),
                    "run": _clock_run(mine[stamped][3]),
                    "found": zone_message(zone),
                    "found_run": _clock_run(run),
                    "zone": zone,
                }
                key = (
                    N_("import.refuse.zone_session_end")
                    if one_end
                    else N_("import.refuse.zone_session")
                )
                return (key, values)
    return None


def _session_pairs(instrument: Instrument) -> set[tuple[int, int]]:
    """Each session's (start, end) minutes of the day: the days of a file cut from one
    session (the cash session's 09:30-16:00) run exactly so."""
    return {
        (parse_clock(s.start), parse_clock(s.end) % MINUTES_PER_DAY)
        for s in instrument.sessions.values()
    }


def _refuse_rival_zones(
    home: str,
    best: tuple[str, Stamp],
    hits: dict[tuple[str, Stamp], int],
    both: dict[tuple[str, Stamp], int],
    run: dict[tuple[str, Stamp], tuple[int, int]],
    days: int,
) -> None:
    """``BadFile`` when another zone fits the file's days at both ends but the home zone
    fits them at one end too: nothing tells which the file is in.

    A morning file 09:30-12:59 in New York time fits New York at its open and Los Angeles
    at both ends (12:30-16:00, the afternoon's start and the cash close): it was read as
    Los Angeles time and stored 3 hours late.
    """
    if max(hits[k] for k in hits if k[0] == home) * 2 < days:
        return
    ours = max((k for k in hits if k[0] == home), key=lambda k: hits[k])
    rivals = [k for k in both if k[1] == best[1] and k[0] != home and both[k] * 2 >= days]
    zones = ", ".join(f"{k[0]} {_clock_run(run[k])}" for k in [ours, *rivals])
    raise BadFile((N_("import.refuse.zones_fit"), {"zones": zones, "home": home}))


def _clock_run(run: tuple[int, int]) -> str:
    """(570, 780) -> '09:30–13:00'."""
    return "–".join(f"{m // 60:02d}:{m % 60:02d}" for m in run)


def _on_bounds(
    walls: _Walls, instrument: Instrument, step: int, reading: tuple[str, Stamp]
) -> bool:
    """Whether, so read, at least half the file's days start and end on session times (a
    cash-session file in UTC read as UTC, though London's winter clock reads it alike)."""
    starts, ends = _session_bounds(instrument)
    opens = walls.wall(reading[0]) - (step if reading[1] == "close" else 0)
    start, end = _day_bounds(opens, step, instrument)
    both = np.isin(start, list(starts)) & np.isin(end, list(ends))
    return int(both.sum()) * 2 >= len(start)


def _shape_note(
    choice: tuple[str, Stamp],
    days_run: tuple[int, int],
    words: ImportWords,
) -> str:
    """ "Times read as Chicago time (America/Chicago): so read, the file's days run
    09:30–16:00 on the instrument's clock, from and to its session times."."""
    zone, stamp = choice
    stamped = words("import.clock.close_stamps") if stamp == "close" else ""

    def clock(minute: int) -> str:
        return f"{minute // 60:02d}:{minute % 60:02d}"

    return words(
        "import.clock.shape",
        zone=zone_words(zone, words),
        run=f"{clock(days_run[0])}–{clock(days_run[1])}",
        stamped=stamped,
    )


def _stray_limit(days: int, margin: int, step: int) -> int:
    """Closed-hours bars the best reading may leave: stray prints, not a shifted clock.

    A zone an odd hour or half hour away from every candidate leaves a whole or half
    break's worth of bars in the break every day; about five minutes a day is stray.
    """
    return max(margin, days * 5 * MINUTE_NS // step)


def _fixed_offset_reading(
    walls: _Walls, instrument: Instrument, step: int, days: int, margin: int
) -> Message | None:
    """The refusal naming the one whole-hour offset from UTC kept all year (``Etc/GMT+5``)
    under which the file's bars leave the exchange's daily break empty, or None. A file on
    UTC-5 all year spanning a clock change fits no zone with summer time, and was sent to
    "an IANA name such as Asia/Dubai". Only across a clock change of the instrument's zone:
    between two, a zone with summer time of that offset fits as well (Asia/Dubai is no
    Etc/GMT-4 to the person who lives by it)."""
    if not _spans_clock_change(walls, instrument):
        return None
    fits = []
    for hours in range(-12, 15):
        zone = f"Etc/GMT{-hours:+d}" if hours else "UTC"
        if walls.closed(zone, instrument, step, weekend=False) <= _stray_limit(days, margin, step):
            fits.append((hours, zone))
    if len(fits) != 1 or fits[0][1] == "UTC":
        return None
    hours, zone = fits[0]
    return (
        N_("import.refuse.no_zone_fixed"),
        {"offset": f"UTC{hours:+d}".replace("-", "−"), "zone": zone},
    )


def _spans_clock_change(walls: _Walls, instrument: Instrument) -> bool:
    """Whether the file's days lie on both sides of a clock change of the instrument's zone."""
    noon = pd.DatetimeIndex(_distinct(walls.instants // DAY_NS) * DAY_NS + 12 * HOUR_NS)
    offsets = noon.tz_localize(instrument.timezone, ambiguous=True, nonexistent="shift_forward")
    return len({offset.utcoffset() for offset in offsets}) >= 2


def _shifted_reading(
    walls: _Walls,
    instrument: Instrument,
    step: int,
    stamp: Stamp,
    closed: int,
    declared: str | None,
    words: ImportWords = ENGLISH,
) -> Message | None:
    """The refusal naming the one clock of the instrument's zone moved by whole hours
    (``America/New_York+7``) under which the file's bars leave the exchange's closed hours
    empty (but for stray prints) where the reading that left ``closed`` bars in them did
    not; None when no such clock, or more than one, fits.

    MetaTrader brokers keep New York time + 7 hours, so that the FX week opens at 00:00
    Monday: EET/EEST switched on the US dates. No IANA zone is that clock: such a file was
    refused as fitting no zone, and read as Europe/Athens it filled the daily break in the
    weeks of March and October-November when the US and the EU clocks disagree."""
    days = len(_distinct(walls.instants // DAY_NS))
    margin = max(2, days // 4)
    limit = _stray_limit(days, margin, step)
    fits = []
    for hours in (h for h in range(-23, 24) if h):
        zone = f"{instrument.timezone}{hours:+d}"
        left = walls.closed(zone, instrument, step, -step if stamp == "close" else 0)
        if left <= limit and closed - left >= margin:
            fits.append(zone)
    spans = _spans_clock_change(walls, instrument)
    if len(fits) != 1 or (not spans and (declared is not None or not _metatrader(fits[0]))):
        # Across no clock change a fixed offset or another zone (Asia/Dubai) reads the file
        # alike: the moved clock is named then only as a MetaTrader server's.
        return None
    values: dict[str, object] = {
        "zone": zone_message(fits[0]),
        "name": fits[0],
        "city": zone_message(instrument.timezone),
        "clock": (N_("import.clock.metatrader"), {}) if _metatrader(fits[0]) else "",
    }
    if declared is not None:
        key = N_("import.refuse.zone_shifted")
        # «1 бар попадает», «3 бара попадают», «5 баров»: the sentence agrees with its count.
        values |= {
            "declared": zone_message(declared),
            "bars": words.count(closed),
            "plural_of": closed,
        }
    elif spans:
        key = N_("import.refuse.no_zone_shifted")
    else:  # a fixed offset, or a zone Barb does not try, fits these dates as well
        key = N_("import.refuse.no_zone_shifted_maybe")
    return (key, values)


def _metatrader(zone: str) -> bool:
    """Whether ``zone``'s clock opens the FX week (17:00 New York) at 00:00, as MetaTrader
    brokers' servers keep it: New York time + 7 hours."""
    fx_open = pd.Timestamp("2024-01-07 17:00", tz="America/New_York")
    return on_clock(fx_open, zone).hour == 0 and on_clock(fx_open, zone).minute == 0


def _no_reading(raw: RawBars, instrument: Instrument, step: int) -> Message:
    """Why no candidate zone fits, with where the file's own daily pause is."""
    brk = instrument.maintenance_break
    empty = _empty_window(raw.instants, step)
    if brk is None or empty is None:
        return (N_("import.refuse.no_zone"), {})
    return (
        N_("import.refuse.no_zone_break"),
        {
            "empty": empty,
            "zone": zone_message(instrument.timezone),
            "hours": f"{brk.start}–{brk.end}",
        },
    )


def _empty_window(instants: np.ndarray, step: int) -> str | None:
    """The longest stretch of the day (file's clock) with no bar, as 'HH:MM–HH:MM'."""
    slots = MINUTES_PER_DAY * MINUTE_NS // step
    seen = np.zeros(slots, dtype=bool)
    seen[(instants % DAY_NS) // step] = True
    if seen.all() or not seen.any():
        return None
    # Walk the day twice so a pause over midnight is one stretch.
    twice = np.concatenate((seen, seen))
    best_start, best_len, start = 0, 0, None
    for i, present in enumerate(twice):
        if not present and start is None:
            start = i
        elif present and start is not None:
            if i - start > best_len:
                best_start, best_len = start, i - start
            start = None
    minutes = step // MINUTE_NS

    def clock(slot: int) -> str:
        m = (slot % slots) * minutes
        return f"{m // 60:02d}:{m % 60:02d}"

    return f"{clock(best_start)}–{clock(best_start + best_len)}"


def _break_in(zone: str, instrument: Instrument, raw: RawBars) -> str:
    """Where the instrument's daily break sits on the clock of ``zone``, on the file's first
    day."""
    brk = instrument.maintenance_break
    assert brk is not None
    day = pd.Timestamp(int(raw.instants[0])).normalize()
    start = day + pd.Timedelta(minutes=parse_clock(brk.start))
    end = day + pd.Timedelta(minutes=parse_clock(brk.end))
    shown = [
        on_clock(t.tz_localize(instrument.timezone), zone).strftime("%H:%M") for t in (start, end)
    ]
    return "–".join(shown)


def _contradiction(raw: RawBars, instrument: Instrument, declared: str, found: str) -> Message:
    zones = {"declared": zone_message(declared), "found": zone_message(found), "name": found}
    if instrument.maintenance_break is None:
        return (N_("import.refuse.zone_closed"), zones)
    hours = _break_in(found, instrument, raw)
    return (N_("import.refuse.zone_break"), {**zones, "hours": hours})


def _shows_break(
    walls: _Walls, instrument: Instrument, step: int, reading: tuple[str, Stamp]
) -> bool:
    """Whether, so read, the file has bars in the hour before the daily break and in the
    hour after it: only then does the file show where the break sits. A cash-session file
    was told "the daily break sits at 16:00–17:00 in the file", which has no bar near it."""
    brk = instrument.maintenance_break
    if brk is None:
        return False
    start, end = parse_clock(brk.start), parse_clock(brk.end)
    before = after = False
    for week_minute in walls.week_minutes(reading[0], -step if reading[1] == "close" else 0):
        minute = week_minute % MINUTES_PER_DAY
        before = before or bool(
            (((start - minute) % MINUTES_PER_DAY <= 60) & (minute != start)).any()
        )
        after = after or bool(((minute - end) % MINUTES_PER_DAY < 60).any())
    return before and after


def _note(
    raw: RawBars,
    instrument: Instrument,
    choice: tuple[str, Stamp],
    evidence: bool,
    declared_zone: str | None,
    words: ImportWords = ENGLISH,
    shows_break: bool = True,
) -> str:
    zone, stamp = choice
    stamped = words("import.clock.close_stamps") if stamp == "close" else ""
    if raw.utc:
        return words("import.clock.own_zone", stamped=stamped)
    named = zone_words(zone, words)
    where = (
        words("import.clock.break_at", hours=_break_in(zone, instrument, raw))
        if instrument.maintenance_break is not None and shows_break
        else words("import.clock.no_closed_bars")
    )
    if declared_zone:
        key = N_("import.clock.declared_seen") if evidence else N_("import.clock.declared")
        return words(key, zone=named, where=where, stamped=stamped)
    if not evidence:
        return words("import.clock.assumed", zone=named, stamped=stamped)
    return words("import.clock.read", zone=named, where=where, stamped=stamped)
