"""Groups by another zone's clock, whose hours on the exchange's clock move with daylight saving.

NQ keeps New York's clock, and Moscow keeps no summer time: hour('MSK') is ET + 8 h on the
US winter dates and ET + 7 h in the summer. "In which Moscow hour is NQ's RTH volume highest,
2024-2025" (p39a Q11, 1h bars) put the 09:30 ET bar in group 17 on 179 dates and the 10:30
one there on 338; 16, "the busiest" (72,033), held only the summer dates' 09:30 bar and 0
only the winter dates' 16:30 one, the session's last half hour, listed first, with nothing
said. So too hour('UTC') (Q12) and a then stage's groups by the time('GMT') of each day's
high (Q14: '13:00' only on summer dates).

Said once, in one sentence, for the first group key (of the stage whose groups the answer
lists) that holds another zone's clock: the offsets and their dates, a group holding two of
the exchange's hours with the dates of each, the groups only one offset's dates hold, and
"group_by": "hour()" (or time()) for the exchange's hours, when the offsets other than the
commonest hold ``MIN_SHARE`` of the dates. London's clock differs from New York's by another
hour only in the weeks between the two countries' changes, 20 of 2025's 259 dates, and its groups
stay 92% one hour of the exchange's: not said (p39a Q32). A group of the session's hours
after that clock's midnight listed first is said too: of the exchange's own clock the
reference says it (TIME OF DAY AS A NUMBER), and a min or mean of such a clock is
``zone_midnight``'s. A session written on a zone's clock opens at its own start there: the
groups of '02:00-04:00 MSK' had been said to list 2 "after midnight", its 02:00 read as ET.

Cost: the rows' distinct (group, date) pairs, one tz-database offset per date.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from barb.caveats.then_history import day_key
from barb.caveats.zone_midnight import Reading, group_clocks
from barb.caveats.zones import window_stamps
from barb.instruments import MINUTES_PER_DAY, format_clock
from barb.planning import Plan
from barb.short_days import window_edges
from barb.stage_output import StageOutput
from barb.summary_text import listed_text, value_text
from barb.time_keys import minutes_of_day
from barb.time_zones import short_name, zone_name, zone_shifts

# Said when the offsets other than the commonest hold this share of the rows' dates.
MIN_SHARE = 0.1
# A session at most this long (minutes) leaves its hours after that clock's midnight half
# a day from the others in the key order (RTH on Moscow's: 0, then 16-23): its order is
# said. ETH's 23 hours are that clock's whole day, listed in its order as a trader there
# reads it.
MAX_PART_DAY = 12 * 60
# Groups named as held by one offset's dates alone; more are counted.
NAMED_GROUPS = 2


def zone_group_caveat(plan: Plan, first: StageOutput, then: StageOutput | None) -> list[str]:
    """The sentence for a grouping by another zone's clock whose offset from the exchange's
    changes over the rows' dates ("hour('MSK') is ET + 8 h on 179 of the rows' 517 dates
    …"), or whose group of the hours after that clock's midnight is listed first."""
    if not plan.timeframe.intraday or (plan.then is None) != (then is None):
        return []
    clocks = group_clocks(plan)
    if not clocks:
        return []
    output = then if then is not None else first
    rows = output.kept
    if plan.then is None:
        dates_column: str | None = "trading_date"
    else:
        dates_column = day_key(plan.first)  # a then stage's rows are days
    if rows is None or not len(rows) or dates_column is None or output.table is None:
        return []
    name, written, held = clocks[0]
    zone = zone_name(held.zone)
    if zone is None or name not in rows.columns:
        return []
    days = _group_days(plan, name, held, rows[name], rows[dates_column].to_numpy(), zone)
    if days is None:
        return []
    # Named as written when the key is the call itself, else by its column (high_gmt).
    label = written.to_text() if written == held.call else name
    sentence = _Groups(plan, name, label, held, days, output.table)
    return [text] if (text := sentence.text()) else []


def _group_days(
    plan: Plan, name: str, held: Reading, keys: pd.Series, dates: np.ndarray, zone: str
) -> pd.DataFrame | None:
    """Each group's dates, once each (a group of 1m bars holds 60 a date), with the key,
    its minute of that zone's day (an hour's first) and the zone's offset on the date:
    NQ's 228k RTH minute bars of 2024-2025 are 4,653 such (hour('UTC'), date) pairs."""
    key_codes, key_values = pd.factorize(keys, sort=False)
    minutes = _key_minutes(plan, name, held, pd.Series(key_values, name=name))
    if minutes is None:
        return None
    day_codes, day_values = _date_codes(dates.astype("datetime64[D]"))
    shifts, opens = _opens(plan, day_values, zone)
    known = key_codes >= 0
    pairs = np.unique(key_codes[known].astype(np.int64) * len(day_values) + day_codes[known])
    key_at, day_at = np.divmod(pairs, len(day_values))
    days = pd.DataFrame(
        {
            "key": np.asarray(key_values)[key_at],
            "minute": minutes[key_at],
            "date": day_values[day_at],
            "shift": shifts[day_at],
            "open": opens[day_at],
        }
    )
    return days[~np.isnan(days["minute"].to_numpy(dtype="float64"))]


def _date_codes(dates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's date among the distinct dates, and those: bars and day rows come in time
    order, read as runs (np.unique would sort 228k dates)."""
    days = dates.view(np.int64)  # comparisons of integers: a tenth of the time
    if len(days) > 1 and bool((days[1:] >= days[:-1]).all()):
        starts = np.concatenate(([True], days[1:] != days[:-1]))
        return np.cumsum(starts) - 1, dates[starts]
    values, codes = np.unique(dates, return_inverse=True)
    return codes, values


def _key_minutes(plan: Plan, name: str, held: Reading, keys: pd.Series) -> np.ndarray | None:
    """Each key as minutes of that zone's day (an hour's first minute)."""
    if held.scale in (1, 60) and not held.text:
        return pd.to_numeric(keys, errors="coerce").to_numpy(dtype="float64") * held.scale
    return minutes_of_day(name, keys, plan.query.to_json())


def _opens(plan: Plan, dates: np.ndarray, zone: str) -> tuple[np.ndarray, np.ndarray]:
    """The minutes ``zone`` is ahead of the exchange at the session's open on each date,
    and that open on the zone's clock: a window on a zone's clock opens where that date put
    it ('02:00-04:00 MSK' is 18:00 ET or 19:00, the trading day's first hour, not 02:00 ET)."""
    instrument = plan.dataset.instrument
    spec = instrument.session(plan.session)
    day_start = (dates - np.timedelta64(1, "D")).astype("datetime64[m]")
    day_start += np.timedelta64(instrument.trading_day_start_minute, "m")
    if spec.zone is None:
        start, _ = window_edges(plan.dataset, plan.session)
        opened = day_start + np.timedelta64(start, "m")
    else:
        _, opened, _ = window_stamps(instrument, spec, dates)
    shifts = zone_shifts(opened, instrument.timezone, zone)
    minutes = (opened - opened.astype("datetime64[D]")) // np.timedelta64(1, "m")
    return shifts, (minutes.astype(np.int64) + shifts) % MINUTES_PER_DAY


class _Groups:
    """The groups of one zone clock key, with each one's dates per offset."""

    def __init__(
        self,
        plan: Plan,
        name: str,
        label: str,
        held: Reading,
        days: pd.DataFrame,
        table: pd.DataFrame,
    ) -> None:
        self.plan, self.name, self.label, self.held, self.table = plan, name, label, held, table
        self.days = days  # each group's dates, once each, with the offset on them
        self.offsets = Counter(
            days.drop_duplicates("date")["shift"].astype(int).tolist()
        ).most_common()
        self.home = short_name(plan.dataset.instrument.timezone)

    def text(self) -> str:
        said = self._mixed() if self._changes() else ""
        first = self._first_after_midnight()
        if not said and not first:
            return ""
        call, form = self.label, self._form()
        two = " and " in form  # hour() and minute()
        if not said:
            return (
                f"{call} groups list {first} first, though the session reaches it after that "
                f"clock's midnight; {form} {'list' if two else 'lists'} the exchange's hours "
                "in the session's order."
            )
        after = (
            f" ({first} listed first, though the session reaches it after midnight there)"
            if first
            else ""
        )
        return (
            f"{said}{after}; {form} {'read' if two else 'reads'} the exchange's clock, if the "
            "question is of its session."
        )

    def _form(self) -> str:
        """The exchange's clock in place of the zone's: 'hour() in place of hour('MSK')',
        'hour() and minute() in place of hour('MSK') and minute('MSK')'."""
        if self.held.text or self._hours:
            own = "time()" if self.held.text else "hour()"
            return f"{own} in place of {self.held.call.to_text()}"
        zone = self.held.call.args[0].to_text()
        return f"hour() and minute() in place of hour({zone}) and minute({zone})"

    @property
    def _hours(self) -> bool:
        """Whether the key is an hour (hour('MSK')), not a minute or 'HH:MM'."""
        return self.held.scale == 60 and not self.held.text

    def _changes(self) -> bool:
        """Whether the dates off the commonest offset are ``MIN_SHARE`` of them: all
        together, not the rarest alone. Moscow over 2008-2026 is ET + 8 h on most dates,
        + 7 on 1,900 and + 9 on 300 (2011-2014's winters), and the rarest's 6% had kept
        "its groups mix ET hours" from the question asked over all the data."""
        if len(self.offsets) < 2:
            return False
        total = sum(count for _, count in self.offsets)
        return total - self.offsets[0][1] >= MIN_SHARE * total

    def _mixed(self) -> str:
        """'MSK is ET + 7 h on 338 of the 517 dates and ET + 8 h on the other 179, so
        hour('MSK')'s groups mix ET hours: 17 is hour 10 ET on 338 dates and hour 9 ET on
        179; 0 holds hour 16 ET on 169 dates only and 16 hour 9 ET on 338 only'."""
        total = sum(count for _, count in self.offsets)
        spans = [f"{self.home} {_offset(shift)} on {count:,}" for shift, count in self.offsets]
        spans[0] += f" of the {total:,} dates"
        if len(spans) == 2:
            spans[1] = spans[1].replace(" on ", " on the other ", 1)
        per: dict[object, dict[int, int]] = {}
        counted = self.days.groupby(["key", "shift"], sort=False).size()
        for (key, shift), count in counted.items():
            per.setdefault(key, {})[int(shift)] = int(count)
        minute = self.days.drop_duplicates("key").set_index("key")["minute"]
        listed = [key for key in self.table[self.name].tolist() if key in per]
        call = self.label
        said = f"{self.held.zone} is {listed_text(spans)}, so {call}'s groups mix {self.home} hours"
        two = next((key for key in listed if len(per[key]) > 1), None)
        if two is not None:
            held = [
                f"{self._exchange(minute[two], shift)} on {per[two][shift]:,}"
                for shift, _ in self.offsets
                if shift in per[two]
            ]
            held[0] += " dates"
            said += f": {_key(two)} is {listed_text(held)}"
        alone = [key for key in listed if len(per[key]) == 1]
        if alone:
            named = []
            for key in alone[:NAMED_GROUPS]:
                ((shift, count),) = per[key].items()
                dates = "" if named else " dates"
                verb = "" if named else "holds "
                held_at = self._exchange(minute[key], shift)
                named.append(f"{_key(key)} {verb}{held_at} on {count:,}{dates} only")
            more = len(alone) - NAMED_GROUPS
            said += "; " + listed_text(named + ([f"{more} more"] if more > 0 else []))
        return said

    def _exchange(self, minute: float, shift: int) -> str:
        """The exchange's clock of a key's minute on the dates of ``shift``: 'hour 9 ET',
        '09:00 ET'."""
        at = int(minute - shift) % MINUTES_PER_DAY
        if self._hours:
            return f"hour {at // 60} {self.home}"
        return f"{format_clock(at)} {self.home}"

    def _first_after_midnight(self) -> str:
        """The group listed first when it holds the session's hours after that clock's
        midnight (by key order, not a sort): '0'; else ''."""
        stage = self.plan.then or self.plan.first
        length = self.plan.dataset.instrument.session(self.plan.session).length_minutes
        if stage.sort or not len(self.table) or length > MAX_PART_DAY:
            return ""
        key = self.table[self.name].iloc[0]
        rows = self.days[self.days["key"] == key]
        if not len(rows):
            return ""
        width = 60 if self._hours else 1
        if not bool((rows["minute"].to_numpy() + width <= rows["open"].to_numpy()).all()):
            return ""
        return _key(key)


def _key(value: object) -> str:
    """A group key as the table lists it, a time of day quoted: 17, '13:00'."""
    return f"'{value}'" if isinstance(value, str) else value_text(value)


def _offset(shift: int) -> str:
    """'+ 8 h', '- 3 h', '+ 5 h 30 min'."""
    sign = "+" if shift >= 0 else "-"
    hours, minutes = divmod(abs(shift), 60)
    return f"{sign} {hours} h" + (f" {minutes} min" if minutes else "")
