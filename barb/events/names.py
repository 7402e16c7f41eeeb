"""Which event a name means, where the model wrote one Barb does not have: in ``join``, or as
a column that no join made.

A name may be an event's own (``fomc``), an alias or a first word of one (``fed_meeting``,
``fomc meeting``, ``quad``), a misspelling (``fmoc``), or the ``<event>_minutes`` column that
a join adds on intraday bars (``fomc_minutes``, misspelt ``fomc_minutez``), which a model
also reads as the FOMC minutes, a later release Barb has no dates for. Each error names the
fix in one error: "ecb_meeting" in where was told to add it by map as "high - low", and
"join": "fomc_minutes" to take 'fomc', the statement days, three weeks before the minutes
(p34c C1).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from barb.errors import UnknownEvent, available, closest_names, one_closest_name, sorted_names
from barb.events.catalog import (
    EventSpec,
    concept_key,
    event_catalog,
    events_for,
    joined_from_elsewhere,
)
from barb.instruments import Instrument

# A first word this long that starts exactly one event's name is that event: quad.
_SHORTEST_PREFIX = 3
# How alike a name must be to an event's to be listed before the others.
_ALIKE = 0.6
# Events traders ask about that Barb has no dates for, by a name's first word: "opec" was
# taken for opex (options expiration) and "answered" with expiry days (p37a #8).
_NO_DATES = {
    "opec": "OPEC meeting",
    "ecb": "ECB meeting",
    "boj": "Bank of Japan meeting",
    "boe": "Bank of England meeting",
    "earnings": "company earnings",
    "gdp": "GDP release",
    "ppi": "PPI release",
    "pce": "PCE release",
    "jobless": "jobless claims",
    "ism": "ISM release",
    "опек": "OPEC meeting",
    "ецб": "ECB meeting",
}


def resolve_event(name: str, instrument: Instrument, *, step: str = "join") -> EventSpec:
    """The event called ``name`` for this instrument, or one error naming the fix and the
    events that exist."""
    by_name = {spec.name: spec for spec in events_for(instrument)}
    key = name.strip().lower()
    if key in by_name:
        return by_name[key]
    names = sorted_names(by_name)
    catalog = event_catalog()
    missing = no_dates_hint(key, by_name, instrument.symbol)
    if missing is not None:
        raise UnknownEvent(
            f"Barb has no {_NO_DATES[_first_word(key)]} dates. {instrument.symbol}'s events: "
            f"{available(names)}.",
            step=step,
            hint=missing,
            details={"event": name, "available": names},
        )
    # An event of the catalog that this instrument does not list (eia on ES) is not a typo.
    problem = "is not available for" if key in catalog else "does not exist for"
    message = f"Event '{name}' {problem} {instrument.symbol}. Available: {available(names)}"
    minutes = minutes_event(key, by_name)
    guess = guess_event(key, names) if minutes is None and key not in catalog else None
    message += f"; did you mean '{guess}'?" if guess else "."
    if minutes is not None:
        hint = minutes_hint(minutes)
    elif guess is not None:
        hint = f"Did you mean '{guess}'?"
    elif key in catalog:
        hint = joined_from_elsewhere(catalog[key], instrument)
    else:
        hint = events_hint(key, by_name, instrument.symbol)
    raise UnknownEvent(message, step=step, hint=hint, details={"event": name, "available": names})


def no_dates_hint(name: str, events: Mapping[str, EventSpec], symbol: str) -> str | None:
    """For an event Barb has no dates for (OPEC meetings, the ECB…), that it has none and
    which events it has, so no other event's days stand in for it; None for other names.

    >>> no_dates_hint("opec_meeting", {}, "CL").split(",")[0]
    'Barb has no OPEC meeting dates'
    """
    what = _NO_DATES.get(_first_word(name))
    if what is None or name in event_catalog():
        return None
    listed = ", ".join(f"{n} ({events[n].title})" for n in events)
    return (
        f"Barb has no {what} dates, so no query can mark those days; say so. {symbol}'s "
        f"calendar holds only {listed}."
    )


def _first_word(name: str) -> str:
    words = concept_key(name).split()
    return words[0] if words else ""


def spelled_event(name: str, names: Collection[str]) -> str | None:
    """The event among ``names`` that ``name`` spells another way: an alias or the title
    (``fed meeting``, ``payrolls``), the event's name as its first word (``fomc_day``,
    ``cpi release``), or a first word only that event starts with (``quad``)."""
    catalog = event_catalog()
    words = concept_key(name)
    spelled = [
        n
        for n in names
        if words in {concept_key(a) for a in (*catalog[n].aliases, catalog[n].title)}
    ]
    if len(spelled) == 1:
        return spelled[0]
    first = words.split()[0] if words else ""
    if first in names:
        return first
    starting = [n for n in names if len(first) >= _SHORTEST_PREFIX and n.startswith(first)]
    return starting[0] if len(starting) == 1 else None


def guess_event(name: str, names: Collection[str]) -> str | None:
    """``spelled_event``, else the one clearly closest name (``fmoc``, ``fomx``: fomc).

    >>> guess_event("fomc meeting", ["cpi", "fomc", "nfp"]), guess_event("ecb", ["fomc"])
    ('fomc', None)
    """
    return spelled_event(name, names) or one_closest_name(name.lower(), names)


def minutes_event(name: str, events: Mapping[str, EventSpec]) -> EventSpec | None:
    """The event whose ``<event>_minutes`` column ``name`` is or misspells (fomc_minutes,
    fomc_minutez, fed_mins), among ``events``; None for any other name."""
    words = name.strip().lower().replace(" ", "_").split("_")
    if len(words) < 2 or not words[-1].startswith("min"):
        return None
    event = guess_event("_".join(words[:-1]), list(events))
    return events[event] if event is not None else None


def minutes_hint(spec: EventSpec) -> str:
    """What ``<event>_minutes`` is, and where it exists; for fomc, that the minutes of the
    meeting are not it."""
    column = f"{spec.name}_minutes"
    hint = (
        f'{column} is the column "join": "{spec.name}" adds on intraday bars only ("from": '
        f'"1m"): minutes from the {spec.name} release to the bar open'
    )
    return hint + _no_minutes_release(spec)


def minutes_compare_hint(text: str) -> str | None:
    """For ``text``, a joined ``<event>_minutes`` column read as true/false ("where":
    "fomc_minutes"), how to compare it; None for any other text."""
    column = text.strip().lower()
    spec = event_catalog().get(column.removesuffix("_minutes"))
    if spec is None or not column.endswith("_minutes"):
        return None
    return (
        f"{column} counts minutes from the {spec.name} release to the bar open: compare it, "
        f"e.g. '{spec.name} and {column} >= 0 and {column} < 60'" + _no_minutes_release(spec)
    )


def _no_minutes_release(spec: EventSpec) -> str:
    if spec.minutes_release is None:
        return ""
    return f"; Barb's calendar has no {spec.minutes_release}"


def events_hint(name: str, events: Mapping[str, EventSpec], symbol: str) -> str:
    """The events there are, the closest to ``name`` first, for a name that is none of them.

    >>> print(events_hint("ecb", {"fomc": event_catalog()["fomc"]}, "NQ"))
    NQ's calendar holds only fomc (FOMC Rate Decision): Barb has no dates for 'ecb'.
    """
    listed = ", ".join(f"{n} ({events[n].title})" for n in _ranked(name, events))
    return f"{symbol}'s calendar holds only {listed}: Barb has no dates for '{name}'."


def event_column_hint(
    name: str, columns: Collection[str], instrument: Instrument | None
) -> str | None:
    """The fix for ``name`` read as a column that does not exist, when it is an event's name
    or its ``<event>_minutes`` column's; None otherwise."""
    catalog = event_catalog()
    events = _events(instrument)
    key = name.lower()
    symbol = instrument.symbol if instrument is not None else "Barb"
    missing = no_dates_hint(key, events, symbol)
    if missing is not None:  # where "opec": not 'open', not opex
        return missing
    if key in catalog:  # where "fomc" without the join that adds it
        if key not in events:
            assert instrument is not None
            return joined_from_elsewhere(catalog[key], instrument)
        return (
            f'{key} is an event: add "join": "{key}" to get its true/false column, or '
            f'"join": {{"source": "{key}", "filter": "only"}} to keep only its days'
        )
    minutes = minutes_event(key, events)
    if minutes is None:
        return None
    if f"{minutes.name}_minutes" in columns:  # joined on intraday bars: a misspelling
        return f"did you mean '{minutes.name}_minutes'?"
    return minutes_hint(minutes)


def event_guess_hint(
    name: str, columns: Collection[str], instrument: Instrument | None, *, condition: bool
) -> str | None:
    """The join for ``name``, a column that does not exist, when it spells an event another
    way (fed_meeting, fomc_day) or, standing alone as true/false (``condition``: "where":
    "fmoc"), misspells one; None otherwise."""
    events = _events(instrument)
    key = name.lower()
    # A close spelling alone is a guess only for a true/false name: fomx > 0 is no event.
    guess = guess_event(key, events) if condition else spelled_event(key, events)
    if guess is None:
        return None
    if guess in columns:
        return f"did you mean '{guess}'?"
    return (
        f'for {events[guess].title} days add "join": "{guess}", whose true/false column is {guess}'
    )


def flag_hint(name: str, instrument: Instrument | None) -> str:
    """For a true/false name that is no column and no event's ("where": "ecb_meeting"): the
    events there are, and the map entry that makes a flag of one's own."""
    events = _events(instrument)
    ranked = _ranked(name.lower(), events)
    make = f'make the flag in map first, e.g. map: {{"{name}": "close > open"}}'
    if not ranked:
        return make
    symbol = f"{instrument.symbol}'s" if instrument is not None else "Barb's"
    return (
        f"{name} is neither a column nor one of {symbol} events ({', '.join(ranked)}): join "
        f'one, e.g. "join": "{ranked[0]}", or {make}'
    )


def _events(instrument: Instrument | None) -> dict[str, EventSpec]:
    """The events ``instrument`` lists, by name; the whole catalog's without one."""
    if instrument is None:
        return event_catalog()
    return {spec.name: spec for spec in events_for(instrument)}


def _ranked(name: str, events: Mapping[str, EventSpec]) -> list[str]:
    """The events' names, those like ``name`` first (closest first), the others in the
    instrument's order (fomc, nfp, cpi…): a likeness far below a did-you-mean orders
    nothing."""
    close = closest_names(name, events, n=len(events), cutoff=_ALIKE)
    return [*close, *(n for n in events if n not in close)]
