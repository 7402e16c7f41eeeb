"""A result's proof files named in the person's words and language.

The chart and the CSV sent to a person carry one name, built from what the chart says:
instrument, session, what was computed as its headline names it, and the period the data
cover: ``NQ_RTH_average_range_by_weekday_2008-01-02_2026-01-07.png``,
``NQ_RTH_средний_диапазон_по_дню_недели_2008-01-02_2026-01-07.csv``. The engine's names
(``mean_range``, ``dayname``) are no words of the person's, and a Russian chat got English
file names under Russian captions. Letters of any script are kept (Telegram and every
phone show a Cyrillic name as written); anything else a file system may refuse (``/``,
``:``, ``>``, ``%``) becomes ``_``.
"""

from __future__ import annotations

import re
from typing import Any

from barb.charts.columns import column_name, row_word
from barb.charts.header import by_key_text
from barb.charts.where_words import where_text
from barb.charts.words import Words, words_for
from barb.errors import BarbError
from barb.i18n import DEFAULT, N_, text
from barb.proof_names import as_list
from barb.result import Metadata, Result
from barb.script import ast
from barb.script.parser import parse_select_item

# Room left for "what was computed" in a file name; the whole name stays under ~110 chars.
MAX_WHAT_CHARS = 60
#: Comparisons as signs every file system keeps ("<" and ">" are refused by Windows): a
#: where's "range > 400" was "range_400", its sign dropped.
#: A formula's "/" and "*" likewise ("range_open_100" had lost "range / open * 100").
_SIGNS = (
    ("!=", "≠"), (">=", "≥"), ("<=", "≤"), ("==", "="), (">", "＞"), ("<", "＜"),
    ("/", "÷"), ("*", "×"),
)  # fmt: skip
#: What a file system or a download may not keep in a name: anything but letters of any
#: script, digits, "-", "+", "." (a number's "-3.4", a date's dashes), brackets and those
#: signs.
_UNSAFE = re.compile(r"[^\w.\-+()=≠≥≤＞＜÷×]+|_+")


def safe_name(words_text: str) -> str:
    """``words_text`` as a piece of a file name: words joined by ``_``, nothing else."""
    for sign, kept in _SIGNS:
        words_text = words_text.replace(sign, kept)
    return _UNSAFE.sub("_", words_text).strip("_.")


def _measures(stage: dict[str, Any], result: Result, words: Words) -> list[str]:
    """What each selected column is called on the chart: "average range", «средний
    диапазон»; a name the query gave as written."""
    said = []
    for item in as_list(stage.get("select")):
        try:
            expr, alias = parse_select_item(item)
        except BarbError:
            said.append(item)
            continue
        said.append(column_name(alias or ast.default_name(expr), result, words))
    return said


def _what(result: Result, words: Words) -> str:
    """What was computed, in the chart's words: its measures, its groups ("by weekday",
    «по дню недели»), a listing's rows, first N and its sort, and the where."""
    query = result.query
    then = query.get("then")
    last = then if isinstance(then, dict) and then else query  # the stage the table is of
    parts = _measures(last, result, words)
    group_by = as_list(last.get("group_by"))
    if group_by:
        if not parts:  # groups alone are counted
            parts.append(column_name("count", result, words))
        keys = ", ".join(by_key_text(k, words, query) for k in group_by)
        parts.append(words("sub.by", groups=keys))
    if not parts:
        parts.append(row_word(result, words))
        if last.get("limit"):
            parts.append(words("sub.first", count=last["limit"]))
        if last.get("sort"):
            column, *direction = str(last["sort"]).split(",")[0].split() or [""]
            parts.append(f"{column_name(column, result, words)} {' '.join(direction)}")
    if query.get("where"):
        parts.append(where_text(str(query["where"]), set(), words)[0])
    what = safe_name(" ".join(parts))
    return what[:MAX_WHAT_CHARS].rstrip("_.") if len(what) > MAX_WHAT_CHARS else what


def _period(metadata: Metadata) -> str:
    if metadata.period_start is None or metadata.period_end is None:
        return safe_name(metadata.period_requested or "") or "no_bars"
    start, end = metadata.period_start.isoformat(), metadata.period_end.isoformat()
    return start if start == end else f"{start}_{end}"


def proof_basename(result: Result, language: str | None = DEFAULT) -> str:
    """The file name's stem: instrument, session, what was computed, period."""
    words = words_for(language)
    what = _what(result, words) or "barb"
    m = result.metadata
    if m is None:
        return f"barb_{what}"
    head = "_".join(safe_name(part) for part in (m.instrument, m.session) if part)
    return f"{head}_{what}_{_period(m)}"


def chart_filename(result: Result, language: str | None = DEFAULT) -> str:
    return proof_basename(result, language) + ".png"


def csv_filename(
    result: Result, cut: tuple[int, int] | None = None, language: str | None = DEFAULT
) -> str:
    """The CSV's name; ``cut`` (its rows, of how many) when it holds only the first rows:
    ``NQ_ETH_b_2020-01-02_2024-12-31_first_50000_of_1774380_rows.csv``, where the period
    alone read as all of it (its 50,000 minutes end on 2020-02-21); in ``language``
    («…_первые_50000_из_1774380_строк.csv»)."""
    if cut is None:
        return proof_basename(result, language) + ".csv"
    held, whole = cut
    said = text("barb", N_("csv.cut_name"), language, plural_of=whole, held=held, whole=whole)
    return f"{proof_basename(result, language)}_{said}.csv"
