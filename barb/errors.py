"""One exception tree for the engine.

Each type decides who reads it. ``QueryError`` and its subclasses are for the model (and the
person who wrote raw Barb Script): they carry a stage (``step``), a machine-readable
``error_type``, a message naming what exists, and a hint. ``DataError`` is for the person
running ``barb data``: it names the file, the line and the problem. Anything else that escapes
the engine is a bug, reported to the developer with a reference id.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

MAX_REPORTED_ERRORS = 5


class BarbError(Exception):
    """Base of every error the engine raises on purpose."""


#: Exceptions that stop a query from outside it, registered by whoever raises them
#: (``stops_from_outside``): a worker's time limit, which a signal handler raises as an
#: ordinary ``Exception`` at whatever line the engine is on (Celery's
#: ``SoftTimeLimitExceeded``, registered by ``bot.pool.queue_app``). The engine's own limit
#: (``barb.script.limits.time_limit``) needs none: its alarm is a ``BaseException``.
_FROM_OUTSIDE: list[type[BaseException]] = []


def stops_from_outside(kind: type[BaseException]) -> None:
    """Let ``kind`` through the engine's catch-all for its own bugs (``execute``), to the
    code that raised it and says what it means; the engine itself knows nothing of it.

    >>> class WorkerTimeUp(Exception): ...
    >>> stops_from_outside(WorkerTimeUp)
    >>> stopped_from_outside(WorkerTimeUp())
    True
    """
    if kind not in _FROM_OUTSIDE:
        _FROM_OUTSIDE.append(kind)


def stopped_from_outside(exc: BaseException) -> bool:
    return isinstance(exc, tuple(_FROM_OUTSIDE))


class DataError(BarbError):
    """A data file is missing, malformed or inconsistent."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        where = ""
        if path:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        super().__init__(f"{where}{message}")


class QueryError(BarbError):
    """A query that cannot run, explained so that the model can fix it."""

    error_type = "QueryError"

    def __init__(
        self,
        message: str,
        *,
        step: str = "query",
        hint: str | None = None,
        details: dict[str, Any] | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.step = step
        self.hint = hint
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "error": True,
            "error_type": self.error_type,
            "message": self.message,
            "step": self.step,
        }
        if self.hint:
            out["hint"] = self.hint
        if self.details:
            out["details"] = self.details
        return out


class InvalidQuery(QueryError):
    """The JSON does not have the shape of a Barb Script query."""

    error_type = "InvalidQuery"


class InvalidJSON(InvalidQuery):
    """The query text is not JSON at all."""

    error_type = "InvalidJSON"


class ExpressionSyntaxError(QueryError):
    """An expression could not be parsed; carries the position and a marked snippet."""

    error_type = "SyntaxError"


class UnknownColumn(QueryError):
    error_type = "UnknownColumn"


class UnknownFunction(QueryError):
    error_type = "UnknownFunction"


class ArgumentError(QueryError):
    """Wrong number or type of arguments to a function."""

    error_type = "ArgumentError"


class TypeMismatch(QueryError):
    """An operator or clause got a value of the wrong kind (e.g. a number used as a filter)."""

    error_type = "TypeError"


class InvalidPeriod(QueryError):
    error_type = "InvalidPeriod"


class UnknownSession(QueryError):
    error_type = "UnknownSession"


class InvalidSession(QueryError):
    """A session written as a time window that is malformed, empty or outside trading hours."""

    error_type = "InvalidSession"


class UnknownTimeframe(QueryError):
    error_type = "UnknownTimeframe"


class UnknownInstrument(QueryError):
    error_type = "UnknownInstrument"


class UnknownEvent(QueryError):
    error_type = "UnknownEvent"


class QueryTooLarge(QueryError):
    error_type = "QueryTooLarge"


class NoData(QueryError):
    """The query names an instrument whose bars are not loaded on this machine."""

    error_type = "NoData"


class QueryTimeout(QueryError):
    """The query ran past its time limit and was stopped."""

    error_type = "QueryTimeout"


class ExecutionError(QueryError):
    """The query was valid but a step failed while running."""

    error_type = "ExecutionError"


class OutOfMemory(QueryError):
    """The query needed more memory than its process may have (the worker's ceiling)."""

    error_type = "OutOfMemory"


def out_of_memory(ceiling_bytes: int | None) -> OutOfMemory:
    """What the model reads when a query ran out of memory, with the ceiling it ran into,
    e.g. "The query needed more memory than a worker has (3 GB); join fewer instruments,
    use a shorter period or a longer timeframe." (without a ceiling: "than there is")."""
    has = "there is" if ceiling_bytes is None else f"a worker has ({size_text(ceiling_bytes)})"
    return OutOfMemory(
        f"The query needed more memory than {has}; join fewer instruments, use a shorter "
        "period or a longer timeframe.",
        step="execute",
    )


def size_text(size_bytes: int) -> str:
    """3 GB, 2.5 GB, 400 MB (binary units, as the ceiling is set in)."""
    if size_bytes >= 1 << 30:
        return f"{round(size_bytes / (1 << 30), 1):g} GB"
    return f"{round(size_bytes / (1 << 20)):,} MB"


class MultipleErrors(QueryError):
    """Several independent problems found in one validation pass, reported together."""

    def __init__(self, errors: list[QueryError]):
        self.errors = errors
        first = errors[0]
        self.error_type = first.error_type
        shown = errors[:MAX_REPORTED_ERRORS]
        # One misspelt function in map and where is one mistake: its message once (each
        # step keeps its own entry in ``errors``).
        message = " ".join(dict.fromkeys(e.message for e in shown))
        if len(errors) > len(shown):
            message += f" … and {len(errors) - len(shown)} more."
        super().__init__(message, step=first.step, hint=first.hint)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["errors"] = [
            {k: v for k, v in e.to_dict().items() if k != "error"}
            for e in self.errors[:MAX_REPORTED_ERRORS]
        ]
        return out


def sorted_names(names: Iterable[str]) -> list[str]:
    """Names in the order an "Available: …" list gives them: alphabetical, each once.

    Sorted because the names often come from a set, whose order changes from one process to
    the next: the same mistake must get the same message (and the same did-you-mean) every
    time.
    """
    return sorted(set(names), key=lambda name: (name.lower(), name))


def closest_names(name: str, names: Iterable[str], *, n: int = 3, cutoff: float = 0.7) -> list[str]:
    """The ``n`` names most like ``name``, closest first; equally close ones alphabetically.

    difflib.get_close_matches breaks a tie by the reverse of the name, so rolling_avg listed
    rolling_max (0.82) before rolling_mean and rolling_rank (0.78 each), and rolling_average
    rolling_rank first: a hint taking the first name led to rolling_max's 25,400 for a 20-day
    mean of 23,677 (p34c).

    >>> closest_names("rolling_maxx", ["rolling_mean", "rolling_max", "rolling_min"])
    ['rolling_max', 'rolling_mean', 'rolling_min']
    """
    scored = [(_likeness(name, other), other) for other in sorted_names(names)]
    ranked = sorted((s for s in scored if s[0] >= cutoff), key=lambda s: -s[0])  # stable
    return [other for _, other in ranked[:n]]


# How far the closest name must lead the next one for a hint to name it alone: rolling_median
# is 0.92 like rolling_mean and 0.88 like rolling_min, and neither computes a median.
_CLEAR_LEAD = 0.05
# How alike a name must be for a hint to name it alone (momentum is 0.62 like month).
_CONFIDENT = 0.75


def one_closest_name(name: str, names: Iterable[str]) -> str | None:
    """The one name a did-you-mean can offer for ``name``: clearly the closest, and close;
    None where two are about as close or none is close enough.

    >>> one_closest_name("meen", ["mean", "median", "min"])
    'mean'
    >>> one_closest_name("momentum", ["month", "mean"]) is None
    True
    >>> one_closest_name("medain", ["mean", "median"])
    'median'

    """
    names = set(names)
    # Two letters swapped (medain, rolling_mena) score below the nearest other name.
    swapped = [other for other in names if sorted(other.lower()) == sorted(name.lower())]
    if len(swapped) == 1:
        return swapped[0]
    scored = sorted(((_likeness(name, other), other) for other in names), reverse=True)
    if not scored or scored[0][0] < _CONFIDENT:
        return None
    if len(scored) > 1 and scored[0][0] - scored[1][0] < _CLEAR_LEAD:
        return None
    return scored[0][1]


def _likeness(name: str, other: str) -> float:
    return difflib.SequenceMatcher(None, name.lower(), other.lower(), autojunk=False).ratio()


def available(names: Iterable[str], *, limit: int | None = None) -> str:
    """``close, high, low, …``: the sorted names, at most ``limit`` of them."""
    ordered = sorted_names(names)
    if limit is not None and len(ordered) > limit:
        return ", ".join(ordered[:limit]) + ", …"
    return ", ".join(ordered)


def raise_collected(errors: list[QueryError]) -> None:
    """Raise nothing, the single error, or all of them together."""
    if not errors:
        return
    if len(errors) == 1:
        raise errors[0]
    raise MultipleErrors(errors)
