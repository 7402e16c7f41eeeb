"""Named candle and day patterns: one Barb Script condition each, usable as functions.

The catalogue is ``patterns.yaml`` beside this module. Each entry becomes a zero-argument
function of the language (``inside_day()``) whose value is its expression evaluated on the
query's bars, so the same text explains the pattern to the model and computes it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib.resources import files

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict

from barb.script.context import EvalContext
from barb.script.functions import register


class Pattern(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    title: str
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
    raw = yaml.safe_load(files("barb").joinpath("patterns.yaml").read_text(encoding="utf-8"))
    return {name: Pattern(name=name, **fields) for name, fields in raw.items()}


def _impl(pattern: Pattern) -> Callable[[EvalContext], pd.Series]:
    def evaluate_pattern(ctx: EvalContext) -> pd.Series:
        # Imported here: the evaluator itself looks functions up in the registry.
        from barb.script.evaluator import evaluate
        from barb.script.parser import parse_expression

        return evaluate(parse_expression(pattern.expression, step=ctx.step), ctx)

    evaluate_pattern.__doc__ = pattern.description
    return evaluate_pattern


def register_patterns() -> None:
    for pattern in pattern_catalog().values():
        register(
            pattern.name,
            category="candle",
            summary=f"{pattern.title}: {pattern.expression}",
        )(_impl(pattern))
