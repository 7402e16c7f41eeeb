"""A query's result as a person reads it, for ``/query`` (no model in between).

The engine's ``summary_text`` is written for the model ("say so in the answer", CSV-like
rows); a person who ran Barb Script themselves gets the numbers, a few rows and where they
come from, in their language. The full rows are in the CSV sent with it.

The text is Markdown, as an answer's commentary is, so that the sender renders both alike:
the table is a code block (Telegram's ``<pre>``, its columns aligned), and every other line
is escaped, so that nothing the engine writes (``range / open * 100``, ``"where": …``) reads
as formatting.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from barb.i18n import N_, decimal, percent
from barb.notes import note_words
from barb.timeframes import resolve_timeframe, timeframe_short
from bot.texts import Language, t


@dataclass(frozen=True)
class Shown:
    """How the chart writes a result's columns, for a text in the same words
    (``QueryOutcome``): ``names`` of columns ("mean_range": «средний диапазон»), ``units``
    of those that are shares or percents, ``key_words`` of a key's values ("Mon": «Пн»),
    ``answers``: a scalar's or dict's numbers with their units ("138.34 points");
    ``note_names``: the columns' names in English, for the engine's (English) notes."""

    names: Mapping[str, str] = field(default_factory=dict)
    units: Mapping[str, str] = field(default_factory=dict)
    key_words: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    answers: Mapping[str, str] = field(default_factory=dict)
    note_names: Mapping[str, str] = field(default_factory=dict)


#: Rows of a table shown in the message; the CSV holds them all.
SHOWN_ROWS = 10
#: Decimals of a table's fractional numbers: each value rounded once, from the table's own.
DECIMALS = 2
#: Most decimals a small number is written with (three significant digits of 0.000123).
MAX_DECIMALS = 6
#: Decimals of a share of rows written as a percent (53.7%), as the chart's headline has.
SHARE_DECIMALS = 1
#: The units a text writes as percents (``barb.column_units``): a share of rows, a percent.
SHARE, PERCENT = "share", "%"

# What Markdown reads as formatting inside a line (emphasis, code, links, raw HTML, an
# entity, strikethrough, a table's cells), and at its start (a heading, a quote, a list).
# An underscore inside a word (mean_range) is no emphasis and stays as it is.
_INLINE = re.compile(r"([\\`*\[\]<>&~|]|(?<![^\W_])_|_(?![^\W_]))")
_LINE_START = re.compile(r"^(\s*)(?:([#>+=-])|(\d+)([.)]))", re.MULTILINE)


def plain(text: str) -> str:
    """``text`` as Markdown that shows exactly ``text``: ``a * b * c`` is no emphasis, a
    line starting "- " or "1." no list. Each such character is backslash-escaped
    (CommonMark's escape, which then means the character itself); the rest stays as
    written, as ``barb chat`` prints it."""
    escaped = _INLINE.sub(r"\\\1", text)
    return _LINE_START.sub(_escaped_start, escaped)


def _escaped_start(match: re.Match[str]) -> str:
    """A line's first mark escaped: ``\\- ``, ``1\\. ``."""
    indent, mark, number, dot = match.groups()
    return f"{indent}\\{mark}" if mark else f"{indent}{number}\\{dot}"


def _number(
    value: Any, lang: Language, decimals: int | None = None, unit: str | None = None
) -> str:
    """A number as the person's locale writes it (``4,512.25`` / ``4 512,25``), with
    ``decimals`` digits after the point when given (a table's column writes all alike);
    no value as "—" (a streak's first row has no run: it read "None"). Of a ``unit``
    "share" (a share of rows, 0.537) a percent with one decimal, 53.7% («53,7 %»), as
    the chart and the headline write it; of "%" the number with its sign."""
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if value != value:  # NaN: no value
        return "—"
    if unit == SHARE:
        return percent(value * 100, lang, SHARE_DECIMALS)
    if isinstance(value, float):
        if decimals is None:
            decimals = _column_decimals([value])
        if round(value, decimals) == 0:  # "-0.00": a sign of nothing shown
            value = 0.0
    written = decimal(value, lang, 0 if isinstance(value, int) else decimals)
    return percent(value, lang, decimals or 0) if unit == PERCENT else written


def _column_decimals(values: Sequence[Any]) -> int | None:
    """The decimals a column of a table is written with: two when any of its numbers has
    a fraction (``655.00`` under ``990.75``), none when all are whole, None for text. A
    column whose numbers are all under 1 keeps three significant digits of its largest, as
    the chart's labels do: a mean daily return of 0.0505% read "0.05", of 0.0009% "-0.00"
    (the chart: 0,051 %, −0,001 %)."""
    floats = [v for v in values if isinstance(v, float) and v == v and abs(v) < 1e15]
    if not floats:
        return None
    if all(v.is_integer() for v in floats):
        return 0
    largest = max(abs(v) for v in floats)
    if 0 < largest < 1:
        return min(MAX_DECIMALS, max(DECIMALS, 2 - math.floor(math.log10(largest))))
    return DECIMALS


def _key_number(value: Any, lang: Language, decimals: int | None) -> str:
    """A group key's whole number as a name, ungrouped (2008, 930); any other key as a
    number."""
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if whole and not isinstance(value, bool):
        return str(int(value))
    return _number(value, lang, decimals)


def _key_cell(value: Any, said: Mapping[str, str] | None) -> Any:
    """A group key's value as the chart writes it («Пн» for Mon, "Wed" for dayofweek 2)."""
    if not said or value is None or isinstance(value, bool):
        return value
    whole = isinstance(value, float) and value.is_integer()
    return said.get(str(int(value)) if whole else str(value), value)


def _table(
    columns: list[str],
    rows: list[list[Any]],
    lang: Language,
    shown: Shown | None = None,
    keys: Collection[str] = (),
) -> list[str]:
    """The rows under their column names, each column as wide as its widest cell, numbers
    right-aligned: a ``<pre>`` block whose columns line up. ``shown``: the columns' units
    and the keys' words, as the chart writes them; ``keys``: the group keys, whose numbers
    are names (a year, an hour, a slot like 930), written as the chart writes them: with
    no thousands separator (a year read "2,008", «2 008»)."""
    shown = shown or Shown()
    units = [shown.units.get(name) for name in columns]
    rows = [
        [_key_cell(v, shown.key_words.get(columns[i])) for i, v in enumerate(row)] for row in rows
    ]
    decimals = [_column_decimals([row[i] for row in rows]) for i in range(len(columns))]
    cells = [
        [
            _key_number(v, lang, decimals[i])
            if columns[i] in keys
            else _number(v, lang, decimals[i], units[i])
            for i, v in enumerate(row)
        ]
        for row in rows
    ]
    numeric = [
        any(isinstance(row[i], int | float) and not isinstance(row[i], bool) for row in rows)
        for i in range(len(columns))
    ]
    headings = [shown.names.get(name, name) for name in columns]
    widths = [
        max(len(c) for c in [name, *(r[i] for r in cells)]) for i, name in enumerate(headings)
    ]

    def line(values: list[str]) -> str:
        return "  ".join(
            v.rjust(widths[i]) if numeric[i] else v.ljust(widths[i]) for i, v in enumerate(values)
        ).rstrip()

    return [line(headings), *(line(row) for row in cells)]


def _code(lines: list[str]) -> list[str]:
    """Lines as a fenced code block, its fence longer than any run of backticks in them."""
    runs = [len(run) for line in lines for run in re.findall(r"`+", line)]
    fence = "`" * max(3, *(n + 1 for n in runs)) if runs else "```"
    return [fence, *lines, fence]


def _shown_rows(
    summary: dict[str, Any], preview: Sequence[dict[str, Any]]
) -> tuple[list[str], list[list[Any]]]:
    """The columns and first rows of a table: from the table's own rows (``preview``), at
    full precision, so that each number is rounded once; the summary's rows, already
    rounded to 4 significant digits for the model (7.245 of 7.24497, shown as 7.25), only
    when there are none."""
    shown: list[str] = summary.get("shown") or summary.get("columns") or []
    if preview and shown and all(name in preview[0] for name in shown):
        return shown, [[row.get(name) for name in shown] for row in preview[:SHOWN_ROWS]]
    return shown, [list(row) for row in (summary.get("top") or [])[:SHOWN_ROWS]]


def result_lines(
    summary: dict[str, Any],
    lang: Language,
    preview: Sequence[dict[str, Any]] = (),
    csv_rows: int | None = None,
    shown: Shown | None = None,
) -> list[str]:
    """The result itself, as Markdown lines: a number, named numbers, or the first rows of a
    table in a code block. ``csv_rows``: the rows the CSV holds when it was cut to fewer
    than the table's; ``shown``: how the chart writes the columns, where that is not the
    engine's way (``QueryOutcome.names``, ``units``, ``key_words``)."""
    shown = shown or Shown()
    answers = _answers(summary, lang, shown)
    if answers is not None:
        return [plain(f"{name}: {said}") for name, said in answers]
    columns, rows = _shown_rows(summary, preview)
    total = summary.get("rows", len(rows))
    values = {"rows": decimal(total, lang), "shown": len(rows)}
    if not total:  # no CSV comes with no rows
        return [plain(t("result_no_rows", lang))]
    if csv_rows is not None and csv_rows < total:
        head = t("result_rows_cut", lang, csv=decimal(csv_rows, lang), **values)
    elif len(rows) >= total:
        # Every row shown: "1 row (also in the CSV)", where "1 rows (first 1 below, all in
        # the CSV)" and «Строк: 1 (первые 1 ниже…)» counted a first of one.
        head = t("result_rows_all", lang, plural_of=total, **values)
    else:
        head = t("result_rows", lang, **values)
    lines = [plain(head)]
    if columns and rows:
        lines += _code(_table(columns, rows, lang, shown, summary.get("by") or ()))
    return lines


def _answers(summary: dict[str, Any], lang: Language, shown: Shown) -> list[tuple[str, str]] | None:
    """A number's or named numbers' names and values as the chart writes them ("average
    range", "138.34 points"); None for a table."""
    names, units = shown.names, shown.units

    def answer(name: str, value: Any) -> tuple[str, str]:
        said = shown.answers.get(name) or _number(value, lang, unit=units.get(name))
        return names.get(name, name), said

    kind = summary.get("type")
    if kind == "scalar":
        [name] = summary.get("columns") or ["value"]
        return [answer(name, summary.get("value"))]
    if kind == "dict":
        return [answer(name, value) for name, value in summary.get("values", {}).items()]
    return None


#: Code in Markdown: a fenced block or an inline span, where a name is meant as written.
_CODE = re.compile(r"(```.*?```|~~~.*?~~~|`[^`\n]*`)", re.S)


def in_words(markdown: str, names: Mapping[str, str]) -> str:
    """The model's answer with the names the engine made for columns ("mean_range",
    "max_high") in the chart's words, as its headline and CSV say them: the model reads the
    engine's names in its summary and repeated them («mean_range за 2024 год — 364,56»).
    Code (`mean(range)`, a query quoted) stays as written."""
    if not any("_" in name and name in markdown for name in names):
        return markdown
    parts = _CODE.split(markdown)
    return "".join(p if i % 2 else _named(p, names) for i, p in enumerate(parts))


def _named(note: str, names: Mapping[str, str]) -> str:
    """An engine's note with the names it made for columns ("mean_range", "max_high") in
    words ("average range"): the person never wrote them. Only names with an underscore:
    a plain word ("count", "range") is also the note's own English."""
    for name in sorted((n for n in names if "_" in n), key=len, reverse=True):
        said = names[name]
        note = re.sub(rf"(?<![\w']){re.escape(name)}(?![\w'])", lambda _, s=said: s, note)
    return note


def _timeframe(name: str, lang: Language) -> str:
    """The bars' timeframe as the chart and the plan name it ("недельные", not "weekly")."""
    found = resolve_timeframe(name)
    return timeframe_short(found, lang) if found is not None else name


def person_text(
    result: dict[str, Any],
    lang: Language,
    preview: Sequence[dict[str, Any]] = (),
    csv_rows: int | None = None,
    shown: Shown | None = None,
    headline: str = "",
) -> str:
    """What ``/query`` answers (Markdown): the result, the bars it came from, the engine's
    notes under a lead-in that says they are its own (in English), and whether the data
    are synthetic. ``preview``: the table's first rows; ``csv_rows``, ``shown``: see
    ``result_lines``; ``headline``: the chart's, which the person reads above this text."""
    summary = result.get("summary", {})
    answers = _answers(summary, lang, shown or Shown())
    if answers and headline and all(f"{n} = {v}" in headline for n, v in answers):
        # The headline above says every number: «средний диапазон = 138,34 пункта» was
        # followed by «средний диапазон: 138,34 пункта».
        lines: list[str] = []
    else:
        lines = result_lines(summary, lang, preview, csv_rows, shown)
    meta = result.get("metadata", {})
    if meta:
        # "…; 259 matched" of 259 bars read as a filter that kept them all: a query with no
        # where filtered nothing, and the line says the bars alone (as the chart's footer).
        scanned, matched = meta.get("rows_scanned", 0), meta.get("rows_matched", 0)
        query = result.get("query")
        where = isinstance(query, dict) and bool(query.get("where"))
        key = N_("result_source") if where or matched != scanned else N_("result_source_all")
        source = t(
            key,
            lang,
            plural_of=meta.get("rows_scanned", 0),  # «По 1 бару», «по 21 бару», «по 5 барам»
            rows=decimal(meta.get("rows_scanned", 0), lang),
            matched=decimal(meta.get("rows_matched", 0), lang),
            timeframe=_timeframe(str(meta.get("timeframe", "?")), lang),
            session=meta.get("session", "?"),
            instrument=meta.get("instrument", "?"),
            first=meta.get("period_start", "?"),
            last=meta.get("period_end", "?"),
        )
        lines += ["", plain(source)] if lines else [plain(source)]
        warnings = meta.get("warnings", [])
        # The engine's notes (``barb.notes``) in the chat's language; any other warning in
        # the engine's English, under a lead-in that says so.
        specs = meta.get("notes") or {}
        said = [note_words(warning, specs, lang) for warning in warnings]
        if any(said):
            lines += ["", plain(t("notes", lang))]
            lines += [plain(f"⚠ {note}") for note in said if note]
        english = [w for w, note in zip(warnings, said, strict=True) if not note]
        if english:
            lines += ["", plain(t("engine_notes", lang))]
            names = (shown or Shown()).note_names
            lines += [plain(f"⚠ {_named(warning, names)}") for warning in english]
        if meta.get("data_source") == "synthetic":
            lines += ["", plain(t("result_synthetic", lang))]
    return "\n".join(lines)
