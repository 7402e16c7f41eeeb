"""The shape of a Barb Script query, validated by pydantic.

Only shape is checked here (types, known fields, sort syntax). Whether columns, functions,
sessions and periods exist is the validator's job once the instrument is known.
"""

from __future__ import annotations

import difflib
import re
import reprlib
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from barb.errors import BarbError, InvalidQuery, UnknownTimeframe
from barb.frames import BAR_COLUMNS, MINUTE_OF_DAY
from barb.script.ast import default_name
from barb.script.limits import check_query_value
from barb.script.parser import parse_expression
from barb.timeframes import TIMEFRAMES, case_ambiguity, resolve_timeframe

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SORT_EXAMPLE = "sort must look like 'column desc' or 'column asc'"
# Columns the engine keeps and reads itself: the calendar and clock functions, daily(),
# per-unit functions and indicators read them by name, so a map that wrote one broke them
# (trading_date as 0 made year() an internal error, minute_of_day as 0 made time() == '10:00'
# match nothing, a text high made atr(14) one). Each with the name a column of one's own takes.
_KEPT_NAMES = {name: f"my_{name}" for name in (*BAR_COLUMNS, MINUTE_OF_DAY)} | {
    "trading_date": "td",
    "minute_of_day": "mins",
    "timestamp": "ts",
}


def split_top_level(text: str) -> list[str]:
    """Split 'mean(range), percentile(range, 90)' on commas outside parentheses/quotes."""
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    current: list[str] = []
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    parts.append("".join(current).strip())
    return [p for p in parts if p]


class JoinSpec(BaseModel):
    """What a join adds: an event's marks, or another instrument's bars.

    ``{"source": "fomc"}`` (or just ``"fomc"``) adds a true/false column named after the event
    (and, on intraday bars, its minutes from the release); ``filter`` then keeps or drops the
    event days. ``{"instrument": "ES"}`` adds ES's bars of the same timeframe as ``es_open`` …
    ``es_volume``, matched on the bar's time (daily: its date; weekly and longer: its week,
    month, quarter or year): a session name read with ES's own hours, a time window with the
    same clock hours. On daily and longer bars ``session`` reads the joined instrument in a
    session of its own: ``{"instrument": "CL", "session": "OVERNIGHT"}`` on NQ's RTH days
    puts CL's night before each date beside NQ's day ("CL's overnight move vs NQ's RTH
    move" had no query: the join read CL's RTH).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str | None = Field(default=None, min_length=1)
    instrument: str | None = Field(default=None, min_length=1)
    # The joined instrument's own session (daily and longer bars only); None: the query's.
    session: str | None = Field(default=None, min_length=1)
    # "only" keeps event days, "exclude" drops them; None only adds the columns.
    filter: Literal["only", "exclude"] | None = None

    @field_validator("source")
    @classmethod
    def _lower(cls, value: str | None) -> str | None:
        # The added column is named after the event in lowercase: "FOMC" marks `fomc`.
        return None if value is None else value.strip().lower()

    @field_validator("instrument")
    @classmethod
    def _upper(cls, value: str | None) -> str | None:
        return None if value is None else value.strip().upper()

    @model_validator(mode="after")
    def _one_kind(self) -> JoinSpec:
        if (self.source is None) == (self.instrument is None):
            raise ValueError(
                'a join names either an event ("fomc" or {"source": "fomc"}) or an instrument '
                '({"instrument": "ES"})'
            )
        if self.instrument is not None and self.filter is not None:
            raise ValueError("filter applies to event joins only")
        if self.source is not None and self.session is not None:
            raise ValueError("session applies to instrument joins only")
        return self

    @property
    def prefix(self) -> str:
        """Column prefix of an instrument join: the symbol in lower case ("es_")."""
        assert self.instrument is not None
        return f"{self.instrument.lower()}_"

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class SortKey(BaseModel):
    model_config = ConfigDict(frozen=True)

    column: str
    descending: bool = False

    def to_text(self) -> str:
        return f"{self.column} {'desc' if self.descending else 'asc'}"


def _sort_key(item: Any) -> dict[str, Any]:
    """'volume desc' → a SortKey's fields. Split on whitespace: linear in the text's length."""
    words = item.split() if isinstance(item, str) else []
    if (
        1 <= len(words) <= 2
        and _IDENTIFIER.fullmatch(words[0])
        and (len(words) == 1 or words[1].lower() in ("asc", "desc"))
    ):
        return {"column": words[0], "descending": len(words) == 2 and words[1].lower() == "desc"}
    shown = reprlib.repr(item)
    named = _result_name(words[0]) if words else None
    if named is not None:  # "mean(range) desc": the result is sorted by its column's name
        raise ValueError(
            f"{_SORT_EXAMPLE}, naming a result column; got {shown}. "
            f"{words[0]} in select is the column '{named}': sort by '{named} "
            f"{words[-1] if words[-1].lower() in ('asc', 'desc') else 'desc'}'"
        )
    raise ValueError(f"{_SORT_EXAMPLE}; got {shown}")


def _result_name(text: str) -> str | None:
    """The column name select gives ``text`` if it is an expression (``mean(range)`` →
    ``mean_range``), else None."""
    if "(" not in text:
        return None
    try:
        return default_name(parse_expression(text))
    except BarbError:  # not an expression after all: the plain message
        return None


class Stage(BaseModel):
    """The clauses that turn rows into an answer; a second stage runs them over the first's
    result table (``then``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    map: dict[str, str] = Field(default_factory=dict)
    where: str | None = None
    group_by: list[str] = Field(default_factory=list)
    select: list[str] = Field(default_factory=list)
    sort: list[SortKey] = Field(default_factory=list)
    limit: int | None = Field(default=None, ge=1)

    @field_validator("where", mode="before")
    @classmethod
    def _blank_where(cls, value: Any) -> Any:
        return _blank_is_none(value)

    @field_validator("map", mode="before")
    @classmethod
    def _map(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("map")
    @classmethod
    def _map_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, expr in value.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(
                    f"map name '{name}' must be a simple identifier of Latin letters, digits "
                    "and _, like 'gap_pct'"
                )
            if not expr.strip():
                raise ValueError(f"map '{name}' has an empty expression")
            if name in _KEPT_NAMES:
                raise ValueError(
                    f"'{name}' is a column Barb keeps and its functions read; name yours "
                    f"e.g. '{_KEPT_NAMES[name]}'"
                )
        return value

    @field_validator("group_by", "select", mode="before")
    @classmethod
    def _string_or_list(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            return split_top_level(value)
        return value

    @field_validator("sort", mode="before")
    @classmethod
    def _sort(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            items: list[Any] = split_top_level(value)
        elif isinstance(value, list):
            items = value
        else:
            raise ValueError(f"{_SORT_EXAMPLE}, or a list of those; got {type(value).__name__}")
        return [item if isinstance(item, dict) else _sort_key(item) for item in items]

    def stage_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.map:
            out["map"] = dict(self.map)
        if self.where:
            out["where"] = self.where
        if self.group_by:
            out["group_by"] = self.group_by[0] if len(self.group_by) == 1 else list(self.group_by)
        if self.select:
            out["select"] = self.select[0] if len(self.select) == 1 else list(self.select)
        if self.sort:
            out["sort"] = ", ".join(k.to_text() for k in self.sort)
        if self.limit is not None:
            out["limit"] = self.limit
        return out


def _blank_is_none(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        return None
    return value.strip() if isinstance(value, str) else value


class Query(Stage):
    instrument: str | None = None
    session: str | None = None
    timeframe: str | None = Field(default=None, alias="from")
    period: str | None = None
    join: list[JoinSpec] = Field(default_factory=list)
    then: Stage | None = None

    @field_validator("instrument", "session", "period", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return _blank_is_none(value)

    @field_validator("instrument")
    @classmethod
    def _symbol(cls, value: str | None) -> str | None:
        return None if value is None else value.upper()

    @field_validator("timeframe", mode="before")
    @classmethod
    def _timeframe(cls, value: Any) -> Any:
        if value is None or not isinstance(value, str):
            return value
        ambiguous = case_ambiguity(value)
        if ambiguous is not None:
            raise ValueError(f"{ambiguous}; write one of them")
        tf = resolve_timeframe(value)
        if tf is None:
            raise ValueError(f"unknown timeframe '{value}'; use one of {', '.join(TIMEFRAMES)}")
        return tf.name

    @field_validator("join", mode="before")
    @classmethod
    def _join(cls, value: Any) -> Any:
        if value is None:
            return []
        items = value if isinstance(value, list) else [value]
        return [{"source": item} if isinstance(item, str) else item for item in items]

    def with_instrument(self, symbol: str) -> Query:
        """The query naming ``symbol`` when it names no instrument itself."""
        if self.instrument:
            return self
        return self.model_copy(update={"instrument": symbol.upper()})

    def to_json(self) -> dict[str, Any]:
        """The query as the model would write it (canonical form, defaults left out)."""
        out: dict[str, Any] = {}
        if self.instrument:
            out["instrument"] = self.instrument
        if self.session:
            out["session"] = self.session
        if self.timeframe:
            out["from"] = self.timeframe
        if self.period:
            out["period"] = self.period
        if self.join:
            out["join"] = [j.to_json() for j in self.join]
        out.update(self.stage_json())
        if self.then is not None:
            out["then"] = self.then.stage_json()
        return out


_FIELDS = (
    "instrument",
    "session",
    "from",
    "period",
    "join",
    "map",
    "where",
    "group_by",
    "select",
    "sort",
    "limit",
    "then",
)


_FIELD_HINTS = {
    "join": 'join takes an event ("fomc", or {"source": "fomc", "filter": "only"}) or an '
    'instrument ({"instrument": "ES"}), or a list of them.',
    "then": 'then takes map, where, group_by, select, sort and limit, e.g. "then": '
    '{"select": "mean(ymax)"}',
}


# A third stage (days, then weeks, then years) is two: the middle level's groups are made of
# the bars in the first stage, each day read at its last bar, and the outer level is then's.
# "In how many weeks of each year did every RTH day close above its VWAP" nested a then in
# then and was told only the fields then takes (p39b Q10); the query below answers it: 2023
# 1 of 52 weeks, 2024 0 of 53, 2025 1 of 52 on the sample, as pandas does.
THIRD_STAGE_EXAMPLE = (
    '{"session": "RTH", "from": "1m", "map": {"vw": "vwap()", "last_bar": '
    '"coalesce(if(next(date()) == date(), 0, 1), 1)", "day_ok": "if(last_bar == 1 and close '
    '<= vw, 0, 1)"}, "group_by": "week()", "select": ["first(year()) as yr", "min(day_ok) as '
    'every_day"], "then": {"group_by": "yr", "select": ["count() as weeks", '
    '"sum(every_day) as weeks_every_day"]}}'
)
_THIRD_STAGE = (
    "There are two stages: fold the innermost level into the first. Group its bars by the "
    "middle unit (week()) and read each day's condition on its last bar (the one whose "
    "next(date()) is another date), as a 0/1 whose min() says every day held it; then groups "
    "those by the outer unit. Weeks in which every RTH day closed above its VWAP, by year: "
)


def _unknown_field(loc: tuple[int | str, ...]) -> tuple[str, str]:
    """The problem and hint of a field no clause has: at the top, or inside a join or then
    (``{"instrument": "ES", "session": "RTH"}`` said "Unknown field 'join'. Did you mean
    'join'?")."""
    name, inside = str(loc[-1]), str(loc[0])
    nested = {"join": tuple(JoinSpec.model_fields), "then": tuple(Stage.model_fields)}
    if len(loc) == 1 or inside not in nested:
        close = difflib.get_close_matches(name, _FIELDS, n=1)
        hint = (f"Did you mean '{close[0]}'? " if close else "") + f"Fields: {', '.join(_FIELDS)}."
        return f"Unknown field '{name}'.", hint
    known = nested[inside]
    close = difflib.get_close_matches(name, known, n=1)
    hint = (
        f"Did you mean '{close[0]}'? " if close else ""
    ) + f"{inside} takes: {', '.join(known)}."
    if inside == "then" and name == "then":
        hint = _THIRD_STAGE + THIRD_STAGE_EXAMPLE + f". {hint}"
    if inside == "join" and name in ("from", "period", "timeframe"):
        hint = (
            "A joined instrument's bars come in the query's own timeframe and period (and its "
            "session, unless the join names one for daily+ bars); " + hint
        )
    return f"Unknown field '{name}' in {inside}.", hint


def parse_query(raw: dict[str, Any] | Query) -> Query:
    """Validate a query's shape; every problem becomes one InvalidQuery naming the fields."""
    if isinstance(raw, Query):
        return raw
    if not isinstance(raw, dict):
        raise InvalidQuery(
            f"A query must be a JSON object, got {type(raw).__name__}.",
            step="parse",
            hint='Example: {"session": "RTH", "from": "daily", "select": "mean(range)"}',
        )
    check_query_value(raw)
    try:
        return Query.model_validate(raw)
    except ValidationError as exc:
        problems = []
        hint = None
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "query"
            if err["type"] == "extra_forbidden":
                problem, hint = _unknown_field(err["loc"])
                problems.append(problem)
            else:
                msg = err["msg"].removeprefix("Value error, ")
                problems.append(f"Field '{loc}': {msg}.")
        fields = {str(err["loc"][0]) for err in exc.errors() if err["loc"]}
        hint = hint or _FIELD_HINTS.get(next(iter(fields)) if len(fields) == 1 else "")
        if fields == {"from"}:
            raise UnknownTimeframe(" ".join(problems), step="from", hint=hint) from None
        raise InvalidQuery(" ".join(problems), step="parse", hint=hint) from None
