"""holiday_shift weighs a moved mean, median or sum against the same statistic of its values'
sizes; for values never negative (a range, a volume) that is the statistic itself, and
``_unsigned`` lets it skip evaluating it again. Pinned: the shortcut is taken where it may be
and never where a value is negative, and the notes read the same as without it."""

from __future__ import annotations

import pytest

import barb.caveats.calendar as calendar
import barb.interpreter as interpreter
from barb import execute

BY_WEEKDAY = {"session": "RTH", "from": "daily", "group_by": "dayname()"}

UNSIGNED = [
    "mean(high - low) as range",
    "median(high - low) as range",
    "sum(volume) as volume",
    "mean(volume) as volume",
]
SIGNED = ["mean(close - open) as move", "sum(close - prev(close)) as net"]


def _run(select: str, settings, period: str) -> tuple[list[str], list[calendar.HolidayShift]]:
    """The query's warnings and each holiday shift it weighed."""
    shifts: list[calendar.HolidayShift] = []
    real = calendar.holiday_shift

    def recording(*args, **kwargs):
        shift = real(*args, **kwargs)
        if shift is not None:
            shifts.append(shift)
        return shift

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(interpreter, "holiday_shift", recording)
        result = execute(BY_WEEKDAY | {"select": select, "period": period}, "NQ", settings=settings)
    assert result.ok, result
    return list(result.metadata.warnings), shifts


@pytest.mark.parametrize("select", UNSIGNED + SIGNED)
@pytest.mark.parametrize("period", ["2020:2025"])
def test_the_shortcut_reads_as_the_sizes_evaluated(
    select: str, period: str, sample_settings
) -> None:
    taken: list[bool] = []
    real = calendar._unsigned

    def spying(expr, answer) -> bool:
        taken.append(real(expr, answer))
        return taken[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(calendar, "_unsigned", spying)
        said, shifts = _run(select, sample_settings, period)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(calendar, "_unsigned", lambda expr, answer: False)
        said_slow, shifts_slow = _run(select, sample_settings, period)

    # Holiday sessions among the rows, so the shortcut's sizes are really read.
    assert any(shift.most > 0 for shift in shifts), shifts
    assert taken == [select in UNSIGNED] * len(taken) and taken
    assert said == said_slow
    for fast, slow in zip(shifts, shifts_slow, strict=True):
        assert fast.most == pytest.approx(slow.most, rel=1e-12, abs=1e-15)
        assert fast.ends == slow.ends
