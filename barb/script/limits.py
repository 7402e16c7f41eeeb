"""Input limits, checked before any work: on the raw JSON text, then on the decoded value.

A query is small: a dozen fields, a few expressions of a few hundred characters. Anything far
outside that is refused here, with a ``QueryTooLarge`` or ``InvalidQuery`` naming the limit,
before it reaches pydantic, the expression parser, a regex, pickling or the worker pool.
Every check is one linear pass without recursion, so the checks themselves cannot be made
slow or overflow the stack.

The same functions guard every entrance: ``barb query``, ``/query``, the model's
``execute_query`` tool and the worker pool (in the parent, before a job is pickled).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import signal
import time
from collections.abc import Iterator
from functools import cache
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from barb.errors import InvalidJSON, InvalidQuery, QueryTimeout, QueryTooLarge
from barb.script.parser import MAX_DEPTH as MAX_EXPRESSION_DEPTH

_SURROGATE = re.compile("[\ud800-\udfff]")
_EXAMPLE = 'e.g. {"session": "RTH", "from": "daily", "select": "mean(range)"}'


class QueryLimits(BaseSettings):
    """Read from ``BARB_*`` environment variables; the defaults fit every real query."""

    model_config = SettingsConfigDict(env_prefix="BARB_", env_file=".env", extra="ignore")

    max_query_chars: int = Field(default=20_000, ge=100, description="Raw JSON text")
    # {"then": {"map": {"x": "…"}}} is 3 levels; 8 leaves room for what comes next.
    max_json_depth: int = Field(default=8, ge=3, description="Nesting of JSON objects/lists")
    max_items: int = Field(default=200, ge=10, description="Entries in one JSON list or object")
    max_nodes: int = Field(default=2_000, ge=50, description="JSON values in the whole query")
    max_string_chars: int = Field(default=4_000, ge=100, description="One JSON string")
    max_int_digits: int = Field(default=18, ge=3, description="Digits of a JSON integer")
    max_expression_depth: int = Field(
        default=MAX_EXPRESSION_DEPTH, ge=4, description="Bracket nesting inside one expression"
    )
    query_timeout_s: float = Field(
        default=20.0, gt=0, description="Per query, in the bot, `barb query` and `barb chat`"
    )


@cache
def default_limits() -> QueryLimits:
    return QueryLimits()


def load_query_text(text: str, limits: QueryLimits | None = None) -> Any:
    """Decode a query's JSON text within the limits; raises InvalidJSON or QueryTooLarge."""
    limits = limits or default_limits()
    if len(text) > limits.max_query_chars:
        raise _too_large(
            f"The query is {len(text):,} characters long; the limit is {limits.max_query_chars:,}.",
            "ask for less in one query, or split it into several",
        )
    # The C decoder recurses once per level: measure the nesting before it sees the text.
    depth = json_text_depth(text)
    if depth > limits.max_json_depth:
        raise _too_deep(limits)

    def bounded_int(digits: str) -> int:
        if len(digits.lstrip("-")) > limits.max_int_digits:
            raise _too_large(
                f"The query holds a {len(digits.lstrip('-')):,}-digit number; the limit is "
                f"{limits.max_int_digits} digits.",
                "use a smaller number",
            )
        return int(digits)

    def no_constant(name: str) -> Any:
        raise InvalidJSON(
            f"The query is not valid JSON: {name} is not a JSON value.",
            step="parse",
            hint="write numbers as digits; there is no NaN or Infinity in JSON",
        )

    def one_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        # JSON keeps the last of two equal keys: a second "where" dropped the first, a
        # condition the person confirmed, with nothing said (p31a Q18).
        names = [name for name, _ in pairs]
        twice = next((name for name in names if names.count(name) > 1), None)
        if twice is not None:
            raise InvalidJSON(
                f'The query names "{twice}" twice; JSON keeps only the last one.',
                step="parse",
                hint=(
                    'write it once: two conditions as one "where" joined with and '
                    "(\"not holiday() and t in ('09:30', '15:30')\")"
                    if twice == "where"
                    else f'one "{twice}" holding everything it should'
                ),
            )
        return dict(pairs)

    try:
        value = json.loads(
            text, parse_int=bounded_int, parse_constant=no_constant, object_pairs_hook=one_each
        )
    except json.JSONDecodeError as exc:
        raise InvalidJSON(
            f"The query is not valid JSON: {exc.msg} at position {exc.pos}.",
            step="parse",
            hint=_EXAMPLE,
            details={"reason": exc.msg, "position": exc.pos},
        ) from None
    check_query_value(value, limits)
    return value


def json_text_depth(text: str) -> int:
    """The deepest nesting of [] and {} in JSON text, outside strings; one pass, no recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def check_query_value(value: Any, limits: QueryLimits | None = None) -> None:
    """Walk a decoded query (iteratively) and refuse what no real query looks like."""
    limits = limits or default_limits()
    stack: list[tuple[Any, int, str]] = [(value, 1, "query")]
    nodes = 0
    while stack:
        item, depth, where = stack.pop()
        nodes += 1
        if nodes > limits.max_nodes:
            raise _too_large(
                f"The query has more than {limits.max_nodes:,} values; no query needs that many.",
                "ask for less in one query, or split it into several",
            )
        if isinstance(item, dict | list | tuple):
            if depth > limits.max_json_depth:
                raise _too_deep(limits)
            if len(item) > limits.max_items:
                raise _too_large(
                    f"'{where}' has {len(item):,} entries; the limit is {limits.max_items}.",
                    "ask for fewer columns or keys in one query",
                )
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str):
                        raise InvalidQuery(
                            f"'{where}' has a key that is not text: {type(key).__name__}.",
                            step="parse",
                            hint=_EXAMPLE,
                        )
                    _check_string(key, where, limits)
                    stack.append((child, depth + 1, key if where == "query" else where))
            else:
                stack.extend((child, depth + 1, where) for child in item)
        elif isinstance(item, str):
            _check_string(item, where, limits)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            # Compared, never printed: str() of a 5,000-digit int raises in Python 3.11.
            if abs(item) >= 10**limits.max_int_digits:
                raise _too_large(
                    f"'{where}' holds a number with more than {limits.max_int_digits} digits.",
                    "use a smaller number",
                )
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidQuery(
                    f"'{where}' holds {item}, which is not a usable number.",
                    step="parse",
                    hint="write a finite number",
                )
        else:
            raise InvalidQuery(
                f"'{where}' holds a {type(item).__name__}, which is not a JSON value.",
                step="parse",
                hint=_EXAMPLE,
            )


def expression_depth(text: str) -> int:
    """The deepest bracket nesting in an expression, outside quotes; one pass."""
    depth = deepest = 0
    quote: str | None = None
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest


def _check_string(text: str, where: str, limits: QueryLimits) -> None:
    if len(text) > limits.max_string_chars:
        raise _too_large(
            f"A text in '{where}' is {len(text):,} characters long; the limit is "
            f"{limits.max_string_chars:,}.",
            "split the work into several map columns",
        )
    if _SURROGATE.search(text):
        # A lone UTF-16 half cannot be printed, stored or sent; no real query holds one.
        raise InvalidQuery(
            f"A text in '{where}' holds an invalid character (a lone UTF-16 surrogate).",
            step="parse",
            hint="retype the text without the broken character",
        )
    depth = expression_depth(text)
    if depth > limits.max_expression_depth:
        raise _too_large(
            f"An expression in '{where}' nests brackets {depth} deep; the limit is "
            f"{limits.max_expression_depth}.",
            "split the work into several map columns",
        )


def _too_large(message: str, hint: str) -> QueryTooLarge:
    return QueryTooLarge(message, step="parse", hint=hint)


def _too_deep(limits: QueryLimits) -> QueryTooLarge:
    return _too_large(
        f"The query nests JSON more than {limits.max_json_depth} levels deep.",
        "a query is one object of fields; write lists flat, e.g. "
        '"select": ["mean(range)", "max(high)"]',
    )


#: How soon an alarm rings again when the one raised was dropped (see ``time_limit``).
_ALARM_AGAIN_S = 0.25


class _TimeUp(BaseException):
    """Raised by the alarm; a BaseException so that no ``except Exception`` swallows it."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Stop the code inside after ``seconds`` with QueryTimeout (main thread, Unix only).

    For one query in a command-line process, where there is no worker to kill; the bot's
    pool enforces the same limit by replacing the worker.

    Nested in another (a chart's 0.8 s inside `barb query`'s 20 s), it ends no later than
    the outer one, whose alarm is said by the outer ``time_limit``, and on exit it re-arms
    the outer timer with what is left of it: it used to disarm it, and whatever ran after
    the inner block was no longer limited.
    """

    armed = [True]

    def alarm(signum: int, frame: Any) -> None:
        if armed[0]:  # not once the clean-up below has begun
            # Raised inside a finalizer (a weakref callback, a __del__, which the garbage
            # collector may run at any line), the exception is printed and dropped by
            # Python, and the limit with it: the alarm rings again until it is heard.
            signal.setitimer(signal.ITIMER_REAL, _ALARM_AGAIN_S)
            raise _TimeUp

    started = time.monotonic()
    outer_left, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    outer_first = 0 < outer_left <= seconds
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, outer_left if outer_first else seconds)
    outer_up = False
    try:
        yield
    except _TimeUp:
        armed[0] = False  # heard: the alarm that would ring again says nothing more
        if outer_first:
            outer_up = True
            raise  # the outer limit's: its own time_limit says so, with its seconds
        raise timeout_error(seconds) from None
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left and not outer_up:
            # A timer of 0 would disarm it: one already due fires at once.
            left = max(outer_left - (time.monotonic() - started), 1e-6)
            signal.setitimer(signal.ITIMER_REAL, left, outer_interval)


def timeout_error(seconds: float) -> QueryTimeout:
    return QueryTimeout(
        f"The query took longer than {seconds:g} seconds and was stopped.",
        step="execute",
        hint="try a shorter period or a longer timeframe",
    )
