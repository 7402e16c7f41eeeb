"""The one registry of Barb Script functions.

Every function the language knows is declared here once, by ``@register``: its name, its
category, its parameters with their kinds and defaults, and a one-line summary. The
validator, the evaluator and the model's reference text are all derived from this table, so
they cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

ParamKind = Literal["series", "number", "int", "string", "bool"]
Category = Literal[
    "scalar",
    "lag",
    "window",
    "cumulative",
    "pattern",
    "aggregate",
    "time",
    "session",
    "indicator",
]

_NO_DEFAULT: Any = object()


@dataclass(frozen=True)
class Param:
    """One parameter. ``series`` takes any expression; the others must be literals."""

    name: str
    kind: ParamKind = "series"
    default: Any = _NO_DEFAULT
    # Bounds for int/number literals, inclusive.
    min: float | None = None
    max: float | None = None
    # For a ``series`` parameter: a column used when the argument is omitted (e.g. close).
    default_column: str | None = None

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT and self.default_column is None


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    category: Category
    params: tuple[Param, ...]
    summary: str
    impl: Callable[..., Any]
    # Extra positional arguments of the last parameter's kind are allowed (none by default).
    variadic: bool = False
    # Text shown in the reference when the signature alone is not enough.
    example: str | None = None
    aliases: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_aggregate(self) -> bool:
        return self.category == "aggregate"

    def signature(self) -> str:
        parts = []
        for p in self.params:
            if p.default_column is not None:
                parts.append(f"{p.name}={p.default_column}")
            elif p.default is not _NO_DEFAULT:
                parts.append(f"{p.name}={p.default}")
            else:
                parts.append(p.name)
        return f"{self.name}({', '.join(parts)})"


FUNCTIONS: dict[str, FunctionSpec] = {}


def register(
    name: str,
    *,
    category: Category,
    params: tuple[Param, ...] = (),
    summary: str,
    variadic: bool = False,
    example: str | None = None,
    aliases: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a function of the language; the decorated callable implements it.

    Row-wise functions are called as ``impl(ctx, *args)`` with series arguments evaluated to
    ``pd.Series`` aligned with ``ctx.frame`` and literal arguments as Python values.
    Aggregates are called as ``impl(*args)`` with series (or grouped series) arguments.
    """

    def decorate(impl: Callable[..., Any]) -> Callable[..., Any]:
        spec = FunctionSpec(
            name=name,
            category=category,
            params=params,
            summary=summary,
            impl=impl,
            variadic=variadic,
            example=example,
            aliases=aliases,
        )
        for key in (name, *aliases):
            if key in FUNCTIONS:
                raise RuntimeError(f"function {key!r} registered twice")
            FUNCTIONS[key] = spec
        return impl

    return decorate


def lookup(name: str) -> FunctionSpec | None:
    return FUNCTIONS.get(name.lower())
