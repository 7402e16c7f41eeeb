"""Words for a result's proof: its file names.

The chart and the CSV sent to a person carry the same name, built from what was asked:
instrument, session, timeframe, what was computed and the period the data actually covers,
e.g. ``NQ_RTH_daily_mean_range_by_weekday_2008-01-02_2026-01-07.png``. Everything here reads
only ``Result.query`` and ``Result.metadata``, so it works for any result shape.
"""

from __future__ import annotations

import re
from typing import Any

from barb.i18n import DEFAULT, N_, text
from barb.result import Metadata, Result

# Room left for "what was computed" in a file name; the whole name stays under ~100 chars.
MAX_WHAT_CHARS = 44

_OPERATOR_WORDS = (
    (">=", " ge "),
    ("<=", " le "),
    ("!=", " ne "),
    ("==", " eq "),
    (">", " gt "),
    ("<", " lt "),
    ("=", " eq "),
)
_UNSAFE = re.compile(r"[^A-Za-z0-9]+")
# A minus sign or a decimal point inside a number survives slugging: "-3.4" stays "-3.4".
_NUMBER = re.compile(r"(?<![A-Za-z0-9_)])-?\d+(?:\.\d+)?")


def as_list(value: Any) -> list[str]:
    """``select`` and ``group_by`` come as one string or a list in the canonical query."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def slug(text: str) -> str:
    """Lower-case words joined by underscores; operators become words (``>`` → ``gt``)."""
    for op, word in _OPERATOR_WORDS:
        text = text.replace(op, word)
    pieces = []
    position = 0
    for match in _NUMBER.finditer(text):
        pieces += [_UNSAFE.sub("_", text[position : match.start()]), "_", match.group(), "_"]
        position = match.end()
    pieces.append(_UNSAFE.sub("_", text[position:]))
    return re.sub(r"_+", "_", "".join(pieces)).strip("_").lower()


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rstrip("_")


def _what(query: dict[str, Any]) -> str:
    """What was computed, as a short slug: ``mean_range_by_weekday``, ``top5_by_chg``."""
    select = [
        re.split(r"\s+as\s+", s, flags=re.IGNORECASE)[-1] for s in as_list(query.get("select"))
    ]
    parts = [slug(s) for s in select]
    group_by = as_list(query.get("group_by"))
    if group_by:
        parts.append("by_" + "_".join(slug(g) for g in group_by))
    sort, limit = query.get("sort"), query.get("limit")
    if not select and not group_by:
        if sort and limit:
            parts.append(f"top{limit}_by_{slug(str(sort).split()[0])}")
        else:  # the rows themselves, named after the columns the query added
            parts.append("_".join(slug(name) for name in query.get("map") or {}) or "bars")
    if query.get("where"):
        parts.append("where_" + slug(str(query["where"])))
    return _cap("_".join(p for p in parts if p), MAX_WHAT_CHARS)


def _period_slug(metadata: Metadata) -> str:
    if metadata.period_start is None or metadata.period_end is None:
        return slug(metadata.period_requested) or "no_bars"
    return f"{metadata.period_start.isoformat()}_{metadata.period_end.isoformat()}"


def proof_basename(result: Result) -> str:
    """A file name stem with safe characters only (letters, digits, ``_``, ``-``)."""
    if result.metadata is None:
        return "barb_" + (_what(result.query) or "result")
    m = result.metadata
    head = "_".join(_UNSAFE.sub("", part) for part in (m.instrument, m.session, m.timeframe))
    return f"{head}_{_what(result.query)}_{_period_slug(m)}"


def chart_filename(result: Result) -> str:
    return proof_basename(result) + ".png"


def csv_filename(
    result: Result, cut: tuple[int, int] | None = None, language: str | None = DEFAULT
) -> str:
    """The CSV's name; ``cut`` (its rows, of how many) when it holds only the first rows:
    ``NQ_ETH_1m_mean_b_2020-01-02_2024-12-31_first_50000_of_1774380_rows.csv``, where the
    period alone read as all of it (its 50,000 minutes end on 2020-02-21); in ``language``
    («…_первые_50000_из_1774380_строк.csv», where a Russian chat's file said it in English
    under a caption in Russian)."""
    if cut is None:
        return proof_basename(result) + ".csv"
    held, whole = cut
    said = text("barb", N_("csv.cut_name"), language, plural_of=whole, held=held, whole=whole)
    return f"{proof_basename(result)}_{said}.csv"
