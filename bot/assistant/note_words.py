"""The engine's commonest notes in the person's language, for ``/query``.

The engine writes its notes in English, for the model, which retells them in the chat's
language; ``/query`` has no model, and a Russian chat read every note in English under
«Примечания движка (на английском)», even the one nearly every query gets ("No session
given for daily bars: RTH (the default session) used."). The notes that come of the query
itself, whatever the data (the bars or the session taken for it, a limit that cuts a tie,
the CSV holding the first rows) are read back from the engine's fixed wording here and said
through the catalog; any other note keeps its English, under the lead-in that says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from barb.i18n import N_, decimal
from barb.timeframes import resolve_timeframe, timeframe_words
from bot.texts import Language, t


@dataclass(frozen=True)
class _Note:
    """An engine note's wording (``barb.planning``, ``barb.caveats.limits``) and the
    catalog key that says it, with how its parts become the key's values."""

    pattern: re.Pattern[str]
    key: str
    values: Callable[[re.Match[str], Language], dict[str, object]]
    plural: str | None = None  # the part whose number picks the key's plural form


def _bars(name: str, lang: Language) -> str:
    """«дневные бары» for ``daily``: the bars as the chart's scope names them."""
    found = resolve_timeframe(name)
    return timeframe_words(found, lang) if found is not None else name


_NOTES = (
    _Note(
        re.compile(r"No 'from' given: daily bars used\."),
        N_("note.no_from"),
        lambda m, lang: {},
    ),
    _Note(
        re.compile(
            r"No session given for (?P<tf>\S+) bars: (?P<session>\S+) \(the default "
            r"session\) used\."
        ),
        N_("note.default_session"),
        lambda m, lang: {"bars": _bars(m["tf"], lang), "session": m["session"]},
    ),
    _Note(
        re.compile(
            r"No session given for (?P<tf>\S+) bars: ETH \(the whole trading day\) used, not "
            r"the default (?P<default>\S+)\."
        ),
        N_("note.whole_day"),
        lambda m, lang: {"bars": _bars(m["tf"], lang), "default": m["default"]},
    ),
    _Note(
        re.compile(
            r"The number is over (?P<rows>[\d,]+) rows; the CSV holds the first "
            r"(?P<held>[\d,]+) of them\."
        ),
        N_("note.csv_first_rows"),
        lambda m, lang: {
            "rows": decimal(int(m["rows"].replace(",", "")), lang),
            "held": decimal(int(m["held"].replace(",", "")), lang),
        },
        plural="rows",
    ),
    _Note(
        re.compile(
            r"limit (?P<limit>\d+) cuts through a tie: (?P<tied>\d+) rows have (?P<value>.+?)"
            r"(?: \((?P<names>[^()]*)\))?, and (?P<kept>\d+) of them (?:is|are) kept, the first "
            r"in the rows' order; say it is a tie, or raise the limit to (?P<next>\d+)\."
        ),
        N_("note.limit_tie"),
        lambda m, lang: {
            "limit": m["limit"],
            "tied": m["tied"],
            "value": m["value"] + (f" ({m['names']})" if m["names"] else ""),
            "kept": m["kept"],
            "next": m["next"],
        },
        plural="tied",
    ),
)


def note_in_words(note: str, lang: Language) -> str | None:
    """``note`` said in ``lang`` when it is one of the notes the catalog holds (in English
    too: the engine's "say it is a tie" is said to the model, not to a person); None for
    any other."""
    for known in _NOTES:
        found = known.pattern.fullmatch(note)
        if found is None:
            continue
        plural = float(found[known.plural].replace(",", "")) if known.plural else None
        return t(known.key, lang, plural_of=plural, **known.values(found, lang))
    return None
