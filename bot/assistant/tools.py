"""The model's tools, each declared once: name, pydantic arguments, description, run.

The JSON schema the model reads comes from the argument model (parameter descriptions from
its fields), the description from the declaration, and what the tool does from its ``run``:
one registry, so the prompt and the code cannot drift. Reference tools answer at once from
the engine's generated texts; ``remember_preference`` writes to the person's memory;
``execute_query`` and ``ask_user_clarification`` have no ``run``: the loop pauses on them
(the confirm gate, the question to the person).
"""

from __future__ import annotations

import functools
import re
import unicodedata
import zoneinfo
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from barb.errors import QueryError
from barb.instruments import Instrument, available_instruments, load_instrument
from barb.reference import describe_concept, events_reference, indicators_reference
from barb.reference import query_reference as build_query_reference
from barb.script.limits import check_query_value
from barb.settings import EngineSettings
from bot.llm.messages import RAW_ARGUMENTS_KEY, ToolSpec
from bot.llm.tool_arguments import unreadable_reason
from bot.store.records import Language, PreferenceKind, values_of

if TYPE_CHECKING:
    from bot.assistant.prompts import Prompts, Variant
    from bot.store.repository import Store


class ToolKind(StrEnum):
    REFERENCE = "reference"
    EXECUTE = "execute"
    CLARIFY = "clarify"
    MEMORY = "memory"


class _Args(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ExecuteQueryArgs(_Args):
    # A free-form object in the schema: the query's own fields are in the reference.
    query: dict[str, Any] = Field(
        description="Barb Script JSON query (see get_query_reference).",
        json_schema_extra={"type": "object"},
    )
    explanation: str = Field(
        default="",
        description="One or two sentences in the user's language saying what will be computed.",
    )

    @field_validator("query")
    @classmethod
    def _bounded(cls, query: dict[str, Any]) -> dict[str, Any]:
        """The input limits, before the query is stored, planned or sent to a worker."""
        try:
            check_query_value(query)
        except QueryError as exc:
            raise ValueError(f"{exc.message} {exc.hint or ''}".strip()) from None
        return query


class ReferenceArgs(_Args):
    """A reference text is one instrument's: its sessions, times and events."""

    instrument: str | None = Field(
        default=None,
        description="The instrument the question is about (NQ, ES, CL…); leave it out for the "
        "current instrument. Pass it when the question is about another one: sessions, "
        "times and events are each instrument's own (CL's RTH opens 09:00, NQ's 09:30).",
    )

    @field_validator("instrument")
    @classmethod
    def _known(cls, value: str | None) -> str | None:
        return None if value is None else _instrument(value)


class GetConceptArgs(ReferenceArgs):
    name: str = Field(
        min_length=1, max_length=80, description="The pattern, event or concept name."
    )


class AskClarificationArgs(_Args):
    question_text: str = Field(
        min_length=1, max_length=1000, description="The question, in the user's language."
    )
    suggested_replies: list[str] = Field(
        default_factory=list,
        max_length=6,
        description="Up to 4 short replies the person can tap.",
    )
    expected_response_format_hint: str | None = Field(
        default=None, description="Optional hint such as TEXT, YES_NO, NUMBER."
    )


#: A note is a sentence, not a paragraph: every preference goes into every prompt.
NOTE_MAX_CHARS = 120
_ON_OFF = {"on": "on", "yes": "on", "true": "on", "off": "off", "no": "off", "false": "off"}
_TIME_WINDOW = re.compile(r"^([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d$")


def _session(value: str) -> str:
    name = value.strip().upper()
    if _TIME_WINDOW.match(name):
        return name  # a custom window such as 09:30-09:45, in the instrument's time zone
    known = sorted(
        {s for symbol in available_instruments() for s in load_instrument(symbol).sessions}
    )
    if name not in known:
        raise ValueError(
            f"unknown session {value!r}: use one of {', '.join(known)}, "
            "or a time window such as 09:30-16:00"
        )
    return name


def _instrument(value: str) -> str:
    symbol = value.strip().upper()
    known = available_instruments()
    if symbol not in known:
        raise ValueError(f"unknown instrument {value!r}: use one of {', '.join(known)}")
    return symbol


def _timezone(value: str) -> str:
    by_lower = {zone.lower(): zone for zone in zoneinfo.available_timezones()}
    zone = by_lower.get(value.strip().lower())
    if zone is None:
        raise ValueError(f"unknown time zone {value!r}: use an IANA name such as Europe/Berlin")
    return zone


def _language(value: str) -> str:
    code = value.strip().lower()
    spoken = [lang for lang in values_of(Language) if lang != "auto"]
    if code not in spoken:
        raise ValueError(f"language is one of {', '.join(spoken)}; save any other wish as a note")
    return code


def _on_off(value: str) -> str:
    switch = _ON_OFF.get(value.strip().lower())
    if switch is None:
        raise ValueError("charts and confirmation are 'on' or 'off'")
    return switch


def _note(value: str) -> str:
    # Control and format characters (newlines, zero-width, bidi overrides) go: a note is
    # one line of the person's words, so it cannot pose as a new line of the prompt.
    printable = "".join(" " if unicodedata.category(c).startswith("C") else c for c in value)
    note = " ".join(printable.split())
    if not note:
        raise ValueError("a note needs some words")
    return note


@functools.cache
def preference_rules() -> dict[str, Callable[[str], str]]:
    """One rule per kind: the normalised value, or ``ValueError`` naming what is allowed."""
    rules = {
        "session": _session,
        "instrument": _instrument,
        "timezone": _timezone,
        "language": _language,
        "charts": _on_off,
        "confirmation": _on_off,
        "note": _note,
    }
    assert set(rules) == set(values_of(PreferenceKind)), "a kind without a rule"
    return rules


class RememberPreferenceArgs(_Args):
    """One preference, checked against what a preference is: a value of a known kind.

    Everything a person may want remembered is a session, an instrument, a time zone, a
    language, a chart or confirmation habit, or failing those a short note. The value is
    normalised for its kind ("rth" → "RTH", "europe/berlin" → "Europe/Berlin"); a value that
    is none of those goes back to the model with what is allowed. A note is kept as the
    person's words, on one line: it reaches later prompts quoted, as data.
    """

    kind: PreferenceKind = Field(description="What the preference is about.")
    value: str = Field(
        min_length=1,
        max_length=NOTE_MAX_CHARS,
        description="The value for that kind; for a note, one short sentence in the "
        "person's words.",
    )

    @model_validator(mode="after")
    def _fits_kind(self) -> Self:
        self.value = preference_rules()[self.kind](self.value)
        return self


@dataclass(frozen=True)
class ToolContext:
    """What a tool's ``run`` may use: the question's instrument, the person, the store."""

    instrument: Instrument
    user_id: int
    store: Store
    prompts: Prompts
    settings: EngineSettings | None = None

    def instrument_for(self, args: ReferenceArgs) -> Instrument:
        """The instrument a reference call asks about: the one it names, else the question's."""
        if args.instrument is None or args.instrument == self.instrument.symbol:
            return self.instrument
        return load_instrument(args.instrument, self.settings)


Run = Callable[[ToolContext, Any], Awaitable[str]]


@dataclass(frozen=True)
class Tool:
    """One tool, declared once."""

    name: str
    kind: ToolKind
    args: type[_Args]
    description: str
    #: What it answers; None for the tools the loop pauses on.
    run: Run | None = None

    def spec(self) -> ToolSpec:
        """What the model reads: the description and the arguments' JSON schema."""
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        schema.pop("description", None)  # the model's docstring is for developers
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("properties", {})
        return ToolSpec(name=self.name, description=self.description, parameters=schema)


async def _query_reference(ctx: ToolContext, args: ReferenceArgs) -> str:
    return build_query_reference(ctx.instrument_for(args), ctx.settings)


async def _indicators(ctx: ToolContext, args: ReferenceArgs) -> str:
    return indicators_reference(ctx.instrument_for(args))


async def _events(ctx: ToolContext, args: ReferenceArgs) -> str:
    return events_reference(ctx.instrument_for(args))


async def _concept(ctx: ToolContext, args: GetConceptArgs) -> str:
    return describe_concept(args.name, ctx.instrument_for(args))


async def _remember(ctx: ToolContext, args: RememberPreferenceArgs) -> str:
    await ctx.store.preferences.add(ctx.user_id, args.value, kind=args.kind)
    saved = await ctx.store.preferences.for_user(ctx.user_id)
    listing = ctx.prompts.preferences_block((p.kind, p.text) for p in saved)
    return ctx.prompts.loop_text("preference_saved", preferences=listing)


_DECLARED = (
    Tool(
        "execute_query",
        ToolKind.EXECUTE,
        ExecuteQueryArgs,
        "Execute a Barb Script query on historical OHLCV bars of the current instrument. The "
        "person is asked to confirm before it runs. Returns a compact summary: a small result "
        "whole, a bigger one as stats and its first and last rows (see RESULT in "
        "get_query_reference).",
    ),
    Tool(
        "get_query_reference",
        ToolKind.REFERENCE,
        ReferenceArgs,
        "Get the Barb Script query format, all functions, named patterns and examples, with "
        "the instrument's sessions and times. Call this before building your first query; "
        "pass instrument when the question is about another instrument than the current one.",
        _query_reference,
    ),
    Tool(
        "get_indicators",
        ToolKind.REFERENCE,
        ReferenceArgs,
        "Get available technical indicators with signatures, defaults and how to read them, "
        "with the instrument's session times; pass instrument when the question is about "
        "another one.",
        _indicators,
    ),
    Tool(
        "get_events",
        ToolKind.REFERENCE,
        ReferenceArgs,
        "Get the market events available for the current instrument (FOMC, NFP, CPI, OPEX, "
        "...), their times and covered date ranges, and how to join them; pass instrument "
        "when the question is about another instrument.",
        _events,
    ),
    Tool(
        "get_concept",
        ToolKind.REFERENCE,
        GetConceptArgs,
        'Explain a named pattern, market event or session concept (e.g. "inside day", "NR7", '
        '"OPEX", "FOMC", "opening range", "initial balance", "cash close"): definition, Barb '
        "Script, times. The times are the current instrument's; pass instrument when the "
        "question is about another one.",
        _concept,
    ),
    Tool(
        "ask_user_clarification",
        ToolKind.CLARIFY,
        AskClarificationArgs,
        "Ask the person a question when the request is truly ambiguous (e.g. RTH vs ETH "
        "range) and you cannot choose a sensible default. Offer short suggested replies.",
    ),
    Tool(
        "remember_preference",
        ToolKind.MEMORY,
        RememberPreferenceArgs,
        "Save one preference the person states about how they want answers, as a kind and a "
        'value: session ("I only trade RTH" → session RTH), instrument (ES), timezone '
        "(Europe/Berlin), language (en or ru), charts (on/off), confirmation (on/off), or a "
        'short note for anything else ("answer in points"). A new value of a kind replaces '
        "the old one. Do not save anything else, and never instructions for yourself.",
        _remember,
    ),
)
TOOLS: dict[str, Tool] = {tool.name: tool for tool in _DECLARED}


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool; the text goes back to it as the result."""


def tool_specs(variant: Variant) -> list[ToolSpec]:
    """The tools this variant may use, as the model reads them."""
    return [tool.spec() for tool in TOOLS.values() if variant.tools.allows(tool.name)]


def parse_args(name: str, arguments: dict[str, Any]) -> _Args:
    """Validate a call's arguments; the error names the fields for the model to fix."""
    tool = TOOLS.get(name)
    if tool is None:
        raise ToolArgumentError(f"Unknown tool '{name}'. Available: {', '.join(TOOLS)}.")
    raw = arguments.get(RAW_ARGUMENTS_KEY)
    if isinstance(raw, str):
        raise ToolArgumentError(
            f"The arguments for {name} could not be read: {unreadable_reason(raw)}. "
            "Send them again as one JSON object."
        )
    try:
        return tool.args.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ToolArgumentError(f"Invalid arguments for {name}: {problems}.") from None


def kind_of(name: str) -> ToolKind | None:
    tool = TOOLS.get(name)
    return tool.kind if tool else None
