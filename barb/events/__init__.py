"""Market events (FOMC, NFP, CPI, options expirations, EIA) for the ``join`` step and the model.

The catalog (``catalog.yaml``) says what each event is; its dates come from Barb's own data
files (``data/*.csv``, transcribed from the Federal Reserve and BLS schedules) or from a rule
evaluated on the instrument's exchange calendar. Outside an event's covered range its value is
unknown, never "no event".
"""

from barb.events.catalog import (
    EventSpec,
    concept_key,
    describe_event,
    event_catalog,
    events_for,
    events_reference,
)
from barb.events.join import join_events
from barb.events.names import resolve_event
from barb.events.schedule import event_dates

__all__ = [
    "EventSpec",
    "concept_key",
    "describe_event",
    "event_catalog",
    "event_dates",
    "events_for",
    "events_reference",
    "join_events",
    "resolve_event",
]
