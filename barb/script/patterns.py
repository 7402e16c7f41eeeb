"""Named candle and day patterns: one Barb Script condition each, usable as functions.

The catalogue is ``patterns.yaml`` beside this module. Each entry becomes a zero-argument
function of the language (``inside_day()``) whose value is its expression evaluated on the
query's bars, so the same text explains the pattern to the model and computes it.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from pydantic import BaseModel, ConfigDict

from barb.events.catalog import concept_key
from barb.script.functions import register_macro
from barb.yaml_text import load_yaml


class Pattern(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    # Other names traders ask get_concept for ("inside bar", "внутренний день").
    aliases: tuple[str, ...] = ()
    expression: str
    description: str

    def describe(self) -> str:
        return (
            f"{self.title} — {self.description}\n"
            f"Barb Script: {self.name}() = {self.expression}\n"
            f'Use: "where": "{self.name}()" on daily (or any) bars; '
            f'"select": "count()" counts them.'
        )


@cache
def pattern_catalog() -> dict[str, Pattern]:
    raw = load_yaml(files("barb.script").joinpath("patterns.yaml").read_text(encoding="utf-8"))
    return {name: Pattern(name=name, **fields) for name, fields in raw.items()}


def find_pattern(name: str) -> Pattern | None:
    """The pattern called ``name`` or one of its aliases (case, '-', '_' and '()' ignored)."""
    wanted = concept_key(name.strip().removesuffix("()"))
    for pattern in pattern_catalog().values():
        if wanted in {concept_key(pattern.name), *map(concept_key, pattern.aliases)}:
            return pattern
    return None


def register_patterns() -> None:
    """Each pattern becomes a macro: ``inside_day()`` is its expression, evaluated in place."""
    for pattern in pattern_catalog().values():
        register_macro(
            pattern.name,
            category="candle",
            summary=f"{pattern.title}: {pattern.expression}",
            expression=pattern.expression,
        )
