"""Trading concepts defined by a time of day: the opening range, the initial balance, the cash
close, the post-cash hour, custom time windows and the hour of the day's high.

The catalogue is ``session_concepts.yaml`` beside this module. Each entry carries the query
that computes it, so the concept lookup shows the model a query that is known to run.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

from pydantic import BaseModel, ConfigDict

from barb.yaml_text import load_yaml


class SessionConcept(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    title: str
    aliases: tuple[str, ...] = ()
    description: str
    query: dict[str, Any]

    def describe(self) -> str:
        return (
            f"{self.title} — {self.description}\n"
            f"Barb Script: {json.dumps(self.query, ensure_ascii=False)}"
        )


@cache
def session_concepts() -> dict[str, SessionConcept]:
    text = files("barb").joinpath("session_concepts.yaml").read_text(encoding="utf-8")
    raw = load_yaml(text)
    return {name: SessionConcept(name=name, **fields) for name, fields in raw.items()}


def _key(name: str) -> str:
    return name.strip().lower().replace("-", " ").replace("_", " ")


def find_session_concept(name: str) -> SessionConcept | None:
    """The concept called ``name`` or one of its aliases (case, '-' and '_' ignored)."""
    wanted = _key(name)
    for concept in session_concepts().values():
        if wanted in {_key(concept.name), *map(_key, concept.aliases)}:
            return concept
    return None
