"""An engine note as a value: a catalog key and its values, said in any language.

The engine's notes (its warnings) are sentences the model reads in English and retells in
the chat's language. ``/query`` has no model: it showed a Russian chat most notes in
English, and read the few it could say back from their wording by regex, which a reworded
note silently escaped. A note built here is a ``str`` (its English, byte for byte what the
model reads, so every list of warnings, the summary and the JSON stay as they were) that
also keeps its catalog key and values, so the same note is said in Russian through the
``barb`` catalog. The answer's JSON carries the keys and values beside the texts
(``Metadata.notes``), as a worker's answer reaches the bot only as JSON.

A note's English is its ``en`` msgstr, the model's words; a kind whose words tell the model
what to do ("say it is a tie") names another key that says it to a person (``person``).
Values are JSON scalars: an ``int`` is written as the language writes a count (``50,000``,
``50 000``), any other value as it is (a date as ISO, as the chat shows it); a kind may
derive more values for a language (``daily`` bars → «дневные бары»).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, WrapValidator

from barb.i18n import DEFAULT, N_, decimal, text
from barb.timeframes import timeframe, timeframe_words

Value = str | int | float | None
Values = Mapping[str, Value]


@dataclass(frozen=True)
class Kind:
    """One kind of note: its catalog key (``barb`` domain), the value whose number picks
    the text's plural form, the key that says it to a person when the model's words do
    not suit one, and the values derived for a language."""

    key: str
    plural: str | None = None
    person: str | None = None
    derived: Callable[[Values, str], dict[str, str]] = field(default=lambda values, lang: {})

    def __post_init__(self) -> None:
        KINDS[self.key] = self  # how a note read from an answer's JSON finds its kind


#: Every kind of note by its key.
KINDS: dict[str, Kind] = {}


def _bars(values: Values, lang: str) -> dict[str, str]:
    """«дневные бары» for ``daily``: the bars as the plan names them."""
    return {"bars": timeframe_words(timeframe(str(values["timeframe"])), lang)}


NO_FROM = Kind(N_("note.no_from"))
# The model reads the timeframe's name ("1h bars"), a person the plan's words ("1-hour bars").
DEFAULT_SESSION = Kind(
    N_("note.default_session"), person=N_("note.default_session.person"), derived=_bars
)
WHOLE_DAY = Kind(N_("note.whole_day"), person=N_("note.whole_day.person"), derived=_bars)
CSV_FIRST_ROWS = Kind(N_("note.csv_first_rows"), plural="rows")
# Its counts as the engine wrote them, ungrouped (``limit 1000``).
LIMIT_TIE = Kind(N_("note.limit_tie"), plural="kept", person=N_("note.limit_tie.person"))
NO_BARS = Kind(N_("note.no_bars"))
# Its counts as the engine wrote them, ungrouped ("The table has 410415 rows").
TABLE_FIRST_ROWS = Kind(N_("note.table_first_rows"), plural="rows")

# A week, month, quarter or year in words that agree with it, by unit: «Неделя … ещё не
# закончилась», «Год … ещё не закончился».
_UNIT_WORDS = {
    "week": {
        "open": N_("note.unit.open.week"),
        "wholes": N_("note.unit.wholes.week"),
        "so_far": N_("note.unit.so_far.week"),
        "word": N_("note.unit.word.week"),
    },
    "month": {
        "open": N_("note.unit.open.month"),
        "wholes": N_("note.unit.wholes.month"),
        "so_far": N_("note.unit.so_far.month"),
        "word": N_("note.unit.word.month"),
    },
    "quarter": {
        "open": N_("note.unit.open.quarter"),
        "wholes": N_("note.unit.wholes.quarter"),
        "so_far": N_("note.unit.so_far.quarter"),
        "word": N_("note.unit.word.quarter"),
    },
    "year": {
        "open": N_("note.unit.open.year"),
        "wholes": N_("note.unit.wholes.year"),
        "so_far": N_("note.unit.so_far.year"),
        "word": N_("note.unit.word.year"),
    },
}
_NEXT_EMPTY = N_("note.open_left_out.ahead")


def _open_unit(values: Values, lang: str) -> dict[str, str]:
    """The unfinished week's words, and what next() reads at the last whole one."""
    keys = _UNIT_WORDS[str(values["unit"])]
    said = {part: text("barb", key, lang, label=values["label"]) for part, key in keys.items()}
    ahead = values.get("ahead")
    said["next_empty"] = (
        text("barb", _NEXT_EMPTY, lang, label=ahead, unit_word=said["word"]) if ahead else ""
    )
    return said


# "The week 2026-01-05 is not over yet (the data covers only …): left out, …".
OPEN_LEFT_OUT = Kind(N_("note.open_left_out"), derived=_open_unit)


# A week, month, quarter or year cut by the data's start or end, in words that agree with
# it: «Неделя … началась раньше данных», «в баре этой недели», «за весь год».
_GROUP_WORDS = {
    "week": {
        "began": N_("note.unit.began.week"),
        "its_bar": N_("note.unit.its_bar.week"),
        "its_row": N_("note.unit.its_row.week"),
        "not_over": N_("note.unit.not_over.week"),
        "whole": N_("note.unit.whole.week"),
        "wholes": N_("note.unit.wholes.week"),
    },
    "month": {
        "began": N_("note.unit.began.month"),
        "its_bar": N_("note.unit.its_bar.month"),
        "its_row": N_("note.unit.its_row.month"),
        "not_over": N_("note.unit.not_over.month"),
        "whole": N_("note.unit.whole.month"),
        "wholes": N_("note.unit.wholes.month"),
    },
    "quarter": {
        "began": N_("note.unit.began.quarter"),
        "its_bar": N_("note.unit.its_bar.quarter"),
        "its_row": N_("note.unit.its_row.quarter"),
        "not_over": N_("note.unit.not_over.quarter"),
        "whole": N_("note.unit.whole.quarter"),
        "wholes": N_("note.unit.wholes.quarter"),
    },
    "year": {
        "began": N_("note.unit.began.year"),
        "its_bar": N_("note.unit.its_bar.year"),
        "its_row": N_("note.unit.its_row.year"),
        "not_over": N_("note.unit.not_over.year"),
        "whole": N_("note.unit.whole.year"),
        "wholes": N_("note.unit.wholes.year"),
    },
}


def _group_unit(values: Values, lang: str) -> dict[str, str]:
    """The words of the unit a note's week or year is (its label, when it has one, in them)."""
    keys = _GROUP_WORDS[str(values["unit"])]
    label = values.get("label")
    return {part: text("barb", key, lang, label=label) for part, key in keys.items()}


# "The week 2007-12-31 began before the data starts: its weekly bar (2008-01-02) holds only
# 3 of its 4 days. Left out: only whole weeks count." The bar is the unit's own (weekly).
START_LEFT_OUT = Kind(N_("note.start_left_out"), plural="total", derived=_group_unit)
# The same week as a group's row: "The week 2008-01-02 began before the data starts: its
# row counts only 3 of its 4 days."
START_ROW = Kind(N_("note.start_row"), plural="total", derived=_group_unit)
# A group of the unfinished week or year: "The week 2026-01-05 is not over: its group holds
# only the bars up to …", with the days it holds (a part) when they are against its calendar.
OPEN_GROUP = Kind(N_("note.open_group"), derived=_group_unit)
# " It holds 3 days, against 5 in the whole week (the exchange's calendar)."
GROUP_DAYS = Kind(N_("note.open_group.days"), plural="count", derived=_group_unit)


# The data's last day, bar, week … in words that agree with it: «последняя неделя в
# данных», «следующей недели ещё нет», «5 дней».
_LAST_WORDS = {
    "day": {
        "last_one": N_("note.unit.last_one.day"),
        "none_after": N_("note.unit.none_after.day"),
        "units": N_("note.unit.units.day"),
    },
    "bar": {
        "last_one": N_("note.unit.last_one.bar"),
        "none_after": N_("note.unit.none_after.bar"),
        "units": N_("note.unit.units.bar"),
    },
    "week": {
        "last_one": N_("note.unit.last_one.week"),
        "none_after": N_("note.unit.none_after.week"),
        "units": N_("note.unit.units.week"),
    },
    "month": {
        "last_one": N_("note.unit.last_one.month"),
        "none_after": N_("note.unit.none_after.month"),
        "units": N_("note.unit.units.month"),
    },
    "quarter": {
        "last_one": N_("note.unit.last_one.quarter"),
        "none_after": N_("note.unit.none_after.quarter"),
        "units": N_("note.unit.units.quarter"),
    },
    "year": {
        "last_one": N_("note.unit.last_one.year"),
        "none_after": N_("note.unit.none_after.year"),
        "units": N_("note.unit.units.year"),
    },
}


def _last_unit(values: Values, lang: str) -> dict[str, str]:
    """The words of the unit of the data's last rows (its count, when they are several)."""
    keys = _LAST_WORDS[str(values["unit"])]
    rows = values.get("rows")
    plural_of = float(rows) if rows is not None else None
    return {part: text("barb", key, lang, plural_of=plural_of) for part, key in keys.items()}


# "2026-01-07, the data's last day, is left out: the where reads next(), and no day follows
# it yet, …", and of several: "The data's last 3 days (…) are left out: …" (its count as the
# engine wrote it, ungrouped).
UNJUDGED_LAST = Kind(N_("note.unjudged_last"), derived=_last_unit)
UNJUDGED_LAST_ROWS = Kind(N_("note.unjudged_last.rows"), derived=_last_unit)


# A size in points (CL's dollars) by year over changed price levels: "mean_range is in points
# over years whose price level changed 13.7x (mean close 1,372 in 2009, 18,782 in 2025): …".
# Its ratio as the engine rounded it ("13.7"), said with the language's decimal mark.
_IN_UNIT = {
    "points": N_("note.unit.in.points"),
    "dollars": N_("note.unit.in.dollars"),
}


def _levels(values: Values, lang: str) -> dict[str, str]:
    """The unit a size is in, and how many times its price level changed."""
    return {
        "in_unit": text("barb", _IN_UNIT[str(values["unit"])], lang),
        "times": decimal(float(str(values["ratio"])), lang, 1),
    }


LEVELS_BY_YEAR = Kind(N_("note.price_levels.by_year"), derived=_levels)
# A year the rows hold in part: "2026 (2026-01-02 — 2026-01-07 only)".
PART_YEAR = Kind(N_("note.price_levels.part_year"))


# How the holidays among the rows traded, a part of HOLIDAY_ROWS.
TRADED_SHORT = Kind(N_("note.holidays.traded_short"))
TRADED_IN_FULL = Kind(N_("note.holidays.traded_in_full"))
ONLY_DAYS_SHORT = Kind(N_("note.holidays.only_days_short"))
SOME_SHORT = Kind(N_("note.holidays.some_short"))
# "114 of the rows are US holiday sessions (the stock market closed, …)".
HOLIDAY_ROWS = Kind(N_("note.holidays.rows"), plural="count")


class NoteSpec(BaseModel):
    """A note as the answer's JSON carries it: its key and values (a part said by a note of
    its own, such as how the holidays traded, as its spec)."""

    key: str
    values: dict[str, Value | NoteSpec] = {}


class Note(str):
    """A note's English (the ``str``), with the kind and values that say it in any
    language. Built with :meth:`of`."""

    kind: Kind
    values: dict[str, Value | Note]

    def __new__(cls, kind: Kind, values: Mapping[str, Value | Note]) -> Note:
        note = super().__new__(cls, _said(kind, kind.key, values, DEFAULT, model=True))
        note.kind, note.values = kind, dict(values)
        return note

    @classmethod
    def of(cls, kind: Kind, **values: Value | Note) -> Note:
        return cls(kind, values)

    @classmethod
    def read(cls, spec: NoteSpec | Mapping[str, Any]) -> Note | None:
        """The note of a JSON answer's spec; None for a key this engine does not know (an
        answer stored by another version)."""
        found = spec if isinstance(spec, NoteSpec) else NoteSpec.model_validate(spec)
        kind = KINDS.get(found.key)
        parts = {k: Note.read(v) if isinstance(v, NoteSpec) else v for k, v in found.values.items()}
        if kind is None or any(v is None and found.values[k] is not None for k, v in parts.items()):
            return None
        return cls(kind, parts)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled by key (a worker process's answer): a kind's function does not pickle.
        return _unpickled, (self.kind.key, self.values)

    def spec(self) -> NoteSpec:
        parts = {k: v.spec() if isinstance(v, Note) else v for k, v in self.values.items()}
        return NoteSpec(key=self.kind.key, values=parts)

    def words(self, lang: str | None) -> str:
        """The note said to a person in ``lang``."""
        return _said(self.kind, self.kind.person or self.kind.key, self.values, lang)


def _unpickled(key: str, values: dict[str, Value | Note]) -> Note:
    return Note(KINDS[key], values)


def _said(
    kind: Kind, key: str, values: Mapping[str, Value | Note], lang: str | None, model: bool = False
) -> str:
    """The note's text: the model's English (``model``), or ``key`` said to a person."""
    shown = {name: _shown(value, lang, model) for name, value in values.items()}
    counted = values.get(kind.plural) if kind.plural else None
    plural_of = float(counted) if isinstance(counted, int | float | str) else None
    return text(
        "barb", key, lang, plural_of=plural_of, **shown, **kind.derived(values, lang or DEFAULT)
    )


def _shown(value: Value | Note, lang: str | None, model: bool) -> str:
    if isinstance(value, Note):  # a part said by a note of its own
        return str(value) if model else value.words(lang)
    if isinstance(value, bool) or not isinstance(value, int):
        return "" if value is None else str(value)
    return decimal(value, lang)


def _kept(value: object, handler: Callable[[object], str]) -> str:
    """A note stays a :class:`Note` in a model's list of warnings (pydantic would make it a
    plain ``str`` and lose its key)."""
    return value if isinstance(value, Note) else handler(value)


#: A warning in a pydantic model: a plain sentence or a :class:`Note`.
NoteText = Annotated[str, WrapValidator(_kept)]


def note_specs(warnings: list[str]) -> dict[str, NoteSpec]:
    """The notes among ``warnings`` by their English, for the answer's JSON."""
    return {str(w): w.spec() for w in warnings if isinstance(w, Note)}


def note_words(warning: str, specs: Mapping[str, Any], lang: str | None) -> str | None:
    """``warning`` said to a person in ``lang`` when the answer's ``specs`` hold it as a
    note; None for a warning that is only English."""
    spec = specs.get(warning)
    note = Note.read(spec) if spec is not None else None
    return note.words(lang) if note is not None else None
