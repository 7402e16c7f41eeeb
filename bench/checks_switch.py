"""The engine's warning checks, found by name, to time or to turn off in this process only.

A check is a function the interpreter or a stage calls once a query's rows are known (the
holiday among the days ranked, the groups within noise): every ``*_caveat`` name of
``barb.interpreter`` and ``barb.stages``, and the few named otherwise (``OTHER_CHECKS``).
Benchmarks replace them where those modules call them: ``bench/check_costs.py`` wraps each
to add up its cost; ``bench/compare_engines.py --without-checks`` times the engine with all
of them saying nothing, the same work as an engine from before the checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

# Checks whose names do not end in _caveat: setup_noise weighs a where's mean against the
# period's (``SetupMean``), sample_sizes and sample_caveats count the rows each statistic
# read and which the data's start left empty (``DataStart.unread``), lookahead_caveats
# finds values read past a row's own time. Off, none of their work is done.
OTHER_CHECKS = (
    "even_groups",
    "counted_noise",
    "empty_groups",
    "scope_caveats",
    "open_group",
    "setup_noise",
    "sample_sizes",
    "sample_caveats",
    "lookahead_caveats",
)


def checks() -> Iterator[tuple[ModuleType, str, Callable[..., Any]]]:
    """Each check as the module that calls it, the name it calls it by, and the function."""
    import barb.interpreter as interpreter
    import barb.stages as stages

    for module in (interpreter, stages):
        for name in dir(module):
            value = getattr(module, name)
            if callable(value) and (name.endswith("_caveat") or name in OTHER_CHECKS):
                yield module, name, value


def _nothing_like(value: object) -> object:
    """What a check returns when it finds nothing, shaped as ``value``: an empty list, a
    tuple of empties, its type's defaults (``EvenGroups()``), or None (for a value that has
    no empty form: ``open_group`` returns an ``OpenGroup`` or None)."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(_nothing_like(item) for item in value)
    try:
        return type(value)()
    except TypeError:
        return None


class ChecksSwitch:
    """Every check, on or off. Off, each returns its "nothing found", whose shape the switch
    learns from the checks' own answers to ``warm`` (the questions to be timed)."""

    def __init__(self, warm: Callable[[], object]) -> None:
        self.original = {(module, name): check for module, name, check in checks()}
        self.nothing: dict[tuple[ModuleType, str], object] = {}
        for (module, name), check in self.original.items():
            setattr(module, name, self._learning((module, name), check))
        try:
            warm()
        finally:
            self.on()

    def _learning(
        self, key: tuple[ModuleType, str], check: Callable[..., Any]
    ) -> Callable[..., Any]:
        def learn(*args: Any, **kwargs: Any) -> Any:
            said = check(*args, **kwargs)
            self.nothing.setdefault(key, _nothing_like(said))
            return said

        return learn

    def on(self) -> None:
        for (module, name), check in self.original.items():
            setattr(module, name, check)

    def off(self) -> None:
        """Checks the warm-up never reached stay on: the questions timed do not call them."""
        for (module, name), nothing in self.nothing.items():
            setattr(module, name, _saying_nothing(nothing))


def _saying_nothing(like: object) -> Callable[..., Any]:
    """A check off: it returns ``like``'s empty form, fresh on each call. An empty list or
    None, what most checks say when they find nothing, is returned as is, with no call to
    ``_nothing_like``: the 60-70 checks a question meets had cost the switch's own
    function calls, 0.05-0.1 ms, which an engine without them would not pay."""
    if like is None:
        return lambda *args, **kwargs: None
    if isinstance(like, list) and not like:
        return lambda *args, **kwargs: []
    return lambda *args, **kwargs: _nothing_like(like)
