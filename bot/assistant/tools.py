"""The model's tools: argument models (pydantic → JSON schema) and texts from prompts/.

Reference tools answer at once from the engine's generated texts. ``execute_query`` and
``ask_user_clarification`` pause the loop (the confirm gate, the question to the person);
``remember_preference`` writes to the person's memory. The loop decides what each kind does.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import zoneinfo
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from barb.errors import QueryError
from barb.instruments import available_instruments, load_instrument
from barb.script.limits import check_query_value
from bot.assistant.prompts import Prompts, Variant
from bot.llm.messages import ToolSpec
from bot.store.records import Language, PreferenceKind, values_of


class ToolKind(StrEnum):
    REFERENCE = "reference"
    EXECUTE = "execute"
    CLARIFY = "clarify"
    MEMORY = "memory"


class _Args(BaseModel):
    model_config = ConfigDict(extra="ignore")


class NoArgs(_Args):
    pass


class ExecuteQueryArgs(_Args):
    query: dict[str, Any]
    explanation: str = ""

    @field_validator("query")
    @classmethod
    def _bounded(cls, query: dict[str, Any]) -> dict[str, Any]:
        """The input limits, before the query is stored, planned or sent to a worker."""
        try:
            check_query_value(query)
        except QueryError as exc:
            raise ValueError(f"{exc.message} {exc.hint or ''}".strip()) from None
        return query


class GetConceptArgs(_Args):
    name: str = Field(min_length=1, max_length=80)


class AskClarificationArgs(_Args):
    question_text: str = Field(min_length=1, max_length=1000)
    suggested_replies: list[str] = Field(default_factory=list, max_length=6)
    expected_response_format_hint: str | None = None


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

    kind: PreferenceKind
    value: str = Field(min_length=1, max_length=NOTE_MAX_CHARS)

    @model_validator(mode="after")
    def _fits_kind(self) -> Self:
        self.value = preference_rules()[self.kind](self.value)
        return self


TOOLS: dict[str, tuple[ToolKind, type[_Args]]] = {
    "execute_query": (ToolKind.EXECUTE, ExecuteQueryArgs),
    "get_query_reference": (ToolKind.REFERENCE, NoArgs),
    "get_indicators": (ToolKind.REFERENCE, NoArgs),
    "get_events": (ToolKind.REFERENCE, NoArgs),
    "get_concept": (ToolKind.REFERENCE, GetConceptArgs),
    "ask_user_clarification": (ToolKind.CLARIFY, AskClarificationArgs),
    "remember_preference": (ToolKind.MEMORY, RememberPreferenceArgs),
}


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool; the text goes back to it as the result."""


def tool_specs(prompts: Prompts, variant: Variant) -> list[ToolSpec]:
    """The tools this variant may use, with schemas from the argument models."""
    texts = prompts.tool_texts()
    specs = []
    for name, (_, model) in TOOLS.items():
        if not variant.tools.allows(name):
            continue
        text = texts[name]
        schema = model.model_json_schema()
        schema.pop("title", None)
        schema.pop("description", None)  # the model's docstring is for developers
        for param, prop in schema.get("properties", {}).items():
            prop.pop("title", None)
            described = text.get("parameters", {}).get(param)
            if described:
                prop["description"] = described
        if name == "execute_query":
            # A free-form object: the query's own fields are explained by the reference.
            schema["properties"]["query"] = {
                "type": "object",
                "description": text["parameters"]["query"],
            }
        schema.setdefault("properties", {})
        specs.append(
            ToolSpec(name=name, description=text["description"].strip(), parameters=schema)
        )
    return specs


def parse_args(name: str, arguments: dict[str, Any]) -> _Args:
    """Validate a call's arguments; the error names the fields for the model to fix."""
    if name not in TOOLS:
        raise ToolArgumentError(f"Unknown tool '{name}'. Available: {', '.join(TOOLS)}.")
    _, model = TOOLS[name]
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ToolArgumentError(f"Invalid arguments for {name}: {problems}.") from None


def kind_of(name: str) -> ToolKind | None:
    entry = TOOLS.get(name)
    return entry[0] if entry else None
