"""What a person calls the columns a join adds to the bars: ``trading_date``, an event's
flag (``cpi``) and its ``<event>_minutes``, in a language other than English; and which
column is such a flag, which a file in that language writes as the chat does («да», «нет»).

A Russian CSV of the bars behind "average volume of the 09:30 bar on CPI days" was headed
«время (ET);открытие;…;объём;диапазон;trading_date;cpi;cpi_minutes»: three engine names
among Russian words, the flag a column of 1s that did not say what 1 means. English keeps
the engine's names, which a script reading the file may know (``barb.export``).
"""

from __future__ import annotations

from barb.events.catalog import event_catalog
from barb.i18n import N_, text
from barb.lineage import Lineage
from barb.result import Result

TRADING_DATE = "trading_date"
MINUTES_SUFFIX = "_minutes"
_TRADING_DATE = N_("joined.trading_date")
_EVENT_DAY = N_("joined.event_day")
_EVENT_MINUTES = N_("joined.event_minutes")


def event_flag(column: str, result: Result) -> bool:
    """Whether ``column`` is the flag an event join added (``cpi``: the bar is on a CPI
    day), not a column of the query's own of that name."""
    return column in event_catalog() and Lineage(result.query).definition(column) is None


def joined_name(column: str, result: Result, lang: str | None) -> str | None:
    """The words for ``column`` when a join added it (the query made no column of that
    name): «торговый день», «день CPI», «минут от выхода CPI»; None for any other."""
    if Lineage(result.query).definition(column) is not None:
        return None  # the query's own column, named as the query wrote it
    if column == TRADING_DATE:
        return text("barb", _TRADING_DATE, lang)
    events = event_catalog()
    if column in events:
        return text("barb", _EVENT_DAY, lang, event=_event_word(column))
    event = column.removesuffix(MINUTES_SUFFIX)
    if column.endswith(MINUTES_SUFFIX) and event in events:
        return text("barb", _EVENT_MINUTES, lang, event=_event_word(event))
    return None


def _event_word(name: str) -> str:
    """An event as traders write it: the release's acronym (CPI, FOMC, NFP), a longer name
    in words (quad witching)."""
    return name.upper() if "_" not in name else name.replace("_", " ")
