"""The event catalog (``catalog.yaml``): what each event is, when it happens, which dates are known.

The model's event list, the concept lookup and the names ``join`` accepts all come from here,
so they cannot drift apart.
"""

from __future__ import annotations

import datetime as dt
import difflib
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from barb.errors import DataError, UnknownEvent, available, sorted_names
from barb.events.data_files import load_event_file
from barb.events.rules import RULE_COVERAGE
from barb.instruments import Instrument, available_instruments, load_instrument, parse_clock
from barb.yaml_text import load_yaml

CATALOG_PATH = Path(__file__).resolve().parent / "catalog.yaml"

Category = Literal["macro", "options", "energy"]
Impact = Literal["high", "medium"]
Rule = Literal["opex", "quad_witching", "eia"]


class DateSource(BaseModel):
    """Where an event's dates come from: exactly one of a data file or a rule."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str | None = None
    rule: Rule | None = None
    source: str

    @model_validator(mode="after")
    def _one_of(self) -> DateSource:
        if (self.file is None) == (self.rule is None):
            raise ValueError("give exactly one of 'file' or 'rule'")
        return self


class CatalogEntry(BaseModel):
    """One event as written in catalog.yaml."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    category: Category
    impact: Impact
    time: str
    time_note: str | None = None
    other_times: str | None = None
    aliases: tuple[str, ...] = ()
    description: str
    markets: tuple[str, ...] = ()
    elsewhere: str | None = None
    minutes_release: str | None = None
    dates: DateSource

    @model_validator(mode="after")
    def _elsewhere_needs_markets(self) -> CatalogEntry:
        if self.elsewhere is not None and not self.markets:
            raise ValueError("'elsewhere' says what the event is outside its markets: list them")
        return self

    @field_validator("time")
    @classmethod
    def _clock(cls, value: str) -> str:
        parse_clock(value)
        return value


class EventSpec(BaseModel):
    """An event as the rest of Barb sees it, with the range of dates Barb knows."""

    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    category: Category
    impact: Impact
    time: str = Field(description="usual release time, HH:MM US Eastern")
    time_note: str | None = None
    # The usual days it comes at another time, in a few words for the model's event list.
    other_times: str | None = None
    description: str
    source: str = Field(description="how the dates are obtained")
    kind: Literal["file", "rule"]
    file: str | None = None
    rule: Rule | None = None
    aliases: tuple[str, ...] = ()
    # The instruments whose own market the event is (none: every market's), and what another
    # instrument that lists it should know (opex is the stock market's, not CL's expiry).
    markets: tuple[str, ...] = ()
    elsewhere: str | None = None
    # The event's own minutes, a later release Barb has no dates for ("FOMC minutes"), which
    # the column <event>_minutes (minutes from the release) is mistaken for.
    minutes_release: str | None = None
    # Outside [coverage_start, coverage_end] the event is unknown, not absent.
    coverage_start: dt.date
    coverage_end: dt.date

    @property
    def coverage(self) -> str:
        return f"{self.coverage_start.isoformat()}..{self.coverage_end.isoformat()}"

    def headline(self) -> str:
        return f"{self.name} — {self.title} ({self.category}, {self.impact} impact)"

    def note_for(self, instrument: Instrument) -> str | None:
        """What ``instrument`` should know when the event is another market's."""
        if self.elsewhere is None or instrument.symbol in self.markets:
            return None
        return f"For {instrument.symbol}: {self.elsewhere}"


def _spec(name: str, entry: CatalogEntry) -> EventSpec:
    if entry.dates.file is not None:
        data = load_event_file(entry.dates.file)
        start, end = data.coverage_start, data.coverage_end
    else:
        start, end = RULE_COVERAGE
    return EventSpec(
        name=name,
        title=entry.title,
        category=entry.category,
        impact=entry.impact,
        time=entry.time,
        time_note=entry.time_note,
        other_times=entry.other_times,
        description=" ".join(entry.description.split()),
        source=" ".join(entry.dates.source.split()),
        kind="file" if entry.dates.file is not None else "rule",
        file=entry.dates.file,
        rule=entry.dates.rule,
        aliases=entry.aliases,
        markets=entry.markets,
        elsewhere=" ".join(entry.elsewhere.split()) if entry.elsewhere else None,
        minutes_release=entry.minutes_release,
        coverage_start=start,
        coverage_end=end,
    )


def event_catalog() -> dict[str, EventSpec]:
    """Every event Barb knows, by name, in catalog order."""
    # A fresh dict over the cached, frozen specs: a caller cannot change the catalog.
    return dict(_load_catalog())


@cache
def _load_catalog() -> dict[str, EventSpec]:
    with CATALOG_PATH.open(encoding="utf-8") as fh:
        raw = load_yaml(fh)
    if not isinstance(raw, dict):
        raise DataError("the catalog must map event names to entries", path=str(CATALOG_PATH))
    specs: dict[str, EventSpec] = {}
    for name, body in raw.items():
        try:
            entry = CatalogEntry.model_validate(body)
        except ValidationError as exc:
            raise DataError(f"event {name!r}: {exc}", path=str(CATALOG_PATH)) from exc
        specs[str(name)] = _spec(str(name), entry)
    return specs


def events_for(instrument: Instrument) -> list[EventSpec]:
    """The events an instrument lists in its YAML, in that order."""
    catalog = event_catalog()
    unknown = [name for name in instrument.events if name not in catalog]
    if unknown:
        # A configuration mistake, for the developer: name the file to fix and what exists.
        raise DataError(
            f"instrument {instrument.symbol} lists unknown event(s) {', '.join(unknown)} under "
            f"'events'; the catalog ({CATALOG_PATH.name}) has: {', '.join(catalog)}"
        )
    return [catalog[name] for name in instrument.events]


def concept_key(text: str) -> str:
    """One spelling for a name however it is written: "Non-Farm  Payrolls" and
    "non_farm_payrolls" both become "non farm payrolls", "Расчётная" is "расчетная"."""
    return " ".join(text.lower().replace("_", " ").replace("-", " ").replace("ё", "е").split())


def _lookup(name: str) -> EventSpec | None:
    key = name.strip().lower()
    catalog = event_catalog()
    if key in catalog:
        return catalog[key]
    words = concept_key(name)
    for spec in catalog.values():
        spellings = {concept_key(a) for a in spec.aliases} | {concept_key(spec.title)}
        if words in spellings or words == concept_key(spec.name):
            return spec
    return None


def joined_from_elsewhere(spec: EventSpec, instrument: Instrument) -> str:
    """How to read ``instrument`` on the days of an event it does not list (NQ on EIA days):
    run the query on an instrument that lists it and join ``instrument``."""
    symbol = instrument.symbol
    owners = [s for s in available_instruments() if spec.name in load_instrument(s).events]
    if not owners:
        return f"'{spec.name}' is configured for no instrument."
    hours = instrument.sessions[instrument.default_session].hours
    prefix = symbol.lower()
    query = (
        f'{{"instrument": "{owners[0]}", "session": "{hours}", "from": "daily", "join": '
        f'["{spec.name}", {{"instrument": "{symbol}"}}], "where": "{spec.name}", '
        f'"select": "mean({prefix}_high - {prefix}_low)"}}'
    )
    return (
        f"'{spec.name}' is {'/'.join(owners)}'s event and cannot be joined on {symbol}. For "
        f"{symbol} on {spec.name} days, run the query on {owners[0]} and join {symbol}: "
        f"{query} ({prefix}_open … {prefix}_close are {symbol}'s bars; the window "
        f"'{hours}', {symbol}'s {instrument.default_session}, gives both the same clock hours)."
    )


def describe_event(name: str, instrument: Instrument | None = None) -> str:
    """Concept lookup: what an event is, when it is released, and which dates Barb knows;
    for ``instrument``, whether it is its own market's event and how to join it."""
    spec = _lookup(name)
    if spec is None:
        names = sorted_names(event_catalog())
        guesses = difflib.get_close_matches(name.strip().lower(), names, n=1, cutoff=0.5)
        raise UnknownEvent(
            f"Event '{name}' is not in Barb's catalog. Known events: {available(names)}.",
            step="events",
            hint=f"Did you mean '{guesses[0]}'?" if guesses else None,
            details={"event": name, "available": names},
        )
    lines = [
        spec.headline(),
        f"Time: {spec.time} ET." + (f" {spec.time_note}" if spec.time_note else ""),
        spec.description,
        f"Dates: {spec.source}",
        f"Covered: {spec.coverage}. Outside that range Barb does not know the dates: "
        "join gives null (unknown), not false.",
    ]
    if spec.minutes_release:
        lines.append(f"Not in Barb's calendar: the {spec.minutes_release}.")
    note = spec.note_for(instrument) if instrument is not None else None
    if note is not None:
        lines.append(note)
    if instrument is not None and spec.name not in instrument.events:
        lines.append(joined_from_elsewhere(spec, instrument))
    else:
        lines.append(
            f'Use: "join": {{"source": "{spec.name}"}} adds the column {spec.name} '
            f"(and {spec.name}_minutes on intraday bars)."
        )
    return "\n".join(lines)


def events_reference(instrument: Instrument) -> str:
    """The compact event list the model reads (get_events), with covered ranges and join columns."""
    specs = events_for(instrument)
    lines = [f"EVENTS for {instrument.symbol} (use with join; times are US Eastern):"]
    for spec in specs:
        varies = f" ({spec.other_times})" if spec.other_times else ""
        lines.append(f"- {spec.headline()}, {spec.time} ET{varies}, dates known {spec.coverage}")
        note = spec.note_for(instrument)
        if note is not None:
            lines.append(f"  {note}")
    main, whole = instrument.default_session, instrument.full_session
    hours = instrument.sessions[main].hours
    if specs:
        example = specs[0].name
        lines += [
            f'join: "join": {{"source": "{example}"}} adds a column named after the event:',
            "  true on event days, false on other days inside the known range,",
            "  null outside it (unknown, not 'no event'). Weekly+ bars: true if any day in the",
            "  bar is an event day. A release outside trading hours counts for the next",
            "  trading day's bars.",
            f"  A bar holds the release only inside its session's hours ({main} is {hours}):",
            f"  for event days' ranges use a session that holds it ({whole}, the whole day).",
            f"Intraday bars also get {example}_minutes: minutes from the release to the bar open",
            "  (negative before, 0 for the bar opening at the release; null on other days).",
            f'  Hour after the release, on 1m bars: "where": "{example} and '
            f'{example}_minutes >= 0 and {example}_minutes < 60" (on longer bars a release '
            "inside a bar starts the count at the next bar); or a window session from the "
            'release time, e.g. "session": "08:30-09:30" on daily bars, only when every '
            "release in the period came at that time (the 1m form follows each release).",
            "Details of one event (what it is, typical effect, times by era): concept lookup.",
        ]
    else:
        lines.append("(none configured for this instrument)")
    return "\n".join(lines)
