"""Engine features a question may require, each with a probe that asks the engine itself.

A question tagged ``requires: [second_stage]`` is skipped (and counted as skipped) while the
engine in this checkout cannot run it. Probes run tiny real queries rather than inspecting
Barb's internals, so a feature counts as present exactly when Barb Script accepts it and
computes it the documented way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from barb import execute
from barb.result import Result
from barb.settings import EngineSettings


@dataclass(frozen=True)
class Feature:
    name: str
    description: str
    probe: dict[str, Any]
    # Beyond "the probe ran": what its result must be for the feature to count as present.
    check: Callable[[Result], bool] = lambda result: True


def _scalar_is(value: float) -> Callable[[Result], bool]:
    return lambda result: result.summary is not None and result.summary.value == value


_DAY = {"session": "RTH", "from": "daily", "period": "2024-01"}

FEATURES: dict[str, Feature] = {
    f.name: f
    for f in (
        Feature(
            "first_last",
            "first(x) / last(x) aggregates",
            {**_DAY, "select": ["first(open)", "last(close)"]},
        ),
        Feature(
            "arg_max",
            "arg_max(arg, val) / arg_min(arg, val) aggregates",
            {**_DAY, "select": ["arg_max(close, range)", "arg_min(close, range)"]},
        ),
        Feature(
            "last_n_bars",
            'period "last_N_bars"',
            {"session": "RTH", "from": "daily", "period": "last_3_bars", "select": "count()"},
            _scalar_is(3),
        ),
        Feature(
            "instrument_field",
            '"instrument" field in the query',
            {**_DAY, "instrument": "ES", "select": "count()"},
        ),
        Feature(
            "join_instrument",
            '"join": {"instrument": …} adds <sym>_open … columns',
            {**_DAY, "join": {"instrument": "ES"}, "select": "mean(es_close)"},
        ),
        Feature(
            "join_session",
            'a joined instrument in its own session: {"instrument": "CL", "session": …}',
            {
                **_DAY,
                "join": {"instrument": "CL", "session": "OVERNIGHT"},
                "select": "mean(cl_close)",
            },
        ),
        Feature(
            "time_window_session",
            'custom time-window sessions such as "09:30-09:45"',
            {"session": "09:30-09:45", "from": "daily", "period": "2024-01", "select": "count()"},
        ),
        Feature(
            "second_stage",
            '"then": a second aggregation stage',
            {
                **_DAY,
                "group_by": "dayname()",
                "select": "count() as n",
                "then": {"select": "sum(n)"},
            },
        ),
        Feature(
            "history_aware_period",
            "periods select rows after map: prev() on a period's first day sees the day before",
            {
                "session": "RTH",
                "from": "daily",
                "period": "2024-01-03",
                "map": {"before": "prev(close)"},
                "where": "before > 0",
                "select": "count()",
            },
            _scalar_is(1),
        ),
    )
}


# The errors of an engine that does not have a feature yet: an unknown field, function,
# period form or session name (several at once come as MultipleErrors).
_NOT_KNOWN = {
    "InvalidQuery",
    "UnknownFunction",
    "InvalidPeriod",
    "UnknownSession",
    "MultipleErrors",
}


class UnknownFeature(ValueError):
    pass


def available(names: set[str], settings: EngineSettings | None = None) -> dict[str, bool]:
    """Which of ``names`` the engine supports now (probed on NQ's data)."""
    unknown = names - FEATURES.keys()
    if unknown:
        raise UnknownFeature(
            f"Unknown required feature(s): {', '.join(sorted(unknown))}. "
            f"Known: {', '.join(FEATURES)}."
        )
    present = {}
    for name in sorted(names):
        feature = FEATURES[name]
        result = execute(feature.probe, "NQ", settings=settings)
        if result.error is None:
            present[name] = feature.check(result)
        else:
            # Only "I do not know this" means absent; any other failure means the feature is
            # there but broken, and its questions must run and fail where everyone sees them.
            present[name] = result.error.to_dict()["error_type"] not in _NOT_KNOWN
    return present
