"""The model's tools: argument models (pydantic → JSON schema) and texts from prompts/.

Reference tools answer at once from the engine's generated texts. ``execute_query`` and
``ask_user_clarification`` pause the loop (the confirm gate, the question to the person);
``remember_preference`` writes to the person's memory. The loop decides what each kind does.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from barb.errors import QueryError
from barb.script.limits import check_query_value
from bot.assistant.prompts import Prompts, Variant
from bot.llm.messages import ToolSpec


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


class RememberPreferenceArgs(_Args):
    preference: str = Field(min_length=2, max_length=300)


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
