"""Trading concepts defined by a time of day: the opening range, the initial balance, the cash
close, the post-cash hour, custom time windows and the hour of the day's high.

The catalogue is ``session_concepts.yaml`` beside this module. Each entry carries the query
that computes it, so the concept lookup shows the model a query that is known to run. Its
times are placeholders filled from the asking instrument's sessions (``SessionTimes``): CL's
opening range starts at 09:00, NQ's at 09:30, and neither reads the other's.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from barb.events.catalog import concept_key
from barb.session_times import SessionTimes
from barb.yaml_text import load_yaml


class ConceptText(BaseModel):
    """What the model reads about a concept: words and a query, both with placeholders."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str
    query: dict[str, Any]


class SessionConcept(ConceptText):
    name: str
    title: str
    aliases: tuple[str, ...] = ()
    # Sessions (or known times: settlement, pit_hours) the description and query name; an
    # instrument without them reads `otherwise`.
    needs: tuple[str, ...] = ()
    otherwise: ConceptText | None = None

    @model_validator(mode="after")
    def _otherwise_when_it_needs(self) -> SessionConcept:
        if self.needs and self.otherwise is None:
            raise ValueError(f"{self.name} needs {self.needs}: say what the others read")
        return self

    def text_for(self, times: SessionTimes) -> ConceptText:
        """The description and query for this instrument, its times filled in."""
        known = times.values()
        text: ConceptText = self
        if self.otherwise is not None and not all(name in known for name in self.needs):
            text = self.otherwise
        return ConceptText(description=times.fill(text.description), query=times.fill(text.query))

    def describe(self, times: SessionTimes) -> str:
        text = self.text_for(times)
        return (
            f"{self.title} — {text.description}\n"
            f"Barb Script: {json.dumps(text.query, ensure_ascii=False)}"
        )


@cache
def session_concepts() -> dict[str, SessionConcept]:
    text = files("barb").joinpath("session_concepts.yaml").read_text(encoding="utf-8")
    raw = load_yaml(text)
    return {name: SessionConcept(name=name, **fields) for name, fields in raw.items()}


def find_session_concept(name: str) -> SessionConcept | None:
    """The concept called ``name`` or one of its aliases (case, '-' and '_' ignored)."""
    wanted = concept_key(name)
    for concept in session_concepts().values():
        if wanted in {concept_key(concept.name), *map(concept_key, concept.aliases)}:
            return concept
    return None


def missing_session_text(name: str, times: SessionTimes) -> str | None:
    """What an instrument without session ``name`` reads instead, from the first concept that
    needs it: CL asked for CASH reads the cash close's "CL has no cash session … the window
    '14:00-14:30'", not only "Default session is RTH"."""
    wanted = name.strip().upper()
    if wanted in times.instrument.sessions:
        return None
    for concept in session_concepts().values():
        if wanted in concept.needs and concept.otherwise is not None:
            return times.fill(concept.otherwise.description)
    return None
