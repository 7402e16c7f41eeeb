"""The weeks a chart lists that hold fewer trading days than a full week (a holiday in them),
as the engine found them (``Metadata.short_weeks``; ``barb.caveats.short_weeks`` warns the model of
the same weeks): their bars hatched and named in a note, their label in a ranking and a
one-row card saying how many days they hold. The two four-day weeks of Christmas and New
Year were drawn like any other, and their volume read as a 40% fall."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from barb.charts.bars import draw_bars
from barb.charts.words import Words
from barb.result import Result, ShortWeek

# Weeks named in the note; more are counted.
NAMED_WEEKS = 3
HATCH = "///"
HATCH_PT = 2.0  # the white stripes' width


def hatch_bars(ax: Axes, x: np.ndarray, values: np.ndarray, width: float) -> None:
    """White stripes over the bars at ``x`` (``values`` long from zero), drawn already."""
    stripes = draw_bars(ax, x, np.nan_to_num(values), width=width, color="none", edgecolor="white")
    stripes.set_hatch(HATCH)
    stripes.set_hatch_linewidth(HATCH_PT)


def short_week_rows(labels: list[str | None] | None, result: Result) -> dict[int, ShortWeek]:
    """The positions among ``labels`` (the rows' week labels, as the table writes them) of
    the short weeks, each with its week."""
    meta = result.metadata
    if meta is None or not meta.short_weeks or labels is None:
        return {}
    weeks = {week.label: week for week in meta.short_weeks}
    return {at: weeks[label] for at, label in enumerate(labels) if label in weeks}


def week_labels(keys: pd.Series) -> list[str | None]:
    """A week() key's values as the engine labels its weeks: the Monday, ``2025-12-22``."""
    days = pd.to_datetime(keys, errors="coerce")
    return [None if pd.isna(day) else str(day.date()) for day in days]


def short_weeks_note(weeks: list[ShortWeek], words: Words) -> str:
    """``hatched: weeks with fewer trading days (2025-12-22: 4, 2025-12-29: 4)``."""
    named = [f"{week.label}: {week.days}" for week in weeks[:NAMED_WEEKS]]
    if len(weeks) > NAMED_WEEKS:
        named.append(words("more_weeks", count=len(weeks) - NAMED_WEEKS))
    return words("short_weeks_note", names=", ".join(named))


def short_week_label(label: str, week: ShortWeek, words: Words) -> str:
    """A ranked week's label with its days: ``2025-12-22 (4 days)``."""
    return words("short_week_label", label=label, days=week.days, rows=_days(week, words))


def short_week_days(week: ShortWeek, words: Words) -> str:
    """What a card says of a short week: ``4 days, no trading 2026-01-01``."""
    closed = ", ".join(str(day) for day in week.closed)
    return words("short_week_days", days=week.days, rows=_days(week, words), closed=closed)


def _days(week: ShortWeek, words: Words) -> str:
    return words.rows("daily", count=week.days)
